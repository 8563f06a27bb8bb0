"""The composition harness: stages, their independent references, paths and comparisons.

A *path* names transformations outermost first: ``("jit", "vmap", "grad")`` is
``jit(vmap(grad(program)))`` and its test id is ``jit.vmap.grad-<program>``.

Every stage turns a function `Fn(f, sample)` into another one; argument 0 stays
the differentiated float argument throughout, and the other arguments ride along:

=============  ======================================  ====================================
stage          transformed function                    reference (the stage's definition)
=============  ======================================  ====================================
jit            ``jit(f)``                              ``f`` run eagerly
vmap           ``vmap(f)``: in_axes (0, -1, None, -1,  a Python loop over the batch + stack
               None, ...), out_axes=-1
grad           ``grad(scalar(f))`` w.r.t. arg 0, aux   central differences of ``scalar(f)``
jvp            ``(x, t, *rest) -> jvp(f, (x,), (t,))``  ``f(x)``, central difference along t
vjp            ``(x, ct, *rest) -> (y, f_vjp(ct), aux)``  ``f(x)``, differences of <ct, f(x)>
linearize      ``(x, t, *rest) -> (y, f_lin(t), aux)``  as jvp
jacfwd         ``jacfwd(f)`` w.r.t. arg 0              central-difference Jacobian
jacrev         ``jacrev(f)`` w.r.t. arg 0, aux         central-difference Jacobian
hessian        ``hessian(f)`` w.r.t. arg 0             second-order central differences
make_jaxpr     trace to a jaxpr, type-check it and     ``f`` run eagerly; the jaxpr must
               run it with ``eval_jaxpr``              type-check and give the same values
=============  ======================================  ====================================

``scalar(f)`` is the adapter grad needs: a single scalar output passes through,
anything else becomes a fixed weighted sum of all output leaves. grad, vjp,
linearize and jacrev use ``has_aux=True`` (grad's aux is the scalar value, the
others' the first output leaf), so auxiliary outputs are checked under every outer
transformation too.

Only the *outermost* stage is replaced by its reference; the inner ones are
plugax's own (already checked by the shorter paths). Finite differences run in
float64 (the tests enable x64) on tiny inputs.
"""
from __future__ import annotations

import itertools
import os
import random
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np

import plugax as px
import plugax.numpy as pnp
import plugax.tree_util as tu

TRANSFORMS = ("jit", "vmap", "grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian",
              "make_jaxpr")
REVERSE = frozenset({"grad", "vjp", "jacrev", "hessian"})        # transpose something
FORWARD_ONLY = frozenset({"jvp", "jacfwd", "linearize"})          # evaluate tangents forwards
BATCH = 2                   # vmap's batch size
VMAP_OUT_AXIS = -1          # vmap's out_axes (its in_axes: see _vmap_axes)
TRIPLES_PER_PROGRAM = 8     # sampled (deterministically) from the applicable ones

# finite differences: steps and tolerances (relative to the largest reference value)
H1, TOL1 = 1e-5, 1e-6       # first order; truncation error ~ H1^2 * f''' ~ 1e-10
H2, TOL2 = 1e-4, 2e-5       # second order (hessian); ~ H2^2 f'''' + 1e-16 |f| / H2^2
TOL_EXACT = 1e-9            # jit / vmap / make_jaxpr: the same arithmetic, maybe reordered
TOL_FLOAT32 = 1e-4          # the same, in float32 (derivatives of derivatives cancel)


@dataclass(frozen=True)
class Fn:
    """A function of the composition and how to draw example arguments for it."""
    f: Callable
    sample: Callable[[np.random.Generator], tuple]


# --- helpers ----------------------------------------------------------------------------

def to_numpy(tree: Any) -> Any:
    return tu.tree_map(lambda x: np.asarray(x), tree)


def random_like(rng: np.random.Generator, tree: Any) -> Any:
    """Random float64 values shaped like each leaf of `tree` (tangents, cotangents)."""
    return tu.tree_map(lambda x: rng.uniform(-1.0, 1.0, size=np.shape(x)), tree)


