// CUDA backend of upres::convert: one thread per element, rows in blockIdx.y. This is also the
// CUDA smoke-test kernel of tests/core/cuda_test.cpp.
#include <cstdint>

#include "core/convert_cuda.hpp"
#include "core/convert_math.hpp"
#include "core/cuda_check.hpp"
#include "core/span2d.hpp"

namespace upres::cuda {

namespace {

template <class S, class D>
__global__ void convert_kernel(Span2D<const S> src, Span2D<D> dst, float scale) {
    const int n = src.width * src.channels;
    const int y = blockIdx.y;
    const S* in = src.row(y);
    D* out = dst.row(y);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = convert_pixel<S, D>(in[i], scale);
}

template <class S, class D>
void launch(const detail::RawView& s, const detail::RawView& d, bool normalize,
            cudaStream_t stream) {
    Span2D<const S> src{static_cast<const S*>(s.data), s.width, s.height, s.channels, s.stride};
    Span2D<D> dst{static_cast<D*>(d.data), d.width, d.height, d.channels, d.stride};
    const int n = s.width * s.channels;
    const int threads = 256;
    const dim3 grid((n + threads - 1) / threads, s.height);
    convert_kernel<S, D>
        <<<grid, threads, 0, stream>>>(src, dst, normalize ? convert_scale<S, D>() : 1.0f);
    UPRES_CUDA_CHECK_LAUNCH();
}

template <class S>
void launch_from(const detail::RawView& s, const detail::RawView& d, bool normalize,
                 cudaStream_t stream) {
    switch (d.type) {
        case PixelType::U8:
            return launch<S, std::uint8_t>(s, d, normalize, stream);
        case PixelType::U16:
            return launch<S, std::uint16_t>(s, d, normalize, stream);
        case PixelType::F32:
            return launch<S, float>(s, d, normalize, stream);
    }
}

}  // namespace

void convert_raw(const detail::RawView& s, const detail::RawView& d, bool normalize,
                 void* stream_ptr) {
    auto stream = static_cast<cudaStream_t>(stream_ptr);
    switch (s.type) {
        case PixelType::U8:
            return launch_from<std::uint8_t>(s, d, normalize, stream);
        case PixelType::U16:
            return launch_from<std::uint16_t>(s, d, normalize, stream);
        case PixelType::F32:
            return launch_from<float>(s, d, normalize, stream);
    }
}

void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line) {
    cudaGetLastError();
    throw Error(err == cudaErrorMemoryAllocation ? ErrorCode::OutOfMemory : ErrorCode::CudaError,
                std::string("CUDA error ") + cudaGetErrorName(err) + " (" +
                    cudaGetErrorString(err) + ") in " + expr + " at " + file + ":" +
                    std::to_string(line));
}

}  // namespace upres::cuda
