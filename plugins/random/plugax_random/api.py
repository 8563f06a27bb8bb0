"""The `plugax.random` namespace: JAX's names, in JAX's order of arguments."""
from __future__ import annotations

from . import composite, gamma, keys, more, permutation, samplers

RANDOM = {
    "key": keys.key, "PRNGKey": keys.PRNGKey, "key_data": keys.key_data,
    "wrap_key_data": keys.wrap_key_data, "key_impl": keys.key_impl, "split": keys.split,
    "random_gamma_p": gamma.random_gamma_p, "fold_in": keys.fold_in, "bits": keys.bits, "permutation": permutation.permutation,
    **{name: getattr(samplers, name) for name in samplers.__all__ if name != "erf_inv32"},
    **{name: getattr(composite, name) for name in composite.__all__},
    **{name: getattr(more, name) for name in more.__all__},
}
