// CUDA side of the non-finite scan (see finite_scan_cuda.hpp).
#include "core/finite_scan_cuda.hpp"

#include <cuda_runtime.h>

#include <algorithm>

#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"

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

}  // namespace

std::int64_t find_nonfinite_device(Span2D<const float> src, void* stream) {
    auto s = static_cast<cudaStream_t>(stream);
    const DeviceTemp flag(sizeof(unsigned long long), s, "non-finite scan");
    auto* d = flag.as<unsigned long long>();
    unsigned long long h = ~0ull;
    cudaError_t err = cudaMemsetAsync(d, 0xFF, sizeof(*d), s);  // ~0: none found
    if (err == cudaSuccess) {
        const int n = src.width * src.channels;
        const dim3 grid(src.height, std::min((n + 255) / 256, 16));
        find_nonfinite_kernel<<<grid, 256, 0, s>>>(src, d);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    if (err != cudaSuccess) throw_cuda_error(err, "find_nonfinite_device", __FILE__, __LINE__);
    return h == ~0ull ? -1 : static_cast<std::int64_t>(h);
}

}  // namespace upres::cuda
