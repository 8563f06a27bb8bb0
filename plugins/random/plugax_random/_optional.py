"""Functions the random family uses when they are loaded, without requiring their family.

`PluginInfo.requires` has no notion of an optional dependency: a required plugin that is
missing makes this family fail to load. Most of plugax.random needs only elementwise,
shape, reductions, control_flow and xla_call; a few samplers also need

* `lax.erf` (truncated_normal), `lax.lgamma` (poisson with lam >= 10) and `lax.erf_inv`
  in float64 (normal with x64): the special functions of the optional, separately
  installed plugax-special distribution. Their XLA lowerings are what JAX compiles, so
  re-deriving them here would not give JAX's bits (the family's own float32 erf_inv
  polynomial is the exception: it is XLA's, checked bit for bit);
* `numpy.linalg` (multivariate_normal, orthogonal) from the linalg family and
  `numpy.einsum` from the dot family (multivariate_normal's factor @ z, JAX's op).

They are looked up by name at call time, so the family loads without them, and a sampler
that needs a missing one raises an error naming the plugin to install or load.
"""
from __future__ import annotations

from typing import Any, Callable

import plugax.lax as lax
import plugax.numpy as jnp

_WHERE = {"erf": "plugax-special", "lgamma": "plugax-special", "erf_inv": "plugax-special",
          "linalg": "linalg", "einsum": "dot"}


def has(namespace: str, name: str) -> bool:
    return hasattr(lax if namespace == "lax" else jnp, name)


def get(namespace: str, name: str, needed_by: str) -> Callable[..., Any]:
    module = lax if namespace == "lax" else jnp
    fn = getattr(module, name, None)
    if fn is None:
        raise NotImplementedError(
            f"plugax.random.{needed_by} needs plugax.{'lax' if namespace == 'lax' else 'numpy'}"
            f".{name}, from the {_WHERE.get(name, 'other')} plugin, which is not loaded")
    return fn
