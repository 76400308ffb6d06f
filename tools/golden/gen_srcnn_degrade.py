#!/usr/bin/python3
"""Golden data of upres::srcnn_degrade and upres::bicubic_resize (tests/data/srcnn_degrade),
from tools/srcnn/degrade.py, the Python twin used to train and evaluate SRCNN (its resampling
weights are matlab_imresize.contributions(); each result is also checked here against
matlab_imresize.imresize itself, to 1e-9).

Cases (inputs and outputs .npy, (H, W) or (H, W, C)):
  photo_u8.npy        41 x 37 RGB u8 crop of data/building.jpg (a `train` photo)
  gray_u8.npy         29 x 23 gray u8, random (seed 1)
  rgb_f32.npy         20 x 17 RGB f32 in [0, 1], random (seed 2)
  deg_photo_x{2,3,4}  srcnn_degrade(photo_u8, s): u8 (round half to even) + _f64 (unrounded,
                      stored float32) for the rounding-tie check
  deg_gray_x3         srcnn_degrade(gray_u8, 3): u8 + _f64
  deg_rgb_x2          srcnn_degrade(rgb_f32, 2): f32
  up_rgb_x{2,3}       bicubic_resize(deg_rgb_x2, s) (float, up-scaling)
  up_gray_x4          bicubic_resize(deg_gray_x3 (u8), 4): u8 + _f64

Run:  /usr/bin/python3 tools/golden/gen_srcnn_degrade.py      (re-runnable)
"""
import os
import sys

import cv2
import numpy as np
import scipy

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, '..', 'srcnn'))
import degrade as D  # noqa: E402
import matlab_imresize  # noqa: E402

ROOT = os.path.join(HERE, '..', '..')
OUT = os.path.join(ROOT, 'tests', 'data', 'srcnn_degrade')


def check(got, inp, out_hw):
    want = matlab_imresize.imresize(np.asarray(inp, np.float64), out_hw)
    assert np.abs(got - want).max() < 1e-9, np.abs(got - want).max()


def save(name, arr):
    np.save(os.path.join(OUT, name + '.npy'), np.ascontiguousarray(arr))


def main():
    os.makedirs(OUT, exist_ok=True)
    photo = D.load(os.path.join(ROOT, 'data', 'building.jpg'))[200:241, 300:337].copy()
    gray = np.random.default_rng(1).integers(0, 256, (29, 23), dtype=np.uint8)
    rgb = np.random.default_rng(2).random((20, 17, 3)).astype(np.float32)
    save('photo_u8', photo)
    save('gray_u8', gray)
    save('rgb_f32', rgb)
    rows = []
    for s in (2, 3, 4):
        c = D.crop(photo, s)
        f = D.imresize(c, (c.shape[0] // s, c.shape[1] // s))
        check(f, c, f.shape[:2])
        assert np.array_equal(D.round_u8(f), D.degrade(photo, s))
        save(f'deg_photo_x{s}', D.round_u8(f))
        save(f'deg_photo_x{s}_f64', f.astype(np.float32))
        rows.append(f'deg_photo_x{s}\tsrcnn_degrade\tphoto_u8\t{s}\tu8')
    c = D.crop(gray, 3)
    f = D.imresize(c, (c.shape[0] // 3, c.shape[1] // 3))
    check(f, c, f.shape[:2])
    deg_gray = D.round_u8(f)
    save('deg_gray_x3', deg_gray)
    save('deg_gray_x3_f64', f.astype(np.float32))
    rows.append('deg_gray_x3\tsrcnn_degrade\tgray_u8\t3\tu8')
    deg_rgb = D.degrade(rgb, 2)
    check(deg_rgb, D.crop(rgb, 2), deg_rgb.shape[:2])
    deg_rgb = deg_rgb.astype(np.float32)
    save('deg_rgb_x2', deg_rgb)
    rows.append('deg_rgb_x2\tsrcnn_degrade\trgb_f32\t2\tf32')
    for s in (2, 3):
        up = D.bicubic(deg_rgb, s)
        check(up, deg_rgb, up.shape[:2])
        save(f'up_rgb_x{s}', up.astype(np.float32))
        rows.append(f'up_rgb_x{s}\tbicubic_resize\tdeg_rgb_x2\t{s}\tf32')
    up = D.bicubic(deg_gray, 4)
    check(up, deg_gray, up.shape[:2])
    save('up_gray_x4', D.round_u8(up))
    save('up_gray_x4_f64', up.astype(np.float32))
    rows.append('up_gray_x4\tbicubic_resize\tdeg_gray_x3\t4\tu8')
    with open(os.path.join(OUT, 'cases.tsv'), 'w') as f:
        f.write('# output\top\tinput\tscale\ttype\n' + '\n'.join(rows) + '\n')
    with open(os.path.join(OUT, 'MANIFEST'), 'w') as f:
        f.write('generator: tools/golden/gen_srcnn_degrade.py (+ tools/srcnn/degrade.py, '
                'tools/golden/matlab_imresize.py)\n')
        f.write(f'python: {sys.version.split()[0]}\nnumpy: {np.__version__}\n'
                f'scipy: {scipy.__version__}\nopencv-python: {cv2.__version__} (reading '
                'data/building.jpg)\n')
        f.write('cases: see cases.tsv; computed in float64 (MATLAB imresize bicubic, Keys '
                'a = -0.5, centre-aligned, reflect borders, antialiased when shrinking; '
                'modcrop to a multiple of the scale)\n')
        f.write('u8 outputs: round half to even + saturate; <name>_f64.npy holds the '
                'unrounded float64 value (stored float32) for the rounding-tie check\n')
    print(f'wrote {len(rows)} cases to {OUT}')


if __name__ == '__main__':
    main()
