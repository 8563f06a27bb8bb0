"""JAX's smaller top-level names (framework/plugax/toplevel.py): config states set and
restore (also after an exception), clear_caches makes jit re-trace, closure_convert /
custom_gradient / fwd_and_bwd against grad and central differences (eager and jit),
ensure_compile_time_eval evaluates concrete values under jit and stages traced ones,
and every deliberately absent name says why."""
import warnings

import numpy as np
import pytest

import plugax
import plugax.numpy as jnp
from plugax.toplevel import ABSENT

STATES = [  # (state, a value it accepts, a value it refuses)
    (plugax.enable_x64, True, "yes"),
    (plugax.default_prng_impl, "threefry2x32", "rbg"),
    (plugax.threefry_partitionable, True, False),
    # options honoured at JAX's default only: other values are refused, saying why
    (plugax.numpy_rank_promotion, "allow", "raise"),
    (plugax.numpy_dtype_promotion, "standard", "strict"),
    (plugax.default_matmul_precision, "float32", "bfloat16"),
    (plugax.legacy_prng_key, "allow", "error"),
    (plugax.enable_custom_prng, False, True),
    (plugax.debug_key_reuse, False, True),
    (plugax.check_tracer_leaks, False, True),
    (plugax.enable_checks, False, True),
    (plugax.transfer_guard_host_to_device, "allow", "disallow"),
    (plugax.transfer_guard_device_to_host, "allow", "log"),
    (plugax.transfer_guard_device_to_device, "allow", "disallow"),
]


@pytest.mark.parametrize("state, good, bad", STATES, ids=lambda s: getattr(s, "name", ""))
def test_config_states_set_and_restore(state, good, bad):
    before = state.value
    with state(good):
        assert state.value == good
    assert state.value == before
    with pytest.raises(KeyError):
        with state(good):
            raise KeyError("inside")
    assert state.value == before

    @state(good)
    def read():
        return state.value
    assert read() == good and state.value == before
    with pytest.raises((TypeError, ValueError), match=state.name.replace("jax_", "")):
        state(bad)
    assert state.value == before


def test_enable_x64_changes_defaults_in_the_block_only():
    assert jnp.ones(2).dtype == np.float32
    with plugax.enable_x64(True):
        assert jnp.ones(2).dtype == np.float64
        assert plugax.jit(lambda x: x * 2)(np.ones(2)).dtype == np.float64
    assert jnp.ones(2).dtype == np.float32


def test_clear_caches_makes_jit_retrace():
    traces = []

    @plugax.jit
    def f(x):
        traces.append(1)
        return x * 2

    f(1.0), f(2.0)
    assert len(traces) == 1
    plugax.clear_caches()
    assert float(f(3.0)) == 6.0
    assert len(traces) == 2


