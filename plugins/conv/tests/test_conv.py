"""conv_general_dilated: values vs a float64 loop, every rule through the kit, both
transposes, vmap placements, lowering; the front ends' argument handling and errors."""
import os
import sys

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import plugax
import plugax.lax as lax
from plugax.extend import ShapeError
from plugax.testing import check_lowering, check_primitive, check_transpose, x64
from plugax_conv.conv import conv_general_dilated_p
from plugax_conv.dims import conv_dimension_numbers

sys.path.insert(0, os.path.dirname(__file__))   # --import-mode=importlib: no implicit path
from conv_reference import conv_reference  # noqa: E402

SPECS = {1: [("NCH", "OIH", "NCH"), ("NHC", "HIO", "NHC"), ("HNC", "IHO", "CHN")],
         2: [("NCHW", "OIHW", "NCHW"), ("NHWC", "HWIO", "NHWC"), ("NWHC", "WHIO", "NCWH")],
         3: [("NCDHW", "OIDHW", "NCDHW"), ("NDHWC", "DHWIO", "NDHWC")]}


def _shape(spec, sizes):
    return tuple(sizes[c] for c in spec)


@st.composite
def conv_case(draw, max_spatial=2):
    """Random rank, layout, strides, explicit (possibly negative) pads, dilations, groups."""
    nsp = draw(st.integers(1, max_spatial))
    spec = draw(st.sampled_from(SPECS[nsp]))
    groups = draw(st.sampled_from([(1, 1), (2, 1), (1, 2)]))
    G, B = groups
    letters = [c for c in spec[1] if c not in "OI"]
    sizes = {"N": B * draw(st.integers(1, 2)), "C": G * draw(st.integers(1, 2)),
             "O": max(G, B) * draw(st.integers(1, 2))}
    sizes["I"] = sizes["C"] // G
    kernel = {c: draw(st.integers(1, 3)) for c in letters}
    spatial = {c: draw(st.integers(kernel[c], 6)) for c in letters}
    strides = tuple(draw(st.integers(1, 2)) for _ in letters)
    pads = tuple((draw(st.integers(-1, 2)), draw(st.integers(-1, 2))) for _ in letters)
    ld = tuple(draw(st.integers(1, 2)) for _ in letters)
    rd = tuple(draw(st.integers(1, 2)) for _ in letters)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    lhs_sizes = {**sizes, **spatial}
    x = rng.standard_normal(_shape(spec[0], lhs_sizes)).astype(np.float32)
    w = rng.standard_normal(_shape(spec[1], {**sizes, **kernel})).astype(np.float32)
    return x, w, dict(window_strides=strides, padding=pads, lhs_dilation=ld, rhs_dilation=rd,
                      dimension_numbers=spec, feature_group_count=G, batch_group_count=B)


def _params(x, w, kw):
    dn = conv_dimension_numbers(x.shape, w.shape, kw["dimension_numbers"])
    return dict(kw, dimension_numbers=dn, precision=None, preferred_element_type=None)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(conv_case())
def test_conv_rules(case):
    x, w, kw = case
    params = _params(x, w, kw)
    try:
        got = lax.conv_general_dilated(x, w, **kw)
    except ShapeError:   # negative pads larger than the input: refused, as by XLA
        return
    ref = conv_reference(x, w, kw["window_strides"], kw["padding"], kw["lhs_dilation"],
                         kw["rhs_dilation"], params["dimension_numbers"],
                         kw["feature_group_count"], kw["batch_group_count"])
    assert got.shape == ref.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4)
    if 0 in got.shape:
        return
    ran = check_primitive(conv_general_dilated_p, x, w, vmap_options={"rtol": 1e-4, "atol": 1e-4},
                          jvp_options={"rtol": 2e-2, "atol": 2e-2}, **params)
    assert ran[:3] == ["abstract_eval", "jvp", "vmap"]
    for i in (0, 1):
        check_transpose(conv_general_dilated_p, x, w, linear_argnums=i, **params)
    check_lowering(conv_general_dilated_p, x, w, rtol=1e-4, atol=1e-4, **params)


