#!/usr/bin/env python3
"""Summarise an Nsight Compute SASS source page (CSV) of one kernel: executed instructions, warp-stall
samples and shared-memory wavefronts per opcode, the markers that separate a kernel's phases
(barriers, cp.async, stores, exits) and, with --cuts, totals per phase.

    ncu --set full -k regex:NAME -c 1 -o rep APP ...
    ncu -i rep.ncu-rep --page source --csv --print-source sass > sass.csv
    python3 tools/experiments/ncu_sass.py sass.csv                 # opcodes and markers
    python3 tools/experiments/ncu_sass.py sass.csv --cuts 1259,1603,2204   # phases

Used for docs/ops/warp.md 9.3 (round 8). A phase is a range of instruction indices [a, b).
"""
import argparse
import collections
import csv


def num(v):
    try:
        return float(str(v).replace(",", ""))
    except ValueError:
        return 0.0


ap = argparse.ArgumentParser()
ap.add_argument("csv")
ap.add_argument("--cuts", default="", help="comma-separated instruction indices")
a = ap.parse_args()
rows = list(csv.reader(open(a.csv, newline="", errors="replace")))
hi = next(i for i, r in enumerate(rows) if "Source" in r and len(r) > 3)
head = rows[hi]
data = [r for r in rows[hi + 1:] if len(r) == len(head)]
cs, ci = head.index("Source"), head.index("Instructions Executed")
cst = head.index("Warp Stall Sampling (All Samples)")
ct = head.index("Thread Instructions Executed")
cw, cwe = head.index("L1 Wavefronts Shared"), head.index("L1 Wavefronts Shared Excessive")
stalls = [i for i, h in enumerate(head) if h.startswith("stall_") and "Not Issued" not in h]
TI = sum(num(r[ci]) for r in data) or 1
TS = sum(num(r[cst]) for r in data) or 1
print(f"{len(data)} instructions; executed {TI:.0f} (warp level); stall samples {TS:.0f}; shared "
      f"wavefronts {sum(num(r[cw]) for r in data):.0f} (excessive {sum(num(r[cwe]) for r in data):.0f})")
ops = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
for r in data:
    t = r[cs].split()
    op = t[1] if t and t[0].startswith("@") and len(t) > 1 else (t[0] if t else "?")
    op = op.split(".")[0]
    ops[op][0] += num(r[ci])
    ops[op][1] += num(r[cst])
    ops[op][2] += num(r[cw])
print("opcode      inst%  stall%  wavefronts")
for op, v in sorted(ops.items(), key=lambda kv: -kv[1][0])[:24]:
    print(f"{op:10s} {100 * v[0] / TI:6.2f} {100 * v[1] / TS:6.2f} {v[2]:11.0f}")
print("markers (index, executed, instruction):")
for k, r in enumerate(data):
    s = r[cs]
    if any(m in s for m in ("BAR.SYNC", "LDGDEPBAR", "STG", "EXIT")) and num(r[ci]) > 0:
        print(f"  {k:5d} {num(r[ci]):10.0f}  {s[:60]}")
if a.cuts:
    b = [0] + [int(x) for x in a.cuts.split(",")] + [len(data)]
    for lo, up in zip(b, b[1:]):
        sel = data[lo:up]
        i = sum(num(r[ci]) for r in sel)
        s = sum(num(r[cst]) for r in sel)
        t = sum(num(r[ct]) for r in sel)
        top = sorted(((sum(num(r[c]) for r in sel), head[c][6:]) for c in stalls), reverse=True)[:3]
        print(f"[{lo:5d},{up:5d}) inst {100 * i / TI:5.1f}% ({i / 1e6:5.2f}M, {t / max(i, 1):4.1f} "
              f"threads/inst) stalls {100 * s / TS:5.1f}% (" +
              ", ".join(f"{n} {100 * v / max(s, 1):.0f}%" for v, n in top) +
              f") wavefronts {sum(num(r[cw]) for r in sel) / 1e6:5.2f}M (excessive "
              f"{sum(num(r[cwe]) for r in sel) / 1e6:4.2f}M)")
