"""Two JAX programs, unchanged but for the imports: a stax-style CNN (conv, relu,
avg_pool, max_pool, dense) trained by SGD under jit, and 1-D signal smoothing with
jnp.convolve. Each also runs as is under jax (checked when writing them). Parameters
and data come from NumPy's generator, so the family's tox env needs no random plugin."""
import numpy as np

import plugax as jax
import plugax.numpy as jnp
from plugax import lax
from plugax.testing import x64


# --- program 1: a small CNN in the style of jax.example_libraries.stax -----------------------
def conv_init(rng, in_ch, out_ch, k=3):
    fan_in = in_ch * k * k
    w = (rng.standard_normal((k, k, in_ch, out_ch)) * np.sqrt(2.0 / fan_in)).astype(np.float32)
    return jnp.asarray(w), jnp.zeros((out_ch,), jnp.float32)


def conv_apply(params, x, strides=(1, 1), padding="SAME"):
    w, b = params
    return lax.conv_general_dilated(x, w, strides, padding,
                                    dimension_numbers=("NHWC", "HWIO", "NHWC")) + b


def avg_pool(x, window=(2, 2), strides=(2, 2), padding="VALID"):
    dims, steps = (1,) + window + (1,), (1,) + strides + (1,)
    summed = lax.reduce_window(x, 0., lax.add, dims, steps, padding)
    ones = jnp.ones((1,) + x.shape[1:3] + (1,), x.dtype)
    return summed / lax.reduce_window(ones, 0., lax.add, dims, steps, padding)


def max_pool(x, window=(2, 2), strides=(2, 2), padding="VALID"):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1,) + window + (1,),
                             (1,) + strides + (1,), padding)


def init_params(seed, n_classes=3):
    rng = np.random.default_rng(seed)
    dense_w = jnp.asarray(rng.standard_normal((2 * 2 * 6, n_classes)).astype(np.float32) * 0.1)
    return {"conv1": conv_init(rng, 1, 4), "conv2": conv_init(rng, 4, 6),
            "dense": (dense_w, jnp.zeros((n_classes,), jnp.float32))}


def predict(params, images):
    h = jax.nn.relu(conv_apply(params["conv1"], images))
    h = avg_pool(h)                                          # 8x8 -> 4x4
    h = jax.nn.relu(conv_apply(params["conv2"], h, padding="VALID"))   # 4x4 -> 2x2
    h = max_pool(h, (1, 1), (1, 1))
    h = h.reshape((h.shape[0], -1))
    w, b = params["dense"]
    return jax.nn.log_softmax(h @ w + b)


def loss(params, images, labels):
    return -jnp.mean(jnp.sum(predict(params, images) * labels, axis=-1))


@jax.jit
def sgd_step(params, images, labels, lr=0.1):
    value, grads = jax.value_and_grad(loss)(params, images, labels)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), value


def make_data(seed, n=16):
    images = jnp.asarray(np.random.default_rng(seed).standard_normal((n, 8, 8, 1)),
                         jnp.float32)
    labels = jnp.argmax(jnp.stack([images[:, :4].sum((1, 2, 3)), images[:, 4:].sum((1, 2, 3)),
                                   -jnp.abs(images).sum((1, 2, 3)) / 8], -1), -1)
    return images, jax.nn.one_hot(labels, 3)


