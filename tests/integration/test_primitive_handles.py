"""Public handles: every loaded primitive is `plugax.lax.<name>_p` and
`plugax.extend.get_primitive(name)`, under JAX's names.

JAX is the specification: a plugin author who knows `jax.lax.sin_p` should find
`plugax.lax.sin_p`, and a jaxpr printed by plugax should name its equations as
JAX's does. The names below were recorded from JAX 0.10.2 (`jax.lax.*_p`, and
the few primitives JAX keeps outside jax.lax), so the test needs no JAX.
"""
from __future__ import annotations

import pytest

import plugax
import plugax.lax
from plugax.extend import Primitive, get_primitive

# jax.lax.<name>_p in JAX 0.10.2, for every handle whose name is the primitive's
JAX_LAX_NAMES = frozenset("""
    abs acos acosh add after_all all_gather all_to_all and approx_top_k argmax argmin
    asin asinh atan atan2 atanh axis_index bessel_i0e bessel_i1e bitcast_convert_type
    broadcast_in_dim cbrt ceil clamp clz complex concatenate cond conj
    conv_general_dilated convert_element_type copy cos cosh create_token cumlogsumexp
    cummax cummin cumprod cumsum dce_sink device_put digamma div dot_general
    dynamic_slice dynamic_update_slice eq eq_to erf erf_inv erfc exp exp2 expm1 fft
    floor gather ge gt igamma igamma_grad_a igammac imag integer_pow iota is_finite le
    le_to lgamma log log1p logistic lt lt_to max min mul mulhi ne neg nextafter not
    optimization_barrier or pad pmax pmin polygamma population_count pow ppermute psum
    ragged_all_to_all real reduce reduce_and reduce_max reduce_min reduce_or
    reduce_precision reduce_prod reduce_sum reduce_window reduce_window_max
    reduce_window_min reduce_window_sum reduce_xor regularized_incomplete_beta rem
    reshape rev rng_bit_generator rng_uniform round rsqrt scan scatter
    select_and_gather_add select_and_scatter select_and_scatter_add select_n
    sharding_constraint shift_left shift_right_arithmetic shift_right_logical sign sin
    sinh slice sort split sqrt square squeeze stack stage stop_gradient sub tan tanh
    tile top_k transpose unstack while xor zeta
""".split())
# jax.lax handles whose name differs from the primitive's (handle -> primitive name)
JAX_LAX_RENAMED = {
    "linear_solve_p": "custom_linear_solve", "scatter_add_p": "scatter-add",
    "scatter_max_p": "scatter-max", "scatter_min_p": "scatter-min",
    "scatter_mul_p": "scatter-mul", "scatter_sub_p": "scatter-sub",
}
# JAX 0.10.2 primitives outside jax.lax: name -> where JAX defines it
JAX_OTHER = {
    "jit": "jax._src.pjit.jit_p",
    "custom_jvp_call": "jax._src.custom_derivatives.custom_jvp_call_p",
    "custom_vjp_call": "jax._src.custom_derivatives.custom_vjp_call_p",
    "custom_lin": "jax._src.interpreters.ad.custom_lin_p",
    "add_any": "jax._src.ad_util.add_jaxvals_p",
    "cholesky": "jax._src.lax.linalg.cholesky_p",
    "triangular_solve": "jax._src.lax.linalg.triangular_solve_p",
    "lu": "jax._src.lax.linalg.lu_p",
    "qr": "jax._src.lax.linalg.qr_p",
    "eigh": "jax._src.lax.linalg.eigh_p",
    "svd": "jax._src.lax.linalg.svd_p",
    "eig": "jax._src.lax.linalg.eig_p",
    "hessenberg": "jax._src.lax.linalg.hessenberg_p",
    "schur": "jax._src.lax.linalg.schur_p",
    "shard_map": "jax._src.shard_map.shard_map_p",
    "threefry2x32": "jax._src.random.threefry2x32.threefry2x32_p",
    "random_gamma": "jax._src.random.core.random_gamma_p",
    "pure_callback": "jax._src.callback.pure_callback_p",
    "debug_callback": "jax._src.debugging.debug_callback_p",
    "debug_print": "jax._src.debugging.debug_print_p",
    "io_callback": "jax._src.callback.io_callback_p",
    "reduce_scatter": "jax._src.lax.parallel.reduce_scatter_p",   # lax.psum_scatter
    "pbroadcast": "jax._src.lax.parallel.pbroadcast_p",
    "pvary": "jax._src.core.pvary_p",   # lax.pcast(to='varying')
}
JAX_NAMES = JAX_LAX_NAMES | set(JAX_LAX_RENAMED.values()) | set(JAX_OTHER)

# plugax primitives without a JAX name, and why
PLUGAX_ONLY = {
    "pjit": "JAX 0.10.2 calls its jit primitive 'jit' (it was 'pjit' until 2025); plugax "
            "keeps 'pjit' for now: jaxprs, tests and the xla_call plugin's docs use it",
}


def loaded() -> dict[str, Primitive]:
    return dict(plugax.registry.primitives_by_name)


def handle_name(name: str) -> str:
    return f"{name.replace('-', '_')}_p"


def test_every_loaded_primitive_has_both_public_handles():
    prims = loaded()
    assert len(prims) > 50   # the built-in families (the conftest skips without them)
    missing = [n for n in prims if getattr(plugax.lax, handle_name(n), None) is not prims[n]]
    assert not missing, f"no plugax.lax.<name>_p for {missing}"
    assert all(get_primitive(n) is p for n, p in prims.items())


def test_handles_are_jax_handles_where_jax_renames():
    """JAX spells a '-' in a primitive's name as '_' in its handle (scatter_add_p), and
    names one handle apart from its primitive (linear_solve_p is custom_linear_solve):
    plugax.lax has JAX's handle for each."""
    by_name = {v: k for k, v in JAX_LAX_RENAMED.items()}
    for name in loaded():
        if name in by_name:
            assert getattr(plugax.lax, by_name[name]) is get_primitive(name)
            if "-" in name:
                assert handle_name(name) == by_name[name]


def test_primitive_names_are_jax_names_or_listed_as_plugax_only():
    strangers = sorted(n for n in loaded() if n not in JAX_NAMES and n not in PLUGAX_ONLY)
    assert not strangers, (f"primitives without JAX's name and not in PLUGAX_ONLY: "
                           f"{strangers}; use JAX's name or list it with a reason")


def test_the_plugax_only_list_names_no_jax_primitive():
    """An entry that has become a JAX name must leave the list (and the primitive should
    be renamed to it), so the list cannot hide a mismatch."""
    assert not set(PLUGAX_ONLY) & JAX_NAMES
    assert all(len(why) > 20 for why in PLUGAX_ONLY.values())


def test_get_primitive_of_an_unknown_name_lists_the_loaded_ones():
    with pytest.raises(LookupError, match="no_such_primitive") as info:
        get_primitive("no_such_primitive")
    assert "sin" in str(info.value)
