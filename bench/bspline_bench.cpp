// Cubic B-spline prefilter benchmarks (docs/ops/bspline.md, "Performance"): every CUDA variant,
// exact IIR and FIR15, at 1024^2, 2048^2 and 4096^2 float32, 1 channel; the row/column split of
// the paper's variants (its Table 2); the CPU backend. Bytes: the image read once + written
// once (2 x 4 bytes per pixel), whatever the kernel really moves. Each CUDA benchmark also
// measures, in the same run and on the same buffers, a device-to-device copy of the image
// (cudaMemcpyAsync, read + write once): counter "copy_us" and "x_copy" = prefilter / copy.
#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/image.hpp>

#include "bench_util.hpp"
#include "ops/bspline/bspline_backends.hpp"

namespace ub = upres::bench;

namespace {

#if UPRES_HAVE_CUDA
// Mean time (us) of `reps` event-timed repetitions of enqueue(i).
template <class F>
double event_mean_us(cudaStream_t s, int reps, F&& enqueue) {
    for (int i = 0; i < 3; ++i) enqueue(i);
    cudaEvent_t a, b;
    UPRES_BENCH_CUDA(cudaEventCreate(&a));
    UPRES_BENCH_CUDA(cudaEventCreate(&b));
    double total = 0;
    for (int i = 0; i < reps; ++i) {
        ub::launch_spin(20000, s);
        UPRES_BENCH_CUDA(cudaEventRecord(a, s));
        enqueue(i);
        UPRES_BENCH_CUDA(cudaEventRecord(b, s));
        UPRES_BENCH_CUDA(cudaEventSynchronize(b));
        float ms = 0;
        UPRES_BENCH_CUDA(cudaEventElapsedTime(&ms, a, b));
        total += ms * 1e3;
    }
    UPRES_BENCH_CUDA(cudaEventDestroy(a));
    UPRES_BENCH_CUDA(cudaEventDestroy(b));
    return total / reps;
}
#endif

// Args: n (image n x n), fir length (0 = exact IIR), variant (PrefilterVariant as int), pass
// (-1 both, 0 rows only, 1 columns only); Bspline_Tuned_Cuda: n, fir, variant, kernel
// (cuda::FusedKernel as int: 0 auto, 1 tile, 2 stream, 3 fir-rec, 4 box; see
// bspline_prefilter_forced), seg (rows per warp segment of the streaming kernel, 0 automatic).
void prefilter_cuda(benchmark::State& state, [[maybe_unused]] bool tuned) {
    if (!ub::require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const int n = static_cast<int>(state.range(0));
    upres::PrefilterOptions o;
    o.fir_length = static_cast<int>(state.range(1));
    o.variant = static_cast<upres::PrefilterVariant>(state.range(2));
    const int pass = tuned ? -1 : static_cast<int>(state.range(3));
    const auto kernel = static_cast<upres::cuda::FusedKernel>(tuned ? state.range(3) : 0);
    const int seg = tuned ? static_cast<int>(state.range(4)) : 0;
    const std::size_t count = std::size_t(n) * n;
    const std::size_t set_bytes = 2 * count * sizeof(float);
    const int sets = ub::rotation_count(set_bytes, ub::device_l2_bytes(), 8);
    ub::Stream stream;
    std::vector<upres::Image<float>> in, out;
    for (int s = 0; s < sets; ++s) {
        in.emplace_back(n, n, 1, upres::Location::Device);
        out.emplace_back(n, n, 1, upres::Location::Device);
        ub::fill_random_device(in.back().data(), count, 10 + s, stream);
        ub::fill_random_device(out.back().data(), count, 20 + s, stream);
    }
    const auto run = [&](std::int64_t i) {
        const auto k = static_cast<std::size_t>(i % sets);
        auto src = upres::span_of(std::as_const(in[k]).view());
        auto dst = upres::span_of(out[k].view());
        if (tuned)
            upres::cuda::bspline_prefilter_forced(src, dst, o, kernel, seg, stream.get());
        else if (pass < 0)
            upres::cuda::bspline_prefilter(src, dst, o, stream.get());
        else
            upres::cuda::bspline_prefilter_pass(src, dst, o, pass, stream.get());
    };
    const auto copy_op = [&](std::int64_t i) {
        const auto k = static_cast<std::size_t>(i % sets);
        UPRES_BENCH_CUDA(cudaMemcpyAsync(out[k].data(), in[k].data(), count * sizeof(float),
                                         cudaMemcpyDeviceToDevice, stream));
    };
    const auto copy_kernel_op = [&](std::int64_t i) {
        const auto k = static_cast<std::size_t>(i % sets);
        ub::launch_copy_kernel(in[k].data(), out[k].data(), count * sizeof(float), stream);
    };
    // The floor: the faster of cudaMemcpyAsync and the bench copy kernel on the same buffers.
    ub::time_device(state, stream, run);  // skips a case the forced kernel cannot run
    if (state.error_occurred()) return;
    const double copy_us =
        std::min(event_mean_us(stream, 20, copy_op), event_mean_us(stream, 20, copy_kernel_op));
    const double op_us = event_mean_us(stream, 20, run);
    ub::set_rates(state, double(count), double(set_bytes));
    state.counters["copy_us"] = copy_us;
    state.counters["op_us"] = op_us;
    state.counters["x_copy"] = op_us / copy_us;
    state.counters["sets"] = sets;
#endif
}
void Bspline_Prefilter_Cuda(benchmark::State& state) { prefilter_cuda(state, false); }
void Bspline_Tuned_Cuda(benchmark::State& state) { prefilter_cuda(state, true); }

void cuda_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"n", "fir", "variant", "pass"});
    using V = upres::PrefilterVariant;
    for (int n : {1024, 2048, 4096}) {
        for (V v : {V::Recursive, V::IirFused}) b->Args({n, 0, int(v), -1});
        for (V v : {V::FirShared, V::FirFused}) b->Args({n, 15, int(v), -1});
        b->Args({n, 7, int(V::FirFused), -1});
        b->Args({n, 31, int(V::FirFused), -1});
    }
    // row / column split of the paper's variants (Table 2), 2048^2
    for (int pass : {0, 1}) {
        b->Args({2048, 0, int(V::Recursive), pass});
        b->Args({2048, 15, int(V::FirShared), pass});
    }
}
BENCHMARK(Bspline_Prefilter_Cuda)->Apply(cuda_args)->UseManualTime();