def test_cnn_trains_under_jit_and_its_gradient_matches_finite_differences():
    params = init_params(0)
    images, labels = make_data(1)
    assert predict(params, images).shape == (16, 3)
    losses = []
    for _ in range(8):
        params, value = sgd_step(params, images, labels)
        losses.append(float(value))
    assert losses[-1] < 0.8 * losses[0], losses
    # jit vs eager on the trained parameters
    eager = loss(params, images, labels)
    np.testing.assert_allclose(jax.jit(loss)(params, images, labels), eager, rtol=1e-5)
    # the gradient, in float64, against a central difference along a random direction
    with x64():
        p64 = jax.tree_util.tree_map(lambda p: np.asarray(p, np.float64), params)
        x64_images = np.asarray(images, np.float64)
        y64 = np.asarray(labels, np.float64)
        grads = jax.grad(loss)(p64, x64_images, y64)
        rng = np.random.default_rng(0)
        direction = jax.tree_util.tree_map(lambda p: rng.standard_normal(p.shape), p64)
        eps = 1e-6
        shifted = [jax.tree_util.tree_map(lambda p, d: p + s * eps * d, p64, direction)
                   for s in (1, -1)]
        numeric = (float(loss(shifted[0], x64_images, y64))
                   - float(loss(shifted[1], x64_images, y64))) / (2 * eps)
        analytic = sum(float(np.sum(np.asarray(g) * d)) for g, d in zip(
            jax.tree_util.tree_leaves(grads), jax.tree_util.tree_leaves(direction)))
    assert abs(numeric - analytic) <= 1e-6 * max(1.0, abs(analytic))


def test_avg_pool_same_padding_normalises_by_window_size():
    x = jnp.arange(1.0, 10.0).reshape((1, 3, 3, 1))
    got = avg_pool(x, (2, 2), (1, 1), "SAME")[0, :, :, 0]
    # SAME pads the high side: the last row/column average fewer elements
    ref = np.array([[3.0, 4.0, 4.5], [6.0, 7.0, 7.5], [7.5, 8.5, 9.0]])
    np.testing.assert_allclose(got, ref)


# --- program 2: smoothing a noisy signal with a moving average and a Gaussian ---------------
def moving_average(signal, width):
    return jnp.convolve(signal, jnp.ones(width) / width, mode="same")


def gaussian_smooth(signal, sigma, radius):
    taps = jnp.arange(-radius, radius + 1)
    kernel = jnp.exp(-0.5 * (taps / sigma) ** 2)
    return jnp.convolve(signal, kernel / kernel.sum(), mode="same")


def roughness(signal):
    return jnp.sum((signal[1:] - signal[:-1]) ** 2)


def test_signal_smoothing():
    rng = np.random.default_rng(0)
    t = np.linspace(0, 4 * np.pi, 200)
    noisy = (np.sin(t) + 0.3 * rng.standard_normal(t.size)).astype(np.float32)
    smooth = moving_average(noisy, 9)
    np.testing.assert_allclose(smooth, np.convolve(noisy, np.ones(9) / 9, mode="same"),
                               rtol=1e-5, atol=1e-6)
    g = jax.jit(gaussian_smooth, static_argnums=(1, 2))(noisy, 2.0, 6)
    taps = np.exp(-0.5 * (np.arange(-6, 7) / 2.0) ** 2)
    np.testing.assert_allclose(g, np.convolve(noisy, taps / taps.sum(), mode="same"),
                               rtol=1e-5, atol=1e-6)
    assert float(roughness(g)) < 0.1 * float(roughness(noisy))
    # d roughness(smooth(x)) / dx is a convolution's transpose: check it against numpy's
    grad = jax.grad(lambda s: roughness(moving_average(s, 9)))(noisy)
    smooth64 = np.convolve(noisy.astype(np.float64), np.ones(9) / 9, mode="same")
    d = np.zeros_like(smooth64)
    d[1:] += 2 * np.diff(smooth64)
    d[:-1] -= 2 * np.diff(smooth64)
    np.testing.assert_allclose(grad, np.correlate(np.pad(d, 4), np.ones(9) / 9, "valid"),
                               rtol=1e-4, atol=1e-5)
    # correlate in every mode and argument order, as numpy
    a, v = noisy[:7], np.array([1.0, -2.0, 0.5], np.float32)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(jnp.correlate(a, v, mode), np.correlate(a, v, mode),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(jnp.correlate(v, a, mode), np.correlate(v, a, mode),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(jnp.convolve(v, a, mode), np.convolve(v, a, mode),
                                   rtol=1e-5, atol=1e-6)
