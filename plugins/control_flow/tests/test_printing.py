"""The control-flow examples of jaxpr-language.txt, printed by plugax.

func7, one_of_three and func10 print exactly as in the document; func11
differs only in a weak-type convert_element_type eqn (plugax makes the weak
carry ``0.`` strong before tracing the body, as the body returns a strong
value), so it is compared with those eqns removed and variables renamed.
"""
import re

import numpy as np

import plugax as px
import plugax.lax as lax
import plugax.numpy as pnp

ONE_OF_THREE = """\
{ lambda ; a:i32[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[] = clamp 0 c 2
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = add f 1.0 in (g,) }
        { lambda ; h:f32[]. let i:f32[] = sub h 2.0 in (i,) }
        { lambda ; j:f32[]. let k:f32[] = add j 3.0 in (k,) }
      )
    ] d b
  in (e,) }"""

FUNC7 = """\
{ lambda ; a:f32[]. let
    b:bool[] = ge a 0.0
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = sub e 3.0 in (f,) }
        { lambda ; g:f32[]. let h:f32[] = add g 3.0 in (h,) }
      )
    ] c a
  in (d,) }"""

FUNC10 = """\
{ lambda ; a:f32[16] b:i32[]. let
    c:f32[16] = broadcast_in_dim[broadcast_dimensions=() shape=(16,)] 1.0
    d:f32[16] = add a c
    _:i32[] _:i32[] e:f32[16] = while[
      body_jaxpr={ lambda ; f:f32[16] g:f32[16] h:i32[] i:i32[] j:f32[16]. let
          k:i32[] = add h 1
          l:f32[16] = mul f 3.0
          m:f32[16] = add j l
          n:f32[16] = add m g
        in (k, i, n) }
      body_nconsts=2
      cond_jaxpr={ lambda ; o:i32[] p:i32[] q:f32[16]. let
          r:bool[] = lt o p
        in (r,) }
      cond_nconsts=0
    ] c a 0 b d
  in (e,) }"""

FUNC11 = """\
{ lambda ; a:f32[16] b:f32[]. let
    c:f32[16] = broadcast_in_dim[broadcast_dimensions=() shape=(16,)] 1.0
    d:f32[] e:f32[16] = scan[
      _split_transpose=False
      jaxpr={ lambda ; f:f32[] g:f32[] h:f32[] i:f32[]. let
          j:f32[] = mul h i
          k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] g
          l:f32[] = add k j
          m:f32[] = convert_element_type[new_dtype=float32 weak_type=False] f
          n:f32[] = add l m
        in (n, g) }
      length=16
      linear=(False, False, False, False)
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] b 0.0 a c
  in (d, e) }"""


def one_of_three(index, arg):
    return lax.switch(index, [lambda x: x + 1., lambda x: x - 2., lambda x: x + 3.], arg)


def func7(arg):
    return lax.cond(arg >= 0., lambda xtrue: xtrue + 3., lambda xfalse: xfalse - 3., arg)


def func10(arg, n):
    ones = pnp.ones(arg.shape)
    return lax.fori_loop(0, n, lambda i, carry: carry + ones * 3. + arg, arg + ones)


def func11(arr, extra):
    ones = pnp.ones(arr.shape)

    def body(carry, aelems):
        ae1, ae2 = aelems
        return (carry + ae1 * ae2 + extra, carry)
    return lax.scan(body, 0., (arr, ones))


_CONVERT = re.compile(r"^\s*(\w+):\S+ = convert_element_type\[new_dtype=\w+ weak_type=False\] "
                      r"(\w+)$")


def without_weak_converts(text: str) -> str:
    """Drop `x = convert_element_type[... weak_type=False] y` eqns (uses of x become y),
    then rename variables in order of first appearance, so texts differing only in
    such eqns compare equal."""
    lines, alias = [], {}
    for line in text.splitlines():
        m = _CONVERT.match(line)
        if m:
            alias[m.group(1)] = m.group(2)
            continue
        lines.append(line)
    body = "\n".join(lines)
    body = re.sub(r"\b[a-z]+\b(?!:)", lambda m: alias.get(m.group(0), m.group(0)), body)
    names: dict = {}
    binders = re.findall(r"\b([a-z]+):", body)
    for b in binders:
        names.setdefault(b, f"v{len(names)}")
    return re.sub(r"\b[a-z]+\b", lambda m: names.get(m.group(0), m.group(0)), body)


def test_switch_prints_like_the_seed():
    assert str(px.make_jaxpr(one_of_three)(1, 5.)) == ONE_OF_THREE


def test_cond_prints_like_the_seed():
    assert str(px.make_jaxpr(func7)(5.)) == FUNC7


def test_dynamic_fori_loop_prints_like_the_seed():
    assert str(px.make_jaxpr(func10)(np.ones(16, np.float32), 5)) == FUNC10


def test_scan_prints_like_the_seed_up_to_weak_type_converts():
    got = str(px.make_jaxpr(func11)(np.ones(16, np.float32), 5.))
    assert without_weak_converts(got) == without_weak_converts(FUNC11)
    assert got != FUNC11  # the normalisation above is what makes them agree


def test_the_normalisation_still_tells_different_programs_apart():
    assert without_weak_converts(FUNC11) != without_weak_converts(FUNC11.replace("mul h i",
                                                                                 "add h i"))


def test_printed_examples_compute_what_they_say():
    assert [float(one_of_three(i, 5.)) for i in (-3, 0, 1, 2, 9)] == [6., 6., 3., 8., 8.]
    assert float(func7(5.)) == 8. and float(func7(-5.)) == -8.
    np.testing.assert_allclose(func10(np.ones(4, np.float32), 5), np.full(4, 22.))
    carry, ys = func11(np.arange(4, dtype=np.float32), 5.)
    assert float(carry) == 26.
    np.testing.assert_allclose(ys, [0., 5., 11., 18.])


def test_printed_jaxprs_typecheck(typecheck_deep):
    for jaxpr in (px.make_jaxpr(one_of_three)(1, 5.), px.make_jaxpr(func7)(5.),
                  px.make_jaxpr(func10)(np.ones(16, np.float32), 5),
                  px.make_jaxpr(func11)(np.ones(16, np.float32), 5.)):
        typecheck_deep(jaxpr)
