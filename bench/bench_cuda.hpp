// CUDA helpers of the benchmarks that nvcc also compiles (bench_kernels.cu): error check,
// random device fills, the trivial copy kernel and the spin kernel. No Google Benchmark here.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace upres::bench {

// Aborts the benchmark binary with a message naming the call when a CUDA call fails (a failing
// CUDA call in a benchmark is a bug, not a result).
void cuda_check(cudaError_t err, const char* what, const char* file, int line);
#define UPRES_BENCH_CUDA(expr) ::upres::bench::cuda_check((expr), #expr, __FILE__, __LINE__)

// Device fills with fresh, never-zero pseudo-random values (same ranges as the host fills),
// queued on `stream`.
void fill_random_device(std::uint8_t* p, std::size_t n, std::uint64_t seed, cudaStream_t stream);
void fill_random_device(std::uint16_t* p, std::size_t n, std::uint64_t seed, cudaStream_t stream);
void fill_random_device(float* p, std::size_t n, std::uint64_t seed, cudaStream_t stream);

// Kernels of bench/bench_kernels.cu.
// Trivial read+write kernel: dst[i] = src[i], 16-byte accesses (bytes must be a multiple of 16
// and both pointers 16-byte aligned), grid-stride loop over a full-device grid.
void launch_copy_kernel(const void* src, void* dst, std::size_t bytes, cudaStream_t stream);
// Spins one thread for about `ns` nanoseconds (keeps the launch latency of the next work out
// of event-timed intervals).
void launch_spin(std::uint64_t ns, cudaStream_t stream);

}  // namespace upres::bench
