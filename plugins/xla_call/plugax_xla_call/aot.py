"""Ahead-of-time stages: `jit(f).lower(...)` -> `Lowered` -> `.compile()` -> `Compiled`.

The stages make the steps of a jit call explicit: trace (already done when
`lower` returns), lower to StableHLO (`Lowered.as_text()`), compile
(`Compiled`, with the compiler's cost and memory analyses), execute. A
`Compiled` is specialised to one signature, so calling it with other types, or
passing it tracers of a transformation, is a `TypeError`.
"""
from __future__ import annotations

import struct
from typing import Any, Sequence

import plugax.tree_util as tu
from plugax.extend import Array, ShapedArray, Tracer, lower_jaxpr_to_module, runtime

__all__ = ["Lowered", "Compiled", "deserialize_compiled"]


class Lowered:
    """A traced and lowered function, not yet compiled."""

    def __init__(self, entry: Any, in_avals: Sequence[ShapedArray], jitted: Any,
                 lowering_platforms: Sequence[str] | None = None):
        self._entry = entry
        self.in_avals = list(in_avals)
        self.out_avals = list(entry.closed.out_avals)
        self._jitted = jitted
        self.platform = _target_platform(lowering_platforms)
        self._module = lower_jaxpr_to_module(entry.closed, entry.name, self.platform)

    def as_text(self) -> str:
        """The StableHLO module, as text."""
        return self._module.text

    def compile(self) -> "Compiled":
        here = runtime().backend().platform
        if _canonical(here) != _canonical(self.platform):
            raise ValueError(f"this module was lowered for {self.platform!r} "
                             f"(lowering_platforms=); this process compiles for {here!r}: "
                             f"compile it where that platform's device is")
        exe = runtime().compile_module(self._module.text, self._module.in_avals,
                                       self._module.out_avals, self._module.host_callbacks)
        return Compiled(exe, self._entry.out_tree, self._jitted.static_argnums)

    def jaxpr(self) -> Any:
        return self._entry.closed

    def __repr__(self) -> str:
        return f"Lowered({self._entry.name})"


def _canonical(platform: str) -> str:
    """plugax's GPU client reports "gpu" (jaxlib's name for a CUDA client) where JAX's
    lowering names the platform "cuda"; both are one platform here."""
    return "cuda" if platform == "gpu" else platform


def _target_platform(lowering_platforms: Sequence[str] | None) -> str:
    """The platform to lower for: this process's, or the one `lowering_platforms` names
    (rules are looked up under that name; no device of it is needed). JAX lowers for
    several at once, with a platform-index argument; plugax lowers for one."""
    if lowering_platforms is None:
        return runtime().backend().platform
    if isinstance(lowering_platforms, str):
        lowering_platforms = (lowering_platforms,)
    platforms = tuple(lowering_platforms)
    if len(platforms) != 1 or not isinstance(platforms[0], str):
        raise NotImplementedError(f"lowering_platforms={lowering_platforms!r}: plugax lowers "
                                  f"for one platform at a time, e.g. ('cuda',)")
    return _canonical(platforms[0].lower())


class Compiled:
    """An executable for exactly one signature."""

    def __init__(self, exe: Any, out_tree: Any, static_argnums: Sequence[int] = ()):
        self._exe = exe
        self._out_tree = out_tree
        self._static_argnums = tuple(static_argnums)
        self.in_avals = exe.in_avals
        self.out_avals = exe.out_avals

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        leaves = tu.tree_leaves((args, kwargs))
        tracer = next((x for x in leaves if isinstance(x, Tracer)), None)
        if tracer is not None:
            raise TypeError(
                f"Cannot apply plugax transformations to a function lowered and compiled for "
                f"a particular signature. Detected argument of Tracer type {type(tracer)}.")
        arrays = [_as_array(x) for x in leaves]
        self._check_types(arrays)
        outs = self._exe(arrays)
        return tu.tree_unflatten(self._out_tree, outs)

    def _check_types(self, arrays: list) -> None:
        called = [a.aval for a in arrays]
        if len(called) != len(self.in_avals) or any(
                (c.shape, c.dtype) != (e.shape, e.dtype) for c, e in zip(called, self.in_avals)):
            raise TypeError("Computation compiled for input types:\n  "
                            + ", ".join(map(_show, self.in_avals))
                            + "\ncalled with:\n  " + ", ".join(map(_show, called)))

    def as_text(self) -> str:
        """The optimised HLO XLA compiled."""
        return self._exe.hlo_text()

    def cost_analysis(self) -> dict | None:
        """The compiler's estimates (`flops`, `bytes accessed`, ...); None if unavailable."""
        try:
            return self._exe.cost_analysis()
        except Exception:  # the backend has none
            return None

    def memory_analysis(self) -> Any:
        try:
            return self._exe.memory_analysis()
        except Exception:
            return None

    def serialize(self) -> bytes:
        """Bytes that `deserialize_compiled` turns back into a Compiled (same jaxlib)."""
        meta = {"format": _FORMAT, "in_avals": [_aval_json(a) for a in self.in_avals],
                "out_avals": [_aval_json(a) for a in self.out_avals],
                "out_tree": _tree_json(self._out_tree),
                "static_argnums": list(self._static_argnums)}
        exe = self._exe.serialize()
        import hashlib, json   # noqa: E401 - only serialization needs them (~4 ms to import)
        meta["sha256"] = hashlib.sha256(exe).hexdigest()
        raw = json.dumps(meta, sort_keys=True).encode()
        return _MAGIC + _LEN.pack(len(raw)) + raw + exe

    def __repr__(self) -> str:
        return f"Compiled({', '.join(map(_show, self.in_avals))})"


