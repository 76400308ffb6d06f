// upres::srcnn_forward on the CPU backend: SRCNN 9-1-5 64/32 (8032 multiply-adds per pixel) on a
// 1920x1080 and a 3840x2160 (the 1080p -> 4K case) float Y plane, 1 and 2 threads. The peer of
// the speed claim, PyTorch's F.conv2d with replicate padding on the same cores, has no
// C++ API here: tools/peers/srcnn_cpu_peer.py measures it (run it in the same session) and
// docs/ops/srcnn.md records both. Counters: pixels/s (output pixels), GFLOP/s (2 x
// multiply-adds), bytes/s (the input read once plus the output written once). Time: wall clock;
// the CPU column is the whole process's CPU time (all threads).
#include <cstdint>
#include <random>

#include <upres/srcnn.hpp>

#include "bench_util.hpp"

namespace ub = upres::bench;
using namespace upres;

namespace {

// Random 9-1-5 64/32 weights of trained-SRCNN scale (the time does not depend on the values).
SrcnnModel random_915() {
    SrcnnModel m;
    m.scale = 2;
    m.description = "benchmark: random weights";
    std::mt19937 rng(5);
    const int k[3] = {9, 1, 5}, in[3] = {1, 64, 32}, out[3] = {64, 32, 1};
    for (int l = 0; l < 3; ++l) {
        SrcnnLayer& L = m.layers[static_cast<std::size_t>(l)];
        L.kernel = k[l];
        L.in_channels = in[l];
        L.out_channels = out[l];
        std::normal_distribution<float> d(0.0f, l == 0 ? 0.05f : 0.02f);
        L.weights.resize(static_cast<std::size_t>(out[l] * in[l] * k[l] * k[l]));
        for (float& w : L.weights) w = d(rng);
        L.bias.assign(static_cast<std::size_t>(out[l]), 0.01f);
    }
    return m;
}

// args: width, height, threads (0: all).
void SrcnnCpu(benchmark::State& state) {
    const int w = static_cast<int>(state.range(0)), h = static_cast<int>(state.range(1));
    const int threads = ub::host_threads(static_cast<int>(state.range(2)));
    const SrcnnModel model = random_915();
    Image<float> in(w, h, 1), out(w, h, 1);
    ub::fill_random(in.data(), static_cast<std::size_t>(w) * h, 1);
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = threads;
    for (auto _ : state) {
        srcnn_forward(in.view(), out.view(), model, {}, ctx);
        benchmark::ClobberMemory();
    }
    const double pixels = double(w) * h;
    ub::set_rates(state, pixels, 8.0 * pixels);
    state.counters["GFLOP/s"] = benchmark::Counter(
        2.0 * double(model.macs_per_pixel()) * pixels * double(state.iterations()) * 1e-9,
        benchmark::Counter::kIsRate);
    state.counters["threads"] = threads;
}
BENCHMARK(SrcnnCpu)
    ->ArgNames({"w", "h", "threads"})
    ->Args({1920, 1080, 1})
    ->Args({1920, 1080, 2})
    ->Args({3840, 2160, 1})
    ->Args({3840, 2160, 2})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
