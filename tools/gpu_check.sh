#!/usr/bin/env bash
# The GPU check: build (or take a carried build), run every test binary, the GPU tests again
# under compute-sanitizer (memcheck, racecheck), the benchmarks and the peer timings, and write
# a report. Run ON the GPU machine, from anywhere inside the repository copy:
#
#   tools/gpu_check.sh build-bench    # use a build folder built elsewhere (sm_90) and carried
#   tools/gpu_check.sh                # configure and build build-gpu here first (sm_90)
#
# Before carrying a build made on another machine, bundle the shared libraries the GPU machine
# may lack (Debian's libbenchmark, libjpeg62, libtiff, ...) into <build>/runtime-libs, and
# record the commit:
#
#   tools/gpu_check.sh --bundle build-bench          (here, after building)
#
# On the GPU machine only the libraries its loader cannot find are taken from runtime-libs.
#
# Output, under $OUT (default ./gpu_check_out; at most 8 files, nothing deeper than $OUT/x):
#   report.md      summary table (step | result | details), system info, bench + peer tables
#   tests.log      every test binary's output
#   sanitizer.log  compute-sanitizer memcheck + racecheck output of the '*Cuda*' tests
#   bench.log      upres_bench console output + run_peers.py output
#   bench.json     upres_bench --benchmark_format=json output
#   peers.json     tools/peers/run_peers.py output
#   build.log      configure + build output (only when building here) and library resolution
#   srcnn_precision.md  PSNR of each SRCNN precision mode vs fp32 on the eval manifest
#   pybench.json   tools/bench_python.py output (the Python module against C++ and its peers)
# The summary table is also printed last on stdout. Every step runs even after a failure; the
# exit status is 1 if any step failed.
#
# Environment knobs: GIT_COMMIT (else <build>/GIT_COMMIT, ./GIT_COMMIT, git rev-parse),
# BUILD_TIMEOUT (560 s for the configure and for the build, each),
# BENCH_REPS (5), BENCH_MIN_TIME (0.2), BENCH_FILTER (a regex, or "tables": every case the
# generated tables of this machine's kind use), BENCH_TIMEOUT (240; a run it stops keeps the
# benchmarks that finished in bench.json), PEERS_ARGS (or "tables": the tables' peers only),
# PEERS_TIMEOUT (240), UPRES_NPP_LIB_DIR (NPP's libraries for the NPP peers; else a carried
# .gpu/npp folder, see docs/benchmarks.md), TEST_TIMEOUT (300 per binary), SANITIZER_TOOLS ("memcheck racecheck"),
# SANITIZER_TIMEOUT (420 per binary and tool; srcnn_cuda_test under racecheck takes ~340 s on an H200),
# SANITIZER_BINS (regex of test binary names to run under the sanitizers; default all),
# SANITIZER_FILTER (gtest filter of the tests run under the sanitizers; default '*Cuda*'),
# SANITIZER_INITCHECK_KERNELS (regex of the mangled kernel names initcheck checks; default
# 5upres, upres's own kernels: not cuDNN's or cuBLAS's), SANITIZER_INITCHECK_NOAPI (gtest filter
# of the tests initcheck runs apart with its host-API checks off: those that run cuDNN),
# TEST_FILTER (gtest filter of the tests step; default all), SKIP_STEPS (e.g. "peers sanitizer"),
# GPU_CHECK_BUDGET (seconds for the whole script, 0 = none: each step's timeout is capped to
# what is left, and steps that no longer fit are recorded as FAIL "not run: time budget").
set -u
set -o pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT" || exit 2

# ------------------------------------------------------------------ --bundle mode (run here)
if [[ "${1:-}" == "--bundle" ]]; then
    B=${2:?usage: tools/gpu_check.sh --bundle BUILD_DIR}
    [[ -d "$B" ]] || { echo "no build folder $B" >&2; exit 2; }
    mkdir -p "$B/runtime-libs"
    # glibc and the compiler runtime are newer on the GPU machine: never bundle those.
    skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread|libdl\.so|librt\.so|libstdc\+\+|libgcc_s|libcuda\.so)'
    find "$B" -path "$B/runtime-libs" -prune -o -type f -perm -u+x -print |
        while read -r f; do file -b "$f" 2>/dev/null | grep -q ELF && ldd "$f" 2>/dev/null; done |
        awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
        while read -r soname path; do
            [[ "$soname" =~ $skip ]] && continue
            cp -L "$path" "$B/runtime-libs/$soname"
        done
    if [[ -n "${GIT_COMMIT:-}" ]]; then
        echo "$GIT_COMMIT" >"$B/GIT_COMMIT"
    elif c=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
        echo "$c (+ uncommitted changes of the working tree, if any)" >"$B/GIT_COMMIT"
    fi
    echo "bundled into $B/runtime-libs: $(ls "$B/runtime-libs" | tr '\n' ' ')"
    du -sh "$B/runtime-libs"
    exit 0
