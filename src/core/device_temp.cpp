// upres's per-device pools for temporary device memory (device_temp.hpp) and
// upres::cuda_release_cached_memory (context.hpp).
#include <upres/context.hpp>
#include <upres/error.hpp>

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"
#endif

namespace upres {

#if UPRES_HAVE_CUDA
namespace cuda {
namespace {

struct Pools {
    std::mutex m;
    std::vector<cudaMemPool_t> by_device;  // nullptr until the device's first allocation
    bool keep = true;
};

Pools& pools() {
    static Pools* p = new Pools;  // never destroyed: the pools live as long as the CUDA context
    return *p;
}

void set_threshold(cudaMemPool_t pool, bool keep) {
    std::uint64_t t = keep ? UINT64_MAX : 0;
    UPRES_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &t));
}

// The current device's pool, created on first use.
cudaMemPool_t device_pool() {
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    Pools& ps = pools();
    std::lock_guard<std::mutex> lock(ps.m);
    if (ps.by_device.size() <= static_cast<std::size_t>(dev))
        ps.by_device.resize(static_cast<std::size_t>(dev) + 1, nullptr);
    cudaMemPool_t& pool = ps.by_device[static_cast<std::size_t>(dev)];
    if (!pool) {
        int supported = 0;
        UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&supported, cudaDevAttrMemoryPoolsSupported, dev));
        if (!supported)
            throw Error(ErrorCode::CudaError,
                        "CUDA device " + std::to_string(dev) +
                            " does not support stream-ordered memory pools, which upres needs "
                            "for its temporaries (CUDA 11.2 or newer driver and device)");
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = dev;
        UPRES_CUDA_CHECK(cudaMemPoolCreate(&pool, &props));
        set_threshold(pool, ps.keep);
    }
    return pool;
}

}  // namespace

void* temp_alloc(std::size_t bytes, cudaStream_t stream, const char* what) {
    if (bytes == 0) throw Error(ErrorCode::Internal, std::string(what) + ": empty temporary");
    cudaMemPool_t pool = device_pool();
    void* p = nullptr;
    cudaError_t err = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
    if (err == cudaErrorMemoryAllocation) {
        // The pool may hold kept blocks that do not fit this request: give them back, retry.
        cudaGetLastError();
        cudaMemPoolTrimTo(pool, 0);
        err = cudaMallocFromPoolAsync(&p, bytes, pool, stream);
    }
    if (err != cudaSuccess) {
        cudaGetLastError();
        const std::string size = std::to_string((bytes + (1 << 20) - 1) >> 20) + " MiB";
        if (err == cudaErrorMemoryAllocation) {
            std::size_t free_b = 0, total_b = 0;
            cudaMemGetInfo(&free_b, &total_b);
            throw Error(ErrorCode::OutOfMemory,
                        std::string(what) + ": the GPU is out of memory (needs a temporary of " +
                            size + ", " + std::to_string(free_b >> 20) + " MiB free of " +
                            std::to_string(total_b >> 20) + " MiB)");
        }
        throw Error(ErrorCode::CudaError, std::string(what) + ": cannot allocate a temporary of " +
                                              size + " on the GPU: " + cudaGetErrorName(err) +
                                              " (" + cudaGetErrorString(err) + ")");
    }
    return p;
}

void temp_free(void* p, cudaStream_t stream) noexcept {
    if (p) cudaFreeAsync(p, stream);
}

void set_temp_caching(bool keep) {
    Pools& ps = pools();
    std::lock_guard<std::mutex> lock(ps.m);
    ps.keep = keep;
    for (cudaMemPool_t pool : ps.by_device)
        if (pool) {
            set_threshold(pool, keep);
            if (!keep) UPRES_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
        }
}

namespace {
// A memory-pool attribute of the current device's pool (0 before its first allocation); reset:
// set it to zero after reading.
std::size_t pool_attribute(cudaMemPoolAttr attr, bool reset) {
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    Pools& ps = pools();
    std::lock_guard<std::mutex> lock(ps.m);
    if (ps.by_device.size() <= static_cast<std::size_t>(dev) || !ps.by_device[dev]) return 0;
    std::uint64_t v = 0;
    UPRES_CUDA_CHECK(cudaMemPoolGetAttribute(ps.by_device[dev], attr, &v));
    if (reset) {
        std::uint64_t zero = 0;
        UPRES_CUDA_CHECK(cudaMemPoolSetAttribute(ps.by_device[dev], attr, &zero));
    }
    return static_cast<std::size_t>(v);
}
}  // namespace

std::size_t temp_reserved_bytes() {
    return pool_attribute(cudaMemPoolAttrReservedMemCurrent, false);
}

std::size_t temp_used_high_bytes(bool reset) {
    return pool_attribute(cudaMemPoolAttrUsedMemHigh, reset);
}

}  // namespace cuda
#endif

void cuda_release_cached_memory() {
#if UPRES_HAVE_CUDA
    auto& ps = cuda::pools();
    std::lock_guard<std::mutex> lock(ps.m);
    for (cudaMemPool_t pool : ps.by_device)
        if (pool) UPRES_CUDA_CHECK(cudaMemPoolTrimTo(pool, 0));
#endif
}

}  // namespace upres
