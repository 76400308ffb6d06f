#!/usr/bin/env bash
# Builds upres's libFuzzer targets (fuzz/: every image decoder, the .srcnn reader, the command
# line's arguments and, in a build with FFmpeg's libraries, the video input) with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer, and runs each for a bounded time from a seed
# corpus (tools/fuzz_common.sh: the small real files of tests/data/io and models/ by extension,
# plus fuzz/corpus/<target>/, inputs that once failed, kept as regression seeds), UPRES_JOBS
# targets at a time (one core each). Prints one line per target (executions, result) and exits
# non-zero on any finding; a finding's input is saved under $UPRES_FUZZ_BUILD/findings/.
#   tools/fuzz.sh [SECONDS_PER_TARGET (30)] [TARGET...]
#       targets: png jpeg tiff tiffrows pfm pnm npy srcnn cli video (default: all; video when FFmpeg's
#       development files are installed)
# Environment: UPRES_FUZZ_BUILD (default build/fuzz), UPRES_JOBS, UPRES_FUZZ_RUNS (a campaign:
# stop each target after this many executions instead of after SECONDS).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
secs=${1:-30}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(png jpeg tiff tiffrows pfm pnm npy srcnn cli)
    pkg-config --exists libavformat libavcodec libavutil 2>/dev/null && targets+=(video)
fi
build=${UPRES_FUZZ_BUILD:-$root/build/fuzz}
mkdir -p "$build" && build=$(cd "$build" && pwd)  # absolute: fuzz_cli works in another folder
jobs=${UPRES_JOBS:-$(nproc)}
command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (apt-get install clang)"; exit 1; }

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DUPRES_WITH_CUDA=OFF -DUPRES_SANITIZE=ON -DUPRES_BUILD_FUZZ=ON -DUPRES_BUILD_TESTS=OFF \
    -DUPRES_BUILD_BENCH=OFF -DUPRES_BUILD_CLI=ON -DUPRES_BUILD_EXPERIMENTS=OFF \
    >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j "$jobs" --target $(printf 'fuzz_%s ' "${targets[@]}")

. "$root/tools/fuzz_common.sh"
mkdir -p "$build/findings"
# One target: its line goes to $build/fuzz_$t.result, its exit status says whether it found
# something. Targets run UPRES_JOBS at a time (each libFuzzer process uses one core).
run_target() {
    local t=$1 corpus log result runs took
    corpus=$(mktemp -d "${TMPDIR:-/tmp}/upres-fuzz-$t.XXXXXX")
    fuzz_seed_corpus "$root" "$t" "$corpus"
    log="$build/fuzz_$t.log"
    mapfile -t extra < <(fuzz_target_flags "$t")
    [ -n "${UPRES_FUZZ_RUNS:-}" ] && extra+=(-runs="$UPRES_FUZZ_RUNS")
    local rc=0
    if ASAN_OPTIONS=detect_leaks=1 "$build/fuzz/fuzz_$t" "$corpus" -max_total_time="$secs" \
        -rss_limit_mb=4096 -print_final_stats=1 "${extra[@]}" \
        -artifact_prefix="$build/findings/$t-" >"$log" 2>&1; then
        result=ok
    else
        result="FINDING (see $log and $build/findings/)"
        rc=1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    took=$secs
    [ -n "${UPRES_FUZZ_RUNS:-}" ] && took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
    echo "fuzz_$t: ${runs:-?} executions in ${took:-?} s (corpus at the end: $(ls "$corpus" | wc -l) inputs): $result" \
        >"$build/fuzz_$t.result"
    rm -rf "$corpus"
    return $rc
}
status=0
running=0
for t in "${targets[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n || status=1
        running=$((running - 1))
    fi
    run_target "$t" &
    running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
    wait -n || status=1
    running=$((running - 1))
done
for t in "${targets[@]}"; do cat "$build/fuzz_$t.result"; done
exit $status