fi

OUT=${OUT:-$ROOT/gpu_check_out}
mkdir -p "$OUT"
REPORT=$OUT/report.md
TESTS_LOG=$OUT/tests.log
SAN_LOG=$OUT/sanitizer.log
BENCH_LOG=$OUT/bench.log
BUILD_LOG=$OUT/build.log
: >"$TESTS_LOG"
: >"$SAN_LOG"
: >"$BENCH_LOG"

STEP_NAMES=()
STEP_RESULTS=()
STEP_DETAILS=()
FAILED=0
START_TS=$(date -u '+%Y-%m-%d %H:%M:%S UTC')
SYSINFO=""
GPU_NAME="(unknown)"
HAVE_GPU=0

skipped_step() { [[ " ${SKIP_STEPS:-} " == *" $1 "* ]]; }

# cap N: N capped to the time left in GPU_CHECK_BUDGET (less 15 s for the report); 0 when
# nothing useful is left.
cap() {
    local want=$1 budget=${GPU_CHECK_BUDGET:-0} left
    if [[ $budget -le 0 ]]; then
        echo "$want"
        return
    fi
    left=$((budget - SECONDS - 15))
    if [[ $left -lt 10 ]]; then
        echo 0
    elif [[ $left -lt $want ]]; then
        echo "$left"
    else
        echo "$want"
    fi
}

summary_table() {
    echo "| step | result | details |"
    echo "| --- | --- | --- |"
    local i
    for i in "${!STEP_NAMES[@]}"; do
        echo "| ${STEP_NAMES[$i]} | ${STEP_RESULTS[$i]} | ${STEP_DETAILS[$i]//|//} |"
    done
}

write_report() {
    {
        echo "# upres GPU check"
        echo
        echo "- date: $START_TS"
        echo "- GPU: $GPU_NAME"
        echo "- commit: $COMMIT"
        echo "- build: ${BUILD_DESC:-?}"
        echo "- host: $(uname -n) ($(nproc) CPUs, $(uname -r))"
        echo
        echo "## Summary"
        echo
        summary_table
        echo
        if [[ -s "$OUT/bench_tables.md" ]]; then
            echo "## Benchmarks"
            echo
            cat "$OUT/bench_tables.md"
            echo
        fi
        echo "## System"
        echo
        echo '```'
        echo "$SYSINFO"
        echo '```'
    } >"$REPORT"
}

record() {  # record STEP RESULT DETAILS
    STEP_NAMES+=("$1")
    STEP_RESULTS+=("$2")
    STEP_DETAILS+=("$3")
    [[ "$2" == FAIL ]] && FAILED=1
    echo "== $1: $2 -- $3"
    write_report
}

# ------------------------------------------------------------------ build folder and commit
BUILD=${1:-}
if [[ -n "${GIT_COMMIT:-}" ]]; then
    COMMIT=$GIT_COMMIT
elif [[ -n "$BUILD" && -s "$BUILD/GIT_COMMIT" ]]; then
    COMMIT=$(head -n1 "$BUILD/GIT_COMMIT")
elif [[ -s "$ROOT/GIT_COMMIT" ]]; then
    COMMIT=$(head -n1 "$ROOT/GIT_COMMIT")
elif COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null); then
    :
else
    COMMIT="unknown (no GIT_COMMIT and no git repository)"
fi

# ------------------------------------------------------------------ system
SYSINFO=$(
    echo "\$ date -u"
    date -u
    echo "\$ nvidia-smi"
    nvidia-smi 2>&1
    echo "\$ nvcc --version"
    nvcc --version 2>&1 | tail -n 2
    echo "\$ compute-sanitizer --version"
    compute-sanitizer --version 2>&1 | head -n 2
    echo "\$ cmake --version"
    cmake --version 2>&1 | head -n 1
    echo "\$ python3 --version"
    python3 --version 2>&1
)
if q=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null) &&
    [[ -n "$q" ]]; then
    GPU_NAME=$(echo "$q" | head -n1)
    HAVE_GPU=1
    record system PASS "$(echo "$q" | wc -l) GPU(s): $GPU_NAME"
