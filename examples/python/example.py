"""upres from Python: scipy.ndimage's calls, super-resolution and quality on a real photo.

    PYTHONPATH=build/release/python python3 examples/python/example.py examples/data/butterfly.png
"""

from __future__ import annotations

import sys

import numpy as np

import upres


def main(path: str) -> None:
    img = upres.imread(path)  # (H, W, 3) uint8
    f = img.astype(np.float32) / 255
    rotated = upres.rotate(f, 30, axes=(1, 0), reshape=False, mode="mirror")  # as scipy's
    small = upres.zoom(f, (0.5, 0.5, 1), order=1, grid_mode=True, mode="nearest")
    h, w = img.shape[0] // 2 * 2, img.shape[1] // 2 * 2
    truth = np.ascontiguousarray(img[:h, :w])
    half = upres.zoom(truth, (0.5, 0.5, 1), order=1, grid_mode=True, mode="nearest")
    bicubic = upres.upscale(half, 2, "bicubic")  # MATLAB imresize
    sr = upres.srcnn(half, 2)
    score: float = upres.brisque(img)
    print(f"rotated {rotated.shape}, zoomed {small.shape}, BRISQUE {score:.2f}; x2 of a half-size "
          f"copy: bicubic {upres.psnr(truth, bicubic):.2f} dB, SRCNN {upres.psnr(truth, sr):.2f} dB")

if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "examples/data/butterfly.png")
