"""plugax.numpy.fft: one table of name -> NumPy reference -> arguments, each checked
eagerly and under jit against numpy.fft in float64/complex128, then with the kit
(jvp vs finite differences along complex directions, vmap vs a loop, grad as the
adjoint of the jvp); plus JAX's errors and the frequency helpers."""
import numpy as np
import pytest

import plugax
import plugax.lax as lax
import plugax.numpy as pnp
import plugax.numpy.fft as pfft
from plugax.testing import check_primitive

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 6)).astype(np.float32)
Z = (RNG.standard_normal((4, 6)) + 1j * RNG.standard_normal((4, 6))).astype(np.complex64)
V = (RNG.standard_normal((2, 3, 4, 5)) + 1j * RNG.standard_normal((2, 3, 4, 5))).astype(
    np.complex64)
H = (RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))).astype(np.complex64)

# name -> (plugax call, numpy call, arguments): numpy.fft takes the same keywords
TABLE = {
    "fft": ("fft", {}, Z), "fft_n_axis": ("fft", {"n": 8, "axis": 0}, Z),
    "fft_crop": ("fft", {"n": 4}, Z), "fft_real_in": ("fft", {}, X),
    "ifft": ("ifft", {"norm": "ortho"}, Z), "rfft": ("rfft", {}, X),
    "rfft_odd": ("rfft", {"n": 5, "norm": "forward"}, X), "irfft": ("irfft", {}, Z),
    "irfft_n": ("irfft", {"n": 7, "axis": 0}, Z), "hfft": ("hfft", {}, H),
    "hfft_n": ("hfft", {"n": 5, "norm": "ortho"}, H), "ihfft": ("ihfft", {}, X),
    "fft2": ("fft2", {}, Z), "ifft2": ("ifft2", {"s": (3, 8)}, Z),
    "rfft2": ("rfft2", {"axes": (1, 0)}, X), "irfft2": ("irfft2", {"norm": "forward"}, Z),
    "fftn": ("fftn", {}, V), "fftn_axes": ("fftn", {"axes": (0, 2)}, V),
    "ifftn": ("ifftn", {"s": (2, 3, 4, 6)}, V), "rfftn": ("rfftn", {}, V.real.copy()),
    "irfftn": ("irfftn", {"axes": (1, 3)}, V),
    "fftfreq": ("fftfreq", {"d": 0.5}, 7), "rfftfreq": ("rfftfreq", {}, 8),
    "fftshift": ("fftshift", {}, Z), "fftshift_axis": ("fftshift", {"axes": 1}, Z),
    "ifftshift": ("ifftshift", {"axes": (0,)}, Z),
}
FREQ = ("fftfreq", "rfftfreq")


@pytest.mark.parametrize("case", list(TABLE))
def test_matches_numpy_fft_eagerly_and_under_jit(case):
    name, kw, arg = TABLE[case]
    wide = arg if isinstance(arg, int) else arg.astype(
        np.complex128 if arg.dtype.kind == "c" else np.float64)
    np_kw = dict(kw)
    if "s" in kw and "axes" not in kw and name.endswith("n"):   # NumPy 2 wants axes
        np_kw["axes"] = tuple(range(wide.ndim - len(kw["s"]), wide.ndim))
    want = getattr(np.fft, name)(wide, **np_kw)
    fn = getattr(pfft, name)
    got = fn(arg, **kw)
    out = [got] if name in FREQ else [got, plugax.jit(lambda a: fn(a, **kw))(arg)]
    for g in out:
        assert g.shape == want.shape
        assert g.dtype == (np.complex64 if want.dtype.kind == "c" else
                           np.float32 if want.dtype.kind == "f" else want.dtype)
        np.testing.assert_allclose(np.asarray(g), want, rtol=2e-4, atol=2e-4)


DIFFERENTIABLE = ["fft_n_axis", "ifft", "rfft_odd", "irfft_n", "hfft", "ihfft", "ifft2",
                  "rfft2", "irfft2", "fftn", "irfftn", "fftshift"]


@pytest.mark.parametrize("case", DIFFERENTIABLE)
def test_jvp_vmap_and_grad_with_the_kit(case):
    name, kw, arg = TABLE[case]
    fn = getattr(pfft, name)
    ran = check_primitive(lambda a: fn(a, **kw), arg, transformations=False,
                          rules=["jvp", "vmap", "grad"],
                          options={"jvp": {"rtol": 1e-5, "atol": 1e-6}})
    assert list(ran) == ["jvp", "vmap", "grad"]