def stack_trees(trees: Sequence[Any], axis: int = 0) -> Any:
    leaves0, tree = tu.tree_flatten(trees[0])
    columns = [tu.tree_leaves(t) for t in trees]
    return tu.tree_unflatten(tree, [np.stack([np.asarray(c[k]) for c in columns], axis=axis)
                                    for k in range(len(leaves0))])


def index_tree(tree: Any, b: int, axis: int | None = 0) -> Any:
    if axis is None:
        return tree
    return tu.tree_map(lambda x: np.take(np.asarray(x), b, axis=axis), tree)


def _weights(shape: tuple, k: int) -> np.ndarray:
    size = int(np.prod(shape, dtype=int))
    return (1.0 + 0.5 * np.cos(np.arange(size) * 1.7 + k)).reshape(shape)


def to_scalar(out: Any) -> Any:
    """grad's adapter: one scalar leaf passes through; otherwise a weighted sum of all leaves
    (fixed, uneven weights, so no output element can cancel another)."""
    leaves = tu.tree_leaves(out)
    if len(leaves) == 1 and np.shape(leaves[0]) == ():
        return leaves[0]
    return sum(pnp.sum(leaf * _weights(np.shape(leaf), k)) for k, leaf in enumerate(leaves))


def scalarized(f: Callable) -> Callable:
    return lambda *args: to_scalar(f(*args))


# --- the stages -----------------------------------------------------------------------------

def _jit(F: Fn) -> Fn:
    return Fn(px.jit(F.f), F.sample)


def _vmap_axes(n_args: int) -> tuple:
    """vmap's in_axes: argument 0 batched at the front, then the others alternately at
    their last axis and not batched (None): 0, -1, None, -1, None, ..."""
    return (0,) + tuple(-1 if i % 2 else None for i in range(1, n_args))


def _vmap(F: Fn) -> Fn:
    def f(*args):
        return px.vmap(F.f, in_axes=_vmap_axes(len(args)), out_axes=VMAP_OUT_AXIS)(*args)

    def sample(rng):
        draws = [F.sample(rng) for _ in range(BATCH)]
        return tuple(draws[0][i] if axis is None else stack_trees([d[i] for d in draws], axis)
                     for i, axis in enumerate(_vmap_axes(len(draws[0]))))
    return Fn(f, sample)


def first_leaf(out: Any) -> Any:
    return tu.tree_leaves(out)[0]


def _grad(F: Fn) -> Fn:
    def with_aux(*args):
        s = to_scalar(F.f(*args))
        return s, s
    return Fn(px.grad(with_aux, has_aux=True), F.sample)


def _with_tangent(F: Fn) -> Callable:
    def sample(rng):
        a = F.sample(rng)
        return (a[0], random_like(rng, a[0]), *a[1:])
    return sample


def _jvp(F: Fn) -> Fn:
    def f(x, t, *rest):
        return px.jvp(lambda x_: F.f(x_, *rest), (x,), (t,))
    return Fn(f, _with_tangent(F))


def _with_aux(f: Callable) -> Callable:
    """`f` returning `(out, first leaf of out)`, for `has_aux=True`."""
    def f_aux(*args):
        out = f(*args)
        return out, first_leaf(out)
    return f_aux


def _linearize(F: Fn) -> Fn:
    def f(x, t, *rest):
        y, f_lin, aux = px.linearize(_with_aux(lambda x_: F.f(x_, *rest)), x, has_aux=True)
        return y, f_lin(t), aux
    return Fn(f, _with_tangent(F))


def _vjp(F: Fn) -> Fn:
    def f(x, ct, *rest):
        y, f_vjp, aux = px.vjp(_with_aux(lambda x_: F.f(x_, *rest)), x, has_aux=True)
        return y, f_vjp(ct)[0], aux

    def sample(rng):
        a = F.sample(rng)
        return (a[0], random_like(rng, to_numpy(F.f(*a))), *a[1:])
    return Fn(f, sample)


def _jacfwd(F: Fn) -> Fn:
    return Fn(px.jacfwd(F.f), F.sample)


def _jacrev(F: Fn) -> Fn:
    return Fn(px.jacrev(_with_aux(F.f), has_aux=True), F.sample)


