// Helpers shared by every upres benchmark (docs/benchmarks.md has the conventions).
//
// - Counters: set_rates() adds "pixels/s" and "bytes/s" (benchmark::Counter::kIsRate, so they
//   are divided by the benchmark's own time: the CUDA-event time for device benchmarks).
//   Count bytes as the fewest bytes the operation must move through memory: each input read
//   once plus each output written once.
// - Device timing: time_device() runs warm-up iterations, then times each benchmark iteration
//   with CUDA events and reports it through state.SetIterationTime() (register the benchmark
//   with ->UseManualTime()). A short spin kernel queued before the start event keeps the host's
//   launch latency out of the measured interval.
// - Inputs: never zeros. fill_random*() draw fresh non-zero pseudo-random values; when one
//   input/output set fits in the cache (L2 on the device, the last-level cache on the host),
//   rotation_count() says how many sets to allocate and rotate through so that every timed
//   iteration reads from memory, not from the cache.
// - Without CUDA (built without it, or no device), GPU benchmarks call require_cuda(), which
//   marks them with state.SkipWithError("no CUDA device"): visible in the output, never silent.
//
// CUDA headers are included only here in bench/ (never from include/upres).
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#if UPRES_HAVE_CUDA
#include <upres/error.hpp>

#include "bench_cuda.hpp"
#endif

namespace upres::bench {

// ------------------------------------------------------------------ counters
// Per-iteration work: pixels produced and bytes moved (read + written). Adds the rate counters
// "pixels/s" and "bytes/s" plus the per-iteration sizes "pixels" and "bytes" (plain counters,
// for reports). pixels may be 0 for pure memory benchmarks (then no "pixels/s").
void set_rates(benchmark::State& state, double pixels_per_iter, double bytes_per_iter);

// ------------------------------------------------------------------ inputs
// Number of input/output sets to rotate through so that the sets together are at least
// 4 x cache_bytes (1 when one set is already >= 2 x cache_bytes; at most max_sets).
int rotation_count(std::size_t bytes_per_set, std::size_t cache_bytes, int max_sets = 32);
// Cache sizes: L2 of the current CUDA device (0 without one) and the host's last-level cache
// (sysconf, at least 128 MiB: a many-core host caches several L3 slices).
std::size_t device_l2_bytes();
std::size_t host_cache_bytes();

// Host fills with fresh, never-zero pseudo-random values (deterministic per seed, parallel):
// u8 in [1, 255], u16 in [1, 65535], float in [0.05, 1.05).
void fill_random(std::uint8_t* p, std::size_t n, std::uint64_t seed);
void fill_random(std::uint16_t* p, std::size_t n, std::uint64_t seed);
void fill_random(float* p, std::size_t n, std::uint64_t seed);
template <class T>
std::vector<T> random_vector(std::size_t n, std::uint64_t seed) {
    std::vector<T> v(n);
    fill_random(v.data(), n, seed);
    return v;
}

// A smooth displacement field of a few pixels, as PIV and optical-flow warps see: w x h
// interleaved (dx, dy) floats, row stride 2 w. dx = 2.5 sin(2 pi y / 211) + 1.5 cos(2 pi x / 157)
// + 0.3, dy = 2.0 cos(2 pi x / 173) - 1.2 sin(2 pi y / 139) - 0.2 (the same formula as
// tools/peers/peers_warp.py and tools/bench/warp_peers.py, which time the peers on it).
std::vector<float> flow_field(int w, int h);

// The keystone homography of the perspective benchmarks (output -> input, row-major): the
// 30-degree rotation about the centre of an n x n image, with w' = 1 + 3e-5 (x - c) - 2e-5 (y - c)
// (c = (n - 1) / 2; the scale varies by about +-5% across a 2048^2 image). The same formula as
// tools/peers/peers_warp.py's keystone(), which the peers use.
void keystone(int n, double h[9]);

// True when a CUDA device can run the benchmark; otherwise marks it skipped with
// state.SkipWithError("no CUDA device") and returns false (return before the timing loop).
bool require_cuda(benchmark::State& state);

// Number of threads used when a host benchmark's thread argument is 0 (OpenMP's maximum).
int host_threads(int requested);

#if UPRES_HAVE_CUDA
// RAII device / pinned-host buffers and a stream.
class DeviceBuffer {
  public:
    DeviceBuffer() = default;
    explicit DeviceBuffer(std::size_t bytes);
    DeviceBuffer(DeviceBuffer&& o) noexcept;
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    ~DeviceBuffer();
    void* get() const noexcept { return p_; }
    template <class T>
    T* as() const noexcept {
        return static_cast<T*>(p_);
    }
    std::size_t bytes() const noexcept { return bytes_; }

