"""Record what JAX returns for every case of the differential tables.

    /path/to/jax-venv/bin/python tests/differential/record_jax.py [--check]

JAX is the spec, but the test suite must not import it: this script, run by hand in
an environment with jax (0.10.2 recorded the checked-in file), writes
jax_expected.json: for every (namespace, name, case) the type of each output leaf
(dtype, weak type, shape), or the error JAX raised; JAX's gradient of
sum(f(x) * weights) for differentiable entries; and JAX's value wherever it differs
from the table's NumPy reference (printed, so each such place can be reviewed: either
the reference is wrong, or JAX and NumPy really disagree there). `--check` only prints.
"""
from __future__ import annotations

import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

from diff_cases import float_positions, is_traced, weights  # noqa: E402
from diff_table import NUMPY  # noqa: E402
from diff_table_lax import LAX  # noqa: E402

OUT = HERE / "jax_expected.json"


def leaves(out):
    if isinstance(out, (tuple, list)):
        return [leaf for o in out for leaf in leaves(o)]
    return [out]


def leaf_type(x):
    if isinstance(x, (bool, int, float)) and not hasattr(x, "dtype"):
        return [f"py_{type(x).__name__}", False, []]
    import jax
    aval = jax.typeof(x)
    return [str(aval.dtype), bool(aval.weak_type), list(aval.shape)]


def to_ref_arg(a):
    """Float inputs as float64 for the NumPy reference; everything else unchanged."""
    if is_traced(a) and np.asarray(a).dtype.kind in "fV":
        return np.asarray(a, np.float64)
    return a


def call(spec, fn, case, args=None):
    args = case.args if args is None else args
    return (spec.call or (lambda f, *a, **k: f(*a, **k)))(fn, *args, **case.kwargs)


def close(got, want, rtol, atol):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return False
    return bool(np.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True))


def tolerance(spec, dtype):
    name = str(dtype)
    if name in ("float16", "bfloat16"):
        return 1e-2, 1e-2
    return spec.rtol * 10, spec.atol * 10


def as_json(x):
    return np.asarray(x, np.float64).tolist()


def jax_function(namespace, name, spec):
    import jax
    import jax.numpy as jnp
    if spec.jax is not None:
        return spec.jax(jnp, jax.lax)
    return getattr(jnp if namespace == "numpy" else jax.lax, name)


def jax_grad(spec, fn, case):
    import jax
    import jax.numpy as jnp
    positions = float_positions(case)

    def loss(*floats):
        args = list(case.args)
        for p, v in zip(positions, floats):
            args[p] = v
        return sum(jnp.sum(leaf * weights(leaf.shape, leaf.dtype))
                   for leaf in leaves(call(spec, fn, case, args))
                   if jnp.issubdtype(leaf.dtype, jnp.floating))
    grads = jax.grad(loss, argnums=tuple(range(len(positions))))(
        *[case.args[p] for p in positions])
    return [as_json(g) for g in grads]


def record_case(namespace, name, spec, case, fn, report):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = call(spec, fn, case)
    except Exception as err:   # noqa: BLE001 -- any error JAX raises is the expectation
        return {"error": type(err).__name__}
    outs = leaves(out)
    record = {"out": [leaf_type(x) for x in outs]}
    if spec.ref is not None:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            try:
                want = leaves(call(spec, spec.ref, case, [to_ref_arg(a) for a in case.args]))
            except Exception as err:  # noqa: BLE001 -- JAX's value stands in for it
                want = None
                record["value"] = [as_json(o) for o in outs]
                report.append(f"{namespace}.{name}[{case.label}]: reference raised {err!r}; "
                              f"JAX {record['value']}")
        if want is not None and (len(want) != len(outs) or not all(
                close(o, w, *tolerance(spec, getattr(o, "dtype", "x")))
                for o, w in zip(outs, want))):
            record["value"] = [as_json(o) for o in outs]
            report.append(f"{namespace}.{name}[{case.label}]: JAX {record['value']} "
                          f"!= reference {[as_json(w) for w in want]}")
    if spec.grad and float_positions(case) and any(
            t[0].startswith("float") for t in record["out"]):
        try:
            record["grad"] = jax_grad(spec, fn, case)
        except Exception as err:  # noqa: BLE001
            record["grad_error"] = type(err).__name__
    return record


def record_all():
    results, report = {"numpy": {}, "lax": {}}, []
    for namespace, table in (("numpy", NUMPY), ("lax", LAX)):
        for name, spec in table.items():
            fn = jax_function(namespace, name, spec)
            results[namespace][name] = {c.label: record_case(namespace, name, spec, c, fn,
                                                             report)
                                        for c in spec.cases()}
    return results, report


def _finite_json(obj):
    """NaN and infinities as strings, so the file is plain JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return str(obj)
    if isinstance(obj, list):
        return [_finite_json(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _finite_json(v) for k, v in obj.items()}
    return obj


def main():
    import jax
    results, report = record_all()
    print("\n".join(report))
    print(f"{len(report)} cases where JAX's value differs from the NumPy reference")
    if "--check" not in sys.argv:
        results["jax_version"] = jax.__version__
        OUT.write_text(dumps(_finite_json(results)))
        print(f"wrote {OUT}")


def dumps(results):
    """One line per case, so that a re-recording shows up in diffs case by case."""
    lines = ["{", f'"jax_version": {json.dumps(results["jax_version"])},']
    namespaces = [ns for ns in sorted(results) if ns != "jax_version"]
    for i, ns in enumerate(namespaces):
        lines.append(f"{json.dumps(ns)}: {{")
        names = sorted(results[ns])
        for j, name in enumerate(names):
            lines.append(f" {json.dumps(name)}: {{")
            labels = list(results[ns][name])
            for k, label in enumerate(labels):
                comma = "," if k < len(labels) - 1 else ""
                record = json.dumps(results[ns][name][label], sort_keys=True)
                lines.append(f"  {json.dumps(label)}: {record}{comma}")
            lines.append(" }" + ("," if j < len(names) - 1 else ""))
        lines.append("}" + ("," if i < len(namespaces) - 1 else ""))
    return "\n".join(lines + ["}"]) + "\n"


if __name__ == "__main__":
    main()
