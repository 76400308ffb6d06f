// Benchmark of the fused tensor-core SRCNN kernel (src/ops/srcnn/srcnn_fused_cuda.cu,
// docs/ops/srcnn.md "Fused tensor-core network").
//
//   Cuda_SrcnnFused/<precision>/<width>/<height>  one plane, SRCNN 9-1-5 64/32 (random weights
//   scaled like trained ones), input in [0.05, 1.05). Counters: "TFLOPS" = 2 * 8032 * pixels /
//   time (the network's useful multiply-adds, not the padded work the kernel does), pixels/s,
//   bytes/s (input read once + output written once).
// Precisions: 0 fp32 (3xTF32), 1 tf32, 2 fp16, 3 bf16.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include <upres/srcnn.hpp>

#include "bench_util.hpp"

#if UPRES_HAVE_CUDA
#include "ops/srcnn/srcnn_backends.hpp"
#endif

namespace upres::bench {
namespace {

#if UPRES_HAVE_CUDA
SrcnnModel bench_model() {
    std::mt19937 rng(42);
    SrcnnModel m;
    m.scale = 3;
    const int outs[3] = {64, 32, 1}, ins[3] = {1, 64, 32}, ks[3] = {9, 1, 5};
    const float sd[3] = {0.05f, 0.1f, 0.1f};
    for (int l = 0; l < 3; ++l) {
        SrcnnLayer& L = m.layers[l];
        L.out_channels = outs[l], L.in_channels = ins[l], L.kernel = ks[l];
        std::normal_distribution<float> wd(0.0f, sd[l]), bd(0.0f, 0.02f);
        L.weights.resize(static_cast<std::size_t>(outs[l]) * ins[l] * ks[l] * ks[l]);
        for (float& v : L.weights) v = wd(rng);
        L.bias.resize(outs[l]);
        for (float& v : L.bias) v = bd(rng);
    }
    return m;
}

void Cuda_SrcnnFused(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const SrcnnPrecision prec[] = {SrcnnPrecision::Fp32, SrcnnPrecision::Tf32, SrcnnPrecision::Fp16,
                                   SrcnnPrecision::Bf16};
    const SrcnnPrecision p = prec[state.range(0)];
    const int w = static_cast<int>(state.range(1)), h = static_cast<int>(state.range(2));
    state.SetLabel(to_string(p));
    const SrcnnModel m = bench_model();
    Stream st;
    srcnn::cuda::FusedWeights* fw = srcnn::cuda::fused_prepare(m, p, st.get());
    const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(w) * h;
    const int sets = rotation_count(2 * bytes, device_l2_bytes(), 8);
    std::vector<DeviceBuffer> in, out;
    for (int i = 0; i < sets; ++i) {
        in.emplace_back(bytes);
        out.emplace_back(bytes);
        fill_random_device(in.back().as<float>(), bytes / 4, 100 + i, st);
    }
    time_device(
        state, st,
        [&](std::int64_t i) {
            const int s = static_cast<int>(i % sets);
            srcnn::cuda::fused_forward(fw, Span2D<const float>{in[s].as<const float>(), w, h, 1, w},
                                       Span2D<float>{out[s].as<float>(), w, h, 1, w}, st.get());
        },
        5);
    srcnn::cuda::fused_release(fw);
    const double px = static_cast<double>(w) * h;
    set_rates(state, px, 2.0 * static_cast<double>(bytes));
    state.counters["TFLOPS"] = benchmark::Counter(2.0 * 8032.0 * px * 1e-12,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(Cuda_SrcnnFused)
    ->ArgsProduct({{0, 1, 2, 3}, {3840}, {2160}})
    ->Args({2, 1920, 1080})
    ->Args({3, 1920, 1080})
    ->Args({0, 1920, 1080})
    ->Args({1, 1920, 1080})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);
#endif

}  // namespace
}  // namespace upres::bench
