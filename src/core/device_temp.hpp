// Stream-ordered temporary device memory (internal; include only where UPRES_HAVE_CUDA).
//
// Operations that need scratch memory on the device (B-spline coefficients of the two-pass warp,
// the copy of an in-place prefilter, texture staging, result flags) take it from one memory pool
// per device that upres owns (cudaMemPoolCreate), with cudaMallocFromPoolAsync / cudaFreeAsync
// on the operation's stream. The pool keeps freed memory for the next call instead of returning
// it at every synchronization, which is what the device's default pool does (release threshold
// 0): with it every synchronous call re-allocated its temporaries (45 us for 16 MiB on an H100),
// and a cudaMalloc / cudaFree pair also synchronized the whole device. The application's own
// allocations and the default pool are not touched. upres::cuda_release_cached_memory() gives
// the kept memory back. Reuse across streams follows the pool's event dependencies (the CUDA
// default for pools), so a block freed on one stream is reused on another only after that
// stream's work is done.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace upres::cuda {

// `bytes` (> 0) of device memory on the current device, ordered on `stream`. Throws
// Error(OutOfMemory) naming `what` and the size when the device has not enough memory,
// Error(CudaError) for other failures.
void* temp_alloc(std::size_t bytes, cudaStream_t stream, const char* what);
// Frees p (from temp_alloc, or nullptr) once the work queued on `stream` so far is done. Never
// throws (a failure is reported by the next CUDA call).
void temp_free(void* p, cudaStream_t stream) noexcept;

// Test and benchmark hook: false makes the pools release freed memory at every synchronization
// (release threshold 0, the default pool's behaviour), true (the default) keeps it.
void set_temp_caching(bool keep);
// Bytes the current device's pool holds (in use or kept), 0 before its first allocation.
std::size_t temp_reserved_bytes();
// The most bytes of the current device's pool in use at once since the last reset (reset: set
// it to zero after reading), 0 before its first allocation.
std::size_t temp_used_high_bytes(bool reset);

// RAII holder: temp_alloc in the constructor, temp_free in the destructor, both on one stream.
class DeviceTemp {
  public:
    DeviceTemp() = default;
    DeviceTemp(std::size_t bytes, cudaStream_t stream, const char* what)
        : p_(temp_alloc(bytes, stream, what)), s_(stream) {}
    ~DeviceTemp() { temp_free(p_, s_); }
    DeviceTemp(DeviceTemp&& o) noexcept : p_(o.p_), s_(o.s_) { o.p_ = nullptr; }
    DeviceTemp& operator=(DeviceTemp&& o) noexcept {
        if (this != &o) {
            temp_free(p_, s_);
            p_ = o.p_, s_ = o.s_;
            o.p_ = nullptr;
        }
        return *this;
    }
    DeviceTemp(const DeviceTemp&) = delete;
    DeviceTemp& operator=(const DeviceTemp&) = delete;

    template <class T>
    T* as() const {
        return static_cast<T*>(p_);
    }
    void* get() const { return p_; }

  private:
    void* p_ = nullptr;
    cudaStream_t s_ = nullptr;
};

}  // namespace upres::cuda
