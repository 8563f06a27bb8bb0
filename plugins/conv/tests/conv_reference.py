"""A direct-loop float64 convolution, independent of the plugin's im2col impl."""
import itertools

import numpy as np


def conv_reference(x, w, strides, padding, lhs_dilation, rhs_dilation, dnums, G=1, B=1):
    """XLA Conv semantics read off the definition, one output element at a time."""
    lhs_spec, rhs_spec, out_spec = dnums
    x = np.transpose(np.asarray(x, np.float64), lhs_spec)
    w = np.transpose(np.asarray(w, np.float64), rhs_spec)
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    nsp = x.ndim - 2
    sizes = []
    for d in range(nsp):
        n, k = x.shape[2 + d], w.shape[2 + d]
        padded = (n - 1) * lhs_dilation[d] + 1 + sum(padding[d]) if n else sum(padding[d])
        span = (k - 1) * rhs_dilation[d] + 1 if k else 0
        sizes.append(max(0, (padded - span) // strides[d] + 1) if padded >= span else 0)
    out = np.zeros((N // B, O) + tuple(sizes))
    og = O // max(G, B)

    def read(n, c, pos):
        idx = []
        for d, q in enumerate(pos):
            q = q - padding[d][0]
            if q % lhs_dilation[d]:
                return 0.0
            q //= lhs_dilation[d]
            if not 0 <= q < x.shape[2 + d]:
                return 0.0
            idx.append(q)
        return x[(n, c) + tuple(idx)]

    for n, o in itertools.product(range(N // B), range(O)):
        g = o // og
        for p in itertools.product(*map(range, sizes)):
            acc = 0.0
            for ci in range(I):
                c = g * I + ci if G > 1 else ci
                nn = g * (N // B) + n if B > 1 else n
                for k in itertools.product(*(range(s) for s in w.shape[2:])):
                    pos = [p[d] * strides[d] + k[d] * rhs_dilation[d] for d in range(nsp)]
                    acc += read(nn, c, pos) * w[(o, ci) + k]
            out[(n, o) + p] = acc
    return np.transpose(out, np.argsort(out_spec))
