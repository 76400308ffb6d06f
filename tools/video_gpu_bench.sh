#!/usr/bin/env bash
# The video command end to end on the GPU machine (made by tools/video_pack.sh; run it from the
# repository root so that models/ is found): unpacks the command and its libraries, makes a
# 1080p x264 input (600 frames of vtest.avi at 480 x 270, x4 by bicubic), then upscales it to 4K with
# `--backend cuda` and each method, libx264 --preset ultrafast (the GPU has no NVENC: the
# encoder runs on the host's cores), and writes each run's --json line to $OUT/video_gpu.jsonl,
# with the host's CPU count and the NVIDIA video decoder's library, if the driver has one.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${OUT:?set OUT}
# The libraries: $here/lib, unpacked from $here/lib.tar.xz, or where VIDEO_LIBS says (the pack
# and the tree together exceed what one device call carries: an earlier call on the same warm
# machine can carry lib.tar.xz alone and unpack it there).
libs=${VIDEO_LIBS:-$here/lib}
if [ ! -d "$libs" ]; then xz -dc "$here/lib.tar.xz" | tar -C "$here" -xf - || exit 1; fi
[ -x "$here/upres" ] || { xz -dc "$here/upres.xz" >"$here/upres" && chmod +x "$here/upres"; } || exit 1
export LD_LIBRARY_PATH=$libs:/usr/local/cuda/lib64:/usr/local/cuda/lib UPRES_MODEL_DIR=${UPRES_MODEL_DIR:-$PWD/models}
missing=$(ldd "$here/upres" | grep 'not found')
[ -z "$missing" ] || { echo "video_gpu_bench: libraries missing: $missing"; exit 1; }
work=/dev/shm/video_gpu && mkdir -p "$work"
{
    echo "cpus: $(nproc)"
    echo "nvcuvid: $(ls /usr/lib/x86_64-linux-gnu/libnvcuvid.so* /usr/lib64/libnvcuvid.so* 2>/dev/null | tr '\n' ' ')"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
} >"$out/video_gpu_host.txt"
"$here/upres" upscale "$here/small.mkv" "$work/in1080.mkv" --method bicubic --scale 4 \
    --backend cuda --crf 18 --preset fast --quiet || exit 1
: >"$out/video_gpu.jsonl"
# SRCNN's kernel choice is measured on its first use for a frame size and kept in
# UPRES_CACHE_DIR: a first, untimed run makes it, so that the timed runs measure the steady state.
export UPRES_CACHE_DIR=$work/cache && mkdir -p "$UPRES_CACHE_DIR"
"$here/upres" upscale "$work/in1080.mkv" "$work/warm.mkv" --method srcnn --scale 2 \
    --precision fastest --backend cuda --preset ultrafast --quiet || exit 1
for m in ${METHODS:-srcnn silseabi bicubic}; do
    extra=()
    [ "$m" = srcnn ] && extra=(--precision fastest)
    "$here/upres" upscale "$work/in1080.mkv" "$work/out.mkv" --method "$m" --scale 2 \
        --backend cuda --preset ultrafast --json "${extra[@]}" >>"$out/video_gpu.jsonl" || exit 1
done
# The encoder alone: the 4K output encoded again (decode of 4K + encode, the upscale a copy).
"$here/upres" upscale "$work/out.mkv" "$work/again.mkv" --method bicubic --scale 1 \
    --backend cuda --preset ultrafast --json >>"$out/video_gpu.jsonl" || exit 1
cat "$out/video_gpu_host.txt" "$out/video_gpu.jsonl"
