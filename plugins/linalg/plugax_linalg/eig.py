"""The general (non-symmetric) eigendecomposition: primitive `eig`, as JAX's.

`eig(x)` gives the eigenvalues w and, if asked, the left and right eigenvectors
(columns; each of unit 2-norm with its largest-magnitude component real, LAPACK
geev's normalisation) of each square matrix, always complex (complex64 for 32-bit
input, complex128 for 64-bit), whatever the input's eigenvalues: a real matrix's
spectrum is complex in general, and under `jit` the dtype cannot depend on values.

Eager: `numpy.linalg.eig` (LAPACK geev too); the left eigenvectors are the columns
of inv(VR)^H renormalised, which are geev's up to the normalisation geev fixes.
Under jit on CPU: jaxlib's `lapack_?geev_ffi` kernel, as JAX emits it, with NaNs
for the matrices LAPACK fails on. On GPUs, JAX's choice: cuSOLVER's geev where
cuSOLVER is 11.7.1 or newer and no left vectors are asked for (its real vectors come
packed as LAPACK's and are unpacked), else jaxlib's hybrid kernel, which runs LAPACK
(or MAGMA) on the host; `implementation` pins one. Derivatives follow JAX: eigenvalues always;
eigenvectors only with `enable_eigvec_derivs=True` (they are defined only for
distinct eigenvalues, which cannot be checked statically). The tangents use the
left eigenvectors instead of a complex solve: V^-1 = diag(1 / (VL^H VR)_jj) VL^H,
since the rows of VL^H are the left eigenvectors in the same order.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from plugax.extend import (COMPLEX_OF_REAL, Primitive, ShapedArray, ShapeError, Zero,
                           bdim_at_front, bind, custom_call, get_aval)

from .lowering import _apply, _call, _char, _info, _nan_unless, algorithm_name

__all__ = ["eig_p", "eig", "eigvals", "roots", "RULES", "NUMPY", "NUMPY_LINALG", "LAX_LINALG"]

eig_p = Primitive("eig", multiple_results=True)

_ACCEPTED = tuple(np.dtype(d) for d in ("float32", "float64", "complex64", "complex128"))


def _complex_dtype(dtype: Any) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "c" else np.dtype(COMPLEX_OF_REAL[dtype])


def _eig_abstract_eval(ctx, x: ShapedArray, *, compute_left_eigenvectors: bool,
                       compute_right_eigenvectors: bool, **_: Any) -> list[ShapedArray]:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise ShapeError(f"primitive 'eig' takes square matrices (shape [..., n, n]), got "
                         f"{x.str_short()}")
    if np.dtype(x.dtype) not in _ACCEPTED:
        raise TypeError(f"primitive 'eig' takes float32, float64, complex64 or complex128 "
                        f"matrices, got {x.str_short()}; convert integers first, e.g. "
                        f"x.astype(jnp.float32)")
    c = _complex_dtype(x.dtype)
    count = int(compute_left_eigenvectors) + int(compute_right_eigenvectors)
    return [ShapedArray(x.shape[:-1], c)] + [ShapedArray(x.shape, c)] * count


def _normalise(v: np.ndarray) -> np.ndarray:
    """Columns scaled to unit 2-norm with the largest-|.| component real (geev's
    normalisation; the sign left free by it is chosen positive here)."""
    v = v / np.linalg.norm(v, axis=-2, keepdims=True)
    k = np.argmax(np.abs(v), axis=-2)[..., None, :]
    big = np.take_along_axis(v, k, axis=-2)
    phase = np.where(big == 0, 1, np.conj(big) / np.where(big == 0, 1, np.abs(big)))
    return v * phase


def _eig_impl(ctx, x: np.ndarray, *, compute_left_eigenvectors: bool,
              compute_right_eigenvectors: bool, **_: Any) -> list[np.ndarray]:
    c = _complex_dtype(x.dtype)
    n = x.shape[-1]
    bad = ~np.isfinite(x).all(axis=(-2, -1))
    if bad.any():   # NumPy raises; LAPACK under jit gives NaNs: give them for those only
        out = _eig_impl(ctx, np.where(bad[..., None, None], 0, x),
                        compute_left_eigenvectors=compute_left_eigenvectors,
                        compute_right_eigenvectors=compute_right_eigenvectors)
        return [np.where(bad.reshape(bad.shape + (1,) * (o.ndim - bad.ndim)), np.nan, o)
                .astype(c) for o in out]
    if n == 0:
        w, vr = np.zeros(x.shape[:-1], c), np.zeros(x.shape, c)
    elif compute_left_eigenvectors or compute_right_eigenvectors:
        w, vr = np.linalg.eig(x)
    else:
        w, vr = np.linalg.eigvals(x), None
    out = [np.asarray(w).astype(c)]
    if compute_left_eigenvectors:
        vr_c = np.asarray(vr).astype(np.complex128)
        with np.errstate(all="ignore"):
            vl = np.conj(np.swapaxes(np.linalg.inv(vr_c), -1, -2)) if n else vr_c
            out.append(_normalise(vl).astype(c) if n else vl.astype(c))
    if compute_right_eigenvectors:
        out.append(np.asarray(vr).astype(c))
    return out


def _eig_batching(ctx, args, dims, **params):
    (x,), (d,) = args, dims
    out = bind(eig_p, bdim_at_front(x, d, ctx.axis_size), **params)
    return out, [0] * len(out)


def _jnp():
    import plugax.numpy as jnp
    return jnp


def _vec_jvp(w: Any, v: Any, vinv_rows: Any, da: Any) -> tuple[Any, Any]:
    """(dw, dv) by non-degenerate perturbation theory, with v's columns kept at geev's
    normalisation (unit norm, largest component real), as JAX differentiates them.
    `vinv_rows` is V^-1 (given by the left eigenvectors)."""
    jnp = _jnp()
    n = get_aval(w).shape[-1]
    eye = np.eye(n, dtype=get_aval(w).dtype)
    f = 1 / (eye + w[..., None, :] - w[..., :, None]) - eye
    p = jnp.matmul(jnp.matmul(vinv_rows, da), v)
    dw = jnp.diagonal(p, axis1=-2, axis2=-1)
    u = jnp.matmul(v, f * p)
    k = jnp.argmax(jnp.abs(v), axis=-2)
    mask = (np.arange(n)[:, None] == k[..., None, :]).astype(get_aval(v).dtype)
    from plugax.lax import complex as _cplx
    c = _cplx(-jnp.sum(jnp.conj(v) * u, axis=-2).real,
              -jnp.sum(mask * u, axis=-2).imag / jnp.sum(mask * v, axis=-2).real)
    return dw, u + v * c[..., None, :]


def _eig_jvp(ctx, primals, tangents, *, compute_left_eigenvectors: bool,
             compute_right_eigenvectors: bool, enable_eigvec_derivs: bool = False,
             implementation: Any = None):
    (a,), (da,) = primals, tangents
    vectors = compute_left_eigenvectors or compute_right_eigenvectors
    if vectors and not enable_eigvec_derivs:
        raise NotImplementedError(
            "Derivatives of non-symmetric eigenvectors are only valid under assumptions on "
            "the input that plugax (like JAX) cannot check (distinct eigenvalues); pass "
            "enable_eigvec_derivs=True to plugax.lax.linalg.eig to opt in, or "
            "differentiate the eigenvalues alone (jnp.linalg.eigvals)")
    jnp = _jnp()
    # the vectors are needed for the tangents, so a second derivative (of eigenvalues
    # too) differentiates them: allowed here, under the same distinct-eigenvalue
    # assumption (JAX refuses the second derivative of eigvals instead)
    w, vl, vr = bind(eig_p, a, compute_left_eigenvectors=True,
                     compute_right_eigenvectors=True, enable_eigvec_derivs=True,
                     implementation=implementation)
    primal_out = [w] + ([vl] if compute_left_eigenvectors else []) \
        + ([vr] if compute_right_eigenvectors else [])
    if type(da) is Zero:
        return primal_out, [Zero(get_aval(o)) for o in primal_out]
    c = get_aval(w).dtype
    da = da.astype(c)
    vlh = jnp.conj(jnp.swapaxes(vl, -1, -2))
    scale = jnp.sum(jnp.conj(vl) * vr, axis=-2)          # (VL^H VR)_jj
    vinv = vlh / scale[..., :, None]                      # V^-1, row j = u_j^H / (u_j^H v_j)
    if not vectors:
        dw = jnp.sum(jnp.matmul(vinv, da) * jnp.swapaxes(vr, -1, -2), axis=-1)
        return primal_out, [dw]
    dw, dvr = _vec_jvp(w, vr, vinv, da)
    tangent_out = [dw]
    if compute_left_eigenvectors:
        # VL's columns are the right eigenvectors of A^H, with eigenvalues conj(w), and
        # (VR^H / diag(conj(scale))) is their inverse.
        vrh = jnp.conj(jnp.swapaxes(vr, -1, -2)) / jnp.conj(scale)[..., :, None]
        _, dvl = _vec_jvp(jnp.conj(w), vl, vrh, jnp.conj(jnp.swapaxes(da, -1, -2)))
        tangent_out.append(dvl)
    if compute_right_eigenvectors:
        tangent_out.append(dvr)
    return primal_out, tangent_out


_IMPLEMENTATIONS = (None, "lapack", "cusolver", "magma")  # JAX's EigImplementation values


def _implementation(implementation: Any, use_magma: Any = None) -> str | None:
    """JAX's EigImplementation (or its value) as its name; `use_magma` is JAX's
    deprecated spelling of MAGMA (True) or LAPACK (False)."""
    if use_magma is not None:
        return "magma" if use_magma else "lapack"
    name = algorithm_name(implementation)
    if name not in _IMPLEMENTATIONS:
        raise ValueError(f"plugax.lax.linalg.eig: implementation={implementation!r}; expected "
                         f"one of lapack, cusolver, magma (or None)")
    return name


def _use_cusolver(prefix: str, implementation: str | None, left: bool) -> bool:
    """JAX's choice on GPUs: cuSOLVER's geev (cuSOLVER >= 11.7.1, right vectors only)
    unless another implementation is asked for; else the hybrid kernel, which runs
    LAPACK (or MAGMA) on the host."""
    have = prefix == "cu" and (custom_call.cusolver_version() or 0) >= 11701
    if implementation == "cusolver":
        if not have:
            raise RuntimeError("Nonsymmetric eigendecomposition requires cusolver 11.7.1 or "
                               "newer")
        if left:
            raise NotImplementedError("Left eigenvectors are not supported by cusolver")
        return True
    return implementation is None and have and not left


def _kernel_and_flags(prefix: str, dtype: Any, left: bool, right: bool,
                      implementation: str | None) -> tuple[str, dict]:
    """geev on CPU (LAPACK's job characters); on GPUs the hybrid kernel, whose `magma`
    attribute is JAX's jax_use_magma setting ("auto": MAGMA for large matrices where
    it is installed), or what `implementation` pins."""
    if prefix == "cpu":
        if implementation not in (None, "lapack"):
            raise ValueError("Only the lapack implementation is supported on CPU.")
        return (custom_call.lapack_target("geev_ffi", dtype),
                dict(compute_left=_char("V" if left else "N"),
                     compute_right=_char("V" if right else "N")))
    kind = "real" if np.dtype(dtype).kind == "f" else "comp"
    return (custom_call.gpu_target(f"{prefix}hybrid_eig_{kind}"),
            dict(left=left, right=right,
                 magma={"magma": "on", "lapack": "off"}.get(implementation, "auto")))


def _unpack_pairs(w: Any, v: Any) -> Any:
    """Complex eigenvectors from a real geev's packing (cuSOLVER's, like LAPACK's): for a
    pair w_j, w_j+1 = conj(w_j), columns j and j+1 hold Re and Im of v_j, and v_j+1 is
    conj(v_j). A pair starts where the count of complex eigenvalues so far is odd."""
    jnp = _jnp()
    from plugax.lax import complex as _cplx
    zero = jnp.zeros_like(v[..., :1])
    real = (jnp.imag(w) == 0)[..., None, :]
    start = (jnp.cumsum((~(jnp.imag(w) == 0)).astype(np.int32), axis=-1) % 2 == 1)[..., None, :]
    next_col = jnp.concatenate([v[..., 1:], zero], axis=-1)
    prev_col = jnp.concatenate([zero, v[..., :-1]], axis=-1)
    re = jnp.where(real | start, v, prev_col)
    im = jnp.where(real, jnp.zeros_like(v), jnp.where(start, next_col, -v))
    return _cplx(re, im)


def _eig_cusolver(ctx, x, left: bool, right: bool, prefix: str) -> list:
    """cuSOLVER's geev (JAX's layout of it: the overwritten input, complex eigenvalues,
    vectors in the input's dtype, no aliasing), unpacked to complex vectors."""
    (aval,) = ctx.avals_in
    c = _complex_dtype(aval.dtype)
    info = _info(aval.shape[:-2])
    w_aval = ShapedArray(aval.shape[:-1], c)
    outs = [aval, w_aval, aval, aval, info]
    _, w, _, vr, i = _call(ctx, custom_call.gpu_target(f"{prefix}solver_geev_ffi"), [x],
                            [aval], outs, None, left=left, right=right)
    real = np.dtype(aval.dtype).kind == "f"

    def post(w, vr, i):
        vr = _unpack_pairs(w, vr) if real else vr
        w, vr = _nan_unless(i == 0, w, vr)
        return [w] + ([vr] if right else [])
    return _apply(ctx, post, [w, vr, i], [w_aval, aval, info])


