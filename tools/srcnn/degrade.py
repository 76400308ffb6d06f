"""Python twin of upres::srcnn_degrade / upres::bicubic_resize and of the colour steps of
upres::srcnn_upscale (include/upres/srcnn.hpp), for training and evaluation of SRCNN.

  * crop(img, s): the top-left (H - H % s) x (W - W % s) part (MATLAB's modcrop);
  * degrade(img, s): crop, then MATLAB imresize bicubic by 1/s with antialiasing (Keys a = -0.5,
    kernel stretched by s, centre-aligned, half-sample symmetric = upres Border::Reflect);
    integer images are rounded half to even and saturated (upres's from_unit rule);
  * bicubic(img, s): the up-scaling (same kernel, no antialiasing since s > 1), float result;
  * luma / rgb_to_ycbcr / ycbcr_to_rgb: BT.601 studio range exactly as upres's color op
    (src/ops/color/color_math.hpp): Y = 16 + 65.481 R + 128.553 G + 24.966 B with R, G, B in
    [0, 1] (u8 / 255), gray images Y = 16 + 219 v; the inverse is numpy.linalg.inv of the
    forward matrix; u8 results round half to even and saturate.

The resampling weights are those of tools/golden/matlab_imresize.py (contributions(), imported,
not copied), applied as dense per-axis matrices (out = Ry @ img @ Rx^T) in float64: identical to
matlab_imresize.imresize up to float64 rounding (checked by tools/golden/gen_srcnn_degrade.py),
and fast enough to pre-compute the training planes.

The SRCNN pipeline (as srcnn_upscale on a u8 RGB image, and as the evaluation):
  HR (u8 RGB) -> degrade -> LR (u8 RGB) -> YCbCr float (not rounded) -> bicubic x s on Y, Cb, Cr
  -> network on Y / 255 -> clamp to [0, 1] -> Y * 255 -> RGB u8 (round half even, saturate);
  quality: luma() of the result rounded to u8 vs luma() of the cropped HR rounded to u8.
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'golden'))
import matlab_imresize  # noqa: E402

F = np.array([[65.481, 128.553, 24.966],
              [-37.797, -74.203, 112.0],
              [112.0, -93.786, -18.214]], dtype=np.float64)
OFF = np.array([16.0, 128.0, 128.0])
F_INV = np.linalg.inv(F)

_mat_cache = {}


def resize_matrix(in_len, out_len, antialias=True):
    """Dense (out_len x in_len) float64 matrix of MATLAB imresize bicubic along one axis."""
    key = (in_len, out_len, antialias)
    m = _mat_cache.get(key)
    if m is None:
        w, ind = matlab_imresize.contributions(in_len, out_len, matlab_imresize.cubic, 4.0,
                                               antialias)
        m = np.zeros((out_len, in_len))
        rows = np.repeat(np.arange(out_len), w.shape[1])
        np.add.at(m, (rows, ind.ravel()), w.ravel())
        if len(_mat_cache) > 256:
            _mat_cache.clear()
        _mat_cache[key] = m
    return m


def imresize(img, out_hw):
    """float64 MATLAB bicubic imresize (antialiased when shrinking) of (H, W) or (H, W, C)."""
    img = np.asarray(img, dtype=np.float64)
    ry = resize_matrix(img.shape[0], out_hw[0])
    rx = resize_matrix(img.shape[1], out_hw[1])
    out = np.tensordot(ry, img, axes=(1, 0))              # (h', W, ...)
    out = np.moveaxis(np.tensordot(rx, out, axes=(1, 1)), 0, 1)  # (h', w', ...)
    return out


def round_u8(x):
    """upres's float -> u8 rule: round half to even, saturate, NaN -> 0."""
    x = np.nan_to_num(np.asarray(x, dtype=np.float64), nan=0.0)
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


def crop(img, s):
    h, w = img.shape[:2]
    return img[:h - h % s, :w - w % s]


def degrade(img, s):
    """upres::srcnn_degrade: crop to a multiple of s, bicubic 1/s with antialiasing.
    u8 in -> u8 out (rounded); float in -> float64 out."""
    c = crop(img, s)
    out = imresize(c, (c.shape[0] // s, c.shape[1] // s))
    return round_u8(out) if img.dtype == np.uint8 else out


def bicubic(img, s):
    """upres::bicubic_resize by an integer factor s (up-scaling), float64 result."""
    img = np.asarray(img)
    return imresize(img, (img.shape[0] * s, img.shape[1] * s))


def to_unit(img):
    return img.astype(np.float64) / 255.0 if img.dtype == np.uint8 else img.astype(np.float64)


def luma(img):
    """Y on the 8-bit scale (float64) of a u8 gray (H, W) / (H, W, 1) or RGB(A) image."""
    u = to_unit(img)
    if u.ndim == 2 or u.shape[2] == 1:
        return 16.0 + 219.0 * u.reshape(u.shape[:2])
    return (F[0, 0] * u[..., 0] + F[0, 1] * u[..., 1] + F[0, 2] * u[..., 2]) + 16.0


def rgb_to_ycbcr(img):
    u = to_unit(img)[..., :3]
    return np.einsum('ij,hwj->hwi', F, u) + OFF


def ycbcr_to_rgb_u8(ycc):
    rgb = np.einsum('ij,hwj->hwi', F_INV, ycc - OFF)
    return round_u8(rgb * 255.0)


def y_u8(img):
    """The quality measure's plane: luma rounded to u8."""
    return round_u8(luma(img))


def load(path):
    """u8 image as upres reads it: gray (H, W) or RGB (H, W, 3); alpha dropped."""
    import cv2
    im = cv2.imread(path, cv2.IMREAD_UNCHANGED)
    if im is None:
        raise IOError(f'cannot read {path}')
    if im.dtype != np.uint8:
        raise ValueError(f'{path}: not 8-bit')
    if im.ndim == 3:
        im = cv2.cvtColor(im[..., :3], cv2.COLOR_BGR2RGB)
    return im


def save(path, img):
    import cv2
    if img.ndim == 3:
        img = cv2.cvtColor(img, cv2.COLOR_RGB2BGR)
    if not cv2.imwrite(path, img):
        raise IOError(f'cannot write {path}')


def pipeline(hr, s, net=None):
    """The SRCNN pipeline on a u8 image (gray or RGB), as upres::srcnn_upscale (src/ops/srcnn/
    srcnn.cpp): net: function (H, W) float64 plane in [0, 1] -> same, its output clamped to
    [0, 1]; None = the bicubic baseline (upres::bicubic_resize of the RGB image, rounded).
    Returns (sr u8, hr cropped u8, lr u8)."""
    hr = crop(hr, s)
    lr = degrade(hr, s)
    if net is None:  # upres::bicubic_resize on every channel (`upscale --method bicubic`)
        return round_u8(bicubic(lr, s)), hr, lr
    if lr.ndim == 2:  # srcnn_upscale on gray: the network runs on v = gray / 255
        return round_u8(np.clip(net(bicubic(lr / 255.0, s)), 0.0, 1.0) * 255.0), hr, lr
    ycc = bicubic(rgb_to_ycbcr(lr), s)
    ycc[..., 0] = np.clip(net(ycc[..., 0] / 255.0), 0.0, 1.0) * 255.0  # callers clamp
    return ycbcr_to_rgb_u8(ycc), hr, lr


def read_manifest(path, want_set):
    names = []
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith('#'):
                continue
            parts = line.rstrip('\n').split('\t')
            if len(parts) >= 2 and parts[1] == want_set:
                names.append(parts[0])
    return names
