#!/usr/bin/env python3
"""Times upres's peers (PyTorch, CuPy, SciPy, OpenCV) and writes JSON for tools/bench_report.py.

    python3 tools/peers/run_peers.py --out peers.json            # all peers
    python3 tools/peers/run_peers.py --kind cpu --cpu-size 1024  # CPU peers only
    python3 tools/peers/run_peers.py --list

Peers are registered by the tools/peers/peers_*.py modules (one function each, see
peerlib.py). Missing packages or no device make a peer "unavailable"; the script never stops at
a failing peer and exits 0 unless its own arguments are wrong.
"""
from __future__ import annotations

import argparse
import glob
import importlib
import json
import os
import platform
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import peerlib  # noqa: E402


def load_modules():
    for path in sorted(glob.glob(os.path.join(HERE, "peers_*.py"))):
        importlib.import_module(os.path.splitext(os.path.basename(path))[0])


def versions():
    out = {"python": platform.python_version()}
    for mod, attr in (("numpy", "__version__"), ("scipy", "__version__"), ("cv2", "__version__"),
                      ("torch", "__version__"), ("cupy", "__version__"), ("skimage", "__version__")):
        try:
            out[mod] = getattr(importlib.import_module(mod), attr)
        except Exception:
            out[mod] = None
    return out


def gpu_name():
    try:
        import torch
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            return f"{p.name} ({p.multi_processor_count} SMs)"
    except Exception:
        pass
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
    except Exception:
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--out", help="write JSON here (default: stdout summary only)")
    ap.add_argument("--only", help="regex on peer names")
    ap.add_argument("--kind", choices=["all", "gpu", "cpu"], default="all")
    ap.add_argument("--runs", type=int, default=50, help="timed runs per peer (GPU; CPU at most)")
    ap.add_argument("--warmup", type=int, default=5, help="untimed warm-up runs")
    ap.add_argument("--cpu-seconds", type=float, default=5.0,
                    help="time budget of one CPU peer's timed runs (at least 3 runs)")
    ap.add_argument("--cpu-size", type=int, default=2048, help="square image size of CPU peers")
    ap.add_argument("--list", action="store_true", help="list the peers and exit")
    args = ap.parse_args(argv)

    load_modules()
    peers = peerlib.REGISTRY
    if args.only:
        peers = [p for p in peers if re.search(args.only, p.name)]
    if args.kind == "gpu":
        peers = [p for p in peers if p.kind != "cpu"]
    elif args.kind == "cpu":
        peers = [p for p in peers if p.kind == "cpu"]
    if args.list:
        for p in peers:
            print(f"{p.name:45s} {p.kind:6s} {p.note}")
        return 0

    doc = {
        "meta": {
            "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "host": platform.node(),
            "cpu_count": os.cpu_count(),
            "gpu": gpu_name(),
            "versions": versions(),
            "method": {
                "gpu": f"device events per run, {args.warmup} warm-up runs, median of "
                       f"{args.runs} runs, {peerlib.SPIN_US:.0f} us spin before each start event",
                "cpu": f"perf_counter per run, warm-up, median of runs within "
                       f"{args.cpu_seconds} s (3..{args.runs})",
                "inputs": "fresh non-zero random data, input sets rotated when they fit in cache",
            },
        },
        "results": [],
    }

    def save():  # after every peer, so a run stopped by a time limit keeps what it measured
        if args.out:
            with open(args.out, "w") as f:
                json.dump(doc, f, indent=1)

    save()
    for p in peers:
        t0 = time.time()
        r = peerlib.run_peer(p, args)
        r["wall_s"] = round(time.time() - t0, 2)
        doc["results"].append(r)
        save()
        if r["status"] == "ok":
            extra = "".join(
                [f"  {r['mpix_s']:.1f} Mpix/s" if r.get("mpix_s") else "",
                 f"  {r['gb_s']:.1f} GB/s" if r.get("gb_s") else ""])
            print(f"{p.name:45s} ok  median {r['median_ms']:.4f} ms ({r['runs']} runs){extra}",
                  flush=True)
        else:
            print(f"{p.name:45s} {r['status']}: {r.get('message', '')}", flush=True)

    return 0


if __name__ == "__main__":
    sys.exit(main())
