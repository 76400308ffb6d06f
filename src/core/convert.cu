// CUDA backend of upres::convert. This is also the
// CUDA smoke-test kernel of tests/core/cuda_test.cpp.
#include <cstdint>

#include "core/convert_cuda.hpp"
#include "core/convert_math.hpp"
#include "core/cuda_check.hpp"
#include "core/span2d.hpp"

namespace upres::cuda {

namespace {

// Rows are strided over grid.y (heights above 65535 work); each thread converts 4 consecutive
// elements of a row so several loads are in flight.
template <class S, class D>
__global__ void convert_kernel(Span2D<const S> src, Span2D<D> dst, float scale) {
    const int n = src.width * src.channels;
    for (int y = blockIdx.y; y < src.height; y += gridDim.y) {
        const S* in = src.row(y);
        D* out = dst.row(y);
        for (int i = (blockIdx.x * blockDim.x + threadIdx.x) * 4; i < n;
             i += gridDim.x * blockDim.x * 4) {
            S v[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) v[k] = i + k < n ? in[i + k] : S{};
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (i + k < n) out[i + k] = convert_pixel<S, D>(v[k], scale);
        }
    }
}

template <class S, class D>
void launch(const detail::RawView& s, const detail::RawView& d, bool normalize,
            cudaStream_t stream) {
    Span2D<const S> src{static_cast<const S*>(s.data), s.width, s.height, s.channels, s.stride};
    Span2D<D> dst{static_cast<D*>(d.data), d.width, d.height, d.channels, d.stride};
    const int n = s.width * s.channels;
    const int threads = 256;
    const int per_block = threads * 4;
    const dim3 grid((n + per_block - 1) / per_block, s.height < 65535 ? s.height : 65535);
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
