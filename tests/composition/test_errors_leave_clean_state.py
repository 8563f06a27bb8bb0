"""An exception inside any transformation leaves the trace state clean.

For each of the ten transformations and each place a user's code can raise (the
function body, a cond branch, a scan body, a while body or predicate, a fori_loop
body, a custom_jvp function or rule, a custom_vjp fwd or bwd), the function raises
while being transformed. Then the current trace must be the eval trace again, and the
*same* transformed function, called again once the code no longer raises, must work
and agree with the harness's reference. Custom-rule sites are wrapped in an inner
`grad` so that every transformation reaches the rule; each site also runs under a
deeper composition (`jit.vmap.<T>` and `<T>.jit.vmap`): at every site under
PLUGAX_TEST_FULL=1 (`make test-full`), at half of them (alternating) in `make test`.
"""
from __future__ import annotations


import numpy as np
import pytest

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp
from plugax.core.trace import current_trace, eval_trace




import harness
import programs


class Boom(Exception):
    """The user's exception: it must come out of every transformation unchanged."""


class Switch:
    on = False


def boom():
    if Switch.on:
        raise Boom("raised inside the transformed function")


# --- the raise sites: each a function of x, a float vector of 3 -------------------------

def site_body(x):
    y = pnp.sin(x) * x
    boom()
    return y + 1.0


def site_cond_branch(x):
    def taken(v):
        boom()
        return pnp.sin(v)
    return lax.cond(pnp.sum(x) > -100.0, taken, lambda v: v * 2.0, x)


def site_scan_body(x):
    def step(c, xi):
        boom()
        return c * xi + 1.0, c
    return lax.scan(step, 0.5, x)


def site_while_body(x):
    # the loop's carry does not depend on x, so it needs no transpose under reverse mode
    def body(c):
        boom()
        return c + 1
    return x * lax.while_loop(lambda c: c < 3, body, 0)


def site_while_cond(x):
    def cond(c):
        boom()
        return c < 3
    return x * lax.while_loop(cond, lambda c: c + 1, 0)


def site_fori_body(x):
    def body(i, c):
        boom()
        return c * pnp.cos(x) + i
    return lax.fori_loop(0, 2, body, x)


@px.custom_jvp
def _cj_raising_fun(x):
    boom()
    return pnp.sin(x)


_cj_raising_fun.defjvp(lambda p, t: (pnp.sin(p[0]), t[0] * pnp.cos(p[0])))


@px.custom_jvp
def _cj_raising_rule(x):
    return pnp.sin(x)


def _raising_rule(p, t):
    boom()
    return pnp.sin(p[0]), t[0] * pnp.cos(p[0])


_cj_raising_rule.defjvp(_raising_rule)


@px.custom_vjp
def _cv_raising_fwd(x):
    return x * pnp.sin(x)


def _fwd_raising(x):
    boom()
    return x * pnp.sin(x), x


def _bwd(x, ct):
    return (ct * (pnp.sin(x) + x * pnp.cos(x)),)


_cv_raising_fwd.defvjp(_fwd_raising, _bwd)


@px.custom_vjp
def _cv_raising_bwd(x):
    return x * pnp.sin(x)


def _bwd_raising(x, ct):
    boom()
    return _bwd(x, ct)


_cv_raising_bwd.defvjp(lambda x: (x * pnp.sin(x), x), _bwd_raising)

# name -> (function, wrap in an inner grad?, is a custom_vjp program?)
SITES = {
    "body": (site_body, False, False),
    "cond_branch": (site_cond_branch, False, False),
    "scan_body": (site_scan_body, False, False),
    "while_body": (site_while_body, False, False),
    "while_cond": (site_while_cond, False, False),
    "fori_body": (site_fori_body, False, False),
    "custom_jvp_fun": (lambda x: _cj_raising_fun(x) * x, False, False),
    "custom_jvp_rule": (lambda x: _cj_raising_rule(x) * x, True, False),
    "custom_vjp_fwd": (lambda x: _cv_raising_fwd(x) + x, True, True),
    "custom_vjp_bwd": (lambda x: _cv_raising_bwd(x) + x, True, True),
}

PATHS = [(t,) for t in harness.TRANSFORMS] + \
        [("jit", "vmap", t) for t in harness.TRANSFORMS] + \
        [(t, "jit", "vmap") for t in harness.TRANSFORMS]


def _in_default_sample(site_index, path):
    """`make test` runs every transformation alone at every site, and each deeper
    composition (jit.vmap.T, T.jit.vmap) at every other site, alternating with T, so
    that each T meets each deep form at 5 of the 10 sites and each site meets about half
    of the transformations deep. PLUGAX_TEST_FULL=1 runs every case."""
    if harness.FULL or len(path) == 1:
        return True
    t = path[2] if path[:2] == ("jit", "vmap") else path[0]
    return (site_index + harness.TRANSFORMS.index(t)) % 2 == 0


def _cases():
    for site_index, (site, (fn, inner_grad, cvjp)) in enumerate(SITES.items()):
        prog = programs.Program(f"raise_in_{site}", fn, programs.args(programs.uniform((3,))),
                                "errors", forward="after_reverse" if cvjp else "any")
        for path in PATHS:
            if not _in_default_sample(site_index, path):
                continue
            full = path + (("grad",) if inner_grad else ())
            if harness.applicable(prog, full) is None:
                yield pytest.param(prog, full, id=harness.case_id(full, prog.name))


DIFFERENTIATING = set(harness.TRANSFORMS) - {"jit", "vmap", "make_jaxpr"}


def _fresh(program, path):
    """The composition built around a new function object: jit caches traces per function
    (as JAX does), and a cached trace would not run the Python code again."""
    fn = program.fn
    return harness.build(programs.Program(program.name, lambda x: fn(x), program.sample,
                                          program.group, program.forward), path)


@pytest.mark.parametrize("program,path", list(_cases()))
def test_exception_leaves_clean_trace(program, path):
    Switch.on = False
    args = _fresh(program, path)[1].sample(np.random.default_rng(0))
    inner, outer = _fresh(program, path)
    # under differentiation a custom_jvp function's body may be replaced by its rule
    # (it is in JAX), so only paths without derivatives must reach it
    must_raise = program.name != "raise_in_custom_jvp_fun" or not DIFFERENTIATING & set(path)
    try:
        Switch.on = True
        outer.f(*args)
        raised = False
    except Boom:
        raised = True
    finally:
        Switch.on = False
    assert raised or not must_raise, "the code that raises was not run"
    assert current_trace() is eval_trace
    # the same transformed function works once the code stops raising
    ref, tol = harness.REFERENCES[path[0]]
    harness.assert_trees_close(harness.to_numpy(outer.f(*args)), ref(inner, args), tol,
                               harness.case_id(path, program.name))
    assert current_trace() is eval_trace
    # and so does an unrelated composition of the same transformations
    harness.run_case(programs.PROGRAMS_BY_NAME["scan_rnn"], path[:1], 0)
