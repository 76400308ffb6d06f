#!/usr/bin/python3
"""Golden data for tests/ops/nlmsr_test.cpp (re-runnable; writes tests/data/nlmsr/).

The NLM fusion of docs/ops/nlmsr.md written in NumPy independently of the C++ code, vectorised
over the pixels: per frame and search offset, the squared differences of the estimate and the
shifted frame on the grid extended by the patch radius (numpy.pad mode 'edge': patch pixels
outside the image read at the nearest edge pixel), their patch sums by a 2-D cumulative sum,
the weights exp(-mean / (2 sigma^2)) where the offset's pixel is inside the image, eq. (5)'s
ratio. The pipeline: the frames on the output grid and the back-projection's down- and
up-scaling by matlab_imresize.py (MATLAB's antialiased bicubic, the oracle of upres's
bicubic_resize); its target the reference fused on the input grid (patch // scale | 1, the
weight scale Immerkaer's noise estimate, at least 0.5).
Post reconstruct: the start is the SRCNN network (written here in NumPy, float64) on MATLAB's bicubic of the target; the camera model is a Gaussian (sigma x scale
output pixels, cut at 3 sigma) convolved with a box of `scale` pixels, applied at every output
pixel with numpy.pad mode 'symmetric'; every phase of the dense target is the fusion on the
input grid against that phase of the model applied to the estimate; Landweber rounds.
Frames are stored stacked vertically ((n h) x w). Cases: `fusion` (3 seeded random frames
23 x 19 and an estimate; patch 5, search 3, sigma 10),
`pipeline` (4 gray frames 24 x 18 cut from scikit-image's camera at shifts of whole pixels,
with seeded noise; scale 2, patch 7, search 5, sigma 8, 2 iterations, 2 back-projections) and
`reconstruct` (the same frames, post reconstruct with a seeded 5-1-3 SRCNN model near the identity,
recon_x2.srcnn; scale 2, patch 7, search 3, sigma 8, psf sigma 0.5, 2 iterations, 4 rounds).
Run: /usr/bin/python3 tools/golden/gen_nlmsr.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from matlab_imresize import imresize  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, 'tests', 'data', 'nlmsr')


def fuse(frames, est, patch, search, sigma):
    h, w = est.shape
    pr, sr = patch // 2, search // 2
    ep = np.pad(est, pr, mode='edge')
    num = np.zeros((h, w))
    den = np.zeros((h, w))
    ys, xs = np.mgrid[0:h, 0:w]
    for u in frames:
        up = np.pad(u, pr + sr, mode='edge')
        for oy in range(-sr, sr + 1):
            for ox in range(-sr, sr + 1):
                sh = up[sr + oy:sr + oy + h + 2 * pr, sr + ox:sr + ox + w + 2 * pr]
                sq = (ep - sh) ** 2
                c = np.zeros((h + 2 * pr + 1, w + 2 * pr + 1))
                c[1:, 1:] = sq.cumsum(0).cumsum(1)
                k = 2 * pr + 1
                d = c[k:, k:] - c[:-k, k:] - c[k:, :-k] + c[:-k, :-k]
                wgt = np.exp(-d / (patch * patch) / (2.0 * sigma * sigma))
                inside = (ys + oy >= 0) & (ys + oy < h) & (xs + ox >= 0) & (xs + ox < w)
                val = up[pr + sr + oy:pr + sr + oy + h, pr + sr + ox:pr + sr + ox + w]
                num += np.where(inside, wgt * val, 0.0)
                den += np.where(inside, wgt, 0.0)
    return num / den


def pipeline(frames01, scale, ref, patch, search, sigma, iterations, back_projections):
    luma = [f * 255.0 for f in frames01]
    h, w = luma[0].shape
    up = [imresize(y, (scale * h, scale * w)) for y in luma]
    x = up[ref].copy()
    for _ in range(iterations):
        x = fuse(up, x, patch, search, sigma)
    # The back-projection's target: the reference denoised by the fusion on the input grid.
    k = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=np.float64)
    lap = sum(k[i, j] * luma[ref][i:h - 2 + i, j:w - 2 + j] for i in range(3) for j in range(3))
    noise = np.sqrt(np.pi / 2) * np.abs(lap).sum() / (6.0 * (w - 2) * (h - 2))
    target = fuse(luma, luma[ref], (patch // scale) | 1, search, max(0.5, noise))
    for _ in range(back_projections):
        down = imresize(x, (h, w))
        x = x + imresize(target - down, (scale * h, scale * w))
    return x / 255.0


def psf(x, scale, sigma, transpose, axis):
    sh = sigma * scale
    r = int(np.ceil(3 * sh)) if sh > 0 else 0
    g = np.exp(-0.5 * np.arange(-r, r + 1) ** 2 / sh ** 2) if sh > 0 else np.ones(1)
    k = np.convolve(g / g.sum(), np.full(scale, 1.0 / scale))
    origin = r
    if transpose:
        k, origin = k[::-1], len(k) - 1 - r
    n = x.shape[axis]
    pad = len(k) + n
    xp = np.pad(x, [(pad, pad) if a == axis else (0, 0) for a in range(2)], mode='symmetric')
    out = np.zeros_like(x)
    for j, kj in enumerate(k):
        sl = [slice(None)] * 2
        sl[axis] = slice(pad - origin + j, pad - origin + j + n)
        out += kj * xp[tuple(sl)]
    return out


def camera(x, scale, sigma, transpose=False):
    return psf(psf(x, scale, sigma, transpose, 1), scale, sigma, transpose, 0)


def network(plane, layers):
    """The SRCNN network in float64: per layer, edge-replicated padding, cross-correlation,
    bias, ReLU after layers 1 and 2 (gen_srcnn.py's PyTorch oracle in NumPy)."""
    x = np.asarray(plane, np.float64)[None]
    for j, (wt, b) in enumerate(layers):
        o, i, k, _ = wt.shape
        r = k // 2
        xp = np.pad(x, ((0, 0), (r, r), (r, r)), mode='edge')
        y = np.zeros((o,) + x.shape[1:])
        for dy in range(k):
            for dx in range(k):
                win = xp[:, dy:dy + x.shape[1], dx:dx + x.shape[2]]
                y += np.tensordot(wt[:, :, dy, dx].astype(np.float64), win, axes=(1, 0))
        y += b.astype(np.float64)[:, None, None]
        x = np.maximum(y, 0.0) if j < 2 else y
    return x[0]


def reconstruct(frames01, scale, ref, patch, search, sigma, psf_sigma, iterations, rounds,
                layers):
    luma = [f * 255.0 for f in frames01]
    h, w = luma[0].shape
    k = np.array([[1, -2, 1], [-2, 4, -2], [1, -2, 1]], dtype=np.float64)
    lap = sum(k[i, j] * luma[ref][i:h - 2 + i, j:w - 2 + j] for i in range(3) for j in range(3))
    noise = np.sqrt(np.pi / 2) * np.abs(lap).sum() / (6.0 * (w - 2) * (h - 2))
    lr_patch = (patch // scale) | 1
    target = fuse(luma, luma[ref], lr_patch, search, max(0.5, noise))
    x = network(imresize(target, (scale * h, scale * w)) / 255.0, layers) * 255.0
    z = np.zeros_like(x)
    for _ in range(iterations):
        e = camera(x, scale, psf_sigma)
        for b in range(scale):
            for a in range(scale):
                z[b::scale, a::scale] = fuse(luma, e[b::scale, a::scale], lr_patch, search, sigma)
        for _ in range(rounds):
            x = x + camera(z - camera(x, scale, psf_sigma), scale, psf_sigma, True)
    return x / 255.0


def main():
    os.makedirs(OUT, exist_ok=True)
    rng = np.random.default_rng(31)
    frames = [rng.uniform(20, 230, (19, 23)).astype(np.float32) for _ in range(3)]
    est = (frames[1] + rng.normal(0, 4, (19, 23))).astype(np.float32)
    np.save(os.path.join(OUT, 'fusion_frames.npy'), np.concatenate(frames))
    np.save(os.path.join(OUT, 'fusion_estimate.npy'), est)
    fused = fuse([f.astype(np.float64) for f in frames], est.astype(np.float64), 5, 3, 10.0)
    np.save(os.path.join(OUT, 'fusion_out.npy'), fused.astype(np.float32))

    from skimage import data
    cam = data.camera().astype(np.float64) / 255.0
    shifts = [(0, 0), (1, 2), (2, 1), (3, 3)]
    pf = []
    for i, (dy, dx) in enumerate(shifts):
        crop = cam[200 + dy:218 + dy, 220 + dx:244 + dx]
        noisy = np.clip(crop + np.random.default_rng(40 + i).normal(0, 0.02, crop.shape), 0, 1)
        pf.append(noisy.astype(np.float32))
    np.save(os.path.join(OUT, 'pipeline_frames.npy'), np.concatenate(pf))
    out = pipeline([f.astype(np.float64) for f in pf], 2, 1, 7, 5, 8.0, 2, 2)
    np.save(os.path.join(OUT, 'pipeline_out.npy'), out.astype(np.float32))
    from gen_srcnn import random_model, write_srcnn
    # A seeded random model scaled by 0.1 plus an identity path through channel 0 of every
    # layer: the start stays close to its input (the fusion's weights stay meaningful).
    layers = [(w * np.float32(0.1), b * np.float32(0.1))
              for w, b in random_model(77, (5, 1, 3), 8, 4)]
    for (w, b), c in zip(layers, (2, 0, 1)):
        w[0, 0, c, c] += 1.0
    write_srcnn(os.path.join(OUT, 'recon_x2.srcnn'), 2, layers,
                'gen_nlmsr.py random model, seed 77')
    out = reconstruct([f.astype(np.float64) for f in pf], 2, 1, 7, 3, 8.0, 0.5, 2, 4, layers)
    np.save(os.path.join(OUT, 'reconstruct_out.npy'), out.astype(np.float32))
    import scipy
    import skimage
    with open(os.path.join(OUT, 'MANIFEST'), 'w') as f:
        f.write('generator: tools/golden/gen_nlmsr.py\n')
        f.write(f'numpy {np.__version__}, scipy {scipy.__version__}, '
                f'scikit-image {skimage.__version__}\n')
        f.write('fusion_*.npy: eq. (5) on 3 random frames 23 x 19 (patch 5, search 3, sigma 10)\n')
        f.write('pipeline_*.npy: 4 noisy gray camera crops 24 x 18 -> 48 x 36 (patch 7, search 5, '
                'sigma 8, reference 1, 2 iterations, 2 back-projections)\n')
        f.write('reconstruct_out.npy, recon_x2.srcnn: the pipeline frames, post reconstruct '
                '(5-1-3 model near the identity, seed 77, patch 7, search 3, sigma 8, reference 1, psf sigma '
                '0.5, 2 iterations, 4 rounds)\n')


if __name__ == '__main__':
    main()
