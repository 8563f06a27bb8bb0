"""Shared fixtures of the kernel tests.

The kernel tests must pass with no primitive family loaded
(``PLUGAX_LOAD_PLUGINS=""``), so they bring their own tiny primitives: the
`toy` fixture registers a plugin with sin, cos, neg, add, mul and gt for the
duration of one test, through the same registry path real plugins use.
"""
from __future__ import annotations

import importlib
import sys
import textwrap
import types
import uuid
import warnings

import numpy as np
import pytest

import plugax
from plugax.core.trace import current_trace, eval_trace
from plugax.loader.registry import PluginWarning, Registry
from plugax.extend import (Primitive, PluginInfo, Zero, hookimpl,
                           defbroadcasting, defjvp, deflinear, defvectorized)

sin_p = Primitive("sin")
cos_p = Primitive("cos")
neg_p = Primitive("neg")
add_p = Primitive("add")
mul_p = Primitive("mul")
gt_p = Primitive("gt")


def _gt_jvp(ctx, primals, tangents, **params):
    """A comparison is piecewise constant: its tangent is a symbolic zero."""
    out = gt_p.bind(*primals, **params)
    return out, Zero.from_value(out)


class ToyPlugin:
    """Enough of an elementwise family to differentiate, batch and trace small functions."""

    @hookimpl
    def plugax_plugin_info(self) -> PluginInfo:
        return PluginInfo(name="toy")

    @hookimpl
    def plugax_primitive_rules(self) -> list:
        return [
            defvectorized(sin_p, np.sin,
                          jvp=defjvp(sin_p, lambda g, ans, x: mul_p.bind(g, cos_p.bind(x)))),
            defvectorized(cos_p, np.cos,
                          jvp=defjvp(cos_p, lambda g, ans, x:
                                     neg_p.bind(mul_p.bind(g, sin_p.bind(x))))),
            defvectorized(neg_p, np.negative, jvp=deflinear(neg_p)),
            defbroadcasting(add_p, np.add, jvp=deflinear(add_p)),
            defbroadcasting(mul_p, np.multiply,
                            jvp=defjvp(mul_p, lambda g, ans, x, y: mul_p.bind(g, y),
                                       lambda g, ans, x, y: mul_p.bind(x, g))),
            defbroadcasting(gt_p, np.greater, dtype_rule=lambda *avals, **_: np.dtype(bool),
                            weak_type=lambda flags, **_: [False], jvp=_gt_jvp),
        ]

    @hookimpl
    def plugax_array_methods(self) -> dict:
        return {"__add__": lambda x, y: add_p.bind(x, y), "__radd__": lambda x, y: add_p.bind(y, x),
                "__mul__": lambda x, y: mul_p.bind(x, y), "__rmul__": lambda x, y: mul_p.bind(y, x),
                "__neg__": lambda x: neg_p.bind(x), "__gt__": lambda x, y: gt_p.bind(x, y)}


TOY_DISTRIBUTION, TOY_VERSION = "toy-dist", "1.2.3"


@pytest.fixture
def toy():
    """The toy plugin, registered for one test; yields its primitives by name."""
    with plugax.registry.scoped(ToyPlugin(), "toy", distribution=TOY_DISTRIBUTION,
                                version=TOY_VERSION):
        yield types.SimpleNamespace(sin_p=sin_p, cos_p=cos_p, neg_p=neg_p, add_p=add_p,
                                    mul_p=mul_p, gt_p=gt_p, sin=sin_p.bind, cos=cos_p.bind)


# --- fake installed distributions (test_plugin_loading.py, test_plugin_failures.py) -------
# Each test writes `*.dist-info` folders (METADATA + entry_points.txt declaring group
# ``[plugax]``) and the plugin modules they point at into a temporary sys.path entry, then
# runs a *fresh* `Registry().load_entry_points()`. The rule tables are process-global, so
# the `dists` fixture rebuilds them from the real registry afterwards.

GOOD_PLUGIN = """
import numpy as np
from plugax.extend import PluginInfo, RuleSet, ShapedArray, hookimpl
from {prim_module} import {prim}

@hookimpl
def plugax_plugin_info():
    return PluginInfo(name={name!r}, api_versions={api!r}, requires={requires!r})

@hookimpl
def plugax_primitive_rules():
    return [RuleSet({prim},
                    abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype),
                    impl=lambda ctx, x: np.asarray(x) + {offset},
                    overrides={overrides})]
"""


class FakeDists:
    """Writes fake distributions into one tmp sys.path entry; names are made unique per test."""

    def __init__(self, root, monkeypatch):
        self.root, self.mp = root, monkeypatch
        self.tag = "pxt" + uuid.uuid4().hex[:8]
        self.modules: list[str] = []

    def name(self, base: str) -> str:
        return f"{self.tag}_{base}"

    def module(self, base: str, source: str) -> str:
        name = self.name(base)
        (self.root / f"{name}.py").write_text(textwrap.dedent(source))
        self.modules.append(name)
        return name

    def primitives(self, *prims: str) -> str:
        """A module defining Primitive objects shared by several fake plugins."""
        body = "from plugax.extend import Primitive\n" + "".join(
            f"{p} = Primitive({p!r})\n" for p in prims)
        return self.module("prims", body)

    def dist(self, dist: str, version: str, entry_points: dict[str, str]) -> str:
        """A `<dist>-<version>.dist-info`; entry_points maps entry name -> module."""
        dist = self.name(dist)
        info = self.root / f"{dist}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
        (info / "entry_points.txt").write_text(
            "[plugax]\n" + "".join(f"{self.name(ep)} = {mod}\n"
                                   for ep, mod in entry_points.items()))
        importlib.invalidate_caches()
        return dist

    def good(self, base: str, prim: str, prim_module: str, *, offset: int = 0,
             overrides: bool = False, api=(2, 2), requires=()) -> str:
        return self.module(base, GOOD_PLUGIN.format(
            name=self.name(base), prim=prim, prim_module=prim_module, offset=offset,
            overrides=overrides, api=tuple(api), requires=tuple(requires)))

    def allow(self, *bases: str) -> None:
        """Only these (fake) entry points load; the installed families stay out."""
        self.mp.setenv("PLUGAX_LOAD_PLUGINS", ",".join(self.name(b) for b in bases))

    def strict(self, on: bool) -> None:
        if on:
            self.mp.setenv("PLUGAX_STRICT_PLUGINS", "1")
        else:
            self.mp.delenv("PLUGAX_STRICT_PLUGINS", raising=False)

    def load(self) -> Registry:
        importlib.invalidate_caches()
        reg = Registry()
        reg.load_entry_points()
        return reg

    def load_quietly(self) -> tuple[Registry, list[str]]:
        """Load, and return the PluginWarning messages instead of letting them through."""
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            reg = self.load()
        return reg, [str(w.message) for w in caught if issubclass(w.category, PluginWarning)]

    def record(self, reg: Registry, base: str):
        return reg.records[self.name(base)]


@pytest.fixture
def dists(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("PLUGAX_DISABLE_PLUGINS", raising=False)
    fake = FakeDists(tmp_path, monkeypatch)
    fake.strict(False)
    try:
        yield fake
    finally:
        monkeypatch.undo()
        for name in fake.modules:
            sys.modules.pop(name, None)
        importlib.invalidate_caches()
        plugax.registry.rebuild()  # the fresh registries overwrote the global tables
        assert current_trace() is eval_trace
