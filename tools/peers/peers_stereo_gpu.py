"""Peers of the paper's GPU stereo workload (bench/stereo_bench.cpp, Cuda_Stereo): a 1120 x 1120
gray uint8 pair of random texture whose right image is the left shifted by 50 pixels, 200
disparities, 13 x 13 window, both maps, left-right check, sub-pixel.

* cv2.StereoBM with 208 disparities (StereoBM needs a multiple of 16) and a 13 x 13 block on all
  of the host's cores (SAD over x-Sobel-prefiltered images, WTA, uniqueness, sub-pixel): the
  issue's CPU comparison, run on the GPU host;
* the same matcher in PyTorch, written to be fast: the absolute-difference cost volume
  (D x H x W, fp32, whole 8-bit levels), the Gauss 13 x 13 window as two separable conv2d passes
  with replicate padding, argmin along the disparities for the left map, the right map from the
  same volume sheared (gather), the left-right check, the parabola through the three sums.
  Device-resident, event-timed.
"""
from __future__ import annotations

import math

from peerlib import Work, peer

W = H = 1120
SHIFT, D = 50, 200


def _pair_np(ctx):
    base = ctx.numpy_random((H, W + SHIFT), "uint8")
    return base[:, :W].copy(), base[:, SHIFT:SHIFT + W].copy()


@peer("cv2_stereobm_13x13_d208_1120_allthreads", kind="cpu", ours="Cuda_Stereo/stream",
      note="cv2.StereoBM numDisparities 208, blockSize 13, 1120 x 1120 u8 pair, all cores")
def stereobm_13(ctx):
    cv2 = ctx.need("cv2")
    cv2.setNumThreads(ctx.threads)
    left, right = _pair_np(ctx)
    bm = cv2.StereoBM_create(numDisparities=208, blockSize=13)

    def run(_):
        bm.compute(left, right)

    return Work(run, pixels=W * H, bytes=4 * W * H, sets=1,
                info={"cv2": cv2.__version__, "size": f"{W}x{H} uint8",
                      "threads": cv2.getNumThreads(), "numDisparities": 208, "blockSize": 13})


def _gauss13(torch):
    sigma = 3.0
    g = [math.exp(-k * k / (2 * sigma * sigma)) for k in range(-6, 7)]
    s = sum(g)
    return torch.tensor([v / s for v in g], device="cuda", dtype=torch.float32)


@peer("torch_stereo_gauss13_d200_1120", kind="torch", ours="Cuda_Stereo/stream",
      note="PyTorch AD cost volume + separable Gauss 13x13 conv2d + argmin + LR + parabola, "
           "1120 x 1120, 200 disparities, fp32")
def torch_matcher(ctx):
    torch = ctx.need("torch")
    F = torch.nn.functional
    # cuDNN's fastest convolution for these shapes (autotuned: without it, 107 ms instead of 17
    # on an H200), in true fp32 (TF32 would round the sums and change the winners).
    torch.backends.cudnn.benchmark = True
    torch.backends.cudnn.allow_tf32 = False
    base = ctx.torch_random((H, W + SHIFT), dtype="uint8")
    left = base[:, :W].float().contiguous()
    right = base[:, SHIFT:SHIFT + W].float().contiguous()
    g = _gauss13(torch)
    kv = g.view(1, 1, 13, 1)
    kh = g.view(1, 1, 1, 13)
    ds = torch.arange(D, device="cuda")
    xs = torch.arange(W, device="cuda")
    # Column of right pixel x - d for each (d, x), clamped; candidate where x - d >= 0.
    xr = (xs.view(1, W) - ds.view(D, 1)).clamp_(0, W - 1)
    cand = (xs.view(1, W) - ds.view(D, 1)) >= 0
    # Right map: right pixel x_r takes the sum at (x_r + d, d); candidate where x_r + d < W.
    xl = xs.view(1, W) + ds.view(D, 1)
    rcand = xl < W
    xl = xl.clamp_(0, W - 1)
    big = torch.tensor(3.0e38, device="cuda")

    def run(_):
        with torch.no_grad():
            cost = (left.view(1, H, W) - right[:, xr].permute(1, 0, 2)).abs_()  # D x H x W
            c = cost.view(D, 1, H, W)
            c = F.conv2d(F.pad(c, (0, 0, 6, 6), mode="replicate"), kv)
            c = F.conv2d(F.pad(c, (6, 6, 0, 0), mode="replicate"), kh).view(D, H, W)
            cl = torch.where(cand.view(D, 1, W), c, big)
            best, bd = cl.min(dim=0)
            # Right map from the same sums, sheared.
            cr = torch.gather(c, 2, xl.view(D, 1, W).expand(D, H, W))
            cr = torch.where(rcand.view(D, 1, W), cr, big)
            _, rd = cr.min(dim=0)
            # Left-right check (tolerance 0).
            xrr = (xs.view(1, W) - bd).clamp_(0, W - 1)
            ok = torch.gather(rd, 1, xrr) == bd
            # Parabola through the neighbours' sums.
            bm = (bd - 1).clamp_(0, D - 1)
            bp = (bd + 1).clamp_(0, D - 1)
            cm = torch.gather(cl, 0, bm.view(1, H, W)).view(H, W)
            cp = torch.gather(cl, 0, bp.view(1, H, W)).view(H, W)
            den = 2.0 * (cm - 2.0 * best + cp)
            sub = bd.float() + torch.where(den > 0, (cm - cp) / den, torch.zeros_like(den))
            return torch.where(ok, sub, torch.full_like(sub, float("nan")))

    return Work(run, pixels=W * H, bytes=4 * W * H, sets=1,
                info={"torch": torch.__version__, "size": f"{W}x{H}", "disparities": D,
                      "window": "Gauss 13x13 separable conv2d, replicate padding",
                      "dtype": "float32", "cudnn.benchmark": True, "allow_tf32": False})
