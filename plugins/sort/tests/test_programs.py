"""Two JAX programs that sort, unchanged but for the imports (each also runs as is under
jax, with identical printed results, checked when writing them): a k-nearest-neighbour
classifier with a top-k accuracy metric (argsort, top_k), and a trimmed least-squares
fit whose threshold is a quantile, plus a median-absolute-deviation scale (quantile,
median) trained by jitted gradient descent."""
import numpy as np

import plugax as jax
import plugax.numpy as jnp
from plugax import lax


# --- program 1: a k-nearest-neighbour classifier and a top-k accuracy metric ---------------
def pairwise_sq_dists(a, b):
    return jnp.sum((a[:, None, :] - b[None, :, :]) ** 2, axis=-1)


@jax.jit
def knn_predict(train_x, train_y, test_x):
    k, n_classes = 5, 3
    d = pairwise_sq_dists(test_x, train_x)
    nearest = jnp.argsort(d, axis=-1)[:, :k]
    votes = jnp.sum(train_y[nearest][..., None] == jnp.arange(n_classes), axis=1)
    return jnp.argmax(votes, axis=-1)


def top_k_accuracy(logits, labels, k):
    _, idx = lax.top_k(logits, k)
    return jnp.mean(jnp.any(idx == labels[:, None], axis=-1))


# --- program 2: a robust (trimmed) least-squares fit with a quantile threshold -------------
def trimmed_loss(params, x, y, keep=0.8):
    w, b = params
    r = (x * w + b - y) ** 2
    cut = jax.lax.stop_gradient(jnp.quantile(r, keep))
    return jnp.sum(jnp.where(r <= cut, r, 0.0)) / jnp.sum(r <= cut)


@jax.jit
def fit_step(params, x, y, lr=0.3):
    loss, grads = jax.value_and_grad(trimmed_loss)(params, x, y)
    return jax.tree_util.tree_map(lambda p, g: p - lr * g, params, grads), loss


def robust_scale(x):
    """Median absolute deviation, scaled to a normal's standard deviation."""
    return 1.4826 * jnp.median(jnp.abs(x - jnp.median(x)))


# --- the checks -------------------------------------------------------------------------------
_RNG = np.random.default_rng(0)
CENTERS = np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 3.0]])


def _blobs(n):
    y = _RNG.integers(0, 3, n)
    return CENTERS[y] + _RNG.normal(0, 0.7, (n, 2)), y


def test_knn_matches_numpy_and_classifies():
    (train_x, train_y), (test_x, test_y) = _blobs(60), _blobs(30)
    pred = np.asarray(knn_predict(train_x, train_y, test_x))
    d = ((test_x[:, None, :] - train_x[None, :, :]) ** 2).sum(-1)
    nearest = np.argsort(d, axis=-1, kind="stable")[:, :5]
    votes = np.stack([np.bincount(train_y[r], minlength=3) for r in nearest])
    np.testing.assert_array_equal(pred, votes.argmax(-1))
    assert np.mean(pred == test_y) > 0.9


def test_top_k_accuracy_matches_numpy():
    logits = _RNG.normal(size=(40, 6))
    labels = _RNG.integers(0, 6, 40)
    order = np.argsort(-logits, axis=-1, kind="stable")
    for k in (1, 2, 4, 6):
        want = np.mean((order[:, :k] == labels[:, None]).any(-1))
        assert abs(float(top_k_accuracy(logits, labels, k)) - want) < 1e-6
    assert float(top_k_accuracy(logits, labels, 6)) == 1.0


def test_trimmed_fit_ignores_outliers():
    x = _RNG.uniform(-1, 1, 50)
    y = 2.0 * x - 0.5 + _RNG.normal(0, 0.05, 50)
    y[:8] += 5.0                                    # 16% gross outliers
    params = (jnp.zeros(()), jnp.zeros(()))
    for _ in range(200):
        params, loss = fit_step(params, x, y)
    w, b = (float(p) for p in params)
    assert abs(w - 2.0) < 0.05 and abs(b + 0.5) < 0.05, (w, b)
    plain = np.polyfit(x, y, 1)                     # least squares is pulled up by them
    assert abs(plain[1] + 0.5) > 0.5
    r = (x * w + b - y) ** 2                        # the loss is the trimmed mean
    kept = r <= np.quantile(r.astype(np.float32), 0.8)
    np.testing.assert_allclose(float(trimmed_loss(params, x, y)), r[kept].mean(), rtol=1e-3)


def test_robust_scale():
    x = _RNG.normal(0, 2.0, 1001)
    x[:50] = 1e6                                    # outliers do not move it
    got = float(robust_scale(x))
    np.testing.assert_allclose(got, 1.4826 * np.median(np.abs(x - np.median(x))), rtol=1e-5)
    assert abs(got - 2.0) < 0.2