def eig_lowering(ctx, x, *, compute_left_eigenvectors: bool, compute_right_eigenvectors: bool,
                 enable_eigvec_derivs: bool = False, implementation: Any = None,
                 prefix: str = "cpu"):
    left, right = bool(compute_left_eigenvectors), bool(compute_right_eigenvectors)
    if prefix != "cpu" and _use_cusolver(prefix, implementation, left):
        return _eig_cusolver(ctx, x, left, right, prefix)
    (aval,) = ctx.avals_in
    c = _complex_dtype(aval.dtype)
    real = np.dtype(aval.dtype).kind == "f"
    w_aval = ShapedArray(aval.shape[:-1], aval.dtype)
    v_aval = ShapedArray(aval.shape, c)
    outs = [w_aval] * (2 if real else 1) + [v_aval, v_aval, _info(aval.shape[:-2])]
    target, flags = _kernel_and_flags(prefix, aval.dtype, left, right, implementation)
    res = _call(ctx, target, [x], [aval], outs, None, **flags)

    def post(*vals):
        from plugax.lax import complex as _cplx
        *w, vl, vr, info = vals
        w = _cplx(w[0], w[1]) if real else w[0]
        w, vl, vr = _nan_unless(info == 0, w, vl, vr)
        return [w] + ([vl] if left else []) + ([vr] if right else [])
    return _apply(ctx, post, res, outs)


