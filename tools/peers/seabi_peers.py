#!/usr/bin/env python3
"""Peers of bench/seabi_bench.cpp (docs/ops/seabi.md, Speed), 1920 x 1080 -> 3840 x 2160.

  --gpu: PyTorch F.interpolate(scale_factor=2, mode='bicubic') on a 1 x 1 x 1080 x 1920 float32
         CUDA tensor (and on uint8 input converted inside the timed region), CUDA events,
         median of 200 after 20 warm-up runs (needs torch).
  --cpu: OpenCV cv2.resize(INTER_CUBIC) of a u8 1920 x 1080 frame on the given threads,
         median of 30 (needs cv2; Debian's /usr/bin/python3 here).
Prints one JSON object per measurement.
"""
import argparse
import json
import time

import numpy as np


def gpu():
    import torch
    import torch.nn.functional as F
    dev = torch.device('cuda')
    x = torch.rand(1, 1, 1080, 1920, device=dev) * 255
    xu8 = (torch.rand(1, 1, 1080, 1920, device=dev) * 255).to(torch.uint8)
    out = {}
    for name, fn in [('torch_bicubic_f32', lambda: F.interpolate(x, scale_factor=2, mode='bicubic', align_corners=False)),
                     ('torch_bicubic_u8_in_out', lambda: F.interpolate(xu8.float(), scale_factor=2, mode='bicubic', align_corners=False).clamp_(0, 255).to(torch.uint8)),
                     ('torch_bilinear_f32', lambda: F.interpolate(x, scale_factor=2, mode='bilinear', align_corners=False))]:
        for _ in range(20):
            fn()
        torch.cuda.synchronize()
        ts = []
        for _ in range(200):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ts.append(a.elapsed_time(b))
        out[name] = float(np.median(ts))
    print(json.dumps({'device': torch.cuda.get_device_name(0), 'torch': torch.__version__,
                      'median_ms': out}))


def cpu(threads):
    import cv2
    cv2.setNumThreads(threads)
    img = np.random.default_rng(1).integers(1, 256, (1080, 1920), dtype=np.uint8)
    for _ in range(5):
        cv2.resize(img, (3840, 2160), interpolation=cv2.INTER_CUBIC)
    ts = []
    for _ in range(30):
        t = time.perf_counter()
        cv2.resize(img, (3840, 2160), interpolation=cv2.INTER_CUBIC)
        ts.append((time.perf_counter() - t) * 1e3)
    print(json.dumps({'opencv': cv2.__version__, 'threads': cv2.getNumThreads(),
                      'resize_inter_cubic_median_ms': float(np.median(ts))}))


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--gpu', action='store_true')
    ap.add_argument('--cpu', type=int, default=0, help='threads (0: skip)')
    a = ap.parse_args()
    if a.gpu:
        gpu()
    if a.cpu:
        cpu(a.cpu)
