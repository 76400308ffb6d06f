#!/usr/bin/env python3
"""Turns upres_bench JSON (and peer JSON) into markdown tables. Standard library only.

    build/bench/upres_bench --benchmark_format=json --benchmark_out=bench.json \\
        --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
    python3 tools/peers/run_peers.py --out peers.json
    python3 tools/bench_report.py bench.json --peers peers.json [-o report.md]

Per benchmark: time (the median over repetitions where there are several, else the run's own
time; for device benchmarks the CUDA-event time), pixels/s, GB/s (bytes read + written per
second) and the % of the memory floor measured in the same run: benchmarks whose name contains
"Cuda" against the best Floor_Cuda* bytes/s, the others against the best Floor_Host* bytes/s.
Skipped benchmarks (SkipWithError, e.g. "no CUDA device") are listed as skipped.

Peers: each peer's median time, rates and % of the same floors (GPU peers against the device
floor, CPU peers against the host floor), and, where the peer names the upres benchmark doing
the same work ("ours"), our time and the speed-up (peer time / our time).
"""
from __future__ import annotations

import argparse
import json
import sys

UNIT_TO_MS = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}


def fmt_time(ms):
    if ms is None:
        return "-"
    if ms >= 1000:
        return f"{ms / 1000:.3f} s"
    if ms >= 1:
        return f"{ms:.3f} ms"
    return f"{ms * 1000:.1f} us"


def fmt_rate(v, unit):
    """v in units/s -> '12.3 G<unit>/s'."""
    if v is None:
        return "-"
    for scale, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if v >= scale:
            return f"{v / scale:.2f} {prefix}{unit}/s"
    return f"{v:.1f} {unit}/s"


def fmt_gbs(v):
    if v is None:
        return "-"
    g = v / 1e9
    return f"{g:.1f}" if g >= 10 else f"{g:.3g}"


def fmt_pct(v):
    return "-" if v is None else f"{v:.0f}%"


