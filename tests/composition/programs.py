"""The programs of the composition matrix: small functions with declared signatures.

Each `Program` is a plugax function plus what the harness needs to know about it:

- `sample(rng)` draws example arguments (NumPy float64/int64 arrays, or pytrees of
  them) of fixed shapes, inside the program's domain and away from its kinks
  (a `cond` predicate, a `max`, a `where`), so that central finite differences in
  float64 are accurate. Argument 0 is always the differentiated argument: a float
  pytree. The other arguments may be floats or integers (a traced index, a trip
  count); they are batched by `vmap` but never differentiated.
- `forward`: where forward mode (jvp, jacfwd, linearize, and hessian's outer
  jacfwd) applies. "any"; "after_reverse" for a program that calls a `custom_vjp`
  function, which has no forward-mode rule: a forward stage applies only when a
  reverse stage (grad, vjp, jacrev, hessian) is inside it, so that it differentiates
  the fwd/bwd rules instead of the function; "never" when those rules themselves
  call a custom_vjp function (then forward over reverse reaches one too).
- `reverse`: False for a `while_loop` with a traced trip count, which cannot be
  transposed: no path may contain grad, vjp, jacrev or hessian. linearize
  (jvp + partial evaluation, no transpose) applies.

Both restrictions are JAX's: JAX 0.10.2 raises on exactly the paths they exclude
(checked by running every pair of these programs under JAX).

Every custom rule here is the true derivative of its function, so finite
differences are a valid reference for them too. Shapes are tiny (at most six
elements in argument 0) because references cost O(size) or O(size^2) calls.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp

__all__ = ["Program", "PROGRAMS", "PROGRAMS_BY_NAME"]


@dataclass(frozen=True)
class Program:
    name: str
    fn: Callable
    sample: Callable[[np.random.Generator], tuple]
    group: str
    forward: str = "any"       # "any" | "after_reverse" | "never"
    reverse: bool = True
    doc: str = field(default="", compare=False)


PROGRAMS: list[Program] = []


def program(group: str, sample: Callable, *, forward: str = "any",
            reverse: bool = True) -> Callable:
    assert forward in ("any", "after_reverse", "never")
    def register(fn: Callable) -> Callable:
        PROGRAMS.append(Program(fn.__name__, fn, sample, group, forward, reverse,
                                (fn.__doc__ or "").strip()))
        return fn
    return register


# --- argument samplers --------------------------------------------------------------------

def uniform(shape, lo=-1.2, hi=1.2):
    return lambda rng: rng.uniform(lo, hi, size=shape)


def away_from(shape, kinks=(0.0,), margin=0.2, lo=-1.2, hi=1.2):
    """Uniform values at least `margin` from every kink (resampled element-wise)."""
    def draw(rng):
        x = rng.uniform(lo, hi, size=shape)
        bad = np.min(np.abs(x[..., None] - np.asarray(kinks)), axis=-1) < margin
        while bad.any():
            x[bad] = rng.uniform(lo, hi, size=int(bad.sum()))
            bad = np.min(np.abs(x[..., None] - np.asarray(kinks)), axis=-1) < margin
        return x
    return draw


def distinct(shape, gap=0.25, lo=-1.2, hi=1.2):
    """Values whose pairwise distances are at least `gap` (a max/argmax is stable)."""
    n = int(np.prod(shape, dtype=int))
    def draw(rng):
        while True:
            x = rng.uniform(lo, hi, size=n)
            if n < 2 or np.min(np.diff(np.sort(x))) >= gap:
                return x.reshape(shape)
    return draw


def args(*draws):
    return lambda rng: tuple(d(rng) for d in draws)


def index(n, shape=()):
    return lambda rng: rng.integers(0, n, size=shape).astype(np.int64)


def signed_sum(shape, margin=0.4):
    """Values whose sum is at least `margin` away from zero (a cond predicate)."""
    def draw(rng):
        while True:
            x = rng.uniform(-1.2, 1.2, size=shape)
            if abs(x.sum()) >= margin:
                return x
    return draw


# --- elementwise ------------------------------------------------------------------------

@program("elementwise", args(uniform((3,))))
def ew_sin_mul(x):
    return pnp.sin(x) * x + pnp.cos(x) ** 2


@program("elementwise", args(uniform((3,))))
def ew_softplus_exp(x):
    return pnp.log1p(pnp.exp(x)) - pnp.exp(-x * x)


@program("elementwise", args(uniform((2, 2))))
def ew_tanh_sqrt(x):
    return pnp.tanh(x) ** 3 + x * pnp.sqrt(x * x + 1.0)


@program("elementwise", args(uniform((3,)), uniform((2, 1))))
def ew_broadcast_two_args(x, y):
    """Broadcasting against a second (undifferentiated, batched) float argument."""
    return x * y + pnp.sin(y) / (1.0 + x * x)


@program("elementwise", args(away_from((4,))))
def ew_where(x):
    return pnp.where(x > 0, x ** 2, pnp.sin(x)) + lax.logistic(x)


@program("elementwise", args(away_from((4,), kinks=(-0.3, 0.4))))
def ew_max_min_abs(x):
    return pnp.maximum(x, 0.4) * pnp.minimum(x, -0.3) + pnp.abs(x)


@program("elementwise", args(uniform(())))
def ew_scalar(x):
    """Scalar in, scalar out."""
    return x ** 3 - 2.0 * pnp.sin(x) + pnp.arctan(x)


# --- reductions -------------------------------------------------------------------------

@program("reductions", args(uniform((2, 3))))
def red_sum_axis(x):
    return pnp.sum(x ** 2, axis=0) + pnp.sum(pnp.sin(x))


@program("reductions", args(uniform((2, 3))))
def red_mean_var(x):
    return pnp.mean(x, axis=1) * pnp.var(x, axis=1)


@program("reductions", args(distinct((4,))))
def red_max(x):
    return pnp.max(x) + pnp.min(x * x + x)


@program("reductions", args(away_from((3,), margin=0.3)))
def red_prod(x):
    return pnp.prod(x) + pnp.prod(x + 2.0)


@program("reductions", args(uniform((2, 3))))
def red_logsumexp(x):
    m = pnp.max(x, axis=-1, keepdims=True)
    return pnp.log(pnp.sum(pnp.exp(x - m), axis=-1)) + m[:, 0]


@program("reductions", args(uniform((4,))))
def red_cumsum(x):
    return pnp.cumsum(x) * x


# --- dot and einsum -------------------------------------------------------------------------

@program("dot", args(uniform((2, 3)), uniform((3,))))
def dot_matvec(w, v):
    return pnp.tanh(w @ v)


@program("dot", args(uniform((2, 2))))
def dot_matmul_chain(a):
    return a @ a.T @ a


@program("dot", args(uniform((3,)), uniform((3, 3))))
def einsum_quadratic(x, m):
    """A scalar output: x^T M x."""
    return pnp.einsum("i,ij,j->", x, m, x)


@program("dot", args(uniform((2, 2, 1)), uniform((2, 1, 2))))
def einsum_batched(a, b):
    return pnp.einsum("bij,bjk->bik", a, b) + pnp.einsum("bij->ji", a) ** 2


@program("dot", args(uniform((3,))))
def dot_outer_inner(x):
    return pnp.outer(x, pnp.sin(x)) + pnp.dot(x, pnp.cos(x))


# --- indexing -------------------------------------------------------------------------------

@program("indexing", args(uniform((5,))))
def index_static(x):
    x = pnp.asarray(x)
    return x[1:4] * x[::2] + x[0] * x[-1]


@program("indexing", args(uniform((4,)), index(4)))
def index_gather_traced(x, i):
    """x[i] with an integer argument: a traced gather under jit and vmap."""
    x = pnp.asarray(x)
    return x[i] * x + pnp.sin(x[(i + 1) % 4])


@program("indexing", args(uniform((5,)), index(5, (3,))))
def index_take(x, idx):
    """take with a traced index array (repeats possible): scatter-add in the transpose."""
    return pnp.take(x, idx) ** 2 + pnp.sum(x)


@program("indexing", args(uniform((3, 2)), index(3)))
def index_update(x, i):
    """x.at[i].add / .set with a traced row index."""
    x = pnp.asarray(x)
    return x.at[i].add(pnp.sin(x[0])).at[0, 1].set(x[2, 0] ** 2)


# --- pytrees in and out ------------------------------------------------------------------

def _mlp_params(rng):
    return {"w": rng.uniform(-1, 1, (2, 2)), "b": rng.uniform(-1, 1, (2,))}


@program("pytree", args(_mlp_params, uniform((2,))))
def tree_dict_in(params, x):
    """A dict argument (differentiated) and a vector output."""
    return pnp.tanh(params["w"] @ x + params["b"])


@program("pytree", args(uniform((3,))))
def tree_tuple_dict_out(x):
    """A tuple/dict output."""
    return pnp.sin(x), {"s": pnp.sum(x * x), "p": x * pnp.cos(x)}


def _nested(rng):
    return (rng.uniform(-1, 1, (2,)), {"b": rng.uniform(-1, 1, ()), "c": rng.uniform(-1, 1, (2,))})


@program("pytree", args(_nested))
def tree_nested_in_out(t):
    a, d = t
    return {"u": a * d["b"], "v": (d["c"] + pnp.sin(a), d["b"] ** 2)}


# --- control flow ---------------------------------------------------------------------------

@program("control_flow", args(signed_sum((3,))))
def cond_data_pred(x):
    """cond on a predicate computed from the differentiated argument."""
    return lax.cond(pnp.sum(x) > 0, lambda v: pnp.sin(v) * 2.0, lambda v: pnp.cos(v) - v, x)


@program("control_flow", args(uniform((2,)), uniform((2,)), index(2)))
def cond_tuple_closure(x, y, k):
    """cond with tuple operands, closing over another argument; integer predicate."""
    def yes(ops):
        a, b = ops
        return a * y, b + pnp.sum(a)
    def no(ops):
        a, b = ops
        return pnp.sin(a), b * y[0]
    u, v = lax.cond(k == 1, yes, no, (x, x[0] * x[1]))
    return u + v


@program("control_flow", args(uniform((3,)), index(3)))
def switch_traced_index(x, k):
    return lax.switch(k, [lambda v: v * v, lambda v: pnp.sin(v), lambda v: pnp.exp(-v)], x)


def _rnn_args(rng):
    return rng.uniform(-0.8, 0.8, (2, 2)), rng.uniform(-1, 1, (3, 2))


@program("control_flow", _rnn_args)
def scan_rnn(w, xs):
    """An RNN: carry h = tanh(W h + x_t); returns the last carry and all hidden states."""
    def step(h, x):
        h = pnp.tanh(w @ h + x)
        return h, h * 2.0
    return lax.scan(step, pnp.zeros(2), xs)


@program("control_flow", args(uniform((4,))))
def scan_reverse_consts(x):
    """A reverse scan over x whose body closes over x (consts) and carries a pair."""
    def step(carry, xi):
        c, d = carry
        return (c * 0.5 + xi ** 2, d + pnp.sum(x) * c), c * xi
    (c, d), ys = lax.scan(step, (0.1, 0.2), x, reverse=True)
    return c + d, ys


@program("control_flow", args(uniform((3,), 0.5, 1.5)), reverse=False)
def while_newton_sqrt(x):
    """Three Newton steps for sqrt(x) in a while_loop counting to a fixed bound."""
    def body(c):
        i, y = c
        return i + 1, y - (y * y - x) / (2.0 * y)
    return lax.while_loop(lambda c: c[0] < 3, body, (0, x + 1.0))[1]


@program("control_flow", args(uniform((2,)), lambda rng: rng.integers(1, 4).astype(np.int64)),
         reverse=False)
def while_traced_trip(x, n):
    """A while_loop whose trip count is an (integer, batched) argument."""
    def body(c):
        i, y = c
        return i + 1, pnp.sin(y) + x
    return lax.while_loop(lambda c: c[0] < n, body, (0, x))[1]


@program("control_flow", args(uniform((3,))))
def fori_loop_static(x):
    """fori_loop with Python-int bounds: a scan, reverse-differentiable (as in JAX)."""
    return lax.fori_loop(0, 3, lambda i, c: c * pnp.sin(x) + i * 0.5, pnp.ones_like(x))


@program("control_flow", args(away_from((3,), margin=0.25)))
def cond_in_scan(x):
    """A cond inside a scan body, predicated on the scanned element."""
    def step(c, xi):
        c = lax.cond(xi > 0, lambda a: a * xi + 1.0, lambda a: a - xi ** 2, c)
        return c, c
    return lax.scan(step, 0.5, x)


@program("control_flow", args(signed_sum((2,))))
def scan_in_cond(x):
    """A scan inside a cond branch."""
    def loop(v):
        return lax.scan(lambda c, _: (pnp.sin(c) + v, None), v, None, length=3)[0]
    return lax.cond(pnp.sum(x) > 0, loop, lambda v: v * v, x)


# --- custom derivatives -----------------------------------------------------------------------

@px.custom_jvp
def _softplus(x):
    return pnp.maximum(x, 0.0) + pnp.log1p(pnp.exp(-pnp.abs(x)))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _softplus(x), t * lax.logistic(x)


@program("custom", args(away_from((3,), margin=0.1)))
def cjvp_softplus(x):
    return _softplus(x) * x


@px.custom_jvp
def _sin_cj(x):
    return pnp.sin(x)


_sin_cj.defjvps(lambda t, ans, x: t * _cos_cj(x))


@px.custom_jvp
def _cos_cj(x):
    return pnp.cos(x)


_cos_cj.defjvps(lambda t, ans, x: -t * _sin_cj(x))


@program("custom", args(uniform((3,))))
def cjvp_nested(x):
    """custom_jvp functions whose rules call each other (every order is custom)."""
    return _sin_cj(x) * _cos_cj(2.0 * x)


@px.custom_jvp
def _pair_fn(x, y):
    return {"a": x * pnp.sin(y), "b": pnp.sum(x * y)}


@_pair_fn.defjvp
def _pair_fn_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    out = _pair_fn(x, y)
    return out, {"a": tx * pnp.sin(y) + x * pnp.cos(y) * ty,
                 "b": pnp.sum(tx * y + x * ty)}


@program("custom", args(uniform((2,)), uniform((2,))))
def cjvp_two_args_dict_out(x, y):
    """custom_jvp of two arguments (one a closed-over batched argument), dict output."""
    return _pair_fn(x * x, y)


@px.custom_vjp
def _cube_sin(x):
    return x ** 3 * pnp.sin(x)


def _cube_sin_fwd(x):
    return x ** 3 * pnp.sin(x), x


def _cube_sin_bwd(x, ct):
    return (ct * (3.0 * x ** 2 * pnp.sin(x) + x ** 3 * pnp.cos(x)),)


_cube_sin.defvjp(_cube_sin_fwd, _cube_sin_bwd)


@program("custom", args(uniform((3,))), forward="after_reverse")
def cvjp_simple(x):
    return _cube_sin(x) + x


@px.custom_vjp
def _tanh_sq(x):
    return pnp.tanh(x) ** 2


def _tanh_sq_fwd(x):
    # the JAX docs' pattern: fwd calls the custom_vjp function itself
    return _tanh_sq(x), pnp.tanh(x)


_tanh_sq.defvjp(_tanh_sq_fwd, lambda th, ct: (ct * 2.0 * th * (1.0 - th * th),))


@program("custom", args(uniform((3,))), forward="never")
def cvjp_fwd_calls_self(x):
    """A custom_vjp whose fwd calls the function itself (the usual way to write fwd)."""
    return _tanh_sq(x) * pnp.sin(x)


@px.custom_vjp
def _inner_sq(x):
    return x * x


_inner_sq.defvjp(lambda x: (_inner_sq(x), x), lambda x, ct: (2.0 * x * ct,))


@px.custom_vjp
def _outer_sin_sq(x):
    return pnp.sin(_inner_sq(x))


def _outer_fwd(x):
    s = _inner_sq(x)
    return pnp.sin(s), (x, s)


def _outer_bwd(res, ct):
    x, s = res
    # d/dx sin(x^2) = cos(x^2) * 2x, with the inner custom_vjp inside the rule too
    return (ct * pnp.cos(_inner_sq(x)) * 2.0 * x,)


_outer_sin_sq.defvjp(_outer_fwd, _outer_bwd)


@program("custom", args(uniform((3,))), forward="never")
def cvjp_nested(x):
    """A custom_vjp whose fwd and bwd call another custom_vjp (second order goes through
    both bwd rules)."""
    return _outer_sin_sq(x) * x


@px.custom_vjp
def _scaled(params, x):
    return {"y": params["k"] * pnp.tanh(x), "z": pnp.sum(x) * params["k"]}


def _scaled_fwd(params, x):
    return _scaled(params, x), (params["k"], x)


def _scaled_bwd(res, ct):
    k, x = res
    th = pnp.tanh(x)
    dk = pnp.sum(ct["y"] * th) + ct["z"] * pnp.sum(x)
    dx = ct["y"] * k * (1.0 - th * th) + ct["z"] * k
    return {"k": dk}, dx


_scaled.defvjp(_scaled_fwd, _scaled_bwd)


@program("custom", args(lambda rng: {"k": rng.uniform(0.5, 1.5, ())}, uniform((3,))),
         forward="never")
def cvjp_pytree(params, x):
    """custom_vjp with a dict argument and a dict output."""
    return _scaled(params, x)


@program("custom", args(uniform((3,))), forward="after_reverse")
def cvjp_in_scan(x):
    """A custom_vjp call inside a scan body."""
    return lax.scan(lambda c, xi: (c + _cube_sin(xi * c), c), 0.3, x)


@px.custom_jvp
def _cj_of_cv(x):
    return _cube_sin(x)


@_cj_of_cv.defjvp
def _cj_of_cv_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _cj_of_cv(x), t * (3.0 * x ** 2 * pnp.sin(x) + x ** 3 * pnp.cos(x))


@program("custom", args(uniform((3,))))
def cjvp_around_cvjp(x):
    """A custom_jvp whose primal function calls a custom_vjp one: forward mode is fine,
    since the custom_jvp rule replaces the body."""
    return _cj_of_cv(x) * pnp.cos(x)


PROGRAMS_BY_NAME = {p.name: p for p in PROGRAMS}
assert len(PROGRAMS_BY_NAME) == len(PROGRAMS)
