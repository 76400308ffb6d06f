#!/usr/bin/python3
"""Quality of NLM multi-frame super-resolution (upres fuse) and the single-image methods, x2.

Photo sequences (the paper's experiment): from each eval image of tools/data/manifest.tsv, three
256 x 256 crops (top-left, centre, bottom-right quarter points); each crop becomes N
low-resolution 128 x 128 frames: frame 0 (the reference) is the crop itself, the others the
image rotated by a random angle in [-1, 1] degree and shifted by a random [-2, 2] pixels in x
and y about the crop's centre (cv2.warpAffine, cubic, reflected borders); every frame is blurred
(Gaussian, sigma 0.8 high-resolution pixels), averaged over 2 x 2 blocks (centre-aligned
decimation), given Gaussian noise of sigma 0, 4 or 13 levels (13: the paper's setting) and
rounded to u8. Seeded (numpy default_rng(1000 + crop)).
Real motion: frames 60 to 80 of opencv-doc's vtest.avi (people walking, 768 x 576), each
down-scaled x2 by MATLAB's antialiased bicubic (tools/golden/matlab_imresize.py, the SRCNN
protocol), or by the photo sequences' camera (blur, 2 x 2 means), and rounded; frames 62 to 78
are reconstructed from their 5-frame neighbourhoods.
Methods: bicubic (upres upscale --method bicubic), B-spline (upres warp --zoom 2), SRCNN
(upres upscale --method srcnn), SIL-SEABI (upres upscale --method silseabi: defined on the
co-sited lattice, half a pixel off on these centre-aligned frames), NLM-SR given the reference
frame alone (the same engine and weight scale), NLM-SR on all frames (upres fuse, defaults), and
the same two with --post reconstruct.
Scores: `upres compare --json --shave 4` (PSNR and SSIM on BT.601 Y).

Usage: /usr/bin/python3 tools/eval_nlmsr.py --upres build/cpu-rel/upres [--out docs/ops]
Tuning (training images only): --set train --quick --fuse-args '--iterations 2'
Prints Markdown tables; writes docs/ops/nlmsr_crop.jpg (a crop comparison, noise 4, 4 frames).
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
sys.path.insert(0, os.path.join(ROOT, 'tools', 'golden'))
from matlab_imresize import imresize  # noqa: E402

SINGLE = {
    'bicubic': ['upscale', '--method', 'bicubic'],
    'bspline': ['warp', '--zoom', '2'],
    'srcnn': ['upscale', '--method', 'srcnn'],
    'silseabi': ['upscale', '--method', 'silseabi'],
}


# The NLM-SR engines: the default post-step (backproject) and post reconstruct (its defaults).
POSTS = [('nlm', []), ('reconstruct', ['--post', 'reconstruct'])]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    return r.stdout


def score(upres, truth, out):
    s = json.loads(run([upres, 'compare', truth, out, '--json', '--shave', '4']))
    return float(s['psnr']), float(s['ssim'])


def camera(img):
    """The photo sequences' camera: Gaussian blur of sigma 0.8 output pixels, then each pixel
    the mean of 2 x 2 (float, H and W even)."""
    h, w = img.shape[:2]
    blur = cv2.GaussianBlur(img, (0, 0), 0.8, borderType=cv2.BORDER_REFLECT)
    return blur.reshape(h // 2, 2, w // 2, 2, -1).mean(axis=(1, 3))


def degrade(img, cx, cy, angle, dx, dy, noise, rng):
    m = cv2.getRotationMatrix2D((cx, cy), angle, 1.0)
    m[0, 2] += dx
    m[1, 2] += dy
    h, w = img.shape[:2]
    warped = cv2.warpAffine(img.astype(np.float64), m, (w, h), flags=cv2.INTER_CUBIC,
                            borderMode=cv2.BORDER_REFLECT)
    crop = warped[cy - 128:cy + 128, cx - 128:cx + 128]
    lr = camera(crop)
    lr = lr + rng.normal(0.0, noise, lr.shape)
    return np.clip(np.rint(lr), 0, 255).astype(np.uint8)


def methods_on(upres, tmp, frames, ref, truth_path, table, key, crop_store=None, fuse_args=(),
               single=SINGLE):
    """Scores every method on one sequence (frames: list of file paths)."""
    for m, args in single.items():
        out = os.path.join(tmp, f'{m}.png')
        run([upres, '--quiet'] + args[:1] + [frames[ref], out] + args[1:])
        table.setdefault((key, m), []).append(score(upres, truth_path, out))
        if crop_store is not None:
            crop_store[m] = cv2.imread(out)
    for name, extra in POSTS:
        out = os.path.join(tmp, 'nlm1.png')
        run([upres, '--quiet', 'fuse', frames[ref], out] + extra + list(fuse_args))
        table.setdefault((key, f'{name}, 1 frame'), []).append(score(upres, truth_path, out))
        out = os.path.join(tmp, 'nlm.png')
        run([upres, '--quiet', 'fuse'] + frames + [out, '--reference', str(ref)] + extra +
            list(fuse_args))
        table.setdefault((key, f'{name}, {len(frames)} frames'), []).append(
            score(upres, truth_path, out))
        if crop_store is not None:
            crop_store[name] = cv2.imread(out)


def print_table(title, table, keys):
    print(f'\n{title}\n')
    cols = sorted({m for (k, m) in table if k in keys}, key=lambda m: list(table).index(
        next(kk for kk in table if kk[1] == m)))
    print('| setting | ' + ' | '.join(cols) + ' |')
    print('|---' * (len(cols) + 1) + '|')
    for k in keys:
        cells = []
        for m in cols:
            v = table.get((k, m))
            cells.append('' if not v else
                         f'{np.mean([p for p, _ in v]):.2f} / {np.mean([s for _, s in v]):.4f}')
        print(f'| {k} | ' + ' | '.join(cells) + ' |')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--upres', default=os.path.join(ROOT, 'build', 'cpu-rel', 'upres'))
    ap.add_argument('--out', default=os.path.join(ROOT, 'docs', 'ops'))
    ap.add_argument('--video', default='')
    ap.add_argument('--set', default='eval', help="manifest set: eval (reports) or train (tuning)")
    ap.add_argument('--fuse-args', default='', help='extra upres fuse flags (tuning)')
    ap.add_argument('--quick', action='store_true',
                    help='tuning: bicubic and NLM only, 4 frames, no video')
    args = ap.parse_args()
    names = [l.split('\t')[0] for l in open(os.path.join(ROOT, 'tools/data/manifest.tsv'))
             if not l.startswith('#') and l.split('\t')[1] == args.set]
    fuse_args = args.fuse_args.split()
    single = {'bicubic': SINGLE['bicubic']} if args.quick else SINGLE
    tmp = tempfile.mkdtemp(prefix='eval_nlmsr_')
    table = {}
    crops = {}
    keys = []
    n_crop = 0
    for name in names:
        img = cv2.imread(os.path.join(ROOT, 'data', name), cv2.IMREAD_COLOR)
        h, w = img.shape[:2]
        for fx, fy in [(0.25, 0.25), (0.5, 0.5), (0.75, 0.75)]:
            cx = int(np.clip(round(fx * w), 140, w - 140))
            cy = int(np.clip(round(fy * h), 140, h - 140))
            truth = img[cy - 128:cy + 128, cx - 128:cx + 128]
            truth_path = os.path.join(tmp, 'truth.png')
            cv2.imwrite(truth_path, truth)
            for noise in (0, 4, 13):
                for n in ((4,) if args.quick else (4, 8)):
                    rng = np.random.default_rng(1000 + n_crop)
                    paths = []
                    for k in range(n):
                        ang, dx, dy = ((0.0, 0.0, 0.0) if k == 0 else
                                       (rng.uniform(-1, 1), rng.uniform(-2, 2),
                                        rng.uniform(-2, 2)))
                        f = degrade(img, cx, cy, ang, dx, dy, noise, rng)
                        p = os.path.join(tmp, f'f{k}.png')
                        cv2.imwrite(p, f)
                        paths.append(p)
                    key = f'noise {noise}, {n} frames'
                    if key not in keys:
                        keys.append(key)
                    store = {} if (name == 'butterfly.jpg' and fx == 0.5 and noise == 4 and
                                   n == 4) else None
                    methods_on(args.upres, tmp, paths, 0, truth_path, table, key, store, fuse_args,
                               single)
                    if store is not None:
                        store['original'] = truth
                        crops = store
            n_crop += 1
            print(name, fx, file=sys.stderr, flush=True)
    print_table(f'Photo sequences: {n_crop} crops of {len(names)} eval images, 256 x 256 from '
                '128 x 128 frames; PSNR (dB) / SSIM on Y, shave 4', table, keys)
    if args.quick:
        return

    video = args.video or os.path.join(ROOT, 'data', 'vtest.avi')
    if not os.path.exists(video):
        video = '/usr/share/doc/opencv-doc/examples/data/vtest.avi'
    cap = cv2.VideoCapture(video)
    frames = []
    i = 0
    while len(frames) < 21:
        ok, fr = cap.read()
        if not ok:
            sys.exit(f'cannot read 81 frames of {video}')
        if i >= 60:
            frames.append(fr)
        i += 1
    vt = {}
    vkeys = []
    for proto in ('bicubic', 'camera'):
        key = f'vtest.avi, {proto} down-scaling'
        vkeys.append(key)
        lr_paths = []
        for k, fr in enumerate(frames):
            h, w = fr.shape[:2]
            lr = (np.stack([imresize(fr[..., c].astype(np.float64), (h // 2, w // 2))
                            for c in range(3)], axis=2) if proto == 'bicubic'
                  else camera(fr.astype(np.float64)))
            p = os.path.join(tmp, f'v{k:02d}.png')
            cv2.imwrite(p, np.clip(np.rint(lr), 0, 255).astype(np.uint8))
            lr_paths.append(p)
        for k in range(2, 19):
            truth_path = os.path.join(tmp, 'vtruth.png')
            cv2.imwrite(truth_path, frames[k])
            methods_on(args.upres, tmp, lr_paths[k - 2:k + 3], 2, truth_path, vt, key,
                       fuse_args=fuse_args)
            print('video', proto, 'frame', 60 + k, file=sys.stderr, flush=True)
    print_table('Real motion: vtest.avi frames 62-78, each from its 5-frame neighbourhood, x2 '
                '(MATLAB bicubic down-scaling, or the photo sequences\' camera); PSNR (dB) / SSIM '
                'on Y, shave 4', vt, vkeys)

    if crops:
        n = 96
        panels = []
        for key in ['original', 'bicubic', 'srcnn', 'nlm', 'reconstruct']:
            c = crops[key][80:80 + n, 80:80 + n]
            c = cv2.resize(c, (3 * n, 3 * n), interpolation=cv2.INTER_NEAREST)
            c = cv2.copyMakeBorder(c, 28, 4, 4, 4, cv2.BORDER_CONSTANT, value=(255, 255, 255))
            label = {'nlm': 'NLM-SR, 4 frames', 'reconstruct': '--post reconstruct'}.get(key, key)
            cv2.putText(c, label, (8, 20), cv2.FONT_HERSHEY_SIMPLEX, 0.6, (0, 0, 0), 1,
                        cv2.LINE_AA)
            panels.append(c)
        cv2.imwrite(os.path.join(args.out, 'nlmsr_crop.jpg'), np.hstack(panels),
                    [cv2.IMWRITE_JPEG_QUALITY, 90])


if __name__ == '__main__':
    main()
