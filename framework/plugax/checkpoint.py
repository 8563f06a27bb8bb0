"""`checkpoint` / `remat`: accepted, with the same values and derivatives.

In JAX, checkpointing trades compute for memory: the backward pass recomputes
the function's intermediates instead of storing them. The values and the
derivatives are those of the function itself, which is what plugax gives; it
does not rematerialise (docs/faq.md says so), so a checkpointed program runs
unchanged with JAX's memory use for an unchecked one. `policy` and the
`checkpoint_policies` names are accepted for the same reason.
"""
from __future__ import annotations

import types
from functools import wraps
from typing import Any, Callable, Sequence

__all__ = ["checkpoint", "remat", "checkpoint_policies"]


def checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True,
               policy: Callable | None = None, static_argnums: int | Sequence[int] = (),
               concrete: bool = False) -> Any:
    """`fun` with JAX's checkpoint signature (usable bare or with keyword arguments)."""
    if policy is not None and not callable(policy):
        raise TypeError(f"checkpoint: policy must be callable (one of "
                        f"plugax.checkpoint_policies), got {policy!r}")
    if fun is None:
        return lambda f: checkpoint(f, prevent_cse=prevent_cse, policy=policy,
                                    static_argnums=static_argnums)
    if not callable(fun):
        raise TypeError(f"checkpoint: expected a function, got {type(fun).__name__}")

    @wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        return fun(*args, **kwargs)
    return checkpointed


remat = checkpoint


def _saves(answer: bool) -> Callable:
    return lambda *_, **__: answer


def _names_policy(save: bool) -> Callable:
    def policy(*names: str) -> Callable:
        return lambda prim, *_, **params: (params.get("name") in names) == save
    return policy


checkpoint_policies = types.SimpleNamespace(
    everything_saveable=_saves(True),
    nothing_saveable=_saves(False),
    dots_saveable=_saves(True),
    checkpoint_dots=_saves(True),
    dots_with_no_batch_dims_saveable=_saves(True),
    checkpoint_dots_with_no_batch_dims=_saves(True),
    save_only_these_names=_names_policy(True),
    save_anything_except_these_names=_names_policy(False),
    save_any_names_but_these=_names_policy(False),
)