// The fused variants' kernels and segment lengths (docs/ops/bspline.md, section 5).
void tuned_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"n", "fir", "variant", "kernel", "seg"});
    using V = upres::PrefilterVariant;
    using K = upres::cuda::FusedKernel;
    const int F = int(V::FirFused), I = int(V::IirFused);
    for (int n : {1024, 2048, 4096}) {
        for (K k : {K::Auto, K::Tile, K::FirRec}) {
            b->Args({n, 15, F, int(k), 0});
            b->Args({n, 0, I, int(k), 0});
        }
        b->Args({n, 0, I, int(K::Box), 0});  // the default for the exact filter, 1 channel
        for (int seg : {16, 32, 64, 128}) {
            if (seg < 128) b->Args({n, 15, F, int(K::Stream), seg});
            b->Args({n, 0, I, int(K::Stream), seg});
        }
    }
}
BENCHMARK(Bspline_Tuned_Cuda)->Apply(tuned_args)->UseManualTime();

// Args: n, fir length (0 = IIR), channels, threads (0 = all).
void Bspline_Prefilter_Cpu(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    upres::PrefilterOptions o;
    o.fir_length = static_cast<int>(state.range(1));
    const int c = static_cast<int>(state.range(2));
    const int threads = ub::host_threads(static_cast<int>(state.range(3)));
    const std::size_t count = std::size_t(n) * n * c;
    upres::Image<float> in(n, n, c), out(n, n, c);
    ub::fill_random(in.data(), count, 1);
    ub::fill_random(out.data(), count, 2);
    for (auto _ : state) {
        upres::cpu::bspline_prefilter(upres::span_of(std::as_const(in).view()),
                                      upres::span_of(out.view()), o, threads);
        benchmark::ClobberMemory();
    }
    ub::set_rates(state, double(n) * n, 2.0 * double(count) * sizeof(float));
}
void cpu_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"n", "fir", "c", "threads"});
    for (int t : {1, omp_get_max_threads()}) {
        for (int fir : {0, 15}) b->Args({2048, fir, 1, t});
        for (int fir : {0, 15}) b->Args({1024, fir, 3, t});
        if (omp_get_max_threads() == 1) break;
    }
}
BENCHMARK(Bspline_Prefilter_Cpu)->Apply(cpu_args)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
