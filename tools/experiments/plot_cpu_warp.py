#!/usr/bin/env python3
"""CPU warps before and after a change, against their peers, from a CSV of
case,before_ms,after_ms,peer,peer_ms (docs/bench_reports/2026-11-26-cpu-warp.csv; '#' lines are
comments). Horizontal bars on a log scale; each 'after' bar is labelled with its ratio to the
peer (> 1: upres faster).

  /usr/bin/python3 tools/experiments/plot_cpu_warp.py CSV OUT_PNG [TITLE]

Needs matplotlib (Debian's python3-matplotlib).
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    src, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "CPU warps, 2 threads (ms, log scale)"
    with open(src) as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    rows.reverse()  # first case on top
    fig, ax = plt.subplots(figsize=(10, 0.75 * len(rows) + 1.2))
    h = 0.27
    for i, r in enumerate(rows):
        before, after = float(r["before_ms"]), float(r["after_ms"])
        ax.barh(i + h, before, h, color="lightgray", label="upres before" if i == 0 else None)
        ax.barh(i, after, h, color="tab:blue", label="upres after" if i == 0 else None)
        if r["peer_ms"]:
            peer = float(r["peer_ms"])
            ax.barh(i - h, peer, h, color="tab:orange", label="peer" if i == 0 else None)
            ax.text(peer * 1.05, i - h, r["peer"], va="center", fontsize=7)
            ax.text(after * 1.05, i, f"{after:g} ms ({peer / after:.2g}x the peer's speed)",
                    va="center", fontsize=7)
        else:
            ax.text(after * 1.05, i, f"{after:g} ms", va="center", fontsize=7)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([r["case"] for r in rows], fontsize=8)
    ax.set_xscale("log")
    top = max(max(float(r["before_ms"]), float(r["peer_ms"] or 0)) for r in rows)
    ax.set_xlim(right=top * 6)  # room for the labels
    ax.set_xlabel("ms (wall, 2 threads; scipy 1 thread)")
    ax.set_title(title, fontsize=10)
    ax.legend(loc="upper right", fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