def _hessian(F: Fn) -> Fn:
    return Fn(px.hessian(F.f), F.sample)


def stage_jaxpr(f: Callable, args: tuple) -> tuple[Any, Any]:
    """make_jaxpr of `f` at `args`, type-checked; returns (closed jaxpr, output tree)."""
    store: dict = {}

    def flat(*a):
        leaves, store["tree"] = tu.tree_flatten(f(*a))
        return leaves
    closed = px.make_jaxpr(flat)(*args)
    px.typecheck_jaxpr(closed)
    return closed, store["tree"]


def _make_jaxpr(F: Fn) -> Fn:
    """As an inner stage, make_jaxpr is 'stage out, then run the jaxpr with eval_jaxpr'
    (the jaxpr round trip), which an outer transformation then transforms."""
    def f(*args):
        closed, out_tree = stage_jaxpr(F.f, args)
        outs = px.eval_jaxpr(closed.jaxpr, closed.consts, *tu.tree_leaves(args))
        return tu.tree_unflatten(out_tree, outs)
    return Fn(f, F.sample)


STAGES: dict[str, Callable[[Fn], Fn]] = {
    "jit": _jit, "vmap": _vmap, "grad": _grad, "jvp": _jvp, "vjp": _vjp,
    "linearize": _linearize, "jacfwd": _jacfwd, "jacrev": _jacrev, "hessian": _hessian,
    "make_jaxpr": _make_jaxpr,
}
assert tuple(STAGES) == TRANSFORMS


# --- the references: each stage replaced by its definition -----------------------------------

class Arg0:
    """Argument 0 as one flat float64 vector, for finite differences."""

    def __init__(self, x: Any):
        self.leaves, self.tree = tu.tree_flatten(x)
        self.shapes = [np.shape(leaf) for leaf in self.leaves]
        self.sizes = [int(np.prod(s, dtype=int)) for s in self.shapes]
        self.vec = np.concatenate([np.ravel(np.asarray(leaf, np.float64))
                                   for leaf in self.leaves])

    def rebuild(self, vec: np.ndarray) -> Any:
        parts, start = [], 0
        for shape, n in zip(self.shapes, self.sizes):
            parts.append(vec[start:start + n].reshape(shape))
            start += n
        return tu.tree_unflatten(self.tree, parts)

    def split(self, row: np.ndarray, lead: tuple) -> list:
        """A trailing axis of size n split into one block per leaf of argument 0."""
        out, start = [], 0
        for shape, n in zip(self.shapes, self.sizes):
            out.append(row[..., start:start + n].reshape(lead + shape))
            start += n
        return out


def _flat_call(f: Callable, args: tuple, x0: Arg0, vec: np.ndarray) -> tuple[list, Any]:
    out = f(x0.rebuild(vec), *args[1:])
    leaves, tree = tu.tree_flatten(out)
    return [np.asarray(leaf, np.float64) for leaf in leaves], tree


def fd_jacobian(f: Callable, args: tuple) -> tuple[list, list, Any, Arg0]:
    """Central differences: per output leaf an array of shape out.shape + (n,)."""
    x0 = Arg0(args[0])
    base, out_tree = _flat_call(f, args, x0, x0.vec)
    cols = []
    for i in range(x0.vec.size):
        e = np.zeros_like(x0.vec)
        e[i] = H1
        plus, _ = _flat_call(f, args, x0, x0.vec + e)
        minus, _ = _flat_call(f, args, x0, x0.vec - e)
        cols.append([(p - m) / (2 * H1) for p, m in zip(plus, minus)])
    jac = [np.stack([c[k] for c in cols], axis=-1) if cols else np.zeros(b.shape + (0,))
           for k, b in enumerate(base)]
    return jac, base, out_tree, x0


