#!/usr/bin/env python3
"""Peers of bench/warp_bench.cpp: cupyx.scipy.ndimage rotate and zoom, timed with CuPy events.

Same sizes as bench/warp_bench.cpp and tools/experiments/rotation_experiment.cpp:
  * rotation of a 2048^2 float32 image by 30 degrees, reshape=False, mode='mirror',
    order 1 (bilinear) and 3 (cubic B-spline, prefilter included);
  * zoom x2, x4, x8, x16 to a 2048^2 output (grid_mode=True, mode='mirror'), order 1 and 3.
Inputs are fresh non-zero random floats. Each case: warm-up, then the median of `--reps`
event-timed runs. Prints a markdown table; --json writes the numbers too.

Run on the GPU machine:  python3 tools/peers/warp_peers.py --json $OUT/warp_peers.json
"""
import argparse
import json
import sys


def time_cupy(fn, reps, warmup=3):
    import cupy as cp

    for _ in range(warmup):
        fn()
    cp.cuda.Device().synchronize()
    start, stop = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(reps):
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, stop))
    times.sort()
    return times[len(times) // 2]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--angle", type=float, default=30.0)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", default="")
    a = ap.parse_args()

    import cupy as cp
    import cupyx.scipy.ndimage as ndi

    n = a.size
    rng = cp.random.default_rng(1234)
    rows = []
    img = (rng.random((n, n), dtype=cp.float32) + 0.05).astype(cp.float32)
    out = cp.empty_like(img)
    for order in (1, 3):
        ms = time_cupy(
            lambda: ndi.rotate(img, a.angle, reshape=False, order=order, mode="mirror",
                               output=out), a.reps)
        rows.append({"case": f"rotate {n}^2 {a.angle:g} deg", "order": order, "ms": ms,
                     "in_px": n * n, "out_px": n * n})
    for z in (2, 4, 8, 16):
        m = n // z
        src = (rng.random((m, m), dtype=cp.float32) + 0.05).astype(cp.float32)
        for order in (1, 3):
            ms = time_cupy(
                lambda: ndi.zoom(src, z, order=order, mode="mirror", grid_mode=True,
                                 output=out), a.reps)
            rows.append({"case": f"zoom x{z} {m}^2 -> {n}^2", "order": order, "ms": ms,
                         "in_px": m * m, "out_px": n * n})

    dev = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    print(f"# cupyx.scipy.ndimage peers on {dev}, cupy {cp.__version__}, median of {a.reps}")
    print("| case | order | ms | GB/s (in+out f32) |")
    print("| --- | --- | --- | --- |")
    for r in rows:
        gbs = 4.0 * (r["in_px"] + r["out_px"]) / (r["ms"] * 1e-3) / 1e9
        r["gbps"] = gbs
        print(f"| {r['case']} | {r['order']} | {r['ms']:.4f} | {gbs:.1f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"device": dev, "cupy": cp.__version__, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
