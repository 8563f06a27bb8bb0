"""Every public name of plugax.numpy and plugax.lax is in the differential table or in
its skip list (with a reason), so a function added later cannot be forgotten; and
every case of the table has a JAX record."""
import json
import types
from pathlib import Path

import numpy as np
import pytest

import plugax
import plugax.lax
import plugax.numpy

from diff_table import NUMPY, NUMPY_SKIPPED
from diff_table_lax import LAX, LAX_SKIPPED

EXPECTED = json.loads((Path(__file__).parent / "jax_expected.json").read_text())


# Families whose own tests are this table's kind of check (values against NumPy/SciPy in
# float64 and recorded JAX results, under jit, vmap and grad, generated from one table per
# family): their names need no row here. See plugins/<family>/tests.
FAMILY_TESTED = ("plugax_sort", "plugax_linalg", "plugax_conv", "plugax_random", "plugax_nn",
                 "plugax_special_functions", "plugax_fft")
# modules whose every function is a row of tests/integration/test_numpy_breadth.py (NumPy
# float64, jit, grad against central differences)
BREADTH_TESTED = ("plugax_shape.numpy_layout", "plugax_elementwise.numpy_extra",
                  "plugax_reductions.numpy_stats", "plugax_sort.interp")
# ... and of tests/integration/test_numpy_breadth_more.py (NumPy float64, jit, vmap, grad)
BREADTH_TESTED += ("plugax_elementwise.numpy_more", "plugax_shape.numpy_edit",
                   "plugax_shape.numpy_index_tricks", "plugax_reductions.numpy_more",
                   "plugax_reductions.numpy_select", "plugax_reductions.numpy_vectorize",
                   "plugax_reductions.numpy_ufunc", "plugax_dot.numpy_contractions")
# (plugax_sort.numpy_pad and plugax_linalg.numpy_poly: their families are FAMILY_TESTED;
# they are rows of test_numpy_breadth_more.py too)
# ... and of tests/integration/test_complex.py (NumPy complex128, jit, JAX's gradients)
BREADTH_TESTED += ("plugax_elementwise.numpy_complex",)


def public_names(module):
    # isidentifier: pytest's assertion rewriting leaves '@py_builtins' in rewritten modules;
    # primitive handles (lax.sin_p) are not functions: test_primitive_handles covers them;
    # sub-namespaces (plugax.numpy.linalg) are modules with their own tests
    return {n for n in dir(module) if not n.startswith("_") and n.isidentifier()
            and not isinstance(getattr(module, n), (plugax.Primitive, types.ModuleType))
            and not family_tested(getattr(module, n))}


def family_tested(value) -> bool:
    module = getattr(value, "__module__", None) or ""   # custom_jvp copies its function's
    return module.split(".")[0] in FAMILY_TESTED or module in BREADTH_TESTED


@pytest.mark.parametrize("module, table, skipped", [
    (plugax.numpy, NUMPY, NUMPY_SKIPPED), (plugax.lax, LAX, LAX_SKIPPED)],
    ids=["numpy", "lax"])
def test_every_public_name_is_tested_or_skipped_with_a_reason(module, table, skipped):
    names = public_names(module)
    forgotten = sorted(names - set(table) - set(skipped))
    assert not forgotten, (f"add these to the differential table (tests/differential/"
                           f"diff_table*.py) or to its skip list with a reason: {forgotten}")
    assert not set(table) & set(skipped), "a name is both tested and skipped"
    assert all(isinstance(reason, str) and len(reason) > 20 for reason in skipped.values())
    assert not set(skipped) - names, "skip list names that plugax no longer has"


def test_skipped_constants_are_numpys():
    for name, reason in NUMPY_SKIPPED.items():
        if not reason.startswith("a dtype, scalar type or constant"):
            continue
        ours = getattr(plugax.numpy, name)
        if name == "ndarray":
            assert ours is plugax.Array
        elif name == "bfloat16":
            assert np.dtype(ours).name == "bfloat16"
        elif isinstance(ours, float):
            assert ours == getattr(np, name) or (np.isnan(ours) and name == "nan")
        else:
            assert ours is getattr(np, name)


def test_every_case_has_a_jax_record():
    missing = [f"{ns}.{name}[{case.label}]"
               for ns, table in (("numpy", NUMPY), ("lax", LAX))
               for name, spec in table.items() for case in spec.cases()
               if case.label not in EXPECTED[ns].get(name, {})]
    assert not missing, f"run tests/differential/record_jax.py (needs jax): {missing[:10]}"