def test_grad_of_a_real_loss_through_fft_is_jaxs():
    """|rfft(x)|^2 summed is x^T J^H J x for J the rfft matrix, so its gradient (JAX's
    convention: a real loss of a real x gets the real gradient) is 2 Re(J^H J) x."""
    x = X[0].astype(np.float32)
    g = plugax.grad(lambda a: pnp.sum(pnp.abs(pfft.rfft(a)) ** 2))(x)
    e = np.eye(6)
    jac = np.fft.rfft(e, axis=0)                   # (4, 6): d rfft / d x
    want = 2 * np.real(np.conj(jac).T @ (jac @ x.astype(np.float64)))
    np.testing.assert_allclose(g, want, rtol=1e-4, atol=1e-4)


def test_lax_fft_converts_like_jax_and_errors_name_the_mistake():
    assert lax.fft(X, "fft", (6,)).dtype == np.complex64       # real in: made complex
    assert lax.fft(X, lax.FftType.RFFT, (6,)).shape == (4, 4)
    np.testing.assert_array_equal(lax.fft(Z, "fft", ()), Z)    # no lengths: unchanged
    with pytest.raises(ValueError, match="only real valued inputs supported for rfft"):
        lax.fft(Z, "rfft", (6,))
    with pytest.raises(ValueError, match="Unknown FFT type 'dft'"):
        lax.fft(Z, "dft", (6,))
    with pytest.raises(ValueError, match=r"FFT input shape \(4, 6\) minor dimensions must be "
                                         r"equal to fft_lengths \(5,\)"):
        lax.fft(Z, "fft", (5,))
    with pytest.raises(ValueError, match="must have at least as many input dimensions"):
        lax.fft(Z[0], "fft", (4, 6))
    with pytest.raises(ValueError, match="does not support multiple axes"):
        pfft.fft(Z, axis=(0, 1))
    with pytest.raises(ValueError, match="only supports 2 axes"):
        pfft.fft2(V, axes=(0, 1, 2))
    with pytest.raises(ValueError, match="Shape and axes have different lengths"):
        pfft.fftn(Z, s=(2, 3), axes=(0,))
    with pytest.raises(ValueError, match="does not support repeated axes"):
        pfft.fftn(Z, axes=(1, 1))
    with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 2"):
        pfft.fft(Z, axis=2)
    with pytest.raises(ValueError, match="Invalid norm value"):
        pfft.fft(Z, norm="sideways")
    with pytest.raises(ValueError, match="only takes an int"):
        pfft.fftfreq([4])


def test_fftfreq_dtypes_and_x64():
    from plugax.testing import x64
    assert pfft.fftfreq(4).dtype == np.float32
    assert pfft.rfftfreq(4, dtype=np.float16).dtype == np.float16
    with x64():
        assert pfft.fftfreq(4).dtype == np.float64
        z = Z.astype(np.complex128)
        got = plugax.jit(pfft.fft)(z)
        assert got.dtype == np.complex128
        np.testing.assert_allclose(got, np.fft.fft(z), rtol=1e-12, atol=1e-12)


def test_the_gpu_lowering_of_multi_axis_irfft_agrees_on_this_platform():
    """The GPU rule (outer IFFT, then a 1-D IRFFT) is an exact rewrite: lowered here in
    place of the default rule, it matches numpy.fft (this machine may have no GPU)."""
    from plugax.extend import RuleSet, override
    from plugax.testing import check_lowerings
    from plugax_fft.primitive import FftType, _lowering_gpu, fft_p
    half = (RNG.standard_normal((2, 3, 4, 4)) + 1j * RNG.standard_normal((2, 3, 4, 4)))
    half = half.astype(np.complex64)
    with override(RuleSet(fft_p, lowering={"default": _lowering_gpu, "cpu": _lowering_gpu})):
        check_lowerings([(fft_p, (half,), {"fft_type": FftType.IRFFT, "fft_lengths": n})
                         for n in ((4, 6), (3, 4, 7))])
        got = plugax.jit(lambda a: pfft.irfftn(a, axes=(1, 2, 3), s=(3, 4, 7)))(half)
    np.testing.assert_allclose(got, np.fft.irfftn(half.astype(np.complex128), axes=(1, 2, 3),
                                                  s=(3, 4, 7)), rtol=2e-4, atol=2e-4)