def eig(x: Any, *, compute_left_eigenvectors: bool = True,
        compute_right_eigenvectors: bool = True, enable_eigvec_derivs: bool = False,
        implementation: Any = None, use_magma: Any = None) -> list:
    """[w, vl?, vr?]: eigenvalues, left and right eigenvectors (columns) of general square
    matrices, as jax.lax.linalg.eig (always complex). `implementation` picks the GPU
    kernel under jit ("lapack", "cusolver", "magma" or JAX's enum; CPU: lapack only);
    the eager impl is NumPy's whatever it says."""
    from .lax_api import inexact
    return bind(eig_p, inexact(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
                compute_right_eigenvectors=bool(compute_right_eigenvectors),
                enable_eigvec_derivs=bool(enable_eigvec_derivs),
                implementation=_implementation(implementation, use_magma))


RULES = dict(impl=_eig_impl, abstract_eval=_eig_abstract_eval, jvp=_eig_jvp,
             batching=_eig_batching, lowering=eig_lowering)


# --- NumPy front ends -----------------------------------------------------------------------
class EigResult(NamedTuple):
    eigenvalues: Any
    eigenvectors: Any


def _square(name: str, a: Any) -> None:
    shape = get_aval(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise ValueError(f"plugax.numpy.linalg.{name} takes square matrices (a batch of them: "
                         f"shape [..., n, n]), got an array of shape {shape}")


def np_eig(a: Any) -> EigResult:
    """(eigenvalues, right eigenvectors as columns), always complex, as jnp.linalg.eig."""
    from .lax_api import inexact
    a = inexact(a)
    _square("eig", a)
    w, v = eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a: Any) -> Any:
    """The eigenvalues of general square matrices (complex), as jnp.linalg.eigvals."""
    from .lax_api import inexact
    a = inexact(a)
    _square("eigvals", a)
    return eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def _roots_no_zeros(p: Any) -> Any:
    """The eigenvalues of the companion matrix of p (p[0] != 0)."""
    jnp = _jnp()
    n = get_aval(p).shape[0]
    if n < 2:
        return jnp.zeros((0,), _complex_dtype(get_aval(p).dtype))
    a = jnp.diag(jnp.ones((n - 2,), get_aval(p).dtype), -1)
    a = a.at[0, :].set(-p[1:] / p[0])
    return eigvals(a)


def roots(p: Any, *, strip_zeros: bool = True) -> Any:
    """The roots of the polynomial with coefficients p (highest power first), as
    jnp.roots: leading zeros are stripped (which needs concrete coefficients), or with
    strip_zeros=False kept, the roots they stand for being NaN (this traces)."""
    from plugax.extend import promote_dtypes
    jnp = _jnp()
    (p,) = promote_dtypes("roots", p, category="inexact")
    p = jnp.atleast_1d(p)
    if get_aval(p).ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = get_aval(p).shape[0]
    if n < 2:
        return jnp.zeros((0,), _complex_dtype(get_aval(p).dtype))
    zero = p == 0
    lead = jnp.where(jnp.all(zero), n, jnp.argmin(zero))
    if strip_zeros:
        try:
            k = int(np.asarray(lead))
        except Exception as e:  # a tracer: the output length would depend on values
            raise type(e)(f"{e}\nThe error occurred in the jnp.roots() function. To use "
                          "this within a JIT-compiled context, pass strip_zeros=False, but be "
                          "aware that leading zeros will result in some returned roots being "
                          "set to NaN.") from None
        return _roots_no_zeros(p[k:])
    p = jnp.where(lead == n, jnp.ones((), get_aval(p).dtype), p)
    from plugax.lax import dynamic_slice
    rolled = dynamic_slice(jnp.concatenate([p, p]), (lead.astype(np.int32),), (n,))
    r = _roots_no_zeros(rolled)                       # p rolled left by `lead`
    # zero roots last, the others in order (a stable partition by scatter, not a sort:
    # the sort family is not among linalg's requirements)
    zero_root = (r == 0).astype(np.int32)
    nonzero = 1 - zero_root
    target = jnp.where(zero_root == 1, jnp.sum(nonzero) + jnp.cumsum(zero_root) - 1,
                       jnp.cumsum(nonzero) - 1)
    r = jnp.zeros_like(r).at[target].set(r)
    m = get_aval(r).shape[0]
    nan = np.array(complex(np.nan, np.nan), get_aval(r).dtype)
    return jnp.where(jnp.arange(m) < m - lead, r, nan)


NUMPY_LINALG = {"eig": np_eig, "eigvals": eigvals}
NUMPY = {"roots": roots}
LAX_LINALG = {"eig": eig}
