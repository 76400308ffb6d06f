#!/usr/bin/env python3
"""Train upres's SRCNN 9-1-5 (Dong et al. 2014) for one scale, export models/srcnn_x<S>.srcnn.

Protocol (docs/ops/srcnn.md, "Training and quality"):
  * data: the `train` set of tools/data/manifest.tsv only (the `eval` set is only measured, never
    used for any choice: the exported weights are the last ones, not the best on eval);
  * each train image (u8 RGB or gray) and, for more data, copies of it down-scaled by 0.8 and
    0.6 (MATLAB antialiased bicubic, rounded to u8; --rescales) are HR images; per HR image:
    LR = srcnn_degrade(HR) (u8 RGB, rounded), ILR = bicubic x S of the (unrounded) BT.601 luma of
    LR, target = luma(HR); both / 255. This is exactly the input upres's srcnn_upscale gives the
    network (tools/srcnn/degrade.py is the numpy twin; here the same resampling matrices are
    applied in float64 on the GPU, once per image, then all planes stay on the GPU);
  * random patches: the network is run without padding on (P + 12)^2 ILR crops (the receptive
    field is 13) so every output pixel of the P x P target sees its true context: identical to
    the interior of the replicate-padded inference; one random flip/transpose per batch;
  * MSE loss, Adam, learning rate lr with a 2 % warm-up then cosine decay to lr / 100 over the
    time budget; Kaiming-normal init (last layer N(0, 1e-3)); TF32 convolutions in training,
    strict fp32 for every evaluation;
  * every --eval-every seconds: PSNR on the eval manifest (Y of the network's output rounded to
    u8 vs Y of HR rounded to u8, S border pixels shaved, whole images through the network with
    replicate padding) vs bicubic, into the log;
  * at the end: the weights as DIR/srcnn_x<S>.srcnn (tools/srcnn/srcnn_format.py, re-read and
    compared), and DIR/srcnn_x<S>.json with the full evaluation through the whole colour
    pipeline of srcnn_upscale (RGB u8 in and out, as `upres upscale --method srcnn`):
    PSNR / SSIM per image and mean, and the bicubic baseline.
"""
import argparse
import json
import math
import os
import platform
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F_

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'srcnn'))
import degrade as D  # noqa: E402
import srcnn_format  # noqa: E402

LUMA = (D.F[0, 0], D.F[0, 1], D.F[0, 2])


class SRCNN(nn.Module):
    def __init__(self, k=(9, 1, 5), n=(64, 32)):
        super().__init__()
        self.k = k
        self.conv1 = nn.Conv2d(1, n[0], k[0])
        self.conv2 = nn.Conv2d(n[0], n[1], k[1])
        self.conv3 = nn.Conv2d(n[1], 1, k[2])
        for c in (self.conv1, self.conv2):
            nn.init.kaiming_normal_(c.weight, nonlinearity='relu')
            nn.init.zeros_(c.bias)
        nn.init.normal_(self.conv3.weight, std=1e-3)
        nn.init.zeros_(self.conv3.bias)

    def forward(self, x, pad=True):
        def p(t, k):
            if not pad or k == 1:
                return t
            r = k // 2
            return F_.pad(t, (r, r, r, r), mode='replicate')
        x = F_.relu(self.conv1(p(x, self.k[0])))
        x = F_.relu(self.conv2(p(x, self.k[1])))
        return self.conv3(p(x, self.k[2]))

    def layers(self):
        return [(c.weight.detach().cpu().numpy(), c.bias.detach().cpu().numpy())
                for c in (self.conv1, self.conv2, self.conv3)]


# ---- the degradation on the GPU (same matrices as degrade.py, float64) -----------------------

def t_resize(img, out_hw, dev):
    """img: (H, W) or (H, W, C) float64 tensor; MATLAB bicubic imresize."""
    ry = torch.from_numpy(D.resize_matrix(img.shape[0], out_hw[0])).to(dev)
    rx = torch.from_numpy(D.resize_matrix(img.shape[1], out_hw[1])).to(dev)
    out = torch.tensordot(ry, img, dims=([1], [0]))
    return torch.movedim(torch.tensordot(rx, out, dims=([1], [1])), 0, 1)


def t_round_u8(x):
    return torch.clamp(torch.round(x), 0, 255)  # torch.round: half to even