def deserialize_compiled(data: bytes) -> Compiled:
    """The Compiled that `Compiled.serialize` wrote.

    The metadata is JSON (no pickle: reading it runs no Python code), but the
    executable itself is machine code: only load bytes you trust."""
    start = len(_MAGIC) + _LEN.size
    if not bytes(data[:len(_MAGIC)]) == _MAGIC or len(data) < start:
        raise ValueError("not a plugax serialized executable (bad magic); only bytes from "
                         "Compiled.serialize() can be loaded")
    (n,) = _LEN.unpack_from(data, len(_MAGIC))
    import hashlib, json   # noqa: E401 - see serialize
    try:
        meta = json.loads(bytes(data[start:start + n]))
        exe_bytes = bytes(data[start + n:])
        if meta["format"] != _FORMAT:
            raise ValueError(f"format {meta['format']!r}, expected {_FORMAT}")
        if meta["sha256"] != hashlib.sha256(exe_bytes).hexdigest():
            raise ValueError("checksum mismatch")
        in_avals = [_aval_from(a) for a in meta["in_avals"]]
        out_avals = [_aval_from(a) for a in meta["out_avals"]]
        out_tree = _tree_from(meta["out_tree"])
        static_argnums = tuple(int(i) for i in meta["static_argnums"])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"corrupt or truncated serialized executable: {err}") from None
    exe = runtime().deserialize_executable(exe_bytes, in_avals, out_avals)
    return Compiled(exe, out_tree, static_argnums)


_MAGIC = b"PLUGAXAOT\x00"
_FORMAT = 1
_LEN = struct.Struct("<I")


def _aval_json(aval: ShapedArray) -> list:
    return [list(aval.shape), aval.dtype.name, bool(aval.weak_type)]


def _aval_from(obj: list) -> ShapedArray:
    import numpy as np
    from plugax.extend import float0
    shape, name, weak = obj
    dtype = float0 if name == np.dtype(float0).name else np.dtype(name)
    return ShapedArray(tuple(int(d) for d in shape), dtype, bool(weak))


_CONTAINERS = {"tuple": tuple, "list": list, "dict": dict}


def _tree_json(tree: Any) -> Any:
    """The output structure as JSON: leaves, None, tuples, lists and dicts with str/int keys.

    A custom pytree node cannot be rebuilt without naming Python code to run,
    which is what pickle did; such outputs are refused when serializing."""
    if tree.node is None:
        return "*"
    name = tree.node.name
    kids = [_tree_json(c) for c in tree.subtrees]
    if name == "None" and not kids:
        return None
    if name == "dict" and all(type(k) in (str, int) for k in tree.meta):
        return {"dict": [[type(k).__name__, k] for k in tree.meta], "children": kids}
    if name in ("tuple", "list"):
        return {name: len(kids), "children": kids}
    raise TypeError(f"Compiled.serialize supports outputs made of tuples, lists, dicts with "
                    f"str/int keys and None; this one contains a '{name}' node "
                    f"(return a builtin container from the jitted function to serialize it)")


def _tree_from(obj: Any) -> Any:
    return tu.tree_structure(_skeleton(obj))


def _skeleton(obj: Any) -> Any:
    if obj == "*":
        return 0
    if obj is None:
        return None
    kids = [_skeleton(c) for c in obj["children"]]
    if "dict" in obj:
        keys = [int(v) if t == "int" else str(v) for t, v in obj["dict"]]
        return dict(zip(keys, kids))
    for name in ("tuple", "list"):
        if name in obj:
            return _CONTAINERS[name](kids)
    raise ValueError(f"unknown tree node {obj!r}")


def _show(aval: ShapedArray) -> str:
    return f"ShapedArray({aval.dtype.name}[{','.join(map(str, aval.shape))}])"


def _as_array(x: Any) -> Array:
    from plugax.extend import get_aval
    if type(x) is Array:
        return x
    aval = get_aval(x)
    import numpy as np
    return Array(np.asarray(x, aval.dtype), aval.weak_type)