  private:
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
};

class PinnedBuffer {
  public:
    explicit PinnedBuffer(std::size_t bytes);
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;
    ~PinnedBuffer();
    void* get() const noexcept { return p_; }
    std::size_t bytes() const noexcept { return bytes_; }

  private:
    void* p_ = nullptr;
    std::size_t bytes_ = 0;
};

class Stream {
  public:
    Stream();
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    ~Stream();
    cudaStream_t get() const noexcept { return s_; }
    operator cudaStream_t() const noexcept { return s_; }  // NOLINT(google-explicit-constructor)

  private:
    cudaStream_t s_ = nullptr;
};

// Times device work. enqueue(i) queues the work of iteration i (i = 0, 1, 2, ...; use
// i % sets to rotate inputs) on `stream`; it must not synchronize. warmup iterations run
// first, untimed. Then each benchmark iteration is timed with events and reported with
// state.SetIterationTime (register with ->UseManualTime()). An upres::Error from the warm-up
// (a forced kernel that cannot run the case, a size the device cannot hold) skips the benchmark
// with its message: nothing else is measured in its place.
template <class F>
void time_device(benchmark::State& state, cudaStream_t stream, F&& enqueue, int warmup = 3) {
    std::int64_t i = 0;
    try {
        for (; i < std::max(warmup, 1); ++i) enqueue(i);
    } catch (const Error& e) {
        UPRES_BENCH_CUDA(cudaStreamSynchronize(stream));
        state.SkipWithError(e.what());
        return;
    }
    UPRES_BENCH_CUDA(cudaStreamSynchronize(stream));
    cudaEvent_t start = nullptr, stop = nullptr;
    UPRES_BENCH_CUDA(cudaEventCreate(&start));
    UPRES_BENCH_CUDA(cudaEventCreate(&stop));
    for (auto _ : state) {
        launch_spin(20000, stream);  // 20 us: the GPU is busy while the host queues the work
        UPRES_BENCH_CUDA(cudaEventRecord(start, stream));
        enqueue(i++);
        UPRES_BENCH_CUDA(cudaEventRecord(stop, stream));
        UPRES_BENCH_CUDA(cudaEventSynchronize(stop));
        float ms = 0.0f;
        UPRES_BENCH_CUDA(cudaEventElapsedTime(&ms, start, stop));
        state.SetIterationTime(static_cast<double>(ms) * 1e-3);
    }
    UPRES_BENCH_CUDA(cudaGetLastError());
    UPRES_BENCH_CUDA(cudaEventDestroy(start));
    UPRES_BENCH_CUDA(cudaEventDestroy(stop));
}

// Median time of f() in microseconds, each run alone after a 20 us spin (the host queues f while
// the GPU is busy, so launch latency stays outside the interval).
template <class F>
double median_event_us(cudaStream_t st, F&& f, int reps = 31) {
    cudaEvent_t a = nullptr, b = nullptr;
    UPRES_BENCH_CUDA(cudaEventCreate(&a));
    UPRES_BENCH_CUDA(cudaEventCreate(&b));
    f();  // warm-up
    std::vector<float> t;
    for (int r = 0; r < reps; ++r) {
        launch_spin(20000, st);
        UPRES_BENCH_CUDA(cudaEventRecord(a, st));
        f();
        UPRES_BENCH_CUDA(cudaEventRecord(b, st));
        UPRES_BENCH_CUDA(cudaEventSynchronize(b));
        float ms = 0;
        UPRES_BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    UPRES_BENCH_CUDA(cudaEventDestroy(a));
    UPRES_BENCH_CUDA(cudaEventDestroy(b));
    std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
    return 1e3 * t[static_cast<std::size_t>(reps / 2)];
}
#endif

}  // namespace upres::bench
