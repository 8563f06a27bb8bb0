"""Record how JAX lowers the linalg primitives for GPUs (and the same cases for CPU), for
test_gpu_lowering.py.

    .venv/bin/python plugins/linalg/tests/record_jax_gpu_lowering.py   (the bench venv:
                                                                       jax 0.10.2)

JAX lowers for CUDA and ROCm on a machine without either (`lowering_platforms=`).
For each case (a primitive, its params, an operand shape and dtype, a platform) this
writes the kernel calls of JAX's module, i.e. its `stablehlo.custom_call` and
`stablehlo.triangular_solve` lines as printed, without the `sdy.sharding_rule`
attribute (a Shardy partitioning hint plugax does not emit) — or the error JAX raises.
eig's kernel depends on the cuSOLVER version of the machine (>= 11.7.1: cusolver
geev); cases with "cusolver_version" record JAX with that version faked.
"""
from __future__ import annotations

import json
import re
import types
from pathlib import Path

import numpy as np

OUT = Path(__file__).parent / "gpu_lowering_jax.json"
# JAX and its linalg module, the primitives and the enum-valued params: set by
# _load_jax() when the script runs (JAX is the reference here, never imported by
# plugax or by the tests that read the recording)
jax = L = None
PRIMS: dict = {}
ENUMS: dict = {}


def _load_jax() -> None:
    global jax, L
    import jax
    jax.config.update("jax_enable_x64", True)
    from jax._src.lax import linalg as L
    PRIMS.update({"cholesky": L.cholesky_p, "triangular_solve": L.triangular_solve_p,
                  "lu": L.lu_p, "qr": L.qr_p, "eigh": L.eigh_p, "svd": L.svd_p,
                  "eig": L.eig_p, "hessenberg": L.hessenberg_p, "schur": L.schur_p})
    ENUMS.update({"svd": ("algorithm", L.SvdAlgorithm),
                  "eigh": ("algorithm", L.EighImplementation),
                  "eig": ("implementation", L.EigImplementation)})

TRI = dict(left_side=True, lower=True, transpose_a=False, conjugate_a=False,
           unit_diagonal=False)
QR = dict(pivoting=False, full_matrices=True, use_magma=None)
EIGH = dict(lower=True, sort_eigenvalues=True, subset_by_index=None, algorithm=None)
SVD = dict(full_matrices=True, compute_uv=True, subset_by_index=None, algorithm=None)
EIG = dict(compute_left_eigenvectors=True, compute_right_eigenvectors=True,
           enable_eigvec_derivs=False, implementation=None)
SCHUR = dict(compute_schur_vectors=True, sort_eig_vals=False, select_callable=None)


def case(prim, shape, dtype="float32", platform="cuda", b_shape=None, cusolver=None, **kw):
    defaults = {"triangular_solve": TRI, "qr": QR, "eigh": EIGH, "svd": SVD, "eig": EIG,
                "schur": SCHUR}.get(prim, {})
    c = dict(primitive=prim, shape=list(shape), dtype=dtype, platform=platform,
             params={**defaults, **kw})
    if b_shape is not None:
        c["b_shape"] = list(b_shape)
    if cusolver is not None:
        c["cusolver_version"] = cusolver
    return c


