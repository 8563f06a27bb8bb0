"""Hostile plugins are contained: whatever a plugin raises, plugax still loads.

Each test installs a fake distribution `hostile` (version 0.6.6) next to a good
one with the `dists` fixture. Lenient loading warns (PluginWarning) naming the
hook, the plugin and the distribution, marks the plugin failed, and the good
plugin keeps working; strict mode raises PluginError with the same message.
SystemExit is contained (a plugin calling sys.exit() is a plugin bug);
KeyboardInterrupt is not (it is the user asking to stop).
"""
from __future__ import annotations

import os

import sys

import numpy as np
import pytest

import plugax
from plugax.loader.registry import PluginWarning

HEADER = """
from plugax.extend import PluginInfo, hookimpl

@hookimpl
def plugax_plugin_info():
    return PluginInfo(name="hostile", api_versions=(2, 2))
"""


def _hook_raising(hook: str, exc: str = "RuntimeError('boom')") -> str:
    return HEADER + f"\n@hookimpl\ndef {hook}():\n    raise {exc}\n"


HOSTILE = {  # kind -> (module source, fragments the warning must contain)
    "import_error": ("raise ImportError('needs libfoo.so')",
                     ["import failed", "ImportError", "needs libfoo.so"]),
    "system_exit_at_import": ("import sys\nsys.exit(3)", ["import failed", "SystemExit", "3"]),
    "plugin_info_raises": (
        "from plugax.extend import hookimpl\n@hookimpl\ndef plugax_plugin_info():\n"
        "    raise RuntimeError('no info')",
        ["plugax_plugin_info raised RuntimeError", "no info"]),
    "frontend_raises": (_hook_raising("plugax_frontend"),
                        ["plugax_frontend raised RuntimeError", "boom"]),
    "array_methods_raises": (_hook_raising("plugax_array_methods", "SystemExit('bye')"),
                             ["plugax_array_methods raised SystemExit", "bye"]),
    "primitive_rules_raises": (_hook_raising("plugax_primitive_rules"),
                               ["plugax_primitive_rules raised RuntimeError", "boom"]),
    "transformations_raises": (_hook_raising("plugax_transformations"),
                               ["plugax_transformations raised RuntimeError", "boom"]),
}


def _install(dists, kind: str) -> str:
    prims = dists.primitives("good_p")
    dists.good("good", "good_p", prims, offset=1)
    bad = dists.module("hostile", HOSTILE[kind][0])
    dists.dist("gooddist", "1.0", {"good": dists.name("good")})
    bad_dist = dists.dist("hostiledist", "0.6.6", {"zhostile": bad})
    dists.allow("good", "zhostile")
    return bad_dist


def _good_works(dists, reg) -> None:
    assert dists.record(reg, "good").status == "loaded"
    good_p = sys.modules[dists.name("prims")].good_p
    np.testing.assert_array_equal(np.asarray(good_p.bind(np.float32(2.0))), 3.0)


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_hostile_plugin_is_contained_and_named(dists, kind):
    bad_dist = _install(dists, kind)
    reg, warned = dists.load_quietly()
    [message] = [m for m in warned if bad_dist in m]
    assert f"{bad_dist} 0.6.6" in message and dists.name("zhostile") in message
    for fragment in HOSTILE[kind][1]:
        assert fragment in message
    assert dists.record(reg, "zhostile").status == "failed"
    _good_works(dists, reg)
    assert plugax.registry is not reg and callable(plugax.grad)   # the kernel is intact


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_strict_mode_stops_with_the_same_message(dists, kind):
    bad_dist = _install(dists, kind)
    dists.strict(True)
    with pytest.raises(plugax.PluginError) as info:
        dists.load()
    assert f"{bad_dist} 0.6.6" in str(info.value)
    for fragment in HOSTILE[kind][1]:
        assert fragment in str(info.value)


def test_keyboard_interrupt_at_import_still_propagates(dists):
    prims = dists.primitives("good_p")
    dists.good("good", "good_p", prims)
    bad = dists.module("hostile", "raise KeyboardInterrupt")
    dists.dist("hostiledist", "0.6.6", {"zhostile": bad})
    dists.allow("zhostile")
    with pytest.raises(KeyboardInterrupt):
        dists.load()


