"""The programs in examples/ run and reach results that could have failed.

Two kinds. The *ported* programs (JAX's README, the autodiff cookbook, ...) run
unchanged but for imports and pass their own checks: each compares two
independent ways of computing the same quantity and prints "all checks passed".
The *gallery* (issue 16: an MLP, a convnet, a VAE, GP regression, HMC, DP-SGD)
are training programs: each is run here at `--size tiny` (seconds) through its
`main(argv) -> dict` and its result is held to a bar a broken gradient, sampler
or clipping would miss: accuracy well above chance, a likelihood that improved,
a posterior near the truth, per-example gradients equal to a Python loop's. The
gallery needs the `examples` extra (scikit-learn's digits, tqdm, matplotlib),
which `make test` installs; without scikit-learn those tests skip, saying so.
"""
import importlib.util
import pathlib
import runpy
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES_DIR = pathlib.Path(__file__).parents[2] / "examples"
GALLERY = ("digits_mlp", "digits_convnet", "digits_vae", "gaussian_process_regression",
           "hmc_logistic_regression", "dp_sgd")
PORTED = sorted(p for p in EXAMPLES_DIR.glob("*.py")
                if p.stem not in GALLERY and not p.stem.startswith("_"))
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
needs_digits = pytest.mark.skipif(importlib.util.find_spec("sklearn") is None,
                                  reason="the digits examples need scikit-learn: "
                                         "pip install -e '.[examples]'")


@pytest.mark.parametrize("path", PORTED, ids=[p.stem for p in PORTED])
def test_example_runs_and_its_checks_pass(path, capsys):
    import plugax
    x64 = plugax.config.enable_x64   # an example may switch x64 on, as JAX programs do
    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plugax.config.update("enable_x64", x64)
    assert "all checks passed" in capsys.readouterr().out


def test_every_gallery_program_is_in_examples():
    assert sorted(GALLERY) == sorted(p.stem for p in EXAMPLES_DIR.glob("*.py")
                                     if p.stem in GALLERY)


@pytest.fixture
def gallery(monkeypatch, tmp_path):
    """run(name, *flags) -> the example's result dict, at tiny size, writing into tmp_path."""
    monkeypatch.syspath_prepend(str(EXAMPLES_DIR))   # as `python examples/x.py` has it

    def run(name, *flags):
        module = runpy.run_path(str(EXAMPLES_DIR / f"{name}.py"), run_name=f"gallery_{name}")
        result = module["main"](["--size", "tiny", "--quiet", "--out", str(tmp_path), *flags])
        if HAS_MATPLOTLIB:
            png = tmp_path / f"{name}.png"
            assert result["png"] == png and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        else:
            assert result["png"] is None
        return module, result
    return run


@needs_digits
def test_digits_mlp_learns(gallery):
    _, result = gallery("digits_mlp")
    assert result["test_accuracy"] > 0.6          # chance is 0.1
    assert result["loss"][-1] < 0.8 * result["loss"][0]


def test_gaussian_process_fit_improves_the_likelihood(gallery):
    _, result = gallery("gaussian_process_regression")
    nll = result["neg_marginal_likelihood"]
    assert nll[-1] < nll[0] - 3.0, nll
    assert result["rmse_inside"] < 0.2            # the mean follows sin(x) where there is data
    assert 0.5 < result["params"]["lengthscale"] < 5.0


