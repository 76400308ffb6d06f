#!/usr/bin/env python3
"""PSNR cost of each SRCNN precision mode on the evaluation manifest (docs/ops/srcnn.md,
"Precision modes"): runs tools/eval_srcnn.py once per precision on the Cuda backend, then
compares every image's SRCNN PSNR with the fp32 run's. The issue's rule: the fastest mode may
lose at most 0.01 dB against fp32.

  python3 tools/srcnn/precision_loss.py --upres build-gpu/upres --out srcnn_precision.md \\
      [--json srcnn_precision.json] [--precisions fp32,tf32,fp16,bf16,fastest]

Runs on the GPU machine (its python3 has numpy and scikit-image); needs data/ (the eval photos).
Exit status 1 if the `fastest` mode loses more than 0.01 dB on the mean of any scale.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
EVAL = os.path.join(HERE, '..', 'eval_srcnn.py')
LIMIT_DB = 0.01


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upres', required=True)
    ap.add_argument('--precisions', default='fp32,tf32,fp16,bf16,fastest')
    ap.add_argument('--variant', default=None)
    ap.add_argument('--out', required=True, help='markdown summary')
    ap.add_argument('--json', default='')
    a = ap.parse_args()
    precs = a.precisions.split(',')
    if precs[0] != 'fp32':
        precs = ['fp32'] + [p for p in precs if p != 'fp32']
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for p in precs:
            j = os.path.join(tmp, p + '.json')
            cmd = [sys.executable, EVAL, '--upres', a.upres, '--backend', 'cuda', '--precision', p,
                   '--no-twin', '--json', j]
            if a.variant:
                cmd += ['--variant', a.variant]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f'{" ".join(cmd)} failed:\n{r.stdout}\n{r.stderr}')
            with open(j) as f:
                runs[p] = json.load(f)
    base = runs['fp32']
    lines = ['| precision | scale | mean SRCNN PSNR (dB) | mean loss vs fp32 (dB) | '
             'worst image loss (dB) | seconds (8 images) |', '|---|---|---|---|---|---|']
    summary, ok = {}, True
    for p in precs:
        for s, d in runs[p]['scales'].items():
            b = base['scales'][s]
            mean_loss = b['mean']['srcnn_psnr'] - d['mean']['srcnn_psnr']
            worst = max(rb['srcnn_psnr'] - rd['srcnn_psnr'] for rb, rd in zip(b['rows'], d['rows']))
            summary.setdefault(p, {})[s] = {'mean_psnr': d['mean']['srcnn_psnr'],
                                           'mean_loss_db': mean_loss, 'worst_image_loss_db': worst}
            if p == 'fastest' and mean_loss > LIMIT_DB:
                ok = False
            lines.append(f"| {p} | x{s} | {d['mean']['srcnn_psnr']:.4f} | {mean_loss:+.4f} | "
                         f"{worst:+.4f} | {d['upres_seconds_srcnn']:.2f} |")
    text = ('SRCNN precision modes on the eval manifest (upres CLI, --backend cuda; loss = fp32 '
            'PSNR - mode PSNR, positive is worse)\n\n' + '\n'.join(lines) + '\n\n' +
            f"fastest within {LIMIT_DB} dB of fp32 on every scale's mean: "
            f"{'yes' if ok else 'NO'}\n")
    with open(a.out, 'w') as f:
        f.write(text)
    print(text)
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(summary, f, indent=1)
    sys.exit(0 if ok else 1)


if __name__ == '__main__':
    main()