class _ReExporter:
    """Re-exports the kernel's `vmap` (and its own `twice`) in the "plugax" namespace."""

    @plugax.extend.hookimpl
    def plugax_plugin_info(self):
        return plugax.extend.PluginInfo(name="reexporter", api_versions=(2, 2))

    @plugax.extend.hookimpl
    def plugax_frontend(self):
        return {"plugax": {"vmap": plugax.vmap, "hostile_twice": lambda x: 2 * x}}


def test_unregistering_a_reexporter_restores_the_kernel_names():
    vmap = plugax.vmap
    with plugax.registry.scoped(_ReExporter(), name="reexporter"):
        assert plugax.vmap is vmap and plugax.hostile_twice(3) == 6
    assert plugax.vmap is vmap                       # not removed on unregister
    assert not hasattr(plugax, "hostile_twice")      # the plugin's own name is gone
    assert np.asarray(plugax.vmap(lambda x: x)(np.ones(2, np.float32))).shape == (2,)


def _one_good(dists) -> None:
    prims = dists.primitives("good_p")
    dists.good("good", "good_p", prims, offset=1)
    dists.dist("gooddist", "1.0", {"good": dists.name("good")})


def test_slow_import_is_named_and_load_times_are_listed(dists, monkeypatch, capsys):
    from plugax.cli import main
    from plugax.loader import registry as registry_module
    _one_good(dists)
    monkeypatch.setattr(registry_module, "SLOW_IMPORT_SECONDS", 0.0)  # every import is "slow"
    dists.allow("good")
    reg, warned = dists.load_quietly()
    [message] = [m for m in warned if "to import" in m]
    assert dists.name("good") in message and dists.name("gooddist") in message
    assert "PLUGAX_DISABLE_PLUGINS" in message
    assert dists.record(reg, "good").load_seconds >= 0.0
    _good_works(dists, reg)
    monkeypatch.setattr(plugax, "registry", reg)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "load" in out.splitlines()[2]
    [row] = [line for line in out.splitlines() if line.startswith(dists.name("good"))]
    assert " ms " in row and "loaded" in row


@pytest.mark.parametrize("var", ["PLUGAX_DISABLE_PLUGINS", "PLUGAX_LOAD_PLUGINS"])
def test_a_listed_name_matching_no_plugin_warns(dists, monkeypatch, var):
    _one_good(dists)
    dists.allow("good")
    from plugax.loader.registry import PluginConfigWarning
    monkeypatch.setenv(var, f"{dists.name('good')},nosuchplugin")
    with pytest.warns(PluginConfigWarning) as caught:
        reg = dists.load()
    [message] = [str(w.message) for w in caught if "nosuchplugin" in str(w.message)]
    assert var in message and "matches no installed plugin" in message
    assert dists.name("good") in message          # the names that do exist are listed
    assert dists.record(reg, "good").status == (
        "disabled" if var == "PLUGAX_DISABLE_PLUGINS" else "loaded")


@pytest.mark.parametrize("var", ["PLUGAX_STRICT_PLUGINS", "PLUGAX_ENABLE_X64"])
def test_an_invalid_boolean_variable_names_itself_and_the_accepted_values(monkeypatch, var):
    from plugax.config import _env_flag
    monkeypatch.setenv(var, "ture")
    with pytest.raises(ValueError) as info:
        _env_flag(var)
    assert f"{var}='ture'" in str(info.value)
    assert "1, true, yes, on" in str(info.value) and "0, false, no, off" in str(info.value)
    for good, expected in (("YES", True), (" off ", False), ("", False)):
        monkeypatch.setenv(var, good)
        assert _env_flag(var) is expected


@pytest.mark.parametrize("raw", ["abc", "0", "-3", "1.5"])
def test_an_invalid_jit_cache_size_names_itself(monkeypatch, raw):
    """PLUGAX_JIT_CACHE_SIZE is read when plugax is imported: a fresh interpreter."""
    import subprocess
    import sys
    env = {**os.environ, "PLUGAX_JIT_CACHE_SIZE": raw, "PLUGAX_LOAD_PLUGINS": ""}
    proc = subprocess.run([sys.executable, "-c", "import plugax"], env=env,
                          capture_output=True, text=True)
    assert proc.returncode != 0
    assert f"PLUGAX_JIT_CACHE_SIZE={raw!r} is not valid" in proc.stderr
    assert "an integer >= 1" in proc.stderr


