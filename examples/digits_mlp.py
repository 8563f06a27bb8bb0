"""An MLP classifier on scikit-learn's handwritten digits, trained with minibatch SGD.

Ported from JAX's examples/mnist_classifier_fromscratch.py (Copyright 2018 Google
LLC, Apache-2.0): `init_random_params`, `predict`, `loss`, `accuracy` and `update`
are JAX's code with only the imports changed (`jax` -> `plugax`). The data is the
8x8 digits that ship inside scikit-learn instead of MNIST (no download), so the
layer sizes start at 64 and the learning rate is larger.

    python examples/digits_mlp.py [--size tiny|small|full] [--out DIR]

Shows: jit, grad through a list-of-tuples pytree, scipy.special.logsumexp.
Full size reaches ~97% test accuracy.
"""
from typing import Sequence

import numpy.random as npr

import plugax.numpy as jnp
from plugax import grad, jit
from plugax.scipy.special import logsumexp

import _gallery


# --- JAX's code (imports changed) ----------------------------------------------
def init_random_params(scale, layer_sizes, rng=npr.RandomState(0)):
    return [(scale * rng.randn(m, n), scale * rng.randn(n))
            for m, n, in zip(layer_sizes[:-1], layer_sizes[1:])]


def predict(params, inputs):
    activations = inputs
    for w, b in params[:-1]:
        outputs = jnp.dot(activations, w) + b
        activations = jnp.tanh(outputs)

    final_w, final_b = params[-1]
    logits = jnp.dot(activations, final_w) + final_b
    return logits - logsumexp(logits, axis=1, keepdims=True)


def loss(params, batch):
    inputs, targets = batch
    preds = predict(params, inputs)
    return -jnp.mean(jnp.sum(preds * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    target_class = jnp.argmax(targets, axis=1)
    predicted_class = jnp.argmax(predict(params, inputs), axis=1)
    return jnp.mean(predicted_class == target_class)
# --------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> dict:
    args = _gallery.parse_args(__doc__.splitlines()[0], argv)
    layer_sizes = [64, _gallery.pick(args.size, 32, 128, 256), 10]
    param_scale = 0.1
    step_size = 0.1   # JAX's MNIST example: 0.001 with 784 -> 1024 -> 1024 -> 10
    num_epochs = _gallery.pick(args.size, 3, 10, 30)
    batch_size = 64

    train_images, train_labels, test_images, test_labels = _gallery.load_digits()
    num_train = train_images.shape[0]
    num_complete_batches, leftover = divmod(num_train, batch_size)
    num_batches = num_complete_batches + bool(leftover)

    def data_stream():
        rng = npr.RandomState(args.seed)
        while True:
            perm = rng.permutation(num_train)
            for i in range(num_batches):
                batch_idx = perm[i * batch_size:(i + 1) * batch_size]
                yield train_images[batch_idx], train_labels[batch_idx]

    batches = data_stream()

    @jit
    def update(params, batch):
        grads = grad(loss)(params, batch)
        return [(w - step_size * dw, b - step_size * db)
                for (w, b), (dw, db) in zip(params, grads)]

    params = init_random_params(param_scale, layer_sizes, npr.RandomState(args.seed))
    test = (test_images, test_labels)
    history = [float(loss(params, test))]
    bar = _gallery.progress(range(num_epochs), "epochs", args.quiet)
    for epoch in bar:
        for _ in range(num_batches):
            params = update(params, next(batches))
        history.append(float(loss(params, test)))
        _gallery.show(bar, test_loss=history[-1])
    train_acc = float(accuracy(params, (train_images, train_labels)))
    test_acc = float(accuracy(params, test))
    print(f"training set accuracy {train_acc:.3f}, test set accuracy {test_acc:.3f}")

    def draw(plt):
        plt.plot(history, marker="o")
        plt.xlabel("epoch")
        plt.ylabel("test cross-entropy")
        plt.title(f"MLP on digits: test accuracy {test_acc:.1%}")
    png = _gallery.save_figure(draw, args.out, "digits_mlp.png")
    return {"train_accuracy": train_acc, "test_accuracy": test_acc, "loss": history,
            "png": png}


if __name__ == "__main__":
    main()
