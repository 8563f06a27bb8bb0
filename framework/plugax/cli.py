"""The `plugax` command: inspect the loaded plugins, or run the demo.

    plugax plugins [--json]          which plugins loaded (or why not), and which rules each
                                     primitive has
    plugax new-plugin NAME [--dir D] a new plugin package (plugax-NAME) from the template
    plugax demo                      a short tour of the transformations

Everything printed here is read from the registry's records and the kernel's rule
tables, so the output is exactly what `bind` will find at run time.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

def _cell(origins: list[str]) -> str:
    """'own' beats 'from <plugin>' beats 'derived' beats '-' when a column merges several
    table entries (lowering has one per platform)."""
    for wanted in ("own", "from ", "derived"):
        hit = next((o for o in origins if o.startswith(wanted)), None)
        if hit is not None:
            return hit
    return "-"


def _origins(prim: Any, kind: str) -> list[str]:
    from .core import rules as R
    table = R.rule_kinds[kind].table
    if R.rule_kinds[kind].per_platform:
        return [R.rule_origin.get((prim, f"{kind}:{platform}"), "derived")
                for platform, rules in table.items() if prim in rules]
    return [R.rule_origin.get((prim, kind), "derived")] if prim in table else []


def columns() -> list[str]:
    """Every defined rule kind: the built-in ones, then third parties' (jet, ...)."""
    from .core import rules as R
    return list(R.rule_kinds)


def collect() -> dict[str, Any]:
    """The plugin records, transformations and rule-coverage matrix as JSON-ready data."""
    import plugax
    from .core import rules as R
    owner_of = {}
    plugins = []
    for rec in plugax.registry.records.values():
        plugins.append({"name": rec.name, "distribution": rec.distribution,
                        "version": rec.version, "status": rec.status, "reason": rec.reason,
                        "load_seconds": rec.load_seconds,
                        "requires": list(rec.info.requires) if rec.info else [],
                        "primitives": len(rec.primitives),
                        "transformations": list(rec.transformations)})
        owner_of.update({prim: rec.name for prim in rec.primitives})
    transformations = [{"name": t.name, "rule_kind": t.rule_kind, "plugin": rec.name,
                        "distribution": rec.distribution, "description": t.description}
                       for t, rec in plugax.registry.transformations.values()]
    prims = set(R.rule_owner)
    for kind in R.rule_kinds.values():
        for entry in (kind.table.values() if kind.per_platform else [kind.table]):
            prims.update(entry)
    cols = columns()
    coverage = [{"primitive": str(p), "plugin": owner_of.get(p, "?"),
                 **{col: _cell(_origins(p, col)) for col in cols}}
                for p in sorted(prims, key=str)]
    return {"plugax_version": plugax.__version__, "plugin_api_version": plugax.plugin_api_version,
            "plugins": plugins, "transformations": transformations,
            "rule_kinds": {name: {"signature": k.signature(), "defined_by": k.defined_by}
                           for name, k in R.rule_kinds.items()},
            "coverage": coverage}


def _table(headers: Sequence[str], rows: list[Sequence[Any]]) -> str:
    cells = [list(map(str, headers))] + [list(map(str, r)) for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _load_time(seconds: float | None) -> str:
    """Import time of a plugin's entry point; '-' for built-in or in-process plugins."""
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


def print_plugins(data: dict[str, Any]) -> None:
    rows = [(p["name"], p["distribution"], p["version"], _load_time(p.get("load_seconds")),
             p["status"] + (f": {p['reason']}" if p["reason"] else ""), p["primitives"])
            for p in data["plugins"]]
    print(f"plugax {data['plugax_version']} (plugin API version {data['plugin_api_version']})\n")
    print(_table(("plugin", "distribution", "version", "load", "status", "primitives"), rows)
          if rows else "no plugins found in entry-point group 'plugax'")
    if data["transformations"]:
        print("\ntransformations\n")
        print(_table(("transformation", "rule kind", "plugin", "distribution"),
                     [(t["name"], t["rule_kind"], t["plugin"], t["distribution"])
                      for t in data["transformations"]]))
    print("\nrule coverage (own = given by the defining plugin, from P = added by plugin P, "
          "derived = built from a decomposition, - = none)\n")
    if not data["coverage"]:
        print("no primitives registered")
        return
    cols = list(data["rule_kinds"])
    print(_table(["primitive", "plugin", *cols],
                 [[row["primitive"], row["plugin"]] + [row[c] for c in cols]
                  for row in data["coverage"]]))


def new_plugin(name: str, directory: str) -> int:
    """Render the template; a bad, taken or existing name is an error message, exit 1."""
    from .scaffold import render_plugin, template_vars
    try:
        target = render_plugin(name, directory)
    except (ValueError, FileExistsError) as err:   # NameTakenError is a ValueError
        print(f"plugax new-plugin: {err}", file=sys.stderr)
        return 1
    files = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    print(f"created {target}:\n  " + "\n  ".join(files))
    print(f"\nnext: pip install -e {target} && pytest {target / 'tests'}")
    print(f"  or: cd {target} && tox   (installs plugax from "
          f"{template_vars(name)['plugax_source']}; see its README)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="plugax", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    plugins = sub.add_parser("plugins", help="list plugins and the rules each primitive has")
    plugins.add_argument("--json", action="store_true", help="print the same data as JSON")
    sub.add_parser("demo", help="a short tour of the transformations")
    new = sub.add_parser("new-plugin", help="generate a plugin package from the template")
    new.add_argument("name", help="plugin name: entry point NAME, import package plugax_NAME")
    new.add_argument("--dir", default=".", help="where to create plugax-NAME/ (default: .)")
    args = parser.parse_args(argv)
    from ._shadow import shadowing_problem
    problem = shadowing_problem()
    if problem:   # every command below would fail on the impostor's missing names
        print(f"plugax: {problem}", file=sys.stderr)
        return 1
    if args.command == "demo":
        from .demo import main as demo_main
        return demo_main()
    if args.command == "new-plugin":
        return new_plugin(args.name, args.dir)
    data = collect()
    try:
        if args.json:
            json.dump(data, sys.stdout, indent=2)
            print()
        else:
            print_plugins(data)
    except BrokenPipeError:  # `plugax plugins | head`: the reader left, which is fine
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
