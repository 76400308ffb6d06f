// CUDA backend of upres::warp: the public entry points and the texture cache. The kernels and
// their schedules are in warp_cuda_kernels.cuh (its header comment describes them), compiled in
// parts (warp_cuda_parts.hpp, warp_cuda_part_*.cu).
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <mutex>

#include "core/cuda_check.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cuda_parts.hpp"
#include "ops/warp/warp_schedule.hpp"

namespace upres::cuda {

namespace detail {

namespace {
// Texture objects over caller memory are cached (creating one costs host time; destroying one
// while a kernel may still read it is not allowed). Keyed by the exact memory description, so a
// reused address with the same geometry is still valid.
struct TexKey {
    const void* ptr;
    int w, h, ct;
    std::size_t pitch_bytes;
    int device;
    bool operator==(const TexKey& o) const {
        return ptr == o.ptr && w == o.w && h == o.h && ct == o.ct && pitch_bytes == o.pitch_bytes &&
               device == o.device;
    }
};

}  // namespace

cudaTextureObject_t create_texture(const void* ptr, int w, int h, int ct, std::size_t pitch_bytes) {
    cudaResourceDesc rd{};
    rd.resType = cudaResourceTypePitch2D;
    rd.res.pitch2D.devPtr = const_cast<void*>(ptr);
    rd.res.pitch2D.width = static_cast<std::size_t>(w);
    rd.res.pitch2D.height = static_cast<std::size_t>(h);
    rd.res.pitch2D.pitchInBytes = pitch_bytes;
    rd.res.pitch2D.desc = cudaCreateChannelDesc(32, ct >= 2 ? 32 : 0, ct >= 4 ? 32 : 0,
                                                ct >= 4 ? 32 : 0, cudaChannelFormatKindFloat);
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t t = 0;
    UPRES_CUDA_CHECK(cudaCreateTextureObject(&t, &rd, &td, nullptr));
    return t;
}

cudaTextureObject_t cached_texture(const void* ptr, int w, int h, int ct, std::size_t pitch_bytes) {
    constexpr int kSlots = 16;
    static std::mutex mu;
    static TexKey keys[kSlots];
    static cudaTextureObject_t texs[kSlots] = {};
    static unsigned long long stamp[kSlots] = {};
    static unsigned long long clock = 0;
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    const TexKey key{ptr, w, h, ct, pitch_bytes, dev};
    std::lock_guard<std::mutex> lock(mu);
    int victim = 0;
    for (int i = 0; i < kSlots; ++i) {
        if (texs[i] && keys[i] == key) {
            stamp[i] = ++clock;
            return texs[i];
        }
        if (stamp[i] < stamp[victim]) victim = i;
    }
    if (texs[victim]) {
        // The evicted texture may still be read by queued kernels: wait for them first.
        UPRES_CUDA_CHECK(cudaDeviceSynchronize());
        UPRES_CUDA_CHECK(cudaDestroyTextureObject(texs[victim]));
        texs[victim] = 0;
    }
    texs[victim] = create_texture(ptr, w, h, ct, pitch_bytes);
    keys[victim] = key;
    stamp[victim] = ++clock;
    return texs[victim];
}

}  // namespace detail

namespace {

template <class S, class D>
void launch(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, void* stream) {
    if (p.schedule != WarpScheduleOverride::Policy)
        warp_schedule::check_override(
            warp_schedule::case_of(p, PixelTraits<S>::type, PixelTraits<D>::type, dst.channels, 0));
    if (dst.width <= 0 || dst.height <= 0) return;
    switch (dst.channels) {
        case 1:
            return warp_part<S, D, 1>(src, dst, p, stream);
        case 2:
            return warp_part<S, D, 2>(src, dst, p, stream);
        case 3:
            return warp_part<S, D, 3>(src, dst, p, stream);
        case 4:
            return warp_part<S, D, 4>(src, dst, p, stream);
        default:
            throw Error(ErrorCode::Internal, "cuda::warp: channels must be 1 to 4");
    }
}

}  // namespace

void warp(Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst, const WarpPlan& plan,
          void* stream) {
    launch(src, dst, plan, stream);
}
void warp(Span2D<const std::uint16_t> src, Span2D<std::uint16_t> dst, const WarpPlan& plan,
          void* stream) {
    launch(src, dst, plan, stream);
}
void warp(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan, void* stream) {
    launch(src, dst, plan, stream);
}
void warp(Span2D<const float> coeffs, Span2D<std::uint8_t> dst, const WarpPlan& plan,
          void* stream) {
    launch(coeffs, dst, plan, stream);
}
void warp(Span2D<const float> coeffs, Span2D<std::uint16_t> dst, const WarpPlan& plan,
          void* stream) {
    launch(coeffs, dst, plan, stream);
}

}  // namespace upres::cuda
