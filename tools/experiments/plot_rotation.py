#!/usr/bin/env python3
"""Figures of docs/ops/bspline_paper.md from rotation_experiment's output.

  /usr/bin/python3 tools/experiments/plot_rotation.py RESULTS_DIR docs/ops/img

Reads RESULTS_DIR/rotation_fig2.csv and the .npy images written by rotation_experiment; writes
bspline_fig2_rms.png (paper Fig. 2: RMS error after 36 x 10-degree rotations against the FIR
length, IIR dashed), bspline_fig2_maxdiff.png (largest |FIR - IIR|, with the one-grey-level
line) and bspline_fig3_<image>.png (results after 36 rotations and residuals, paper Figs. 3-4).
Needs numpy and matplotlib.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            for k in ("fir",):
                r[k] = int(r[k])
            for k in ("rms_full", "rms_disc", "maxdiff_iir_full", "maxdiff_iir_disc",
                      "rms_vs_iir_disc"):
                r[k] = float(r[k])
            rows.append(r)
    return rows


def main():
    res, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    rows = load(os.path.join(res, "rotation_fig2.csv"))
    images = sorted({r["image"] for r in rows})
    backends = [b for b in ("cpu", "cuda", "cuda-fused", "reference")
                if any(r["backend"] == b for r in rows)]
    styles = {"cpu": ("o-", "C0"), "cuda": ("s--", "C1"), "cuda-fused": ("x:", "C2"),
              "reference": ("D", "C3")}

    # Fig. 2: RMS vs FIR length, full image and disc.
    fig, axes = plt.subplots(len(images), 2, figsize=(11, 4 * len(images)), squeeze=False)
    for i, im in enumerate(images):
        for j, region in enumerate(("full", "disc")):
            ax = axes[i][j]
            for be in backends:
                pts = sorted((r["fir"], r["rms_" + region]) for r in rows
                             if r["image"] == im and r["backend"] == be and r["fir"] > 0)
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], styles[be][0],
                            color=styles[be][1], label=f"{be} FIR", ms=4)
                iir = [r["rms_" + region] for r in rows
                       if r["image"] == im and r["backend"] == be and r["fir"] == 0]
                if iir:
                    ax.axhline(iir[0], ls="--", color=styles[be][1], lw=1,
                               label=f"{be} IIR ({iir[0]:.3f})")
            ax.set_yscale("log")  # FIR3 diverges (gain > 1 at Nyquist): log scale
            ax.set_xlabel("FIR length (taps)")
            ax.set_ylabel("RMS error after 36 x 10 deg (grey levels, log)")
            ax.set_title(f"{im}: {'whole image' if region == 'full' else 'centred disc'}")
            ax.set_xticks(range(3, 32, 2))
            ax.grid(alpha=0.3)
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bspline_fig2_rms.png"), dpi=110)

    # Largest |FIR - IIR| per length (log scale), one grey level marked.
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for im in images:
        for be, mk in (("cpu", "o-"), ("cuda", "s--")):
            for region, ls in (("full", ""), ("disc", "")):
                pts = sorted((r["fir"], r["maxdiff_iir_" + region]) for r in rows
                             if r["image"] == im and r["backend"] == be and r["fir"] > 0)
                if pts:
                    ax.semilogy([p[0] for p in pts], [max(p[1], 1e-6) for p in pts], mk,
                                label=f"{im} {be} {region}", ms=3)
    ax.axhline(1.0, color="k", lw=1, ls=":", label="one grey level")
    ax.set_xlabel("FIR length (taps)")
    ax.set_ylabel("max |FIR result - IIR result| (grey levels)")
    ax.set_xticks(range(3, 32, 2))
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=6, ncol=2)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "bspline_fig2_maxdiff.png"), dpi=110)

    # Figs. 3-4: images after 36 rotations and residuals against the original.
    for im in images:
        g = os.path.join(res, f"{im}_gray.npy")
        if not os.path.exists(g):
            continue
        orig = np.load(g)
        names = [("iir", "IIR"), ("fir7", "FIR7"), ("fir11", "FIR11"), ("fir15", "FIR15")]
        imgs = [(lab, np.load(os.path.join(res, f"{im}_rot36_{n}.npy"))) for n, lab in names
                if os.path.exists(os.path.join(res, f"{im}_rot36_{n}.npy"))]
        if not imgs:
            continue
        fig, axes = plt.subplots(2, len(imgs), figsize=(3.2 * len(imgs), 6.4), squeeze=False)
        for k, (lab, a) in enumerate(imgs):
            axes[0][k].imshow(a, cmap="gray", vmin=0, vmax=255)
            axes[0][k].set_title(f"{lab} (cuda)")
            axes[1][k].imshow(a - orig, cmap="RdBu", vmin=-20, vmax=20)
            axes[1][k].set_title(f"{lab} - original (+-20)")
            for r in (0, 1):
                axes[r][k].axis("off")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"bspline_fig3_{im}.png"), dpi=55)
    print("figures written to", out)


if __name__ == "__main__":
    main()
