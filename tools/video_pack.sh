#!/usr/bin/env bash
# Packs a video-enabled upres command for the GPU machine, whose image has neither FFmpeg's
# libraries nor their development files: the command (xz, without debug information), the shared
# libraries `ldd` names except those every Linux with Python and a C++ compiler has (glibc,
# libstdc++, OpenSSL, zlib, xz, bzip2), the NVIDIA driver's and the CUDA runtime (the GPU
# machine has CUDA 13's): one tar.xz under the 64 MiB a device call carries; a small input clip
# and tools/video_gpu_bench.sh. The command comes from a CUDA build with video support made here:
#   cmake -S . -B build/cuvid -G Ninja -DCMAKE_BUILD_TYPE=Release -DUPRES_WITH_CUDA=ON \
#     -DCMAKE_CUDA_ARCHITECTURES=90 -DUPRES_BUILD_VIDEO=ON -DUPRES_BUILD_TESTS=OFF \
#     -DUPRES_BUILD_BENCH=OFF -DUPRES_BUILD_EXPERIMENTS=OFF -DUPRES_BUILD_PYTHON=OFF
#   cmake --build build/cuvid --target upres
#   tools/video_pack.sh build/cuvid DIR
# Then on the GPU machine (DIR carried there): OUT=... bash DIR/video_gpu_bench.sh. DIR and the
# repository together exceed the 64 MiB a device call carries: carry DIR/lib.tar.xz alone in a
# first call that unpacks it to /dev/shm (xz -dc lib.tar.xz | tar -C /dev/shm/vl -xf -), then
# the rest in the next call (the machine still warm) with VIDEO_LIBS=/dev/shm/vl/lib.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:?usage: tools/video_pack.sh BUILD DIR}
dir=${2:?usage: tools/video_pack.sh BUILD DIR}
bin=$build/upres
[ -x "$bin" ] || { echo "video_pack: no $bin"; exit 1; }
rm -rf "$dir" && mkdir -p "$dir/lib"
ldd "$bin" | awk '$3 ~ /^\// {print $3}' |
    grep -Ev '/(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|libcrypto|libssl|libz|liblzma|libbz2)\.so|/ld-linux|/libcuda\.so|/libnvcuvid\.so|/libcudart\.so' |
    while read -r l; do cp -L "$l" "$dir/lib/"; done
strip --strip-all -o "$dir/upres" "$bin" && xz -9e -T0 "$dir/upres"
tar -C "$dir" -cf - lib | xz -9e -T0 >"$dir/lib.tar.xz"
rm -rf "$dir/lib"
# The input: 600 frames of opencv-doc's vtest.avi at 480 x 270 (the script makes its 1080p
# input from it with upres itself: a 1080p clip would not fit the 64 MiB a device call carries).
ffmpeg -hide_banner -loglevel error -y -i "${VTEST:-/usr/share/doc/opencv-doc/examples/data/vtest.avi}" \
    -frames:v 600 -vf scale=480:270:flags=lanczos,format=yuv420p -c:v libx264 -crf 16 \
    "$dir/small.mkv"
# Two short noisy clips (8 and 10 bits, lossless) for the NLM window's check on the device.
for b in 8 10; do
    fmt=yuv420p && [ "$b" = 10 ] && fmt=yuv420p10le
    ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=96x64:rate=10 \
        -frames:v 9 -vf "noise=alls=12:allf=t,format=$fmt" -c:v ffv1 "$dir/nlm$b.mkv"
done
# A 10-bit HEVC clip for NVDEC's p010 frames.
ffmpeg -hide_banner -loglevel error -y -f lavfi -i testsrc2=size=320x240:rate=25 -frames:v 20 \
    -pix_fmt yuv420p10le -c:v libx265 -x265-params log-level=error "$dir/hevc10.mkv"
cp "$root/tools/video_gpu_bench.sh" "$dir/"
du -sh "$dir"
