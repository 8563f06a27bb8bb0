"""Which rule lowers each linear-algebra primitive on which platform: the `lowering`
tables of the family's RuleSets.

As JAX registers its kernel-backed rules once per platform with that platform's
kernel prefix ("cpu", "cu" for CUDA, "hip" for ROCm), `lowering_table` binds each
rule's `prefix`. "gpu" is the platform name jaxlib reports for plugax's GPU client,
which is always CUDA's (runtime/client.py loads CUDA plugins only), so it gets the
CUDA rules. Where JAX 0.10 has no GPU lowering (hessenberg, schur) the GPU entries
raise the error JAX raises; platforms without an entry (TPU, ...) get "default",
which says where the primitive lowers.
"""
from __future__ import annotations

from functools import partial
from typing import Any, Callable

from plugax.extend import LoweringRuleError

from . import eig as E, gpu, hessenberg as H, lowering as L, primitives as P, schur as S

__all__ = ["LOWERING", "lowering_table", "PREFIXES"]

PREFIXES = {"cpu": "cpu", "cuda": "cu", "gpu": "cu", "rocm": "hip"}


def _no_gpu_rule(name: str) -> Callable:
    def rule(ctx, *args: Any, **params: Any):
        raise LoweringRuleError(
            f"MLIR translation rule for primitive '{name}' not found for platform "
            f"{ctx.platform}: JAX lowers '{name}' on CPU (LAPACK) only, and so does plugax")
    return rule


def _unknown_platform_rule(name: str) -> Callable:
    def rule(ctx, *args: Any, **params: Any):
        raise LoweringRuleError(
            f"primitive '{name}' has lowerings for platforms "
            f"{sorted(set(PREFIXES) - {'gpu'})} (LAPACK, cuSOLVER, hipSOLVER) only; "
            f"platform {ctx.platform!r} has none in plugax")
    return rule


def lowering_table(name: str, cpu: Callable, gpu_rule: Callable | None) -> dict:
    """{platform: rule} for a RuleSet: `cpu` and `gpu_rule` (None: no GPU lowering, as
    in JAX) with their `prefix` bound, and a "default" that names the platforms."""
    table = {"default": _unknown_platform_rule(name)}
    for platform, prefix in PREFIXES.items():
        rule = cpu if prefix == "cpu" else gpu_rule
        table[platform] = _no_gpu_rule(name) if rule is None else partial(rule, prefix=prefix)
    return table


def _tables() -> dict:
    return {P.cholesky_p: lowering_table("cholesky", L._cholesky_lowering, L._cholesky_lowering),
            P.triangular_solve_p: lowering_table("triangular_solve",
                                                 L._triangular_solve_lowering,
                                                 gpu.triangular_solve_lowering),
            P.lu_p: lowering_table("lu", L._lu_lowering, L._lu_lowering),
            P.qr_p: lowering_table("qr", L._qr_lowering, L._qr_lowering),
            P.eigh_p: lowering_table("eigh", L._eigh_lowering, L._eigh_lowering),
            P.svd_p: lowering_table("svd", L._svd_lowering, gpu.svd_lowering),
            E.eig_p: lowering_table("eig", E.eig_lowering, E.eig_lowering),
            H.hessenberg_p: lowering_table("hessenberg", H.RULES["lowering"], None),
            S.schur_p: lowering_table("schur", S.RULES["lowering"], None)}


LOWERING = _tables()
