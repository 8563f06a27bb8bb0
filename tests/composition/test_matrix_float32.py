"""The matrix's exact stages in float32: eager, staged and batched must agree on dtypes.

With x64 off, Python scalars are weak and results' dtypes come from promotion rules
that eager evaluation, tracing (abstract_eval) and batching implement separately, so
this is where eager and traced results drift apart. Every pair whose outer
transformation has an exact reference (make_jaxpr: the jaxpr's output types, weak
types included, equal the eager results' and eval_jaxpr gives their values; vmap: a
loop) runs here on float32/int32 arguments. jit is left to the float64 matrix: its
types come from the same tracing as make_jaxpr's, and XLA compiles are the matrix's
largest cost. Ids are ``f32:<path>-<program>``.
"""
from __future__ import annotations


import pytest

from plugax.testing import x64




import programs
import harness
from known_failures import KNOWN_FAILING

CASES = [(program, path) for program in programs.PROGRAMS
         for path in harness.float32_pairs(program)]
IDS = ["f32:" + harness.case_id(path, program.name) for program, path in CASES]


@pytest.fixture(scope="module", autouse=True)
def _float32(_float64):
    with x64(False):
        yield


def _param(program, path, cid):
    marks = ([pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[cid])]
             if cid in KNOWN_FAILING else [])
    return pytest.param(program, path, id=cid, marks=marks)


@pytest.mark.parametrize("program,path", [_param(p, q, c) for (p, q), c in zip(CASES, IDS)])
def test_composition_float32(program, path):
    harness.run_case(program, path, seed=0, float32=True)
