"""`plugax plugins` reports what the registry and the rule tables hold."""
from __future__ import annotations

import json

from plugax.cli import main


def test_plugins_table_lists_the_toy_plugin_and_its_rules(toy, capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "toy-dist" in out and "1.2.3" in out
    # the real elementwise family may also define `sin`: pick the toy plugin's row
    row = next(line.split() for line in out.splitlines() if line.split()[:2] == ["sin", "toy"])
    # primitive, plugin, impl, abstract_eval, jvp, vmap, transpose, vjp, lowering,
    # partial_eval (vjp: the optional top-level reverse-mode rule, which toy does not give)
    assert row == ["sin", "toy", "own", "own", "own", "own", "-", "-", "-", "-"]


def test_plugins_json_has_records_and_coverage(toy, capsys):
    assert main(["plugins", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    toy_record = next(p for p in data["plugins"] if p["name"] == "toy")
    assert toy_record["status"] == "loaded" and toy_record["primitives"] == 6
    coverage = {row["primitive"]: row for row in data["coverage"] if row["plugin"] == "toy"}
    assert coverage["mul"]["jvp"] == "own" and coverage["mul"]["transpose"] == "-"
