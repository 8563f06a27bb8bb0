"""The printed jaxprs of jaxpr-language.txt, character for character."""
import numpy as np

import plugax as px
import plugax.numpy as pnp

FUNC1_JAXPR = """\
{ lambda ; a:f32[8] b:f32[8]. let
    c:f32[8] = sin b
    d:f32[8] = mul c 3.0
    e:f32[8] = add a d
    f:f32[] = reduce_sum[axes=(0,)] e
  in (f,) }"""

DOT_JAXPR = """\
{ lambda ; a:f32[2] b:f32[2]. let
    c:f32[2] = add a 1.0
    d:f32[2] = add b 1.0
    e:f32[] = dot_general[
      dimension_numbers=(([0], [0]), ([], []))
      preferred_element_type=float32
    ] c d
  in (e,) }"""


def func1(first, second):
    temp = first + pnp.sin(second) * 3.
    return pnp.sum(temp)


def inner(second):
    if second.shape[0] > 4:
        return pnp.sin(second)
    assert False


def func3(first, second):
    temp = first + inner(second) * 3.
    return pnp.sum(temp)


def func4(arg):
    temp = arg[0] + pnp.sin(arg[1]) * 3.
    return pnp.sum(temp)


def _strip(s):
    return "\n".join(line.rstrip() for line in s.splitlines())


def test_func1_prints_like_the_seed():
    jaxpr = px.make_jaxpr(func1)(pnp.zeros(8), pnp.ones(8))
    assert _strip(str(jaxpr)) == FUNC1_JAXPR
    px.typecheck_jaxpr(jaxpr)


def test_func3_inlines_python_calls_and_branches():
    assert _strip(str(px.make_jaxpr(func3)(pnp.zeros(8), pnp.ones(8)))) == FUNC1_JAXPR


def test_func4_flattens_a_tuple_argument():
    assert _strip(str(px.make_jaxpr(func4)((pnp.zeros(8), pnp.ones(8))))) == FUNC1_JAXPR


def test_dot_of_tracing_and_jit_prints_multiline_params():
    f = lambda x, y: pnp.dot(x + 1, y + 1)
    x = pnp.array([1.0, 2.0])
    assert _strip(str(px.make_jaxpr(f)(x, x))) == DOT_JAXPR
    assert float(f(x, x)) == 13.0


def test_jaxpr_values_match_eager():
    a, b = np.linspace(0, 1, 8).astype(np.float32), np.linspace(1, 2, 8).astype(np.float32)
    closed = px.make_jaxpr(func1)(a, b)
    out, = px.eval_jaxpr(closed.jaxpr, closed.consts, a, b)
    np.testing.assert_allclose(np.asarray(out), np.asarray(func1(a, b)), rtol=1e-6)
