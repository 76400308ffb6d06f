// Benchmarks of SEABI x2 (docs/ops/seabi.md, Speed): 1920 x 1080 u8 luma -> 3840 x 2160.
//
//   Cuda_Seabi/<method>_kernels   all kernels (TV, threshold, construction, error, refinement),
//                                 workspace allocated once, transfers excluded (as the paper);
//   Cuda_Seabi/silseabi_pinned    the same plus H2D from and D2H to pinned host memory;
//   Cuda_Tap/<4|6>                the integer baselines;
//   Cuda_SeabiCopyFloor           device-to-device copy bandwidth of this process; "floor_frac"
//                                 of the other benchmarks = their bytes/s over it, and
//                                 "floor_ms" the time the minimal traffic (LR read once + HR
//                                 written once) would take at that bandwidth;
//   Cpu_Seabi/<method>/<threads>  CPU stripes backend (0 threads = all cores), Cpu_Tap/4.
// Peers measured in the same run: tools/peers/seabi_peers.py (PyTorch bicubic x2 on the GPU,
// OpenCV resize INTER_CUBIC on the CPU).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include <upres/seabi.hpp>

#include "bench_util.hpp"

#if UPRES_HAVE_CUDA
#include "ops/seabi/seabi_backends.hpp"
#include "ops/seabi/seabi_cuda.hpp"
#endif

