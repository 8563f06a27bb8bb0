"""plugax.numpy's dtype names and helpers against JAX 0.10.2's answers (recorded here;
the test does not need JAX): JAX's promotion lattice, not NumPy's, and ml_dtypes'
narrow types counted as floating / integer as JAX counts them."""
from __future__ import annotations

import io

import ml_dtypes
import numpy as np
import pytest

import plugax
import plugax.numpy as pnp
from plugax.testing import x64


@pytest.mark.parametrize("a, b, want", [
    ("float64", "int32", np.float64), ("uint8", int, np.uint8), (int, float, np.float64),
    ("bfloat16", "float16", np.float32), ("int32", "float16", np.float16),
    (np.uint32, np.int8, np.int64), (bool, np.int8, np.int8), ("int8", "uint64", np.float64)])
def test_promote_types_is_jaxs_lattice(a, b, want):
    assert pnp.promote_types(a, b) == np.dtype(want)
    assert pnp.promote_types(b, a) == np.dtype(want)


def test_result_type_weak_scalars_and_canonicalisation():
    assert pnp.result_type("float64") == np.float32
    assert pnp.result_type(1.0, 2) == np.float32
    assert pnp.result_type(1, np.int8(1)) == np.int8          # a NumPy scalar is strong
    assert pnp.result_type(pnp.ones(2, "int8"), 1.0) == np.float32
    assert pnp.result_type(pnp.ones(2, "bfloat16"), 1.0) == ml_dtypes.bfloat16
    assert pnp.result_type(np.uint16, np.dtype("int32")) == np.int32
    with x64():
        assert pnp.result_type("float64", 1) == np.float64
        assert pnp.result_type(1, 2) == np.int64
    with pytest.raises(ValueError, match="at least one"):
        pnp.result_type()
    # what result_type says is what an operation gives
    x = pnp.ones(3, "int8")
    assert (x + 2).dtype == pnp.result_type(x, 2)
    assert (x * 2.5).dtype == pnp.result_type(x, 2.5)


def test_issubdtype_and_isdtype_count_ml_dtypes_as_jax():
    assert pnp.issubdtype("bfloat16", pnp.floating) and not np.issubdtype("bfloat16",
                                                                          np.floating)
    assert pnp.issubdtype(pnp.float8_e4m3fn, pnp.inexact)
    assert pnp.issubdtype(pnp.int4, pnp.signedinteger)
    assert not pnp.issubdtype(pnp.uint4, pnp.signedinteger)
    assert pnp.issubdtype(pnp.uint4, pnp.unsignedinteger)
    assert pnp.issubdtype("uint32", pnp.unsignedinteger) and not pnp.issubdtype("int8",
                                                                               pnp.floating)
    assert pnp.issubdtype(pnp.floating, pnp.inexact)
    assert pnp.isdtype("float32", "real floating") and pnp.isdtype(pnp.bfloat16, "numeric")
    assert pnp.isdtype(np.int8, ("bool", "integral")) and not pnp.isdtype(np.int8, "bool")
    assert pnp.isdtype(pnp.int4, "signed integer") and pnp.isdtype("int32", np.int32)
    with pytest.raises(ValueError, match="Unrecognized kind='reals'"):
        pnp.isdtype("int32", "reals")


def test_scalar_types_and_infos():
    assert pnp.bool is np.bool_ and pnp.float_ is np.float64 and pnp.int_ is np.int64
    assert pnp.uint is np.uint64 and pnp.double is np.float64 and pnp.single is np.float32
    for name in ("generic", "number", "integer", "signedinteger", "unsignedinteger",
                 "floating", "inexact", "flexible", "character", "object_"):
        assert getattr(pnp, name) is getattr(np, name)
    for name in ("int4", "uint4", "int2", "uint2", "float8_e4m3fn", "float8_e5m2"):
        assert getattr(pnp, name) is getattr(ml_dtypes, name)
    assert pnp.finfo(pnp.bfloat16).eps == 2.0 ** -7
    assert pnp.finfo(np.float32).eps == np.finfo(np.float32).eps
    assert pnp.iinfo(pnp.int4).max == 7 and pnp.iinfo(np.int16).min == -2 ** 15
    assert pnp.can_cast("int32", "float64") and not pnp.can_cast("float32", "int32")
    assert pnp.euler_gamma == np.euler_gamma
    assert issubclass(pnp.ComplexWarning, Warning)


def test_isscalar_counts_zero_dimensional_arrays_under_jit_too():
    assert pnp.isscalar(1.0) and pnp.isscalar(np.array(1.0)) and pnp.isscalar(pnp.ones(()))
    assert not pnp.isscalar(pnp.ones(2)) and not pnp.isscalar(None)
    assert not pnp.isscalar([1]) and not pnp.isscalar(slice(3))
    seen = []
    plugax.jit(lambda x: seen.append(pnp.isscalar(x)) or x)(1.0)
    assert seen == [True]
    assert pnp.iterable([1]) and not pnp.iterable(3)


def test_printing_and_files():
    x = pnp.arange(3.0)
    assert pnp.array_str(x) == "[0. 1. 2.]"
    assert "Array([0., 1., 2.]" in pnp.array_repr(x)
    with pnp.printoptions(precision=2):
        assert pnp.get_printoptions()["precision"] == 2
    buf = io.BytesIO()
    pnp.save(buf, np.arange(4.0))
    buf.seek(0)
    loaded = pnp.load(buf)
    assert isinstance(loaded, plugax.Array) and loaded.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(NotImplementedError, match="fromfile is not implemented, as in JAX"):
        pnp.fromfile("x.bin")
    with pytest.raises(NotImplementedError, match="fromiter"):
        pnp.fromiter(iter([1]), float)
