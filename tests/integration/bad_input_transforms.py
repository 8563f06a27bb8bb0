"""The bad-input catalogue's second half (issue 14, part 1): transformations (argnums,
in_axes/out_axes, tangent and cotangent types, static arguments), control flow (branch
and carry types), pytrees, static arguments of primitives, the second probe's finds,
and the results JAX defines instead of an error. Namespace-neutral like
`bad_input_cases.py`, whose `Case` it uses.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from bad_input_cases import ALL_MODES, Case, F32, I32, _x


def _custom_jvp(px: Any, rule: Any) -> Any:
    """`x * 2` with the custom jvp `rule(primals, tangents)`."""
    f = px.custom_jvp(lambda x: x * 2)
    f.defjvp(rule)
    return f


def transformation_cases(px: Any, pnp: Any, lax: Any) -> list[Case]:
    """Cases whose mistake is in how a transformation, control flow, a pytree function
    or a primitive's static argument is called."""
    cases: list[Case] = []
    add = cases.append
    eager_jit = ("eager", "jit")
    # --- transformations: argnums, axes, structures, static arguments ---------
    sq = lambda x: x * x
    ssq = lambda x: pnp.sum(x * x)
    two = lambda x, y: pnp.sum(x * y)
    transform_cases = [
        ("grad argnums=2 of a one-argument call", lambda a: px.grad(two, argnums=2)(a, a),
         (_x(),), TypeError, "argnums=2 requires at least 3 positional arguments"),
        ("grad argnums=-3", lambda a: px.grad(two, argnums=-3)(a, a), (_x(),), ValueError,
         "argnums=-3 is out of range"),
        ("grad of a vector output", lambda a: px.grad(sq)(a), (_x(),), TypeError,
         "Gradient only defined for scalar-output functions"),
        ("grad of a tuple output", lambda a: px.grad(lambda x: (ssq(x), ssq(x)))(a), (_x(),),
         TypeError, "Gradient only defined for scalar-output functions"),
        ("grad of an integer output", lambda a: px.grad(lambda x: pnp.sum(x).astype(I32))(a),
         (_x(),), TypeError, "grad requires real-valued outputs"),
        ("grad of a complex constant output",
         lambda a: px.grad(lambda x: pnp.asarray(np.complex64(1j)))(a[0]),
         (_x(),), TypeError, "grad requires real-valued outputs (output dtype that is a "
         "sub-dtype of np.floating), but got complex64"),
        ("grad of a complex identity", lambda a: px.grad(lambda z: z)(a[0]),
         (_x(dtype=np.complex64),), TypeError, "but got complex64"),
        ("grad of an integer input with allow_int and an integer output",
         lambda a: px.grad(lambda x: pnp.sum(x), allow_int=True)(a), (_x(dtype=I32),),
         TypeError, "grad requires real-valued outputs"),
        ("grad of an integer input", lambda a: px.grad(ssq)(a), (_x(dtype=I32),), TypeError,
         ("grad requires real- or complex-valued inputs", "got int32", "allow_int")),
        ("grad of a bool input", lambda a: px.grad(lambda x: 1.0 * pnp.sum(x))(a),
         (_x(dtype=bool),), TypeError, "but got bool"),
        ("jacrev of an integer input", lambda a: px.jacrev(sq)(a), (_x(dtype=I32),),
         TypeError, ("jacrev requires real- or complex-valued inputs", "got int32")),
        ("jacrev of a bool input", lambda a: px.jacrev(lambda x: 1.0 * x)(a),
         (_x(dtype=bool),), TypeError, "got bool"),
        ("jacfwd of an integer input", lambda a: px.jacfwd(sq)(a), (_x(dtype=I32),),
         TypeError, "jacfwd requires real- or complex-valued inputs"),
        ("hessian of an integer input", lambda a: px.hessian(ssq)(a), (_x(dtype=I32),),
         TypeError, "requires real- or complex-valued inputs"),
        ("value_and_grad of a vector output", lambda a: px.value_and_grad(sq)(a), (_x(),),
         TypeError, "scalar-output"),
        ("grad has_aux without a pair", lambda a: px.grad(ssq, has_aux=True)(a), (_x(),),
         TypeError, ("has_aux=True requires the function to return a pair",
                     "got one array, f32[]")),
        ("vjp has_aux with a triple",
         lambda a: px.vjp(lambda x: (x, x, x), a, has_aux=True), (_x(),), TypeError,
         "got a tuple of length 3"),
        ("vmap in_axes=1 of rank 1", lambda a: px.vmap(sq, in_axes=1)(a), (_x(),),
         ValueError, "in_axes=1 for an array of rank 1"),
        ("vmap in_axes=-2 of rank 1", lambda a: px.vmap(sq, in_axes=-2)(a), (_x(),),
         ValueError, "in_axes=-2 for an array of rank 1"),
        ("vmap over a scalar", lambda a: px.vmap(sq)(a[0]), (_x(),), ValueError,
         "rank"),
        ("vmap of inconsistent sizes", lambda a, b: px.vmap(lambda x, y: x + y)(a, b),
         (_x(), _x((4,))), ValueError, "inconsistent sizes"),
        ("vmap in_axes of another structure",
         lambda a: px.vmap(lambda x, y: x + y, in_axes=(0, 0, 0))(a, a), (_x(),),
         ValueError, "in_axes"),
        ("vmap in_axes a float", lambda a: px.vmap(sq, in_axes=0.5)(a), (_x(),), TypeError,
         "0.5"),
        ("vmap out_axes=2 of a rank-1 result", lambda a: px.vmap(sq, out_axes=2)(a),
         (_x((2, 3)),), ValueError, "axis 2 is out of bounds"),
        ("vmap out_axes=None of a mapped result", lambda a: px.vmap(sq, out_axes=None)(a),
         (_x(),), ValueError, "out_axes"),
        ("vmap with nothing mapped", lambda a: px.vmap(sq, in_axes=None)(a), (_x(),),
         ValueError, "axis_size"),
        ("jvp tangent of another dtype", lambda a: px.jvp(sq, (a,), (a.astype(I32),)),
         (_x(),), TypeError, "int32"),
        ("jvp tangent of another shape", lambda a: px.jvp(sq, (a,), (a[:2],)), (_x(),),
         ValueError, "shape"),
        ("jvp primals not a tuple", lambda a: px.jvp(sq, a, a), (_x(),), TypeError,
         "tuples or lists"),
        ("jvp tangents of another structure", lambda a: px.jvp(two, (a, a), (a,)), (_x(),),
         TypeError, "structure"),
        ("vjp cotangent of another structure",
         lambda a: px.vjp(sq, a)[1]((a, a)), (_x(),), TypeError, "structure"),
        ("vjp cotangent of another shape", lambda a: px.vjp(sq, a)[1](a[:2]), (_x(),),
         ValueError, "expected f32[3]"),
        ("linearize tangent of another shape", lambda a: px.linearize(sq, a)[1](a[:2]),
         (_x(),), ValueError, ("inconsistent with the original primal values",
                               "got tangent f32[2] for primal f32[3]")),
        ("linearize tangent of another dtype",
         lambda a: px.linearize(sq, a)[1](a.astype(I32)), (_x(),), ValueError,
         "got tangent i32[3] for primal f32[3]"),
        ("jit(static_argnums=3) of one parameter", lambda a: px.jit(sq, static_argnums=3)(a),
         (_x(),), ValueError, "static_argnums"),
        ("jit of an unhashable static argument",
         lambda a: px.jit(lambda x, n: x * 2, static_argnums=1)(a, np.ones(2)), (_x(),),
         ValueError, "hashable"),
        ("jit static_argnames of no parameter",
         lambda a: px.jit(sq, static_argnames="nope")(a), (_x(),), ValueError,
         ("invalid argnames", "nope")),
    ]
    # a transformation of a non-callable is refused when applied, naming the transformation
    for name in ["jit", "grad", "value_and_grad", "vmap", "jacfwd", "jacrev", "hessian",
                 "make_jaxpr"]:
        t = getattr(px, name)
        transform_cases.append((f"{name} of a non-callable", lambda a, t=t: t(3)(a), (_x(),),
                                TypeError, f"{name} expects a callable, got int"))
    transform_cases += [
        ("vjp of a non-callable", lambda a: px.vjp(3, a), (_x(),), TypeError,
         "vjp expects a callable, got int"),
        ("jvp of a non-callable", lambda a: px.jvp(3, (a,), (a,)), (_x(),), TypeError,
         "jvp expects a callable, got int"),
        ("linearize of a non-callable", lambda a: px.linearize(3, a), (_x(),), TypeError,
         "linearize expects a callable, got int"),
        ("make_jaxpr static_argnums beyond the arguments",
         lambda a: px.make_jaxpr(sq, static_argnums=3)(a), (_x(),), ValueError,
         "static_argnums=(3,), but the function was called with 1 positional argument"),
        ("linear_transpose cotangent of another shape",
         lambda a: px.linear_transpose(lambda x: x * 2, a)(a[:2]), (_x(),), ValueError,
         ("argument 0 of the linear_transpose function: got f32[2], but expected f32[3]")),
        ("custom_jvp rule returning a tangent of another shape",
         lambda a: px.jvp(_custom_jvp(px, lambda p, t: (p[0] * 2, t[0][:2])), (a,), (a,)),
         (_x(),), TypeError, ("Custom JVP rule must produce primal and tangent outputs",
                              "Expected f32[3]", "got f32[2]")),
        ("custom_jvp rule returning a tangent of another dtype",
         lambda a: px.jvp(_custom_jvp(px, lambda p, t: (p[0] * 2, t[0].astype(I32))), (a,),
                          (a,)),
         (_x(),), TypeError, "but got i32[3]"),
    ]
    for name, fn, args, error, fragment in transform_cases:
        add(Case(name, fn, args, error, fragment))

    # --- control flow ---------------------------------------------------------
    cf_cases = [
        ("cond branches of different shapes",
         lambda a: lax.cond(True, lambda x: x, lambda x: x[:2], a), TypeError,
         ("cond branches' outputs must have identical types", "f32[2]", "f32[3]")),
        ("cond branches of different dtypes",
         lambda a: lax.cond(True, lambda x: x, lambda x: x.astype(I32), a), TypeError,
         ("cond branches' outputs must have identical types", "i32[3]", "f32[3]")),
        ("cond branches of different structures",
         lambda a: lax.cond(True, lambda x: x, lambda x: (x, x), a), TypeError,
         "cond branches' outputs must have identical structures"),
        ("cond with a vector predicate", lambda a: lax.cond(a > 0, sq, sq, a), TypeError,
         "cond: pred must be a scalar, got bool[3]"),
        ("cond with a str predicate", lambda a: lax.cond("yes", sq, sq, a), TypeError,
         "pred must be a scalar array, got 'yes'"),
        ("switch with a float index",
         lambda a: lax.switch(1.5, [sq, sq], a), TypeError, "index"),
        ("switch with no branches", lambda a: lax.switch(0, [], a), ValueError, "branch"),
        ("while_loop body changing the carry's dtype",
         lambda a: lax.while_loop(lambda c: c[0] < 3, lambda c: c.astype(I32), a),
         TypeError, ("while_loop body_fun carry output and input must have identical types",
                     "i32[3]")),
        ("while_loop body changing the carry's shape",
         lambda a: lax.while_loop(lambda c: c[0] < 3, lambda c: c[:2], a), TypeError,
         ("while_loop body_fun carry output and input must have identical types", "f32[2]")),
        ("while_loop cond returning a vector",
         lambda a: lax.while_loop(lambda c: c < 3, lambda c: c + 1, a), TypeError,
         "cond_fun must return a boolean scalar"),
        ("while_loop cond returning a float",
         lambda a: lax.while_loop(lambda c: c[0], lambda c: c + 1, a), TypeError,
         "cond_fun must return a boolean scalar"),
        ("scan carry changing its dtype",
         lambda a: lax.scan(lambda c, x: (c.astype(I32), x), a, a), TypeError,
         "carry"),
        ("scan carry changing its shape",
         lambda a: lax.scan(lambda c, x: (c[:2], x), a, a), TypeError, "carry"),
        ("scan body not returning a pair",
         lambda a: lax.scan(lambda c, x: c, a, a), TypeError, "pair"),
        ("scan xs of different lengths",
         lambda a: lax.scan(lambda c, x: (c, x[0]), a[0], (a, a[:2])), ValueError,
         "length"),
        ("scan length disagreeing with xs",
         lambda a: lax.scan(lambda c, x: (c, x), a[0], a, length=5), ValueError, "length"),
        ("fori_loop body changing the carry's dtype",
         lambda a: lax.fori_loop(0, 3, lambda i, c: c.astype(I32), a), TypeError,
         ("carry output and input must have identical types", "i32[3]")),
    ]
    for name, fn, error, fragment in cf_cases:
        add(Case(name, fn, (_x(),), error, fragment))

    # --- pytrees ----------------------------------------------------------------
    tu = px.tree_util
    tree_cases = [
        ("tree_unflatten with too few leaves",
         lambda a: tu.tree_unflatten(tu.tree_structure((a, a)), [a]), ValueError,
         "has 2 leaves, got 1"),
        ("tree_unflatten with too many leaves",
         lambda a: tu.tree_unflatten(tu.tree_structure((a, a)), [a, a, a]), ValueError,
         "has 2 leaves, got 3"),
        ("tree_map over trees of different arity",
         lambda a: tu.tree_map(lambda x, y: x + y, (a, a), (a, a, a)), ValueError,
         ("structures differ", "PyTreeDef((*, *))")),
        ("tree_map over a tuple and a list",
         lambda a: tu.tree_map(lambda x, y: x + y, (a, a), [a, a]), ValueError,
         ("structures differ", "PyTreeDef((*, *))")),
        ("tree_map over dicts of other keys",
         lambda a: tu.tree_map(lambda x, y: x + y, {"a": a}, {"b": a}), ValueError,
         ("structures differ", "'b'")),
    ]
    for name, fn, error, fragment in tree_cases:
        add(Case(name, fn, (_x(),), error, fragment))

    # --- static arguments of primitives -----------------------------------------
    static_cases = [
        ("lax.integer_pow with a float exponent", lambda a: lax.integer_pow(a, 2.5),
         TypeError, "needs a Python int exponent y, got 2.5", ()),
        ("lax.integer_pow with a str exponent", lambda a: lax.integer_pow(a, "2"),
         TypeError, "'2'", ()),
        ("pnp.power of an integer to a negative int", lambda a: pnp.power(a.astype(I32), -1),
         TypeError, "cannot raise integers to the negative power", ()),
        ("lax.convert_element_type to str", lambda a: lax.convert_element_type(a, str),
         TypeError, "str", ()),
        ("astype to a datetime dtype", lambda a: a.astype("datetime64[D]"), TypeError,
         "(datetimes)", ()),
        ("pnp.zeros of a negative shape", lambda a: a + pnp.zeros((-1,)), ValueError,
         "negative", ()),
        ("pnp.ones of a float shape", lambda a: a + pnp.ones((2.5,)), TypeError,
         ("integer type", "2.5"), ()),
        ("lax.iota of a float size", lambda a: a + lax.iota(F32, 2.5), TypeError,
         ("integer type", "2.5"), ()),
        ("pnp.full of a str fill", lambda a: a + pnp.full((3,), "x"), TypeError, "strings",
         ()),
    ]
    static_reason = ("plugins/shape truncates (iota) or lets Python name the float "
                     "(ones), never naming the shape; another helper owns plugins/shape")
    for name, fn, error, fragment, xfail_modes in static_cases:
        add(Case(name, fn, (_x(),), error, fragment,
                 xfail=tuple((m, static_reason) for m in xfail_modes)))

    # --- a case that needs no operands: trace state after errors is checked per case
    add(Case("jit of a function raising inside a nested vmap",
             lambda a: px.jit(px.vmap(lambda x: lax.exp(x > 0)))(a), (_x((2, 3)),),
             TypeError, "'exp' does not accept dtype bool"))

    # --- more structure: the second probe's finds, and the primitives' own checks ---
    f0 = np.zeros(3, dtype=np.dtype([("float0", "V")]))     # plugax's and JAX's float0
    m = _x((2, 3))
    more = [
        ("grad argnums=(0, 0)", lambda a: px.grad(two, argnums=(0, 0))(a, a), (_x(),),
         TypeError, "names an argument more than once"),
        ("jvp with a Python int tangent for a float primal",
         lambda a: px.jvp(sq, (a[0],), (1,)), (_x(),), TypeError,
         "must have dtype float32, got int32"),
        ("pnp.sin of a float0 array", lambda a: a + pnp.sin(f0), (_x(),), TypeError,
         "Called sin with a float0 array"),
        ("pnp.add of a float0 array", lambda a: pnp.add(f0, 1) + a, (_x(),), TypeError,
         "Called add with a float0 array"),
        ("while_loop cond returning an int",
         lambda a: lax.while_loop(lambda c: c, lambda c: c - 1, pnp.sum(a).astype(I32)),
         (_x(),), TypeError, "cond_fun must return a boolean scalar"),
        ("fori_loop with a float upper bound",
         lambda a: lax.fori_loop(0, 2.5, lambda i, c: c + 1, a), (_x(),), TypeError,
         "upper must be an integer scalar"),
        ("scan with no xs and no length", lambda a: lax.scan(lambda c, x: (c, c), a, None),
         (_x(),), ValueError, "pass `length`"),
        ("scan over a scalar", lambda a: lax.scan(lambda c, x: (c, c), a, a[0]), (_x(),),
         TypeError, "leading axis"),
        ("lax.map over a scalar", lambda a: lax.map(lambda x: x, a[0]), (_x(),), TypeError,
         "leading axis"),
        ("switch with a vector index",
         lambda a: lax.switch(np.array([0, 1]), [sq, sq], a), (_x(),), TypeError,
         "index must be a scalar"),
        ("cond with a str operand", lambda a: lax.cond(True, lambda s: a, lambda s: a, "s"),
         (_x(),), TypeError, "not a valid plugax array type"),
        ("jit returning a str", lambda a: px.jit(lambda x: "s")(a), (_x(),), TypeError,
         "not a valid plugax array type"),
        ("vmap returning a str", lambda a: px.vmap(lambda x: "s")(a), (_x(),), TypeError,
         "not a valid plugax array type"),
        ("vmap axis_size disagreeing with the arguments",
         lambda a: px.vmap(sq, axis_size=5)(a), (_x(),), ValueError, "inconsistent sizes"),
        ("vmap in_axes a str", lambda a: px.vmap(sq, in_axes="0")(a), (_x(),), TypeError,
         "in_axes must be"),
        ("lax.select_n with a float selector", lambda a: lax.select_n(a, a, a), (_x(),),
         TypeError, "'select_n' needs a bool or integer `which`"),
        ("lax.select_n with a selector of another shape",
         lambda a: lax.select_n(np.array([True, False]), a, a), (_x(),), TypeError,
         ("'select_n' needs cases of one shape", "bool[2]")),
        ("lax.clamp with bounds of another shape",
         lambda a: lax.clamp(np.zeros(2, F32), a, np.ones(2, F32)), (_x(),), TypeError,
         ("'clamp' needs bounds of rank 0 or of the operand's shape", "f32[2], f32[3]")),
        ("lax.clamp with bounds of another dtype", lambda a: lax.clamp(np.int32(0), a, 1.0),
         (_x(),), TypeError, "'clamp' requires operands of one dtype"),
        ("lax.dynamic_slice with a float start", lambda a: lax.dynamic_slice(a, (1.5,), (2,)),
         (_x(),), TypeError, "'dynamic_slice' needs"),
        ("lax.dynamic_slice with two starts for rank 1",
         lambda a: lax.dynamic_slice(a, (0, 0), (2,)), (_x(),), TypeError,
         ("'dynamic_slice' needs", "rank-0 integer start indices")),
        ("lax.pad with a config per missing axis",
         lambda a: lax.pad(a, np.float32(0), [(1, 1, 0), (1, 1, 0)]), (_x(),), TypeError,
         "'pad' needs one (low, high, interior) triple per axis"),
        ("lax.pad with a padding value of another dtype",
         lambda a: lax.pad(a, np.int32(0), [(1, 1, 0)]), (_x(),), TypeError,
         "'pad' needs a rank-0 padding value of the operand's dtype"),
        ("lax.rev of axis 1 of rank 1", lambda a: lax.rev(a, (1,)), (_x(),), TypeError,
         "'rev' needs distinct axes of the operand"),
        ("lax.transpose with a repeated axis", lambda a: lax.transpose(a, (0, 0)), (m,),
         TypeError, "'transpose' needs a permutation of the operand's axes"),
        ("pnp.transpose with a short permutation", lambda a: pnp.transpose(a, (0,)), (m,),
         TypeError, "'transpose' needs a permutation of the operand's axes"),
        ("lax.concatenate of f32 and i32",
         lambda a: lax.concatenate([a, a.astype(I32)], 0), (_x(),), TypeError,
         "'concatenate' needs operands of one dtype"),
        ("lax.concatenate along axis 1 of rank 1", lambda a: lax.concatenate([a, a], 1),
         (_x(),), TypeError, "'concatenate' needs at least one operand and a valid axis"),
        ("lax.dot_general with batch sizes 2 and 3",
         lambda a, b: lax.dot_general(a, b, (((1,), (1,)), ((0,), (0,)))),
         (m, _x((3, 3))), TypeError, "'dot_general' needs batch dimensions of equal sizes"),
        ("lax.broadcast_in_dim of size 3 to 4",
         lambda a: lax.broadcast_in_dim(a, (2, 4), (1,)), (_x(),), TypeError,
         "'broadcast_in_dim' can only broadcast operand dimensions of size 1 or equal"),
        ("lax.broadcast_in_dim with two dimensions for rank 1",
         lambda a: lax.broadcast_in_dim(a, (2, 3), (0, 1)), (_x(),), TypeError,
         "'broadcast_in_dim' needs one broadcast dimension per operand dimension"),
        ("lax.iota of a negative size", lambda a: a + lax.iota(F32, -1), (_x(),), TypeError,
         "'iota' needs"),
        ("pnp.matmul of a scalar", lambda a: pnp.matmul(a[0], a), (_x(),), ValueError,
         "matmul: operands must not be scalars"),
        ("pnp.einsum with a term of another rank", lambda a: pnp.einsum("ij,jk->ik", a, a),
         (_x(),), ValueError, "einsum: term 'ij' of 'ij,jk->ik' does not match an operand"),
        ("an int32 plus a Python int beyond int32", lambda a: a.astype(I32) + 2**40, (_x(),),
         OverflowError, "1099511627776 does not fit in int32"),
        ("pnp.asarray of a Python int beyond int32", lambda: pnp.asarray(2**40), (),
         OverflowError, "1099511627776"),
        ("a zero slice step", lambda a: a[::0], (_x(),), ValueError,
         "slice step cannot be zero"),
        ("a bool index of another length", lambda a: a[np.array([True, False])], (_x(),),
         IndexError, "boolean index did not match"),
        ("a float array index", lambda a: a[np.array([1.5])], (_x(),), IndexError,
         "must be of integer (or boolean) type"),
        ("x.at[1.5].set", lambda a: a.at[1.5].set(0.0), (_x(),), TypeError,
         "indices must be integers"),
        ("pnp.take with a float index", lambda a: pnp.take(a, 1.5), (_x(),), TypeError,
         "indices must be integers"),
    ]
    more += [
        ("jacrev of an integer output", lambda a: px.jacrev(lambda x: x.astype(I32))(a),
         (_x(),), TypeError, ("jacrev requires real-valued outputs", "got int32")),
        ("hessian of an integer output",
         lambda a: px.hessian(lambda x: pnp.sum(x).astype(I32))(a), (_x(),), TypeError,
         "requires real-valued outputs"),
        ("jit donate_argnums beyond the parameters",
         lambda a: px.jit(sq, donate_argnums=3)(a), (_x(),), ValueError,
         "has donate_argnums=(3,), but only accepts 1 positional argument"),
        ("vmap out_axes a float", lambda a: px.vmap(sq, out_axes=0.5)(a), (_x(),), TypeError,
         "vmap out_axes must be an int or None"),
        ("pnp.round with float decimals", lambda a: pnp.round(a, 1.5), (_x(),), TypeError,
         "round: decimals must be an int, got 1.5"),
    ]
    for name in ["cumsum", "cumprod", "cummax", "cummin"]:
        f = getattr(lax, name)
        more.append((f"lax.{name}(axis=1) of rank 1", lambda a, f=f: f(a, axis=1), (_x(),),
                     ValueError, f"lax.{name}: axis 1 is out of bounds for an operand f32[3]"))
    for name, fn, args, error, fragment in more:
        add(Case(name, fn, args, error, fragment))
    add(Case("pnp.asarray of a ragged list", lambda: pnp.asarray([[1, 2], [3]]), (),
             ValueError, ("inhomogeneous shape", "(2,), (1,)"), eager_jit))
    return cases


