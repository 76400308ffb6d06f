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


def median_time(fn, reps):
    fn()  # warm-up
    runs = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - t0)
    return statistics.median(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--side", type=int, default=8192)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--chunk-rows", type=int, default=1024, help="output rows per task")
    ap.add_argument("--json")
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
    table = ["| run | time | speed-up |", "|---|---|---|"]
    for r in rows:
        table.append(f"| {r['run']} | {r['seconds']:.2f} s | {r['base'] / r['seconds']:.2f}x |")
    text = head + "\n\n" + "\n".join(table)
    print(text)
    if a.json:
        os.makedirs(os.path.dirname(a.json), exist_ok=True)
        with open(a.json, "w") as f:
            json.dump({"side": n, "cores": cores, "reps": a.reps, "chunk_rows": a.chunk_rows,
                       "identical": identical, "rows": rows}, f, indent=1)
    doc = open(DOC).read()
    if BEGIN in doc and END in doc:
        pre, rest = doc.split(BEGIN, 1)
        post = rest.split(END, 1)[1]
        with open(DOC, "w") as f:
            f.write(pre + BEGIN + "\n\n" + text + "\n\n" + END + post)
    return 0 if identical else 1


if __name__ == "__main__":
    raise SystemExit(main())
