#!/usr/bin/env bash
# NLM-SR in bands on the GPUs, file to file (docs/scale.md, "NLM-SR in bands", "On the GPU"):
# three RGB u8 frames of SIDE^2 (data/building.jpg zoomed, integer shifts, Gaussian noise of 4
# levels), fused x2 by `upres fuse F0 F1 F2 OUT --tiled` on the cpu backend, on one GPU and on
# two, then by the whole-frame command on each backend; prints one RESULT line per run (wall
# seconds and peak resident KiB from GNU time) and checks the outputs (cmp of 1 and 2 GPUs,
# upres compare of tiled against whole).
#   UPRES=build/release/upres PYTHONPATH=build/release/python tools/fuse_gpu_bench.sh [WORK_DIR]
# Environment: SIDE (default 4096), DEVICES (default "0 0,1").
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
U=${UPRES:?set UPRES to the upres command (built with CUDA and libtiff)}
W=${1:-/tmp/upres-fuse-gpu}
SIDE=${SIDE:-4096}
mkdir -p "$W"
python3 - "$root/data/building.jpg" "$W" "$SIDE" <<'PY'
import sys
import numpy as np
import upres
src, w, side = sys.argv[1], sys.argv[2], int(sys.argv[3])
a = upres.imread(src).astype(np.float32)
m = side + 8
big = upres.zoom(a, (m / a.shape[0], m / a.shape[1], 1), order=1, grid_mode=True, mode="mirror")
rng = np.random.default_rng(1)
for i, (dy, dx) in enumerate(((0, 0), (1, 2), (2, 1))):
    f = big[dy:dy + side, dx:dx + side] + rng.normal(0, 4, (side, side, 3)).astype(np.float32)
    upres.imwrite(f"{w}/f{i}.tif", np.clip(f, 0, 255).astype(np.uint8))
PY
F="$W/f0.tif $W/f1.tif $W/f2.tif"
run() {  # name, then the command's arguments after the frames
    local name=$1
    shift
    rm -f "$W/out.tif" "$W/out.tif".*
    /usr/bin/time -f "RESULT $name: %e s, %M KiB" "$U" fuse $F "$W/out.tif" "$@" 2>&1 | tail -2
}
for rep in 1 2; do
    run "tiled cpu" --tiled --backend cpu
    cp "$W/out.tif" "$W/tiled_cpu.tif"
    for d in ${DEVICES:-0 0,1}; do
        run "tiled cuda --devices $d" --tiled --backend cuda --devices "$d"
        cp "$W/out.tif" "$W/tiled_cuda_$d.tif"
    done
done
run "whole cuda" --backend cuda
cp "$W/out.tif" "$W/whole_cuda.tif"
run "whole cpu" --backend cpu
cp "$W/out.tif" "$W/whole_cpu.tif"
cmp "$W/tiled_cuda_0.tif" "$W/tiled_cuda_0,1.tif" && echo "1 GPU == 2 GPUs (bytes)"
"$U" compare "$W/tiled_cuda_0.tif" "$W/whole_cuda.tif"
"$U" compare "$W/tiled_cpu.tif" "$W/whole_cpu.tif"
