"""Global arrays from host data: `device_put(x, sharding)` and JAX's `make_array_from_*`.

Why separate from spmd.py: these build sharded Arrays without compiling
anything; each process places only its own devices' blocks (runtime/sharded.py),
which is what lets a multi-process program start from data no host holds whole.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from plugax.extend import Array, ShapedArray, leaf_aval, runtime

from .devices import process_count
from .sharding import NamedSharding, Sharding

__all__ = ["put_sharded", "make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays"]


def put_sharded(leaf: Any, sharding: Sharding) -> Any:
    """`device_put(leaf, sharding)` of a concrete leaf: the value split over the
    sharding's devices (placement.py stages a traced one as a sharding constraint)."""
    aval = leaf_aval(leaf)
    if isinstance(sharding, NamedSharding):
        sharding.check_shape(aval.shape, "device_put's argument")
    value = np.asarray(leaf, dtype=aval.dtype)
    buf = runtime().sharded.put(value, aval, sharding._device_sharding(len(aval.shape)))
    return Array.from_buffer(buf, aval)


def make_array_from_callback(shape: Sequence[int], sharding: Sharding,
                             data_callback: Callable[[tuple], Any], dtype: Any = None) -> Any:
    """A global Array of `shape` laid out as `sharding`, each of this process's devices
    holding `data_callback(index)` (its index: a tuple of slices into the global array);
    how a program loads data that no single host holds whole."""
    shape = tuple(int(n) for n in shape)
    if isinstance(sharding, NamedSharding):
        sharding.check_shape(shape, "make_array_from_callback")
    sharded = runtime().sharded
    devs = sharding._device_list()
    idx = sharded.device_indices(sharding._hlo(len(shape)), shape, len(devs))
    pieces = {}
    for k in sharded.local_positions(devs):
        piece = np.asarray(data_callback(idx[k]))
        want = tuple(len(range(*sl.indices(n))) for sl, n in zip(idx[k], shape))
        if piece.shape != want:
            raise ValueError(f"make_array_from_callback: data_callback({idx[k]}) returned "
                             f"shape {piece.shape}, but that index of shape {shape} is {want}")
        pieces[k] = piece
    first = next(iter(pieces.values()))
    aval = leaf_aval(first.astype(dtype) if dtype is not None else first)
    aval = ShapedArray(shape, aval.dtype, False)
    buf = sharded.put_pieces(pieces, aval, sharding._device_sharding(len(shape)))
    return Array.from_buffer(buf, aval)


def make_array_from_process_local_data(sharding: Sharding, local_data: Any,
                                       global_shape: Sequence[int] | None = None) -> Any:
    """A global Array from each process's part of it: this process's devices cover a
    block of the global array (the bounding box of their pieces), and `local_data` is
    that block. Without `global_shape`, the block is taken to be the whole array along
    every dimension but the first, split evenly over the processes along the first."""
    local = np.asarray(local_data)
    if global_shape is None:
        global_shape = ((local.shape[0] * process_count(),) + local.shape[1:]
                        if local.ndim and process_count() > 1 else local.shape)
    shape = tuple(int(n) for n in global_shape)
    sharded = runtime().sharded
    devs = sharding._device_list()
    idx = sharded.device_indices(sharding._hlo(len(shape)), shape, len(devs))
    mine = sharded.local_positions(devs)
    starts = [min(idx[k][d].indices(n)[0] for k in mine) for d, n in enumerate(shape)]
    stops = [max(idx[k][d].indices(n)[1] for k in mine) for d, n in enumerate(shape)]
    block = tuple(b - a for a, b in zip(starts, stops))
    if local.shape != block:
        raise ValueError(f"make_array_from_process_local_data: this process's devices hold "
                         f"the block {tuple(slice(a, b) for a, b in zip(starts, stops))} of "
                         f"the global shape {shape}, of shape {block}, but local_data has "
                         f"shape {local.shape}")

    def callback(index: tuple) -> np.ndarray:
        return local[tuple(slice(sl.indices(n)[0] - a, sl.indices(n)[1] - a)
                           for sl, n, a in zip(index, shape, starts))]
    return make_array_from_callback(shape, sharding, callback, local.dtype)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding: Sharding,
                                         arrays: Sequence[Any]) -> Any:
    """A global Array from one single-device Array per device of this process (in the
    order of the sharding's devices), each holding that device's block."""
    sharded = runtime().sharded
    devs = sharding._device_list()
    mine = sharded.local_positions(devs)
    if len(arrays) != len(mine):
        raise ValueError(f"make_array_from_single_device_arrays: {len(arrays)} arrays for "
                         f"{len(mine)} devices of this process")
    pieces = dict(zip(mine, (np.asarray(a) for a in arrays)))
    return make_array_from_callback(shape, sharding,
                                    lambda index, it=iter(mine): pieces[next(it)],
                                    np.asarray(arrays[0]).dtype if arrays else None)
