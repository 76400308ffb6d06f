// The memory floor: how fast memory can be moved at all, on the device and on the host, and the
// first operation measured against it (upres::convert u8 -> f32).
//
// Floor_* benchmarks are the floors tools/bench_report.py compares every other benchmark to
// (device benchmarks, names containing "Cuda", to the best Floor_Cuda* bytes/s; host ones to
// the best Floor_Host* bytes/s). Bytes count what must move through memory: a copy of N bytes
// reads N and writes N, so 2N. Host <-> device transfers count the N bytes crossing the bus.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include <upres/context.hpp>
#include <upres/image.hpp>

#include "bench_util.hpp"

namespace ub = upres::bench;

namespace {

constexpr std::size_t kMiB = std::size_t{1} << 20;

// ------------------------------------------------------------------ device floor
void Floor_CudaMemcpyD2D(benchmark::State& state) {
    if (!ub::require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const std::size_t bytes = static_cast<std::size_t>(state.range(0)) * kMiB;
    ub::Stream stream;
    ub::DeviceBuffer src(bytes), dst(bytes);
    ub::fill_random_device(src.as<std::uint8_t>(), bytes, 1, stream);
    ub::fill_random_device(dst.as<std::uint8_t>(), bytes, 2, stream);
    ub::time_device(state, stream, [&](std::int64_t) {
        UPRES_BENCH_CUDA(
            cudaMemcpyAsync(dst.get(), src.get(), bytes, cudaMemcpyDeviceToDevice, stream));
    });
    ub::set_rates(state, 0, 2.0 * static_cast<double>(bytes));
#endif
}
BENCHMARK(Floor_CudaMemcpyD2D)->ArgName("MiB")->Arg(1024)->UseManualTime();

void Floor_CudaCopyKernel(benchmark::State& state) {
    if (!ub::require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const std::size_t bytes = static_cast<std::size_t>(state.range(0)) * kMiB;
    ub::Stream stream;
    ub::DeviceBuffer src(bytes), dst(bytes);
    ub::fill_random_device(src.as<std::uint8_t>(), bytes, 3, stream);
    ub::fill_random_device(dst.as<std::uint8_t>(), bytes, 4, stream);
    ub::time_device(state, stream, [&](std::int64_t) {
        ub::launch_copy_kernel(src.get(), dst.get(), bytes, stream);
    });
    ub::set_rates(state, 0, 2.0 * static_cast<double>(bytes));
#endif
}
BENCHMARK(Floor_CudaCopyKernel)->ArgName("MiB")->Arg(1024)->UseManualTime();

// ------------------------------------------------------------------ host floor
void Floor_HostMemcpy(benchmark::State& state) {
    const std::size_t bytes = static_cast<std::size_t>(state.range(0)) * kMiB;
    const int threads = ub::host_threads(static_cast<int>(state.range(1)));
    std::vector<std::uint8_t> src(bytes), dst(bytes);
    ub::fill_random(src.data(), bytes, 5);  // parallel first touch, never zero
    ub::fill_random(dst.data(), bytes, 6);
    const std::size_t chunk = (bytes + static_cast<std::size_t>(threads) - 1) / threads;
    for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static)
        for (int t = 0; t < threads; ++t) {
            const std::size_t begin = std::min(bytes, static_cast<std::size_t>(t) * chunk);
            const std::size_t end = std::min(bytes, begin + chunk);
            std::memcpy(dst.data() + begin, src.data() + begin, end - begin);
        }
        benchmark::ClobberMemory();
    }
    ub::set_rates(state, 0, 2.0 * static_cast<double>(bytes));
}
void host_floor_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"MiB", "threads"});
    b->Args({256, 1});
    if (omp_get_max_threads() > 1) b->Args({256, omp_get_max_threads()});
}
BENCHMARK(Floor_HostMemcpy)->Apply(host_floor_args)->UseRealTime();

