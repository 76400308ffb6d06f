#!/usr/bin/env python3
"""Benchmarks of the Python module against the C++ calls and the peers, in one run.

    PYTHONPATH=<build>/python python3 tools/bench_python.py --bench <build>/bench/upres_bench \
        [--json out.json] [--quick]

CPU (any machine): the per-call overhead of a 16 x 16 float shift (upres.shift, bilinear, one
thread) against the same C++ call (upres_bench Warp_CpuTinyCall); upres.zoom (x2) and
upres.rotate (30 degrees, reshape=False) of a 1024^2 float32 NumPy array, order 3, mode
'mirror', on 1 thread and on all cores, against scipy.ndimage (single-threaded) with the same
arguments. GPU (when CuPy and a device are there): upres.rotate of a 2048^2 float32 CuPy array
(30 degrees, order 3, reshape=False, mode='mirror') timed with CUDA events, against the C++
call of the same rotation (upres_bench Api_CudaWarp/0/1) and cupyx.scipy.ndimage.rotate with
the same arguments. Timings: medians of repeated batches after a warm-up, fresh random inputs.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any, Callable

import numpy as np

import upres


def cpp_bench(binary: str, filt: str) -> float | None:
    """Median real time (seconds) of the C++ benchmarks matching filt."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "bench.json")
        try:
            subprocess.run([binary, f"--benchmark_filter={filt}", f"--benchmark_out={out}",
                            "--benchmark_out_format=json", "--benchmark_repetitions=5",
                            "--benchmark_min_time=0.2"], capture_output=True, text=True,
                           check=True, timeout=300)
            with open(out) as f:
                data = json.load(f)
        except (OSError, subprocess.SubprocessError, ValueError) as e:
            print(f"C++ benchmark {filt}: {e}", file=sys.stderr)
            return None
    unit = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
    for b in data["benchmarks"]:
        if b.get("aggregate_name") == "median":
            return float(b["real_time"]) * unit[b["time_unit"]]
    return None


def wall(f: Callable[[], Any], reps: int, batch: int = 1) -> float:
    """Median over reps of the mean wall time of `batch` calls (seconds)."""
    f()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        for _ in range(batch):
            f()
        times.append((time.perf_counter() - t) / batch)
    return statistics.median(times)


def cpu_rows(binary: str | None, quick: bool) -> list[dict[str, Any]]:
    import scipy.ndimage as ndi

    rows: list[dict[str, Any]] = []
    tiny = np.random.default_rng(1).random((16, 16), dtype=np.float32) + 0.5
    py = wall(lambda: upres.shift(tiny, (0, 1), order=1, threads=1), 9, 2000)
    cpp = cpp_bench(binary, "Warp_CpuTinyCall") if binary else None
    rows.append({"case": "16x16 float32 shift, bilinear, 1 thread: per call", "upres": py,
                 "cpp": cpp, "overhead_us": (py - cpp) * 1e6 if cpp else None})
    n = 512 if quick else 1024
    img = np.random.default_rng(2).random((n, n), dtype=np.float32) + 0.5
    reps = 3 if quick else 5
    cases = [
        (f"zoom x2 of {n}^2 float32, order 3, mirror",
         lambda th: upres.zoom(img, 2, mode="mirror", threads=th),
         lambda: ndi.zoom(img, 2, mode="mirror")),
        (f"rotate 30 deg of {n}^2 float32, order 3, mirror, reshape=False",
         lambda th: upres.rotate(img, 30, reshape=False, mode="mirror", threads=th),
         lambda: ndi.rotate(img, 30, reshape=False, mode="mirror")),
    ]
    for name, ours, theirs in cases:
        t1 = wall(lambda: ours(1), reps)
        tall = wall(lambda: ours(0), reps)
        ts = wall(theirs, reps)
        rows.append({"case": name, "upres_1thread": t1, "upres_all": tall, "scipy": ts,
                     "speedup_1thread": ts / t1, "speedup_all": ts / tall})
    return rows


def gpu_rows(binary: str | None) -> list[dict[str, Any]]:
    try:
        import cupy as cp
        import cupyx.scipy.ndimage as cnd
    except ImportError:
        return []
    if not upres.cuda_available():
        return []
    rng = np.random.default_rng(3)
    sets = [cp.asarray(rng.random((2048, 2048), dtype=np.float32)) for _ in range(8)]
    outs = [cp.empty_like(s) for s in sets]

    def events(f: Callable[[int], Any], batch: int, reps: int = 7) -> float:
        for i in range(3):
            f(i)
        cp.cuda.Device().synchronize()
        times = []
        for _ in range(reps):
            a, b = cp.cuda.Event(), cp.cuda.Event()
            a.record()
            for i in range(batch):
                f(i)
            b.record()
            b.synchronize()
            times.append(cp.cuda.get_elapsed_time(a, b) * 1e-3 / batch)
        return statistics.median(times)

    py = events(lambda i: upres.rotate(sets[i % 8], 30, reshape=False, mode="mirror",
                                       output=outs[i % 8]), 200)
    py_alloc = events(lambda i: upres.rotate(sets[i % 8], 30, reshape=False, mode="mirror"), 200)
    cx = events(lambda i: cnd.rotate(sets[i % 8], 30, order=3, reshape=False, mode="mirror"), 20)
    cpp = cpp_bench(binary, "Api_CudaWarp/0/1/") if binary else None
    return [{"case": "rotate 30 deg of a 2048^2 float32 CuPy array, order 3, mirror, "
                     "reshape=False", "upres_output": py, "upres_new": py_alloc, "cpp": cpp,
             "cupyx": cx, "vs_cpp": py_alloc / cpp if cpp else None, "vs_cupyx": cx / py_alloc}]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bench", help="the upres_bench binary (for the C++ timings)")
    ap.add_argument("--json", help="write the rows here")
    ap.add_argument("--quick", action="store_true", help="smaller CPU images, fewer repetitions")
    args = ap.parse_args()
    rows = cpu_rows(args.bench, args.quick) + gpu_rows(args.bench)
    for r in rows:
        print(json.dumps({k: (round(v, 9) if isinstance(v, float) else v) for k, v in r.items()}))
    parts = []
    for r in rows:
        if "overhead_us" in r and r["overhead_us"] is not None:
            parts.append(f"16x16 call +{r['overhead_us']:.1f} us over C++")
        elif "speedup_1thread" in r:
            parts.append(f"{r['case'].split(' of')[0]} {r['speedup_1thread']:.1f}x scipy (1 thread), "
                         f"{r['speedup_all']:.1f}x (all)")
        elif "vs_cupyx" in r:
            vs = f"{r['vs_cpp']:.3f}x the C++ call, " if r["vs_cpp"] else ""
            parts.append(f"CuPy rotate {r['upres_new'] * 1e6:.1f} us: {vs}{r['vs_cupyx']:.1f}x "
                         "faster than cupyx")
    print("summary: " + "; ".join(parts))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rows": rows, "build": upres.build_info()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