def _fd(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


def test_closure_convert_hoists_traced_floats():
    def outer(w):
        def g(x):
            return jnp.sin(x * w) + jnp.cos(w)
        conv, consts = plugax.closure_convert(g, 1.0)
        assert len(consts) == (1 if isinstance(w, plugax.core.trace.Tracer) else 0)
        return conv(0.5, *consts)

    with plugax.enable_x64(True):
        want = lambda w: np.sin(0.5 * w) + np.cos(w)   # noqa: E731
        np.testing.assert_allclose(outer(2.0), want(2.0), rtol=1e-12)
        for d in (plugax.grad(outer), plugax.jit(plugax.grad(outer))):
            np.testing.assert_allclose(d(2.0), _fd(want, 2.0), rtol=1e-7)
    conv, _ = plugax.closure_convert(lambda x: x["a"] * 2, {"a": 1.0})
    assert float(conv({"a": 3.0})) == 6.0
    with pytest.raises(TypeError, match="same Pytree structure"):
        conv((3.0,))


def test_custom_gradient_uses_the_given_vjp():
    @plugax.custom_gradient
    def f(x):
        return jnp.sin(x), lambda g: g * 3.0 * x     # deliberately not cos(x)

    @plugax.custom_gradient
    def mul(x, y):
        return x * y, lambda g: (g * y, 10 * g * x)

    np.testing.assert_allclose(f(1.0), np.sin(1.0), rtol=1e-6)
    assert float(plugax.grad(f)(2.0)) == 6.0
    assert float(plugax.jit(plugax.grad(f))(2.0)) == 6.0
    np.testing.assert_allclose(plugax.vmap(plugax.grad(f))(np.arange(3.0)), [0, 3, 6])
    gx, gy = plugax.grad(mul, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 20.0)
    # the rule closes over a value computed from the input: traced, it becomes a residual
    @plugax.custom_gradient
    def g(x):
        s = jnp.exp(x)
        return s, lambda ct: ct * s * 2
    np.testing.assert_allclose(plugax.jit(plugax.grad(g))(1.0), 2 * np.e, rtol=1e-6)


@pytest.mark.parametrize("jitted", [True, False])
@pytest.mark.parametrize("has_aux", [False, True])
def test_fwd_and_bwd_matches_grad(jitted, has_aux):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3)), rng.standard_normal((3, 2))

    def loss(x, w):
        out = jnp.sum(jnp.tanh(x @ w))
        return (out, {"n": out * 2}) if has_aux else out

    with plugax.enable_x64(True):
        fwd, bwd = plugax.fwd_and_bwd(loss, argnums=(0, 1), has_aux=has_aux, jitted=jitted)
        out = fwd(x, w)
        y, res = out[0], out[1]
        if has_aux:
            np.testing.assert_allclose(out[2]["n"], 2 * y)
        np.testing.assert_allclose(y, np.sum(np.tanh(x @ w)), rtol=1e-12)
        gx, gw = bwd(res, 1.0)
        wx, ww = plugax.grad(loss, argnums=(0, 1), has_aux=has_aux)(x, w)[:2] if not has_aux \
            else plugax.grad(loss, argnums=(0, 1), has_aux=True)(x, w)[0]
        np.testing.assert_allclose(gx, wx, rtol=1e-12)
        np.testing.assert_allclose(gw, ww, rtol=1e-12)
        fwd1, bwd1 = plugax.fwd_and_bwd(lambda x, w: jnp.sum(jnp.tanh(x @ w)), argnums=1,
                                        jitted=jitted)
        np.testing.assert_allclose(bwd1(fwd1(x, w)[1], 2.0), 2 * np.asarray(ww), rtol=1e-12)


def test_ensure_compile_time_eval_under_jit():
    seen = {}

    @plugax.jit
    def f(x):
        with plugax.ensure_compile_time_eval():
            y = jnp.sin(jnp.arange(3.0))
            seen["y"] = type(y)
            seen["n"] = int(jnp.sum(jnp.arange(4)))      # concrete: usable as a Python int
            z = x + 1
            seen["z"] = type(z)
        return y + z * seen["n"]

    np.testing.assert_allclose(f(1.0), np.sin(np.arange(3.0)) + 12, rtol=1e-6)
    assert seen["y"] is plugax.Array and seen["z"] is not plugax.Array
    with pytest.raises(ZeroDivisionError):
        with plugax.ensure_compile_time_eval():
            1 / 0
    assert plugax.core.trace.is_eager()      # the trace is restored after the exception


def test_processes_environment_and_host_copies():
    with pytest.warns(UserWarning, match="renamed to plugax.process_count"):
        assert plugax.host_count() == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert plugax.host_id() == 0 and plugax.host_ids() == [0]
    assert plugax.process_indices() == [0]
    text = plugax.print_environment_info(return_string=True)
    assert text.startswith(f"plugax: {plugax.__version__}") and "plugins: " in text
    tree = {"a": jnp.ones(2), "b": [1, "s"]}
    assert plugax.copy_to_host_async(tree) is tree


def test_transfer_guard_sets_all_three():
    with plugax.transfer_guard("allow"):
        assert plugax.transfer_guard_host_to_device.value == "allow"
    with pytest.raises(ValueError, match="does not guard host-device transfers"):
        with plugax.transfer_guard("disallow"):
            pass


@pytest.mark.parametrize("name", sorted(ABSENT))
def test_absent_names_say_why(name):
    if name in plugax.__dict__:
        pytest.skip(f"plugax.{name} is provided now (by another module): drop it from ABSENT")
    with pytest.raises(AttributeError, match=f"JAX's {name} is not supported because"):
        getattr(plugax, name)
