#!/usr/bin/env python3
"""Scaling of upres.dask from one to two worker processes (distributed.LocalCluster, one thread
each; each task one CPU thread): the exact B-spline zoom x2 (bands of rows) and rotation by 30
degrees (2-D tiles) of a u16 TIFF read by the workers (upres.dask.imread_tiff), against the
whole-image upres.zoom / upres.rotate on one and on two threads in the same run. Every timing is
the median of --reps runs after a warm-up; the output is reduced on the workers (a sum) so that
no gigabyte travels to the client. Checks that the dask result equals the whole-image one (bit
for bit) once. Writes a JSON report and rewrites the table between the markers of docs/scale.md.

    PYTHONPATH=build/cpu-rel/python build/cpu-rel/pyenv/bin/python tools/dask_scale.py \
        [--side 8192] [--reps 3] [--json docs/bench_reports/scale/dask-X.json]

--gpu: the zoom on the GPUs instead (backend='cuda'), on upres.dask.local_gpu_cluster of one
and of every GPU (one worker process per GPU), with NumPy chunks (the TIFF read by the tasks,
the sum on the host) and with CuPy chunks (the bands uploaded to the worker's GPU and summed
there), against the whole-image upres.zoom on one GPU (imread, zoom, sum); its own table in
docs/scale.md.
"""
import argparse
import json
import os
import platform
import statistics
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOC = os.path.join(ROOT, "docs", "scale.md")
BEGIN, END = "<!-- dask-table begin -->", "<!-- dask-table end -->"
GPU_BEGIN, GPU_END = "<!-- dask-gpu-table begin -->", "<!-- dask-gpu-table end -->"


def median_time(fn, reps):
    fn()  # warm-up
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def write_table(text, begin, end):
    doc = open(DOC).read()
    if begin in doc and end in doc:
        pre, rest = doc.split(begin, 1)
        post = rest.split(end, 1)[1]
        with open(DOC, "w") as f:
            f.write(pre + begin + "\n\n" + text + "\n\n" + end + post)


def report(a, head, speedup, rows, facts, begin, end):
    """Prints the table (a row's speed-up: its base's time over its own; '-' without a base),
    writes the JSON report (--json) and the table between begin and end in docs/scale.md."""
    table = [f"| run | time | {speedup} |", "|---|---|---|"]
    for r in rows:
        up = "-" if r["base"] is None else f"{r['base'] / r['seconds']:.2f}x"
        table.append(f"| {r['run']} | {r['seconds']:.2f} s | {up} |")
    text = head + "\n\n" + "\n".join(table)
    print(text)
    if a.json:
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump(dict(facts, reps=a.reps, chunk_rows=a.chunk_rows, text=text, rows=rows), f,
                      indent=1)
    write_table(text, begin, end)