def test_config_update_checks_values():
    with pytest.raises(TypeError, match="'enable_x64' takes True or False, got 'yes'"):
        plugax.config.update("jax_enable_x64", "yes")
    with pytest.raises(ValueError, match="'jit_cache_size' takes an integer >= 1, got 0"):
        plugax.config.update("jit_cache_size", 0)
    before = plugax.config.jit_cache_size
    plugax.config.update("jit_cache_size", before)
    assert plugax.config.jit_cache_size == before


def _frontend_plugin(name: str, frontend=None, methods=None):
    class P:
        @plugax.extend.hookimpl
        def plugax_plugin_info(self):
            return plugax.extend.PluginInfo(name=name, api_versions=(2, 2))

        @plugax.extend.hookimpl
        def plugax_frontend(self):
            return frontend or {}

        @plugax.extend.hookimpl
        def plugax_array_methods(self):
            return methods or {}
    return P()


def _hijack(x, *a, **k):
    return "hijacked"


@pytest.mark.parametrize("target", ["grad", "vmap"])
def test_a_frontend_hijack_of_a_kernel_name_is_refused_and_named(monkeypatch, target):
    monkeypatch.delenv("PLUGAX_STRICT_PLUGINS", raising=False)
    original = getattr(plugax, target)
    with pytest.warns(PluginWarning) as caught:
        with plugax.registry.scoped(_frontend_plugin("hijacker", {"plugax": {target: _hijack}}),
                                    name="hijacker", distribution="evil-dist"):
            assert getattr(plugax, target) is original          # original intact
    [message] = [str(w.message) for w in caught if "may not replace" in str(w.message)]
    assert f"plugax.{target}" in message and "evil-dist" in message
    assert "the plugax kernel" in message and "overrides_name" in message
    assert getattr(plugax, target) is original


def test_strict_mode_refuses_a_hijack_with_an_error(monkeypatch):
    monkeypatch.setenv("PLUGAX_STRICT_PLUGINS", "1")
    with pytest.raises(plugax.PluginError, match="may not replace plugax.grad"):
        with plugax.registry.scoped(_frontend_plugin("hijacker", {"plugax": {"grad": _hijack}}),
                                    name="hijacker", distribution="evil-dist"):
            pass
    grad = plugax.grad
    plugax.registry.unregister("hijacker")
    assert plugax.grad is grad and plugax.grad is not _hijack


@pytest.mark.parametrize("override_first", [True, False])
def test_a_declared_override_wins_in_either_order_and_is_restored(monkeypatch, override_first):
    """Two plugins give `plugax.numpy.hostile_sum` and `Array.hostile_m`; the one that
    declares overrides_name wins whichever registers first; unregistering restores."""
    monkeypatch.delenv("PLUGAX_STRICT_PLUGINS", raising=False)
    plain = _frontend_plugin("plainplug", {"numpy": {"hostile_sum": lambda x: "plain"}},
                             {"hostile_m": lambda self: "plain"})
    wins = _frontend_plugin("overplug", {
        "numpy": {"hostile_sum": plugax.extend.overrides_name(lambda x: "override")},
        "plugax": {"grad": plugax.extend.overrides_name(_hijack)}},
        {"hostile_m": plugax.extend.overrides_name(lambda self: "override")})
    order = [(wins, "overplug"), (plain, "plainplug")]
    order = order if override_first else order[::-1]
    grad = plugax.grad
    with pytest.warns(PluginWarning) as caught:
        with plugax.registry.scoped(order[0][0], name=order[0][1], distribution="d0"), \
                plugax.registry.scoped(order[1][0], name=order[1][1], distribution="d1"):
            import plugax.numpy as pnp
            assert pnp.hostile_sum(1) == "override"
            assert plugax.extend.Array.hostile_m(None) == "override"
            assert plugax.grad is _hijack
    messages = [str(w.message) for w in caught]
    assert any("'overplug'" in m and "overrides plugax.grad" in m and "kernel" in m
               for m in messages)
    both = [m for m in messages if "hostile_sum" in m]
    assert both and all("'overplug'" in m and "'plainplug'" in m for m in both)
    assert plugax.grad is grad                                            # restored
    assert not hasattr(plugax.numpy, "hostile_sum")
    assert not hasattr(plugax.extend.Array, "hostile_m")
