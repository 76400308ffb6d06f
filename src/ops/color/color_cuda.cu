// CUDA backend of upres colour conversion: one thread per pixel column x, rows strided over
// blockIdx.y, float
// compute (color_math.hpp, R = float). Memory-bound; no tuning beyond 256-thread blocks.
#include <cstdint>

#include "core/cuda_check.hpp"
#include "core/pixel_visit.hpp"
#include "ops/color/color_backends.hpp"
#include "ops/color/color_math.hpp"

namespace upres::cuda {

namespace {

constexpr int kThreads = 256;

template <class T>
Span2D<T> span_raw(const detail::RawView& v) {
    return {static_cast<T*>(v.data), v.width, v.height, v.channels, v.stride};
}

// gridDim.y is limited to 65535: kernels loop over rows with a stride of gridDim.y.
dim3 grid_for(int width, int height) {
    return dim3((width + kThreads - 1) / kThreads, height < 65535 ? height : 65535);
}

template <class T>
__global__ void rgb_to_ycbcr_kernel(Span2D<const T> in, Span2D<float> out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= in.width) return;
    const int c = in.channels;
    for (int y = blockIdx.y; y < in.height; y += gridDim.y)
        color::pixel_rgb_to_ycbcr<float>(in.row(y) + x * c, out.row(y) + x * c, c);
}

template <class T>
__global__ void ycbcr_to_rgb_kernel(Span2D<const float> in, Span2D<T> out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= in.width) return;
    const int c = in.channels;
    for (int y = blockIdx.y; y < in.height; y += gridDim.y)
        color::pixel_ycbcr_to_rgb<float>(in.row(y) + x * c, out.row(y) + x * c, c);
}

template <class T>
__global__ void luma_kernel(Span2D<const T> in, Span2D<float> out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x >= in.width) return;
    for (int y = blockIdx.y; y < in.height; y += gridDim.y)
        out.row(y)[x] = color::pixel_luma<float>(in.row(y) + x * in.channels, in.channels);
}

}  // namespace

void rgb_to_ycbcr(const detail::RawView& rgb, Span2D<float> ycc, void* stream) {
    if (rgb.width == 0 || rgb.height == 0) return;
    visit_pixel_type(rgb.type, [&](auto tag) {
        using T = decltype(tag);
        rgb_to_ycbcr_kernel<T>
            <<<grid_for(rgb.width, rgb.height), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
                span_raw<const T>(rgb), ycc);
        UPRES_CUDA_CHECK_LAUNCH();
    });
}

void ycbcr_to_rgb(Span2D<const float> ycc, const detail::RawView& rgb, void* stream) {
    if (rgb.width == 0 || rgb.height == 0) return;
    visit_pixel_type(rgb.type, [&](auto tag) {
        using T = decltype(tag);
        ycbcr_to_rgb_kernel<T>
            <<<grid_for(rgb.width, rgb.height), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
                ycc, span_raw<T>(rgb));
        UPRES_CUDA_CHECK_LAUNCH();
    });
}

void luma(const detail::RawView& img, Span2D<float> y, void* stream) {
    if (img.width == 0 || img.height == 0) return;
    visit_pixel_type(img.type, [&](auto tag) {
        using T = decltype(tag);
        luma_kernel<T>
            <<<grid_for(img.width, img.height), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
                span_raw<const T>(img), y);
        UPRES_CUDA_CHECK_LAUNCH();
    });
}

}  // namespace upres::cuda