else
    record system FAIL "nvidia-smi found no GPU"
fi
# The machine kind whose generated tables BENCH_FILTER=tables / PEERS_ARGS=tables run.
TABLES_KIND=cpu
[[ $HAVE_GPU == 1 ]] && TABLES_KIND=gpu

# ------------------------------------------------------------------ build
if [[ -n "$BUILD" ]]; then
    BUILD_DESC="carried folder $BUILD"
    if [[ -d "$BUILD" ]]; then
        record build PASS "using the carried build folder $BUILD (not rebuilt)"
    else
        record build FAIL "build folder $BUILD does not exist"
    fi
else
    BUILD=build-gpu
    BUILD_DESC="built here in $BUILD"
    : >"$BUILD_LOG"
    t0=$SECONDS
    # A full build took 391-432 s on the 16-core H100 machines (2026-11-26).
    build_tmo=${BUILD_TIMEOUT:-560}
    timeout "$build_tmo" cmake -S "$ROOT" -B "$ROOT/$BUILD" -G Ninja \
        -DCMAKE_BUILD_TYPE=Release -DUPRES_WITH_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DPython_EXECUTABLE="$(command -v python3)" >>"$BUILD_LOG" 2>&1 &&
        timeout "$build_tmo" cmake --build "$ROOT/$BUILD" -j "$(nproc)" >>"$BUILD_LOG" 2>&1
    build_rc=$?
    if [[ $build_rc -eq 0 ]]; then
        record build PASS "configured and built $BUILD for sm_90 in $((SECONDS - t0)) s (build.log)"
    elif [[ $build_rc -eq 124 ]]; then
        record build FAIL "configure/build of $BUILD timed out after $((SECONDS - t0)) s (BUILD_TIMEOUT=$build_tmo; build.log)"
    else
        record build FAIL "configure/build of $BUILD failed after $((SECONDS - t0)) s: $(grep -m1 -E 'error:|Error [0-9]|FAILED' "$BUILD_LOG" | cut -c1-160)"
    fi
fi
BUILD=$(cd "$BUILD" 2>/dev/null && pwd || echo "$ROOT/$BUILD")

# Executables to run.
mapfile -t TEST_BINS < <(find "$BUILD/tests" -maxdepth 2 -type f -name '*_test' -perm -u+x 2>/dev/null | sort)
BENCH_BIN="$BUILD/bench/upres_bench"

# cuDNN (the SRCNN `cudnn` variant loads libcudnn.so.9 at run time): where only PyTorch's wheel
# carries it, put its folder on the loader path so the variant is tested and benchmarked.
if cudnn_lib=$(python3 -c 'import nvidia.cudnn, os; print(os.path.join(os.path.dirname(nvidia.cudnn.__file__), "lib"))' 2>/dev/null) &&
    [[ -d "$cudnn_lib" ]]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$cudnn_lib"
fi

# Shared libraries the loader here lacks: take them (only them) from <build>/runtime-libs.
if [[ -d "$BUILD/runtime-libs" ]]; then
    LIBDIR=$(mktemp -d /tmp/upres-libs.XXXX)
    export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    used=()
    for _pass in 1 2 3 4 5; do
        missing=$(for b in "${TEST_BINS[@]}" "$BENCH_BIN"; do [[ -x "$b" ]] && ldd "$b" 2>/dev/null; done |
            awk '/not found/ {print $1}' | sort -u)
        [[ -z "$missing" ]] && break
        progress=0
        for m in $missing; do
            if [[ -e "$BUILD/runtime-libs/$m" && ! -e "$LIBDIR/$m" ]]; then
                ln -s "$BUILD/runtime-libs/$m" "$LIBDIR/$m"
                used+=("$m")
                progress=1
            fi
        done
        [[ $progress == 0 ]] && break
    done
    {
        echo "libraries taken from $BUILD/runtime-libs: ${used[*]:-none}"
        echo "still missing: ${missing:-none}"
    } >>"$BUILD_LOG"
    if [[ -n "$missing" ]]; then
        record libraries FAIL "still missing: ${missing//$'\n'/ }"
    else
        record libraries PASS "from runtime-libs: ${used[*]:-none needed}"
    fi
