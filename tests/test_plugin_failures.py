"""One broken plugin among good ones: reported precisely, isolated, fatal only when strict.

For each way a plugin can be broken, a fake distribution `bad` (version 0.9.1)
is installed next to a good one. Lenient: the registry warns with a message
naming the bad distribution and version and the reason, marks it failed, and
the good plugin and the kernel keep working. Strict (PLUGAX_STRICT_PLUGINS=1):
loading stops with that same message. `plugax plugins` lists failed and
disabled plugins with the reason.
"""
from __future__ import annotations

import json
import sys

import numpy as np
import pytest

import plugax
from plugax.cli import main

HEADER = """
from plugax.extend import PluginInfo, RuleSet, ShapedArray, hookimpl
from {prims} import bad_p

@hookimpl
def plugax_plugin_info():
    return PluginInfo(name="bad", api_versions={api})
"""
RULES = """
@hookimpl
def plugax_primitive_rules():
    return [{ruleset}]
"""
SAME = "abstract_eval=lambda ctx, x: ShapedArray(x.shape, x.dtype)"
IMPL = "impl=lambda ctx, x: x"

# kind -> (module source after HEADER, fragments the message must contain)
BROKEN = {
    "raises_on_import": ("raise ImportError('needs libfoo.so')",
                         ["import failed", "ImportError", "needs libfoo.so"]),
    "malformed_ruleset": (RULES.format(ruleset=f"RuleSet(bad_p, {SAME}, {IMPL}, batching='nope')"),
                          ["malformed RuleSet", "bad_p", "rule 'batching' must be callable"]),
    "lacks_impl": (RULES.format(ruleset=f"RuleSet(bad_p, {SAME})"),
                   ["malformed RuleSet", "bad_p", "an 'impl' rule is required"]),
    "lacks_abstract_eval": (RULES.format(ruleset=f"RuleSet(bad_p, {IMPL})"),
                            ["rules for primitive 'bad_p'", "no loaded plugin defines",
                             "when it has an abstract_eval rule"]),
    "incompatible_api": (RULES.format(ruleset=f"RuleSet(bad_p, {SAME}, {IMPL})"),
                         ["supports plugin API versions 3..4", "provides version 2"]),
    "hook_raises": ("@hookimpl\ndef plugax_primitive_rules():\n    raise ValueError('oops')",
                    ["plugax_primitive_rules raised ValueError", "oops"]),
    "duplicate_primitive": (RULES.format(ruleset=f"RuleSet(good_p, {SAME}, {IMPL})"),
                            ["primitive 'good_p' is already defined by", "gooddist",
                             "overrides=True"]),
}


def _install(dists, kind: str) -> tuple[str, str]:
    prims = dists.primitives("good_p", "bad_p")
    dists.good("good", "good_p", prims, offset=1)
    body, _ = BROKEN[kind]
    api = (3, 4) if kind == "incompatible_api" else (2, 2)
    header = HEADER.format(prims=prims, api=api)
    if kind == "duplicate_primitive":
        header = header.replace("import bad_p", "import bad_p, good_p")
    source = body if kind == "raises_on_import" else header + body
    bad = dists.module("bad", source)
    good_dist = dists.dist("gooddist", "1.0", {"good": dists.name("good")})
    bad_dist = dists.dist("baddist", "0.9.1", {"zbad": bad})  # loads after "good"
    dists.allow("good", "zbad")
    return good_dist, bad_dist


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_lenient_loading_reports_and_isolates(dists, kind):
    _, bad_dist = _install(dists, kind)
    reg, warned = dists.load_quietly()
    fragments = BROKEN[kind][1]
    [message] = [m for m in warned if bad_dist in m]
    assert f"{bad_dist} 0.9.1" in message
    for fragment in fragments:
        assert fragment in message
    if kind != "duplicate_primitive":          # a conflict is per primitive, not per plugin
        assert dists.record(reg, "zbad").status == "failed"
        assert fragments[-1] in dists.record(reg, "zbad").reason
    good_p = sys.modules[dists.name("prims")].good_p
    assert dists.record(reg, "good").status == "loaded"
    np.testing.assert_array_equal(np.asarray(good_p.bind(np.float32(2.0))), 3.0)
    # the kernel's own machinery still works on the good plugin's primitive
    jaxpr = plugax.make_jaxpr(good_p.bind)(np.float32(2.0))
    assert [str(e.primitive) for e in jaxpr.jaxpr.eqns] == ["good_p"]


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_strict_loading_stops_with_the_same_message(dists, kind):
    _, bad_dist = _install(dists, kind)
    dists.strict(True)
    expected = plugax.PluginConflictError if kind == "duplicate_primitive" else plugax.PluginError
    with pytest.raises(expected) as info:
        dists.load()
    message = str(info.value)
    assert f"{bad_dist} 0.9.1" in message
    for fragment in BROKEN[kind][1]:
        assert fragment in message


def test_plugins_command_lists_failed_and_disabled_plugins(dists, monkeypatch, capsys):
    _install(dists, "incompatible_api")
    prims = dists.name("prims")
    dists.good("off", "bad_p", prims)
    dists.dist("offdist", "2.0", {"off": dists.name("off")})
    dists.allow("good", "zbad", "off")
    monkeypatch.setenv("PLUGAX_DISABLE_PLUGINS", dists.name("off"))
    reg, _ = dists.load_quietly()
    monkeypatch.setattr(plugax, "registry", reg)
    assert main(["plugins"]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines() if line}
    assert "failed: it supports plugin API versions 3..4" in rows[dists.name("zbad")]
    assert "0.9.1" in rows[dists.name("zbad")]
    assert "disabled: listed in PLUGAX_DISABLE_PLUGINS" in rows[dists.name("off")]
    assert "loaded" in rows[dists.name("good")]
    assert main(["plugins", "--json"]) == 0
    records = {p["name"]: p for p in json.loads(capsys.readouterr().out)["plugins"]}
    bad = records[dists.name("zbad")]
    assert (bad["status"], bad["version"]) == ("failed", "0.9.1") and "3..4" in bad["reason"]
    assert records[dists.name("off")]["status"] == "disabled"
