"""Which mesh axes each value of a shard_map body varies over (JAX's `check_vma`).

Why: an `out_specs` entry that leaves out a mesh axis says the output is the same
on every device along it, and the shard_map then keeps one device's copy. If the
value in fact differs along that axis (the body returned a block of a sharded
input, an `axis_index`, a `ppermute`d value, ...), that copy is a silently wrong
answer. JAX tracks, for every value of the body, the set of manual mesh axes it
may vary over (its "vma") and refuses such out_specs at trace time; so does
plugax, with JAX's error wording.

The design is one forward pass over the body's jaxpr, after it is traced (JAX
carries the set on every aval instead; plugax's avals stay as they are, so the
check costs nothing outside shard_map and needs no change to other families):

* an argument varies over the axes its in_spec names; the body's constants and
  literals vary over nothing;
* the collectives have a rule each: psum/pmax/pmin remove their axes; all_gather,
  psum_scatter, all_to_all and ppermute add theirs (as JAX: their results differ
  per member); axis_index varies over its axis; pbroadcast keeps its operand's;
  pcast(to='varying') adds its axes (JAX's error if the value varies already);
  a pmax/pmin over axis_index_groups keeps its axes, and a psum over them is
  refused (JAX has no such psum with check_vma);
* control flow is followed into its bodies: cond's outputs also vary with its
  index; scan and while carries are iterated to a fixed point (a while whose
  predicate varies makes its carries vary with it); a call-like equation (pjit,
  remat, custom derivatives) with one body of matching arity is followed inside;
* every other equation: each output varies over the union of its inputs' axes;
  an unknown equation holding jaxprs that use collectives is assumed to vary over
  every mesh axis (an over-estimate: at worst a false alarm, never a wrong answer).

Unlike JAX, loops need no `pcast` when a carry starts unvarying and becomes
varying (the fixed point widens it), and a cond whose index varies makes its
outputs vary (JAX keeps only the branches' vma there).
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from plugax.extend import ClosedJaxpr, Jaxpr, Literal

from .sharding import Mesh, PartitionSpec

__all__ = ["infer_vma", "spec_vma", "check_out_specs"]

Vma = frozenset


def spec_vma(spec: PartitionSpec) -> frozenset:
    """The mesh axes a PartitionSpec splits over: what a value with it varies over."""
    return frozenset(a for i in range(len(spec)) for a in spec.axes(i))


def _run(jaxpr: Any, ins: Sequence[frozenset], mesh_axes: frozenset) -> list:
    """The outputs' vma of `jaxpr` (a Jaxpr or ClosedJaxpr) given its inputs' vma."""
    jx = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    env: dict = {}
    for v in getattr(jx, "constvars", ()):
        env[v] = Vma()
    for v, m in zip(jx.invars, ins):
        env[v] = m

    def read(v: Any) -> frozenset:
        return Vma() if isinstance(v, Literal) else env.get(v, Vma())
    for eqn in jx.eqns:
        in_vma = [read(v) for v in eqn.invars]
        rule = _RULES.get(eqn.primitive.name, _default)
        outs = rule(eqn, in_vma, mesh_axes)
        for v, m in zip(eqn.outvars, outs):
            env[v] = m & mesh_axes
    return [read(v) for v in jx.outvars]


def infer_vma(jaxpr: Any, in_vmas: Sequence[frozenset], mesh_axes: Any) -> list:
    """The mesh axes each output of a shard_map body may vary over."""
    return _run(jaxpr, list(in_vmas), frozenset(mesh_axes))


# --- the rules ---------------------------------------------------------------------------

def _union(ms: Sequence[frozenset]) -> frozenset:
    out = Vma()
    for m in ms:
        out |= m
    return out


def _names(eqn: Any) -> frozenset:
    p = eqn.params
    names = p["axes"] if "axes" in p else p.get("axis_name")
    return frozenset(names if isinstance(names, (tuple, list)) else (names,))


def _sub_jaxprs(params: dict) -> list:
    out = []
    for v in params.values():
        for j in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(j, (ClosedJaxpr, Jaxpr)):
                out.append(j)
    return out


def _uses_collectives(jaxpr: Any) -> bool:
    jx = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
    for eqn in jx.eqns:
        if eqn.primitive.name in _COLLECTIVES:
            return True
        if any(_uses_collectives(j) for j in _sub_jaxprs(eqn.params)):
            return True
    return False


def _default(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    """Elementwise and every other first-order op: the union of the inputs' axes. An
    equation holding jaxprs: followed inside when it is call-like (one body taking the
    equation's operands and giving its results), else over-estimated."""
    subs = _sub_jaxprs(eqn.params)
    every = _union(ins)
    if not subs:
        return [every] * len(eqn.outvars)
    if len(subs) == 1:
        jx = subs[0].jaxpr if isinstance(subs[0], ClosedJaxpr) else subs[0]
        if len(jx.invars) == len(eqn.invars) and len(jx.outvars) == len(eqn.outvars):
            return _run(subs[0], ins, mesh_axes)
    if any(_uses_collectives(j) for j in subs):
        every = every | mesh_axes
    return [every] * len(eqn.outvars)


def _reduce(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    """A reduction over whole axes makes its result the same along them. Over
    axis_index_groups it differs between groups, so the axes stay (JAX drops them
    for pmax/pmin, accepting a P() that keeps one group's answer); and JAX has
    no psum over groups with check_vma on at all."""
    if eqn.params.get("axis_index_groups") is None:
        return [m - _names(eqn) for m in ins]
    if eqn.primitive.name == "psum":
        raise NotImplementedError(
            "psum (and pmean) with axis_index_groups inside shard_map needs "
            "check_vma=False, as in JAX (whose psum raises NotImplementedError there)")
    return list(ins)


def _adds_axes(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    return [m | _names(eqn) for m in ins]


def _all_gather(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    if eqn.params.get("to", "varying") in ("invarying", "invariant"):
        return [m - _names(eqn) for m in ins]
    return _adds_axes(eqn, ins, mesh_axes)


def _axis_index(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    return [_names(eqn)]


def _pvary(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    """lax.pcast(to='varying'): adds its axes, which the value must not vary over yet
    (JAX's ValueErrors, raised here rather than where pcast was called)."""
    axes = tuple(eqn.params["axes"])
    (m,) = ins
    state = {"varying" if a in m else "invarying" for a in axes}
    if state == {"varying"}:
        raise ValueError("Unsupported pcast from=varying, to='varying'")
    if len(state) > 1:
        raise ValueError(
            f"jax.lax.pcast can only accept axis_name which corresponds to one of varying, "
            f"unreduced, reduced or invarying state of the input. Got input type: "
            f"{_jax_type(eqn.invars[0].aval, m)}, axes: {axes} "
            f"and input state: {{'invarying', 'varying'}}")
    return [m | frozenset(axes)]


def _jax_type(aval: Any, vma: frozenset) -> str:
    """How JAX prints a shard_map value's type: float32[2,4]{V:x}."""
    return (f"{aval.dtype.name}[{','.join(map(str, aval.shape))}]"
            f"{{V:{','.join(sorted(vma))}}}")


def _keep(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    return list(ins)


def _cond(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    index, ops = ins[0], ins[1:]
    outs = [index] * len(eqn.outvars)
    for branch in eqn.params["branches"]:
        outs = [a | b for a, b in zip(outs, _run(branch, ops, mesh_axes))]
    return outs


def _scan(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    nc, nk = eqn.params["num_consts"], eqn.params["num_carry"]
    consts, carry, xs = ins[:nc], list(ins[nc:nc + nk]), ins[nc + nk:]
    body = eqn.params["jaxpr"]
    while True:            # at most one round per mesh axis and carry: sets only grow
        outs = _run(body, consts + carry + xs, mesh_axes)
        wider = [a | b for a, b in zip(carry, outs[:nk])]
        if wider == carry:
            return carry + outs[nk:]
        carry = wider


def _while(eqn: Any, ins: list, mesh_axes: frozenset) -> list:
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cconsts, bconsts, carry = ins[:cn], ins[cn:cn + bn], list(ins[cn + bn:])
    while True:
        (pred,) = _run(p["cond_jaxpr"], cconsts + carry, mesh_axes)
        outs = _run(p["body_jaxpr"], bconsts + carry, mesh_axes)
        wider = [a | b | pred for a, b in zip(carry, outs)]
        if wider == carry:
            return carry
        carry = wider


_RULES: dict[str, Callable] = {
    "psum": _reduce, "pmax": _reduce, "pmin": _reduce,
    "all_gather": _all_gather, "reduce_scatter": _adds_axes, "all_to_all": _adds_axes,
    "ppermute": _adds_axes, "axis_index": _axis_index, "pbroadcast": _keep, "pvary": _pvary,
    "cond": _cond, "scan": _scan, "while": _while,
}
_COLLECTIVES = frozenset(["psum", "pmax", "pmin", "all_gather", "reduce_scatter",
                          "all_to_all", "ppermute", "axis_index", "pbroadcast", "pvary"])


# --- the check ---------------------------------------------------------------------------

def _spec_paths(specs: Any, tree: Any) -> list:
    """(key string, spec) per output leaf, the key being the path of the out_specs
    entry it comes from (as JAX's keystr: `[0]`, `['u']`)."""
    import plugax.tree_util as tu
    from .spmd import _is_spec_leaf

    def expand(prefix: Any, sub: Any, key: str) -> list:
        if _is_spec_leaf(prefix):
            return [(key, prefix)] * sub.num_leaves
        children = tu.treedef_children(sub)
        if isinstance(prefix, dict):
            keys = sorted(prefix)
            items = [(f"[{k!r}]", prefix[k]) for k in keys]
        else:
            items = [(f"[{i}]", p) for i, p in enumerate(prefix)]
        return [kv for (k, p), child in zip(items, children)
                for kv in expand(p, child, key + k)]
    return expand(specs, tree, "")


def _ordered(mesh: Mesh, axes: Any) -> str:
    return ",".join(str(a) for a in mesh.axis_names if a in axes)


def check_out_specs(f: Callable, mesh: Mesh, out_tree: Any, out_specs: Any,
                    flat_specs: Sequence[PartitionSpec], out_vmas: Sequence[frozenset]) -> None:
    """JAX's ValueError (same wording) when an output varies over a mesh axis its
    out_specs entry leaves out."""
    bad = [i for i, (s, m) in enumerate(zip(flat_specs, out_vmas)) if m - spec_vma(s)]
    if not bad:
        return
    paths = _spec_paths(out_specs, out_tree)
    msgs = []
    for i in bad:
        key, spec = paths[i]
        spec = flat_specs[i]
        unmentioned = [a for a in mesh.axis_names if a not in spec_vma(spec)]
        if len(unmentioned) > 1:
            diff = _ordered(mesh, [a for a in unmentioned if a in out_vmas[i]])
            msg = (f"* out_specs{key} is {spec!r} which implies that the corresponding "
                   f"output value is only varying across mesh axes "
                   f"{{{_ordered(mesh, spec_vma(spec))}}} and not {{{diff}}}, but it was "
                   f"inferred to be possibly varying over {{{_ordered(mesh, out_vmas[i])}}}")
        else:
            msg = (f"* out_specs{key} is {spec!r} which implies that the corresponding "
                   f"output value is replicated across mesh axis '{unmentioned[0]}', but "
                   f"could not infer replication over any axes")
        msgs.append(msg)
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    name = getattr(f, "__name__", str(f))
    raise ValueError(
        f"shard_map applied to the function '{name}' was given out_specs which require "
        f"replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.shape.values())} with corresponding axis "
        f"names {tuple(mesh.axis_names)}.\n\n" + "\n\n".join(msgs) + "\n\n"
        "Check if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`.")
