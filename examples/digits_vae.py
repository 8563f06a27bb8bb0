"""A variational autoencoder (Kingma & Welling 2014) on scikit-learn's digits.

The encoder maps an 8x8 image to a Gaussian over a small latent space; a sample
from it (the reparameterisation trick: mean + std * noise, so `grad` flows
through the sample) is decoded to Bernoulli logits over the pixels. Training
maximises the evidence lower bound (ELBO): the reconstruction's log-likelihood
minus the KL divergence from the prior N(0, I). Images are binarised afresh at
every step with `random.bernoulli`, as JAX's examples/mnist_vae.py does; this
program follows that example's structure without its stax layers.

    python examples/digits_vae.py [--size tiny|small|full] [--out DIR]

Shows: random.split/normal/bernoulli inside jit, grad of a stochastic objective,
nn.relu/softplus/initializers, tree.map, an Adam optimiser on a pytree.
"""
from typing import Sequence

import numpy as np

import plugax.numpy as jnp
from plugax import grad, jit, nn, random

import _gallery


def init_mlp(key, sizes):
    init = nn.initializers.glorot_normal()
    keys = random.split(key, len(sizes) - 1)
    return [(init(k, (m, n)), jnp.zeros(n)) for k, m, n in zip(keys, sizes[:-1], sizes[1:])]


def mlp(params, x):
    for w, b in params[:-1]:
        x = nn.relu(x @ w + b)
    w, b = params[-1]
    return x @ w + b


def encode(params, images):
    out = mlp(params["encoder"], images)
    mean, raw_std = jnp.split(out, 2, axis=-1)
    return mean, nn.softplus(raw_std) + 1e-4


def gaussian_kl(mean, std):
    """KL(N(mean, std^2) || N(0, 1)), summed over the latent dimensions."""
    return 0.5 * jnp.sum(mean ** 2 + std ** 2 - 1.0 - 2.0 * jnp.log(std), axis=-1)


def bernoulli_logpdf(logits, x):
    """log p(x | logits) of independent Bernoulli pixels, summed over pixels."""
    return jnp.sum(x * nn.log_sigmoid(logits) + (1 - x) * nn.log_sigmoid(-logits), axis=-1)


def elbo(key, params, images):
    """The batch's mean ELBO, estimated with one latent sample per image."""
    mean, std = encode(params, images)
    z = mean + std * random.normal(key, mean.shape)
    logits = mlp(params["decoder"], z)
    return jnp.mean(bernoulli_logpdf(logits, images) - gaussian_kl(mean, std))


def sample_images(key, params, count: int, latent: int):
    """Pixel probabilities of `count` images decoded from prior draws."""
    z = random.normal(key, (count, latent))
    return nn.sigmoid(mlp(params["decoder"], z))


def main(argv: Sequence[str] | None = None) -> dict:
    args = _gallery.parse_args(__doc__.splitlines()[0], argv)
    latent, hidden = 4, _gallery.pick(args.size, 64, 128, 256)
    steps = _gallery.pick(args.size, 300, 1500, 6000)
    batch_size = 64
    train_images, _, test_images, _ = _gallery.load_digits()
    key = random.PRNGKey(args.seed)
    k_enc, k_dec, key = random.split(key, 3)
    params = {"encoder": init_mlp(k_enc, [64, hidden, 2 * latent]),
              "decoder": init_mlp(k_dec, [latent, hidden, 64])}
    opt_init, opt_update, get_params = _gallery.adam(1e-3 if args.size == "full" else 3e-3)
    opt_state = opt_init(params)

    @jit
    def update(i, opt_state, images, key):
        k_binarize, k_elbo = random.split(key)
        binarized = random.bernoulli(k_binarize, images).astype(jnp.float32)
        loss = lambda p: -elbo(k_elbo, p, binarized)
        return opt_update(i, grad(loss)(get_params(opt_state)), opt_state)

    @jit
    def test_elbo(params, key):
        k_binarize, k_elbo = random.split(key)
        binarized = random.bernoulli(k_binarize, test_images).astype(jnp.float32)
        return elbo(k_elbo, params, binarized)

    eval_key = random.PRNGKey(123)          # the same binarisation and noise each time
    history = [float(test_elbo(params, eval_key))]
    rng = np.random.RandomState(args.seed)
    bar = _gallery.progress(range(steps), "steps", args.quiet)
    for i in bar:
        idx = rng.randint(0, train_images.shape[0], batch_size)
        opt_state = update(i, opt_state, train_images[idx], random.fold_in(key, i))
        if (i + 1) % max(steps // 10, 1) == 0:
            history.append(float(test_elbo(get_params(opt_state), eval_key)))
            _gallery.show(bar, test_elbo=history[-1])
    params = get_params(opt_state)
    print(f"test ELBO per image: {history[0]:.2f} -> {history[-1]:.2f} nats")

    samples = np.asarray(sample_images(random.PRNGKey(7), params, 40, latent))

    def draw(plt):
        grid = samples.reshape(4, 10, 8, 8).transpose(0, 2, 1, 3).reshape(32, 80)
        plt.imshow(grid, cmap="gray_r")
        plt.axis("off")
        plt.title(f"VAE samples (test ELBO {history[-1]:.1f} nats)")
    png = _gallery.save_figure(draw, args.out, "digits_vae.png")
    return {"test_elbo": history, "samples": samples, "params": params, "png": png}


if __name__ == "__main__":
    main()
