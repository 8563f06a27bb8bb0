"""The ported JAX programs in examples/ run unchanged (but for imports) and pass their
own checks: each compares two independent ways of computing the same quantity
(autodiff vs finite differences, vmap vs a Python loop, one Hessian-vector product
vs another), and fails with an AssertionError when they disagree."""
import pathlib
import runpy

import pytest

EXAMPLES = sorted((pathlib.Path(__file__).parents[2] / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs_and_its_checks_pass(path, capsys):
    import plugax
    x64 = plugax.config.enable_x64   # an example may switch x64 on, as JAX programs do
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plugax.config.update("enable_x64", x64)
    assert "all checks passed" in capsys.readouterr().out
