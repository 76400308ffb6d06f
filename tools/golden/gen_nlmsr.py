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
Frames are stored stacked vertically ((n h) x w). Cases: `fusion` (3 seeded random frames
23 x 19 and an estimate; patch 5, search 3, sigma 10)
and `pipeline` (4 gray frames 24 x 18 cut from scikit-image's camera at shifts of whole pixels,
with seeded noise; scale 2, patch 7, search 5, sigma 8, 2 iterations, 2 back-projections).
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
    import scipy
    import skimage
    with open(os.path.join(OUT, 'MANIFEST'), 'w') as f:
        f.write('generator: tools/golden/gen_nlmsr.py\n')
        f.write(f'numpy {np.__version__}, scipy {scipy.__version__}, '
                f'scikit-image {skimage.__version__}\n')
        f.write('fusion_*.npy: eq. (5) on 3 random frames 23 x 19 (patch 5, search 3, sigma 10)\n')
        f.write('pipeline_*.npy: 4 noisy gray camera crops 24 x 18 -> 48 x 36 (patch 7, search 5, '
                'sigma 8, reference 1, 2 iterations, 2 back-projections)\n')


if __name__ == '__main__':
    main()
