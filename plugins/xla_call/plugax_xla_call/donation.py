"""`donate_argnums` / `donate_argnames`: arguments whose device buffers a call consumes.

Why donate: a training step `params = step(params, batch)` otherwise holds two
copies of the parameters while it runs; a donated input's buffer may be reused
for an output. As in JAX, donation is part of the compiled program (the module's
`main` marks the argument `jax.buffer_donor`), PJRT consumes the buffer when the
program runs, and the donated Array is deleted: using it afterwards raises
jaxlib's "Array has been deleted" error, on the Python and the C++ dispatch path
alike. Under a transformation (grad, vmap, an outer jit) nothing is donated, as
in JAX, since the call is staged rather than run.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import plugax.tree_util as tu
from plugax.extend import Array

__all__ = ["resolve_donation", "donated_leaves", "run_donating", "mark_donated"]


def resolve_donation(fun: Callable, nums: tuple, names: tuple) -> tuple[tuple, tuple]:
    """Both spellings of the donated parameters: each name given its position and
    each position its name, from the signature (as JAX does), so a donated argument
    is donated whether it is passed by position or by keyword."""
    if not nums and not names:
        return (), ()
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    positional = [p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY,
                                                       inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    keyword = {p.name for p in params if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                                   inspect.Parameter.KEYWORD_ONLY)}
    unknown = [n for n in names if n not in keyword]
    if unknown and not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        name = getattr(fun, "__name__", type(fun).__name__)
        raise ValueError(f"jitted function {name!r} has invalid argnames {unknown} in "
                         f"donate_argnames: it has no parameter of that name (its parameters: "
                         f"{', '.join(p.name for p in params) or 'none'})")
    out_nums = set(nums) | {positional.index(n) for n in names if n in positional}
    out_names = set(names) | {positional[i] for i in nums
                              if 0 <= i < len(positional) and positional[i] in keyword}
    return tuple(sorted(out_nums)), tuple(sorted(out_names))


def donated_leaves(jf: Any, args: tuple, kwargs: dict, n_leaves: int) -> tuple[int, ...]:
    """Indices, among the flattened dynamic arguments, of the donated leaves."""
    statics = jf._static_positions(len(args))
    n = len(args)
    nums = {i % n for i in jf.donate_argnums if -n <= i < n} if n else set()
    flags: list[bool] = []
    for i, a in enumerate(args):
        if i not in statics:
            flags += [i in nums] * len(tu.tree_leaves(a))
    for k in sorted(kwargs):
        if k not in jf.static_argnames:
            flags += [k in jf.donate_argnames] * len(tu.tree_leaves(kwargs[k]))
    if len(flags) != n_leaves:   # a structure read differently: donate nothing
        return ()
    return tuple(i for i, f in enumerate(flags) if f)


def run_donating(entry: Any, leaves: list) -> Any:
    """Run a cached entry; donated Arrays then keep no host copy, so their deleted
    buffer is what every later use meets (an Array made from NumPy keeps its value
    otherwise, and would stay usable, unlike JAX's)."""
    out = entry.call(leaves)
    for i in entry.donated:
        x = leaves[i]
        if isinstance(x, Array) and x._buf is not None:
            if not x._buf.is_deleted():
                x._buf.delete()
            try:
                del x._value
            except AttributeError:
                pass
    return out


def mark_donated(text: str, donated: tuple) -> str:
    """The module text with `main`'s donated arguments marked `jax.buffer_donor`."""
    from jaxlib.mlir import ir
    from jaxlib.mlir._mlir_libs import _chlo, _jax_mlir_ext, _stablehlo
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    with ir.Context() as ctx:
        ctx.append_dialect_registry(registry)
        ctx.dialects["func"]
        _stablehlo.register_dialect(ctx)
        _chlo.register_dialect(ctx)
        module = ir.Module.parse(text)
        for op in module.body.operations:
            if ir.StringAttr(op.attributes["sym_name"]).value != "main":
                continue
            n = len(op.regions[0].blocks[0].arguments)
            old = list(op.attributes["arg_attrs"]) if "arg_attrs" in op.attributes else []
            old += [ir.DictAttr.get({})] * (n - len(old))
            new = []
            for i, attrs in enumerate(old):
                d = {na.name: na.attr for na in ir.DictAttr(attrs)}
                if i in donated:
                    d["jax.buffer_donor"] = ir.BoolAttr.get(True)
                new.append(ir.DictAttr.get(d))
            op.attributes["arg_attrs"] = ir.ArrayAttr.get(new)
        return module.operation.get_asm(enable_debug_info=False)
