// CUDA side of the non-finite scan (see finite_scan_cuda.hpp).
#include "core/finite_scan_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.hpp"

namespace upres::cuda {

namespace {

// One block row per image row (grid.x: heights up to kMaxDimension exceed gridDim.y), up to 16
// blocks along the row; the smallest index found wins (atomicMin: deterministic).
__global__ void find_nonfinite_kernel(Span2D<const float> src, unsigned long long* first) {
    const int n = src.width * src.channels;
    const int y = blockIdx.x;
    const float* r = src.row(y);
    for (int i = blockIdx.y * blockDim.x + threadIdx.x; i < n; i += gridDim.y * blockDim.x)
        if (!isfinite(r[i]))
            atomicMin(first, static_cast<unsigned long long>(y) * n + i);  // min: deterministic
}

// One pinned host word per calling thread for the read-back (from a pageable one,
// cudaMemcpyAsync stages through a driver buffer and takes longer); freed at thread exit.
// nullptr where pinned memory cannot be had: read() then uses a pageable word.
unsigned long long* pinned_word() {
    struct Word {
        unsigned long long* p = nullptr;
        Word() {
            if (cudaHostAlloc(reinterpret_cast<void**>(&p), sizeof(*p), cudaHostAllocDefault) !=
                cudaSuccess) {
                p = nullptr;
                (void)cudaGetLastError();  // not sticky; clear it for the next call's checks
            }
        }
        ~Word() {
            if (p != nullptr) (void)cudaFreeHost(p);
        }
    };
    thread_local const Word w;
    return w.p;
}

}  // namespace

NonfiniteReport::NonfiniteReport(void* stream, const char* what)
    : mem_(sizeof(unsigned long long), static_cast<cudaStream_t>(stream), what),
      stream_(stream),
      what_(what) {
    const cudaError_t err = cudaMemsetAsync(device(), 0xFF, sizeof(unsigned long long),
                                            static_cast<cudaStream_t>(stream));
    if (err != cudaSuccess) throw_cuda_error(err, what_, __FILE__, __LINE__);
}

std::int64_t NonfiniteReport::read() const {
    auto s = static_cast<cudaStream_t>(stream_);
    unsigned long long pageable = ~0ull;
    unsigned long long* h = pinned_word();
    if (h == nullptr) h = &pageable;
    cudaError_t err = cudaMemcpyAsync(h, device(), sizeof(*h), cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    if (err != cudaSuccess) throw_cuda_error(err, what_, __FILE__, __LINE__);
    return *h == ~0ull ? -1 : static_cast<std::int64_t>(*h);
}

std::int64_t find_nonfinite_device(Span2D<const float> src, void* stream) {
    const NonfiniteReport report(stream, "non-finite scan");
    const int n = src.width * src.channels;
    const dim3 grid(src.height, std::min((n + 255) / 256, 16));
    find_nonfinite_kernel<<<grid, 256, 0, static_cast<cudaStream_t>(stream)>>>(src,
                                                                               report.device());
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) throw_cuda_error(err, "find_nonfinite_device", __FILE__, __LINE__);
    return report.read();
}

}  // namespace upres::cuda
