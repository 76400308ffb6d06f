#!/usr/bin/python3
"""Quality of single-pass streaming SIL-SEABI (predicted threshold) against the exact one, like
Table 6 of paper 002 (its FPGA column: the total variation predicted stripe by stripe).

For each eval image of tools/data/manifest.tsv: BT.601 luma, down-scaled x2 by MATLAB's
antialiased bicubic (centre-aligned, tools/eval_seabi.py's down2), written as PGM, up-scaled by
`upres upscale --method silseabi --stream` (exact threshold: byte-identical to the whole-image
call) and `--stream --single-pass --stripe-rows S` (each batch of stripes uses the total
variation of the rows received so far), compared with the original luma by `upres compare
--json --shave 2` (PSNR, MSSIM) and scored by `upres quality --json` (BRISQUE).

Usage: /usr/bin/python3 tools/eval_seabi_stream.py --upres build/cpu-rel/upres
Prints a Markdown table.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from eval_seabi import ROOT, down2, run  # noqa: E402

STRIPES = [8, 16, 32]


def luma_u8(bgr):
    f = bgr[..., ::-1].astype(np.float64) / 255
    y = 16 + 65.481 * f[..., 0] + 128.553 * f[..., 1] + 24.966 * f[..., 2]
    return np.clip(np.rint(y), 0, 255).astype(np.uint8)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upres', default=os.path.join(ROOT, 'build', 'cpu-rel', 'upres'))
    args = ap.parse_args()
    names = [l.split('\t')[0] for l in open(os.path.join(ROOT, 'tools/data/manifest.tsv'))
             if not l.startswith('#') and l.split('\t')[1] == 'eval']
    tmp = tempfile.mkdtemp(prefix='eval_stream_')
    cols = ['exact'] + [f'single pass, S = {s}' for s in STRIPES]
    res = {c: [] for c in cols}
    for name in names:
        bgr = cv2.imread(os.path.join(ROOT, 'data', name), cv2.IMREAD_COLOR)
        h, w = bgr.shape[:2]
        y = luma_u8(bgr[:h // 2 * 2, :w // 2 * 2])
        hr = os.path.join(tmp, 'hr.pgm')
        cv2.imwrite(hr, y)
        lr = os.path.join(tmp, 'lr.pgm')
        cv2.imwrite(lr, down2(y[..., None], False)[..., 0])
        for c in cols:
            out = os.path.join(tmp, 'out.pgm')
            cmd = [args.upres, '-q', 'upscale', lr, out, '--method', 'silseabi', '--stream']
            if c != 'exact':
                cmd += ['--single-pass', '--stripe-rows', c.split('= ')[1]]
            run(cmd)
            s = json.loads(run([args.upres, 'compare', hr, out, '--json', '--shave', '2']))
            q = json.loads(run([args.upres, 'quality', out, '--json']))
            res[c].append((s['psnr'], s['ssim'], q['brisque']))
        print(name, ' '.join(f'{c}: {res[c][-1][0]:.3f}' for c in cols), file=sys.stderr)
    short = [n.split('.')[0] for n in names]
    print('| image | ' + ' | '.join(cols) + ' |')
    print('|---' * (len(cols) + 1) + '|')
    for i, n in enumerate(short):
        print(f'| {n} | ' + ' | '.join(f'{res[c][i][0]:.2f} / {res[c][i][1]:.4f} / {res[c][i][2]:.1f}'
                                        for c in cols) + ' |')
    print('| **mean** | ' + ' | '.join(
        '**' + ' / '.join(f'{np.mean([v[k] for v in res[c]]):.{d}f}'
                          for k, d in ((0, 2), (1, 4), (2, 1))) + '**' for c in cols) + ' |')


if __name__ == '__main__':
    main()
