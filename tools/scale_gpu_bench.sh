#!/usr/bin/env bash
# The tiled B-spline zoom x2 on the GPUs, file to file: `upres warp IN.tif OUT.tif --zoom 2
# --tiled --backend cuda --devices D` on u16 TIFFs of 4096^2, 16384^2 and 40000^2, with one and
# with two GPUs, against the disk measured in the same run (dd reading the input, dd writing as
# many bytes as the output, both through the page cache as upres is). Prints one RESULT line per
# run (wall seconds and peak resident KiB from GNU time, each GPU's peak memory from
# nvidia-smi, the bytes and the dd times) after the command's own summary (its bands, its
# buffers and the seconds it spent reading, writing and waiting for the devices).
#   UPRES=build/release/upres tools/scale_gpu_bench.sh [WORK_DIR]
# Environment: SIDES (default "4096 16384 40000"), DEVICES (default "0 0,1").
# Inputs: tools/make_big_tiff.py for 4096 and 16384 (numpy + tifffile); the 40000^2 one is the
# 16384^2 one resized by upres (linear, tiled): the file's layout is what counts for the time.
# docs/scale.md, "On the GPU", has the last results (docs/bench_reports/scale/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
U=${UPRES:?set UPRES to the upres command (built with CUDA and libtiff)}
W=${1:-/tmp/upres-scale-gpu}
mkdir -p "$W"
for side in 4096 16384; do
    [ -f "$W/in$side.tif" ] || python3 "$root/tools/make_big_tiff.py" "$W/in$side.tif" "$side"
done
[ -f "$W/in40000.tif" ] || "$U" warp "$W/in16384.tif" "$W/in40000.tif" --size 40000x40000 --tiled \
    --interp linear --backend cuda --quiet
nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -lms 50 >"$W/mem.log" &
smi=$!
trap 'kill $smi 2>/dev/null || true' EXIT
run() {  # side devices
    : >"$W/mem.log"
    sleep 0.3
    /usr/bin/time -f "%e %M" "$U" warp "$W/in$1.tif" "$W/out.tif" --zoom 2 --tiled --backend cuda \
        --devices "$2" 2>"$W/time.txt" | tail -1
    local outsz
    outsz=$(stat -c %s "$W/out.tif")
    if [ -f "$W/first$1.tif" ]; then
        cmp -s "$W/out.tif" "$W/first$1.tif" && echo "side $1, devices $2: the same file as the first run's" ||
            echo "side $1, devices $2: DIFFERS from the first run's file"
        rm -f "$W/out.tif"
    else
        mv "$W/out.tif" "$W/first$1.tif"
    fi
    sync
    local r w
    r=$({ /usr/bin/time -f "%e" dd if="$W/in$1.tif" of=/dev/null bs=16M status=none; } 2>&1 | tail -1)
    w=$({ /usr/bin/time -f "%e" dd if=/dev/zero of="$W/dd.bin" bs=16M count=$((outsz / 16777216)) \
        status=none; } 2>&1 | tail -1)
    rm -f "$W/dd.bin"
    sync
    local g0 g1
    g0=$(awk -F', ' '$1==0{print $2}' "$W/mem.log" | sort -n | tail -1)
    g1=$(awk -F', ' '$1==1{print $2}' "$W/mem.log" | sort -n | tail -1)
    echo "RESULT side=$1 devices=$2 wall_s,rss_kib=$(tail -1 "$W/time.txt") gpu0_mib=$g0" \
        "gpu1_mib=${g1:-} in_bytes=$(stat -c %s "$W/in$1.tif") out_bytes=$outsz dd_read_s=$r dd_write_s=$w"
}
for side in ${SIDES:-4096 16384 40000}; do
    for d in ${DEVICES:-0 0,1}; do run "$side" "$d"; done
    rm -f "$W/first$side.tif"
done
