#!/usr/bin/python3
"""Golden data of upres::warp (tests/data/warp), from outside oracles:

  * scipy.ndimage (rotate(reshape=False), zoom(grid_mode=True), affine_transform,
    map_coordinates, geometric_transform for the homography) with order 0, 1, 3 and
    prefilter=True for every border. upres border -> scipy mode: mirror -> 'mirror',
    reflect -> 'reflect', nearest -> 'nearest', wrap -> 'grid-wrap', constant -> 'constant'
    (samples strictly outside [0, n-1] are the fill value; scipy warns that 'grid-constant' is
    recommended with grid_mode=True: upres keeps 'constant' for every transform, see
    docs/ops/warp.md);
  * OpenCV cv2.remap(INTER_CUBIC, BORDER_REFLECT_101) for the Keys cubic with a = -0.75, on
    coordinates that are multiples of 1/32 (OpenCV quantises the fractional position to 1/32:
    on those coordinates its float weights are exact up to float rounding); the Keys cubic
    with a = -0.5 comes from the numpy implementation below, itself checked against OpenCV with
    a = -0.75;
  * matlab_imresize.py (our numpy re-implementation of MATLAB's imresize with antialiasing),
    itself checked against PIL's antialiased BICUBIC/BILINEAR resize away from the borders.

Run:  /usr/bin/python3 tools/golden/gen_warp.py      (re-runnable; overwrites tests/data/warp)
"""
import os
import sys
import warnings

import cv2
import numpy as np
import PIL
import scipy
import scipy.ndimage as nd
from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matlab_imresize  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'tests', 'data',
                   'warp')
MODES = {'mirror': 'mirror', 'reflect': 'reflect', 'nearest': 'nearest', 'wrap': 'grid-wrap',
         'constant': 'constant'}
ORDERS = {0: 'nearest', 1: 'linear', 3: 'bspline'}
FILL = 0.25
rows = []


def save(name, arr):
    np.save(os.path.join(OUT, name + '.npy'), np.ascontiguousarray(arr, dtype=np.float32))


def add(name, kind, interp, border, params, inp, out, fill=FILL, cubic_a=-0.5, antialias=0):
    save(name, out)
    rows.append('\t'.join([name, kind, interp, border, repr(fill), repr(cubic_a),
                           str(antialias),
                           params if isinstance(params, str) else
                           ','.join(repr(float(p)) for p in params),
                           inp]))


def per_channel(f, img):
    if img.ndim == 2:
        return f(img)
    return np.stack([f(img[..., c]) for c in range(img.shape[2])], axis=-1)


def keys(x, a):
    x = np.abs(x)
    return np.where(x <= 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                    np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))


def keys_remap_numpy(img, u, v, a):
    """Keys cubic at (u, v) with mirror taps (upres/scipy 'mirror'), coordinates inside the
    image or within one sample of it (mirror of the coordinate = mirror of the taps)."""
    h, w = img.shape

    def mirror(i, n):
        p = 2 * n - 2
        i = np.mod(i, p)
        return np.where(i < n, i, p - i)

    fu, fv = np.floor(u), np.floor(v)
    out = np.zeros_like(u)
    for j in range(-1, 3):
        wy = keys(v - (fv + j), a)
        iy = mirror((fv + j).astype(np.int64), h)
        for k in range(-1, 3):
            wx = keys(u - (fu + k), a)
            ix = mirror((fu + k).astype(np.int64), w)
            out += wy * wx * img[iy, ix]
    return out


