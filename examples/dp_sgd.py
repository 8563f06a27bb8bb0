"""Differentially private SGD (Abadi et al. 2016, https://arxiv.org/abs/1607.00133)
on scikit-learn's digits: every example's gradient is clipped to an L2 norm of at
most `l2_norm_clip` before the batch's gradients are summed and Gaussian noise is
added, so no single example can move the model by much.

Per-example gradients are `vmap(grad(loss))` over a batch whose examples are
batches of one. `private_grad` is JAX's code from examples/differentially_private_sgd.py
(Copyright 2019 Google LLC, Apache-2.0) with only the imports changed; the stax
convnet became a two-layer MLP written out, and the privacy accountant (it needs
tensorflow_privacy) is left out.

    python examples/dp_sgd.py [--size tiny|small|full] [--out DIR] [--no-dpsgd]

Shows: vmap(grad) per-example gradients, tree_util, lax.stop_gradient,
random.fold_in/normal inside jit, nn.relu/log_softmax, nn.initializers.
"""
from functools import partial
from typing import Sequence

import numpy.random as npr

import plugax.numpy as np
from plugax import grad, jit, nn, random, tree_util, vmap
from plugax.lax import stop_gradient

import _gallery


def init_params(key, layer_sizes):
    init = nn.initializers.glorot_normal()
    keys = random.split(key, len(layer_sizes) - 1)
    return [(init(k, (m, n)), np.zeros(n))
            for k, m, n in zip(keys, layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    for w, b in params[:-1]:
        inputs = nn.relu(np.dot(inputs, w) + b)
    w, b = params[-1]
    return np.dot(inputs, w) + b


def loss(params, batch):
    inputs, targets = batch
    logits = nn.log_softmax(predict(params, inputs))
    return -np.mean(np.sum(logits * targets, 1))  # cross entropy loss


def accuracy(params, batch):
    inputs, targets = batch
    return np.mean(np.argmax(predict(params, inputs), 1) == np.argmax(targets, 1))


# --- JAX's code (imports changed) ---------------------------------------------
def private_grad(params, batch, rng, l2_norm_clip, noise_multiplier, batch_size):
    """Return differentially private gradients for params, evaluated on batch."""
    def _clipped_grad(params, single_example_batch):
        """Evaluate gradient for a single-example batch and clip its grad norm."""
        grads = grad(loss)(params, single_example_batch)

        nonempty_grads, tree_def = tree_util.tree_flatten(grads)
        total_grad_norm = np.linalg.norm([np.linalg.norm(neg.ravel()) for neg in nonempty_grads])
        divisor = stop_gradient(np.amax((total_grad_norm / l2_norm_clip, 1.)))
        normalized_nonempty_grads = [g / divisor for g in nonempty_grads]
        return tree_util.tree_unflatten(tree_def, normalized_nonempty_grads)

    px_clipped_grad_fn = vmap(partial(_clipped_grad, params))
    std_dev = l2_norm_clip * noise_multiplier
    noise_ = lambda n: n + std_dev * random.normal(rng, n.shape)
    normalize_ = lambda n: n / float(batch_size)
    tree_map = tree_util.tree_map
    sum_ = lambda n: np.sum(n, 0)  # aggregate
    aggregated_clipped_grads = tree_map(sum_, px_clipped_grad_fn(batch))
    noised_aggregated_clipped_grads = tree_map(noise_, aggregated_clipped_grads)
    normalized_noised_aggregated_clipped_grads = (
        tree_map(normalize_, noised_aggregated_clipped_grads))
    return normalized_noised_aggregated_clipped_grads
# --------------------------------------------------------------------------------


def shape_as_single_example_batches(images, labels):
    """[batch, 64] -> [batch, 1, 64]: vmap then maps over batches of one example."""
    return images[:, None, :], labels[:, None, :]


def main(argv: Sequence[str] | None = None) -> dict:
    def flags(parser):
        parser.add_argument("--no-dpsgd", dest="dpsgd", action="store_false",
                            help="train with plain SGD (the non-private baseline)")
        parser.add_argument("--l2-norm-clip", type=float, default=1.0)
        parser.add_argument("--noise-multiplier", type=float, default=1.1)
        parser.add_argument("--learning-rate", type=float, default=0.5)
    args = _gallery.parse_args(__doc__.splitlines()[0], argv, flags)
    batch_size = 64
    epochs = _gallery.pick(args.size, 2, 10, 40)
    train_images, train_labels, test_images, test_labels = _gallery.load_digits()
    num_batches = train_images.shape[0] // batch_size
    key = random.PRNGKey(args.seed)
    params = init_params(key, [64, 64, 10])

    @jit
    def private_update(params, i, batch):
        rng = random.fold_in(key, i)  # a new key for each step's noise
        grads = private_grad(params, batch, rng, args.l2_norm_clip, args.noise_multiplier,
                             batch_size)
        return tree_util.tree_map(lambda p, g: p - args.learning_rate * g, params, grads)

    @jit
    def update(params, i, batch):
        return tree_util.tree_map(lambda p, g: p - args.learning_rate * g, params,
                                  grad(loss)(params, batch))

    test = (test_images, test_labels)
    history = [float(loss(params, test))]
    accuracies = [float(accuracy(params, test))]
    rng = npr.RandomState(args.seed)
    step = 0
    bar = _gallery.progress(range(epochs), "epochs (DP-SGD)" if args.dpsgd else "epochs",
                            args.quiet)
    for _ in bar:
        perm = rng.permutation(train_images.shape[0])
        for b in range(num_batches):
            idx = perm[b * batch_size:(b + 1) * batch_size]
            batch = (train_images[idx], train_labels[idx])
            if args.dpsgd:
                params = private_update(params, step, shape_as_single_example_batches(*batch))
            else:
                params = update(params, step, batch)
            step += 1
        history.append(float(loss(params, test)))
        accuracies.append(float(accuracy(params, test)))
        _gallery.show(bar, test_loss=history[-1], test_accuracy=accuracies[-1])
    print(f"{'DP-SGD' if args.dpsgd else 'SGD'}: test accuracy {accuracies[-1]:.3f} after "
          f"{step} steps (clip {args.l2_norm_clip}, noise multiplier {args.noise_multiplier})")

    def draw(plt):
        plt.plot(accuracies, marker="o")
        plt.xlabel("epoch")
        plt.ylabel("test accuracy")
        plt.ylim(0, 1)
        plt.title("DP-SGD on digits" if args.dpsgd else "SGD on digits")
    png = _gallery.save_figure(draw, args.out, "dp_sgd.png")
    return {"test_accuracy": accuracies[-1], "accuracy": accuracies, "loss": history,
            "params": params, "png": png}


if __name__ == "__main__":
    main()
