"""The GPU rules' own work, run on this CPU: what each rule does around its kernels
(NaNs on failure, triangles, the permutation, V to V^H and the thin slices of the
Jacobi SVD, the swapped factors of a wide gesvd, the unpacking of cuSOLVER's real
eigenvectors) is checked against NumPy by compiling the CUDA rules for the CPU with
every GPU kernel replaced by a NumPy model of its documented results (a host
callback). test_gpu_lowering.py checks the kernel calls themselves against JAX's;
only a GPU run (bench/gpu_check.py) checks the kernels.
"""
from functools import partial

import numpy as np
import pytest

import plugax
from plugax.extend import LoweringRuleContext, RuleSet, emit_host_callback, override
from plugax_linalg import eig as E, gpu, lowering as L, platforms

RNG = np.random.default_rng(0)


def _getrf(a):
    """LAPACK's getrf: unit-lower L below, U on and above the diagonal, 1-based pivots."""
    a = a.copy()
    *batch, m, n = a.shape
    piv = np.zeros((*batch, min(m, n)), np.int32)
    for idx in np.ndindex(*batch):
        x = a[idx]
        for j in range(min(m, n)):
            p = j + int(np.argmax(np.abs(x[j:, j])))
            piv[idx + (j,)] = p + 1
            x[[j, p]] = x[[p, j]]
            x[j + 1:, j] /= x[j, j]
            x[j + 1:, j + 1:] -= np.outer(x[j + 1:, j], x[j, j + 1:])
    return [a, piv, np.zeros(batch, np.int32)]


def _permutation(piv, out):
    perm = np.broadcast_to(np.arange(out.shape[-1], dtype=np.int32), out.shape).copy()
    for idx in np.ndindex(*piv.shape[:-1]):
        for i, p in enumerate(piv[idx]):
            perm[idx + (i,)], perm[idx + (p,)] = perm[idx + (p,)], perm[idx + (i,)]
    return [perm]


def _svd(attrs, a, outs):
    """gesvd: U, V^H (swapped for a transposed call); gesvdj/gesvdp: U, V; zeros where
    the call declares placeholders."""
    u, s, vt = np.linalg.svd(a, full_matrices=attrs["full_matrices"])
    third, fourth = (vt, u) if attrs.get("transposed") else (u, vt)
    if "transposed" not in attrs:
        fourth = np.swapaxes(vt, -1, -2).conj()
    elif not attrs["compute_uv"]:
        third = fourth = np.zeros(())
    return [a, s, third, fourth, np.zeros(a.shape[:-2], np.int32)]


def _pack(w, v):
    """A real geev's eigenvectors: Re and Im of the first of each conjugate pair."""
    out = v.real.copy()
    for idx in np.ndindex(*w.shape[:-1]):
        for j in np.flatnonzero(w[idx].imag > 0):
            out[idx][:, j + 1] = v[idx][:, j].imag
    return out


def _eig(attrs, a, outs):
    w, vr = np.linalg.eig(a)
    vl = np.swapaxes(np.linalg.inv(vr), -1, -2).conj()
    vl /= np.linalg.norm(vl, axis=-2, keepdims=True)
    info = np.zeros(a.shape[:-2], np.int32)
    if "magma" not in attrs:                                   # cusolver geev
        return [a, w, a, _pack(w, vr) if a.dtype.kind == "f" else vr, info]
    ws = [w.real, w.imag] if a.dtype.kind == "f" else [w]
    return ws + [vl, vr, info]


MODELS = {
    "cusolver_potrf_ffi": lambda attrs, a, outs: [np.linalg.cholesky(a),
                                                  np.zeros(a.shape[:-2], np.int32)],
    "cusolver_getrf_ffi": lambda attrs, a, outs: _getrf(a),
    "cu_lu_pivots_to_permutation": lambda attrs, piv, outs: _permutation(piv, outs[0]),
    "cusolver_syevd_ffi": lambda attrs, a, outs: [
        *np.linalg.eigh(a, UPLO="L" if attrs["lower"] else "U")[::-1],
        np.zeros(a.shape[:-2], np.int32)],
    "cusolver_gesvdj_ffi": _svd, "cusolver_gesvdp_ffi": _svd, "cusolver_gesvd_ffi": _svd,
    "cuhybrid_eig_real": _eig, "cuhybrid_eig_comp": _eig, "cusolver_geev_ffi": _eig}


def _emulated_call(called, ctx, target, operands, in_avals, out_avals, alias=None, **kw):
    """`lowering._call` with GPU kernels replaced by host callbacks to MODELS (the
    targets lowered are added to `called`)."""
    called.add(target)
    if target not in MODELS:
        return _REAL_CALL(ctx, target, operands, in_avals, out_avals, alias, **kw)
    attrs = {k: v for k, v in kw.items() if k not in ("column_major", "non_batch_dims")}

    def model(*xs):
        outs = [np.zeros(a.shape, a.dtype) for a in out_avals]
        got = MODELS[target](attrs, *xs, outs)
        return [np.asarray(g).astype(o.dtype).reshape(o.shape) for g, o in zip(got, outs)]
    sub = LoweringRuleContext(ctx.module, ctx.primitive, in_avals, out_avals)
    return emit_host_callback(sub, model, operands, out_avals, name=target)


