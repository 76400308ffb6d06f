#!/usr/bin/env bash
# The libSGM peer of the semi-global matcher, run ON the GPU machine beside upres:
#
#   tools/peers/libsgm_peer.sh LIBSGM_SRC UPRES_CLI
#
# LIBSGM_SRC: a fixstars/libSGM source tree (3.1.0; fetched for the measurement, never committed;
# tools/gpu_check.sh passes .gpu/libsgm when it is there). Builds it for sm_90 and
# tools/peers/libsgm_driver.cpp against it, then prints
#   - libSGM's time at the issue's comparison point (1282 x 1110, 256 disparities, 4 and 8
#     paths; the same work as upres's Cuda_StereoSgm), device events, median of 50;
#   - the bad-1.0 / bad-2.0 table of libSGM and upres (cuda backend, census sgm4 / sgm8 with the
#     published defaults of tools/eval_stereo.py but speckle removal, which the cuda backend
#     does not run) on Aloe at full size with 256 disparities (tools/peers/libsgm_quality.py).
set -euo pipefail
src=$(cd "$1" && pwd)
upres=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/libsgm.XXXXXX")
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCUDA_ARCHS=90 >/dev/null
cmake --build "$work/build" -j "$(nproc)" >/dev/null
lib=$(find "$work/build" -name 'libsgm.a' | head -n1)
nvcc -O3 -std=c++17 -arch=sm_90 "$here/libsgm_driver.cpp" -I"$src/include" "$lib" -o "$work/driver"
"$work/driver" time 1282 1110 256 4
"$work/driver" time 1282 1110 256 8
python3 "$here/libsgm_quality.py" --driver "$work/driver" --upres "$upres"
