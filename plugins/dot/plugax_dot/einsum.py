"""plugax.numpy.einsum: subscripts parsed here, evaluated as dot_generals left to right.

Plan for `einsum("ij,jk->ik", x, y)`: every operand first loses its repeated
letters (a diagonal: a constant mask keeps the equal-index entries, a
reduce_sum drops the duplicate axis); a shared letter of size 1 in one operand
and larger in the other is squeezed from the first (NumPy broadcasting, as in
JAX); then the letters no later step needs go (reduce_sum). Two operands then
meet in one dot_general: shared letters that are still needed later are batch
dimensions, the other shared letters are contracted. A final transpose puts the
letters in the output's order.
"""
from __future__ import annotations

import string
from typing import Any, Sequence

import numpy as np

from plugax.extend import Array, get_aval

from .dot_general import dot_general
from .numpy_api import asarrays, result_dtype


def parse_subscripts(subscripts: str, ndims: Sequence[int]) -> tuple[list[str], str]:
    """Input letter strings (one per operand, '...' expanded) and the output letters.

    '...' stands for the same trailing-aligned letters in every operand; the implicit
    output (no '->') is the '...' letters, then the letters used exactly once, sorted.
    """
    spec = subscripts.replace(" ", "")
    inputs, arrow, output = spec.partition("->")
    terms = inputs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(f"einsum: subscripts {subscripts!r} name {len(terms)} operands, "
                         f"got {len(ndims)}")
    spare = (c for c in string.ascii_uppercase + string.ascii_lowercase if c not in spec)
    n_ell = max([n - len(t.replace("...", "")) for t, n in zip(terms, ndims) if "..." in t],
                default=0)
    ellipsis = "".join(next(spare) for _ in range(max(n_ell, 0)))
    expanded = []
    for term, n in zip(terms, ndims):
        if "..." in term:
            term = term.replace("...", ellipsis[len(ellipsis) - (n - len(term) + 3):])
        if len(term) != n or not all(c in string.ascii_letters for c in term):
            raise ValueError(f"einsum: term {term!r} of {subscripts!r} does not match an "
                             f"operand of rank {n}")
        expanded.append(term)
    if arrow:
        output = output.replace("...", ellipsis)
    else:
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        output = ellipsis + "".join(sorted(c for c, k in counts.items()
                                           if k == 1 and c not in ellipsis))
    unknown = [c for c in output if c not in "".join(expanded)]
    if unknown or len(set(output)) != len(output):
        raise ValueError(f"einsum: output {output!r} of {subscripts!r} must use distinct "
                         f"letters that appear in the inputs")
    return expanded, output


def _diagonal(x: Any, letters: str) -> tuple[Any, str]:
    """Collapse each repeated letter to one axis by keeping the diagonal and summing."""
    import plugax.lax as lax
    for c in dict.fromkeys(letters):
        while letters.count(c) > 1:
            p = letters.index(c)
            q = letters.index(c, p + 1)
            aval = get_aval(x)
            shape = [1] * aval.ndim
            shape[p] = shape[q] = aval.shape[p]
            eye = np.eye(aval.shape[p], dtype=bool).reshape(shape)
            mask = Array(np.broadcast_to(eye, aval.shape).copy())
            zeros = lax.broadcast_in_dim(Array(np.zeros((), aval.dtype)), aval.shape, ())
            x = lax.reduce_sum(lax.select_n(mask, zeros, x), (p,))
            letters = letters[:p] + letters[p + 1:]
    return x, letters


def _keep_only(x: Any, letters: str, keep: set) -> tuple[Any, str]:
    """Remove diagonals, then sum away the letters nobody needs any more."""
    import plugax.lax as lax
    x, letters = _diagonal(x, letters)
    gone = tuple(i for i, c in enumerate(letters) if c not in keep)
    if gone:
        x = lax.reduce_sum(x, gone)
        letters = "".join(c for c in letters if c in keep)
    return x, letters


def _unbroadcast(x: Any, xl: str, y: Any, yl: str) -> tuple[Any, str, Any, str]:
    """Squeeze a shared letter's size-1 axis where the other operand's is larger.

    NumPy (and JAX) broadcast a letter of size 1 against the same letter of any
    size; after the squeeze the letter belongs to the other operand alone, so it
    is summed away or kept like any unshared letter. Other size mismatches are
    errors naming the letter.
    """
    import plugax.lax as lax
    xs, ys = get_aval(x).shape, get_aval(y).shape
    drop_x, drop_y = [], []
    for i, c in enumerate(xl):
        j = yl.find(c)
        if j < 0 or xs[i] == ys[j]:
            continue
        if xs[i] != 1 and ys[j] != 1:
            raise ValueError(f"einsum: letter {c!r} has size {xs[i]} in one operand and "
                             f"{ys[j]} in another (shapes {xs} and {ys}); sizes must agree "
                             f"or be 1")
        (drop_x if xs[i] == 1 else drop_y).append(i if xs[i] == 1 else j)
    if drop_x:
        x, xl = lax.squeeze(x, tuple(drop_x)), "".join(
            c for i, c in enumerate(xl) if i not in drop_x)
    if drop_y:
        y, yl = lax.squeeze(y, tuple(drop_y)), "".join(
            c for j, c in enumerate(yl) if j not in drop_y)
    return x, xl, y, yl


def _pair(x: Any, xl: str, y: Any, yl: str, keep: set, dtype: Any,
          precision: Any = None) -> tuple[Any, str]:
    """One dot_general: shared letters still needed are batch dims, the rest contract."""
    x, xl = _diagonal(x, xl)
    y, yl = _diagonal(y, yl)
    x, xl, y, yl = _unbroadcast(x, xl, y, yl)
    x, xl = _keep_only(x, xl, keep | set(yl))
    y, yl = _keep_only(y, yl, keep | set(xl))
    shared = [c for c in xl if c in yl]
    batch = [c for c in shared if c in keep]
    contract = [c for c in shared if c not in keep]
    dims = ((tuple(xl.index(c) for c in contract), tuple(yl.index(c) for c in contract)),
            (tuple(xl.index(c) for c in batch), tuple(yl.index(c) for c in batch)))
    out = dot_general(x, y, dims, precision=precision, preferred_element_type=dtype)
    letters = "".join(batch) + "".join(c for c in xl if c not in shared) \
        + "".join(c for c in yl if c not in shared)
    return out, letters


def einsum(subscripts: str, *operands: Any, precision: Any = None,
           preferred_element_type: Any = None, optimize: Any = None) -> Any:
    """numpy.einsum for any number of operands (contracted pairwise, left to right)."""
    import plugax.lax as lax
    xs = asarrays(*operands)
    terms, output = parse_subscripts(subscripts, [get_aval(x).ndim for x in xs])
    dtype = preferred_element_type if preferred_element_type is not None \
        else result_dtype("einsum", *xs)
    x, letters = xs[0], terms[0]
    for k in range(1, len(xs)):
        later = set(output).union(*terms[k + 1:])
        x, letters = _pair(x, letters, xs[k], terms[k], later, dtype, precision)
    x, letters = _keep_only(x, letters, set(output))
    perm = tuple(letters.index(c) for c in output)
    return lax.transpose(x, perm) if perm != tuple(range(len(perm))) else x


NUMPY = {"einsum": einsum}
