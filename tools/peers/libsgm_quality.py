#!/usr/bin/env python3
"""Quality of libSGM and of upres's semi-global matcher on the cuda backend, on Aloe at full
size with 256 disparities (libSGM takes 64, 128 or 256): bad-1.0 and bad-2.0 over the returned
pixels with their density and over all pixels with ground truth (tools/eval_stereo.py's
measure). Run by tools/peers/libsgm_peer.sh on the GPU machine.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import eval_stereo  # noqa: E402

D = 256


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--driver', required=True)
    ap.add_argument('--upres', required=True)
    a = ap.parse_args()
    name, L, R, gt, _ = eval_stereo.pairs()[0]
    h, w = L.shape
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        lr, rr, out = (os.path.join(tmp, n) for n in ('l.raw', 'r.raw', 'd.raw'))
        L.tofile(lr)
        R.tofile(rr)
        for paths in (4, 8):
            r = subprocess.run([a.driver, 'run', lr, rr, str(w), str(h), str(D), str(paths), out],
                               check=True, capture_output=True, text=True)
            invalid = int(r.stdout.split('invalid=')[1])
            # libSGM writes 16-bit disparities x 16; its invalid value is negative.
            q = np.fromfile(out, dtype=np.int16).reshape(h, w).astype(np.float32)
            d = np.where(q == invalid, np.nan, q / 16.0)
            rows.append((f'libSGM 3.1.0, {paths} paths', d))
            lp, rp, op = (os.path.join(tmp, n) for n in ('l.png', 'r.png', 'u.npy'))
            cv2.imwrite(lp, L)
            cv2.imwrite(rp, R)
            subprocess.run([a.upres, '-q', '--backend', 'cuda', 'stereo', lp, rp, op,
                            '--disparities', str(D), '--cost', 'census', '--aggregate',
                            f'sgm{paths}', '--lr-check', '1', '--median', '--uniqueness', '5'],
                           check=True)
            rows.append((f'upres census sgm{paths} (cuda)', np.load(op).astype(np.float32)))
    print(f'| pair | matcher | density | bad-1.0 returned | bad-2.0 returned | bad-1.0 all | '
          f'bad-2.0 all |')
    print('|---|---|---:|---:|---:|---:|---:|')
    for m, d in rows:
        s = eval_stereo.scores(d, gt)
        print(f"| {name} ({w} x {h}, {D} disparities) | {m} | {100 * s['density']:.1f} % | "
              f"{100 * s['bad1_ret']:.2f} % | {100 * s['bad2_ret']:.2f} % | "
              f"{100 * s['bad1_all']:.2f} % | {100 * s['bad2_all']:.2f} % |")


if __name__ == '__main__':
    main()