def fd_hessian(f: Callable, args: tuple) -> tuple[list, Any, Arg0]:
    """Second-order central differences: per output leaf out.shape + (n, n)."""
    x0 = Arg0(args[0])
    n = x0.vec.size
    at = lambda *steps: _flat_call(f, args, x0, x0.vec + sum(steps, np.zeros(n)))[0]
    base, out_tree = _flat_call(f, args, x0, x0.vec)
    e = [np.eye(n)[i] * H2 for i in range(n)]
    hess = [np.zeros(b.shape + (n, n)) for b in base]
    for i in range(n):
        pp, mm = at(2 * e[i]), at(-2 * e[i])
        for k, b in enumerate(base):
            hess[k][..., i, i] = (pp[k] - 2 * b + mm[k]) / (4 * H2 * H2)
        for j in range(i):
            a, b_, c, d = at(e[i], e[j]), at(e[i], -e[j]), at(-e[i], e[j]), at(-e[i], -e[j])
            for k in range(len(base)):
                v = (a[k] - b_[k] - c[k] + d[k]) / (4 * H2 * H2)
                hess[k][..., i, j] = hess[k][..., j, i] = v
    return hess, out_tree, x0


def _ref_exact(F: Fn, args: tuple) -> Any:
    return to_numpy(F.f(*args))


def _ref_vmap(F: Fn, args: tuple) -> Any:
    axes = _vmap_axes(len(args))
    return stack_trees([to_numpy(F.f(*[index_tree(a, b, axis) for a, axis in zip(args, axes)]))
                        for b in range(BATCH)], VMAP_OUT_AXIS)


def _ref_grad(F: Fn, args: tuple) -> Any:
    jac, base, _, x0 = fd_jacobian(scalarized(F.f), args)
    return x0.rebuild(jac[0]), base[0]


def _ref_jvp(F: Fn, args: tuple) -> Any:
    x, t, rest = args[0], args[1], args[2:]
    x0, t0 = Arg0(x), Arg0(t)
    f = lambda vec: _flat_call(F.f, (x, *rest), x0, vec)
    base, tree = f(x0.vec)
    plus, minus = f(x0.vec + H1 * t0.vec)[0], f(x0.vec - H1 * t0.vec)[0]
    return (tu.tree_unflatten(tree, base),
            tu.tree_unflatten(tree, [(p - m) / (2 * H1) for p, m in zip(plus, minus)]))


def _ref_linearize(F: Fn, args: tuple) -> Any:
    y, dy = _ref_jvp(F, args)
    return y, dy, first_leaf(y)


def _ref_vjp(F: Fn, args: tuple) -> Any:
    x, ct, rest = args[0], args[1], args[2:]
    jac, base, out_tree, x0 = fd_jacobian(F.f, (x, *rest))
    ct_leaves = [np.asarray(c) for c in tu.tree_leaves(ct)]
    xbar = sum(np.tensordot(c, j, axes=c.ndim) for c, j in zip(ct_leaves, jac))
    y = tu.tree_unflatten(out_tree, base)
    return y, x0.rebuild(np.asarray(xbar) + np.zeros(x0.vec.size)), first_leaf(y)


def _ref_jacobian(F: Fn, args: tuple) -> Any:
    jac, base, out_tree, x0 = fd_jacobian(F.f, args)
    return tu.tree_unflatten(out_tree, [tu.tree_unflatten(x0.tree, x0.split(j, b.shape))
                                        for j, b in zip(jac, base)])


def _ref_jacrev(F: Fn, args: tuple) -> Any:
    return _ref_jacobian(F, args), to_numpy(first_leaf(F.f(*args)))


def _ref_hessian(F: Fn, args: tuple) -> Any:
    hess, out_tree, x0 = fd_hessian(F.f, args)
    per_leaf = []
    for h in hess:
        lead = h.shape[:-2]
        rows = x0.split(np.moveaxis(h, -1, 0), (h.shape[-1],) + lead)   # (n, *lead, *Si)
        per_leaf.append(tu.tree_unflatten(x0.tree, [
            tu.tree_unflatten(x0.tree, x0.split(np.moveaxis(r, 0, -1), lead + si))
            for r, si in zip(rows, x0.shapes)]))
    return tu.tree_unflatten(out_tree, per_leaf)