@needs_digits
def test_gallery_program_runs_as_a_script(tmp_path):
    proc = subprocess.run([sys.executable, str(EXAMPLES_DIR / "digits_mlp.py"), "--size", "tiny",
                           "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert "test set accuracy" in proc.stdout
    if HAS_MATPLOTLIB:
        assert (tmp_path / "digits_mlp.png").exists()


@needs_digits
def test_dp_sgd_learns_and_clips_each_example(gallery):
    module, result = gallery("dp_sgd")
    assert result["test_accuracy"] > 0.5          # two noisy epochs; chance is 0.1
    assert result["loss"][-1] < result["loss"][0]

    import plugax
    from plugax import grad, tree_util, vmap
    images, labels, _, _ = module["_gallery"].load_digits()
    params = module["init_params"](plugax.random.PRNGKey(1), [64, 16, 10])
    x, y = module["shape_as_single_example_batches"](images[:12], labels[:12])
    # vmap(grad) over batches of one == a Python loop of grad
    per_example = vmap(grad(module["loss"]), in_axes=(None, 0))(params, (x, y))
    loop = [grad(module["loss"])(params, (x[i], y[i])) for i in range(len(x))]
    for got, want in zip(tree_util.tree_leaves(per_example),
                         zip(*[tree_util.tree_leaves(g) for g in loop])):
        np.testing.assert_allclose(np.asarray(got), np.stack(want), rtol=1e-5, atol=1e-6)
    # with no noise, private_grad is the mean of the clipped per-example gradients
    norms = [np.sqrt(sum(np.sum(np.asarray(g, np.float64) ** 2) for g in tree_util.tree_leaves(l)))
             for l in loop]
    clip = float(np.median(norms))
    assert min(norms) < clip < max(norms)         # some examples are clipped, some not
    want = [sum(np.asarray(g[i], np.float64) / max(norms[i] / clip, 1.0) for i in range(len(x)))
            / len(x) for g in zip(*[tree_util.tree_leaves(l) for l in loop])]
    got = module["private_grad"](params, (x, y), plugax.random.PRNGKey(2), clip, 0.0, len(x))
    for g, w in zip(tree_util.tree_leaves(got), want):
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-4, atol=1e-6)
    # each clipped gradient has norm <= clip: the mean of n of them has norm <= clip
    total = np.sqrt(sum(np.sum(np.asarray(g, np.float64) ** 2) for g in tree_util.tree_leaves(got)))
    assert total <= clip + 1e-5
    # and the noise is there when asked for
    noisy = module["private_grad"](params, (x, y), plugax.random.PRNGKey(2), clip, 1.0, len(x))
    assert not np.allclose(np.asarray(tree_util.tree_leaves(noisy)[0]),
                           np.asarray(tree_util.tree_leaves(got)[0]))


def test_hmc_posterior_matches_the_laplace_approximation(gallery):
    _, result = gallery("hmc_logistic_regression")
    mean, std = result["posterior_mean"], result["posterior_std"]
    assert 0.5 < result["acceptance"] <= 1.0
    assert np.all(np.abs(mean - result["true_w"]) < 3 * std), (mean, result["true_w"], std)
    # an independent answer: the posterior's mode and curvature by Newton's method in
    # float64 NumPy; at a few hundred points the posterior is nearly Gaussian
    x, y = (a.astype(np.float64) for a in result["data"])
    prior_precision = 1 / 2.0 ** 2
    w = np.zeros(x.shape[1])
    for _ in range(30):
        p = 1 / (1 + np.exp(-x @ w))
        hessian = -(x.T * (p * (1 - p))) @ x - prior_precision * np.eye(len(w))
        w = w - np.linalg.solve(hessian, x.T @ (y - p) - prior_precision * w)
    laplace_std = np.sqrt(np.diag(np.linalg.inv(-hessian)))
    np.testing.assert_array_less(np.abs(mean - w), 0.5 * laplace_std)
    np.testing.assert_allclose(std, laplace_std, rtol=0.3)


@needs_digits
def test_vae_elbo_improves(gallery):
    module, result = gallery("digits_vae")
    elbo = result["test_elbo"]
    assert elbo[-1] > elbo[0] + 10.0, elbo       # nats per image, on held-out digits
    assert elbo[-1] < 0                          # a log-likelihood bound of binary pixels
    samples = result["samples"]
    assert samples.shape == (40, 64) and np.all((samples >= 0) & (samples <= 1))
    # the closed-form KL against a Monte Carlo estimate, in float64 NumPy
    mean, std = np.array([[0.3, -1.2]]), np.array([[0.5, 1.7]])
    z = mean + std * np.random.default_rng(0).standard_normal((200_000, 2))
    log_q = -0.5 * ((z - mean) / std) ** 2 - np.log(std)
    log_p = -0.5 * z ** 2
    np.testing.assert_allclose(np.asarray(module["gaussian_kl"](mean, std))[0],
                               np.mean(np.sum(log_q - log_p, axis=1)), rtol=0.02)


def _numpy_conv_same(x, w, stride):
    """NHWC x HWIO cross-correlation with 'SAME' padding, by loops in float64."""
    n, h, wd, _ = x.shape
    kh, kw, _, o = w.shape
    out_h, out_w = -(-h // stride), -(-wd // stride)
    pad_h = max((out_h - 1) * stride + kh - h, 0)
    pad_w = max((out_w - 1) * stride + kw - wd, 0)
    xp = np.pad(x, ((0, 0), (pad_h // 2, pad_h - pad_h // 2), (pad_w // 2, pad_w - pad_w // 2),
                    (0, 0)))
    out = np.zeros((n, out_h, out_w, o))
    for i in range(out_h):
        for j in range(out_w):
            patch = xp[:, i * stride:i * stride + kh, j * stride:j * stride + kw, :]
            out[:, i, j, :] = np.einsum("nhwc,hwco->no", patch, w)
    return out


@needs_digits
def test_convnet_learns_and_its_layers_are_right(gallery):
    module, result = gallery("digits_convnet")
    assert result["test_accuracy"] > 0.5          # two epochs; chance is 0.1
    assert result["loss"][-1] < 0.8 * result["loss"][0]
    params = result["params"]
    x = np.random.default_rng(3).standard_normal((2, 8, 8, 1)).astype(np.float32)
    h1 = np.asarray(module["conv"](x, params["conv1"], 1))
    w1, b1 = (np.asarray(a, np.float64) for a in params["conv1"])
    np.testing.assert_allclose(h1, _numpy_conv_same(x, w1, 1) + b1, rtol=1e-4, atol=1e-5)
    h2 = np.asarray(module["conv"](h1, params["conv2"], 2))
    w2, b2 = (np.asarray(a, np.float64) for a in params["conv2"])
    np.testing.assert_allclose(h2, _numpy_conv_same(h1, w2, 2) + b2, rtol=1e-4, atol=1e-4)
    pooled = np.asarray(module["max_pool"](h2))
    np.testing.assert_array_equal(pooled, h2.reshape(2, 2, 2, 2, 2, -1).max(axis=(2, 4)))