namespace upres::bench {
namespace {

constexpr int kW = 1920, kH = 1080;
constexpr double kBytes = 5.0 * kW * kH;  // LR read once + HR (4x) written once
constexpr double kOutPixels = 4.0 * kW * kH;

void set_fps(benchmark::State& state) {
    state.counters["fps"] = benchmark::Counter(1.0, benchmark::Counter::kIsIterationInvariantRate);
}

#if UPRES_HAVE_CUDA
double copy_floor_bytes_per_s() {
    static double bw = [] {
        Stream st;
        const std::size_t bytes = std::size_t{256} << 20;
        DeviceBuffer a(bytes), b(bytes);
        fill_random_device(a.as<std::uint8_t>(), bytes, 5, st);
        cudaEvent_t e0, e1;
        UPRES_BENCH_CUDA(cudaEventCreate(&e0));
        UPRES_BENCH_CUDA(cudaEventCreate(&e1));
        std::vector<float> t;
        for (int i = 0; i < 12; ++i) {
            UPRES_BENCH_CUDA(cudaEventRecord(e0, st));
            UPRES_BENCH_CUDA(
                cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, st));
            UPRES_BENCH_CUDA(cudaEventRecord(e1, st));
            UPRES_BENCH_CUDA(cudaEventSynchronize(e1));
            float ms = 0;
            UPRES_BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
            if (i >= 2) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        UPRES_BENCH_CUDA(cudaEventDestroy(e0));
        UPRES_BENCH_CUDA(cudaEventDestroy(e1));
        return 2.0 * static_cast<double>(bytes) / (t[t.size() / 2] * 1e-3);
    }();
    return bw;
}

void add_floor(benchmark::State& state) {
    const double bw = copy_floor_bytes_per_s();
    state.counters["floor_frac"] =
        benchmark::Counter(kBytes / bw, benchmark::Counter::kIsIterationInvariantRate);
    state.counters["floor_ms"] = kBytes / bw * 1e3;
}

void Cuda_SeabiCopyFloor(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const double bw = copy_floor_bytes_per_s();
    for (auto _ : state) state.SetIterationTime(1.0);
    state.counters["copy_GBps"] = bw * 1e-9;
    state.counters["floor_ms_1080p_x2"] = kBytes / bw * 1e3;
}
BENCHMARK(Cuda_SeabiCopyFloor)->UseManualTime()->Iterations(1);

struct Set {
    DeviceBuffer in, out, ws;
};

// method: 0 lseai, 1 silseabi, 2 lseabi (4 iterations, max_error 0); pinned: with transfers;
// cosited: the paper's lattice (otherwise the default, centre-aligned).
void Cuda_Seabi(benchmark::State& state, int method, bool pinned, bool cosited) {
    if (!require_cuda(state)) return;
    const SeabiMethod m = method == 0   ? SeabiMethod::LSeai
                          : method == 1 ? SeabiMethod::SilSeabi
                                        : SeabiMethod::LSeabi;
    SeabiOptions o;
    o.method = m;
    o.max_iterations = 4;
    o.max_error = 0.0;
    o.lattice = cosited ? Lattice::CoSited : Lattice::Centered;
    const std::size_t in_b = std::size_t{kW} * kH, out_b = 4 * in_b;
    const std::size_t ws_b = seabi::cuda_workspace_bytes(kW, kH, m);
    const int sets = rotation_count(in_b + out_b + ws_b, device_l2_bytes(), 8);
    Stream st;
    std::vector<Set> s(sets);
    for (int i = 0; i < sets; ++i) {
        s[i].in = DeviceBuffer(in_b);
        s[i].out = DeviceBuffer(out_b);
        s[i].ws = DeviceBuffer(ws_b);
        fill_random_device(s[i].in.as<std::uint8_t>(), in_b, 100 + i, st);
    }
    PinnedBuffer hin(in_b), hout(out_b);
    fill_random(static_cast<std::uint8_t*>(hin.get()), in_b, 7);
    time_device(state, st, [&](std::int64_t it) {
        Set& x = s[it % sets];
        if (pinned)
            UPRES_BENCH_CUDA(
                cudaMemcpyAsync(x.in.get(), hin.get(), in_b, cudaMemcpyHostToDevice, st));
        Span2D<const std::uint8_t> in{x.in.as<const std::uint8_t>(), kW, kH, 1, kW};
        Span2D<std::uint8_t> out{x.out.as<std::uint8_t>(), 2 * kW, 2 * kH, 1, 2 * kW};
        seabi::run_cuda_ws(in, out, o, x.ws.get(), false, st.get());
        if (pinned)
            UPRES_BENCH_CUDA(
                cudaMemcpyAsync(hout.get(), x.out.get(), out_b, cudaMemcpyDeviceToHost, st));
    });
    set_rates(state, kOutPixels, kBytes);
    set_fps(state);
    add_floor(state);
    state.counters["sets"] = sets;
}
BENCHMARK_CAPTURE(Cuda_Seabi, lseai_kernels, 0, false, false)->UseManualTime()->MinTime(0.3);
BENCHMARK_CAPTURE(Cuda_Seabi, silseabi_kernels, 1, false, false)->UseManualTime()->MinTime(0.3);
BENCHMARK_CAPTURE(Cuda_Seabi, lseabi4_kernels, 2, false, false)->UseManualTime()->MinTime(0.3);
BENCHMARK_CAPTURE(Cuda_Seabi, silseabi_pinned, 1, true, false)->UseManualTime()->MinTime(0.3);
BENCHMARK_CAPTURE(Cuda_Seabi, lseai_cosited_kernels, 0, false, true)->UseManualTime()->MinTime(0.3);
BENCHMARK_CAPTURE(Cuda_Seabi, silseabi_cosited_kernels, 1, false, true)
    ->UseManualTime()
    ->MinTime(0.3);

void Cuda_Tap(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const TapFilter f = state.range(0) == 4 ? TapFilter::Tap4 : TapFilter::Tap6;
    const std::size_t in_b = std::size_t{kW} * kH, out_b = 4 * in_b;
    const int sets = rotation_count(in_b + out_b, device_l2_bytes(), 8);
    Stream st;
    std::vector<Set> s(sets);
    for (int i = 0; i < sets; ++i) {
        s[i].in = DeviceBuffer(in_b);
        s[i].out = DeviceBuffer(out_b);
        fill_random_device(s[i].in.as<std::uint8_t>(), in_b, 200 + i, st);
    }
    time_device(state, st, [&](std::int64_t it) {
        Set& x = s[it % sets];
        cuda::tap_upscale2({x.in.as<const std::uint8_t>(), kW, kH, 1, kW},
                           {x.out.as<std::uint8_t>(), 2 * kW, 2 * kH, 1, 2 * kW}, f, true,
                           st.get());
    });
    set_rates(state, kOutPixels, kBytes);
    set_fps(state);
    add_floor(state);
}
BENCHMARK(Cuda_Tap)->Arg(4)->Arg(6)->UseManualTime()->MinTime(0.3);
#endif

void Cpu_Seabi(benchmark::State& state) {
    const int method = static_cast<int>(state.range(0));
    const int threads = static_cast<int>(state.range(1));
    Image<std::uint8_t> in(kW, kH, 1), out(2 * kW, 2 * kH, 1);
    fill_random(in.data(), std::size_t{kW} * kH, 11);
    SeabiOptions o;
    o.method = method == 0 ? SeabiMethod::LSeai : SeabiMethod::SilSeabi;
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = threads;
    for (auto _ : state) {
        seabi_upscale2(in.view(), out.view(), o, ctx);
        benchmark::DoNotOptimize(out.data());
    }
    set_rates(state, kOutPixels, kBytes);
    set_fps(state);
    state.counters["threads"] = host_threads(threads);
}
BENCHMARK(Cpu_Seabi)
    ->ArgsProduct({{0, 1}, {0, 1}})
    ->ArgNames({"method", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

// The streaming engine (SeabiStream, exact threshold) on the same frame: pushes of 64 rows, the
// sink copies each output row into a whole image (as a file writer would write it). Against
// Cpu_Seabi/method:1: the cost of streaming (stripe halos recomputed, the window's copies).
void Cpu_SeabiStream(benchmark::State& state) {
    const int stripe_rows = static_cast<int>(state.range(0));
    const int threads = static_cast<int>(state.range(1));
    Image<std::uint8_t> in(kW, kH, 1), out(2 * kW, 2 * kH, 1);
    fill_random(in.data(), std::size_t{kW} * kH, 11);
    SeabiTotalVariation tv(kW, kH);
    tv.push(in.view());
    SeabiStreamOptions o;
    o.stripe_rows = stripe_rows;
    o.total_variation = tv.value();
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = threads;
    for (auto _ : state) {
        SeabiStream s(
            kW, kH, o,
            [&](ImageView<const std::uint8_t> rows, int first) {
                for (int y = 0; y < rows.height(); ++y)
                    std::memcpy(out.view().row(first + y), rows.row(y), 2 * kW);
            },
            ctx);
        for (int y = 0; y < kH; y += 64)
            s.push(ImageView<const std::uint8_t>(in.view().sub(0, y, kW, std::min(64, kH - y))));
        benchmark::DoNotOptimize(out.data());
    }
    set_rates(state, kOutPixels, kBytes);
    set_fps(state);
    state.counters["threads"] = host_threads(threads);
}
BENCHMARK(Cpu_SeabiStream)
    ->ArgsProduct({{16, 64}, {0, 1}})
    ->ArgNames({"stripe_rows", "threads"})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->MinTime(1.0);

void Cpu_Tap(benchmark::State& state) {
    Image<std::uint8_t> in(kW, kH, 1), out(2 * kW, 2 * kH, 1);
    fill_random(in.data(), std::size_t{kW} * kH, 12);
    Context ctx;
    ctx.backend = Backend::Cpu;
    for (auto _ : state) {
        tap_upscale2(in.view(), out.view(), state.range(0) == 4 ? TapFilter::Tap4 : TapFilter::Tap6,
                     Lattice::Centered, ctx);
        benchmark::DoNotOptimize(out.data());
    }
    set_rates(state, kOutPixels, kBytes);
    set_fps(state);
}
BENCHMARK(Cpu_Tap)->Arg(4)->Arg(6)->Unit(benchmark::kMillisecond)->UseRealTime()->MinTime(1.0);

}  // namespace
}  // namespace upres::bench
