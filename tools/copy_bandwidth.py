#!/usr/bin/env python3
"""Host <-> device copy bandwidth of each GPU alone and of all of them at once: the floor of the
tiled zoom's bands spread over several GPUs (docs/scale.md, "Several GPUs"). Run on the GPU
machine (needs CuPy):

    python3 tools/copy_bandwidth.py                 # page-locked host buffers, 256 MiB pieces
    python3 tools/copy_bandwidth.py --pageable --mib 64
    python3 tools/copy_bandwidth.py --distinct      # every repetition from its own host pages

Each GPU copies its piece `--reps` times on its own stream(s), from its own host thread; the
figure is the bytes of every GPU over the wall time of the slowest (after a warm-up copy).
"down" and "up" copy one way; "both" is the tiled zoom's traffic: each GPU downloads its piece
while it uploads a quarter of it on a second stream (the x2 zoom's source is a quarter of its
output). Prints one line per direction and set of GPUs.
"""
from __future__ import annotations

import argparse
import threading
import time

import cupy as cp
import numpy as np


def host_buffer(n: int, pinned: bool) -> np.ndarray:
    if pinned:
        return np.frombuffer(cp.cuda.alloc_pinned_memory(n), np.uint8, n)
    return np.ones(n, np.uint8)  # pages touched


def bandwidth(
    devs: list[int], direction: str, n: int, reps: int, pinned: bool, distinct: bool
) -> float:
    copies = reps if distinct else 1
    down_n = 0 if direction == "up" else n
    up_n = {"down": 0, "up": n, "both": n // 4}[direction]
    # Only the buffers the direction copies.
    down = {d: [host_buffer(down_n, pinned) for _ in range(copies if down_n else 0)] for d in devs}
    up = {d: [host_buffer(up_n, pinned) for _ in range(copies if up_n else 0)] for d in devs}
    bufs, up_bufs = {}, {}
    for d in devs:
        with cp.cuda.Device(d):
            if down_n:
                bufs[d] = cp.ones(down_n, cp.uint8)
            if up_n:
                up_bufs[d] = cp.ones(up_n, cp.uint8)
            cp.cuda.Device(d).synchronize()

    def work(d: int, times: int) -> None:
        with cp.cuda.Device(d):
            s_down = cp.cuda.Stream(non_blocking=True)
            s_up = cp.cuda.Stream(non_blocking=True)
            for i in range(times):
                if down_n:
                    bufs[d].get(stream=s_down, out=down[d][i % copies])
                if up_n:
                    up_bufs[d].set(up[d][i % copies], stream=s_up)
            s_down.synchronize()
            s_up.synchronize()

    for d in devs:
        work(d, 1)
    t0 = time.perf_counter()
    threads = [threading.Thread(target=work, args=(d, reps)) for d in devs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return len(devs) * reps * (down_n + up_n) / (time.perf_counter() - t0) / 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pageable", action="store_true", help="ordinary host memory")
    ap.add_argument("--mib", type=int, default=256, help="piece size in MiB")
    ap.add_argument("--reps", type=int, default=8)
    ap.add_argument("--distinct", action="store_true", help="a host buffer per repetition")
    a = ap.parse_args()
    ngpu = cp.cuda.runtime.getDeviceCount()
    sets = [[d] for d in range(ngpu)] + ([list(range(ngpu))] if ngpu > 1 else [])
    kind = "pageable" if a.pageable else "page-locked"
    pages = ", distinct host pages" if a.distinct else ""
    for direction in ("down", "up", "both"):
        for devs in sets:
            gbs = bandwidth(devs, direction, a.mib << 20, a.reps, not a.pageable, a.distinct)
            print(
                f"{direction:4s} GPUs {devs}: {gbs:.1f} GB/s "
                f"({kind}, {a.mib} MiB x {a.reps}{pages})"
            )


if __name__ == "__main__":
    main()
