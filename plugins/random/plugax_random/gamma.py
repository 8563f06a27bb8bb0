"""The `random_gamma` primitive (JAX's name): Gamma(a) samples from keys, Marsaglia-Tsang.

Why a primitive, as in JAX: the sampler is a scalar rejection loop run by `lax.map` over
the elements, one key each. Under `vmap` a composition would batch that loop's body, and
XLA compiles scalar and vector transcendentals (log, exp, pow) differently in the last
bit; JAX's batching rule instead folds the batch into the keys and keeps one scalar loop
over all the elements. This primitive does the same (keys may carry leading batch axes:
`keys: uint32[*kb, 2]`, `a: float[*kb, *rest]`), so samples are JAX's bit for bit under
vmap too. Its jvp is JAX's implicit reparameterisation (`gamma_grad`); the impl runs the
compiled decomposition, and the lowering emits it (`lower_fun`).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

import plugax
import plugax.lax as lax
import plugax.numpy as jnp
from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, Zero, bdim_at_front,
                           format_operands, is_float)

from ._jit import jitted
from .keys import split as split_key
from .samplers import _exponential, _normal, _uniform, split2

__all__ = ["random_gamma_p", "RULES"]

random_gamma_p = Primitive("random_gamma")


def _gamma_one(data: Any, alpha: Any, log_space: bool) -> Any:
    """One Gamma(alpha) sample, Marsaglia-Tsang (alpha < 1 boosted by u**(1/alpha))."""
    dtype = np.dtype(alpha.dtype)

    def c(v: float) -> Any:
        return np.array(v, dtype)
    zero, one = c(0), c(1)
    boost_mask = lax.ge(alpha, one)
    alpha_orig = alpha
    alpha = lax.select(boost_mask, alpha, lax.add(alpha, one))
    d = lax.sub(alpha, c(1.0 / 3.0))
    cc = lax.div(c(1.0 / 3.0), lax.sqrt(d))

    def cond_fn(state):
        _, X, V, U = state
        return lax.bitwise_and(
            lax.ge(U, lax.sub(one, lax.mul(c(0.0331), lax.mul(X, X)))),
            lax.ge(lax.log(U), lax.add(lax.mul(X, c(0.5)),
                                       lax.mul(d, lax.add(lax.sub(one, V), lax.log(V))))))

    def body_fn(state):
        def next_kxv(kxv):
            k, sub = split2(kxv[0])
            x = _normal(sub, (), dtype)
            return k, x, lax.add(one, lax.mul(x, cc))
        k, x_key, u_key = split2(state[0], 3)
        _, x, v = lax.while_loop(lambda kxv: lax.le(kxv[2], zero), next_kxv,
                                 (x_key, zero, c(-1)))
        X = lax.mul(x, x)
        V = lax.mul(lax.mul(v, v), v)
        U = _uniform(u_key, 0.0, 1.0, (), dtype)
        return k, X, V, U

    k, sub = split2(data)
    _, _, V, _ = lax.while_loop(cond_fn, body_fn, (k, zero, one, c(2)))
    if log_space:
        log_samples = lax.neg(_exponential(sub, (), dtype))
        log_boost = lax.select(boost_mask | (log_samples == zero), zero,
                               lax.mul(log_samples, lax.div(one, alpha_orig)))
        return lax.add(lax.add(lax.log(d), lax.log(V)), log_boost)
    samples = one - _uniform(sub, 0.0, 1.0, (), dtype)
    boost = lax.select(boost_mask, one, lax.pow(samples, lax.div(one, alpha_orig)))
    return lax.mul(lax.mul(d, V), boost)


def _decomposition(keys: Any, a: Any, log_space: bool) -> Any:
    """JAX's _gamma_impl: each key split into one key per element of its slice of `a`,
    then one scalar sampler per element under lax.map."""
    kb = tuple(keys.shape[:-1])
    count = math.prod(a.shape[len(kb):])
    if math.prod(a.shape) == 0:
        return jnp.zeros(a.shape, a.dtype)
    flat_keys = jnp.reshape(keys, (-1, 2))
    if kb:
        subkeys = plugax.vmap(lambda k: split_key(k, count))(flat_keys)
    else:
        subkeys = split_key(flat_keys[0], count)[None]
    subkeys = jnp.reshape(subkeys, (-1, 2))
    alphas = jnp.reshape(a, (-1,))
    samples = lax.map(lambda ka: _gamma_one(ka[0], ka[1], log_space), (subkeys, alphas))
    return jnp.reshape(samples, a.shape)


_compiled = jitted("log_space")(_decomposition)


def _abstract_eval(ctx, keys: ShapedArray, a: ShapedArray, *, log_space: bool) -> ShapedArray:
    kb = tuple(keys.shape[:-1])
    if np.dtype(keys.dtype) != np.uint32 or keys.ndim < 1 or keys.shape[-1] != 2 \
            or not is_float(a.dtype):
        raise TypeError(f"primitive 'random_gamma' takes uint32[..., 2] key data and a float "
                        f"array, got {format_operands([keys, a])}")
    if tuple(a.shape[:len(kb)]) != kb:
        raise ShapeError(f"primitive 'random_gamma': the keys' batch shape {kb} must lead the "
                         f"shape of a, got {format_operands([keys, a])}")
    return ShapedArray(a.shape, a.dtype)


def _impl(ctx, keys: np.ndarray, a: np.ndarray, *, log_space: bool) -> np.ndarray:
    return np.asarray(_compiled(keys, a, log_space=log_space))


def _lowering(ctx, keys, a, *, log_space: bool):
    return ctx.lower_fun(lambda k, x: _decomposition(k, x, log_space), keys, a)


def _batching(ctx, args, dims, *, log_space: bool):
    """The batch becomes a leading key-batch axis (keys broadcast when unbatched)."""
    keys, a = (bdim_at_front(x, d, ctx.axis_size) for x, d in zip(args, dims))
    return random_gamma_p.bind(keys, a, log_space=log_space), 0


def _jvp(ctx, primals, tangents, *, log_space: bool):
    """Implicit reparameterisation: d sample / d a at a fixed CDF value."""
    from .gamma_grad import gamma_sample_grad
    keys, a = primals
    x = random_gamma_p.bind(keys, a, log_space=log_space)
    a_dot = tangents[1]
    if type(a_dot) is Zero:
        return x, Zero.from_value(x)
    if log_space:   # d log x / da = (dx/da) / x, x floored at tiny as in JAX
        ex = jnp.exp(x)
        ex = jnp.where(ex == 0, np.array(np.finfo(ex.dtype).tiny, ex.dtype), ex)
        g = gamma_sample_grad(a, ex) / ex
    else:
        g = gamma_sample_grad(a, x)
    return x, a_dot * g


RULES = [RuleSet(random_gamma_p, impl=_impl, abstract_eval=_abstract_eval, jvp=_jvp,
                 batching=_batching, lowering={"default": _lowering})]
