#!/usr/bin/python3
"""Golden data for upres colour conversion and quality metrics (tests/ops/{color,metrics}_test).

Run from anywhere with Debian's Python (numpy, scipy, scikit-image):
    /usr/bin/python3 tools/golden/gen_metrics.py
Writes tests/data/metrics/*.npy + expected.csv + MANIFEST and tests/data/color/*.npy + MANIFEST.
Deterministic (fixed seeds); re-running reproduces the same files for the same tool versions.

Outside oracles:
  PSNR  skimage.metrics.peak_signal_noise_ratio(a, b, data_range=R)
  SSIM  skimage.metrics.structural_similarity(a, b, gaussian_weights=True, sigma=1.5,
        use_sample_covariance=False, data_range=R[, channel_axis=2])
  Y     skimage.color.rgb2ycbcr(rgb)[..., 0]   (on_y path, data range 255)
Inputs are passed to scikit-image as float64 (float32 images are widened first): scikit-image
would otherwise compute float32 inputs in float32, while upres computes in double.
"""
import csv
import os
import sys

import numpy as np
import scipy
import scipy.ndimage as ndi
import skimage
import skimage.io
from skimage.color import rgb2ycbcr, ycbcr2rgb
from skimage.metrics import peak_signal_noise_ratio, structural_similarity

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MET = os.path.join(ROOT, "tests", "data", "metrics")
COL = os.path.join(ROOT, "tests", "data", "color")
PHOTO = os.path.join(ROOT, "data", "chelsea.png")


def save(folder, name, arr):
    np.save(os.path.join(folder, name + ".npy"), np.ascontiguousarray(arr))


def to_unit(img):
    """Pixel values normalised as upres does: u8 / 255, u16 / 65535, float as is."""
    if img.dtype == np.uint8:
        return img.astype(np.float64) / 255.0
    if img.dtype == np.uint16:
        return img.astype(np.float64) / 65535.0
    return img.astype(np.float64)


def default_range(dtype):
    return {np.dtype(np.uint8): 255.0, np.dtype(np.uint16): 65535.0,
            np.dtype(np.float32): 1.0}[np.dtype(dtype)]


def expected(a, b, shave, on_y, data_range):
    """PSNR and SSIM as upres defines them (MetricOptions), through scikit-image."""
    if shave:
        a = a[shave:-shave, shave:-shave]
        b = b[shave:-shave, shave:-shave]
    colour = a.ndim == 3 and a.shape[2] in (3, 4)
    if on_y and colour:
        fa = rgb2ycbcr(to_unit(a[..., :3]))[..., 0]
        fb = rgb2ycbcr(to_unit(b[..., :3]))[..., 0]
        r = data_range if data_range > 0 else 255.0
        axis = None
    else:
        fa = a.astype(np.float64)
        fb = b.astype(np.float64)
        r = data_range if data_range > 0 else default_range(a.dtype)
        axis = 2 if a.ndim == 3 else None
    p = peak_signal_noise_ratio(fa, fb, data_range=r)
    s = structural_similarity(fa, fb, gaussian_weights=True, sigma=1.5,
                              use_sample_covariance=False, data_range=r, channel_axis=axis)
    return float(p), float(s)


def degrade(img, rng, sigma_blur, sigma_noise, hi):
    f = img.astype(np.float64)
    sig = (sigma_blur, sigma_blur, 0) if f.ndim == 3 else sigma_blur
    f = ndi.gaussian_filter(f, sig, mode="reflect") + rng.normal(0.0, sigma_noise, f.shape)
    if np.issubdtype(img.dtype, np.integer):
        return np.clip(np.rint(f), 0, hi).astype(img.dtype)
    return f.astype(img.dtype)