def test_conv_3d_and_grad_vs_float64_loop():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 4, 5, 4, 3))      # NDHWC
    w = rng.standard_normal((2, 3, 2, 3, 4))      # DHWIO
    kw = dict(window_strides=(1, 2, 1), padding="SAME", dimension_numbers=SPECS[3][1])
    with x64():
        got = lax.conv_general_dilated(x, w, **kw)
        dn = conv_dimension_numbers(x.shape, w.shape, SPECS[3][1])
        pads = lax.padtype_to_pads((4, 5, 4), (2, 3, 2), (1, 2, 1), "SAME")
        np.testing.assert_allclose(got, conv_reference(x, w, (1, 2, 1), pads, (1,) * 3, (1,) * 3,
                                                       dn), rtol=1e-12)
        gx, gw = plugax.grad(lambda a, b: (lax.conv_general_dilated(a, b, **kw) ** 2).sum(),
                             argnums=(0, 1))(x, w)
    eps, i, j = 1e-6, (1, 2, 3, 0, 1), (1, 0, 1, 2, 3)
    f = lambda a, b: (conv_reference(a, b, (1, 2, 1), pads, (1,) * 3, (1,) * 3, dn) ** 2).sum()
    for arg, idx, g in ((0, i, gx), (1, j, gw)):
        args = [x.copy(), w.copy()]
        args[arg][idx] += eps
        up = f(*args)
        args[arg][idx] -= 2 * eps
        assert (up - f(*args)) / (2 * eps) == pytest.approx(float(np.asarray(g)[idx]), rel=1e-5)


@pytest.mark.parametrize("padding,expected", [
    ("VALID", [(0, 0), (0, 0)]), ("SAME", [(1, 2), (0, 1)]), ("SAME_LOWER", [(2, 1), (1, 0)])])
def test_padding_strings_match_jax(padding, expected):
    # jax.lax.padtype_to_pads((5, 7), (4, 2), (1, 2), padding) gives `expected`
    assert lax.padtype_to_pads((5, 7), (4, 2), (1, 2), padding) == expected
    x = np.arange(35, dtype=np.float32).reshape(1, 1, 5, 7)
    w = np.arange(8, dtype=np.float32).reshape(1, 1, 4, 2)
    got = lax.conv_general_dilated(x, w, (1, 2), padding)
    ref = lax.conv_general_dilated(x, w, (1, 2), expected)
    np.testing.assert_array_equal(got, ref)


def test_conv_transpose_shapes_and_values():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 4, 5, 3)).astype(np.float32)     # NHWC
    w = rng.standard_normal((3, 3, 3, 2)).astype(np.float32)     # HWIO
    same = lax.conv_transpose(x, w, (2, 2), "SAME")
    valid = lax.conv_transpose(x, w, (2, 2), "VALID")
    assert same.shape == (2, 8, 10, 2) and valid.shape == (2, 9, 11, 2)   # as in JAX
    dn = conv_dimension_numbers(x.shape, w.shape, ("NHWC", "HWIO", "NHWC"))
    ref = conv_reference(x, w, (1, 1), [(2, 1), (2, 1)], (2, 2), (1, 1), dn)
    np.testing.assert_allclose(same, ref, rtol=1e-4, atol=1e-4)
    # transpose_kernel=True is the input gradient of the forward conv (what Keras computes)
    y = rng.standard_normal((2, 8, 10, 2)).astype(np.float32)
    wt = np.swapaxes(w, 2, 3)
    _, vjp = plugax.vjp(lambda a: lax.conv_general_dilated(a, wt, (2, 2), "SAME",
                                                           dimension_numbers=dn), y)
    (gy,) = vjp(x)
    np.testing.assert_allclose(lax.conv_transpose(x, wt, (2, 2), "SAME", transpose_kernel=True),
                               gy, rtol=1e-4, atol=1e-4)


def test_conv_and_general_padding_wrappers():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 2, 6, 6)).astype(np.float32)
    w = rng.standard_normal((3, 2, 2, 2)).astype(np.float32)
    np.testing.assert_allclose(lax.conv(x, w, (1, 1), "VALID"),
                               lax.conv_general_dilated(x, w, (1, 1), "VALID"))
    got = lax.conv_with_general_padding(x, w, (2, 1), [(1, 0), (0, 2)], (1, 2), (2, 1))
    dn = conv_dimension_numbers(x.shape, w.shape, None)
    np.testing.assert_allclose(got, conv_reference(x, w, (2, 1), [(1, 0), (0, 2)], (1, 2),
                                                   (2, 1), dn), rtol=1e-4, atol=1e-5)


