#!/usr/bin/env python3
"""Writes a large tiled TIFF (BigTIFF when needed) of smooth structure plus noise, tile by tile
(memory: one tile), for the tiled-execution measurements of docs/scale.md.

    make_big_tiff.py OUT.tif SIDE [--dtype uint16|uint8|float32] [--channels 1] [--seed 1]
"""
import argparse

import numpy as np
import tifffile


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("side", type=int)
    ap.add_argument("--height", type=int, default=0, help="default: SIDE")
    ap.add_argument("--dtype", default="uint16", choices=["uint8", "uint16", "float32"])
    ap.add_argument("--channels", type=int, default=1)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--tile", type=int, default=256)
    a = ap.parse_args()
    w, h, t, c = a.side, a.height or a.side, a.tile, a.channels
    top = {"uint8": 255.0, "uint16": 65535.0, "float32": 1.0}[a.dtype]
    rng = np.random.default_rng(a.seed)
    freq = rng.uniform(0.002, 0.05, size=(4, 2))
    phase = rng.uniform(0, 6.3, size=4)

    def tiles():
        for ty in range(0, h, t):
            yy = np.arange(ty, ty + t, dtype=np.float32)[:, None]
            for tx in range(0, w, t):
                xx = np.arange(tx, tx + t, dtype=np.float32)[None, :]
                v = sum(np.sin(freq[k, 0] * xx + freq[k, 1] * yy + phase[k]) for k in range(4))
                v = 0.5 + 0.1 * v + 0.05 * rng.standard_normal((t, t), dtype=np.float32)
                v = np.clip(v, 0, 1) * top
                v = v.astype(a.dtype)
                yield np.repeat(v[:, :, None], c, axis=2) if c > 1 else v

    shape = (h, w, c) if c > 1 else (h, w)
    big = w * h * c * np.dtype(a.dtype).itemsize > 3.9e9
    tifffile.imwrite(a.out, tiles(), shape=shape, dtype=a.dtype, tile=(t, t), bigtiff=big,
                     photometric="rgb" if c == 3 else "minisblack")


if __name__ == "__main__":
    main()
