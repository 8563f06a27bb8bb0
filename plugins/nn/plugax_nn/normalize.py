"""softmax, log_softmax, logsumexp, standardize, one_hot and attention, as `jax.nn`.

Numerical stability comes from subtracting the maximum, held fixed with
`stop_gradient` so that it changes the value's rounding but not its
derivative; softmax has JAX's custom jvp, y * (t - sum(y * t)), which stays
exact where the naive derivative of exp/sum would lose precision.
"""
from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np

import plugax
import plugax.numpy as pnp
from plugax import lax

__all__ = ["softmax", "log_softmax", "logsumexp", "logmeanexp", "standardize", "one_hot",
           "dot_product_attention"]


def _axes(axis: Any, ndim: int) -> tuple:
    axes = tuple(range(ndim)) if axis is None else (axis if isinstance(axis, tuple) else (axis,))
    return tuple(a % ndim if ndim else a for a in axes)


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False,
              return_sign: bool = False, where: Any = None) -> Any:
    """log(sum(b * exp(a))) over `axis`, stable for large entries: JAX's nn.logsumexp is
    its scipy.special.logsumexp, and so is this one (the special_functions family's,
    looked up when called: that namespace is filled by its plugin)."""
    import plugax.scipy.special as special
    return special.logsumexp(a, axis, b=b, keepdims=keepdims, return_sign=return_sign,
                             where=where)


def logmeanexp(x: Any, axis: Any = None, where: Any = None, keepdims: bool = False) -> Any:
    """log(mean(exp(x))) over `axis`."""
    x = pnp.asarray(x)
    if where is None:
        count = np.prod([x.shape[a] for a in _axes(axis, x.ndim)]) if x.ndim else 1
    else:
        count = pnp.sum(pnp.broadcast_to(where, x.shape), axis=axis, keepdims=keepdims)
    return logsumexp(x, axis, where=where, keepdims=keepdims) - pnp.log(count)


def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    x = pnp.asarray(x)
    x_max = pnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else pnp.where(where, x, -np.inf)
    shifted = x_safe - lax.stop_gradient(x_max)
    result = shifted - pnp.log(pnp.sum(pnp.exp(shifted), axis, where=where, keepdims=True))
    return result if where is None else pnp.where(where, result, -np.inf)


def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
    """exp(x) / sum(exp(x)) over `axis` (masked by `where`), with JAX's custom jvp."""
    return _softmax(pnp.asarray(x), axis, where)


def _softmax_value(x: Any, axis: Any, where: Any) -> Any:
    x_max = pnp.max(x, axis, where=where, initial=-np.inf, keepdims=True)
    x_safe = x if where is None else pnp.where(where, x, -np.inf)
    unnormalized = pnp.exp(x_safe - x_max)
    result = unnormalized / pnp.sum(unnormalized, axis, where=where, keepdims=True)
    return result if where is None else pnp.where(where, result, 0)


@partial(plugax.custom_jvp, nondiff_argnums=(1, 2))
def _softmax(x: Any, axis: Any, where: Any) -> Any:
    return _softmax_value(x, axis, where)


@_softmax.defjvp
def _softmax_jvp(axis, where, primals, tangents):
    (x,), (t,) = primals, tangents
    y = _softmax_value(x, axis, where)
    return y, y * (t - pnp.sum(y * t, axis, where=where, keepdims=True))


def standardize(x: Any, axis: Any = -1, mean: Any = None, variance: Any = None,
                epsilon: Any = 1e-5, where: Any = None, *, algorithm: str = "fast") -> Any:
    """(x - mean) / sqrt(variance + epsilon) over `axis`."""
    x = pnp.asarray(x)
    if mean is None:
        mean = pnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = pnp.mean(pnp.square(x - mean), axis, keepdims=True, where=where)
        elif algorithm == "fast":   # E[x^2] - E[x]^2, clipped: rounding may make it negative
            variance = pnp.clip(pnp.mean(pnp.square(x), axis, keepdims=True, where=where)
                                - pnp.square(mean), 0)
        else:
            raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    return (x - mean) * lax.rsqrt(variance + epsilon)


def one_hot(x: Any, num_classes: int, *, dtype: Any = None, axis: int = -1) -> Any:
    """`x`'s integer entries as one-hot vectors along a new `axis` (out-of-range: zeros)."""
    if not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"one_hot: num_classes must be a concrete integer, got {num_classes!r}")
    x = pnp.asarray(x)
    out_axis = axis % (x.ndim + 1)
    shape = [1] * x.ndim
    shape.insert(out_axis, int(num_classes))
    classes = pnp.arange(int(num_classes), dtype=x.dtype).reshape(shape)
    return (pnp.expand_dims(x, out_axis) == classes).astype(dtype or pnp.float32)


def _repeat_heads(a: Any, times: int) -> Any:
    b, s, n, h = a.shape
    return pnp.broadcast_to(a[:, :, :, None, :], (b, s, n, times, h)).reshape(b, s, n * times, h)


def dot_product_attention(query: Any, key: Any, value: Any, bias: Any = None, mask: Any = None,
                          *, scale: float | None = None, is_causal: bool = False,
                          query_seq_lengths: Any = None, key_value_seq_lengths: Any = None,
                          local_window_size: Any = None, implementation: str | None = None,
                          return_residual: bool = False) -> Any:
    """Scaled dot-product attention over [batch, seq, heads, head_dim] arrays (JAX's
    layout; the batch axis may be absent). Keys/values may have fewer heads than the
    queries (grouped-query attention)."""
    if implementation not in (None, "xla"):
        raise ValueError(f"dot_product_attention: implementation={implementation!r} is not "
                         f"available in plugax; use None or 'xla'")
    if local_window_size is not None or query_seq_lengths is not None \
            or key_value_seq_lengths is not None:
        raise NotImplementedError("dot_product_attention: local_window_size and the "
                                  "*_seq_lengths masks are not supported yet; pass mask=")
    q, k, v = pnp.asarray(query), pnp.asarray(key), pnp.asarray(value)
    unbatched = q.ndim == 3
    if unbatched:
        q, k, v = q[None], k[None], v[None]
        bias = None if bias is None else pnp.asarray(bias)[None]
        mask = None if mask is None else pnp.asarray(mask)[None]
    heads, kv_heads = q.shape[2], k.shape[2]
    if heads % kv_heads:
        raise ValueError(f"dot_product_attention: {heads} query heads cannot be grouped "
                         f"over {kv_heads} key/value heads")
    if kv_heads != heads:   # each key/value head serves heads // kv_heads query heads
        k, v = (_repeat_heads(a, heads // kv_heads) for a in (k, v))
    scale = 1.0 / np.sqrt(q.shape[-1]) if scale is None else scale
    logits = pnp.einsum("BTNH,BSNH->BNTS", q, k) * scale
    if bias is not None:
        logits = logits + bias
    keep = None if mask is None else pnp.asarray(mask, dtype=bool)
    if is_causal:
        t, s = logits.shape[-2], logits.shape[-1]
        causal = np.tril(np.ones((t, s), bool))
        keep = causal if keep is None else keep & causal
    if keep is not None:
        logits = pnp.where(keep, logits, np.finfo(np.float32).min)
    weights = softmax(logits.astype(pnp.float32), axis=-1).astype(q.dtype)
    out = pnp.einsum("BNTS,BSNH->BTNH", weights, v)
    out = out[0] if unbatched else out
    return (out, logits) if return_residual else out
