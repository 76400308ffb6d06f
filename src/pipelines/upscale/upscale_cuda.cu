// CUDA form of the co-sited upscale pipeline's plane steps (upscale_planes.hpp): one thread per
// pixel, memory-bound.
#include <cuda_runtime.h>

#include "core/cuda_check.hpp"
#include "pipelines/upscale/upscale_planes.hpp"

namespace upres::cuda {

namespace {

constexpr int kThreadsX = 128, kThreadsY = 2;

dim3 grid_for(int w, int h) {
    return dim3((w + kThreadsX - 1) / kThreadsX, (h + kThreadsY - 1) / kThreadsY);
}

__global__ void split_kernel(Span2D<const float> ycc, Span2D<std::uint8_t> luma,
                             Span2D<float> chroma) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < ycc.width && y < ycc.height) upscale_planes::split_pixel(ycc, luma, chroma, x, y);
}

__global__ void merge_kernel(Span2D<const std::uint8_t> luma, Span2D<const float> chroma,
                             Span2D<float> ycc) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < ycc.width && y < ycc.height) upscale_planes::merge_pixel(luma, chroma, ycc, x, y);
}

}  // namespace

void split_ycc(Span2D<const float> ycc, Span2D<std::uint8_t> luma, Span2D<float> chroma,
               void* stream) {
    if (ycc.width <= 0 || ycc.height <= 0) return;
    split_kernel<<<grid_for(ycc.width, ycc.height), dim3(kThreadsX, kThreadsY), 0,
                   static_cast<cudaStream_t>(stream)>>>(ycc, luma, chroma);
    UPRES_CUDA_CHECK_LAUNCH();
}

void merge_ycc(Span2D<const std::uint8_t> luma, Span2D<const float> chroma, Span2D<float> ycc,
               void* stream) {
    if (ycc.width <= 0 || ycc.height <= 0) return;
    merge_kernel<<<grid_for(ycc.width, ycc.height), dim3(kThreadsX, kThreadsY), 0,
                   static_cast<cudaStream_t>(stream)>>>(luma, chroma, ycc);
    UPRES_CUDA_CHECK_LAUNCH();
}

}  // namespace upres::cuda
