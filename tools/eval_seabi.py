#!/usr/bin/python3
"""Quality of SEABI x2 and its baselines on the eval images of tools/data/manifest.tsv.

For each eval image (cropped to even sizes): the low-resolution input is made by antialiased
bicubic down-scaling by 2 (MATLAB imresize kernel: Keys a = -0.5 stretched by 2, 8 taps,
symmetric borders), sampled CO-SITED (LR pixel x at HR pixel 2x, the lattice of the paper and
of `upres upscale`, docs/ops/seabi.md), written as PNG, up-scaled by `upres upscale --method M`,
and compared with the original by `upres compare --json --shave 2` (PSNR and MSSIM on BT.601 Y).

A second, smaller table shows what happens with the centre-aligned down-scaling of upres resize
(LR pixel x at HR position 2x + 0.5): co-sited methods are then half an output pixel off.

Usage: /usr/bin/python3 tools/eval_seabi.py --upres build-seabi/upres [--out docs/ops]
Prints a Markdown table; writes docs/ops/seabi_crop.jpg (crop comparison).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
METHODS = ['lseai', 'silseabi', 'lseabi', 'tap4', 'tap6', 'bilinear', 'bicubic']


def keys(x, a=-0.5):
    x = np.abs(x)
    return np.where(x <= 1, (a + 2) * x**3 - (a + 3) * x**2 + 1,
                    np.where(x < 2, a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a, 0.0))


def down_matrix(n, cosited):
    """m x n matrix of the antialiased bicubic /2 (MATLAB kernel, symmetric borders)."""
    m = n // 2
    M = np.zeros((m, n))
    for x in range(m):
        u = 2 * x if cosited else 2 * x + 0.5
        ks = np.arange(int(np.floor(u)) - 4, int(np.floor(u)) + 6)
        w = keys((ks - u) / 2) / 2
        w /= w.sum()
        idx = np.where(ks < 0, -ks - 1, ks)
        idx = np.where(idx >= n, 2 * n - idx - 1, idx)
        for k, wk in zip(idx, w):
            M[x, k] += wk
    return M


def down2(img, cosited):
    h, w = img.shape[:2]
    R, C = down_matrix(h, cosited), down_matrix(w, cosited)
    f = img.astype(np.float64)
    out = np.stack([R @ f[..., c] @ C.T for c in range(f.shape[2])], axis=2)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def luma(rgb):  # BT.601 studio Y of an RGB (not BGR) u8 image
    f = rgb.astype(np.float64) / 255
    return 16 + 65.481 * f[..., 0] + 128.553 * f[..., 1] + 24.966 * f[..., 2]


def centre_bicubic_up(img):
    """Centre-aligned x2 Keys bicubic (upres resize convention), for the second table."""
    def ax(a):
        n = a.shape[0]
        out = np.zeros((2 * n,) + a.shape[1:])
        for x in range(2 * n):
            u = (x + 0.5) / 2 - 0.5
            f = int(np.floor(u))
            ks = np.arange(f - 1, f + 3)
            w = keys(ks - u)
            out[x] = np.tensordot(w, a[np.clip(ks, 0, n - 1)], axes=(0, 0))
        return out
    f = img.astype(np.float64)
    out = np.stack([ax(ax(f[..., c]).T).T for c in range(f.shape[2])], axis=2)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upres', default=os.path.join(ROOT, 'build-seabi', 'upres'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'docs', 'ops'))
    args = ap.parse_args()
    names = [l.split('\t')[0] for l in open(os.path.join(ROOT, 'tools/data/manifest.tsv'))
             if not l.startswith('#') and l.split('\t')[1] == 'eval']
    tmp = tempfile.mkdtemp(prefix='eval_seabi_')
    table = {m: [] for m in METHODS}
    centre = {'bicubic (centre)': [], 'silseabi (co-sited)': []}
    crops = {}
    for name in names:
        bgr = cv2.imread(os.path.join(ROOT, 'data', name), cv2.IMREAD_COLOR)
        h, w = bgr.shape[:2]
        bgr = bgr[:h // 2 * 2, :w // 2 * 2]
        hr = os.path.join(tmp, 'hr.png')
        cv2.imwrite(hr, bgr)
        lr = os.path.join(tmp, 'lr.png')
        cv2.imwrite(lr, down2(bgr, True))
        for m in METHODS:
            out = os.path.join(tmp, f'{m}.png')
            # --lattice cosited: the command's bilinear/bicubic default to centre-aligned.
            run([args.upres, 'upscale', lr, out, '--method', m, '--lattice', 'cosited',
                 '--quiet'])
            s = json.loads(run([args.upres, 'compare', hr, out, '--json', '--shave', '2']))
            table[m].append((s['psnr'], s['ssim']))
            if name == 'butterfly.jpg':
                crops[m] = cv2.imread(out)
        if name == 'butterfly.jpg':
            crops['original'] = bgr
        # Centre-aligned LR: bicubic centre vs SIL-SEABI (co-sited) — the phase mismatch.
        lrc = down2(bgr, False)
        cv2.imwrite(lr, lrc)
        out = os.path.join(tmp, 'c_sil.png')
        run([args.upres, 'upscale', lr, out, '--method', 'silseabi', '--quiet'])
        s = json.loads(run([args.upres, 'compare', hr, out, '--json', '--shave', '2']))
        centre['silseabi (co-sited)'].append((s['psnr'], s['ssim']))
        outc = os.path.join(tmp, 'c_bic.png')
        cv2.imwrite(outc, centre_bicubic_up(lrc))
        s = json.loads(run([args.upres, 'compare', hr, outc, '--json', '--shave', '2']))
        centre['bicubic (centre)'].append((s['psnr'], s['ssim']))
        print(name, ' '.join(f'{m} {table[m][-1][0]:.2f}/{table[m][-1][1]:.4f}' for m in METHODS),
              file=sys.stderr)

    short = [n.split('.')[0] for n in names]
    print('PSNR (dB) / MSSIM on Y, x2, shave 2, co-sited antialiased bicubic LR\n')
    print('| method | ' + ' | '.join(short) + ' | mean |')
    print('|---' * (len(names) + 2) + '|')
    for m in METHODS:
        cells = [f'{p:.2f} / {s:.4f}' for p, s in table[m]]
        mp = np.mean([p for p, _ in table[m]])
        ms = np.mean([s for _, s in table[m]])
        print(f'| {m} | ' + ' | '.join(cells) + f' | **{mp:.2f} / {ms:.4f}** |')
    print('\nCentre-aligned LR (upres resize convention), same metrics\n')
    print('| method | ' + ' | '.join(short) + ' | mean |')
    print('|---' * (len(names) + 2) + '|')
    for m, v in centre.items():
        cells = [f'{p:.2f} / {s:.4f}' for p, s in v]
        print(f'| {m} | ' + ' | '.join(cells) +
              f' | **{np.mean([p for p, _ in v]):.2f} / {np.mean([s for _, s in v]):.4f}** |')

    # Crop comparison: butterfly, 96 x 96 HR crop, each panel magnified 3x (nearest).
    if crops:
        y0, x0, n = 120, 180, 96
        panels = []
        for key in ['original', 'bicubic', 'tap6', 'lseai', 'silseabi', 'lseabi']:
            c = crops[key][y0:y0 + n, x0:x0 + n]
            c = cv2.resize(c, (3 * n, 3 * n), interpolation=cv2.INTER_NEAREST)
            c = cv2.copyMakeBorder(c, 28, 4, 4, 4, cv2.BORDER_CONSTANT, value=(255, 255, 255))
            cv2.putText(c, key, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1, cv2.LINE_AA)
            panels.append(c)
        grid = np.vstack([np.hstack(panels[:3]), np.hstack(panels[3:])])
        cv2.imwrite(os.path.join(args.out, 'seabi_crop.jpg'), grid, [cv2.IMWRITE_JPEG_QUALITY, 90])


if __name__ == '__main__':
    main()
