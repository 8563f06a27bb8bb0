"""Test cases a plugin declares (hook `plugax_test_cases`) and how the kit runs them.

Why declared cases: the author of a primitive knows its valid inputs (the
domain of `lgamma`, the params of `reduce_sum`), the kit knows what to check.
A plugin returns `Case`s from its `plugax_test_cases` hook; any test suite —
the plugin's own, plugax's, a downstream integrator's — turns them into tests
with one line::

    @pytest.mark.plugax_cases("special")           # plugins by entry-point name
    def test_declared(plugax_case):
        plugax_case.check()

or `pytest.mark.parametrize("case", plugin_cases("special"))`. The cases are
asked for only when tests are collected, never at import or registry build.
"""
from __future__ import annotations

from typing import Any, Iterable, Sequence

from .dtype_matrix import check_dtype_matrix
from .suite import DEFAULT_RULES, check_primitive

__all__ = ["Case", "check_case", "declared_cases", "plugin_cases"]


class Case:
    """One example of one primitive (or function) and the checks to run on it.

    `Case(prim, *args, id=..., rules=..., linear_argnums=..., second_order=...,
    dtypes=..., accepted_dtypes=..., options=..., **params)`:

    - `rules`: checks for `check_primitive` (default: its DEFAULT_RULES);
      `linear_argnums` adds the transpose check, `second_order=True` the
      second-derivative check (only for smooth primitives).
    - `dtypes` / `accepted_dtypes`: also run `check_dtype_matrix` over these
      dtype names and assert exactly `accepted_dtypes` type-check.
    - `options`: per-check keyword arguments, e.g. `{"jvp": {"rtol": 1e-3}}`.
    - `lowering`: also check jit against eager (True; None: when the primitive
      has a lowering rule). Off by default: each case then compiles a module.
    """

    def __init__(self, prim: Any, *args: Any, id: str | None = None,
                 rules: Sequence[str] | None = None,
                 linear_argnums: Sequence[int] | int | None = None,
                 second_order: bool = False, dtypes: Sequence[str] | None = None,
                 accepted_dtypes: Iterable[str] | None = None,
                 options: dict[str, dict] | None = None, lowering: bool | None = False,
                 **params: Any):
        self.prim, self.args, self.params = prim, args, params
        self.rules = tuple(DEFAULT_RULES if rules is None else rules)
        if linear_argnums is not None and "transpose" not in self.rules:
            self.rules += ("transpose",)
        if second_order and "second_order" not in self.rules:
            self.rules += ("second_order",)
        self.linear_argnums = linear_argnums
        self.dtypes = tuple(dtypes) if dtypes is not None else None
        self.accepted_dtypes = set(accepted_dtypes) if accepted_dtypes is not None else None
        self.options = dict(options or {})
        self.lowering = lowering
        self.id = id or self._default_id()
        self.plugin = ""   # filled in by declared_cases: which plugin declared it

    def _default_id(self) -> str:
        name = getattr(self.prim, "name", None) or getattr(self.prim, "__name__", "case")
        shapes = "-".join("x".join(map(str, getattr(a, "shape", ()))) or "scalar"
                          for a in self.args)
        return f"{name}[{shapes}]" if shapes else str(name)

    def check(self) -> list[str]:
        """Run every check of this case; return the names of those that ran."""
        return check_case(self)

    def __repr__(self) -> str:
        return f"Case({self.id!r}{', plugin ' + repr(self.plugin) if self.plugin else ''})"


def check_case(case: Case) -> list[str]:
    """Run `case`'s rule checks (and its dtype matrix, if it declares one)."""
    ran = check_primitive(case.prim, *case.args, rules=case.rules,
                          linear_argnums=case.linear_argnums, options=case.options,
                          lowering=case.lowering, **case.params)
    if case.dtypes is not None:
        check_dtype_matrix(case.prim, *case.args, dtypes=case.dtypes,
                           accepted=case.accepted_dtypes, **case.params)
        ran.append("dtypes")
    return ran


def declared_cases(*plugin_names: str) -> list[Case]:
    """The Cases the named loaded plugins declare (all loaded plugins if none named).

    Raises LookupError naming the loaded plugins when a named one is not loaded,
    and TypeError when a plugin's hook returns something other than Cases.
    """
    from ..loader.registry import registry
    records = registry.records
    names = list(plugin_names) or registry.loaded_names()
    missing = [n for n in names if n not in records or records[n].status != "loaded"]
    if missing:
        raise LookupError(f"plugin(s) {', '.join(missing)} not loaded, so their test cases "
                          f"are unavailable (loaded: {', '.join(registry.loaded_names())}; "
                          f"check PLUGAX_LOAD_PLUGINS and `plugax plugins`)")
    cases = []
    for name in names:
        for answer in registry._answers("plugax_test_cases", records[name]):
            for case in answer or ():
                if not isinstance(case, Case):
                    raise TypeError(f"{records[name].owner()}: plugax_test_cases must return "
                                    f"plugax.testing.Case objects, got {type(case).__name__}")
                case.plugin = name
                cases.append(case)
    return cases


def plugin_cases(*plugin_names: str) -> list:
    """`declared_cases` as pytest params with readable ids (`special:erf[2x3]`)."""
    import pytest
    return [pytest.param(case, id=f"{case.plugin}:{case.id}") for case in
            declared_cases(*plugin_names)]


