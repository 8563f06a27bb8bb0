"""A small convolutional network on scikit-learn's 8x8 digits, trained with Adam.

Two 3x3 convolutions (the second with stride 2), ReLU, a 2x2 max-pool and a dense
softmax layer: the layers of JAX's stax convnets (examples/differentially_private_sgd.py,
resnet50.py) written out with `lax.conv_general_dilated` and `lax.reduce_window`
in the NHWC / HWIO layout those examples use.

    python examples/digits_convnet.py [--size tiny|small|full] [--out DIR]

Shows: lax.conv_general_dilated and lax.reduce_window (and their gradients) under
jit, nn.initializers.he_normal, nn.relu, nn.log_softmax, an Adam optimiser.
"""
from typing import Sequence

import numpy as np

import plugax.numpy as jnp
from plugax import grad, jit, lax, nn, random

import _gallery

DIMENSION_NUMBERS = ("NHWC", "HWIO", "NHWC")


def init_params(key, channels=(16, 32), num_classes=10):
    """Conv kernels (HWIO) and biases, then a dense layer over the flattened features."""
    k1, k2, k3 = random.split(key, 3)
    he = nn.initializers.he_normal()
    c1, c2 = channels
    return {"conv1": (he(k1, (3, 3, 1, c1)), jnp.zeros(c1)),
            "conv2": (he(k2, (3, 3, c1, c2)), jnp.zeros(c2)),
            "dense": (nn.initializers.glorot_normal()(k3, (2 * 2 * c2, num_classes)),
                      jnp.zeros(num_classes))}


def conv(x, params, stride):
    w, b = params
    return lax.conv_general_dilated(x, w, (stride, stride), "SAME",
                                    dimension_numbers=DIMENSION_NUMBERS) + b


def max_pool(x, size=2):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, size, size, 1), (1, size, size, 1),
                             "VALID")


def predict(params, images):
    """Log-probabilities of the ten classes for a batch of images [n, 8, 8, 1]."""
    x = nn.relu(conv(images, params["conv1"], 1))       # [n, 8, 8, c1]
    x = nn.relu(conv(x, params["conv2"], 2))            # [n, 4, 4, c2]
    x = max_pool(x)                                     # [n, 2, 2, c2]
    w, b = params["dense"]
    return nn.log_softmax(x.reshape(x.shape[0], -1) @ w + b)


def loss(params, batch):
    images, targets = batch
    return -jnp.mean(jnp.sum(predict(params, images) * targets, axis=1))


def accuracy(params, batch):
    images, targets = batch
    return jnp.mean(jnp.argmax(predict(params, images), 1) == jnp.argmax(targets, 1))


def as_images(flat):
    return flat.reshape(-1, 8, 8, 1)


def main(argv: Sequence[str] | None = None) -> dict:
    args = _gallery.parse_args(__doc__.splitlines()[0], argv)
    channels = _gallery.pick(args.size, (8, 16), (16, 32), (32, 64))
    epochs = _gallery.pick(args.size, 2, 8, 20)
    batch_size = 64
    train_images, train_labels, test_images, test_labels = _gallery.load_digits()
    train_images, test_images = as_images(train_images), as_images(test_images)
    params = init_params(random.PRNGKey(args.seed), channels)
    opt_init, opt_update, get_params = _gallery.adam(3e-3)
    opt_state = opt_init(params)

    @jit
    def update(i, opt_state, batch):
        return opt_update(i, grad(loss)(get_params(opt_state), batch), opt_state)

    test = (test_images, test_labels)
    history = [float(loss(params, test))]
    accuracies = [float(accuracy(params, test))]
    rng = np.random.RandomState(args.seed)
    num_batches = train_images.shape[0] // batch_size
    step = 0
    bar = _gallery.progress(range(epochs), "epochs", args.quiet)
    for _ in bar:
        perm = rng.permutation(train_images.shape[0])
        for b in range(num_batches):
            idx = perm[b * batch_size:(b + 1) * batch_size]
            opt_state = update(step, opt_state, (train_images[idx], train_labels[idx]))
            step += 1
        params = get_params(opt_state)
        history.append(float(loss(params, test)))
        accuracies.append(float(accuracy(params, test)))
        _gallery.show(bar, test_loss=history[-1], test_accuracy=accuracies[-1])
    print(f"convnet: test accuracy {accuracies[-1]:.3f} after {step} steps")

    def draw(plt):
        plt.plot(history, marker="o", label="test cross-entropy")
        plt.plot(accuracies, marker="s", label="test accuracy")
        plt.xlabel("epoch")
        plt.legend()
        plt.title("convnet on digits")
    png = _gallery.save_figure(draw, args.out, "digits_convnet.png")
    return {"test_accuracy": accuracies[-1], "accuracy": accuracies, "loss": history,
            "params": params, "png": png}


if __name__ == "__main__":
    main()
