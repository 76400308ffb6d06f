#!/usr/bin/env bash
# From-scratch build time of one or more revisions, the way a user builds (the release preset's
# settings: Release, CUDA when nvcc is found, every default target), measured one after the
# other in ROUNDS interleaved rounds so that a drift of the machine falls on every revision.
#   tools/build_time.sh [-j JOBS (nproc)] [-r ROUNDS (1)] REV [REV...]
# Each round checks REV out into a fresh worktree (removed after), configures (not timed) and
# times `cmake --build -j JOBS`. Prints one line per build and, per revision, the median.
# Run it on an otherwise idle machine: a parallel build's time is only as quiet as the cores.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=$(nproc)
rounds=1
while getopts "j:r:" o; do
    case $o in
        j) jobs=$OPTARG ;;
        r) rounds=$OPTARG ;;
        *) echo "usage: tools/build_time.sh [-j JOBS] [-r ROUNDS] REV [REV...]"; exit 1 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: tools/build_time.sh [-j JOBS] [-r ROUNDS] REV [REV...]"; exit 1; }
declare -A times
wt=
# A failed or interrupted build leaves no worktree behind (its logs stay for reading).
trap '[ -n "$wt" ] && [ -d "$wt" ] && git -C "$root" worktree remove --force "$wt"' EXIT
for round in $(seq 1 "$rounds"); do
    for rev in "$@"; do
        wt=$(mktemp -d "${TMPDIR:-/tmp}/upres-build-time.XXXXXX")
        git -C "$root" worktree add -q --detach "$wt" "$rev"
        cmake -S "$wt" -B "$wt/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DUPRES_WITH_CUDA=AUTO \
            >"$wt.configure.log" 2>&1 || { cat "$wt.configure.log"; exit 1; }
        t0=$(date +%s.%N)
        cmake --build "$wt/build" -j "$jobs" >"$wt.build.log" 2>&1 ||
            { tail -20 "$wt.build.log"; exit 1; }
        t=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
        steps=$(grep -c '^\[' "$wt.build.log" || true)
        printf 'build_time: %s round %d: %.1f s (%d steps, -j %d)\n' \
            "$(git -C "$root" rev-parse --short "$rev")" "$round" "$t" "$steps" "$jobs"
        times[$rev]="${times[$rev]:-} $t"
        git -C "$root" worktree remove --force "$wt"
        rm -f "$wt.configure.log" "$wt.build.log"
        wt=
    done
done
for rev in "$@"; do
    med=$(printf '%s\n' ${times[$rev]} | sort -n |
        awk '{a[NR] = $1} END {print (a[int((NR + 1) / 2)] + a[int(NR / 2) + 1]) / 2}')
    printf 'build_time: %s median %.1f s over %d round(s)\n' \
        "$(git -C "$root" rev-parse --short "$rev")" "$med" "$rounds"
done
