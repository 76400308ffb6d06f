#!/usr/bin/env bash
# ThreadSanitizer run of upres's parallel CPU paths: builds the library and the tests that drive
# its OpenMP loops with clang -fsanitize=thread (CUDA off) and runs them with 2 threads or more.
# OpenMP's own synchronisation reaches ThreadSanitizer through LLVM's libarcher (loaded with
# OMP_TOOL_LIBRARIES; GCC's libgomp has no such tool, hence clang and libomp). Any data race,
# or a libarcher that did not load, fails the run.
#   tools/tsan.sh
# Environment: UPRES_TSAN_BUILD (default build/tsan), UPRES_JOBS.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${UPRES_TSAN_BUILD:-$root/build/tsan}
jobs=${UPRES_JOBS:-$(nproc)}
command -v clang++ >/dev/null || { echo "tsan: clang++ not found (apt-get install clang libomp-dev)"; exit 1; }
archer=$(dirname "$(clang++ -print-file-name=libomp.so)")/libarcher.so
[ -f "$archer" ] || archer=$(find /usr/lib -name libarcher.so 2>/dev/null | head -1)
[ -f "$archer" ] || { echo "tsan: libarcher.so not found (apt-get install libomp-dev)"; exit 1; }

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DUPRES_WITH_CUDA=OFF -DUPRES_TSAN=ON -DUPRES_BUILD_TESTS=ON -DUPRES_BUILD_BENCH=OFF \
    -DUPRES_BUILD_CLI=OFF -DUPRES_BUILD_PYTHON=OFF -DUPRES_BUILD_EXPERIMENTS=OFF \
    -DUPRES_BUILD_VIDEO=OFF >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
# The differential fuzzer drives every operation's cpu backend with 0-3 threads; the others are
# the paths with threads of their own or bands in parallel: tiled_devices_test (the band runner's
# threads, one per GPU, driven here by host workers) and io_test's TIFF rows (the writer's
# gathering helpers) use std::thread only.
cmake --build "$build" -j "$jobs" --target upres_diff_fuzz seabi_stream_test srcnn_cpu_test \
    warp_tiled_test tiled_devices_test io_test

export OMP_TOOL_LIBRARIES=$archer ARCHER_OPTIONS="verbose=1"
# The OpenMP runtime itself is not instrumented: its internal locks are not races of upres.
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 history_size=4 ignore_noninstrumented_modules=1"
export OMP_NUM_THREADS=3
status=0
run() {  # [--no-openmp] name command...: --no-openmp for tests whose threads are std::thread's
    local openmp=1
    [ "$1" = --no-openmp ] && { openmp=0; shift; }
    local name=$1
    shift
    local log="$build/tsan-$name.log" t0=$SECONDS
    if "$@" >"$log" 2>&1 && ! grep -q "WARNING: ThreadSanitizer" "$log"; then
        if [ $openmp = 0 ] || grep -q "Archer detected OpenMP application with TSan" "$log"; then
            echo "tsan $name: no race ($((SECONDS - t0)) s)"
        else
            echo "tsan $name: libarcher did not load (see $log)"
            status=1
        fi
    else
        echo "tsan $name: FAILED (see $log)"
        grep -m 20 -A 12 "WARNING: ThreadSanitizer" "$log" || tail -20 "$log"
        status=1
    fi
}
run diff_fuzz "$build/tests/upres_diff_fuzz" --cases 1000 --seed 7 \
    --ops warp,prefilter,seabi,stereo,srcnn
run diff_fuzz_nlmsr "$build/tests/upres_diff_fuzz" --cases 60 --seed 7 --ops nlmsr
run seabi_stream "$build/tests/seabi_stream_test"
run srcnn_cpu "$build/tests/srcnn_cpu_test"
run warp_tiled "$build/tests/warp_tiled_test"
run --no-openmp tiled_devices "$build/tests/tiled_devices_test"
run --no-openmp tiff_rows "$build/tests/io_test" --gtest_filter='*TiffRows*'
exit $status
