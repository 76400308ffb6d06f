#!/usr/bin/python3
"""Quality of SEABI x2 and its baselines on the eval images of tools/data/manifest.tsv.

For each eval image (cropped to even sizes) the low-resolution input is made by antialiased
bicubic down-scaling by 2 (MATLAB imresize kernel: Keys a = -0.5 stretched by 2, 8 taps,
symmetric borders), written as PNG, up-scaled by `upres upscale --method M --lattice L`, and
compared with the original by `upres compare --json --shave 2` (PSNR and MSSIM on BT.601 Y);
BRISQUE of each output by `upres quality --json` (lower is better).

Two tables, as the lattice of the down-scaling decides which up-scaling lattice is right:
  * centre-aligned LR (LR pixel x at HR position 2x + 0.5: MATLAB imresize, every real
    image), methods on the centre-aligned lattice (upres's default), SRCNN included;
  * co-sited LR (LR pixel x at HR pixel 2x: the SEABI paper's lattice), methods co-sited
    (`--lattice cosited`), for reproducing the paper.
Only eval images are used here; nothing in the methods was tuned on them.

Usage: /usr/bin/python3 tools/eval_seabi.py --upres build/cpu-rel/upres [--out docs/ops]
Prints Markdown tables; writes docs/ops/seabi_crop.jpg (crop comparison, centre-aligned).
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
METHODS = ['lseai', 'silseabi', 'lseabi', 'tap4', 'tap6', 'bilinear', 'bicubic', 'srcnn']
COSITED = ['lseai', 'silseabi', 'lseabi', 'tap4', 'tap6', 'bilinear', 'bicubic']


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


def evaluate(args, tmp, hr, lr_img, methods, lattice):
    """{method: (psnr, mssim, brisque)} and the outputs, for one LR image."""
    lr = os.path.join(tmp, 'lr.png')
    cv2.imwrite(lr, lr_img)
    res, outs = {}, {}
    for m in methods:
        out = os.path.join(tmp, f'{m}.png')
        run([args.upres, 'upscale', lr, out, '--method', m, '--lattice', lattice, '--quiet'])
        s = json.loads(run([args.upres, 'compare', hr, out, '--json', '--shave', '2']))
        q = json.loads(run([args.upres, 'quality', out, '--json']))
        res[m] = (s['psnr'], s['ssim'], q['brisque'])
        outs[m] = cv2.imread(out)
    return res, outs


def print_table(title, names, table, methods, baseline='bicubic'):
    short = [n.split('.')[0] for n in names]
    print(f'{title}\n')
    print('| method | ' + ' | '.join(short) + ' | mean PSNR / MSSIM / BRISQUE | beats ' +
          baseline + ' (PSNR, MSSIM) |')
    print('|---' * (len(names) + 3) + '|')
    base = table[baseline]
    for m in methods:
        cells = [f'{p:.2f} / {s:.4f} / {b:.1f}' for p, s, b in table[m]]
        mp, ms, mb = (np.mean([v[k] for v in table[m]]) for k in range(3))
        wins = (f'{sum(a[0] > c[0] for a, c in zip(table[m], base))}, '
                f'{sum(a[1] > c[1] for a, c in zip(table[m], base))} of {len(names)}')
        print(f'| {m} | ' + ' | '.join(cells) + f' | **{mp:.2f} / {ms:.4f} / {mb:.1f}** | ' +
              ('—' if m == baseline else wins) + ' |')
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upres', default=os.path.join(ROOT, 'build', 'cpu-rel', 'upres'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'docs', 'ops'))
    args = ap.parse_args()
    names = [l.split('\t')[0] for l in open(os.path.join(ROOT, 'tools/data/manifest.tsv'))
             if not l.startswith('#') and l.split('\t')[1] == 'eval']
    tmp = tempfile.mkdtemp(prefix='eval_seabi_')
    centred = {m: [] for m in METHODS}
    cosited = {m: [] for m in COSITED + ['srcnn (centred)']}
    crops = {}
    for name in names:
        bgr = cv2.imread(os.path.join(ROOT, 'data', name), cv2.IMREAD_COLOR)
        h, w = bgr.shape[:2]
        bgr = bgr[:h // 2 * 2, :w // 2 * 2]
        hr = os.path.join(tmp, 'hr.png')
        cv2.imwrite(hr, bgr)
        res, outs = evaluate(args, tmp, hr, down2(bgr, False), METHODS, 'centered')
        for m in METHODS:
            centred[m].append(res[m])
        if name == 'butterfly.jpg':
            crops = dict(outs, original=bgr)
        res, _ = evaluate(args, tmp, hr, down2(bgr, True), COSITED, 'cosited')
        for m in COSITED:
            cosited[m].append(res[m])
        # SRCNN runs on the centre-aligned lattice of its training only: shown on the co-sited
        # input as a user would get it (half an output pixel off).
        res, _ = evaluate(args, tmp, hr, down2(bgr, True), ['srcnn'], 'centered')
        cosited['srcnn (centred)'].append(res['srcnn'])
        print(name, ' '.join(f'{m} {centred[m][-1][0]:.2f}' for m in METHODS), file=sys.stderr)

    print_table('PSNR (dB) / MSSIM on Y / BRISQUE, x2, shave 2: centre-aligned antialiased '
                'bicubic LR, methods on the centre-aligned lattice (the default)', names, centred,
                METHODS)
    print_table('The same on the co-sited lattice (co-sited antialiased bicubic LR, '
                '`--lattice cosited`: the SEABI paper\'s setting; SRCNN, defined centre-aligned '
                'only, on the same input)', names, cosited, COSITED + ['srcnn (centred)'])

    # Crop comparison: butterfly, 96 x 96 HR crop, each panel magnified 3x (nearest).
    if crops:
        y0, x0, n = 120, 180, 96
        panels = []
        for key in ['original', 'bicubic', 'tap6', 'srcnn', 'lseai', 'silseabi', 'lseabi',
                    'bilinear']:
            c = crops[key][y0:y0 + n, x0:x0 + n]
            c = cv2.resize(c, (3 * n, 3 * n), interpolation=cv2.INTER_NEAREST)
            c = cv2.copyMakeBorder(c, 28, 4, 4, 4, cv2.BORDER_CONSTANT, value=(255, 255, 255))
            cv2.putText(c, key, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1, cv2.LINE_AA)
            panels.append(c)
        grid = np.vstack([np.hstack(panels[:4]), np.hstack(panels[4:])])
        cv2.imwrite(os.path.join(args.out, 'seabi_crop.jpg'), grid, [cv2.IMWRITE_JPEG_QUALITY, 90])


if __name__ == '__main__':
    main()
