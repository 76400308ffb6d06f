#include <upres/image.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "core/convert_math.hpp"
#include "core/parallel.hpp"
#include "core/span2d.hpp"
#include "core/transfer_count.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/convert_cuda.hpp"
#include "core/cuda_check.hpp"
#endif
#include "core/dispatch.hpp"

namespace upres {

const char* to_string(Location l) noexcept { return l == Location::Device ? "device" : "host"; }

std::size_t pixel_size(PixelType t) noexcept {
    switch (t) {
        case PixelType::U8:
            return 1;
        case PixelType::U16:
            return 2;
        case PixelType::F32:
            return 4;
    }
    return 0;
}

namespace detail {

void check_geometry(int width, int height, int channels, std::ptrdiff_t stride, const void* data,
                    const char* what) {
    auto fail = [&](const std::string& msg) {
        throw Error(ErrorCode::InvalidArgument, std::string(what) + ": " + msg);
    };
    if (width < 0 || height < 0 || width > kMaxDimension || height > kMaxDimension)
        fail("size " + std::to_string(width) + " x " + std::to_string(height) +
             " is out of range (each side must be in 0.." + std::to_string(kMaxDimension) + ")");
    if (std::int64_t{width} * height > kMaxPixels)
        fail("size " + std::to_string(width) + " x " + std::to_string(height) + " exceeds " +
             std::to_string(kMaxPixels) + " pixels");
    if (channels < 1 || channels > kMaxChannels)
        fail(std::to_string(channels) + " channels (allowed: 1 to 4)");
    if (stride != 0 && stride < std::ptrdiff_t{width} * channels)
        fail("row stride " + std::to_string(stride) + " is smaller than width * channels = " +
             std::to_string(std::ptrdiff_t{width} * channels));
    if (data == nullptr && width > 0 && height > 0 && stride != 0)
        fail("null data pointer for a non-empty view");
}

void* allocate(std::size_t bytes, Location loc) {
    if (loc == Location::Host) {
        void* p = ::operator new (bytes, std::align_val_t{64}, std::nothrow);
        if (!p)
            throw Error(ErrorCode::OutOfMemory,
                        "cannot allocate " + std::to_string(bytes) + " bytes of host memory");
        return p;
    }
#if UPRES_HAVE_CUDA
    require_cuda("device image allocation");
    void* p = nullptr;
    cudaError_t err = cudaMalloc(&p, bytes);
    if (err != cudaSuccess) {
        cudaGetLastError();
        throw Error(
            err == cudaErrorMemoryAllocation ? ErrorCode::OutOfMemory : ErrorCode::CudaError,
            "cannot allocate " + std::to_string(bytes) +
                " bytes of device memory: " + cudaGetErrorString(err));
    }
    return p;
#else
    (void)bytes;
    require_cuda("device image allocation");
    return nullptr;
#endif
}

void deallocate(void* p, Location loc) noexcept {
    if (loc == Location::Host) {
        ::operator delete (p, std::align_val_t{64});
        return;
    }
#if UPRES_HAVE_CUDA
    cudaFree(p);
#endif
}

namespace {

void check_same_shape(const RawView& src, const RawView& dst, const char* op) {
    if (src.width != dst.width || src.height != dst.height || src.channels != dst.channels)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + ": source is " + std::to_string(src.width) + " x " +
                        std::to_string(src.height) + " x " + std::to_string(src.channels) +
                        " but destination is " + std::to_string(dst.width) + " x " +
                        std::to_string(dst.height) + " x " + std::to_string(dst.channels));
}

template <class S, class D>
void convert_host(const RawView& src, const RawView& dst, bool normalize, int threads) {
    const Span2D<const S> s{static_cast<const S*>(src.data), src.width, src.height, src.channels,
                            src.stride};
    const Span2D<D> d{static_cast<D*>(dst.data), dst.width, dst.height, dst.channels, dst.stride};
    const float scale = normalize ? convert_scale<S, D>() : 1.0f;
    const int n = s.width * s.channels;
    parallel_for(0, s.height, threads, [&](int y) {
        const S* in = s.row(y);
        D* out = d.row(y);
        for (int i = 0; i < n; ++i) out[i] = convert_pixel<S, D>(in[i], scale);
    });
}

template <class S>
void convert_host_from(const RawView& src, const RawView& dst, bool normalize, int threads) {
    switch (dst.type) {
        case PixelType::U8:
            return convert_host<S, std::uint8_t>(src, dst, normalize, threads);
        case PixelType::U16:
            return convert_host<S, std::uint16_t>(src, dst, normalize, threads);
        case PixelType::F32:
            return convert_host<S, float>(src, dst, normalize, threads);
    }
}

}  // namespace

namespace {
std::atomic<std::uint64_t> g_host_device_copies{0};
}  // namespace

std::uint64_t host_device_copies() noexcept { return g_host_device_copies.load(); }

void copy_raw(const RawView& src, const RawView& dst, void* cuda_stream) {
    check_same_shape(src, dst, "copy");
    if (src.type != dst.type) throw Error(ErrorCode::InvalidArgument, "copy: pixel types differ");
    if (src.width == 0 || src.height == 0) return;
    const std::size_t es = pixel_size(src.type);
    const std::size_t row_bytes = static_cast<std::size_t>(src.width) * src.channels * es;
    if (src.location == Location::Host && dst.location == Location::Host) {
        for (int y = 0; y < src.height; ++y)
            std::memcpy(static_cast<char*>(dst.data) + y * dst.stride * es,
                        static_cast<const char*>(src.data) + y * src.stride * es, row_bytes);
        return;
    }
#if UPRES_HAVE_CUDA
    require_cuda("copy");
    auto kind = [&] {
        if (src.location == Location::Host) return cudaMemcpyHostToDevice;
        if (dst.location == Location::Host) return cudaMemcpyDeviceToHost;
        return cudaMemcpyDeviceToDevice;
    }();
    if (kind != cudaMemcpyDeviceToDevice) g_host_device_copies.fetch_add(1);
    auto stream = static_cast<cudaStream_t>(cuda_stream);
    UPRES_CUDA_CHECK(cudaMemcpy2DAsync(dst.data, dst.stride * es, src.data, src.stride * es,
                                       row_bytes, src.height, kind, stream));
    UPRES_CUDA_CHECK(cudaStreamSynchronize(stream));
#else
    (void)cuda_stream;
    require_cuda("copy");
#endif
}

void convert_raw(const RawView& src, const RawView& dst, bool normalize, void* cuda_stream,
                 int threads) {
    check_same_shape(src, dst, "convert");
    if (src.location != dst.location)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("convert: source is in ") + to_string(src.location) +
                        " memory but destination is in " + to_string(dst.location) +
                        " memory (copy first)");
    if (src.width == 0 || src.height == 0) return;
    if (src.location == Location::Device) {
#if UPRES_HAVE_CUDA
        require_cuda("convert");
        cuda::convert_raw(src, dst, normalize, cuda_stream);
        return;
#else
        (void)cuda_stream;
        require_cuda("convert");
#endif
    }
    switch (src.type) {
        case PixelType::U8:
            return convert_host_from<std::uint8_t>(src, dst, normalize, threads);
        case PixelType::U16:
            return convert_host_from<std::uint16_t>(src, dst, normalize, threads);
        case PixelType::F32:
            return convert_host_from<float>(src, dst, normalize, threads);
    }
}

}  // namespace detail
}  // namespace upres