# Where JAX defines a result instead of an error: (name, fn over (pnp, lax), operand,
# JAX's value recorded from jax 0.10.2 and its dtype). Eager and jit must give it.
def make_defined(pnp: Any, lax: Any) -> list[tuple]:
    nan = float("nan")
    rows = []
    for dt in ("int8", "int16", "int32", "uint8", "uint32"):
        x = np.array([7, 0, 3], dt) if dt.startswith("u") else np.array([7, -7, 0], dt)
        rows.append((f"floor_divide by zero, {dt}", lambda a: a // 0, x))
        rows.append((f"remainder by zero, {dt}", lambda a: a % 0, x))
        rows.append((f"lax.div by zero, {dt}", lambda a: lax.div(a, pnp.zeros_like(a)), x))
        rows.append((f"lax.rem by zero, {dt}", lambda a: lax.rem(a, pnp.zeros_like(a)), x))
    v = np.array([1.0, nan, 3.0], F32)
    nan_rows = [
        ("max with a NaN", pnp.max), ("min with a NaN", pnp.min),
        ("sum with a NaN", pnp.sum), ("argmax with a NaN", pnp.argmax),
        ("argmin with a NaN", pnp.argmin),
        ("maximum with a NaN", lambda a: pnp.maximum(a, 2.0)),
        ("minimum with a NaN", lambda a: pnp.minimum(a, 2.0)),
        ("clip of a NaN", lambda a: pnp.clip(a, 0.0, 2.0)),
        ("sign of a NaN", pnp.sign), ("lax.max with a NaN", lambda a: lax.max(a, a[::-1])),
        ("cumsum with a NaN", pnp.cumsum), ("round of a NaN", pnp.round),
    ]
    rows += [(n, f, v) for n, f in nan_rows]
    rows += [
        ("float division by zero", lambda a: a / pnp.zeros_like(a), np.array([1, -1, 0], F32)),
        ("log of a negative", pnp.log, np.array([-1.0, 0.0, 1.0], F32)),
        ("sqrt of a negative", pnp.sqrt, np.array([-1.0, 4.0], F32)),
        ("exp overflows to inf", pnp.exp, np.array([100.0, -200.0], F32)),
        ("int8 addition wraps", lambda a: a + a, np.array([100, -100], np.int8)),
        ("uint8 subtraction wraps", lambda a: a - np.uint8(5), np.array([3], np.uint8)),
        ("float32 to int32 truncates toward zero",
         lambda a: a.astype(I32), np.array([1.5, -2.5], F32)),
        ("mean of an empty axis", lambda a: pnp.mean(a, axis=0), np.zeros((0, 2), F32)),
    ]
    w = np.arange(5, dtype=F32)
    rows += [
        ("dynamic_slice starting past the end", lambda a: lax.dynamic_slice(a, (4,), (3,)), w),
        ("dynamic_slice starting below zero", lambda a: lax.dynamic_slice(a, (-9,), (2,)), w),
        ("dynamic_update_slice past the end",
         lambda a: lax.dynamic_update_slice(a, np.ones(2, F32), (4,)), w),
        ("take out of range fills NaN", lambda a: pnp.take(a, np.array([1, 9])), w),
        ("take mode=clip", lambda a: pnp.take(a, np.array([-9, 9]), mode="clip"), w),
        ("an integer array index out of range clamps", lambda a: a[np.array([7, -9])], w),
        ("a static index past the end clamps", lambda a: a[7], w),
        ("a static index below the start clamps", lambda a: a[-9], w),
        ("a slice past the end stops at the end", lambda a: a[3:10], w),
        ("dynamic_index_in_dim past the end", lambda a: lax.dynamic_slice(a, (9,), (1,)), w),
    ]
    return rows
