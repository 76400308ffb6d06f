#!/usr/bin/env python3
"""The 2048^2 float32 rotation by 30 degrees, upres against its GPU peers, from one gpu_check
call's bench.json and peers.json (docs/ops/warp.md 9.3).

  /usr/bin/python3 tools/experiments/plot_rotation_peers.py BENCH_JSON PEERS_JSON OUT_PNG [TITLE]

Bars: medians of Cuda_WarpRotate/<mode>/2048 (bench/warp_bench.cpp) and of the peers
cupyx_rotate_order{1,3}_mirror_2048 and torch_grid_sample_{bilinear,bicubic}_rotate_2048
(tools/peers/peers_foundation.py), on a log scale, with each bar's ratio to our exact B-spline
rotation. Needs matplotlib (Debian's python3-matplotlib).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

OURS = [  # (label, benchmark mode, colour)
    ("upres bilinear", 1, "tab:blue"),
    ("upres cubic B-spline, exact\n(IIR prefilter, one pass; default)", 11, "tab:blue"),
    ("upres cubic B-spline,\nFIR15 prefilter (two passes)", 4, "tab:blue"),
    ("upres Keys cubic", 2, "tab:blue"),
]
PEERS = [  # (label, peer name, colour)
    ("PyTorch grid_sample bilinear\n(+ affine_grid)", "torch_grid_sample_bilinear_rotate_2048",
     "tab:orange"),
    ("PyTorch grid_sample bicubic\n(Keys a=-0.75, + affine_grid)",
     "torch_grid_sample_bicubic_rotate_2048", "tab:orange"),
    ("cupyx rotate order 1", "cupyx_rotate_order1_mirror_2048", "tab:green"),
    ("cupyx rotate order 3\n(B-spline, prefilter included)", "cupyx_rotate_order3_mirror_2048",
     "tab:green"),
]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    bench = json.load(open(sys.argv[1]))["benchmarks"]
    peers = {p["name"]: p for p in json.load(open(sys.argv[2]))["results"]}
    us = {}
    for r in bench:
        if r.get("aggregate_name") != "median":
            continue
        for label, mode, _ in OURS:
            if r["run_name"].startswith(f"Cuda_WarpRotate/{mode}/2048/"):
                us[label] = r["real_time"] / 1e3 if r["time_unit"] == "ns" else r["real_time"]
    for label, name, _ in PEERS:
        if peers.get(name, {}).get("status") == "ok":
            us[label] = peers[name]["median_ms"] * 1e3
    rows = [(label, colour) for label, _, colour in OURS + PEERS if label in us]
    ref = us[OURS[1][0]]
    fig, ax = plt.subplots(figsize=(8.5, 5.0))
    ys = range(len(rows))
    ax.barh(list(ys), [us[label] for label, _ in rows], color=[c for _, c in rows])
    for y, (label, _) in zip(ys, rows):
        ax.text(us[label] * 1.05, y, f"{us[label]:.1f} us ({us[label] / ref:.2f}x)",
                va="center", fontsize=8)
    ax.set_yticks(list(ys))
    ax.set_yticklabels([label for label, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xscale("log")
    ax.set_xlim(10, 5000)
    ax.set_xlabel("time per 2048 x 2048 float32 rotation (us, log scale; ratio to upres exact "
                  "B-spline)")
    ax.grid(axis="x", which="both", alpha=0.3)
    ax.set_title(sys.argv[4] if len(sys.argv) > 4 else "rotation by 30 degrees")
    fig.tight_layout()
    fig.savefig(sys.argv[3], dpi=110)


if __name__ == "__main__":
    main()