REFERENCES: dict[str, tuple[Callable[[Fn, tuple], Any], float]] = {
    "jit": (_ref_exact, TOL_EXACT), "vmap": (_ref_vmap, TOL_EXACT),
    "grad": (_ref_grad, TOL1), "jvp": (_ref_jvp, TOL1), "vjp": (_ref_vjp, TOL1),
    "linearize": (_ref_linearize, TOL1), "jacfwd": (_ref_jacobian, TOL1),
    "jacrev": (_ref_jacrev, TOL1), "hessian": (_ref_hessian, TOL2),
    "make_jaxpr": (_ref_exact, TOL_EXACT),
}


# --- comparing ------------------------------------------------------------------------------

def assert_trees_close(got: Any, want: Any, tol: float, what: str) -> None:
    got_leaves, got_tree = tu.tree_flatten(got)
    want_leaves, want_tree = tu.tree_flatten(want)
    assert got_tree == want_tree, f"{what}: output tree {got_tree}, reference {want_tree}"
    scale = max([1.0] + [float(np.max(np.abs(w))) for w in want_leaves if np.size(w)])
    for k, (g, w) in enumerate(zip(got_leaves, want_leaves)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, f"{what}: leaf {k} has shape {g.shape}, reference {w.shape}"
        assert g.dtype == w.dtype, f"{what}: leaf {k} has dtype {g.dtype}, reference {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale,
                                   err_msg=f"{what}: leaf {k} of {len(got_leaves)}")


# --- paths ----------------------------------------------------------------------------------

def case_id(path: Sequence[str], program: str) -> str:
    return ".".join(path) + "-" + program


def build(program: Any, path: Sequence[str]) -> tuple[Fn, Fn]:
    """(inner, outer): the composition without its outermost stage, and with it."""
    F = Fn(program.fn, program.sample)
    for name in reversed(path[1:]):
        F = STAGES[name](F)
    return F, STAGES[path[0]](F)


def applicable(program: Any, path: Sequence[str]) -> str | None:
    """Why `path` does not apply to `program` (JAX raises there too), or None."""
    if not program.reverse:
        bad = [s for s in path if s in REVERSE]
        if bad:
            return f"{bad[0]} transposes a while_loop with a traced trip count"
    if program.forward == "never":
        bad = [s for s in path if s in FORWARD_ONLY or s == "hessian"]
        if bad:
            return f"{bad[0]} reaches a custom_vjp function in forward mode"
    if program.forward == "after_reverse":
        shielded = False
        for s in reversed(path):            # innermost stage first
            if s in REVERSE:
                shielded = True
            elif s in FORWARD_ONLY and not shielded:
                return f"{s} is forward mode on a custom_vjp function"
    return None


def singles(program: Any) -> list[tuple[str, ...]]:
    """One transformation: not part of the spec's matrix, but it names a broken stage."""
    return [(t,) for t in TRANSFORMS if applicable(program, (t,)) is None]


def pairs(program: Any) -> list[tuple[str, ...]]:
    return [p for p in itertools.product(TRANSFORMS, repeat=2) if applicable(program, p) is None]


FLOAT32_OUTER = ("make_jaxpr", "vmap")   # the exact references: no finite differences


def float32_pairs(program: Any) -> list[tuple[str, ...]]:
    """The pairs the float32 matrix runs (test_matrix_float32.py; ids "f32:<id>")."""
    return [p for p in pairs(program) if p[0] in FLOAT32_OUTER]


def sampled_triples(program: Any, k: int = TRIPLES_PER_PROGRAM) -> list[tuple[str, ...]]:
    """`k` applicable triples, the same on every run (seeded by the program's name)."""
    pool = [p for p in itertools.product(TRANSFORMS, repeat=3)
            if applicable(program, p) is None]
    rng = random.Random(zlib.crc32(program.name.encode()))
    return sorted(rng.sample(pool, min(k, len(pool))))


# --- the default sample (`make test`); PLUGAX_TEST_FULL=1 (`make test-full`) runs all ------

FULL = os.environ.get("PLUGAX_TEST_FULL", "") not in ("", "0")
SAMPLE_EVERY = 4            # `make test` runs about 1 in SAMPLE_EVERY pairs and triples


