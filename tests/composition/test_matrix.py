"""The composition matrix (issue 12): every pair and sampled triples of transformations.

For each program of `programs.py` and each path of `jit, vmap, grad, jvp, vjp,
linearize, jacfwd, jacrev, hessian, make_jaxpr` that applies to it (every ordered pair,
`harness.TRIPLES_PER_PROGRAM` triples sampled by program name, and each transformation
alone, so that a broken stage is named by its own id), the composition is
checked against the same composition with its outermost transformation replaced by
its definition (see harness.py). Test ids are the path, outermost first, then the
program: ``jit.vmap.grad-scan_rnn`` is ``jit(vmap(grad(scan_rnn)))``.

Each case draws its inputs from a seed fixed by its id; `test_drawn_paths_and_inputs`
lets hypothesis (derandomized) draw further (path, input) pairs per program.
Compositions listed in known_failures.KNOWN_FAILING run as strict xfails: the suite
fails when one starts passing, so the list is emptied as fixes land.
"""
from __future__ import annotations

import itertools
import os

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st




import programs
import harness
from known_failures import KNOWN_FAILING

ALL_CASES = [(program, path) for program in programs.PROGRAMS
             for path in (harness.singles(program) + harness.pairs(program)
                          + harness.sampled_triples(program))]
ALL_IDS = [harness.case_id(path, program.name) for program, path in ALL_CASES]


def _default_sample():
    """The cases `make test` runs (harness.default_paths; all of them with
    PLUGAX_TEST_FULL=1), plus every KNOWN_FAILING case, so that a fix is noticed."""
    out = []
    for index, program in enumerate(programs.PROGRAMS):
        chosen = set(harness.default_paths(index, program))
        out += [(p, q) for p, q in ALL_CASES if p is program and (
            q in chosen or harness.case_id(q, program.name) in KNOWN_FAILING)]
    return out


CASES = _default_sample()
IDS = [harness.case_id(path, program.name) for program, path in CASES]
# the pairs JAX rejects (a while_loop under reverse mode, forward mode reaching a custom_vjp)
REJECTED = [(program, path) for program in programs.PROGRAMS
            for path in itertools.product(harness.TRANSFORMS, repeat=2)
            if harness.applicable(program, path) is not None]
REJECTED_IDS = [harness.case_id(path, program.name) for program, path in REJECTED]


def _param(program, path, cid):
    marks = ([pytest.mark.xfail(strict=True, reason=KNOWN_FAILING[cid])]
             if cid in KNOWN_FAILING else [])
    return pytest.param(program, path, id=cid, marks=marks)


@pytest.mark.parametrize("program,path", [_param(p, q, c) for (p, q), c in zip(CASES, IDS)])
def test_composition(program, path):
    harness.run_case(program, path, seed=0)


# Hypothesis draws further paths and input values per program, from *every* pair and
# triple (the sampled-out ones too): derandomized (the same draws on every run) and
# COMPOSITION_EXAMPLES of them per program (default 3) in `make test`; random draws,
# 10 per program, under PLUGAX_TEST_FULL=1. One @given test per program, not per case:
# thousands of @given tests make hypothesis crawl.
drawn = settings(max_examples=int(os.environ.get("COMPOSITION_EXAMPLES",
                                                 "10" if harness.FULL else "3")),
                 derandomize=not harness.FULL, database=None, deadline=None,
                 suppress_health_check=list(HealthCheck))


@pytest.mark.parametrize("program", programs.PROGRAMS, ids=lambda p: p.name)
@drawn
@given(data=st.data())
def test_drawn_paths_and_inputs(program, data):
    paths = harness.pairs(program) + [q for p, q in ALL_CASES if p is program and len(q) == 3]
    path = data.draw(st.sampled_from(paths), label="path")
    assume(harness.case_id(path, program.name) not in KNOWN_FAILING)
    seed = data.draw(st.integers(1, 2**32 - 1), label="seed")
    harness.run_case(program, path, seed)


@pytest.mark.parametrize("program,path", [_param(p, q, c)
                                          for (p, q), c in zip(REJECTED, REJECTED_IDS)])
def test_rejected_path_raises_clearly_or_is_right(program, path):
    """Where JAX raises, plugax may raise too, with a message naming the cause (the
    while_loop, the custom_vjp function), or may do more than JAX; but then its values
    must be right. A wrong value (AssertionError) or an unrelated error fails."""
    why = harness.applicable(program, path)
    cause = "while_loop" if "while_loop" in why else "custom_vjp"
    try:
        harness.run_case(program, path, seed=0)
    except AssertionError:
        raise
    except Exception as err:
        assert cause in str(err), (f"JAX rejects this path ({why}); plugax raised "
                                   f"{type(err).__name__} without naming the {cause}: {err}")


def test_known_failing_names_real_cases():
    """Every id in KNOWN_FAILING is a case of the matrix (a renamed case cannot hide)."""
    float32_ids = ["f32:" + harness.case_id(path, program.name)
                   for program in programs.PROGRAMS for path in harness.float32_pairs(program)]
    unknown = sorted(set(KNOWN_FAILING) - set(ALL_IDS) - set(REJECTED_IDS) - set(float32_ids))
    assert not unknown, f"KNOWN_FAILING names cases the matrix does not have: {unknown}"


def test_matrix_covers_the_spec():
    assert len(programs.PROGRAMS) >= 30
    assert len(set(ALL_IDS)) == len(ALL_IDS)
    groups = {p.group for p in programs.PROGRAMS}
    assert {"elementwise", "reductions", "dot", "indexing", "pytree", "control_flow",
            "custom"} <= groups
    for program in programs.PROGRAMS:
        paths = [q for p, q in ALL_CASES if p is program]
        pairs = [q for q in paths if len(q) == 2]
        # every pair is there, except where a while_loop or custom_vjp rules one out
        if program.forward == "any" and program.reverse:
            assert len(pairs) == 100, program.name
        assert sum(len(q) == 3 for q in paths) == harness.TRIPLES_PER_PROGRAM
    used = {t for _, q in ALL_CASES for t in q}
    assert used == set(harness.TRANSFORMS)


def test_default_sample_covers_every_pair_and_program():
    """What `make test` runs of the matrix (all of it with PLUGAX_TEST_FULL=1): every
    single transformation of every program; every ordered pair of transformations on
    some program of the sample wherever the full matrix has it; each program under
    every transformation applicable to it, outermost and innermost; triples on every
    program that has any."""
    sample = {(p.name, q) for p, q in CASES}
    assert len(sample) == len(CASES)
    full_pairs = {q for _, q in ALL_CASES if len(q) == 2}
    assert {q for _, q in CASES if len(q) == 2} == full_pairs
    for program in programs.PROGRAMS:
        every = [q for p, q in ALL_CASES if p is program]
        mine = [q for p, q in CASES if p is program]
        assert [q for q in every if len(q) == 1] == [q for q in mine if len(q) == 1]
        for position in (0, -1):
            want = {q[position] for q in every if len(q) == 2}
            got = {q[position] for q in mine if len(q) == 2}
            assert got == want, (program.name, position, sorted(want - got))
        if any(len(q) == 3 for q in every):
            assert any(len(q) == 3 for q in mine), program.name
    # the pairs of each group: nearly all of its pairs, across its programs
    for group in groups_of(programs.PROGRAMS):
        want = {q for p, q in ALL_CASES if p.group == group and len(q) == 2}
        got = {q for p, q in CASES if p.group == group and len(q) == 2}
        assert len(got) >= 0.7 * len(want), (group, len(got), len(want))


def groups_of(progs):
    return sorted({p.group for p in progs})
