// Helpers shared by every upres benchmark (see bench_util.hpp).
#include "bench_util.hpp"

#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <upres/context.hpp>

namespace upres::bench {

void set_rates(benchmark::State& state, double pixels_per_iter, double bytes_per_iter) {
    const double iters = static_cast<double>(state.iterations());
    if (pixels_per_iter > 0) {
        state.counters["pixels/s"] =
            benchmark::Counter(pixels_per_iter * iters, benchmark::Counter::kIsRate);
        state.counters["pixels"] = benchmark::Counter(pixels_per_iter);
    }
    state.counters["bytes/s"] = benchmark::Counter(
        bytes_per_iter * iters, benchmark::Counter::kIsRate, benchmark::Counter::OneK::kIs1000);
    state.counters["bytes"] = benchmark::Counter(bytes_per_iter);
}

int rotation_count(std::size_t bytes_per_set, std::size_t cache_bytes, int max_sets) {
    if (bytes_per_set == 0 || cache_bytes == 0) return 1;
    if (bytes_per_set >= 2 * cache_bytes) return 1;
    const std::size_t want = (4 * cache_bytes + bytes_per_set - 1) / bytes_per_set;
    return static_cast<int>(std::clamp<std::size_t>(want, 1, static_cast<std::size_t>(max_sets)));
}

std::size_t host_cache_bytes() {
    // sysconf reports one L3 slice (one CCD / socket) or nothing, while a many-core server's
    // threads together cache several of them: assume at least 128 MiB.
    long l3 = -1;
#ifdef _SC_LEVEL3_CACHE_SIZE
    l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    const std::size_t floor = std::size_t{128} << 20;
    return l3 > 0 ? std::max(static_cast<std::size_t>(l3), floor) : floor;
}

namespace {
// splitmix64: a fast, well-mixed hash of (seed, index).
inline std::uint64_t mix(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}
template <class T, class Make>
void fill_host(T* p, std::size_t n, std::uint64_t seed, Make make) {
    const std::uint64_t s = mix(seed);
    const auto count = static_cast<std::int64_t>(n);
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < count; ++i) p[i] = make(mix(s ^ static_cast<std::uint64_t>(i)));
}
}  // namespace

void fill_random(std::uint8_t* p, std::size_t n, std::uint64_t seed) {
    fill_host(p, n, seed, [](std::uint64_t r) { return static_cast<std::uint8_t>(1 + r % 255); });
}
void fill_random(std::uint16_t* p, std::size_t n, std::uint64_t seed) {
    fill_host(p, n, seed,
              [](std::uint64_t r) { return static_cast<std::uint16_t>(1 + r % 65535); });
}
void fill_random(float* p, std::size_t n, std::uint64_t seed) {
    fill_host(p, n, seed, [](std::uint64_t r) {
        return 0.05f + static_cast<float>(r >> 40) * (1.0f / 16777216.0f);
    });
}

bool require_cuda(benchmark::State& state) {
#if UPRES_HAVE_CUDA
    if (upres::cuda_available()) return true;
#endif
    state.SkipWithError("no CUDA device");
    return false;
}

std::vector<float> flow_field(int w, int h) {
    std::vector<float> f(2 * static_cast<std::size_t>(w) * h);
    const double tau = 6.283185307179586;
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float* p = &f[2 * (static_cast<std::size_t>(y) * w + x)];
            p[0] = static_cast<float>(2.5 * std::sin(tau * y / 211) +
                                      1.5 * std::cos(tau * x / 157) + 0.3);
            p[1] = static_cast<float>(2.0 * std::cos(tau * x / 173) -
                                      1.2 * std::sin(tau * y / 139) - 0.2);
        }
    return f;
}

void keystone(int n, double h[9]) {
    const double c = std::cos(6.283185307179586 / 12), s = std::sin(6.283185307179586 / 12);
    const double xc = 0.5 * (n - 1), p = 3e-5, q = -2e-5;
    const double r[9] = {c, -s, xc - c * xc + s * xc, s, c, xc - s * xc - c * xc,
                         p, q,  1.0 - p * xc - q * xc};
    for (int i = 0; i < 9; ++i) h[i] = r[i];
}

int host_threads(int requested) { return requested > 0 ? requested : omp_get_max_threads(); }

#if UPRES_HAVE_CUDA
std::size_t device_l2_bytes() {
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    int l2 = 0;
    if (cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev) != cudaSuccess) return 0;
    return static_cast<std::size_t>(l2);
}

void cuda_check(cudaError_t err, const char* what, const char* file, int line) {
    if (err == cudaSuccess) return;
    std::fprintf(stderr, "upres_bench: CUDA error %s (%s) in %s at %s:%d\n", cudaGetErrorName(err),
                 cudaGetErrorString(err), what, file, line);
    std::fflush(stderr);
    std::abort();
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    UPRES_BENCH_CUDA(cudaMalloc(&p_, bytes));
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
    o.p_ = nullptr;
    o.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(bytes_, o.bytes_);
    return *this;
}
DeviceBuffer::~DeviceBuffer() {
    if (p_) cudaFree(p_);
}

PinnedBuffer::PinnedBuffer(std::size_t bytes) : bytes_(bytes) {
    UPRES_BENCH_CUDA(cudaMallocHost(&p_, bytes));
}
PinnedBuffer::~PinnedBuffer() {
    if (p_) cudaFreeHost(p_);
}

Stream::Stream() { UPRES_BENCH_CUDA(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
Stream::~Stream() {
    if (s_) cudaStreamDestroy(s_);
}
#else
std::size_t device_l2_bytes() { return 0; }
#endif

}  // namespace upres::bench