def main():
    os.makedirs(OUT, exist_ok=True)
    for f in os.listdir(OUT):
        if f.endswith('.npy'):
            os.remove(os.path.join(OUT, f))
    rng = np.random.default_rng(20261121)
    gray = rng.random((17, 23)).astype(np.float32)  # H=17, W=23
    rgb = rng.random((13, 19, 3)).astype(np.float32)
    save('in_gray', gray)
    save('in_rgb', rgb)
    g = gray.astype(np.float64)
    h, w = g.shape

    # remap coordinates (inside, near and far outside the image), output 19 x 13
    uu = rng.uniform(-1.5 * w, 2.5 * w, (13, 19)).astype(np.float32)
    vv = rng.uniform(-1.5 * h, 2.5 * h, (13, 19)).astype(np.float32)
    uu[:4] = rng.uniform(-2, w + 1, (4, 19)).astype(np.float32)
    vv[:4] = rng.uniform(-2, h + 1, (4, 19)).astype(np.float32)
    uu[4, :5] = [0, w - 1, -0.5, w - 0.5, 3.5]  # edges and ties
    vv[4, :5] = [0, h - 1, 2.5, -0.5, h - 0.5]
    save('map_uv', np.stack([uu, vv], axis=-1))

    for order, interp in ORDERS.items():
        for border, mode in MODES.items():
            kw = dict(order=order, mode=mode, cval=FILL, prefilter=True)
            tag = f'{interp}_{border}'
            # rotation about the centre, scipy's sense
            add(f'rot30_{tag}', 'rotate', interp, border, [30.0], 'in_gray',
                nd.rotate(g, 30.0, reshape=False, **kw))
            # zoom up and down, grid_mode=True
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                up = nd.zoom(g, (29 / 17, 37 / 23), grid_mode=True, **kw)
                down = nd.zoom(g, (8 / 17, 11 / 23), grid_mode=True, **kw)
            assert up.shape == (29, 37) and down.shape == (8, 11), (up.shape, down.shape)
            add(f'zoomup_{tag}', 'zoom', interp, border, [37, 29], 'in_gray', up)
            add(f'zoomdown_{tag}', 'zoom', interp, border, [11, 8], 'in_gray', down)
            # general affine (output -> input), output 21 x 15
            M = np.array([[0.9, 0.35], [-0.25, 1.15]])  # (row, col)
            off = np.array([-1.7, 2.3])
            aff = nd.affine_transform(g, M, off, output_shape=(15, 21), **kw)
            # upres Affine: u(col) = M11 x + M10 y + off1, v(row) = M01 x + M00 y + off0
            add(f'affine_{tag}', 'affine', interp, border,
                [M[1, 1], M[1, 0], off[1], M[0, 1], M[0, 0], off[0]], 'in_gray', aff)
            # remap by coordinate maps (inside, near and far outside the image), 19 x 13
            mc = nd.map_coordinates(g, [vv.astype(np.float64), uu.astype(np.float64)], **kw)
            add(f'remap_{tag}', 'remap', interp, border, 'map_uv', 'in_gray', mc)

    # multi-channel: per-channel scipy (rotate applies per plane as well)
    for order, interp in ORDERS.items():
        kw = dict(order=order, mode='mirror', prefilter=True)
        add(f'rgb_rot-20_{interp}_mirror', 'rotate', interp, 'mirror', [-20.0], 'in_rgb',
            per_channel(lambda c: nd.rotate(c.astype(np.float64), -20.0, reshape=False, **kw),
                        rgb))
    add('rgb_zoomup_bspline_reflect', 'zoom', 'bspline', 'reflect', [31, 22], 'in_rgb',
        per_channel(lambda c: nd.zoom(c.astype(np.float64), (22 / 13, 31 / 19), order=3,
                                      mode='reflect', grid_mode=True), rgb))

    # displacement field: (u, v) = (x + dx, y + dy)
    fx = rng.uniform(-3, 3, (17, 23)).astype(np.float32)
    fy = rng.uniform(-3, 3, (17, 23)).astype(np.float32)
    save('flow_dxdy', np.stack([fx, fy], axis=-1))
    ys, xs = np.mgrid[0:17, 0:23].astype(np.float64)
    for order, interp in ORDERS.items():
        for border in ('mirror', 'constant'):
            add(f'flow_{interp}_{border}', 'flow', interp, border, 'flow_dxdy', 'in_gray',
                nd.map_coordinates(g, [ys + fy, xs + fx], order=order, mode=MODES[border],
                                   cval=FILL))

    # homography (output -> input), scipy geometric_transform with the same map
    H = np.array([[0.95, 0.12, 1.3], [-0.08, 1.05, -0.7], [0.004, -0.006, 1.0]])

    def hmap(o):
        y, x = o
        d = H[2, 0] * x + H[2, 1] * y + H[2, 2]
        return ((H[1, 0] * x + H[1, 1] * y + H[1, 2]) / d,
                (H[0, 0] * x + H[0, 1] * y + H[0, 2]) / d)

    for order, interp in ORDERS.items():
        for border in ('mirror', 'constant', 'reflect'):
            add(f'homography_{interp}_{border}', 'homography', interp, border, H.ravel(),
                'in_gray',
                nd.geometric_transform(g, hmap, output_shape=(16, 22), order=order,
                                       mode=MODES[border], cval=FILL, prefilter=True))

    # Keys cubic. OpenCV (a = -0.75) on dyadic coordinates, mirror (BORDER_REFLECT_101).
    ku = (rng.integers(-32, 32 * w, (13, 19)) / 32.0).astype(np.float32)
    kv = (rng.integers(-32, 32 * h, (13, 19)) / 32.0).astype(np.float32)
    save('map_keys', np.stack([ku, kv], axis=-1))
    ocv = cv2.remap(gray, ku, kv, cv2.INTER_CUBIC, borderMode=cv2.BORDER_REFLECT_101)
    mine = keys_remap_numpy(g, ku.astype(np.float64), kv.astype(np.float64), -0.75)
    assert np.abs(ocv - mine).max() < 2e-5, np.abs(ocv - mine).max()
    add('keys075_opencv', 'remap', 'cubic', 'mirror', 'map_keys', 'in_gray', ocv, cubic_a=-0.75)
    add('keys050_numpy', 'remap', 'cubic', 'mirror', 'map_keys', 'in_gray',
        keys_remap_numpy(g, ku.astype(np.float64), kv.astype(np.float64), -0.5))

    # MATLAB imresize (antialiasing on), checked against PIL away from the borders.
    big = rng.random((30, 40)).astype(np.float32)
    save('in_big', big)
    for method, interp, pil in (('bicubic', 'cubic', Image.BICUBIC),
                                ('bilinear', 'linear', Image.BILINEAR)):
        for (ow, oh) in ((13, 10), (17, 41)):
            m = matlab_imresize.imresize(big.astype(np.float64), (oh, ow), method)
            p = np.asarray(Image.fromarray(big, mode='F').resize((ow, oh), pil))
            # interior: outputs whose taps stay inside (support 2 / scale or 2 input samples)
            mx = int(np.ceil(3 * ow / 40)) + 1 if ow < 40 else 3
            my = int(np.ceil(3 * oh / 30)) + 1 if oh < 30 else 3
            d = np.abs(m - p)[my:-my, mx:-mx]
            assert d.size > 0 and d.max() < 1e-5, (method, ow, oh, d.max())
            add(f'imresize_{method}_{ow}x{oh}', 'zoom', interp, 'reflect', [ow, oh], 'in_big',
                m, antialias=1)

    with open(os.path.join(OUT, 'cases.tsv'), 'w') as f:
        f.write('# name\tkind\tinterp\tborder\tfill\tcubic_a\tantialias\tparams\tinput\n')
        f.write('\n'.join(rows) + '\n')
    total = sum(os.path.getsize(os.path.join(OUT, f)) for f in os.listdir(OUT))
    with open(os.path.join(OUT, 'MANIFEST'), 'w') as f:
        f.write('generator: tools/golden/gen_warp.py (+ tools/golden/matlab_imresize.py)\n')
        f.write(f'python: {sys.version.split()[0]}\nnumpy: {np.__version__}\n')
        f.write(f'scipy: {scipy.__version__}\nopencv-python: {cv2.__version__}\n')
        f.write(f'pillow: {PIL.__version__}\n')
        f.write(f'cases: {len(rows)} (cases.tsv); inputs in_gray, in_rgb, in_big; fields '
                'map_uv, map_keys, flow_dxdy (H x W x 2 float32: (u, v) or (dx, dy))\n')
        f.write('outputs: float32 .npy, computed in float64 from the float32 inputs\n')
    print(f'{len(rows)} cases, {total} bytes in {OUT}')


if __name__ == '__main__':
    main()
