// Small device kernels of the SRCNN pipeline (srcnn.cpp): the luma plane out of the interleaved
// bicubic-upscaled planes and the network's output back into them.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "core/cuda_check.hpp"
#include "ops/srcnn/srcnn_backends.hpp"

namespace upres::srcnn::cuda {
namespace {

constexpr int kBlockX = 32, kBlockY = 8;

dim3 grid_of(int w, int h) {
    // Rows beyond 65535 x kBlockY are strided inside the kernels.
    const unsigned gy = static_cast<unsigned>(std::min((h + kBlockY - 1) / kBlockY, 65535));
    return dim3(static_cast<unsigned>((w + kBlockX - 1) / kBlockX), gy);
}

__global__ void extract_kernel(Span2D<const float> src, int c, float scale, Span2D<float> dst) {
    const int x = blockIdx.x * kBlockX + threadIdx.x;
    if (x >= dst.width) return;
    for (int y = blockIdx.y * kBlockY + threadIdx.y; y < dst.height; y += gridDim.y * kBlockY)
        dst(x, y) = scale * src(x, y, c);
}

__global__ void insert_kernel(Span2D<const float> src, float scale, Span2D<float> dst, int c,
                              int clamp_c, float clamp_hi) {
    const int x = blockIdx.x * kBlockX + threadIdx.x;
    if (x >= dst.width) return;
    for (int y = blockIdx.y * kBlockY + threadIdx.y; y < dst.height; y += gridDim.y * kBlockY) {
        dst(x, y, c) = scale * fminf(fmaxf(src(x, y), 0.0f), 1.0f);
        if (clamp_c >= 0) dst(x, y, clamp_c) = fminf(fmaxf(dst(x, y, clamp_c), 0.0f), clamp_hi);
    }
}

}  // namespace

void extract_plane(Span2D<const float> src, int c, float scale, Span2D<float> dst, void* stream) {
    extract_kernel<<<grid_of(dst.width, dst.height), dim3(kBlockX, kBlockY), 0,
                     static_cast<cudaStream_t>(stream)>>>(src, c, scale, dst);
    UPRES_CUDA_CHECK_LAUNCH();
}

void insert_plane(Span2D<const float> src, float scale, Span2D<float> dst, int c, int clamp_c,
                  float clamp_hi, void* stream) {
    insert_kernel<<<grid_of(dst.width, dst.height), dim3(kBlockX, kBlockY), 0,
                    static_cast<cudaStream_t>(stream)>>>(src, scale, dst, c, clamp_c, clamp_hi);
    UPRES_CUDA_CHECK_LAUNCH();
}

}  // namespace upres::srcnn::cuda
