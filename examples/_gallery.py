"""What the gallery's programs share: command-line flags, the digits data, a
progress bar, a PNG writer and a small Adam, so each example file holds only its model.

Not an example itself (the leading underscore keeps the test runner off it). The
optional pieces come from the `examples` extra (`pip install -e '.[examples]'`):
scikit-learn ships the digits data inside the package (no download); tqdm draws
the progress bars; matplotlib writes the plots. Without tqdm a loop runs silently;
without matplotlib no plot is written and the program says so.
"""
from __future__ import annotations

import argparse
import pathlib
from typing import Any, Callable, Iterable, Sequence

import numpy as np

import plugax
import plugax.numpy as jnp

SIZES = ("tiny", "small", "full")
DEFAULT_OUT = pathlib.Path(__file__).parent / "out"     # git-ignored


def parse_args(description: str, argv: Sequence[str] | None,
               extra: Callable[[argparse.ArgumentParser], None] | None = None
               ) -> argparse.Namespace:
    """`--size tiny|small|full` (tiny: the tests' seconds-long run; small, the
    default: a run that already gives a sensible result; full: the published
    settings), `--out DIR` for the PNG, `--seed`, `--quiet` (no progress bars)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--size", choices=SIZES, default="small")
    parser.add_argument("--out", type=pathlib.Path, default=DEFAULT_OUT,
                        help=f"folder for the plot (default {DEFAULT_OUT})")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    if extra is not None:
        extra(parser)
    return parser.parse_args(argv)


def pick(size: str, tiny: Any, small: Any, full: Any) -> Any:
    return {"tiny": tiny, "small": small, "full": full}[size]


def load_digits(n_test: int = 297, seed: int = 0) -> tuple[np.ndarray, ...]:
    """scikit-learn's 1,797 8x8 handwritten digits, pixels scaled to [0, 1], as
    (train_images, train_labels, test_images, test_labels) with one-hot labels,
    split once with a fixed permutation."""
    try:
        from sklearn.datasets import load_digits as sk_load_digits
    except ImportError as err:
        raise SystemExit("this example needs scikit-learn's digits data: "
                         "pip install -e '.[examples]'") from err
    digits = sk_load_digits()
    images = (digits.data / 16.0).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[digits.target]
    perm = np.random.RandomState(seed).permutation(len(images))
    test, train = perm[:n_test], perm[n_test:]
    return images[train], labels[train], images[test], labels[test]


def progress(iterable: Iterable, desc: str, quiet: bool = False, **kw: Any) -> Any:
    """A tqdm progress bar over `iterable` (plain iteration without tqdm or when quiet)."""
    if quiet:
        return iterable
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return iterable
    return tqdm(iterable, desc=desc, **kw)


def show(bar: Any, **values: float) -> None:
    """Show the latest numbers (loss, accuracy) beside a progress bar."""
    if hasattr(bar, "set_postfix"):
        bar.set_postfix({k: f"{v:.4g}" for k, v in values.items()}, refresh=False)


def save_figure(draw: Callable[[Any], None], out: pathlib.Path, name: str) -> pathlib.Path | None:
    """Call `draw(plt)` on a fresh figure and write it to `out/name` as PNG.

    Returns the path, or None (and says why) when matplotlib is missing. The Agg
    backend needs no display, so this works on a server and in the tests."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"matplotlib is not installed: no {name} (pip install -e '.[examples]')")
        return None
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    plt.figure(figsize=(6, 4))
    draw(plt)
    path = out / name
    plt.tight_layout()
    plt.savefig(path, dpi=80)
    plt.close("all")
    print(f"wrote {path}")
    return path


def adam(step_size: float, b1: float = 0.9, b2: float = 0.999, eps: float = 1e-8):
    """Adam as JAX's example_libraries.optimizers has it: (init, update, get_params),
    with the state a pytree so that `update` can run inside `jit`."""
    def init(params):
        zeros = plugax.tree.map(jnp.zeros_like, params)
        return params, zeros, zeros

    def update(i, grads, state):
        params, m, v = state
        m = plugax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, grads)
        v = plugax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, grads)
        t = i + 1
        def step(p, m, v):
            mhat = m / (1 - b1 ** t)
            vhat = v / (1 - b2 ** t)
            return p - step_size * mhat / (jnp.sqrt(vhat) + eps)
        return plugax.tree.map(step, params, m, v), m, v

    def get_params(state):
        return state[0]

    return init, update, get_params

