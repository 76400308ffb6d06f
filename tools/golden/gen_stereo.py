#!/usr/bin/python3
"""Golden data for tests/ops/stereo_test.cpp (re-runnable; writes tests/data/stereo/).

The window matcher of docs/ops/stereo.md written in NumPy / SciPy independently of the C++
code: the quantised absolute-difference DSI built layer by layer, each layer filtered with
scipy.ndimage.correlate (the 2-D integer Gauss or box weights, mode 'nearest': the clamped
border), winner-takes-all with numpy.argmin over each pixel's candidates (the first minimum:
ties to the smaller disparity), OpenCV's uniqueness rule, the left-right check and the
parabola. The semi-global matcher: the cost averaged over its window (correlate with ones),
then Hirschmueller's path recurrence along each direction, vectorised over the disparities
(sgm_cube). The post-filters: the 3 x 3 median of the valid neighbours of both maps (of a run
without the check) written with NumPy, the left-right check on them, then OpenCV's
cv2.filterSpeckles on the map x 16 (int16). Inputs: a seeded random pair (the right
image the left shifted by 3 with noise) and crops of scikit-image's Motorcycle pair (RGB and
gray).
Run: /usr/bin/python3 tools/golden/gen_stereo.py
"""
import math
import os

import numpy as np
from scipy import ndimage

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, 'tests', 'data', 'stereo')


def gauss_weights(side):
    r = side // 2
    sigma = (side - 1) / 4.0
    e = [math.exp(-k * k / (2 * sigma * sigma)) for k in range(r + 1)]
    total = e[0] + 2 * sum(e[1:])
    return [int(math.floor(256 * v / total + 0.5)) for v in e]