def test_dtypes_precision_and_preferred_element_type():
    x = np.arange(24, dtype=np.int8).reshape(1, 2, 12)
    w = np.ones((1, 2, 3), np.int8)
    out = lax.conv_general_dilated(x, w, (1,), "VALID", preferred_element_type=np.int32)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, conv_reference(x, w, (1,), [(0, 0)], (1,), (1,),
                                                      conv_dimension_numbers(x.shape, w.shape,
                                                                             None)))
    f = np.ones((1, 1, 4), np.float32)
    jaxpr = str(plugax.make_jaxpr(lambda a: lax.conv_general_dilated(
        a, f[:, :, :2], (1,), "SAME", precision="highest"))(f))
    assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in jaxpr
    for prec in (lax.Precision.HIGH, ("fastest", "highest"), None):
        check_lowering(lambda a: lax.conv_general_dilated(a, f[:, :, :2], (1,), "SAME",
                                                          precision=prec), f)
    b = lax.conv_general_dilated(f > 0, f > 0, (1,), "VALID")
    assert b.dtype == np.bool_ and bool(b.all())
    half = lax.conv_general_dilated(f.astype(np.float16), f.astype(np.float16), (1,), "VALID")
    assert half.dtype == np.float16 and float(half[0, 0, 0]) == 4.0
    check_lowering(lambda a: lax.conv_general_dilated(a, a, (1,), "VALID"), f > 0)


@pytest.mark.parametrize("lhs,rhs,kw,message", [
    ((1, 3, 5), (2, 2, 3), {}, r"lhs feature size \(3\).*rhs input feature size \(2\)"),
    ((1, 4, 5), (3, 2, 3), {"feature_group_count": 2}, r"rhs output feature size \(3\)"),
    ((3, 2, 5), (2, 2, 3), {"batch_group_count": 2}, r"divide the lhs batch size \(3\)"),
    ((1, 2, 5), (2, 2, 3), {"window_strides": (1, 1)}, r"needs 1 window_strides"),
    ((1, 2, 5), (2, 2, 3), {"padding": [(-6, 0)]}, r"negative padding"),
])
def test_errors_name_the_shapes(lhs, rhs, kw, message):
    kw = {"window_strides": (1,), "padding": "VALID", **kw}
    with pytest.raises(ShapeError, match=message) as info:
        lax.conv_general_dilated(np.ones(lhs, np.float32), np.ones(rhs, np.float32), **kw)
    assert f"float32{list(lhs)}" in str(info.value) and f"float32{list(rhs)}" in str(info.value)


def test_front_end_errors():
    x = np.ones((1, 2, 5), np.float32)
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv_general_dilated(x, x.astype(np.float16), (1,), "VALID")
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_dilated(x, x, (1,), "VALID", dimension_numbers=("NCH", "OOH", "NCH"))
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(x, x, (1,), "SAME", lhs_dilation=(2,))
    with pytest.raises(ValueError, match="unknown precision"):
        lax.conv_general_dilated(x, x, (1,), "SAME", precision="fast-ish")


def test_transposes_with_preferred_element_type_and_groups():
    rng = np.random.default_rng(5)
    for G, B in ((2, 1), (1, 2)):
        x = rng.standard_normal((2 * B, 4, 5)).astype(np.float32)     # NCH
        w = rng.standard_normal((4, 4 // G, 3)).astype(np.float32)    # OIH
        params = _params(x, w, dict(window_strides=(2,), padding=((1, 2),), lhs_dilation=(1,),
                                    rhs_dilation=(2,), dimension_numbers=None,
                                    feature_group_count=G, batch_group_count=B))
        params["preferred_element_type"] = np.dtype(np.float64)
        assert conv_general_dilated_p.bind(x, w, **params).dtype == np.float64
        for i in (0, 1):
            check_transpose(conv_general_dilated_p, x, w, linear_argnums=i, **params)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_convolve_and_correlate_through_the_kit(mode):
    rng = np.random.default_rng(6)
    a = rng.standard_normal(9).astype(np.float32)
    v = rng.standard_normal(4).astype(np.float32)
    for fn in (plugax.numpy.convolve, plugax.numpy.correlate):
        np.testing.assert_allclose(fn(a, v, mode), getattr(np, fn.__name__)(a, v, mode),
                                   rtol=1e-5, atol=1e-6)
        check_primitive(lambda a, v: fn(a, v, mode), a, v,
                        jvp_options={"rtol": 2e-2, "atol": 2e-2},
                        vmap_options={"rtol": 1e-5, "atol": 1e-6})


def test_dtype_matrix():
    """Every dtype convolves (booleans as any(and), as in JAX); mixed dtypes are refused."""
    from plugax.testing import DTYPES, check_dtype_matrix
    x = np.ones((1, 2, 5), np.float32)
    w = np.ones((3, 2, 2), np.float32)
    params = _params(x, w, dict(window_strides=(1,), padding=((0, 0),), lhs_dilation=(1,),
                                rhs_dilation=(1,), dimension_numbers=None,
                                feature_group_count=1, batch_group_count=1))
    check_dtype_matrix(conv_general_dilated_p, x, w, accepted=set(DTYPES), **params)