def t_luma(u8):
    """u8-valued float64 tensor (H, W) gray or (H, W, 3) -> Y on the 8-bit scale."""
    u = u8 / 255.0
    if u.ndim == 2:
        return 16.0 + 219.0 * u
    return (LUMA[0] * u[..., 0] + LUMA[1] * u[..., 1] + LUMA[2] * u[..., 2]) + 16.0


def make_pair(hr, s, dev):
    """hr: u8-valued float64 tensor. -> (ilr, y_hr) float64 planes / 255, HR-sized."""
    h, w = hr.shape[0] - hr.shape[0] % s, hr.shape[1] - hr.shape[1] % s
    hr = hr[:h, :w]
    lr = t_round_u8(t_resize(hr, (h // s, w // s), dev))
    ilr = t_resize(t_luma(lr), (h, w), dev)
    return ilr / 255.0, t_luma(hr) / 255.0


# ---- evaluation ------------------------------------------------------------------------------

def psnr_u8(a, b):
    mse = np.mean((a.astype(np.float64) - b.astype(np.float64)) ** 2)
    return float('inf') if mse == 0 else 10 * math.log10(255.0 ** 2 / mse)


def shave(x, s):
    return x[s:-s, s:-s]


@torch.no_grad()
def run_net(model, plane, dev):
    """float64 numpy plane in [0, 1] -> float64 numpy, strict fp32 on dev."""
    tf = torch.backends.cudnn.allow_tf32
    torch.backends.cudnn.allow_tf32 = False
    try:
        x = torch.from_numpy(plane.astype(np.float32))[None, None].to(dev)
        y = model(x, pad=True)[0, 0].double().cpu().numpy()
    finally:
        torch.backends.cudnn.allow_tf32 = tf
    return y


def full_eval(model, eval_imgs, s, dev):
    """Whole srcnn_upscale colour pipeline (as the upres CLI): per image PSNR/SSIM on Y u8."""
    from skimage.metrics import structural_similarity
    rows = []
    for name, hr in eval_imgs:
        sr, hrc, _ = D.pipeline(hr, s, lambda p: run_net(model, p, dev))
        bi, _, _ = D.pipeline(hr, s, None)
        yh = shave(D.y_u8(hrc), s)
        r = {'image': name, 'size': [int(hrc.shape[1]), int(hrc.shape[0])]}
        for key, img in (('bicubic', bi), ('srcnn', sr)):
            y = shave(D.y_u8(img), s)
            r[key + '_psnr'] = psnr_u8(y, yh)
            r[key + '_ssim'] = float(structural_similarity(
                y, yh, data_range=255, gaussian_weights=True, sigma=1.5,
                use_sample_covariance=False))
        r['gain_db'] = r['srcnn_psnr'] - r['bicubic_psnr']
        rows.append(r)
    mean = {k: float(np.mean([r[k] for r in rows]))
            for k in ('bicubic_psnr', 'bicubic_ssim', 'srcnn_psnr', 'srcnn_ssim', 'gain_db')}
    return rows, mean


# ---- training --------------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--scale', type=int, required=True)
    ap.add_argument('--minutes', type=float, default=8.0, help='training time budget')
    ap.add_argument('--out', required=True)
    ap.add_argument('--data', default=os.path.join(HERE, '..', 'data'))
    ap.add_argument('--manifest', default=os.path.join(HERE, 'data', 'manifest.tsv'))
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument('--patch', type=int, default=64, help='output patch side')
    ap.add_argument('--lr', type=float, default=1e-3)
    ap.add_argument('--rescales', default='1.0,0.8,0.6')
    ap.add_argument('--eval-every', type=float, default=30.0, help='seconds')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--max-train', type=int, default=0, help='debug: use only N train images')
    ap.add_argument('--device', default='cuda' if torch.cuda.is_available() else 'cpu')
    a = ap.parse_args()
    s = a.scale
    dev = torch.device(a.device)
    os.makedirs(a.out, exist_ok=True)
    torch.manual_seed(a.seed)
    gen = torch.Generator(device=dev)
    gen.manual_seed(a.seed)
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = True
    log_path = os.path.join(a.out, f'train_x{s}.log')
    logf = open(log_path, 'w')

    def log(msg):
        line = f'[x{s} {time.time() - t_start:7.1f}s] {msg}'
        print(line, flush=True)
        logf.write(line + '\n')
        logf.flush()

    t_start = time.time()
    train_names = D.read_manifest(a.manifest, 'train')
    eval_names = D.read_manifest(a.manifest, 'eval')
    if a.max_train:
        train_names = train_names[:a.max_train]
    rescales = [float(f) for f in a.rescales.split(',')]
    log(f'device {dev} ({torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"}), '
        f'torch {torch.__version__}, train {len(train_names)} images x rescales {rescales}')

    # Pre-compute the planes (float64 on the device, then float32).
    ilrs, hrs = [], []
    for name in train_names:
        hr = torch.from_numpy(D.load(os.path.join(a.data, name)).astype(np.float64)).to(dev)
        for f in rescales:
            img = hr
            if f != 1.0:
                img = t_round_u8(t_resize(hr, (round(hr.shape[0] * f), round(hr.shape[1] * f)),
                                          dev))
            ilr, yh = make_pair(img, s, dev)
            ilrs.append(ilr.float())
            hrs.append(yh.float())
    margin = (9 // 2) + (5 // 2)  # 6: the receptive field 13 = P + 12 input for P output
    P, Pin = a.patch, a.patch + 2 * margin
    hs = torch.tensor([t.shape[0] for t in ilrs], device=dev)
    ws = torch.tensor([t.shape[1] for t in ilrs], device=dev)
    Hm, Wm = int(hs.max()), int(ws.max())
    big_in = torch.zeros(len(ilrs), Hm, Wm, device=dev)
    big_hr = torch.zeros(len(ilrs), Hm, Wm, device=dev)
    for i, (x, y) in enumerate(zip(ilrs, hrs)):
        big_in[i, :x.shape[0], :x.shape[1]] = x
        big_hr[i, :y.shape[0], :y.shape[1]] = y
    area = ((hs - Pin + 1) * (ws - Pin + 1)).double()
    prob = area / area.sum()
    n_px = int((hs * ws).sum())
    log(f'{len(ilrs)} training planes, {n_px / 1e6:.1f} Mpx, patch {P} (+{margin} context), '
        f'batch {a.batch}')
    del ilrs, hrs

    eval_imgs = [(n, D.load(os.path.join(a.data, n))) for n in eval_names]
    # Quick eval planes (Y only): the network's input of the pipeline and the Y u8 target.
    quick = []
    for name, hr in eval_imgs:
        hrc = D.crop(hr, s)
        lr = D.degrade(hrc, s)
        ilr = D.bicubic(D.luma(lr), s) / 255.0
        quick.append((name, torch.from_numpy(ilr.astype(np.float32))[None, None].to(dev),
                      shave(D.y_u8(hrc), s), psnr_u8(shave(D.round_u8(ilr * 255), s),
                                                     shave(D.y_u8(hrc), s))))
    bic_quick = float(np.mean([q[3] for q in quick]))
    log(f'setup done; eval (Y only) bicubic mean PSNR {bic_quick:.3f} dB')

    @torch.no_grad()
    def quick_eval(model):
        tf = torch.backends.cudnn.allow_tf32
        torch.backends.cudnn.allow_tf32 = False
        ps = []
        for name, x, yh, _ in quick:
            y = (model(x, pad=True)[0, 0].double() * 255.0).cpu().numpy()
            ps.append(psnr_u8(shave(D.round_u8(y), s), yh))
        torch.backends.cudnn.allow_tf32 = tf
        return float(np.mean(ps))

    model = SRCNN().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    budget = a.minutes * 60.0
    ar = torch.arange(Pin, device=dev)
    t_train = time.time()
    step, next_eval, loss_acc, loss_n = 0, 0.0, 0.0, 0
    rnd = random.Random(a.seed)
    history = []
    while True:
        el = time.time() - t_train
        if el >= budget:
            break
        prog = el / budget
        lr = a.lr * (prog / 0.02 if prog < 0.02 else
                     0.01 + 0.99 * 0.5 * (1 + math.cos(math.pi * (prog - 0.02) / 0.98)))
        for g in opt.param_groups:
            g['lr'] = lr
        if el >= next_eval:
            q = quick_eval(model)
            history.append({'step': step, 'seconds': round(el, 1), 'eval_psnr': q})
            log(f'step {step:7d} lr {lr:.2e} loss {loss_acc / max(loss_n, 1):.3e} '
                f'eval PSNR {q:.3f} dB (bicubic {bic_quick:.3f}, gain {q - bic_quick:+.3f})')
            loss_acc, loss_n = 0.0, 0
            next_eval = el + a.eval_every
        idx = torch.multinomial(prob, a.batch, replacement=True, generator=gen)
        y0 = (torch.rand(a.batch, device=dev, generator=gen) *
              (hs[idx] - Pin + 1)).long()
        x0 = (torch.rand(a.batch, device=dev, generator=gen) *
              (ws[idx] - Pin + 1)).long()
        rows = (y0[:, None] + ar)[:, :, None]
        cols = (x0[:, None] + ar)[:, None, :]
        bi = idx[:, None, None]
        xin = big_in[bi, rows, cols][:, None]
        tgt = big_hr[bi, rows[:, margin:-margin], cols[:, :, margin:-margin]][:, None]
        t = rnd.randrange(8)
        if t & 1:
            xin, tgt = xin.flip(3), tgt.flip(3)
        if t & 2:
            xin, tgt = xin.flip(2), tgt.flip(2)
        if t & 4:
            xin, tgt = xin.transpose(2, 3), tgt.transpose(2, 3)
        out = model(xin, pad=False)
        loss = F_.mse_loss(out, tgt)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        step += 1
        if step % 50 == 0:
            loss_acc += float(loss.detach())
            loss_n += 1
    if dev.type == 'cuda':
        torch.cuda.synchronize()
    train_s = time.time() - t_train
    q = quick_eval(model)
    history.append({'step': step, 'seconds': round(train_s, 1), 'eval_psnr': q})
    log(f'done: {step} steps in {train_s:.1f} s ({step / train_s:.1f} steps/s), '
        f'eval PSNR {q:.3f} dB (gain {q - bic_quick:+.3f})')

    rows, mean = full_eval(model, eval_imgs, s, dev)
    for r in rows:
        log(f"  {r['image']:18s} bicubic {r['bicubic_psnr']:.3f} / {r['bicubic_ssim']:.4f}  "
            f"srcnn {r['srcnn_psnr']:.3f} / {r['srcnn_ssim']:.4f}  gain {r['gain_db']:+.3f}")
    log(f"  mean               bicubic {mean['bicubic_psnr']:.3f} / {mean['bicubic_ssim']:.4f}  "
        f"srcnn {mean['srcnn_psnr']:.3f} / {mean['srcnn_ssim']:.4f}  "
        f"gain {mean['gain_db']:+.3f}")

    dev_name = torch.cuda.get_device_name(dev) if dev.type == 'cuda' else platform.processor()
    desc = (f'SRCNN 9-1-5 (64/32) x{s}; tools/train_srcnn.py; data: tools/data/manifest.tsv '
            f'train ({len(train_names)} images, rescales {a.rescales}); {step} steps of batch '
            f'{a.batch} x {P}x{P}; Adam lr {a.lr} cosine; {train_s:.0f} s on {dev_name}; eval '
            f'mean Y PSNR {mean["srcnn_psnr"]:.2f} dB (bicubic {mean["bicubic_psnr"]:.2f})')
    path = os.path.join(a.out, f'srcnn_x{s}.srcnn')
    layers = model.layers()
    srcnn_format.save(path, s, layers, desc)
    back = srcnn_format.load(path)
    assert back['scale'] == s and all(
        np.array_equal(w, w2) and np.array_equal(b, b2)
        for (w, b), (w2, b2) in zip(layers, back['layers']))
    rec = {
        'model': os.path.basename(path), 'scale': s, 'architecture': '9-1-5, 64/32, replicate',
        'description': desc,
        'data': {'manifest': 'tools/data/manifest.tsv', 'train': train_names,
                 'rescales': rescales, 'planes': int(len(hs)), 'megapixels': n_px / 1e6,
                 'eval': eval_names},
        'steps': step, 'batch': a.batch, 'patch': P, 'context': margin, 'lr': a.lr,
        'schedule': '2% linear warm-up, cosine to lr/100 over the time budget',
        'optimizer': 'Adam', 'loss': 'MSE', 'init': 'kaiming normal; last layer N(0, 1e-3)',
        'seed': a.seed, 'train_seconds': train_s, 'steps_per_second': step / train_s,
        'device': dev_name, 'torch': torch.__version__,
        'eval_protocol': ('srcnn_upscale colour pipeline (u8 RGB in/out); Y = BT.601 luma '
                          'rounded to u8; shave scale px; PSNR; SSIM gaussian sigma 1.5, '
                          'population covariance, data_range 255 (skimage)'),
        'eval': rows, 'eval_mean': mean, 'history': history,
    }
    with open(os.path.join(a.out, f'srcnn_x{s}.json'), 'w') as f:
        json.dump(rec, f, indent=1)
    log(f'wrote {path}')


if __name__ == '__main__':
    main()