def load_bench(path):
    with open(path) as f:
        doc = json.load(f)
    rows = {}  # run_name -> dict
    reps = {}  # run_name -> list of iteration entries (when no aggregates were reported)
    for b in doc.get("benchmarks", []):
        name = b.get("run_name") or b.get("name")
        if b.get("error_occurred"):
            rows[name] = {"name": name, "skipped": b.get("error_message", "error")}
            continue
        if b.get("run_type") == "aggregate":
            agg = b.get("aggregate_name")
            if agg == "median":
                rows[name] = entry(b, name)
            elif agg == "cv" and name in rows:
                rows[name]["cv"] = b.get("real_time")
            elif agg == "cv":
                reps.setdefault("__cv__" + name, []).append(b)
            continue
        reps.setdefault(name, []).append(b)
    for name, entries in reps.items():
        if name.startswith("__cv__") or name in rows:
            continue
        if len(entries) == 1:
            rows[name] = entry(entries[0], name)
        else:  # repetitions without aggregates: take the median entry by time
            entries = sorted(entries, key=lambda e: e["real_time"])
            rows[name] = entry(entries[len(entries) // 2], name)
            rows[name]["reps"] = len(entries)
    for key, entries in reps.items():
        if key.startswith("__cv__") and key[6:] in rows:
            rows[key[6:]]["cv"] = entries[0].get("real_time")
    order = []
    for b in doc.get("benchmarks", []):
        name = b.get("run_name") or b.get("name")
        if name not in order and name in rows:
            order.append(name)
    return doc.get("context", {}), [rows[n] for n in order]


def entry(b, name):
    ms = b["real_time"] * UNIT_TO_MS.get(b.get("time_unit", "ns"), 1e-6)
    return {
        "name": name,
        "ms": ms,
        "pixels_s": b.get("pixels/s"),
        "bytes_s": b.get("bytes/s"),
        "reps": b.get("repetitions"),
        "threads": b.get("threads"),
    }


def floors(rows):
    def best(prefix):
        vals = [r["bytes_s"] for r in rows
                if "skipped" not in r and r["name"].startswith(prefix) and r.get("bytes_s")]
        return max(vals) if vals else None

    return {"cuda": best("Floor_Cuda"), "host": best("Floor_Host")}


def is_device(name):
    return "Cuda" in name


def pct(bytes_s, floor):
    if not bytes_s or not floor:
        return None
    return 100.0 * bytes_s / floor


def bench_table(rows, fl):
    out = ["| benchmark | time | pixels/s | GB/s | % of floor | cv |",
           "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for r in rows:
        if "skipped" in r:
            out.append(f"| {r['name']} | skipped: {r['skipped']} | | | | |")
            continue
        floor = fl["cuda"] if is_device(r["name"]) else fl["host"]
        cv = r.get("cv")
        out.append(
            f"| {r['name']} | {fmt_time(r['ms'])} | {fmt_rate(r['pixels_s'], 'px')} | "
            f"{fmt_gbs(r['bytes_s'])} | {fmt_pct(pct(r['bytes_s'], floor))} | "
            f"{'-' if cv is None else f'{100 * cv:.1f}%'} |")
    return "\n".join(out)


def find_ours(rows, prefix):
    if not prefix:
        return None
    for r in rows:
        if "skipped" not in r and r["name"].startswith(prefix):
            return r
    return None


def peers_table(peers, rows, fl):
    out = ["| peer | kind | status | median | runs | pixels/s | GB/s | % of floor | upres | "
           "speed-up |",
           "| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"]
    notes = []
    for p in peers.get("results", []):
        if p.get("status") != "ok":
            msg = (p.get("message") or "").replace("|", "/")
            out.append(f"| {p['name']} | {p['kind']} | {p['status']}: {msg} | | | | | | | |")
            continue
        floor = fl["host"] if p["kind"] == "cpu" else fl["cuda"]
        bytes_s = p["gb_s"] * 1e9 if p.get("gb_s") else None
        pix_s = p["mpix_s"] * 1e6 if p.get("mpix_s") else None
        ours = find_ours(rows, p.get("ours"))
        ours_s = f"{ours['name']}: {fmt_time(ours['ms'])}" if ours else "-"
        speed = f"{p['median_ms'] / ours['ms']:.2f}x" if ours else "-"
        out.append(
            f"| {p['name']} | {p['kind']} | ok | {fmt_time(p['median_ms'])} | {p['runs']} | "
            f"{fmt_rate(pix_s, 'px')} | {fmt_gbs(bytes_s)} | {fmt_pct(pct(bytes_s, floor))} | "
            f"{ours_s} | {speed} |")
        if p.get("note"):
            notes.append(f"- `{p['name']}`: {p['note']}")
    meta = peers.get("meta", {})
    head = []
    if meta:
        v = meta.get("versions", {})
        vers = ", ".join(f"{k} {val}" for k, val in v.items() if val)
        head.append(f"Peers run {meta.get('date', '?')} on {meta.get('gpu') or 'no GPU'} "
                    f"({meta.get('cpu_count', '?')} CPUs); {vers}.")
        m = meta.get("method", {})
        if m:
            head.append("Method: GPU " + m.get("gpu", "?") + "; CPU " + m.get("cpu", "?") +
                        "; " + m.get("inputs", "") + ".")
        head.append("")
    return "\n".join(head + out + ([""] + notes if notes else []))


def close_json(path):
    """A benchmark JSON cut short (upres_bench stopped by a timeout: it writes the file entry by
    entry) closed after its last whole entry, in place. Returns how many benchmarks it keeps, or
    None when the file is whole already or holds no whole entry."""
    with open(path) as f:
        text = f.read()
    try:
        json.loads(text)
        return None
    except ValueError:
        pass
    cut = text.rfind("\n    }")
    if cut < 0 or '"benchmarks": [' not in text[:cut]:
        return None
    fixed = text[: cut + len("\n    }")] + "\n  ]\n}\n"
    try:
        d = json.loads(fixed)
    except ValueError:
        return None
    with open(path, "w") as f:
        f.write(fixed)
    return len({b.get("run_name", b["name"]) for b in d["benchmarks"]})


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bench", nargs="?", help="upres_bench --benchmark_format=json output")
    ap.add_argument("--peers", help="tools/peers/run_peers.py --out output")
    ap.add_argument("-o", "--out", help="write markdown here (default stdout)")
    ap.add_argument("--close", metavar="JSON",
                    help="close a benchmark JSON cut short after its last whole entry, in place; "
                         "print how many benchmarks it keeps (nothing if whole or empty)")
    args = ap.parse_args(argv)
    if args.close:
        n = close_json(args.close)
        if n is not None:
            print(n)
        return 0
    if not args.bench and not args.peers:
        ap.error("give a benchmark JSON file, --peers, or both")

    parts, rows, fl = [], [], {"cuda": None, "host": None}
    if args.bench:
        ctx, rows = load_bench(args.bench)
        fl = floors(rows)
        devs = str(ctx.get("cuda_devices", "?")).replace("\n", "; ")
        parts.append("### upres_bench\n")
        parts.append(f"{ctx.get('date', '?')}, host {ctx.get('host_name', '?')} "
                     f"({ctx.get('num_cpus', '?')} CPUs), CUDA devices: {devs}; "
                     f"upres {ctx.get('upres_version', '?')}, CUDA {ctx.get('upres_cuda', '?')}, "
                     f"{ctx.get('upres_compiler', '?')}.\n")
        parts.append("Memory floors measured in this run: device "
                     f"{fmt_gbs(fl['cuda'])} GB/s, host {fmt_gbs(fl['host'])} GB/s "
                     "(bytes read + written). Time: median over repetitions where several ran; "
                     "device benchmarks are CUDA-event timed.\n")
        parts.append(bench_table(rows, fl))
    if args.peers:
        with open(args.peers) as f:
            peers = json.load(f)
        parts.append("\n### Peers\n")
        parts.append(peers_table(peers, rows, fl))
    text = "\n".join(parts) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