def gpu_main(a, img, path):
    import cupy as cp
    import dask
    import distributed
    import upres
    import upres.dask as ud

    n = a.side
    ngpu = upres._upres.cuda_device_count()
    zoom = dict(mode="mirror", grid_mode=True)
    ref = cp.asnumpy(upres.zoom(cp.asarray(img), 2, backend="cuda", **zoom))
    ref_sum = int(ref.sum(dtype=np.uint64))
    rows = []
    whole = median_time(lambda: int(upres.zoom(cp.asarray(upres.imread(path)), 2,
                                               backend="cuda", **zoom).sum(dtype=cp.uint64)),
                        a.reps)
    rows.append({"run": "whole image on one GPU in one process (imread, upload, upres.zoom, "
                 "sum on the GPU)",
                 "seconds": whole, "base": None})
    identical = True
    for chunks in ("numpy", "cupy"):
        base = None
        for devs in sorted({1, ngpu}):
            with ud.local_gpu_cluster(list(range(devs)), dashboard_address=None,
                                      threads_per_worker=a.threads_per_worker) as cluster, \
                    distributed.Client(cluster) as client:
                def graph():
                    x = ud.imread_tiff(path, chunk_rows=512)
                    if chunks == "cupy":
                        x = x.map_blocks(cp.asarray)
                    return ud.zoom(x, 2, backend="cuda", chunk_rows=a.chunk_rows, **zoom)

                def run():
                    s = graph().sum(dtype=np.uint64)
                    return int(client.compute(s).result())
                got = run()
                if got != ref_sum:
                    identical = False
                t = median_time(run, a.reps)
                if devs == 1 and chunks == "numpy":
                    full = graph().compute()
                    identical = identical and bool(np.array_equal(
                        full if isinstance(full, np.ndarray) else cp.asnumpy(full), ref))
                    del full
            base = base or t
            rows.append({"run": f"upres.dask on {devs} GPU worker(s), {chunks} chunks "
                         f"(imread_tiff, zoom, sum)", "seconds": t, "base": base})
            print(rows[-1], flush=True)
    gpu = upres._upres.cuda_device_info().split("\n")[0]
    same = "yes" if identical else "NO"
    head = (f"Measured by `tools/dask_scale.py --gpu` on {ngpu} GPU(s) ({gpu}; "
            f"{os.cpu_count()} cores; dask {dask.__version__}): {n}^2 u16, exact B-spline zoom x2 "
            f"(mirror), {a.chunk_rows}-row output bands, {a.threads_per_worker} task(s) at once "
            f"per GPU; median of {a.reps} runs after a warm-up. Bit-identical to the whole-image "
            f"cuda call: {same}.")
    report(a, head, "speed-up over one GPU worker", rows,
           {"side": n, "gpus": ngpu, "threads_per_worker": a.threads_per_worker,
            "identical": identical}, GPU_BEGIN, GPU_END)
    return 0 if identical else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--side", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--chunk-rows", type=int, default=1024, help="output rows per task")
    ap.add_argument("--json")
    ap.add_argument("--gpu", action="store_true", help="the zoom on the GPUs (local_gpu_cluster)")
    ap.add_argument("--threads-per-worker", type=int, default=1, help="--gpu: tasks per GPU")
    a = ap.parse_args()

    import dask
    import distributed
    import upres
    import upres.dask as ud

    rng = np.random.default_rng(0)
    n = a.side
    y, x = np.mgrid[0:n, 0:n].astype(np.float32)
    img = (20000 + 15000 * np.sin(x / 97.0) * np.cos(y / 61.0) +
           rng.normal(0, 800, (n, n))).clip(1, 65535).astype(np.uint16)
    del x, y
    work = tempfile.mkdtemp(prefix="upres-dask-")
    path = os.path.join(work, "in.tif")
    upres.imwrite(path, img)
    if a.gpu:
        try:
            return gpu_main(a, img, path)
        finally:
            os.remove(path)
            os.rmdir(work)

    # Per operation: the whole-image call and the dask one (on a dask array).
    ops = {
        "zoom": (lambda a_, **kw: upres.zoom(a_, 2, mode="mirror", grid_mode=True, **kw),
                 lambda x: ud.zoom(x, 2, mode="mirror", grid_mode=True, chunk_rows=a.chunk_rows),
                 f"zoom x2, {a.chunk_rows}-row output bands"),
        "rotate": (lambda a_, **kw: upres.rotate(a_, 30, reshape=False, mode="mirror", **kw),
                   lambda x: ud.rotate(x, 30, reshape=False, mode="mirror",
                                       output_chunks=(a.chunk_rows, a.chunk_rows)),
                   f"rotation by 30 degrees, {a.chunk_rows}^2 output tiles"),
    }
    rows = []
    identical = True
    for op, (whole_fn, dask_fn, what) in ops.items():
        whole = {}
        # The same work in one process: read the TIFF, warp, sum.
        for threads in (1, 2):
            whole[threads] = median_time(
                lambda: int(whole_fn(upres.imread(path), backend="cpu", threads=threads)
                            .sum(dtype=np.uint64)), a.reps)
            rows.append({"op": op, "what": what, "run": f"whole image in one process (imread, "
                         f"upres.{op}, sum), {threads} thread(s)", "seconds": whole[threads],
                         "base": whole[1]})
        ref = whole_fn(img, backend="cpu")
        ref_sum = int(ref.sum(dtype=np.uint64))
        dask_t = {}
        for workers in (1, 2):
            with distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                          processes=True, dashboard_address=None) as cluster, \
                    distributed.Client(cluster) as client:
                def run():
                    z = dask_fn(ud.imread_tiff(path, chunk_rows=512))
                    return int(client.compute(z.sum(dtype=np.uint64)).result())
                assert run() == ref_sum, f"the dask {op} differs from the whole-image one"
                dask_t[workers] = median_time(run, a.reps)
            rows.append({"op": op, "what": what, "run": f"upres.dask: imread_tiff, {op}, sum on "
                         f"a LocalCluster of {workers} worker(s)", "seconds": dask_t[workers],
                         "base": dask_t[1]})
        # Bit for bit, once (the sums above only guard each timed run).
        got = dask_fn(ud.imread_tiff(path, chunk_rows=512)).compute(scheduler="threads")
        identical = identical and bool(np.array_equal(got, ref))
        del got, ref
    os.remove(path)
    os.rmdir(work)

    cores = os.cpu_count()
    cpu = platform.processor() or platform.machine()
    same = "yes" if identical else "NO"
    head = (f"Measured by `tools/dask_scale.py` on {cores} cores ({cpu}; dask "
            f"{dask.__version__}): {n}^2 u16, exact B-spline (mirror): "
            + "; ".join(ops[o][2] for o in ops) + f"; median of {a.reps} runs after a warm-up. "
            f"Bit-identical to the whole-image calls: {same}.")
    report(a, head, "speed-up", rows, {"side": n, "cores": cores, "identical": identical},
           BEGIN, END)
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
