"""The GPU lowerings, checked on a machine without a GPU: for every case JAX 0.10.2's
module was recorded for (gpu_lowering_jax.json, by record_jax_gpu_lowering.py:
cholesky, triangular_solve, lu, qr, eigh, svd at each of JAX's size thresholds and
algorithms, eig on each of its kernels; float32, float64, complex64 for eig; batched
and not; CUDA, ROCm, and CPU), plugax's module lowered for that platform
(`jit(f).lower(..., lowering_platforms=...)`) calls the same kernels with the same
attributes, layouts, aliases, batch dimensions and types, in the same order; where
JAX has no GPU lowering (hessenberg, schur), plugax raises JAX's error. The CPU
cases are the check that the CPU lowering is still JAX's (and so unchanged).
test_gpu_emulated.py runs what the GPU rules do around the kernels; what the kernels
compute is for a GPU run to confirm (bench/gpu_check.py).
"""
import json
import re
from pathlib import Path

import numpy as np
import pytest

import plugax
from plugax.extend import LoweringRuleError, bind, custom_call
from plugax.testing import x64
from plugax_linalg import eig as E, hessenberg as H, primitives as P, schur as S

REC = json.loads((Path(__file__).parent / "gpu_lowering_jax.json").read_text())
PRIMS = {"cholesky": P.cholesky_p, "triangular_solve": P.triangular_solve_p, "lu": P.lu_p,
         "qr": P.qr_p, "eigh": P.eigh_p, "svd": P.svd_p, "eig": E.eig_p,
         "hessenberg": H.hessenberg_p, "schur": S.schur_p}


def kernel_calls(text: str) -> list[str]:
    """The custom calls and triangular solves of a module with their SSA names dropped
    (the rest of each line, attributes and types, is compared as printed) and without
    the `sdy.sharding_rule` hint JAX adds for Shardy."""
    calls = []
    for line in text.splitlines():
        if "stablehlo.custom_call @" not in line and "stablehlo.triangular_solve" not in line:
            continue
        line = re.sub(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>", "",
                      line.strip())
        line = re.sub(r"^%[\w#:]+ = ", "", line)
        calls.append(re.sub(r"\(%[^)]*\)", "()", line, count=1))
    return calls


def _name(c: dict) -> str:
    params = ",".join(f"{k}={v}" for k, v in c["params"].items()
                      if v not in (None, False) and k not in ("sort_eigenvalues",))
    extra = f",cusolver={c['cusolver_version']}" if "cusolver_version" in c else ""
    return f"{c['platform']}-{c['primitive']}-{c['dtype']}{c['shape']}-{params}{extra}"


def lowered_text(c: dict, monkeypatch) -> str:
    """plugax's module for case `c`, lowered for its platform on this machine."""
    version = c.get("cusolver_version")
    monkeypatch.setattr(custom_call, "cusolver_version", lambda: version)
    args = [np.ones(c["shape"], c["dtype"])]
    if "b_shape" in c:
        args.append(np.ones(c["b_shape"], c["dtype"]))
    prim = PRIMS[c["primitive"]]
    fn = plugax.jit(lambda *xs: bind(prim, *xs, **c["params"]))
    with x64(c["dtype"] == "float64"):
        return fn.lower(*args, lowering_platforms=(c["platform"],)).as_text()


CALLS = [c for c in REC["cases"] if "calls" in c]
ERRORS = [c for c in REC["cases"] if "error" in c]


@pytest.mark.parametrize("case", CALLS, ids=_name)
def test_kernel_calls_are_jax_s(case, monkeypatch):
    expected = [kernel_calls(line)[0] for line in case["calls"]]
    assert kernel_calls(lowered_text(case, monkeypatch)) == expected


@pytest.mark.parametrize("case", ERRORS, ids=_name)
def test_no_gpu_lowering_where_jax_has_none(case, monkeypatch):
    jax_message = case["error"].split(": ", 1)[1]
    with pytest.raises(LoweringRuleError, match=re.escape(jax_message)):
        lowered_text(case, monkeypatch)


def test_the_recording_covers_every_primitive_dtype_and_platform():
    """The data above is what makes the checks mean something: every kernel-backed
    primitive on CUDA in float32 and float64, on ROCm and on CPU; complex64 and both
    eig kernels; each SVD kernel; batched operands."""
    seen = {(c["primitive"], c["dtype"], c["platform"]) for c in CALLS}
    for prim in ("cholesky", "triangular_solve", "lu", "qr", "eigh", "svd", "eig"):
        assert {(prim, "float32", "cuda"), (prim, "float64", "cuda"), (prim, "float32", "rocm"),
                (prim, "float32", "cpu"), (prim, "float64", "cpu")} <= seen
    assert {("eig", "complex64", "cuda"), ("hessenberg", "float32", "cpu"),
            ("schur", "float32", "cpu")} <= seen
    assert {(c["primitive"], c["platform"]) for c in ERRORS} == {
        ("hessenberg", "cuda"), ("schur", "cuda"), ("hessenberg", "rocm")}
    targets = {m.group(1) for c in CALLS for call in c["calls"]
               for m in [re.search(r"custom_call @(\w+)", call)] if m}
    assert {"cusolver_gesvdj_ffi", "cusolver_gesvd_ffi", "cusolver_gesvdp_ffi",
            "cuhybrid_eig_real", "cuhybrid_eig_comp", "cusolver_geev_ffi",
            "cu_lu_pivots_to_permutation", "hipsolver_gesdd_ffi", "lapack_sgees_ffi"} <= targets
    assert all(len(c["shape"]) > 2 for c in CALLS if c["primitive"] == "cholesky"
               and c["dtype"] == "float64")


def test_kernel_calls_keep_what_they_compare():
    """kernel_calls drops only SSA names and the Shardy hint: a changed layout, attribute
    or type is still a difference."""
    line = REC["cases"][0]["calls"][0]
    assert kernel_calls(line) != kernel_calls(line.replace("lower = true", "lower = false"))
    assert kernel_calls(line) != kernel_calls(line.replace("[1, 2, 0]", "[2, 1, 0]", 1))
    assert kernel_calls(line) != kernel_calls(line.replace("2x3x3xf32", "2x3x3xf64"))
    assert kernel_calls("%0:2 = " + line.split(" = ", 1)[1]) == kernel_calls(line)
