#!/usr/bin/env bash
# The video command end to end on the GPU machine (made by tools/video_pack.sh; run it from the
# repository root so that models/ is found): unpacks the command and its libraries, makes a
# 1080p x264 input (600 frames of vtest.avi at 480 x 270, x4 by bicubic), then upscales it to 4K with
# `--backend cuda` and each method, libx264 --preset ultrafast (the GPU has no NVENC: the
# encoder runs on the host's cores), and writes each run's --json line to $OUT/video_gpu.jsonl,
# with the host's CPU count and the NVIDIA video decoder's library, if the driver has one; checks
# the NLM window on the device against the cpu backend, and tries --hwdec cuda.
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
    echo "nvcuvid: $( (ldconfig -p | grep -o '/[^ ]*libnvcuvid[^ ]*'; ls /usr/lib/x86_64-linux-gnu/libnvcuvid.so* /usr/lib64/libnvcuvid.so* /usr/local/cuda/lib64/libnvcuvid.so* 2>/dev/null) | sort -u | tr '\n' ' ')"
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
# NLM-SR (its window of 5 frames kept on the device), and NVDEC where the driver has it (else
# its error, recorded).
"$here/upres" upscale "$work/in1080.mkv" "$work/out.mkv" --method nlm --scale 2 \
    --backend cuda --preset ultrafast --json >>"$out/video_gpu.jsonl" || exit 1
if ! "$here/upres" upscale "$work/in1080.mkv" "$work/out.mkv" --method srcnn --scale 2 \
    --precision fastest --backend cuda --preset ultrafast --hwdec cuda --json \
    >>"$out/video_gpu.jsonl" 2>"$work/hwdec.txt"; then
    echo "hwdec cuda: $(cat "$work/hwdec.txt")" >>"$out/video_gpu_host.txt"
fi
# NVDEC's frames against the CPU decoder's (H.264 8 bits, HEVC 10 bits): the decoded frames
# themselves (bicubic x1 is a copy), as raw y4m, byte for byte.
for clip in small hevc10; do
    for d in cuda none; do
        "$here/upres" upscale "$here/$clip.mkv" "$work/dec-$d.y4m" --method bicubic --scale 1 \
            --backend cuda --hwdec "$d" --codec wrapped_avframe --quiet 2>>"$work/hwdec.txt" ||
            echo "hwdec $d failed on $clip: $(cat "$work/hwdec.txt")" >>"$out/video_gpu_host.txt"
    done
    if cmp -s "$work/dec-cuda.y4m" "$work/dec-none.y4m"; then
        echo "hwdec cuda $clip: identical to the CPU decoder's frames ($(stat -c %s "$work/dec-none.y4m") bytes)"
    else
        echo "hwdec cuda $clip: DIFFERS from the CPU decoder's frames"
    fi >>"$out/video_gpu_host.txt"
    rm -f "$work"/dec-*.y4m
done
# The NLM window on the device against the cpu backend, 8 and 10 bits (y4m: raw planes).
for b in 8 10; do
    for be in cuda cpu; do
        "$here/upres" upscale "$here/nlm$b.mkv" "$work/nlm$b-$be.y4m" --method nlm --window 3 \
            --backend "$be" --codec wrapped_avframe --quiet || exit 1
    done
    python3 - "$work/nlm$b-cuda.y4m" "$work/nlm$b-cpu.y4m" "$b" >>"$out/video_gpu_host.txt" <<'PY' || exit 1
import sys
import numpy as np
def planes(path, bits):
    data = open(path, "rb").read()
    frames = data.split(b"FRAME\n")[1:]
    dt = np.uint16 if bits > 8 else np.uint8
    return [np.frombuffer(f, dt).astype(np.int32) for f in frames]
a, b = planes(sys.argv[1], int(sys.argv[3])), planes(sys.argv[2], int(sys.argv[3]))
d = max(int(np.abs(x - y).max()) for x, y in zip(a, b))
print("nlm window %s bits: %d frames, cuda vs cpu max |diff| %d levels" % (sys.argv[3], len(a), d))
sys.exit(0 if len(a) == len(b) == 9 and d <= 1 else 1)
PY
done
# The encoder alone: the 4K output encoded again (decode of 4K + encode, the upscale a copy).
"$here/upres" upscale "$work/out.mkv" "$work/again.mkv" --method bicubic --scale 1 \
    --backend cuda --preset ultrafast --json >>"$out/video_gpu.jsonl" || exit 1
cat "$out/video_gpu_host.txt" "$out/video_gpu.jsonl"
