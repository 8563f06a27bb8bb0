"""How much of JAX's public API plugax has, namespace by namespace.

`data/jax_public_names.json` lists JAX 0.10.2's public names (recorded once with
JAX installed; this test does not need JAX). The test reports the coverage of
each namespace and fails if any namespace falls below its floor: the floors
only ever go up, as breadth lands (issue 16's goal is 90% in numpy, lax, nn,
random, scipy.special, scipy.stats, tree and tree_util).

Run `python tests/integration/test_jax_names.py [namespace]` for the table and
the missing names.
"""
from __future__ import annotations

import importlib
import json
import pathlib
import sys

import pytest

DATA = json.loads((pathlib.Path(__file__).parent / "data" / "jax_public_names.json").read_text())
NAMESPACES: dict[str, list[str]] = DATA["namespaces"]

# namespace -> the least coverage (fraction) allowed; raise a floor when names land
FLOORS = {
    "plugax.debug": 0.55, "plugax.flatten_util": 1.0,
    "plugax": 0.72, "plugax.lax": 0.985, "plugax.numpy": 1.0, "plugax.nn": 0.91,
    "plugax.tree": 1.0, "plugax.tree_util": 1.0, "plugax.numpy.linalg": 1.0,
    "plugax.scipy.linalg": 1.0, "plugax.nn.initializers": 1.0, "plugax.random": 1.0,
    "plugax.scipy.special": 1.0, "plugax.scipy.stats": 1.0, "plugax.numpy.fft": 1.0,
}


def present(namespace: str) -> tuple[list[str], list[str]]:
    """(names plugax has, names it lacks) of one namespace."""
    try:
        module = importlib.import_module(namespace)
    except ImportError:
        return [], list(NAMESPACES[namespace])
    have = [n for n in NAMESPACES[namespace] if hasattr(module, n)]
    return have, [n for n in NAMESPACES[namespace] if n not in have]


def coverage_table() -> list[tuple[str, int, int]]:
    return [(ns, len(present(ns)[0]), len(names)) for ns, names in sorted(NAMESPACES.items())]


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_coverage_of_jax_public_names_does_not_fall(namespace):
    have, missing = present(namespace)
    share = len(have) / len(NAMESPACES[namespace])
    assert share >= FLOORS[namespace], (
        f"{namespace}: {len(have)}/{len(NAMESPACES[namespace])} of JAX's names "
        f"({share:.0%}) is below the floor {FLOORS[namespace]:.0%}; missing: "
        f"{', '.join(missing[:40])}")


@pytest.mark.parametrize("namespace", sorted(NAMESPACES))
def test_every_missing_jax_name_says_why(namespace):
    """A JAX name plugax leaves out is left out on purpose, and the AttributeError says
    why (the kernel's _ABSENT tables, or a front end's "__absent__" entry)."""
    module = importlib.import_module(namespace)
    unexplained = []
    for name in present(namespace)[1]:
        with pytest.raises(AttributeError) as err:
            getattr(module, name)
        if "is not supported because" not in str(err.value):
            unexplained.append(name)
    assert not unexplained, f"{namespace}: missing without a reason: {unexplained}"


def test_every_namespace_has_a_floor():
    assert set(FLOORS) == set(NAMESPACES)


if __name__ == "__main__":
    import plugax  # noqa: F401  (loads the plugins that fill the namespaces)
    for ns, have, total in coverage_table():
        print(f"{ns:<24} {have:>4}/{total:<4} {have / total:6.1%}")
    for ns in sys.argv[1:]:
        print(f"\nmissing in {ns}:", " ".join(present(ns)[1]))
