#!/usr/bin/env bash
# One device call for the CUDA warp work (issue 3): tests, compute-sanitizer, the paper
# reproduction (rotation_experiment), the Google Benchmark warp benchmarks and the cupyx peers.
# Run from the repository root on the GPU machine with the build folder carried:
#   tools/experiments/gpu_run.sh build-wcuda "$OUT"
# Writes logs and results under OUT/res and packs them into OUT/results.tar.gz.
set -u
B=${1:-build-wcuda}
OUT=${2:-/tmp/out}
R=/tmp/warp_res/res  # packed into OUT/results.tar.gz after every stage (OUT keeps few files)
mkdir -p "$R" "$OUT"
pack() { tar czf "$OUT/results.tar.gz" -C /tmp/warp_res res; }
ROOT=$(pwd)
export UPRES_TEST_DATA_DIR="$ROOT/tests/data" UPRES_DATA_DIR="$ROOT/data"
# Debian-built binaries: libraries that Ubuntu may lack travel in $B/lib (used only if missing).
LIBS=""
if ldd "$B/tests/warp_cuda_test" | grep -q "not found" || ldd "$B/bench/upres_bench" 2>/dev/null | grep -q "not found"; then
    LIBS="$ROOT/$B/lib"
fi
LDP="${LIBS:+$LIBS:}${LD_LIBRARY_PATH:-}"
{
    date -u
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit --format=csv
    nproc
} > "$R/device.txt" 2>&1
cat "$R/device.txt"

echo "== tests"
timeout 90 env LD_LIBRARY_PATH="$LDP" "$B/tests/warp_cuda_test" --gtest_color=no > "$R/test.log" 2>&1
echo "rc=$?" >> "$R/test.log"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |FAILED  |worst|rc=" "$R/test.log" | head -40

pack
echo "== compute-sanitizer"
for tool in memcheck racecheck; do
    timeout 60 env LD_LIBRARY_PATH="$LDP" compute-sanitizer --tool $tool --error-exitcode 3 \
        "$B/tests/warp_cuda_test" --gtest_filter='CudaWarpSanitize.*' --gtest_color=no \
        > "$R/sanitizer_$tool.log" 2>&1
    echo "$tool rc=$?" | tee -a "$R/sanitizer_$tool.log"
    tail -4 "$R/sanitizer_$tool.log"
done

pack
echo "== experiment"
timeout 110 env LD_LIBRARY_PATH="$LDP" "$B/tools/experiments/rotation_experiment" --data "$ROOT/data" --out "$R" --backends cpu,cuda,cuda-fused,reference --reference-firs 0,15 --reps 50 > "$R/experiment.md" 2>&1
echo "rc=$?" >> "$R/experiment.md"
tail -60 "$R/experiment.md"

pack
echo "== peers"
PYTHONUNBUFFERED=1 timeout 60 python3 tools/peers/warp_peers.py --json "$R/warp_peers.json" > "$R/peers.md" 2>&1
echo "rc=$?" >> "$R/peers.md"
cat "$R/peers.md"

pack
echo "== bench"
timeout 50 env LD_LIBRARY_PATH="$LDP" "$B/bench/upres_bench" --benchmark_filter='Cuda_Warp|Cuda_BsplinePrefilter' --benchmark_min_time=0.2 --benchmark_format=console > "$R/bench.txt" 2>&1
echo "rc=$?" >> "$R/bench.txt"
tail -45 "$R/bench.txt"

pack
echo "== ncu (rotation 2048^2 kernels)"
timeout 60 env LD_LIBRARY_PATH="$LDP" ncu --clock-control none --section SpeedOfLight \
    --section LaunchStats --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
    --kernel-name regex:'^(warp_kernel|fused_kernel)' --launch-skip 0 --launch-count 40 \
    "$B/tools/experiments/rotation_experiment" --no-fig2 --no-table1 --zooms 1 --reps 1 \
    > "$R/ncu.txt" 2>&1
echo "rc=$?" >> "$R/ncu.txt"
grep -E "fused_kernel|warp_kernel|warp_texture|Duration|Compute \(SM\) Throughput|Memory Throughput|Registers Per|Achieved Occupancy" "$R/ncu.txt" | head -80

pack
ls -la "$OUT"
