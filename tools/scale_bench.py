#!/usr/bin/env python3
"""Time and peak memory of `upres warp --tiled --zoom 2` on large u16 TIFFs, against libvips'
cubic resize (`vips resize --kernel cubic`, the anchor of docs/scale.md) and the whole-image
`upres warp`, on the same machine in the same run; with --op rotate, of `upres warp --tiled
--rotate 30` (2-D tiles) against `vips rotate --interpolate bicubic` and the whole-image
rotation. Writes a JSON report and rewrites the table between the markers of docs/scale.md.

    tools/scale_bench.py --upres build/cpu-rel/upres [--op zoom|rotate]
                         [--sides 4096,16384,40000] [--reps 3]
                         [--work /tmp/upres-scale] [--json docs/bench_reports/X.json]

Inputs come from tools/make_big_tiff.py (smooth structure and noise). Each timing is the median
of --reps runs (the 40000 side: one run); memory is the peak resident set size (GNU time).
Needs /usr/bin/time, `vips` (Debian libvips-tools) and /usr/bin/python3 with numpy + tifffile.
"""
import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DOC = os.path.join(ROOT, "docs", "scale.md")
MARKERS = {"zoom": ("<!-- scale-table begin -->", "<!-- scale-table end -->"),
           "rotate": ("<!-- rotate-table begin -->", "<!-- rotate-table end -->")}
# Per operation: upres's arguments, libvips' command (IN, OUT appended where {} stand) and
# the table's first column.
OPS = {"zoom": (["--zoom", "2"], ["resize", "{in}", "{out}", "2", "--kernel", "cubic"],
                "side (u16, zoom x2)", "libvips cubic"),
       "rotate": (["--rotate", "30"], ["rotate", "{in}", "{out}", "30", "--interpolate",
                                       "bicubic"], "side (u16, rotate 30 deg)",
                  "libvips rotate bicubic")}


def timed(cmd):
    """(seconds, peak RSS in MiB) of one run."""
    r = subprocess.run(["/usr/bin/time", "-f", "%e %M"] + cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{r.stderr}")
    secs, kb = r.stderr.strip().splitlines()[-1].split()
    return float(secs), int(kb) / 1024.0


def measure(cmd, reps, out):
    runs = []
    for _ in range(reps):
        runs.append(timed(cmd))
        if os.path.exists(out):
            os.remove(out)
    return {"seconds": statistics.median(r[0] for r in runs),
            "peak_mib": max(r[1] for r in runs), "runs": len(runs)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--upres", required=True)
    ap.add_argument("--sides", default="4096,16384,40000")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", default="/tmp/upres-scale")
    ap.add_argument("--json", default="")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--op", choices=sorted(OPS), default="zoom")
    a = ap.parse_args()
    args, vips_args, first_col, vips_name = OPS[a.op]
    BEGIN, END = MARKERS[a.op]
    os.makedirs(a.work, exist_ok=True)
    vips = shutil.which("vips")
    rows = []
    for side in (int(s) for s in a.sides.split(",")):
        src = os.path.join(a.work, f"in{side}.tif")
        out = os.path.join(a.work, "out.tif")
        if not os.path.exists(src):
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "make_big_tiff.py"), src,
                            str(side)], check=True)
        reps = a.reps if side <= 16384 else 1
        row = {"side": side, "input_bytes": os.path.getsize(src)}
        row["upres_tiled"] = measure([a.upres, "-q", "warp", src, out] + args + ["--tiled"],
                                     reps, out)
        if side <= 16384:  # the whole-image path stops at 2^30 output pixels
            row["upres_whole"] = measure([a.upres, "-q", "warp", src, out] + args, 1, out)
            if vips:
                row["vips_cubic"] = measure(
                    [vips] + [v.format(**{"in": src, "out": out}) for v in vips_args], reps,
                    out)
        rows.append(row)
        print(json.dumps(row), flush=True)
    report = {"machine": platform.node(), "cpus": os.cpu_count(), "op": a.op,
              "vips": subprocess.run([vips, "--version"], capture_output=True,
                                     text=True).stdout.strip() if vips else None,
              "rows": rows}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1)
    table = [f"| {first_col} | upres --tiled | upres whole image | {vips_name} | "
             "tiled / libvips time | tiled / libvips memory |", "|---|---|---|---|---|---|"]
    cell = lambda m: f"{m['seconds']:.1f} s, {m['peak_mib']:.0f} MiB" if m else "-"
    for r in rows:
        t, w, v = r["upres_tiled"], r.get("upres_whole"), r.get("vips_cubic")
        rt = f"{t['seconds'] / v['seconds']:.2f}x" if v else "-"
        rm = f"{t['peak_mib'] / v['peak_mib']:.2f}x" if v else "-"
        table.append(f"| {r['side']} | {cell(t)} | {cell(w)} | {cell(v)} | {rt} | {rm} |")
    text = "\n".join(table)
    print(text)
    if not a.no_doc:
        doc = open(DOC).read()
        i, j = doc.index(BEGIN) + len(BEGIN), doc.index(END)
        note = (f"\n\nMeasured by `tools/scale_bench.py` on {report['cpus']} cores "
                f"({report['vips'] or 'no libvips'}); medians of {a.reps} runs up to 16384, one "
                "run at 40000; memory: peak resident set.\n\n")
        open(DOC, "w").write(doc[:i] + note + text + "\n\n" + doc[j:])


if __name__ == "__main__":
    main()