// ------------------------------------------------------------------ host <-> device (pinned)
#if UPRES_HAVE_CUDA
void transfer(benchmark::State& state, cudaMemcpyKind kind) {
    const std::size_t bytes = static_cast<std::size_t>(state.range(0)) * kMiB;
    ub::Stream stream;
    ub::PinnedBuffer host(bytes);
    ub::DeviceBuffer dev(bytes);
    ub::fill_random(static_cast<std::uint8_t*>(host.get()), bytes, 7);
    ub::fill_random_device(dev.as<std::uint8_t>(), bytes, 8, stream);
    void* dst = kind == cudaMemcpyHostToDevice ? dev.get() : host.get();
    const void* src = kind == cudaMemcpyHostToDevice ? host.get() : dev.get();
    ub::time_device(state, stream, [&](std::int64_t) {
        UPRES_BENCH_CUDA(cudaMemcpyAsync(dst, src, bytes, kind, stream));
    });
    ub::set_rates(state, 0, static_cast<double>(bytes));
}
#endif
void CudaMemcpyH2DPinned(benchmark::State& state) {
    if (!ub::require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    transfer(state, cudaMemcpyHostToDevice);
#endif
}
void CudaMemcpyD2HPinned(benchmark::State& state) {
    if (!ub::require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    transfer(state, cudaMemcpyDeviceToHost);
#endif
}
BENCHMARK(CudaMemcpyH2DPinned)->ArgName("MiB")->Arg(256)->UseManualTime();
BENCHMARK(CudaMemcpyD2HPinned)->ArgName("MiB")->Arg(256)->UseManualTime();

// ------------------------------------------------------------------ upres::convert u8 -> f32
// pixels/s counts image pixels (all channels together); bytes: 1 byte read + 4 written per
// channel value.
void Convert_U8F32_Cuda(benchmark::State& state) {
    if (!ub::require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const int w = static_cast<int>(state.range(0)), h = static_cast<int>(state.range(1));
    const int c = static_cast<int>(state.range(2));
    const std::size_t n = static_cast<std::size_t>(w) * h * c;
    const std::size_t set_bytes = n * (sizeof(std::uint8_t) + sizeof(float));
    const int sets = ub::rotation_count(set_bytes, ub::device_l2_bytes());
    ub::Stream stream;
    std::vector<upres::Image<std::uint8_t>> in;
    std::vector<upres::Image<float>> out;
    for (int s = 0; s < sets; ++s) {
        in.emplace_back(w, h, c, upres::Location::Device);
        out.emplace_back(w, h, c, upres::Location::Device);
        ub::fill_random_device(in.back().data(), n, 100 + s, stream);
        ub::fill_random_device(out.back().data(), n, 200 + s, stream);
    }
    ub::time_device(state, stream, [&](std::int64_t i) {
        const auto k = static_cast<std::size_t>(i % sets);
        upres::convert(std::as_const(in[k]).view(), out[k].view(), true, stream.get());
    });
    ub::set_rates(state, static_cast<double>(w) * h, static_cast<double>(set_bytes));
    state.counters["sets"] = sets;
#endif
}
BENCHMARK(Convert_U8F32_Cuda)
    ->ArgNames({"w", "h", "c"})
    ->Args({2048, 2048, 1})
    ->Args({3840, 2160, 3})
    ->UseManualTime();

void Convert_U8F32_Cpu(benchmark::State& state) {
    const int w = static_cast<int>(state.range(0)), h = static_cast<int>(state.range(1));
    const int c = static_cast<int>(state.range(2));
    const int threads = ub::host_threads(static_cast<int>(state.range(3)));
    const std::size_t n = static_cast<std::size_t>(w) * h * c;
    const std::size_t set_bytes = n * (sizeof(std::uint8_t) + sizeof(float));
    const int sets = ub::rotation_count(set_bytes, ub::host_cache_bytes());
    std::vector<upres::Image<std::uint8_t>> in;
    std::vector<upres::Image<float>> out;
    for (int s = 0; s < sets; ++s) {
        in.emplace_back(w, h, c);
        out.emplace_back(w, h, c);
        ub::fill_random(in.back().data(), n, 300 + s);
        ub::fill_random(out.back().data(), n, 400 + s);
    }
    std::int64_t i = 0;
    for (auto _ : state) {
        const auto k = static_cast<std::size_t>(i++ % sets);
        upres::convert(std::as_const(in[k]).view(), out[k].view(), true, nullptr, threads);
        benchmark::ClobberMemory();
    }
    ub::set_rates(state, static_cast<double>(w) * h, static_cast<double>(set_bytes));
    state.counters["sets"] = sets;
}
void cpu_convert_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"w", "h", "c", "threads"});
    for (int t : {1, omp_get_max_threads()}) {
        b->Args({2048, 2048, 1, t});
        b->Args({3840, 2160, 3, t});
        if (omp_get_max_threads() == 1) break;
    }
}
BENCHMARK(Convert_U8F32_Cpu)->Apply(cpu_convert_args)->UseRealTime();

}  // namespace