def metrics():
    os.makedirs(MET, exist_ok=True)
    rng = np.random.default_rng(20261121)
    photo = skimage.io.imread(PHOTO)[..., :3]  # 300 x 451 RGB u8
    crop = np.ascontiguousarray(photo[100:164, 180:260])  # 64 x 80 (H x W)
    gray = np.rint(rgb2ycbcr(crop)[..., 0]).astype(np.uint8)

    pairs = {}
    # 1. random u8 gray 64 (W) x 48 (H); b = a + noise
    a = rng.integers(0, 256, size=(48, 64), dtype=np.uint8)
    b = np.clip(a.astype(np.int32) + rng.integers(-40, 41, size=a.shape), 0, 255).astype(np.uint8)
    pairs["gray_u8"] = (a, b)
    # 2. real-photo crop (RGB u8) and a blurred + noisy version
    pairs["photo_u8"] = (crop, degrade(crop, rng, 1.0, 3.0, 255))
    # 3. u16 gray: photo luma * 257 + small noise, degraded
    a16 = np.clip(gray[:36, :40].astype(np.int64) * 257 + rng.integers(-200, 201, (36, 40)), 0,
                  65535).astype(np.uint16)
    pairs["gray_u16"] = (a16, degrade(a16, rng, 0.8, 500.0, 65535))
    # 4. float gray in [0, 1] (float32), degraded
    af = (gray[10:46, 20:60].astype(np.float32) / 255.0).astype(np.float32)
    pairs["gray_f32"] = (af, degrade(af, rng, 0.7, 0.02, 1.0))
    # 5. u16 RGB pair (on-Y path with a 16-bit type)
    c16 = (crop[:24, :28].astype(np.uint16) * 257)
    pairs["rgb_u16"] = (c16, degrade(c16, rng, 0.6, 400.0, 65535))
    # 6. float RGB pair
    cf = (crop[20:44, 30:62].astype(np.float32) / 255.0).astype(np.float32)
    pairs["rgb_f32"] = (cf, degrade(cf, rng, 0.9, 0.01, 1.0))

    for name, (a, b) in pairs.items():
        save(MET, name + "_a", a)
        save(MET, name + "_b", b)

    # case, pair, shave, on_y, data_range (0: upres default), psnr, ssim
    cases = [
        ("gray_u8", "gray_u8", 0, 1, 0.0),
        ("gray_u8_shave3", "gray_u8", 3, 1, 0.0),
        ("photo_y", "photo_u8", 0, 1, 0.0),
        ("photo_y_shave4", "photo_u8", 4, 1, 0.0),
        ("photo_rgb", "photo_u8", 0, 0, 0.0),
        ("photo_rgb_shave2", "photo_u8", 2, 0, 0.0),
        ("gray_u16", "gray_u16", 0, 1, 0.0),
        ("gray_f32", "gray_f32", 0, 1, 0.0),
        ("gray_f32_range2", "gray_f32", 1, 1, 2.0),
        ("rgb_u16_y", "rgb_u16", 0, 1, 0.0),
        ("rgb_u16_rgb", "rgb_u16", 0, 0, 0.0),
        ("rgb_f32_y", "rgb_f32", 0, 1, 0.0),
        ("rgb_f32_rgb", "rgb_f32", 0, 0, 0.0),
        ("rgb_f32_rgb_range255", "rgb_f32", 0, 0, 255.0),
    ]
    with open(os.path.join(MET, "expected.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["case", "pair", "shave", "on_y", "data_range", "psnr", "ssim"])
        for case, pair, shave, on_y, dr in cases:
            a, b = pairs[pair]
            p, s = expected(a, b, shave, on_y, dr)
            w.writerow([case, pair, shave, on_y, repr(dr), repr(p), repr(s)])
    # Full SSIM map (scikit-image full=True) of gray_u8: checks the reflect border of the filter.
    a, b = pairs["gray_u8"]
    _, smap = structural_similarity(a.astype(np.float64), b.astype(np.float64),
                                    gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
                                    data_range=255.0, full=True)
    save(MET, "gray_u8_ssim_map", smap.astype(np.float32))
    write_manifest(MET, "metrics", [
        "Pairs <name>_a.npy / <name>_b.npy (H, W[, C]); expected.csv: one row per case with",
        "PSNR (dB) and SSIM from scikit-image (see the generator's docstring), repr() precision.",
        "photo_u8 is data/chelsea.png[100:164, 180:260] (skimage sample), b = blur + noise.",
        "gray_u8_ssim_map.npy: the full SSIM map of gray_u8 (full=True), float32.",
    ])


def colour():
    os.makedirs(COL, exist_ok=True)
    rng = np.random.default_rng(601)
    # u8 RGB 16 x 12 with the corners of the cube and greys in the first row
    rgb8 = rng.integers(0, 256, size=(12, 16, 3), dtype=np.uint8)
    cube = np.array([[r, g, b] for r in (0, 255) for g in (0, 255) for b in (0, 255)], np.uint8)
    rgb8[0, :8] = cube
    rgb8[0, 8:16] = np.linspace(0, 255, 8).astype(np.uint8)[:, None]
    rgb16 = rng.integers(0, 65536, size=(6, 9, 3), dtype=np.uint16)
    rgbf = rng.uniform(-0.1, 1.1, size=(7, 5, 3)).astype(np.float32)  # out-of-range allowed
    for name, img in (("rgb_u8", rgb8), ("rgb_u16", rgb16), ("rgb_f32", rgbf)):
        save(COL, name, img)
        save(COL, name + "_ycbcr", rgb2ycbcr(to_unit(img)).astype(np.float32))
    # Inverse: random YCbCr in the studio range (and a bit outside), float32
    ycc = np.stack([rng.uniform(10, 240, (10, 11)), rng.uniform(10, 246, (10, 11)),
                    rng.uniform(10, 246, (10, 11))], axis=-1).astype(np.float32)
    save(COL, "ycbcr_f32", ycc)
    rgb = ycbcr2rgb(ycc.astype(np.float64))
    save(COL, "ycbcr_f32_rgb_f32", rgb.astype(np.float32))
    save(COL, "ycbcr_f32_rgb_u8", np.clip(np.rint(rgb * 255.0), 0, 255).astype(np.uint8))
    save(COL, "ycbcr_f32_rgb_u16", np.clip(np.rint(rgb * 65535.0), 0, 65535).astype(np.uint16))
    write_manifest(COL, "color", [
        "rgb_<t>.npy -> rgb_<t>_ycbcr.npy: skimage.color.rgb2ycbcr(rgb normalised to [0, 1])",
        "in float64, stored as float32. ycbcr_f32.npy -> ycbcr_f32_rgb_<t>.npy:",
        "skimage.color.ycbcr2rgb in float64; integer types = clip(rint(rgb * max)).",
    ])


def write_manifest(folder, what, notes):
    with open(os.path.join(folder, "MANIFEST"), "w") as f:
        f.write(f"# upres golden data: {what}\n")
        f.write("generator: tools/golden/gen_metrics.py (run with /usr/bin/python3)\n")
        f.write(f"python: {sys.version.split()[0]}\n")
        f.write(f"numpy: {np.__version__}\nscipy: {scipy.__version__}\n")
        f.write(f"scikit-image: {skimage.__version__}\n")
        for n in notes:
            f.write(f"note: {n}\n")


if __name__ == "__main__":
    metrics()
    colour()