def default_paths(index: int, program: Any) -> list[tuple[str, ...]]:
    """The paths `make test` runs on the program PROGRAMS[index] (under
    PLUGAX_TEST_FULL=1: every path of the matrix). A fixed design, not a random draw:

    - every single transformation runs (a broken stage is still named by its own id);
    - the pair (a, b) runs where ``(a + b + index) % SAMPLE_EVERY == 0`` (a, b: positions
      in TRANSFORMS): each ordered pair runs on every SAMPLE_EVERY-th program, rotating
      through the program list, so every group of programs (listed together) meets
      nearly every pair; and each program gets every transformation as the outer one
      and as the inner one 2 or 3 times;
    - where a program's applicable pairs are fewer (a while_loop rules out reverse mode,
      a custom_vjp forward mode), a transformation left with no pair as the outer (or
      inner) one gets the applicable pair nearest to the rotation;
    - of its triples (sorted), the one at rank r runs where
      ``(r + index) % SAMPLE_EVERY == 0``: 2 of 8.
    test_default_sample_covers_every_pair_and_program checks these properties.
    """
    every_pair, triples = pairs(program), sampled_triples(program)
    if FULL:
        return singles(program) + every_pair + triples
    shift = lambda p: (sum(TRANSFORMS.index(t) for t in p) + index) % SAMPLE_EVERY
    chosen = [p for p in every_pair if shift(p) == 0]
    for position in (0, 1):
        for t in TRANSFORMS:
            options = [p for p in every_pair if p[position] == t]
            if options and not any(p[position] == t for p in chosen):
                chosen.append(min(options, key=lambda p: (shift(p), every_pair.index(p))))
    chosen.sort(key=every_pair.index)
    return (singles(program) + chosen
            + [q for r, q in enumerate(triples) if (r + index) % SAMPLE_EVERY == 0])


def to_float32(tree: Any) -> Any:
    """Arguments for the float32 matrix: float64 -> float32, int64 -> int32."""
    narrow = {np.dtype(np.float64): np.float32, np.dtype(np.int64): np.int32}
    return tu.tree_map(lambda x: np.asarray(x).astype(narrow.get(np.asarray(x).dtype,
                                                                 np.asarray(x).dtype)), tree)


def weak_types(tree: Any) -> list:
    return [bool(getattr(getattr(leaf, "aval", None), "weak_type", False))
            for leaf in tu.tree_leaves(tree)]


def run_case(program: Any, path: Sequence[str], seed: int, float32: bool = False) -> None:
    """Evaluate the composition and compare it with its reference. With `float32` (x64
    off; only for jit, vmap and make_jaxpr outermost), arguments are narrowed to 32 bits
    and the tolerance is float32's."""
    inner, outer = build(program, path)
    name = case_id(path, program.name)
    rng = np.random.default_rng([zlib.crc32(name.encode()), seed])
    args = outer.sample(rng)
    ref, tol = REFERENCES[path[0]]
    if float32:
        assert tol == TOL_EXACT, "float32 runs need an exact reference (no differences)"
        args, tol = to_float32(args), TOL_FLOAT32
    if path[0] == "make_jaxpr":
        # outermost make_jaxpr: the jaxpr type-checks and prints, its output types (weak
        # types too) are those of f's eager results, and eval_jaxpr gives f's values
        closed, out_tree = stage_jaxpr(inner.f, args)
        assert str(closed)
        eager = inner.f(*args)
        want = to_numpy(eager)
        for k, (v, w, weak) in enumerate(zip(closed.jaxpr.outvars, tu.tree_leaves(want),
                                             weak_types(eager))):
            staged = f"{np.dtype(v.aval.dtype)}{list(v.aval.shape)}" + \
                (" weak" if v.aval.weak_type else "")
            run = f"{w.dtype}{list(np.shape(w))}" + (" weak" if weak else "")
            assert staged == run, f"{name}: jaxpr output {k} is {staged}, eager f gives {run}"
        got = tu.tree_unflatten(out_tree, px.eval_jaxpr(closed.jaxpr, closed.consts,
                                                        *tu.tree_leaves(args)))
    else:
        got = outer.f(*args)
        want = ref(inner, args)
    assert_trees_close(to_numpy(got), want, tol, name)
