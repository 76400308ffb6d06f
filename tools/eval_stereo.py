#!/usr/bin/python3
"""Quality of the stereo matchers on the pairs with ground truth of tools/data/manifest.tsv
(set "stereo": Middlebury Aloe from opencv-doc, full size, disparity in pixels with 0 unknown;
Middlebury Motorcycle from scikit-image, 741 x 500, unknown +inf).

For each pair and matcher: bad-1.0 and bad-2.0 (the share of pixels whose disparity is more
than 1 or 2 pixels from the ground truth) over the pixels the matcher returns that have ground
truth, with that density, and over all pixels with ground truth (a pixel without a disparity
counts as bad). Matchers, all on the same disparity range:

* upres stereo, the paper's matcher: gauss7 and gauss13 (default options: no truncation, LR
  check 0, sub-pixel), and the same with the census cost, through the command
  (`--backend cpu`);
* upres's semi-global matcher (census, sgm4 and sgm8) with the published defaults of libSGM
  and OpenCV's stereo_match.py sample, none chosen on these pairs: P1 10 and P2 120 (bits,
  libSGM's), left-right tolerance 1 and a 3 x 3 median (libSGM's), uniqueness 5 % (libSGM's
  0.95 ratio), speckle window 100 pixels with range 2 (the sample's 100 and 32 / 16);
* OpenCV StereoBM (block 7 and 13, OpenCV's defaults otherwise);
* OpenCV StereoSGBM in its 3-way mode with the parameters of OpenCV's stereo_match.py sample
  (block 3, P1 = 8 cn bs^2, P2 = 32 cn bs^2, uniqueness 10, speckle window 100, range 32,
  disp12MaxDiff 1).

Nothing is tuned on these pairs. Usage:
  /usr/bin/python3 tools/eval_stereo.py --upres build/release/upres [--pictures docs/ops/img]
Prints a Markdown table; with --pictures writes stereo_<pair>.png (colour-mapped disparities,
five to a row, invalid pixels black).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, 'data')


def pairs():
    """(name, left gray u8, right gray u8, gt float (nan unknown), num_disparities)."""
    out = []
    L = cv2.imread(os.path.join(DATA, 'aloeL.jpg'), cv2.IMREAD_GRAYSCALE)
    R = cv2.imread(os.path.join(DATA, 'aloeR.jpg'), cv2.IMREAD_GRAYSCALE)
    gt = cv2.imread(os.path.join(DATA, 'aloeGT.png'), cv2.IMREAD_UNCHANGED).astype(np.float32)
    gt[gt == 0] = np.nan
    out.append(('aloe', L, R, gt, 224))
    L = cv2.imread(os.path.join(DATA, 'motorcycle_left.png'), cv2.IMREAD_GRAYSCALE)
    R = cv2.imread(os.path.join(DATA, 'motorcycle_right.png'), cv2.IMREAD_GRAYSCALE)
    gt = np.load(os.path.join(DATA, 'motorcycle_disp.npz'))['arr_0'].astype(np.float32)
    gt[~np.isfinite(gt)] = np.nan
    out.append(('motorcycle', L, R, gt, 64))
    return out


SGM_DEFAULTS = ['--lr-check', '1', '--median', '--uniqueness', '5', '--speckle-size', '100',
                '--speckle-range', '2']


def upres(exe, L, R, nd, agg, tmp, cost='ad', extra=()):
    lp, rp, op = (os.path.join(tmp, n) for n in ('l.png', 'r.png', 'd.npy'))
    cv2.imwrite(lp, L)
    cv2.imwrite(rp, R)
    subprocess.run([exe, '-q', '--backend', 'cpu', 'stereo', lp, rp, op, '--disparities',
                    str(nd), '--aggregate', agg, '--cost', cost, *extra], check=True)
    return np.load(op).astype(np.float32)


def opencv(L, R, nd, kind, block):
    if kind == 'bm':
        m = cv2.StereoBM_create(numDisparities=nd, blockSize=block)
    else:
        m = cv2.StereoSGBM_create(minDisparity=0, numDisparities=nd, blockSize=block,
                                  P1=8 * block * block, P2=32 * block * block,
                                  disp12MaxDiff=1, uniquenessRatio=10, speckleWindowSize=100,
                                  speckleRange=32, mode=cv2.STEREO_SGBM_MODE_SGBM_3WAY)
    d = m.compute(L, R).astype(np.float32) / 16.0
    d[d < 0] = np.nan  # invalid: (minDisparity - 1) x 16
    return d


def scores(d, gt):
    known = np.isfinite(gt)
    ret = known & np.isfinite(d)
    err = np.abs(d - gt)
    res = {'density': ret.sum() / known.sum()}
    for t in (1.0, 2.0):
        bad = ret & (err > t)
        res[f'bad{t:g}_ret'] = bad.sum() / max(1, ret.sum())
        res[f'bad{t:g}_all'] = (bad.sum() + (known & ~ret).sum()) / known.sum()
    return res


def colour(d, vmax):
    v = np.nan_to_num(np.clip(d / vmax, 0, 1), nan=0.0)
    img = cv2.applyColorMap((v * 255).astype(np.uint8), cv2.COLORMAP_TURBO)
    img[~np.isfinite(d)] = 0
    return img


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upres', default=os.path.join(ROOT, 'build', 'release', 'upres'))
    ap.add_argument('--pictures', default='')
    a = ap.parse_args()
    cv2.setNumThreads(os.cpu_count() or 1)
    print('| pair | matcher | density | bad-1.0 returned | bad-2.0 returned | bad-1.0 all | '
          'bad-2.0 all |')
    print('|---|---|---:|---:|---:|---:|---:|')
    with tempfile.TemporaryDirectory() as tmp:
        for name, L, R, gt, nd in pairs():
            maps = [
                ('upres gauss7', upres(a.upres, L, R, nd, 'gauss7', tmp)),
                ('upres gauss13', upres(a.upres, L, R, nd, 'gauss13', tmp)),
                ('upres census gauss7', upres(a.upres, L, R, nd, 'gauss7', tmp, 'census')),
                ('upres census gauss13', upres(a.upres, L, R, nd, 'gauss13', tmp, 'census')),
                ('upres census sgm4', upres(a.upres, L, R, nd, 'sgm4', tmp, 'census',
                                            SGM_DEFAULTS)),
                ('upres census sgm8', upres(a.upres, L, R, nd, 'sgm8', tmp, 'census',
                                            SGM_DEFAULTS)),
                ('OpenCV StereoBM 7', opencv(L, R, nd, 'bm', 7)),
                ('OpenCV StereoBM 13', opencv(L, R, nd, 'bm', 13)),
                ('OpenCV StereoSGBM 3-way', opencv(L, R, nd, 'sgbm', 3)),
            ]
            for m, d in maps:
                s = scores(d, gt)
                print(f"| {name} ({L.shape[1]} x {L.shape[0]}, {nd} disparities) | {m} | "
                      f"{100 * s['density']:.1f} % | {100 * s['bad1_ret']:.2f} % | "
                      f"{100 * s['bad2_ret']:.2f} % | {100 * s['bad1_all']:.2f} % | "
                      f"{100 * s['bad2_all']:.2f} % |")
            if a.pictures:
                vmax = float(np.nanmax(gt))
                tiles = [('ground truth', gt)] + maps
                w = 300
                h = int(round(L.shape[0] * w / L.shape[1]))
                row = []
                for label, d in tiles:
                    t = cv2.resize(colour(d, vmax), (w, h), interpolation=cv2.INTER_NEAREST)
                    cv2.putText(t, label, (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, (255, 255, 255),
                                1, cv2.LINE_AA)
                    row.append(t)
                while len(row) % 5:
                    row.append(np.zeros_like(row[0]))
                grid = np.vstack([np.hstack(row[i:i + 5]) for i in range(0, len(row), 5)])
                cv2.imwrite(os.path.join(a.pictures, f'stereo_{name}.png'), grid,
                            [cv2.IMWRITE_PNG_COMPRESSION, 9])
    sys.stdout.flush()


if __name__ == '__main__':
    main()
