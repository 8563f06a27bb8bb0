"""A broken plugin is reported at the first use of plugax, no longer at `import plugax`.

`import plugax` only discovers the plugins (docs/architecture.md, "Import time"), so
what it used to report is reported by whatever uses plugax first, with the same
messages: a PluginWarning (lenient) or a PluginError (PLUGAX_STRICT_PLUGINS=1), and
a strict failure leaves the plugins unloaded, so the next use reports it again.
PLUGAX_LOAD_PLUGINS and PLUGAX_DISABLE_PLUGINS are read at import, as before.

Each case installs fake distributions (tests/conftest.py's `dists`) and runs a fresh
interpreter with them on its path: only a fresh one has not loaded its plugins yet.
Only fake plugins are enabled, so these are kernel tests (no family needed).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

# The child imports plugax (nothing may be reported yet), then makes FIRST_USE twice,
# reporting what each attempt raised or warned, and the fake plugins' statuses.
CHILD = """
import json, sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as at_import:
    import plugax, plugax.numpy
    assert not [m for m in sys.modules if m.startswith({tag!r})], "a plugin was imported"
attempts = []
for _ in range(2):
    with warnings.catch_warnings(record=True) as caught:
        try:
            {first_use}
            error = None
        except Exception as err:
            error = [type(err).__name__, str(err)]
    attempts.append({{"error": error, "warnings": [str(w.message) for w in caught]}})
statuses = {{n: [r.status, r.reason] for n, r in plugax.registry.records.items()
            if n.startswith({tag!r})}} if attempts[-1]["error"] is None else {{}}
print(json.dumps({{"import": [str(w.message) for w in at_import], "attempts": attempts,
                  "statuses": statuses}}))
"""
FIRST_USES = ("plugax.numpy.sin", "plugax.registry.loaded_names()",
              "plugax.grad(lambda x: x)(1.0)")


def run_child(dists, first_use: str = FIRST_USES[1]) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(dists.root), *filter(None, [os.environ.get("PYTHONPATH")])]))
    code = CHILD.format(tag=dists.tag, first_use=first_use)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, cwd=dists.root, timeout=180)
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.splitlines()[-1])


def _broken_import(dists) -> str:
    prims = dists.primitives("good_p")
    dists.good("good", "good_p", prims)
    bad = dists.module("bad", "raise ImportError('needs libfoo.so')")
    dists.dist("gooddist", "1.0", {"good": dists.name("good")})
    dists.dist("baddist", "0.9.1", {"zbad": bad})
    dists.allow("good", "zbad")
    return dists.name("baddist")


def test_strict_error_is_raised_at_first_use_and_again_at_the_next(dists):
    bad_dist = _broken_import(dists)
    dists.strict(True)
    for first_use in FIRST_USES:
        result = run_child(dists, first_use)
        assert result["import"] == []
        for attempt in result["attempts"]:
            name, message = attempt["error"]
            assert name == "PluginError", (first_use, attempt)
            assert f"{bad_dist} 0.9.1" in message and "import failed" in message
            assert "ImportError: needs libfoo.so" in message


def test_lenient_warning_at_first_use_and_the_good_plugin_loads(dists):
    bad_dist = _broken_import(dists)
    result = run_child(dists)
    assert result["import"] == []
    first, second = result["attempts"]
    assert first["error"] is None and second == {"error": None, "warnings": []}
    [warning] = [w for w in first["warnings"] if bad_dist in w]
    assert "0.9.1" in warning and "needs libfoo.so" in warning
    statuses = result["statuses"]
    assert statuses[dists.name("good")][0] == "loaded"
    assert statuses[dists.name("zbad")][0] == "failed"


def test_missing_requirement_is_reported_at_first_use(dists):
    prims = dists.primitives("needy_p")
    dists.good("needy", "needy_p", prims, requires=(dists.name("absent"),))
    dists.dist("needydist", "1.0", {"needy": dists.name("needy")})
    dists.allow("needy")
    result = run_child(dists)
    assert result["import"] == []
    message = " ".join(result["attempts"][0]["warnings"])
    assert f"requires plugin(s) {dists.name('absent')}" in message
    dists.strict(True)
    result = run_child(dists)
    name, message = result["attempts"][0]["error"]
    assert name == "PluginError" and f"requires plugin(s) {dists.name('absent')}" in message


def test_disable_list_is_read_at_import(dists, monkeypatch):
    prims = dists.primitives("p_p", "q_p")
    dists.good("kept", "p_p", prims)
    dists.good("off", "q_p", prims)
    dists.dist("keptdist", "1.0", {"kept": dists.name("kept"), "off": dists.name("off")})
    dists.allow("kept", "off")
    monkeypatch.setenv("PLUGAX_DISABLE_PLUGINS", dists.name("off"))
    result = run_child(dists)
    assert result["attempts"][0] == {"error": None, "warnings": []}
    assert result["statuses"] == {
        dists.name("kept"): ["loaded", ""],
        dists.name("off"): ["disabled", "listed in PLUGAX_DISABLE_PLUGINS"]}
