"""conv_general_dilated: the one convolution primitive (XLA's Conv).

Every rule works in the canonical layout (lhs N,C,*S; rhs O,I,*K; out N,O,*S)
reached by the dimension numbers' permutations. The primitive is bilinear:

- jvp: the convolution of each tangent with the other primal;
- transpose w.r.t. lhs: a convolution of the cotangent with the spatially
  reversed kernel, in/out features swapped, window strides becoming lhs
  dilation (a "fractionally strided" conv) and the padding chosen so the
  result has lhs's shape; feature groups move into the kernel's features;
- transpose w.r.t. rhs: a convolution of lhs with the cotangent as kernel,
  window strides becoming rhs dilation; feature groups become batch groups
  (each group's kernel gradient only sees that group's input channels);
- vmap: the mapped axis is folded into a dimension the primitive already
  has: into the batch for lhs alone, the output features for rhs alone, and
  feature groups when both are mapped (each example its own group), so a
  vmapped conv stays one convolution.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from plugax.extend import (Primitive, RuleSet, ShapedArray, ShapeError, Zero, defjvp,
                           is_undefined_primal)

from .dims import ConvDimensionNumbers, dilate_dim, window_out_dim
from .lowering import conv_lowering

__all__ = ["conv_general_dilated_p", "RULES", "conv_shape"]

conv_general_dilated_p = Primitive("conv_general_dilated")


# --- shapes ------------------------------------------------------------------------------
def _fail(lhs: Any, rhs: Any, problem: str) -> ShapeError:
    return ShapeError(f"primitive 'conv_general_dilated' {problem}; got lhs "
                      f"{lhs.dtype.name}{list(lhs.shape)} and rhs "
                      f"{rhs.dtype.name}{list(rhs.shape)}")


def conv_shape(lhs: Any, rhs: Any, *, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, **_: Any) -> tuple:
    """The output shape, after the checks XLA makes (each error names both shapes)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    if len(lhs.shape) != len(rhs.shape):
        raise _fail(lhs, rhs, "needs lhs and rhs of the same rank")
    nsp = len(lhs.shape) - 2
    if nsp < 0 or not len(lhs_spec) == len(rhs_spec) == len(out_spec) == len(lhs.shape):
        raise _fail(lhs, rhs, f"needs dimension_numbers of length {len(lhs.shape)}, got "
                              f"{dimension_numbers}")
    for name, seq in (("window_strides", window_strides), ("padding", padding),
                      ("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
        if len(seq) != nsp:
            raise _fail(lhs, rhs, f"needs {nsp} {name} (one per spatial dimension), got "
                                  f"{tuple(seq)}")
    for name, seq in (("window_strides", window_strides), ("lhs_dilation", lhs_dilation),
                      ("rhs_dilation", rhs_dilation)):
        if any(int(s) < 1 for s in seq):
            raise _fail(lhs, rhs, f"needs positive {name}, got {tuple(seq)}")
    G, B = feature_group_count, batch_group_count
    if G < 1 or B < 1:
        raise _fail(lhs, rhs, f"needs positive feature_group_count and batch_group_count, "
                              f"got {G} and {B}")
    if G > 1 and B > 1:
        raise _fail(lhs, rhs, f"takes at most one of batch_group_count and "
                              f"feature_group_count > 1, got {B} and {G}")
    ls = [lhs.shape[d] for d in lhs_spec]
    rs = [rhs.shape[d] for d in rhs_spec]
    if ls[1] % G or ls[1] // G != rs[1]:
        raise _fail(lhs, rhs, f"needs the lhs feature size ({ls[1]}) divided by "
                              f"feature_group_count ({G}) to equal the rhs input feature "
                              f"size ({rs[1]})")
    if rs[0] % G or rs[0] % B:
        raise _fail(lhs, rhs, f"needs the rhs output feature size ({rs[0]}) to be a multiple "
                              f"of feature_group_count ({G}) and batch_group_count ({B})")
    if ls[0] % B:
        raise _fail(lhs, rhs, f"needs batch_group_count ({B}) to divide the lhs batch size "
                              f"({ls[0]})")
    spatial = []
    for n, k, s, (lo, hi), ld, rd in zip(ls[2:], rs[2:], window_strides, padding,
                                         lhs_dilation, rhs_dilation):
        padded = dilate_dim(n, ld) + lo + hi
        if padded < 0:
            raise _fail(lhs, rhs, f"got negative padding {tuple(padding)} larger than the "
                                  f"(dilated) lhs spatial size")
        spatial.append(window_out_dim(padded, dilate_dim(k, rd), s))
    canonical = [ls[0] // B, rs[0]] + spatial
    out = [0] * len(canonical)
    for i, d in enumerate(out_spec):
        out[d] = canonical[i]
    return tuple(out)


def _abstract_eval(ctx, lhs: ShapedArray, rhs: ShapedArray, *, preferred_element_type=None,
                   **params: Any) -> ShapedArray:
    if lhs.dtype != rhs.dtype:
        raise _fail(lhs, rhs, "requires arguments to have the same dtypes (as "
                              "lax.conv_general_dilated); convert one first")
    shape = conv_shape(lhs, rhs, **params)
    dtype = np.dtype(preferred_element_type) if preferred_element_type is not None \
        else lhs.dtype
    return ShapedArray(shape, dtype, lhs.weak_type and rhs.weak_type)


# --- evaluation ---------------------------------------------------------------------------
def _windows(lhs: np.ndarray, kernel: tuple, strides, padding, lhs_dilation,
             rhs_dilation, out_spatial: tuple) -> np.ndarray:
    """(N, C, *out, *K): lhs (N, C, *S) dilated, padded (negative pads crop), and cut into
    the windows the kernel's K taps read, rhs dilation and strides applied."""
    nsp = lhs.ndim - 2
    if any(d > 1 for d in lhs_dilation):
        shape = lhs.shape[:2] + tuple(dilate_dim(n, d) for n, d in zip(lhs.shape[2:],
                                                                       lhs_dilation))
        holes = np.zeros(shape, lhs.dtype)
        holes[(slice(None), slice(None)) + tuple(slice(None, None, d)
                                                 for d in lhs_dilation)] = lhs
        lhs = holes
    lhs = np.pad(lhs, [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding])
    crop = tuple(slice(max(-lo, 0), n - max(-hi, 0))
                 for (lo, hi), n in zip(padding, lhs.shape[2:]))
    lhs = lhs[(slice(None), slice(None)) + crop]
    span = tuple(dilate_dim(k, d) for k, d in zip(kernel, rhs_dilation))
    win = np.lib.stride_tricks.sliding_window_view(lhs, span, axis=tuple(range(2, 2 + nsp)))
    index = (slice(None), slice(None)) \
        + tuple(slice(None, (o - 1) * s + 1, s) for o, s in zip(out_spatial, strides)) \
        + tuple(slice(None, None, d) for d in rhs_dilation)
    return win[index]


def _impl(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation, rhs_dilation,
          dimension_numbers, feature_group_count, batch_group_count, precision=None,
          preferred_element_type=None):
    """im2col: one (groups, M, C*K) @ (groups, C*K, O) matmul over the windows.

    Narrow floats compute in float32 and booleans as int32 counts, as the dot does.
    """
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    out_shape = conv_shape(lhs, rhs, window_strides=window_strides, padding=padding,
                           lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
                           dimension_numbers=dimension_numbers,
                           feature_group_count=feature_group_count,
                           batch_group_count=batch_group_count)
    out_dtype = np.dtype(preferred_element_type) if preferred_element_type is not None \
        else lhs.dtype
    work = np.dtype(np.int64) if out_dtype.kind == "b" else \
        np.dtype(np.float32) if out_dtype.name in ("float16", "bfloat16") else out_dtype
    x = np.transpose(lhs, lhs_spec).astype(work, copy=False)
    w = np.transpose(rhs, rhs_spec).astype(work, copy=False)
    canonical = tuple(out_shape[d] for d in out_spec)
    if 0 in canonical or 0 in x.shape or 0 in w.shape:
        out = np.zeros(canonical, work)
    else:
        out = _conv_canonical(x, w, window_strides, padding, lhs_dilation, rhs_dilation,
                              feature_group_count, batch_group_count, canonical)
    out = np.transpose(out, np.argsort(out_spec))
    return (out != 0) if out_dtype.kind == "b" else out.astype(out_dtype, copy=False)


def _conv_canonical(x, w, strides, padding, lhs_dilation, rhs_dilation, G, B, canonical):
    N, C = x.shape[:2]
    O, I = w.shape[:2]
    kernel, out_sp = w.shape[2:], canonical[2:]
    nsp = len(kernel)
    win = _windows(x, kernel, strides, padding, lhs_dilation, rhs_dilation, out_sp)
    P, K = int(np.prod(out_sp)), int(np.prod(kernel))
    groups = max(G, B)
    if B > 1:   # lhs batch = (B, N/B), group-major; each group sees every channel
        cols = win.reshape((B, N // B, C) + win.shape[2:])
        lhs_group_axis, Nout = 0, N // B
    else:       # lhs features = (G, C/G), group-major
        cols = win.reshape((N, G, C // G) + win.shape[2:])
        lhs_group_axis, Nout = 1, N
    # cols -> (groups, Nout * P, Cg * K)
    batch_axis = 1 - lhs_group_axis
    order = (lhs_group_axis, batch_axis) + tuple(range(3, 3 + nsp)) + (2,) \
        + tuple(range(3 + nsp, 3 + 2 * nsp))
    cols = np.transpose(cols, order).reshape(groups, Nout * P, -1)
    kern = w.reshape(groups, O // groups, I * K).transpose(0, 2, 1)
    out = np.matmul(cols, kern)                       # (groups, Nout * P, O / groups)
    out = out.reshape((groups, Nout) + tuple(out_sp) + (O // groups,))
    out = np.moveaxis(out, -1, 1)                     # (groups, Og, Nout, *out)
    out = np.moveaxis(out, 2, 0)                      # (Nout, groups, Og, *out)
    return out.reshape(canonical)


# --- differentiation ------------------------------------------------------------------------
_jvp = defjvp(conv_general_dilated_p,
              lambda g, ans, x, y, **params: conv_general_dilated_p.bind(g, y, **params),
              lambda g, ans, x, y, **params: conv_general_dilated_p.bind(x, g, **params))


def _spec_transpose(spec: tuple) -> tuple:
    return (spec[1], spec[0]) + tuple(spec[2:])


def _sdims(spec: tuple) -> tuple:
    return tuple(spec[2:])


def reshape_axis_into(src: int, dst: int, x: Any) -> Any:
    """Merge axis `src` into axis `dst` (numbered after removing src), src the major part."""
    import plugax.lax as lax
    shape = list(x.shape)
    perm = [i for i in range(len(shape)) if i != src]
    perm.insert(dst, src)
    new = [shape[i] for i in range(len(shape)) if i != src]
    new[dst] *= shape[src]
    return lax.reshape(x, tuple(new), tuple(perm))


def reshape_axis_out_of(src: int, size1: int, x: Any) -> Any:
    """Split axis `src` into (size1, rest)."""
    import plugax.lax as lax
    shape = list(x.shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return lax.reshape(x, tuple(shape))


def _bind(lhs, rhs, **params):
    return conv_general_dilated_p.bind(lhs, rhs, **params)


def _transpose_lhs(ct, rhs, lhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    import plugax.lax as lax
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    if G > 1 or B > 1:
        # the groups move from the kernel's output features into its input features
        rhs = reshape_axis_out_of(rhs_spec[0], max(G, B), rhs)
        rhs = reshape_axis_into(rhs_spec[0], rhs_spec[1], rhs)
    k = [rhs.shape[d] for d in _sdims(rhs_spec)]
    n = [lhs_aval.shape[d] for d in _sdims(lhs_spec)]
    o = [ct.shape[d] for d in _sdims(out_spec)]
    pads = []
    for ni, ki, oi, (lo, _), s, ld, rd in zip(n, k, o, padding, window_strides, lhs_dilation,
                                              rhs_dilation):
        before = dilate_dim(ki, rd) - lo - 1
        after = dilate_dim(ni, ld) + dilate_dim(ki, rd) - 1 - dilate_dim(oi, s) - before
        pads.append((before, after))
    kernel = lax.rev(rhs, _sdims(rhs_spec))
    if kernel.dtype != ct.dtype:
        kernel = lax.convert_element_type(kernel, ct.dtype)
    out = _bind(ct, kernel, window_strides=tuple(lhs_dilation), padding=tuple(pads),
                lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
                dimension_numbers=ConvDimensionNumbers(out_spec, _spec_transpose(rhs_spec),
                                                       lhs_spec),
                feature_group_count=max(G, B), batch_group_count=1, precision=precision,
                preferred_element_type=preferred_element_type)
    if B > 1:   # each batch group's features were produced side by side
        out = reshape_axis_out_of(lhs_spec[1], B, out)
        out = reshape_axis_into(lhs_spec[1], lhs_spec[0], out)
    if out.dtype != lhs_aval.dtype:
        out = lax.convert_element_type(out, lhs_aval.dtype)
    return out


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type):
    import plugax.lax as lax
    if 0 in ct.shape:
        return Zero(rhs_aval)
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    G, B = feature_group_count, batch_group_count
    G, B = (B, 1) if B > 1 else (1, G)   # feature groups <-> batch groups
    n = [lhs.shape[d] for d in _sdims(lhs_spec)]
    o = [ct.shape[d] for d in _sdims(out_spec)]
    k = [rhs_aval.shape[d] for d in _sdims(rhs_spec)]
    pads = []
    for ni, ki, oi, (lo, _), s, ld, rd in zip(n, k, o, padding, window_strides, lhs_dilation,
                                              rhs_dilation):
        hi = dilate_dim(oi, s) - dilate_dim(ni, ld) + dilate_dim(ki, rd) - lo - 1
        pads.append((lo, hi))
    if lhs.dtype != ct.dtype:
        lhs = lax.convert_element_type(lhs, ct.dtype)
    out = _bind(lhs, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads),
                lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
                dimension_numbers=ConvDimensionNumbers(*map(_spec_transpose, (lhs_spec,
                                                                              out_spec,
                                                                              rhs_spec))),
                feature_group_count=G, batch_group_count=B, precision=precision,
                preferred_element_type=preferred_element_type)
    if out.dtype != rhs_aval.dtype:
        out = lax.convert_element_type(out, rhs_aval.dtype)
    return out


def _transpose(ctx, ct, lhs, rhs, **params):
    if is_undefined_primal(lhs) and is_undefined_primal(rhs):
        raise ShapeError("primitive 'conv_general_dilated' is linear in each operand "
                         "separately; transpose was asked to solve for both")
    if type(ct) is Zero:
        return [None, None]
    if is_undefined_primal(lhs):
        return [_transpose_lhs(ct, rhs, lhs.aval, **params), None]
    return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


# --- batching ---------------------------------------------------------------------------------
def _vmap(ctx, args, dims, **params):
    lhs, rhs = args
    ld, rd = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    G, B = params["feature_group_count"], params["batch_group_count"]
    if (ld is not None and lhs.shape[ld] == 0) or (rd is not None and rhs.shape[rd] == 0):
        return _empty_batch(lhs, rhs, ld, rd, params), 0   # no group of size 0 exists
    if ld is not None and rd is not None:
        size = lhs.shape[ld]
        if B > 1:
            new_lhs = reshape_axis_into(ld, lhs_spec[0], lhs)
            params = dict(params, batch_group_count=B * size)
        else:
            new_lhs = reshape_axis_into(ld, lhs_spec[1], lhs)
            params = dict(params, feature_group_count=G * size)
        out = _bind(new_lhs, reshape_axis_into(rd, rhs_spec[0], rhs), **params)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    if ld is not None:
        size = lhs.shape[ld]
        if B == 1:
            out = _bind(reshape_axis_into(ld, lhs_spec[0], lhs), rhs, **params)
        else:   # the batch groups stay outermost: (B, vmap, N/B)
            new = reshape_axis_out_of(lhs_spec[0] + int(ld <= lhs_spec[0]), B, lhs)
            new = reshape_axis_into(ld + int(lhs_spec[0] < ld), lhs_spec[0] + 1, new)
            new = reshape_axis_into(lhs_spec[0], lhs_spec[0], new)
            out = _bind(new, rhs, **params)
        return reshape_axis_out_of(out_spec[0], size, out), out_spec[0]
    size = rhs.shape[rd]
    if G == 1 and B == 1:
        out = _bind(lhs, reshape_axis_into(rd, rhs_spec[0], rhs), **params)
        return reshape_axis_out_of(out_spec[1], size, out), out_spec[1]
    # groups stay outermost in the kernel's output features: (groups, vmap, O/groups)
    groups = max(G, B)
    new = reshape_axis_out_of(rhs_spec[0] + int(rd <= rhs_spec[0]), groups, rhs)
    new = reshape_axis_into(rd + int(rhs_spec[0] < rd), rhs_spec[0] + 1, new)
    new = reshape_axis_into(rhs_spec[0], rhs_spec[0], new)
    out = _bind(lhs, new, **params)
    out = reshape_axis_out_of(out_spec[1], groups, out)
    out = reshape_axis_out_of(out_spec[1] + 1, size, out)
    out = reshape_axis_into(out_spec[1], out_spec[1] + 1, out)
    return out, out_spec[1]


def _empty_batch(lhs, rhs, ld, rd, params):
    import plugax.numpy as pnp
    unbatched = [ShapedArray(tuple(s for i, s in enumerate(x.shape) if i != d), x.dtype)
                 for x, d in ((lhs, ld), (rhs, rd))]
    aval = _abstract_eval(None, *unbatched, **params)
    return pnp.zeros((0,) + aval.shape, aval.dtype)


RULES = [RuleSet(primitive=conv_general_dilated_p, impl=_impl, abstract_eval=_abstract_eval,
                 jvp=_jvp, transpose=_transpose, batching=_vmap,
                 lowering={"default": conv_lowering})]
