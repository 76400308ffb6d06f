"""A numpy re-implementation of MATLAB's imresize (bicubic / bilinear, antialiasing on), written
from the documented algorithm of MATLAB's imresize.m (contributions(), resizeAlongDim()).

Used by gen_warp.py as the oracle of upres's antialiased resize (the degradation model of the
super-resolution pipelines). For an output length m from an input length n (scale = m / n):

  * output sample x (1-based) maps to u = x / scale + 0.5 * (1 - 1 / scale)   (pixel centres);
  * kernel: Keys cubic with a = -0.5 (bicubic) or the triangle (bilinear); when scale < 1 and
    antialiasing is on it is stretched: h(d) = scale * k(scale * d), width 4 / scale (cubic);
  * taps: left = floor(u - width / 2), P = ceil(width) + 2 taps left .. left + P - 1, weights
    h(u - index) renormalised to sum 1;
  * out-of-range indices are mirrored with aux = [1:n, n:-1:1] (half-sample symmetric, i.e.
    scipy/upres 'reflect'), despite the "replicate" wording of imresize.m's comment;
  * the dimension with the larger scale-down is resized first (MATLAB's order: dims sorted by
    scale); for an exact separable filter the order only changes rounding.

Only float inputs (no uint8 rounding) and an explicit output size are supported here.
"""
import numpy as np


def cubic(x, a=-0.5):
    x = np.abs(x)
    x2, x3 = x * x, x * x * x
    return (((a + 2) * x3 - (a + 3) * x2 + 1) * (x <= 1) +
            (a * x3 - 5 * a * x2 + 8 * a * x - 4 * a) * ((x > 1) & (x <= 2)))


def triangle(x):
    x = np.abs(x)
    return (1 - x) * (x <= 1)


def contributions(in_len, out_len, kernel, kernel_width, antialias=True):
    scale = out_len / in_len
    if scale < 1 and antialias:
        h = lambda d: scale * kernel(scale * d)
        width = kernel_width / scale
    else:
        h = kernel
        width = kernel_width
    x = np.arange(1, out_len + 1, dtype=np.float64)
    u = x / scale + 0.5 * (1 - 1 / scale)
    left = np.floor(u - width / 2)
    p = int(np.ceil(width)) + 2
    ind = left[:, None] + np.arange(p)[None, :]  # 1-based
    w = h(u[:, None] - ind)
    w = w / w.sum(axis=1, keepdims=True)
    aux = np.concatenate([np.arange(1, in_len + 1), np.arange(in_len, 0, -1)])
    ind = aux[np.mod(ind.astype(np.int64) - 1, aux.size)]
    return w, ind - 1  # 0-based indices


def resize_along(img, axis, out_len, kernel, kernel_width, antialias=True):
    w, ind = contributions(img.shape[axis], out_len, kernel, kernel_width, antialias)
    moved = np.moveaxis(img, axis, 0)
    out = np.einsum('ij,ij...->i...', w, moved[ind])
    return np.moveaxis(out, 0, axis)


def imresize(img, out_hw, method='bicubic', antialias=True):
    """img: float array (H, W) or (H, W, C); out_hw: (rows, cols)."""
    kernel, kw = (cubic, 4.0) if method == 'bicubic' else (triangle, 2.0)
    img = np.asarray(img, dtype=np.float64)
    scales = [out_hw[0] / img.shape[0], out_hw[1] / img.shape[1]]
    order = np.argsort(scales, kind='stable')
    out = img
    for d in order:
        out = resize_along(out, int(d), out_hw[d], kernel, kw, antialias)
    return out
