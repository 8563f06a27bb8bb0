"""`plugax.numpy.ufunc` and `frompyfunc`: a scalar function made into a NumPy-style
universal function, with JAX's methods (__call__, outer, reduce, accumulate, at,
reduceat).

The elementwise call is `vectorize` (one traced call, vmapped); reduce and
accumulate fold the function over the (static) length of the axis, so they trace
to one application per element -- fine for the short axes ufunc methods are used
on, and exact for any associative or non-associative function (the order is
NumPy's, left to right). plugax's own `add`, `multiply`, ... stay plain functions
(their reductions are `sum`, `prod`, ... with their own primitives).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

import plugax.numpy as pnp
from plugax.extend import get_aval

from .numpy_vectorize import vectorize

__all__ = ["ufunc", "frompyfunc", "NUMPY"]


class ufunc:
    """A universal function over a scalar function `func` of `nin` arguments giving
    `nout` results (JAX's jnp.ufunc)."""

    def __init__(self, func: Callable, /, nin: int, nout: int, *, name: str | None = None,
                 nargs: int | None = None, identity: Any = None, call: Callable | None = None,
                 reduce: Callable | None = None, accumulate: Callable | None = None,
                 at: Callable | None = None, reduceat: Callable | None = None):
        self._func, self.nin, self.nout = func, int(nin), int(nout)
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.nargs = int(nargs or nin)
        self.identity = identity
        self._call = call or vectorize(func)
        self._reduce, self._accumulate, self._at, self._reduceat = reduce, accumulate, at, \
            reduceat

    def __repr__(self) -> str:
        return f"<plugax.numpy.ufunc '{self.__name__}'>"

    def __call__(self, *args: Any, out: None = None, where: None = None) -> Any:
        if out is not None:
            raise NotImplementedError(f"{self.__name__}: the 'out' argument is not supported "
                                      f"(arrays are immutable)")
        if where is not None:
            raise NotImplementedError(f"{self.__name__}: the 'where' argument is not "
                                      f"supported (as in JAX)")
        if len(args) != self.nin:
            raise TypeError(f"{self.__name__}() takes {self.nin} positional arguments but "
                            f"{len(args)} were given")
        return self._call(*args)

    def _binary(self, method: str) -> None:
        if self.nin != 2 or self.nout != 1:
            raise ValueError(f"{method} only supported for binary ufuncs with a single "
                             f"output; {self.__name__} has nin={self.nin}, nout={self.nout}")

    def outer(self, A: Any, B: Any, /) -> Any:
        """func(a, b) for every pair: the result has shape A.shape + B.shape."""
        self._binary("outer")
        A, B = pnp.asarray(A), pnp.asarray(B)
        nb = len(get_aval(B).shape)
        return self(pnp.reshape(A, get_aval(A).shape + (1,) * nb), B)

    def reduce(self, a: Any, axis: int | None = 0, dtype: Any = None, out: None = None,
               keepdims: bool = False, initial: Any = None, where: None = None) -> Any:
        """Fold func along axis (None: over the flattened array), left to right, from
        `initial` or else the identity (JAX's rule: a given identity is the start value
        even for a non-empty axis), or else from the first element."""
        self._binary("reduce")
        if self._reduce is not None:
            return self._reduce(a, axis, dtype=dtype, keepdims=keepdims, initial=initial)
        if out is not None or where is not None:
            raise NotImplementedError(f"{self.__name__}.reduce: 'out' and 'where' are not "
                                      f"supported")
        if isinstance(axis, tuple):
            raise NotImplementedError(f"{self.__name__}.reduce: a tuple of axes is not "
                                      f"supported (as in JAX)")
        a = pnp.asarray(a, dtype=dtype)
        nd = len(get_aval(a).shape)
        if axis is None:
            shape = (1,) * nd if keepdims else ()
            result = self._fold(pnp.ravel(a), 0, initial)
        else:
            axis = axis % nd
            shape = get_aval(a).shape[:axis] + ((1,) if keepdims else ()) + \
                get_aval(a).shape[axis + 1:]
            result = self._fold(a, axis, initial)
        return pnp.reshape(result, shape)

    def _fold(self, a: Any, axis: int, initial: Any) -> Any:
        moved = pnp.moveaxis(a, axis, 0)
        n, rest = get_aval(moved).shape[0], get_aval(moved).shape[1:]
        start = initial if initial is not None else self.identity
        if n == 0:
            if start is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 f"which has no identity")
            return pnp.full(rest, start, get_aval(moved).dtype)
        if start is None:
            acc, first = moved[0], 1
        else:
            acc, first = pnp.full(rest, start, get_aval(moved).dtype), 0
        for i in range(first, n):
            acc = self(acc, moved[i])
        return acc

    def _fold_from_first(self, a: Any) -> Any:
        acc = a[0]
        for i in range(1, get_aval(a).shape[0]):
            acc = self(acc, a[i])
        return acc

    def accumulate(self, a: Any, axis: int = 0, dtype: Any = None, out: None = None) -> Any:
        """The running fold along axis (accumulate(x)[i] = func(...func(x[0], x[1])...))."""
        self._binary("accumulate")
        if self._accumulate is not None:
            return self._accumulate(a, axis, dtype=dtype)
        a = pnp.moveaxis(pnp.asarray(a, dtype=dtype), axis, 0)
        acc = [a[0]] if get_aval(a).shape[0] else []
        for i in range(1, get_aval(a).shape[0]):
            acc.append(self(acc[-1], a[i]))
        out_ = pnp.stack(acc, 0) if acc else a
        return pnp.moveaxis(out_, 0, axis)

    def at(self, a: Any, indices: Any, b: Any = None, /, *, inplace: bool = True) -> Any:
        """a with func applied at indices (with b for binary ufuncs), one index at a time,
        so repeated indices apply repeatedly, as NumPy's and JAX's."""
        if inplace:
            raise NotImplementedError("plugax arrays are immutable (as JAX's): call "
                                      f"{self.__name__}.at(a, indices, b, inplace=False)")
        if self._at is not None:
            return self._at(a, indices, b)
        a = pnp.asarray(a)
        idx = np.asarray(indices) if not isinstance(indices, tuple) else indices
        if isinstance(idx, tuple):
            raise NotImplementedError(f"{self.__name__}.at: tuple indices are not supported; "
                                      f"pass integer indices into the first axis")
        flat = np.atleast_1d(idx)
        if b is not None:
            b = pnp.broadcast_to(pnp.asarray(b), flat.shape + get_aval(a).shape[1:])
        for k, i in enumerate(flat):
            args = (a[int(i)],) if b is None else (a[int(i)], b[k])
            a = a.at[int(i)].set(self(*args))
        return a

    def reduceat(self, a: Any, indices: Any, axis: int = 0, dtype: Any = None,
                 out: None = None) -> Any:
        """Reductions over the slices [indices[i], indices[i+1]) along axis (concrete
        indices); where indices[i] >= indices[i+1], the entry a[indices[i]]."""
        self._binary("reduceat")
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis, dtype=dtype)
        a = pnp.moveaxis(pnp.asarray(a, dtype=dtype), axis, 0)
        idx = [int(i) for i in np.asarray(indices).ravel()]
        n = get_aval(a).shape[0]
        parts = []
        for k, i in enumerate(idx):
            j = idx[k + 1] if k + 1 < len(idx) else n
            parts.append(self._fold_from_first(a[i:j]) if i < j else a[i])
        return pnp.moveaxis(pnp.stack(parts, 0), 0, axis)


def frompyfunc(func: Callable, /, nin: int, nout: int, *, identity: Any = None) -> ufunc:
    """A ufunc from a scalar plugax function (JAX's frompyfunc)."""
    return ufunc(func, nin, nout, identity=identity)


NUMPY: dict[str, Any] = {"ufunc": ufunc, "frompyfunc": frompyfunc}
