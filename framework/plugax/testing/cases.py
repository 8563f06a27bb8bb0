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

from typing import Any, Callable, Iterable, Sequence

from ..core.trace import Primitive
from .checks import DEFAULT_RULES, REGISTRY, CheckResult
from .dtype_matrix import check_dtype_matrix
from .suite import declared_linear, run_rule_checks, wants_lowering
from .traced import TRACED_RULES
from .transformations import run_transformation_checks, transformation_checks

__all__ = ["Case", "check_case", "check_primitive", "declared_cases", "plugin_cases"]


def check_primitive(prim: Primitive | Callable, *args: Any,
                    rules: Sequence[str] | None = None,
                    linear_argnums: Sequence[int] | int | None = None,
                    jvp_options: dict | None = None, vmap_options: dict | None = None,
                    options: dict[str, dict] | None = None, lowering: bool | None = False,
                    transformations: bool | None = None, case: "Case | None" = None,
                    **params: Any) -> CheckResult:
    """Run the checks in `rules` that apply to `prim` on `args`; return the ones run.

    `rules` defaults to DEFAULT_RULES: abstract_eval, jvp and vmap (each rule
    against an independent reference), then the checks of traced use (grad,
    vmap_jvp, vmap_grad, jit, jit_grad, jit_second_order: see traced.py).
    "second_order" (against finite differences) runs when named. The
    transpose check runs when the primitive is declared linear
    (`linear_argnums`, or a `deflinear` jvp rule); a missing transpose rule is
    then a failure. `options` maps a check name to extra keyword arguments
    for it (tolerances, say `{"jvp": {"rtol": 1e-3}}`; the jvp's `argnums`
    carries over to the other differentiating checks); `jvp_options` /
    `vmap_options` are shorthands for two of its entries. `lowering=True` adds
    "lowering" (the lowering rules compiled against the impl; None: when the
    primitive has a lowering rule).

    The checks of third-party transformations (`Transformation.check`) run
    on `case` (built from these arguments when not given) for every loaded
    transformation with a rule for `prim`, when `rules` is the default (or
    `transformations=True`), or those whose names `rules` lists.

    Returns a `CheckResult`: the names of the checks run, in order, and in
    `.skipped` those that cannot run here (jit needs the xla_call plugin), with why.
    """
    default = rules is None
    rules = tuple(DEFAULT_RULES if rules is None else rules)
    if wants_lowering(lowering, prim, rules):
        rules += ("lowering",)
    if linear_argnums is None and (default or {"jvp", "grad", "transpose"} & set(rules)):
        linear_argnums = declared_linear(prim, args)
    if linear_argnums is not None:
        rules = _with_transpose(rules)
    third_party = {name for name, _, _ in transformation_checks(prim)}
    named = [r for r in rules if r in third_party and r not in REGISTRY]
    options = {"jvp": dict(jvp_options or {}), "vmap": dict(vmap_options or {}),
               **{k: dict(v) for k, v in (options or {}).items()}}
    result = run_rule_checks(prim, *args,
                             rules=[r for r in rules if r not in named],
                             linear_argnums=linear_argnums, options=options, **params)
    every = default if transformations is None else transformations
    if third_party and (every or named):
        if case is None:
            case = Case(prim, *args, linear_argnums=linear_argnums, options=options,
                        lowering=lowering, **params)
        run_transformation_checks(case, result, every=every, named=named)
    return result


class Case:
    """One example of one primitive (or function) and the checks to run on it.

    `Case(prim, *args, id=..., rules=..., linear_argnums=..., second_order=...,
    dtypes=..., accepted_dtypes=..., options=..., **params)`:

    - `rules`: checks for `check_primitive` (default: DEFAULT_RULES, which
      include the checks of traced use, plus the checks of third-party
      transformations); `linear_argnums` adds the transpose check (a missing
      transpose rule then fails), `second_order=True` the second-derivative
      check against finite differences (only for smooth primitives).
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
        self.default_rules = rules is None   # then third-party checks run too
        if linear_argnums is not None:
            self.rules = _with_transpose(self.rules)
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

    def check(self) -> "CheckResult":
        """Run every check of this case; return the names of those that ran (and,
        in `.skipped`, those that could not run here, with the reason)."""
        return check_case(self)

    def __repr__(self) -> str:
        return f"Case({self.id!r}{', plugin ' + repr(self.plugin) if self.plugin else ''})"


def _with_transpose(rules: tuple) -> tuple:
    """`rules` with "transpose" before the traced checks (so a missing transpose rule
    fails as itself, not as a grad that cannot run)."""
    if "transpose" in rules:
        return rules
    at = min((rules.index(r) for r in TRACED_RULES if r in rules), default=len(rules))
    return rules[:at] + ("transpose",) + rules[at:]


class HookFailure:
    """Stands in for the cases of a plugin whose plugax_test_cases hook raised, so that
    one plugin's broken hook fails one test, named after it, instead of stopping the
    collection of every plugin's cases."""

    def __init__(self, plugin: str, message: str) -> None:
        self.plugin, self.id, self.message = plugin, "plugax_test_cases", message


def check_case(case: Case) -> CheckResult:
    """Run `case`'s checks (and its dtype matrix, if it declares one); return those run.

    Third-party transformations' checks run too unless the case names its
    `rules` explicitly (then only those it names)."""
    if isinstance(case, HookFailure):
        from ..errors import PluginError
        raise PluginError(case.message)
    ran = check_primitive(case.prim, *case.args, rules=case.rules,
                          linear_argnums=case.linear_argnums, options=case.options,
                          lowering=case.lowering, case=case,
                          transformations=case.default_rules, **case.params)
    if case.dtypes is not None:
        check_dtype_matrix(case.prim, *case.args, dtypes=case.dtypes,
                           accepted=case.accepted_dtypes, **case.params)
        ran.append("dtypes")
    return ran


def declared_cases(*plugin_names: str, keep_going: bool = False) -> list:
    """The Cases the named loaded plugins declare (all loaded plugins if none named).

    Raises LookupError naming the loaded plugins when a named one is not loaded,
    and TypeError when a plugin's hook returns something other than Cases. A hook
    that raises is a PluginError naming the plugin, or with `keep_going` a
    `HookFailure` in the list (check_case raises that PluginError when run).
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
        try:
            answers = registry._answers("plugax_test_cases", records[name])
        except Exception as err:   # noqa: BLE001 - contained: named, not propagated raw
            message = (f"{records[name].owner()}: plugax_test_cases raised "
                       f"{type(err).__name__}: {err}")
            if not keep_going:
                from ..errors import PluginError
                raise PluginError(message) from err
            cases.append(HookFailure(name, message))
            continue
        for answer in answers:
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
            declared_cases(*plugin_names, keep_going=True)]


