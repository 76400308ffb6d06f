// CUDA form of the upscale pipelines' plane steps (upscale_planes.hpp): one thread per pixel,
// memory-bound.
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

// mode 0: to16, 1: from16, 2: min(v, maxv); in and out may be the same plane (one channel).
__global__ void depth_kernel(Span2D<const std::uint16_t> in, Span2D<std::uint16_t> out,
                             std::uint32_t maxv, int mode) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out.width || y >= out.height) return;
    const std::uint32_t v = in.row(y)[x];
    out.row(y)[x] = mode == 0   ? upscale_planes::to16(v, maxv)
                    : mode == 1 ? upscale_planes::from16(v, maxv)
                                : static_cast<std::uint16_t>(v < maxv ? v : maxv);
}

void depth(Span2D<const std::uint16_t> in, Span2D<std::uint16_t> out, std::uint32_t maxv, int mode,
           void* stream) {
    if (out.width <= 0 || out.height <= 0) return;
    depth_kernel<<<grid_for(out.width, out.height), dim3(kThreadsX, kThreadsY), 0,
                   static_cast<cudaStream_t>(stream)>>>(in, out, maxv, mode);
    UPRES_CUDA_CHECK_LAUNCH();
}

}  // namespace

void widen_depth(Span2D<const std::uint16_t> in, Span2D<std::uint16_t> out, std::uint32_t maxv,
                 void* stream) {
    depth(in, out, maxv, 0, stream);
}

void narrow_depth(Span2D<const std::uint16_t> in, Span2D<std::uint16_t> out, std::uint32_t maxv,
                  void* stream) {
    depth(in, out, maxv, 1, stream);
}

void clamp_depth(Span2D<std::uint16_t> plane, std::uint16_t maxv, void* stream) {
    const Span2D<const std::uint16_t> in{plane.data, plane.width, plane.height, plane.channels,
                                         plane.stride};
    depth(in, plane, maxv, 2, stream);
}

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