_REAL_CALL = L._call


@pytest.fixture
def cuda_rules_on_cpu(monkeypatch):
    """Every linalg primitive lowered on this CPU by its CUDA rule, kernels emulated;
    yields the set of kernels the rules called."""
    called = set()
    for module in (L, gpu, E):
        monkeypatch.setattr(module, "_call", partial(_emulated_call, called))
    monkeypatch.setattr(E.custom_call, "cusolver_version", lambda: 11701)
    rules = [RuleSet(p, lowering={"cpu": table["cuda"]}) for p, table in platforms.LOWERING.items()
             if p.name not in ("hessenberg", "schur")]
    with override(*rules):
        yield called


def normal(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def close(a, b, tol=2e-4):
    np.testing.assert_allclose(np.asarray(a), b, rtol=tol, atol=tol)


def test_cholesky_lu_and_solve(cuda_rules_on_cpu):
    import plugax.numpy as jnp
    import plugax.lax.linalg as lax_linalg
    a = normal(2, 4, 4)
    spd = a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4, dtype=np.float32)
    close(plugax.jit(jnp.linalg.cholesky)(spd), np.linalg.cholesky(spd))
    b = normal(2, 4, 3)
    close(plugax.jit(jnp.linalg.solve)(a, b), np.linalg.solve(a, b), 2e-3)
    lu, piv, perm = plugax.jit(lax_linalg.lu)(normal(3, 5, 4))
    assert sorted(np.asarray(perm)[0]) == list(range(5)) and np.asarray(piv).min() >= 0
    assert {"cusolver_potrf_ffi", "cusolver_getrf_ffi",
            "cu_lu_pivots_to_permutation"} <= cuda_rules_on_cpu


def test_a_failed_factorisation_is_nan(cuda_rules_on_cpu):
    """info != 0 (the kernel's report that the matrix is not positive definite): NaNs on
    and below the diagonal, as on CPU."""
    import plugax.numpy as jnp
    indefinite = np.float32([[1, 2], [2, 1]])
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(MODELS, "cusolver_potrf_ffi", lambda attrs, a, outs: [a, np.int32(1)])
        got = np.asarray(plugax.jit(jnp.linalg.cholesky)(indefinite))
    assert np.isnan(got[np.tril_indices(2)]).all() and got[0, 1] == 0
    assert "cusolver_potrf_ffi" in cuda_rules_on_cpu


@pytest.mark.parametrize("shape", [(2, 3, 4), (40, 50), (40, 30), (20, 1100), (2, 1100, 20)])
@pytest.mark.parametrize("full", [True, False])
def test_svd_factors(cuda_rules_on_cpu, shape, full):
    import plugax.numpy as jnp
    a = normal(*shape)
    u, s, vt = plugax.jit(partial(jnp.linalg.svd, full_matrices=full))(a)
    u, s, vt = map(np.asarray, (u, s, vt))
    k = min(shape[-2:])
    assert u.shape[-1] == (shape[-2] if full else k) and vt.shape[-2] == (shape[-1] if full else k)
    close((u[..., :, :k] * s[..., None, :]) @ vt[..., :k, :], a, 2e-3)
    close(plugax.jit(partial(jnp.linalg.svd, compute_uv=False))(a), s)
    assert cuda_rules_on_cpu == {"cusolver_gesvd_ffi" if max(shape) > 1024
                                 else "cusolver_gesvdj_ffi"}


def test_eigh(cuda_rules_on_cpu):
    import plugax.numpy as jnp
    a = normal(2, 5, 5)
    a = a + np.swapaxes(a, -1, -2)
    w, v = plugax.jit(jnp.linalg.eigh)(a)
    close(np.asarray(v) @ (np.asarray(w)[..., None] * np.swapaxes(np.asarray(v), -1, -2)), a, 1e-3)
    assert cuda_rules_on_cpu == {"cusolver_syevd_ffi"}


@pytest.mark.parametrize("left", [True, False])
def test_eig_vectors_from_both_kernels(cuda_rules_on_cpu, left):
    """Left vectors: the hybrid kernel; right only: cuSOLVER's geev, whose packed real
    vectors the rule unpacks (a random real 6x6 has complex pairs)."""
    import plugax.lax.linalg as lax_linalg
    a = normal(2, 6, 6)
    w, *vs = plugax.jit(partial(lax_linalg.eig, compute_left_eigenvectors=left))(a)
    w, vr = np.asarray(w), np.asarray(vs[-1])
    assert np.abs(w.imag).max() > 0.1
    close(a.astype(np.complex64) @ vr, vr * w[..., None, :], 1e-3)
    if left:
        vl_h = np.swapaxes(np.asarray(vs[0]), -1, -2).conj()
        close(vl_h @ a, w[..., :, None] * vl_h, 1e-3)
    assert cuda_rules_on_cpu == {"cuhybrid_eig_real" if left else "cusolver_geev_ffi"}