def weights_2d(agg, box):
    if agg == 'box':
        g = [1] * (box // 2 + 1)
    else:
        g = gauss_weights(7 if agg == 'gauss7' else 13)
    r = len(g) - 1
    g1 = np.array([g[abs(k)] for k in range(-r, r + 1)], dtype=np.int64)
    return np.outer(g1, g1)


def cost_layer(L, R, d, max_q):
    """|L(x) - R(clamp(x - d))|, channel mean, 8-bit levels, x16, rounded half up, truncated."""
    H, W = L.shape[:2]
    xs = np.clip(np.arange(W) - d, 0, W - 1)
    Rs = R[:, xs]
    s = np.abs(L.astype(np.int64) - Rs.astype(np.int64))
    if s.ndim == 3:
        C = s.shape[2]
        s = s.sum(axis=2)
    else:
        C = 1
    q = (2 * 16 * s + C) // (2 * C)  # u8 inputs only
    return np.minimum(q, max_q)


def census(img):
    """62-bit codes over 9 x 7 (clamped): bit set where the neighbour's channel sum is below the
    centre's; bits in row-major order of the offsets, the centre skipped."""
    I = img.astype(np.int64)
    if I.ndim == 3:
        I = I.sum(axis=2)
    H, W = I.shape
    code = np.zeros((H, W), dtype=np.uint64)
    ys, xs = np.arange(H), np.arange(W)
    for dy in range(-3, 4):
        for dx in range(-4, 5):
            if dx == 0 and dy == 0:
                continue
            n = I[np.clip(ys + dy, 0, H - 1)][:, np.clip(xs + dx, 0, W - 1)]
            code = (code << np.uint64(1)) | (n < I).astype(np.uint64)
    return code


def popcount(v):
    b = v.view(np.uint8).reshape(v.shape + (8,))
    return np.unpackbits(b, axis=-1).sum(axis=-1).astype(np.int64)


def census_layer(cl, cr, d, max_q):
    W = cl.shape[1]
    xs = np.clip(np.arange(W) - d, 0, W - 1)
    return np.minimum(popcount(cl ^ cr[:, xs]) * 16, max_q)


def sgm_cube(C, paths, p1, p2):
    """Path sums of the cost cube C (D, H, W) over 4 or 8 directions (int64)."""
    Ct = C.transpose(1, 2, 0).astype(np.int64)  # (H, W, D)
    H, W, D = Ct.shape
    S = np.zeros_like(Ct)
    BIG = 1 << 40

    def step(c, p):
        pmin = p.min(axis=-1, keepdims=True)
        pad = np.full(p.shape[:-1] + (1,), BIG, dtype=np.int64)
        below = np.concatenate([pad, p[..., :-1]], -1)
        above = np.concatenate([p[..., 1:], pad], -1)
        m = np.minimum(np.minimum(p, below + p1), np.minimum(above + p1, pmin + p2))
        return c + m - pmin

    dirs = [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (-1, 1), (1, -1), (-1, -1)][:paths]
    for dx, dy in dirs:
        L = np.zeros_like(Ct)
        if dy == 0:
            xs = list(range(W)) if dx > 0 else list(range(W - 1, -1, -1))
            L[:, xs[0]] = Ct[:, xs[0]]
            for x in xs[1:]:
                L[:, x] = step(Ct[:, x], L[:, x - dx])
        else:
            ys = list(range(H)) if dy > 0 else list(range(H - 1, -1, -1))
            L[ys[0]] = Ct[ys[0]]
            px = np.arange(W) - dx
            ok = (px >= 0) & (px < W)
            for y in ys[1:]:
                row = Ct[y].copy()
                row[ok] = step(Ct[y][ok], L[y - dy][px[ok]])
                L[y] = row
        S += L
    return S.transpose(2, 0, 1)


def matcher(L, R, min_d, num_d, agg='gauss7', box=7, max_cost=255.0, lr=0, subpixel=True,
            uniq=0, cost='ad', p1=10.0, p2=120.0, window=1):
    H, W = L.shape[:2]
    max_q = max(1, min(4080, int(math.floor(max_cost * 16 + 0.5))))
    if cost == 'census':
        cl, cr = census(L), census(R)
        layer = lambda d: census_layer(cl, cr, d, max_q)  # noqa: E731
    else:
        layer = lambda d: cost_layer(L, R, d, max_q)  # noqa: E731
    if agg.startswith('sgm'):
        n = window * window
        ones = np.ones((window, window), dtype=np.int64)
        C = np.stack([(2 * ndimage.correlate(layer(min_d + k), ones, mode='nearest') + n) //
                      (2 * n) for k in range(num_d)])
        cube = sgm_cube(C, int(agg[3:]), int(math.floor(p1 * 16 + 0.5)),
                        int(math.floor(p2 * 16 + 0.5)))
    else:
        w2 = weights_2d(agg, box)
        cube = np.stack([ndimage.correlate(layer(min_d + k), w2, mode='nearest')
                         for k in range(num_d)])  # (D, H, W)
    ds = min_d + np.arange(num_d)
    BIG = np.iinfo(np.int64).max

    def winners(costs, cand):
        """costs, cand: (D, H, W). Returns best k (-1 none), best, before, after, far."""
        c = np.where(cand, costs, BIG)
        k0 = np.argmin(c, axis=0)
        has = cand.any(axis=0)
        best = np.take_along_axis(c, k0[None], 0)[0]
        def neighbour(dk):
            k = k0 + dk
            ok = (k >= 0) & (k < num_d)
            kk = np.clip(k, 0, num_d - 1)
            v = np.take_along_axis(c, kk[None], 0)[0]
            return np.where(ok & (v != BIG), v, -1)
        before, after = neighbour(-1), neighbour(1)
        kk = np.arange(num_d)[:, None, None]
        farmask = (np.abs(kk - k0[None]) > 1) & cand
        far = np.where(farmask, costs, BIG).min(axis=0)
        far = np.where(far == BIG, -1, far)
        return np.where(has, k0, -1), best, before, after, far

    x = np.arange(W)[None, None, :]
    candL = np.broadcast_to(((x - ds[:, None, None]) >= 0) & ((x - ds[:, None, None]) < W),
                            (num_d, H, W))
    # Right map: right pixel xr reads the left-based sums at (xr + d, d).
    xr = x + ds[:, None, None]
    candR = np.broadcast_to((xr >= 0) & (xr < W), (num_d, H, W))
    yy = np.arange(H)[None, :, None]
    costsR = cube[np.arange(num_d)[:, None, None], yy, np.clip(xr, 0, W - 1)]
    kL, bL, mL, pL, fL = winners(cube, candL)
    kR, bR, mR, pR, fR = winners(costsR, candR)

    def refine(k, best, before, after):
        d = (min_d + k).astype(np.float64)
        if not subpixel:
            return d
        ok = (before >= 0) & (after >= 0)
        cm, c0, cp = before.astype(np.float64), best.astype(np.float64), after.astype(np.float64)
        den = np.where(ok, 2.0 * (cm - 2.0 * c0 + cp), 1.0)
        return np.where(ok, d + (cm - cp) / den, d)

    valid = kL >= 0
    if uniq > 0:
        valid &= (fL < 0) | (fL * (100 - uniq) >= bL * 100)
    if lr >= 0:
        dL = min_d + kL
        xs = np.clip(np.arange(W)[None, :] - dL, 0, W - 1)
        kRo = np.take_along_axis(kR, xs, 1)
        valid &= (kRo >= 0) & (np.abs(dL - (min_d + kRo)) <= lr)
    left = np.where(valid, refine(kL, bL, mL, pL), np.nan).astype(np.float32)
    right = np.where(kR >= 0, refine(kR, bR, mR, pR), np.nan).astype(np.float32)
    return left, right


def median3(d):
    """3 x 3 median of the valid (finite) neighbours of each valid pixel (the lower middle of an
    even count); invalid pixels stay NaN."""
    H, W = d.shape
    out = d.copy()
    for y in range(H):
        for x in range(W):
            if not np.isfinite(d[y, x]):
                continue
            v = d[max(0, y - 1):y + 2, max(0, x - 1):x + 2]
            v = np.sort(v[np.isfinite(v)])
            out[y, x] = v[(len(v) - 1) // 2]
    return out


def post_filter(dl, dr, lr, speckle_size, speckle_range):
    """The median with a check, from the maps of a matcher run without the check: both maps'
    medians (median3), then a left pixel stays where the filtered right map at x - rint(d) is
    valid and its nearest integer is within lr of rint(d); then cv2.filterSpeckles on
    round(16 d) (int16, invalid -16)."""
    import cv2
    H, W = dl.shape
    ml, mr = median3(dl), median3(dr)
    out = np.full_like(ml, np.nan)
    for y in range(H):
        for x in range(W):
            d = ml[y, x]
            if not np.isfinite(d):
                continue
            xr = x - int(np.rint(d))
            ok = 0 <= xr < W and np.isfinite(mr[y, xr])
            if ok and abs(np.rint(d) - np.rint(mr[y, xr])) <= lr:
                out[y, x] = d
    q = np.where(np.isfinite(out), np.round(16 * out), -16).astype(np.int16)
    cv2.filterSpeckles(q, -16, speckle_size, int(round(16 * speckle_range)))
    return np.where(q == -16, np.nan, out).astype(np.float32)


def main():
    os.makedirs(OUT, exist_ok=True)
    from skimage import data
    rng = np.random.default_rng(20261128)
    H, W = 29, 41
    base = rng.integers(0, 256, size=(H, W + 3), dtype=np.int64)
    left = base[:, 3:].astype(np.uint8)
    right = np.clip(base[:, :W] + rng.integers(-6, 7, size=(H, W)), 0, 255).astype(np.uint8)
    ml, mr, _ = data.stereo_motorcycle()
    pl, pr = ml[200:248, 300:364], mr[200:248, 300:364]  # 48 x 64 RGB
    gl = (pl.astype(np.int64).sum(axis=2) // 3).astype(np.uint8)
    gr = (pr.astype(np.int64).sum(axis=2) // 3).astype(np.uint8)
    cases = {
        'rand_g7': (left, right, dict(min_d=0, num_d=8)),
        'rand_g13': (left, right, dict(min_d=-2, num_d=9, agg='gauss13', lr=1, uniq=10)),
        'photo_g7': (pl, pr, dict(min_d=0, num_d=24)),
        'gray_box5': (gl, gr, dict(min_d=2, num_d=20, agg='box', box=5, max_cost=20.0, lr=-1,
                                   subpixel=False)),
        'photo_census': (pl, pr, dict(min_d=0, num_d=24, cost='census')),
        'rand_census13': (left, right, dict(min_d=-1, num_d=10, agg='gauss13', cost='census',
                                            lr=1, max_cost=40.0)),
        'photo_sgm8': (pl, pr, dict(min_d=0, num_d=24, agg='sgm8', cost='census', lr=1)),
        'rand_sgm4': (left, right, dict(min_d=-2, num_d=9, agg='sgm4', p1=6.0, p2=40.0, window=3,
                                        uniq=5)),
        'gray_sgm4': (gl, gr, dict(min_d=0, num_d=20, agg='sgm4', cost='census', lr=1,
                                   subpixel=False)),
    }
    inputs = {'rand': (left, right), 'photo': (pl, pr), 'gray': (gl, gr)}
    for name, (l, r) in inputs.items():
        np.save(os.path.join(OUT, name + '_left.npy'), l)
        np.save(os.path.join(OUT, name + '_right.npy'), r)
    for name, (l, r, kw) in cases.items():
        dl, dr = matcher(l, r, **kw)
        np.save(os.path.join(OUT, name + '_disp.npy'), dl)
        np.save(os.path.join(OUT, name + '_right_disp.npy'), dr)
        print(name, kw, 'valid', float(np.isfinite(dl).mean()))
    # The post-filters on gray_sgm4's maps without the check (integer disparities: exact in
    # OpenCV's x 16).
    kw = dict(cases['gray_sgm4'][2], lr=-1)
    ul, ur = matcher(gl, gr, **kw)
    post = post_filter(ul, ur, 1, 20, 1.0)
    np.save(os.path.join(OUT, 'gray_sgm4_post_disp.npy'), post)
    print('post valid', float(np.isfinite(post).mean()))
    import cv2
    import scipy
    import skimage
    with open(os.path.join(OUT, 'MANIFEST'), 'w') as f:
        f.write('Generated by tools/golden/gen_stereo.py\n')
        f.write(f'numpy {np.__version__}, scipy {scipy.__version__}, '
                f'scikit-image {skimage.__version__}\n')
        f.write('rand_{left,right}.npy: default_rng(20261128); right = left shifted by 3 + noise '
                'in [-6, 6], 41 x 29 u8\n')
        f.write('photo_{left,right}.npy: skimage.data.stereo_motorcycle()[0/1][200:248, '
                '300:364] RGB u8; gray_*: their channel sum // 3\n')
        for name, (_, _, kw) in cases.items():
            f.write(f'{name}_disp.npy, {name}_right_disp.npy: {kw} (float32, NaN invalid)\n')
        f.write(f'gray_sgm4_post_disp.npy: gray_sgm4 without the check, both maps\' 3 x 3 median '
                f'of valid neighbours, the check (1) on them, cv2.filterSpeckles(x16, -16, 20, '
                f'16) (OpenCV {cv2.__version__})\n')
    print('gauss7', gauss_weights(7), 'gauss13', gauss_weights(13))


if __name__ == '__main__':
    main()
