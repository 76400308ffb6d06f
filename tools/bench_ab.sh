#!/usr/bin/env bash
# A/B timing of two builds on one machine: runs the two upres_bench binaries alternately, ROUNDS
# times each, on the same benchmark filter, then prints per benchmark the median over the rounds
# of each binary's median, their ratio (B / A; above 1: B slower) and the largest slowdown.
# Used to show that a change made no benchmark of a headline set slower (on the GPU machine:
# build both commits there, then run this in the same call).
#
#   tools/bench_ab.sh A/bench/upres_bench B/bench/upres_bench 'FILTER' [ROUNDS] [OUTDIR]
#
# ROUNDS defaults to 3; each run is --benchmark_repetitions=3, medians. OUTDIR (default a
# temporary folder) receives a_<i>.json, b_<i>.json and ab.md (the table). Exit 0 always (the
# verdict is in the table: the caller states its threshold).
set -euo pipefail
a=${1:?usage: tools/bench_ab.sh A_BENCH B_BENCH FILTER [ROUNDS] [OUTDIR]}
b=${2:?}
filter=${3:?}
rounds=${4:-3}
out=${5:-$(mktemp -d "${TMPDIR:-/tmp}/bench-ab.XXXXXX")}
mkdir -p "$out"
for i in $(seq 1 "$rounds"); do
    for side in a b; do
        bin=$a
        [ "$side" = b ] && bin=$b
        "$bin" --benchmark_filter="$filter" --benchmark_repetitions=3 \
            --benchmark_report_aggregates_only=true --benchmark_min_time=0.1 \
            --benchmark_out="$out/${side}_$i.json" --benchmark_out_format=json >/dev/null
    done
done
python3 - "$out" "$rounds" <<'EOF' | tee "$out/ab.md"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def medians(side):
    per = {}
    for i in range(1, rounds + 1):
        for b in json.load(open(f"{out}/{side}_{i}.json"))["benchmarks"]:
            if b.get("aggregate_name") == "median":
                per.setdefault(b["run_name"], []).append(b["real_time"])
    return {k: statistics.median(v) for k, v in per.items()}
a, b = medians("a"), medians("b")
print("| benchmark | A | B | B / A |")
print("| --- | ---: | ---: | ---: |")
worst = (0.0, None)
for k in sorted(set(a) & set(b)):
    r = b[k] / a[k]
    worst = max(worst, (r, k))
    print(f"| {k} | {a[k]:.4g} | {b[k]:.4g} | {r:.3f} |")
print()
print(f"largest B / A: {worst[0]:.3f} ({worst[1]}); {len(set(a) & set(b))} benchmarks, "
      f"{rounds} alternating rounds")
EOF
