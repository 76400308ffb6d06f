#!/usr/bin/env bash
# A fuzzing campaign on every core: PROCS independent libFuzzer processes of one target built by
# tools/fuzz.sh (seeds 1..PROCS, each from its own copy of the seed corpus), for SECONDS each;
# prints the executions summed over the processes. For a machine without the build tools (the
# GPU machine), tools/fuzz_pack.sh puts the target, its shared libraries, this script and
# fuzz_common.sh into one folder, run there as UPRES_FUZZ_BIN (libraries in its lib/ subfolder,
# seeds in corpus/TARGET; else the seeds are tools/fuzz.sh's).
#   tools/fuzz_campaign.sh TARGET [PROCS (nproc)] [SECONDS (540)] [libFuzzer flags...]
# Each process runs one OpenMP thread (the command line's target would otherwise start a team
# per process on every core). Findings and the logs of processes that did not end cleanly go
# to $OUT/findings-TARGET/ (OUT defaults to $UPRES_FUZZ_BUILD/campaign). Exit status 1 on any.
# With UPRES_FUZZ_CORPUS=DIR the processes' corpora live in DIR/TARGET-1.. and are kept: a
# campaign split over several calls (device calls of at most 10 minutes) goes on from where the
# previous one stopped instead of from the seeds; UPRES_FUZZ_SEED0=K numbers the processes'
# random seeds from K+1 (give each call its own).
set -u
# No job control, even when the caller has it (the device tool runs commands under set -m): with
# it, bash forgets finished background jobs once it has reported them, and `wait PID` below then
# fails ("not a child of this shell", status 127) for processes that ended cleanly.
set +m
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/fuzz_common.sh"
t=$1
n=${2:-$(nproc)}
secs=${3:-540}
shift $(($# < 3 ? $# : 3))
build=${UPRES_FUZZ_BUILD:-$root/build/fuzz}
bin=${UPRES_FUZZ_BIN:-$build/fuzz}
out=${OUT:-$build/campaign}
[ -x "$bin/fuzz_$t" ] || { echo "fuzz_campaign: no $bin/fuzz_$t (build it with tools/fuzz.sh)"; exit 1; }
[ -d "$bin/lib" ] && export LD_LIBRARY_PATH=$bin/lib
export OMP_NUM_THREADS=1
# A command line's `--threads N` still starts N threads, which by default spin after each
# parallel region: on 32 cores, 32 fuzz_cli processes made a load of 57, and their executions
# per 9-minute call fell from 2.4 to 1.2 million. Passive: they sleep at once.
export OMP_WAIT_POLICY=passive
mapfile -t extra < <(fuzz_target_flags "$t")
work=$(mktemp -d "${TMPDIR:-/tmp}/upres-campaign-$t.XXXXXX")
mkdir -p "$out/findings-$t"
for i in $(seq 1 "$n"); do
    corpus=$work/corpus-$i
    [ -n "${UPRES_FUZZ_CORPUS:-}" ] && corpus=$UPRES_FUZZ_CORPUS/$t-$i
    if [ -n "$(ls -A "$corpus" 2>/dev/null)" ]; then
        :  # kept from an earlier call
    elif [ -d "$bin/corpus/$t" ]; then
        mkdir -p "$corpus" && cp "$bin/corpus/$t/"* "$corpus/" 2>/dev/null
    else
        fuzz_seed_corpus "$root" "$t" "$corpus"
    fi
    # Shorter allocation stacks and quarantine: +13 % executions on fuzz_cli, same checks.
    ASAN_OPTIONS=detect_leaks=1:malloc_context_size=2:quarantine_size_mb=16 \
        "$bin/fuzz_$t" "$corpus" -seed="$((${UPRES_FUZZ_SEED0:-0} + i))" -max_total_time="$secs" \
        -rss_limit_mb=4096 -report_slow_units=60 -print_final_stats=1 \
        -artifact_prefix="$out/findings-$t/$i-" "${extra[@]}" "$@" >"$work/log-$i" 2>&1 &
    pids[$i]=$!
done
total=0
bad=0
stopped=0
for i in $(seq 1 "$n"); do
    wait "${pids[$i]}"
    rc=$?
    r=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log-$i" | tail -1)
    total=$((total + ${r:-0}))
    # Stopped early (SIGINT to the fuzz processes: libFuzzer's exit status 72, no artifact):
    # counted, not a finding.
    if [ "$rc" = 72 ] && grep -q 'libFuzzer: run interrupted' "$work/log-$i" &&
        ! compgen -G "$out/findings-$t/$i-*" >/dev/null; then
        stopped=$((stopped + 1))
    # A finding: no "Done", a non-zero exit (also a report after "Done", such as a leak found at
    # exit) or an artifact the process wrote.
    elif ! grep -q '^Done' "$work/log-$i" || [ "$rc" != 0 ] ||
        compgen -G "$out/findings-$t/$i-*" >/dev/null; then
        bad=$((bad + 1))
        cp "$work/log-$i" "$out/findings-$t/log-$i.txt"
    fi
done
rm -rf "$work"
echo "fuzz_campaign $t: $total executions ($n processes x $secs s, $stopped stopped early)," \
    "$bad processes with a finding"
[ "$bad" = 0 ]