fi

export UPRES_TEST_DATA_DIR="$ROOT/tests/data"
export UPRES_DATA_DIR="$ROOT/data"

# ------------------------------------------------------------------ tests
gtest_counts() {  # prints "P passed, F failed, S skipped" from a gtest log
    local log=$1 p f s
    p=$(grep -aoE '^\[  PASSED  \] [0-9]+' "$log" | tail -n1 | grep -oE '[0-9]+$')
    f=$(grep -aoE '^\[  FAILED  \] [0-9]+ test' "$log" | tail -n1 | grep -oE '[0-9]+')
    s=$(grep -aoE '^\[  SKIPPED \] [0-9]+ test' "$log" | tail -n1 | grep -oE '[0-9]+')
    echo "${p:-0} passed, ${f:-0} failed, ${s:-0} skipped"
}

if skipped_step tests; then
    record tests SKIP "SKIP_STEPS"
elif [[ ${#TEST_BINS[@]} == 0 ]]; then
    record tests FAIL "no test binaries in $BUILD/tests"
else
    for b in "${TEST_BINS[@]}"; do
        name=$(basename "$b")
        tmo=$(cap "${TEST_TIMEOUT:-300}")
        if [[ $tmo == 0 ]]; then
            record "test $name" FAIL "not run: time budget (GPU_CHECK_BUDGET) used up"
            continue
        fi
        one=$(mktemp)
        t0=$SECONDS
        (cd "$(dirname "$b")" &&
            timeout "$tmo" "$b" --gtest_color=no ${TEST_FILTER:+--gtest_filter="$TEST_FILTER"}) \
            >"$one" 2>&1
        rc=$?
        secs=$((SECONDS - t0))
        { echo "===== $name (exit $rc, $secs s)"; cat "$one"; echo; } >>"$TESTS_LOG"
        counts=$(gtest_counts "$one")
        failed_names=$(grep -aE '^\[  FAILED  \] [A-Za-z_]' "$one" | grep -v 'listed below' |
            awk '{print $4}' | sort -u | head -n 5 | tr '\n' ' ')
        if [[ $rc == 0 ]]; then
            res=PASS
            # On a machine with a GPU, skipped GPU tests mean the device was not usable.
            if [[ $HAVE_GPU == 1 ]] && grep -aq 'no CUDA device' "$one"; then
                res=FAIL
                counts="$counts; GPU tests skipped although nvidia-smi sees a GPU"
            fi
        else
            res=FAIL
            [[ $rc == 124 ]] && counts="$counts; TIMEOUT after $tmo s"
            [[ $rc -gt 128 && $rc != 124 ]] && counts="$counts; killed by signal $((rc - 128))"
            [[ -n "$failed_names" ]] && counts="$counts; failed: $failed_names"
        fi
        record "test $name" "$res" "$counts ($secs s)"
        rm -f "$one"
    done
fi

# ------------------------------------------------------------------ python
# The Python module's pytest suite (python/tests, the GPU tests included: CuPy, PyTorch,
# streams, cupyx as the oracle) and its benchmarks (tools/bench_python.py: per-call overhead,
# NumPy vs scipy, CuPy vs the C++ call and cupyx) into pybench.json.
if skipped_step python; then
    record python SKIP "SKIP_STEPS"
elif [[ ! -f "$BUILD/python/upres/__init__.py" ]]; then
    record python FAIL "no Python module in $BUILD/python (nanobind or Python headers missing at configure)"
else
    tmo=$(cap "${PYTHON_TIMEOUT:-300}")
    one=$(mktemp)
    t0=$SECONDS
    (cd "$ROOT" && PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" timeout "$tmo" python3 -m pytest -q -rs \
        -p no:cacheprovider python/tests) >"$one" 2>&1
    rc=$?
    { echo "===== python/tests (exit $rc, $((SECONDS - t0)) s)"; cat "$one"; echo; } >>"$TESTS_LOG"
    summary=$(grep -aE '(passed|failed|error)' "$one" | tail -n1 | tr -d '=' | sed 's/^ *//')
    res=PASS
    [[ $rc != 0 ]] && res=FAIL
    if [[ $HAVE_GPU == 1 ]] && grep -aq 'no CUDA device' "$one"; then
        res=FAIL
        summary="$summary; GPU tests skipped although nvidia-smi sees a GPU"
    fi
    record python "$res" "$summary"
    rm -f "$one"
    if ! skipped_step pybench; then
        tmo=$(cap "${PYBENCH_TIMEOUT:-240}")
        (cd "$ROOT" && PYTHONPATH="$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" timeout "$tmo" python3 tools/bench_python.py \
            --bench "$BENCH_BIN" --json "$OUT/pybench.json") >>"$BENCH_LOG" 2>&1
        rc=$?
        if [[ $rc == 0 ]]; then
            record pybench PASS "$(grep -a "^summary:" "$BENCH_LOG" | tail -n1 | cut -c10-600)"
        else
            record pybench FAIL "tools/bench_python.py exit $rc"
        fi
    fi
fi

# ------------------------------------------------------------------ compute-sanitizer
if skipped_step sanitizer; then
    record sanitizer SKIP "SKIP_STEPS"
elif ! command -v compute-sanitizer >/dev/null 2>&1; then
    record sanitizer FAIL "compute-sanitizer not found on PATH"
else
    SAN_FILTER=${SANITIZER_FILTER:-*Cuda*}
    for tool in ${SANITIZER_TOOLS:-memcheck racecheck}; do
        # CUDA API errors are upres's to report (as upres::Error) and tests provoke them on
        # purpose (e.g. a failing cudaMalloc): memcheck checks memory accesses, not those.
        api_errors=""
        [[ $tool == memcheck ]] && api_errors="--report-api-errors no"
        # initcheck checks upres's kernels only (mangled names in namespace upres): cuDNN's and
        # cuBLASLt's benchmark their algorithms on scratch they never initialise (hundreds of
        # reports, and cuda_test past 440 s under the tool), memory that is not upres's.
        exclude=()
        [[ $tool == initcheck ]] &&
            exclude=(--kernel-name "regex=${SANITIZER_INITCHECK_KERNELS:-5upres}")
        # Passes: "gtest filter|extra flag|label". With cuDNN's kernels unchecked, initcheck
        # does not see their stores either, so copying a cuDNN convolution's output
        # (cudaMemcpy2DAsync) reads as uninitialised (28,032 reports in srcnn_cuda_test): the
        # tests that run cuDNN get a second pass with the host-API checks off (with the default
        # SANITIZER_FILTER only: gtest filters cannot intersect two positive patterns).
        passes=("$SAN_FILTER||")
        if [[ $tool == initcheck && $SAN_FILTER == '*Cuda*' ]]; then
            noapi=${SANITIZER_INITCHECK_NOAPI:-SrcnnCudaCudnn.*:SrcnnCudaForward.Auto*:SrcnnCudaAuto.*}
            passes=("$SAN_FILTER-$noapi||" "$noapi|--check-api-memory-access no| (cuDNN tests, API checks off)")
        fi
        res=PASS
        details=()
        for b in "${TEST_BINS[@]}"; do
          for pass in "${passes[@]}"; do
            IFS='|' read -r filter pass_flag label <<<"$pass"
            name=$(basename "$b")
            [[ -n "${SANITIZER_BINS:-}" && ! "$name" =~ ^(${SANITIZER_BINS})$ ]] && continue
            n=$("$b" --gtest_list_tests --gtest_filter="$filter" 2>/dev/null | grep -c '^  ')
            [[ "$n" -gt 0 ]] || continue
            name+=$label
            tmo=$(cap "${SANITIZER_TIMEOUT:-420}")
            if [[ $tmo == 0 ]]; then
                res=FAIL
                details+=("$name: not run: time budget used up")
                continue
            fi
            one=$(mktemp)
            t0=$SECONDS
            (cd "$(dirname "$b")" &&
                timeout "$tmo" compute-sanitizer --tool "$tool" \
                    --error-exitcode 86 --print-limit 50 $api_errors $pass_flag "${exclude[@]}" \
                    "$b" --gtest_filter="$filter" --gtest_color=no) >"$one" 2>&1
            rc=$?
            secs=$((SECONDS - t0))
            { echo "===== $tool $name (exit $rc, $secs s)"; cat "$one"; echo; } >>"$SAN_LOG"
            summary=$(grep -aoE '(ERROR|RACECHECK) SUMMARY: [^(]*' "$one" | tail -n1 | sed 's/ *$//')
            counts=$(gtest_counts "$one")
            if [[ $rc != 0 ]]; then
                res=FAIL
                why="exit $rc"
                [[ $rc == 86 ]] && why="sanitizer errors"
                [[ $rc == 124 ]] && why="TIMEOUT after $tmo s"
                details+=("$name: $why, ${summary:-no summary}, $counts")
            else
                details+=("$name: ${summary:-clean}, $n tests, $counts, $secs s")
            fi
            rm -f "$one"
          done
        done
        if [[ ${#details[@]} == 0 ]]; then
            record "sanitizer $tool" FAIL "no test binary has '$SAN_FILTER' tests"
        else
            d=$(printf '%s; ' "${details[@]}")
            record "sanitizer $tool" "$res" "${d%; }"
        fi
    done
fi

# ------------------------------------------------------------------ benchmarks
rm -f "$OUT/bench_tables.md"
if skipped_step bench; then
    record bench SKIP "SKIP_STEPS"
elif [[ ! -x "$BENCH_BIN" ]]; then
    record bench FAIL "no $BENCH_BIN"
elif [[ $(cap "${BENCH_TIMEOUT:-240}") == 0 ]]; then
    record bench FAIL "not run: time budget (GPU_CHECK_BUDGET) used up"
else
    tmo=$(cap "${BENCH_TIMEOUT:-240}")
    t0=$SECONDS
    echo "===== upres_bench" >>"$BENCH_LOG"
    bench_filter=${BENCH_FILTER:-}
    # "tables": every case the generated tables of this kind of machine use (tools/perf_tables.py).
    if [[ "$bench_filter" == tables ]]; then
        bench_filter=$(python3 "$ROOT/tools/perf_tables.py" --filter "$TABLES_KIND")
    fi
    timeout "$tmo" "$BENCH_BIN" --benchmark_out="$OUT/bench.json" \
        --benchmark_out_format=json --benchmark_repetitions="${BENCH_REPS:-5}" \
        --benchmark_report_aggregates_only=true --benchmark_min_time="${BENCH_MIN_TIME:-0.2}" \
        ${bench_filter:+--benchmark_filter="$bench_filter"} >>"$BENCH_LOG" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    kept=
    if [[ $rc != 0 && -s "$OUT/bench.json" ]]; then
        # Stopped (the timeout): the JSON is written benchmark by benchmark, so the ones that
        # finished are kept (the file closed after the last whole entry) for the report.
        kept=$(python3 "$ROOT/tools/bench_report.py" --close "$OUT/bench.json")
    fi
    if [[ $rc == 0 && -s "$OUT/bench.json" ]]; then
        read -r nb nskip < <(python3 - "$OUT/bench.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))["benchmarks"]
names = {b.get("run_name", b["name"]) for b in d}
skipped = {b.get("run_name", b["name"]) for b in d if b.get("error_occurred")}
print(len(names), len(skipped))
EOF
        )
        if [[ "${nskip:-0}" != 0 && $HAVE_GPU == 1 ]]; then
            record bench FAIL "$nb benchmarks, $nskip skipped/errored although a GPU is present ($secs s)"
        else
            record bench PASS "$nb benchmarks, ${nskip:-0} skipped, ${BENCH_REPS:-5} repetitions, median ($secs s)"
        fi
    else
        record bench FAIL "upres_bench exit $rc after $secs s (timeout $tmo s; bench.log)${kept:+; the $kept benchmarks finished before it kept in bench.json}"
    fi
fi

# ------------------------------------------------------------------ peers
if skipped_step peers; then
    record peers SKIP "SKIP_STEPS"
elif [[ $(cap "${PEERS_TIMEOUT:-240}") == 0 ]]; then
    record peers FAIL "not run: time budget (GPU_CHECK_BUDGET) used up"
else
    tmo=$(cap "${PEERS_TIMEOUT:-240}")
    t0=$SECONDS
    echo "===== tools/peers/run_peers.py" >>"$BENCH_LOG"
    # NVIDIA NPP (tools/peers/peers_npp.py): the GPU machine has none; a carried .gpu/npp with
    # libnppig.so.13 and libnppc.so.13 (plain or .xz) is unpacked and passed on.
    if [[ -z "${UPRES_NPP_LIB_DIR:-}" && -d "$ROOT/.gpu/npp" ]]; then
        npp_dir=$(mktemp -d "${TMPDIR:-/tmp}/upres-npp.XXXXXX")
        for f in "$ROOT"/.gpu/npp/libnpp*; do
            case "$f" in
                *.xz) xz -d -c "$f" >"$npp_dir/$(basename "${f%.xz}")" ;;
                *) cp "$f" "$npp_dir/" ;;
            esac
        done
        export UPRES_NPP_LIB_DIR=$npp_dir
    fi
    peers_args=${PEERS_ARGS:-}
    # "tables": the peers the generated tables use (tools/perf_tables.py).
    if [[ "$peers_args" == tables ]]; then
        peers_args="--only $(python3 "$ROOT/tools/perf_tables.py" --peers "$TABLES_KIND")"
    fi
    # shellcheck disable=SC2086
    PYTHONUNBUFFERED=1 timeout "$tmo" python3 "$ROOT/tools/peers/run_peers.py" \
        --out "$OUT/peers.json" $peers_args >>"$BENCH_LOG" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    if [[ $rc == 0 && -s "$OUT/peers.json" ]]; then
        counts=$(python3 - "$OUT/peers.json" <<'EOF'
import collections, json, sys
r = json.load(open(sys.argv[1]))["results"]
c = collections.Counter(p["status"] for p in r)
print(", ".join(f"{v} {k}" for k, v in sorted(c.items())))
print("ERR" if c.get("error") else "OK")
EOF
        )
        if [[ "$(echo "$counts" | tail -n1)" == ERR ]]; then
            record peers FAIL "$(echo "$counts" | head -n1) ($secs s; see peers.json)"
        else
            record peers PASS "$(echo "$counts" | head -n1) ($secs s)"
        fi
    else
        record peers FAIL "run_peers.py exit $rc after $secs s (timeout $tmo s; bench.log)"
    fi
fi

# ------------------------------------------------------------------ quality (SRCNN precisions)
# PSNR of every SRCNN precision mode against fp32 on the eval manifest (needs data/ and the
# upres CLI); fails if `fastest` loses more than 0.01 dB.
if skipped_step quality; then
    record quality SKIP "SKIP_STEPS"
elif [[ ! -x "$BUILD/upres" || ! -d "$ROOT/data" ]]; then
    record quality FAIL "needs $BUILD/upres and data/ (scripts/fetch_data.sh, carried)"
elif [[ $(cap "${QUALITY_TIMEOUT:-240}") == 0 ]]; then
    record quality FAIL "not run: time budget (GPU_CHECK_BUDGET) used up"
else
    tmo=$(cap "${QUALITY_TIMEOUT:-240}")
    t0=$SECONDS
    echo "===== tools/srcnn/precision_loss.py" >>"$BENCH_LOG"
    PYTHONUNBUFFERED=1 timeout "$tmo" python3 "$ROOT/tools/srcnn/precision_loss.py" \
        --upres "$BUILD/upres" --out "$OUT/srcnn_precision.md" >>"$BENCH_LOG" 2>&1
    rc=$?
    secs=$((SECONDS - t0))
    if [[ $rc == 0 ]]; then
        record quality PASS "SRCNN fastest mode within 0.01 dB of fp32 on every scale ($secs s; srcnn_precision.md)"
    else
        record quality FAIL "precision_loss.py exit $rc after $secs s (bench.log, srcnn_precision.md)"
    fi
fi

# ------------------------------------------------------------------ report
args=()
[[ -s "$OUT/bench.json" ]] && args+=("$OUT/bench.json")
[[ -s "$OUT/peers.json" ]] && args+=(--peers "$OUT/peers.json")
if [[ ${#args[@]} -gt 0 ]]; then
    if python3 "$ROOT/tools/bench_report.py" "${args[@]}" -o "$OUT/bench_tables.md" 2>>"$BENCH_LOG"; then
        record report PASS "bench/peer tables in report.md"
    else
        record report FAIL "tools/bench_report.py failed (bench.log)"
    fi
fi
write_report
# The tables now live in report.md; print them (the summary table comes last) and drop the file.
if [[ -s "$OUT/bench_tables.md" ]]; then
    echo
    cat "$OUT/bench_tables.md"
    rm -f "$OUT/bench_tables.md"
fi

echo
echo "upres GPU check: $GPU_NAME, commit $COMMIT, $START_TS"
echo "report: $REPORT"
echo
summary_table
if [[ $FAILED != 0 ]]; then
    echo
    echo "gpu_check: FAILED (see the table above)"
    exit 1
fi
echo
echo "gpu_check: all steps passed"
exit 0
