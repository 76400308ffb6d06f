// Helper kernels of the benchmarks (declared in bench_util.hpp): random fills, the trivial
// read+write copy kernel of the memory floor, and the spin kernel of time_device().
#include <cstdint>

#include "bench_cuda.hpp"

namespace upres::bench {

namespace {

__device__ __forceinline__ std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

struct MakeU8 {
    __device__ std::uint8_t operator()(std::uint64_t r) const {
        return static_cast<std::uint8_t>(1 + r % 255);
    }
};
struct MakeU16 {
    __device__ std::uint16_t operator()(std::uint64_t r) const {
        return static_cast<std::uint16_t>(1 + r % 65535);
    }
};
struct MakeF32 {
    __device__ float operator()(std::uint64_t r) const {
        return 0.05f + static_cast<float>(r >> 40) * (1.0f / 16777216.0f);
    }
};

template <class T, class Make>
__global__ void fill_kernel(T* p, std::size_t n, std::uint64_t s, Make make) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
         i += step)
        p[i] = make(mix(s ^ static_cast<std::uint64_t>(i)));
}

int full_grid(int threads) {
    int dev = 0, sms = 0, per_sm = 0;
    UPRES_BENCH_CUDA(cudaGetDevice(&dev));
    UPRES_BENCH_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    UPRES_BENCH_CUDA(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev));
    return sms * (per_sm / threads);
}

template <class T, class Make>
void fill(T* p, std::size_t n, std::uint64_t seed, cudaStream_t stream, Make make) {
    if (n == 0) return;
    const int threads = 256;
    // Host-side mixing of the seed matches bench_util.cpp's host fill.
    std::uint64_t s = seed + 0x9E3779B97F4A7C15ull;
    s = (s ^ (s >> 30)) * 0xBF58476D1CE4E5B9ull;
    s = (s ^ (s >> 27)) * 0x94D049BB133111EBull;
    s ^= s >> 31;
    fill_kernel<<<full_grid(threads), threads, 0, stream>>>(p, n, s, make);
    UPRES_BENCH_CUDA(cudaGetLastError());
}

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n) {
    const std::size_t step = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
    // Four independent 16-byte loads in flight per thread before the stores.
    for (; i + 3 * step < n; i += 4 * step) {
        const uint4 a = src[i];
        const uint4 b = src[i + step];
        const uint4 c = src[i + 2 * step];
        const uint4 d = src[i + 3 * step];
        dst[i] = a;
        dst[i + step] = b;
        dst[i + 2 * step] = c;
        dst[i + 3 * step] = d;
    }
    for (; i < n; i += step) dst[i] = src[i];
}

__global__ void spin_kernel(std::uint64_t ns) {
    std::uint64_t start = 0, now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

}  // namespace

void fill_random_device(std::uint8_t* p, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
    fill(p, n, seed, stream, MakeU8{});
}
void fill_random_device(std::uint16_t* p, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
    fill(p, n, seed, stream, MakeU16{});
}
void fill_random_device(float* p, std::size_t n, std::uint64_t seed, cudaStream_t stream) {
    fill(p, n, seed, stream, MakeF32{});
}

void launch_copy_kernel(const void* src, void* dst, std::size_t bytes, cudaStream_t stream) {
    const int threads = 256;
    copy_kernel<<<full_grid(threads), threads, 0, stream>>>(static_cast<const uint4*>(src),
                                                            static_cast<uint4*>(dst), bytes / 16);
    UPRES_BENCH_CUDA(cudaGetLastError());
}

void launch_spin(std::uint64_t ns, cudaStream_t stream) {
    spin_kernel<<<1, 1, 0, stream>>>(ns);
    UPRES_BENCH_CUDA(cudaGetLastError());
}

}  // namespace upres::bench
