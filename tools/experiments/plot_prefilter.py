#!/usr/bin/env python3
"""Prefilter times against the image size, from an upres_bench JSON (docs/ops/bspline.md).

  /usr/bin/python3 tools/experiments/plot_prefilter.py BENCH_JSON OUT_PNG [TITLE]

Reads the medians of Bspline_Tuned_Cuda (n in 1024, 2048, 4096): the exact filter's box tiles
(impl 9) and tile kernel (impl 1), FIR15 (impl 0), and the copy of the same buffers measured in
the same process (the `copy_us` counter); plots time per image (log-log) and each benchmark's
`x_copy` counter (the mean of 20 event-timed runs over the mean of 20 copies timed next to them). Needs matplotlib (Debian's python3-matplotlib).
"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = [  # (label, fir, impl, style)
    ("exact IIR, box tiles (default since 2026-11-25)", 0, 9, "o-"),
    ("exact IIR, tile kernel (impl 1)", 0, 1, "s--"),
    ("FIR15 (default)", 15, 0, "^-"),
]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = json.load(open(sys.argv[1]))["benchmarks"]
    pat = re.compile(r"Bspline_Tuned_Cuda/n:(\d+)/fir:(\d+)/variant:\d+/impl:(\d+)/seg:0/")
    t, copy, own = {}, {}, {}
    for r in rows:
        m = pat.match(r["name"])
        if not m or r.get("aggregate_name") != "median":
            continue
        n, fir, impl = map(int, m.groups())
        t[(n, fir, impl)] = r["real_time"] / 1e3  # ns -> us
        own[(n, fir, impl)] = r["x_copy"]  # mean time over the copy timed next to it
        copy.setdefault(n, r["copy_us"])
    sizes = sorted(copy)
    if not sizes:
        sys.exit("no Bspline_Tuned_Cuda medians in " + sys.argv[1])
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4.2))
    for label, fir, impl, style in SERIES:
        ns = [n for n in sizes if (n, fir, impl) in t]
        a.plot(ns, [t[(n, fir, impl)] for n in ns], style, label=label)
        b.plot(ns, [own[(n, fir, impl)] for n in ns], style, label=label)
    a.plot(sizes, [copy[n] for n in sizes], "k:", label="copy of the same buffers")
    b.axhline(1.0, color="k", linestyle=":", label="copy")
    b.axhline(2.0, color="grey", linestyle="-.", label="issue 3 goal (c): 2x copy")
    for ax in (a, b):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [f"{n}^2" for n in sizes])
        ax.set_xlabel("image (float32, 1 channel)")
        ax.grid(True, alpha=0.3)
    a.set_yscale("log")
    a.set_ylabel("time per image (us, median)")
    b.set_ylabel("time / copy time")
    b.set_ylim(0, max(3.2, b.get_ylim()[1]))
    a.legend(fontsize=8)
    b.legend(fontsize=8)
    fig.suptitle(sys.argv[3] if len(sys.argv) > 3 else "cubic B-spline prefilter on the GPU")
    fig.tight_layout()
    fig.savefig(sys.argv[2], dpi=110)


if __name__ == "__main__":
    main()
