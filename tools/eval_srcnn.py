#!/usr/bin/python3
"""SRCNN quality report through upres itself (docs/ops/srcnn.md, "Training and quality").

For each `eval` image of tools/data/manifest.tsv and each scale S:
  HR (u8) -> srcnn_degrade (the Python twin tools/srcnn/degrade.py, which
  tests/ops/srcnn_degrade_test.cpp checks against upres::srcnn_degrade) -> LR PNG ->
  `upres upscale --method srcnn --scale S --model models/srcnn_xS.srcnn` and
  `upres upscale --method bicubic --lattice centered --scale S` -> PSNR / SSIM on Y
  (BT.601 luma rounded to u8, S border pixels shaved; skimage: PSNR data_range 255, SSIM
  gaussian sigma 1.5 with population covariance as MATLAB's ssim).
With --twin (default on), the same pipeline is also run in Python (PyTorch fp32 CPU on the same
weights file, tools/srcnn/degrade.py's colour steps): the end-to-end check of upres's inference
(the two PSNRs must agree to ~0.01 dB).

Prints a markdown table per scale; --json writes every number; --crop writes the comparison
picture (HR / bicubic / SRCNN crops at x2 and x3 of one image).

  /usr/bin/python3 tools/eval_srcnn.py --upres build/release/upres --backend cpu \\
      --json /tmp/srcnn_eval.json --crop docs/ops/img/srcnn_crop.jpg
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
from skimage.metrics import structural_similarity

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, '..')
sys.path.insert(0, os.path.join(HERE, 'srcnn'))
import degrade as D  # noqa: E402
import srcnn_format  # noqa: E402


def psnr(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float('inf') if mse == 0 else 10 * np.log10(255.0 ** 2 / mse)


def ssim(a, b):
    return float(structural_similarity(a, b, data_range=255, gaussian_weights=True, sigma=1.5,
                                       use_sample_covariance=False))


def quality(img, hr, s):
    y = D.y_u8(img)[s:-s, s:-s]
    yh = D.y_u8(hr)[s:-s, s:-s]
    return psnr(y, yh), ssim(y, yh)


def torch_net(model_path):
    import torch
    import torch.nn.functional as F
    m = srcnn_format.load(model_path)
    layers = [(torch.from_numpy(w), torch.from_numpy(b)) for w, b in m['layers']]

    def net(plane):
        x = torch.from_numpy(plane.astype(np.float32))[None, None]
        with torch.no_grad():
            for i, (w, b) in enumerate(layers):
                r = w.shape[-1] // 2
                if r:
                    x = F.pad(x, (r, r, r, r), mode='replicate')
                x = F.conv2d(x, w, b)
                if i < 2:
                    x = F.relu(x)
        return x[0, 0].double().numpy()
    return net


def run_upres(args, files, outdir, extra):
    out = outdir
    if len(files) == 1:  # one input: OUT is a file
        os.makedirs(outdir, exist_ok=True)
        out = os.path.join(outdir, os.path.basename(files[0]))
    cmd = [args.upres, '--backend', args.backend, '-q', 'upscale'] + files + [out] + extra
    t0 = time.time()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f'upres failed ({r.returncode}): {" ".join(cmd)}\n{r.stdout}\n{r.stderr}')
    return time.time() - t0


def crop_picture(path, name, hr_img, results, box, zoom=2):
    """results: {scale: (bicubic u8, srcnn u8)}; box: (x0, y0, size) of the HR crop (fixed by
    hand on the picture's content, not chosen by any score)."""
    import cv2
    x0, y0, size = box
    tiles_rows = []
    for s in sorted(results):
        bi, sr = results[s]
        hr = D.crop(hr_img, s)
        row = []
        for label, im in (('HR', hr), (f'bicubic x{s}', bi), (f'SRCNN x{s}', sr)):
            t = im[y0:y0 + size, x0:x0 + size]
            if t.ndim == 2:
                t = np.stack([t] * 3, -1)
            t = cv2.resize(t, (size * zoom, size * zoom), interpolation=cv2.INTER_NEAREST)
            t = np.ascontiguousarray(t)
            for col, th in (((0, 0, 0), 3), ((255, 255, 255), 1)):
                cv2.putText(t, label, (6, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.55, col, th,
                            cv2.LINE_AA)
            row.append(np.pad(t, ((2, 2), (2, 2), (0, 0)), constant_values=255))
        tiles_rows.append(np.concatenate(row, 1))
    pic = np.concatenate(tiles_rows, 0)
    bgr = cv2.cvtColor(pic, cv2.COLOR_RGB2BGR)
    for q in (90, 80, 70, 60):
        ok, enc = cv2.imencode('.jpg', bgr, [cv2.IMWRITE_JPEG_QUALITY, q])
        if ok and len(enc) < 300 * 1024:
            break
    with open(path, 'wb') as f:
        f.write(enc.tobytes())
    return {'image': name, 'x': x0, 'y': y0, 'size': size, 'zoom': zoom, 'bytes': len(enc)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--upres', default=os.path.join(ROOT, 'build', 'release', 'upres'))
    ap.add_argument('--backend', default='cpu', help='reference, cpu, cuda or auto')
    ap.add_argument('--precision', default=None, help='fp32, tf32, fp16, bf16, fastest')
    ap.add_argument('--variant', default=None, help='auto, direct, ..., fused')
    ap.add_argument('--scales', default='2,3,4')
    ap.add_argument('--models', default=os.path.join(ROOT, 'models'))
    ap.add_argument('--data', default=os.path.join(ROOT, 'data'))
    ap.add_argument('--manifest', default=os.path.join(ROOT, 'tools', 'data', 'manifest.tsv'))
    ap.add_argument('--images', default='', help='comma-separated subset of the eval set')
    ap.add_argument('--no-twin', action='store_true', help='skip the PyTorch twin')
    ap.add_argument('--json', default='')
    ap.add_argument('--crop', default='', help='write the comparison picture (x2, x3) here')
    ap.add_argument('--crop-image', default='butterfly.jpg')
    ap.add_argument('--crop-box', default='176,60,128', help='x0,y0,size of the HR crop')
    a = ap.parse_args()
    names = D.read_manifest(a.manifest, 'eval')
    if a.images:
        want = a.images.split(',')
        bad = [n for n in want if n not in names]
        if bad:
            sys.exit(f'not in the eval set: {bad}')
        names = want
    scales = [int(s) for s in a.scales.split(',')]
    hrs = {n: D.load(os.path.join(a.data, n)) for n in names}
    report = {'upres': a.upres, 'backend': a.backend, 'precision': a.precision or 'fp32',
              'variant': a.variant or 'auto', 'images': names, 'scales': {}}
    crops = {}
    with tempfile.TemporaryDirectory() as tmp:
        for s in scales:
            model = os.path.join(a.models, f'srcnn_x{s}.srcnn')
            lrdir = os.path.join(tmp, f'lr{s}')
            os.makedirs(lrdir)
            files = []
            for n in names:
                lr = D.degrade(hrs[n], s)
                f = os.path.join(lrdir, os.path.splitext(n)[0] + '.png')
                D.save(f, lr)
                files.append(f)
            out_sr, out_bi = os.path.join(tmp, f'sr{s}'), os.path.join(tmp, f'bi{s}')
            extra = ['--method', 'srcnn', '--scale', str(s), '--model', model]
            if a.precision:
                extra += ['--precision', a.precision]
            if a.variant:
                extra += ['--variant', a.variant]
            t_sr = run_upres(a, files, out_sr, extra)
            t_bi = run_upres(a, files, out_bi, ['--method', 'bicubic', '--lattice', 'centered',
                                                '--scale', str(s)])
            net = None if a.no_twin else torch_net(model)
            rows = []
            for n, f in zip(names, files):
                base = os.path.basename(f)
                sr = D.load(os.path.join(out_sr, base))
                bi = D.load(os.path.join(out_bi, base))
                hr = D.crop(hrs[n], s)
                if sr.shape[:2] != hr.shape[:2] or bi.shape[:2] != hr.shape[:2]:
                    sys.exit(f'{n}: upres output {sr.shape} / {bi.shape} vs HR {hr.shape}')
                r = {'image': n}
                r['bicubic_psnr'], r['bicubic_ssim'] = quality(bi, hr, s)
                r['srcnn_psnr'], r['srcnn_ssim'] = quality(sr, hr, s)
                r['gain_db'] = r['srcnn_psnr'] - r['bicubic_psnr']
                if net is not None:
                    tsr, _, _ = D.pipeline(hrs[n], s, net)
                    tbi, _, _ = D.pipeline(hrs[n], s, None)
                    r['twin_srcnn_psnr'], r['twin_srcnn_ssim'] = quality(tsr, hr, s)
                    r['twin_bicubic_psnr'], _ = quality(tbi, hr, s)
                    r['twin_diff_db'] = r['srcnn_psnr'] - r['twin_srcnn_psnr']
                    r['twin_max_abs_u8'] = int(np.abs(tsr.astype(int) - sr.astype(int)).max())
                rows.append(r)
                if a.crop and n == a.crop_image and s in (2, 3):
                    crops[s] = (bi, sr)
            keys = [k for k in rows[0] if k != 'image']
            mean = {k: float(np.mean([r[k] for r in rows])) for k in keys}
            report['scales'][s] = {'rows': rows, 'mean': mean, 'upres_seconds_srcnn': t_sr,
                                   'upres_seconds_bicubic': t_bi}
            print(f'\n### x{s} (upres --backend {a.backend}, precision '
                  f'{a.precision or "fp32"}; {len(names)} eval images, Y, shave {s})\n')
            twin = net is not None
            print('| image | bicubic PSNR / SSIM | SRCNN PSNR / SSIM | gain (dB) |' +
                  (' PyTorch twin PSNR | upres - twin (dB) |' if twin else ''))
            print('|---|---|---|---|' + ('---|---|' if twin else ''))
            for r in rows + [dict(mean, image='**mean**')]:
                line = (f"| {r['image']} | {r['bicubic_psnr']:.2f} / {r['bicubic_ssim']:.4f} | "
                        f"{r['srcnn_psnr']:.2f} / {r['srcnn_ssim']:.4f} | "
                        f"{r['gain_db']:+.2f} |")
                if twin:
                    line += f" {r['twin_srcnn_psnr']:.3f} | {r['twin_diff_db']:+.4f} |"
                print(line)
            sys.stdout.flush()
    if a.crop and crops:
        box = tuple(int(v) for v in a.crop_box.split(','))
        report['crop'] = crop_picture(a.crop, a.crop_image, hrs[a.crop_image], crops, box)
        print(f"\ncrop picture: {a.crop} ({report['crop']['bytes']} bytes)")
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(report, f, indent=1)


if __name__ == '__main__':
    main()