def cases() -> list:
    out = []
    for dt in ("float32", "float64"):
        out += [case("cholesky", (2, 3, 3), dt), case("lu", (2, 4, 3), dt),
                case("qr", (2, 4, 3), dt), case("qr", (2, 4, 3), dt, full_matrices=False),
                case("eigh", (2, 3, 3), dt), case("svd", (2, 3, 4), dt),
                case("svd", (1100, 20), dt, full_matrices=False),
                case("triangular_solve", (2, 3, 3), dt, b_shape=(2, 3, 2)),
                case("eig", (2, 3, 3), dt), case("eig", (2, 3, 3), dt, cusolver=11701,
                                                 compute_left_eigenvectors=False)]
    out += [case("cholesky", (4, 4)), case("lu", (3, 5)), case("lu", (3, 3)),
            case("lu", (2, 3, 4, 4)), case("qr", (3, 5)), case("qr", (3, 5), full_matrices=False),
            case("eigh", (4, 4), lower=False), case("eigh", (4, 4), algorithm="jacobi"),
            case("eigh", (2, 4, 4), algorithm="qr"),
            case("triangular_solve", (3, 3), b_shape=(2, 3), left_side=False, lower=False,
                 transpose_a=True, unit_diagonal=True),
            case("triangular_solve", (2, 3, 3), b_shape=(2, 3, 1), transpose_a=True,
                 conjugate_a=True),
            case("triangular_solve", (3, 3), b_shape=(3, 3), conjugate_a=True)]
    out += [case("svd", (2, 3, 4), full_matrices=False), case("svd", (2, 3, 4), compute_uv=False),
            case("svd", (2, 3, 4), full_matrices=False, compute_uv=False),
            case("svd", (40, 50), full_matrices=False), case("svd", (40, 30)),
            case("svd", (2, 40, 50), full_matrices=False, compute_uv=False),
            case("svd", (20, 1100), full_matrices=False), case("svd", (1100, 20)),
            case("svd", (2, 20, 1100), compute_uv=False), case("svd", (5, 3), algorithm="qr"),
            case("svd", (3, 5), algorithm="qr", full_matrices=False),
            case("svd", (2, 4, 3), algorithm="polar", full_matrices=False),
            case("svd", (40, 50), algorithm="jacobi", full_matrices=False)]
    out += [case("eig", (4, 4), compute_left_eigenvectors=False),
            case("eig", (2, 3, 3), compute_right_eigenvectors=False),
            case("eig", (3, 3), compute_left_eigenvectors=False, compute_right_eigenvectors=False),
            case("eig", (2, 3, 3), "complex64"),
            case("eig", (2, 3, 3), "complex64", cusolver=11701, compute_left_eigenvectors=False),
            case("eig", (3, 3), cusolver=11701, compute_left_eigenvectors=False,
                 compute_right_eigenvectors=False),
            case("eig", (3, 3), cusolver=11701),
            case("eig", (3, 3), cusolver=11701, implementation="lapack",
                 compute_left_eigenvectors=False),
            case("eig", (3, 3), implementation="magma"),
            case("eig", (3, 3), cusolver=11701, implementation="cusolver",
                 compute_left_eigenvectors=False),
            case("hessenberg", (2, 3, 3)), case("schur", (2, 3, 3))]
    out += [case("cholesky", (2, 3, 3), platform="rocm"), case("lu", (2, 4, 3), platform="rocm"),
            case("qr", (2, 4, 3), platform="rocm"), case("eigh", (2, 3, 3), platform="rocm"),
            case("svd", (2, 3, 4), platform="rocm"),
            case("svd", (1100, 20), platform="rocm", full_matrices=False),
            case("svd", (5, 3), platform="rocm", algorithm="divide_and_conquer"),
            case("triangular_solve", (2, 3, 3), b_shape=(2, 3, 2), platform="rocm"),
            case("eig", (2, 3, 3), platform="rocm"), case("hessenberg", (3, 3), platform="rocm")]
    return out + [dict(c, platform="cpu") for c in out if _also_on_cpu(c)]


def _also_on_cpu(c: dict) -> bool:
    """The CUDA cases JAX lowers on CPU as plugax does: not those that pick a GPU
    algorithm (plugax's CPU lowering ignores `algorithm`, where JAX's raises or calls
    gesvd) or fake a cuSOLVER version."""
    picks = c["params"].get("algorithm") or c["params"].get("implementation")
    return c["platform"] == "cuda" and "cusolver_version" not in c and not picks


def kernel_calls(text: str) -> list:
    """The custom-call and triangular-solve lines of a module, as printed, without the
    Shardy hint."""
    lines = [ln.strip() for ln in text.splitlines()
             if "stablehlo.custom_call @" in ln or "stablehlo.triangular_solve" in ln]
    return [re.sub(r", sdy\.sharding_rule = #sdy\.op_sharding_rule<.*?, custom>", "", ln)
            for ln in lines]


def params_for_jax(c: dict) -> dict:
    params = dict(c["params"])
    key, enum = ENUMS.get(c["primitive"], (None, None))
    if key and params.get(key) is not None:
        params[key] = next(e for e in enum if str(e.value).lower() == params[key])
    return params


def record(c: dict) -> dict:
    version = c.get("cusolver_version")
    L.cuda_versions = (types.SimpleNamespace(cusolver_get_version=lambda: version)
                       if version else None)
    args = [np.ones(c["shape"], c["dtype"])]
    if "b_shape" in c:
        args.append(np.ones(c["b_shape"], c["dtype"]))
    params = params_for_jax(c)
    prim = PRIMS[c["primitive"]]
    try:
        text = jax.jit(lambda *xs: prim.bind(*xs, **params)).trace(*args).lower(
            lowering_platforms=(c["platform"],)).as_text()
    except Exception as err:  # noqa: BLE001 - the error is the record
        return {**c, "error": f"{type(err).__name__}: {err}"}
    return {**c, "calls": kernel_calls(text)}


def main() -> None:
    _load_jax()
    recorded = [record(c) for c in cases()]
    OUT.write_text(json.dumps({"jax": jax.__version__, "cases": recorded}, indent=1) + "\n")
    print(f"{len(recorded)} cases -> {OUT}")


if __name__ == "__main__":
    main()
