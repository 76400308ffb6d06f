#include <upres/context.hpp>

#include <omp.h>

#include <cstdint>
#include <cstdlib>
#include <string>

#include <upres/error.hpp>
#include "core/device_scope.hpp"
#include "core/dispatch.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "core/cuda_check.hpp"
#endif

namespace upres {

int cuda_device_count() noexcept {
#if UPRES_HAVE_CUDA
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        cudaGetLastError();  // clear the sticky "no device" error
        return 0;
    }
    return n;
#else
    return 0;
#endif
}

bool cuda_available() noexcept { return cuda_device_count() > 0; }

std::string cuda_device_info() {
    std::string out;
#if UPRES_HAVE_CUDA
    const int n = cuda_device_count();
    for (int i = 0; i < n; ++i) {
        cudaDeviceProp p{};
        UPRES_CUDA_CHECK(cudaGetDeviceProperties(&p, i));
        out += std::to_string(i) + ": " + p.name + " (sm_" + std::to_string(p.major) +
               std::to_string(p.minor) + ", " + std::to_string(p.multiProcessorCount) + " SMs, " +
               std::to_string(p.totalGlobalMem >> 20) + " MiB, L2 " +
               std::to_string(p.l2CacheSize >> 20) + " MiB)\n";
    }
#endif
    return out;
}

void check_device(int device, const char* op, bool current) {
    const int n = cuda_device_count();
    if ((current && device == -1) || (device >= 0 && device < n)) return;
    std::string allowed =
        n == 0 ? std::string("this machine has none") : "allowed: 0 to " + std::to_string(n - 1);
    if (current && n > 0) allowed += ", or -1 for the current one";
    throw Error(ErrorCode::InvalidArgument, std::string(op) + ": CUDA device " +
                                                std::to_string(device) + " does not exist (" +
                                                allowed + ")");
}

DeviceScope::DeviceScope(const Context& ctx, Backend backend, const char* op) {
    if (backend != Backend::Cuda || ctx.device == -1) return;
    check_device(ctx.device, op);
#if UPRES_HAVE_CUDA
    int cur = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&cur));
    if (cur == ctx.device) return;
    UPRES_CUDA_CHECK(cudaSetDevice(ctx.device));
    previous_ = cur;
#endif
}

DeviceScope::~DeviceScope() {
#if UPRES_HAVE_CUDA
    if (previous_ >= 0) cudaSetDevice(previous_);
#endif
}

void set_cuda_device(int device) {
    require_cuda("set_cuda_device");
    check_device(device, "set_cuda_device", false);
#if UPRES_HAVE_CUDA
    UPRES_CUDA_CHECK(cudaSetDevice(device));
#endif
}

void synchronize(const Context& ctx) {
#if UPRES_HAVE_CUDA
    if (cuda_available())
        UPRES_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(ctx.cuda_stream)));
#else
    (void)ctx;
#endif
}

BuildInfo build_info() {
    BuildInfo b;
    b.version = UPRES_VERSION;
#if UPRES_HAVE_CUDA
    b.cuda = true;
#ifdef UPRES_CUDA_ARCHS
    b.cuda_archs = UPRES_CUDA_ARCHS;
#endif
    int rt = 0;
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
        b.cuda_runtime = std::to_string(rt / 1000) + "." + std::to_string((rt % 1000) / 10);
#endif
    b.openmp = true;
    b.openmp_max_threads = omp_get_max_threads();
#if defined(__clang__)
    b.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
    b.compiler = "gcc " __VERSION__;
#endif
    return b;
}

void require_cuda(const char* op) {
#if UPRES_HAVE_CUDA
    if (!cuda_available())
        throw Error(ErrorCode::BackendUnavailable,
                    std::string(op) +
                        ": the cuda backend was requested but no CUDA device was "
                        "found (use --backend cpu or reference)");
#else
    throw Error(ErrorCode::BackendUnavailable,
                std::string(op) +
                    ": the cuda backend was requested but upres was built without "
                    "CUDA (rebuild with -DUPRES_WITH_CUDA=ON, or use cpu/reference)");
#endif
}

Backend resolve_backend(const Context& ctx, Location loc, const char* op) {
    switch (ctx.backend) {
        case Backend::Auto:
            if (loc == Location::Device) {
                require_cuda(op);
                return Backend::Cuda;
            }
            return Backend::Cpu;
        case Backend::Reference:
        case Backend::Cpu:
            if (loc == Location::Device)
                throw Error(ErrorCode::InvalidArgument,
                            std::string(op) + ": the " + to_string(ctx.backend) +
                                " backend needs host memory but the image is in device memory "
                                "(copy it to the host, or use the cuda backend)");
            return ctx.backend;
        case Backend::Cuda:
            require_cuda(op);
            return Backend::Cuda;
    }
    throw Error(ErrorCode::Internal, std::string(op) + ": unknown backend value");
}

// Page-locked where a device can use it; the first bytes before the block record which kind it
// is, so that free_host_frame_memory needs no other state.
namespace {
struct HostFrameHeader {
    void* base;
    bool pinned;
};
constexpr std::size_t kFrameAlign = 64;
}  // namespace

void* alloc_host_frame_memory(std::size_t bytes) {
    const std::size_t total = bytes + kFrameAlign + sizeof(HostFrameHeader);
    void* base = nullptr;
    bool pinned = false;
#if UPRES_HAVE_CUDA
    if (cuda_available() && cudaHostAlloc(&base, total, cudaHostAllocDefault) == cudaSuccess)
        pinned = true;
    else
        cudaGetLastError();  // clear a failed attempt; fall back to ordinary memory
#endif
    if (!base) base = std::malloc(total);
    if (!base)
        throw Error(ErrorCode::OutOfMemory,
                    "cannot allocate " + std::to_string(bytes) + " bytes of host frame memory");
    auto addr = reinterpret_cast<std::uintptr_t>(base) + sizeof(HostFrameHeader);
    addr = (addr + kFrameAlign - 1) & ~(std::uintptr_t{kFrameAlign} - 1);
    auto* h = reinterpret_cast<HostFrameHeader*>(addr) - 1;
    h->base = base;
    h->pinned = pinned;
    return reinterpret_cast<void*>(addr);
}

void free_host_frame_memory(void* p) noexcept {
    if (!p) return;
    const HostFrameHeader* h = static_cast<HostFrameHeader*>(p) - 1;
#if UPRES_HAVE_CUDA
    if (h->pinned) {
        cudaFreeHost(h->base);
        return;
    }
#endif
    std::free(h->base);
}

}  // namespace upres
