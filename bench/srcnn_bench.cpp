// Benchmarks of the SRCNN CUDA engine (src/ops/srcnn/srcnn_cuda.cu; docs/ops/srcnn.md, "CUDA
// engine and per-layer variants"). SRCNN 9-1-5 64/32 with random weights scaled like trained
// ones; inputs in [0.05, 1.05) (never zeros).
//
//   Cuda_SrcnnLayer/<layer>/<case>/3840/2160   the paper's Table II: one layer (1: 64x1x9x9,
//       2: 32x64x1x1, 3: 1x32x5x5) with one variant, CHW fp32 planes in and out (conv_layer).
//       Cases: 0 direct, 1 shared-kernel, 2 shared-kernel-patch, 3 registered-pixel,
//       4 tensor-core fp32 (3xTF32), 5 tf32, 6 fp16, 7 bf16, 8 cudnn fp32 (cuDNN's own fastest
//       deterministic algorithm, no TF32, after a replicate-padded copy; skipped with the reason
//       where libcudnn.so.9 cannot be loaded). A variant that cannot run the layer is reported
//       as skipped with the engine's reason (the paper's "Unable").
//       bytes/s counts the fp32 input planes read once + the output planes written once.
//   Cuda_SrcnnNetwork/<case>/3840/2160   the whole network on a device plane (srcnn::cuda::
//       forward): cases 0-4 Auto at fp32, tf32, fp16, bf16, fastest; 5-8 every layer forced to
//       direct, shared-kernel, shared-kernel-patch, tensor-core (fp32); 9 the paper's best mix
//       (patch, registered-pixel, patch); 10-12 tensor-core at tf32, fp16, bf16; 13-16 fused at
//       fp32, tf32, fp16, bf16. The label is the plan that ran. TFLOPS counts 2 * 8032 flops
//       per pixel.
//   Cuda_SrcnnPipeline1080p/<case>   1920x1080 RGB u8 -> x2 -> 3840x2160 RGB u8 (YCbCr, MATLAB
//       bicubic of all planes, network on Y, back to RGB) through the library's srcnn_upscale
//       into an output view, every step on the device, precision fastest (Auto): case 0
//       device images in and out (transfers excluded), 1 pinned host images in and out (the
//       upload and download included).
//   Cuda_SrcnnUpscaleApi1080p   srcnn_upscale returning a new host image (pageable host input
//       and output, Backend::Cuda, precision fastest), wall time.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include <upres/color.hpp>
#include <upres/srcnn.hpp>
#include <upres/warp.hpp>

#include "bench_util.hpp"

#if UPRES_HAVE_CUDA
#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_cuda.hpp"
#endif

namespace upres::bench {

namespace {

#if UPRES_HAVE_CUDA
SrcnnModel srcnn_bench_model(int scale) {
    std::mt19937 rng(1234);
    SrcnnModel m;
    m.scale = scale;
    const int outs[3] = {64, 32, 1}, ins[3] = {1, 64, 32}, ks[3] = {9, 1, 5};
    for (int l = 0; l < 3; ++l) {
        SrcnnLayer& L = m.layers[l];
        L.out_channels = outs[l], L.in_channels = ins[l], L.kernel = ks[l];
        const double fan = static_cast<double>(ins[l]) * ks[l] * ks[l];
        std::normal_distribution<float> wd(
            0.0f, static_cast<float>(std::sqrt((l == 2 ? 1.0 : 2.0) / fan)));
        std::normal_distribution<float> bd(0.0f, 0.02f);
        L.weights.resize(static_cast<std::size_t>(outs[l]) * ins[l] * ks[l] * ks[l]);
        for (float& v : L.weights) v = wd(rng);
        L.bias.resize(outs[l]);
        for (float& v : L.bias) v = bd(rng);
    }
    return m;
}

struct LayerCase {
    SrcnnVariant v;
    SrcnnPrecision p;
};
const LayerCase kLayerCases[] = {
    {SrcnnVariant::Direct, SrcnnPrecision::Fp32},
    {SrcnnVariant::SharedKernel, SrcnnPrecision::Fp32},
    {SrcnnVariant::SharedKernelPatch, SrcnnPrecision::Fp32},
    {SrcnnVariant::RegisteredPixel, SrcnnPrecision::Fp32},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Fp32},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Tf32},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Fp16},
    {SrcnnVariant::TensorCore, SrcnnPrecision::Bf16},
    {SrcnnVariant::Cudnn, SrcnnPrecision::Fp32},
};

void Cuda_SrcnnLayer(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const int li = static_cast<int>(state.range(0)) - 1;
    const LayerCase c = kLayerCases[state.range(1)];
    const int w = static_cast<int>(state.range(2)), h = static_cast<int>(state.range(3));
    const SrcnnModel m = srcnn_bench_model(3);
    const SrcnnLayer& L = m.layers[li];
    state.SetLabel(std::string(to_string(c.v)) + " " + to_string(c.p));
    const std::size_t px = static_cast<std::size_t>(w) * h;
    DeviceBuffer in(px * L.in_channels * sizeof(float)), out(px * L.out_channels * sizeof(float));
    Stream st;
    fill_random_device(in.as<float>(), px * L.in_channels, 7, st);
    try {
        srcnn::cuda::conv_layer(in.as<const float>(), out.as<float>(), w, h, L, li < 2, c.v, c.p,
                                st.get());
    } catch (const Error& e) {
        state.SkipWithError(e.what());
        return;
    }
    time_device(state, st, [&](std::int64_t) {
        srcnn::cuda::conv_layer(in.as<const float>(), out.as<float>(), w, h, L, li < 2, c.v, c.p,
                                st.get());
    });
    set_rates(state, static_cast<double>(px),
              static_cast<double>(px) * (L.in_channels + L.out_channels) * sizeof(float));
    const double flops = 2.0 * L.out_channels * L.in_channels * L.kernel * L.kernel * px;
    state.counters["TFLOPS"] =
        benchmark::Counter(flops * 1e-12, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(Cuda_SrcnnLayer)
    // Every layer x variant, except registered-pixel on layers 1 and 3 (81 and 800 inputs per
    // pixel do not fit in registers: the paper's "Unable" cells).
    ->Apply([](benchmark::internal::Benchmark* b) {
        for (int layer = 1; layer <= 3; ++layer)
            for (int c = 0; c < static_cast<int>(std::size(kLayerCases)); ++c)
                if (kLayerCases[c].v != SrcnnVariant::RegisteredPixel || layer == 2)
                    b->Args({layer, c, 3840, 2160});
    })
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.1);

SrcnnOptions network_case(int i) {
    SrcnnOptions o;
    const SrcnnPrecision precs[] = {SrcnnPrecision::Fp32, SrcnnPrecision::Tf32,
                                    SrcnnPrecision::Fp16, SrcnnPrecision::Bf16,
                                    SrcnnPrecision::Fastest};
    const SrcnnVariant forced[] = {SrcnnVariant::Direct, SrcnnVariant::SharedKernel,
                                   SrcnnVariant::SharedKernelPatch, SrcnnVariant::TensorCore};
    if (i < 5) {
        o.precision = precs[i];
    } else if (i < 9) {
        o.variant = forced[i - 5];
    } else if (i == 9) {
        o.layer_variants = {SrcnnVariant::SharedKernelPatch, SrcnnVariant::RegisteredPixel,
                            SrcnnVariant::SharedKernelPatch};
    } else if (i < 13) {
        o.variant = SrcnnVariant::TensorCore;
        o.precision = precs[i - 9];
    } else {
        o.variant = SrcnnVariant::FusedNetwork;
        o.precision = precs[i - 13];
    }
    return o;
}

void Cuda_SrcnnNetwork(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const SrcnnOptions o = network_case(static_cast<int>(state.range(0)));
    const int w = static_cast<int>(state.range(1)), h = static_cast<int>(state.range(2));
    const SrcnnModel m = srcnn_bench_model(3);
    const std::size_t bytes = sizeof(float) * static_cast<std::size_t>(w) * h;
    const int sets = rotation_count(2 * bytes, device_l2_bytes(), 8);
    Stream st;
    std::vector<DeviceBuffer> in, out;
    for (int i = 0; i < sets; ++i) {
        in.emplace_back(bytes);
        out.emplace_back(bytes);
        fill_random_device(in.back().as<float>(), bytes / 4, 100 + i, st);
    }
    auto run = [&](int s) {
        return cuda::srcnn_forward(Span2D<const float>{in[s].as<const float>(), w, h, 1, w},
                                   Span2D<float>{out[s].as<float>(), w, h, 1, w}, m, o, st.get());
    };
    SrcnnPlan plan;
    try {
        plan = run(0);  // tunes (Auto) outside the timed loop
    } catch (const Error& e) {
        state.SkipWithError(e.what());
        return;
    }
    state.SetLabel(srcnn::cuda::plan_string(plan));
    time_device(state, st, [&](std::int64_t i) { run(static_cast<int>(i % sets)); });
    const double px = static_cast<double>(w) * h;
    set_rates(state, px, 2.0 * static_cast<double>(bytes));
    state.counters["TFLOPS"] = benchmark::Counter(2.0 * 8032.0 * px * 1e-12,
                                                  benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(Cuda_SrcnnNetwork)
    ->ArgsProduct({{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {3840}, {2160}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.2);

void Cuda_SrcnnPipeline1080p(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const bool transfers = state.range(0) != 0;
    const int w = 1920, h = 1080, W = 3840, H = 2160;
    const SrcnnModel m = srcnn_bench_model(2);
    SrcnnOptions o;
    o.precision = SrcnnPrecision::Fastest;
    Stream st;
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    PinnedBuffer hin(static_cast<std::size_t>(w) * h * 3),
        hout(static_cast<std::size_t>(W) * H * 3);
    fill_random(static_cast<std::uint8_t*>(hin.get()), hin.bytes(), 3);
    const ImageView<const std::uint8_t> hin_v(static_cast<const std::uint8_t*>(hin.get()), w, h, 3);
    const ImageView<std::uint8_t> hout_v(static_cast<std::uint8_t*>(hout.get()), W, H, 3);
    Image<std::uint8_t> din(w, h, 3, Location::Device), dout(W, H, 3, Location::Device);
    copy(hin_v, din.view());
    SrcnnPlan plan;
    // The library call itself: device images in and out, or pinned host images in and out (the
    // library uploads once, runs every step on the device and downloads once).
    auto enqueue = [&](std::int64_t) {
        plan = transfers ? srcnn_upscale(hin_v, hout_v, m, o, ctx)
                         : srcnn_upscale(ImageView<const std::uint8_t>(din.view()), dout.view(), m,
                                         o, ctx);
    };
    time_device(state, st, enqueue);
    state.SetLabel(std::string(transfers ? "pinned transfers included; " : "device-resident; ") +
                   srcnn::cuda::plan_string(plan));
    set_rates(state, static_cast<double>(W) * H,
              static_cast<double>(hin.bytes()) + static_cast<double>(hout.bytes()));
}
BENCHMARK(Cuda_SrcnnPipeline1080p)
    ->Arg(0)
    ->Arg(1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.3);

void Cuda_SrcnnUpscaleApi1080p(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const int w = 1920, h = 1080;
    const SrcnnModel m = srcnn_bench_model(2);
    SrcnnOptions o;
    o.precision = SrcnnPrecision::Fastest;
    Context ctx;
    ctx.backend = Backend::Cuda;
    PinnedBuffer hin(static_cast<std::size_t>(w) * h * 3);
    fill_random(static_cast<std::uint8_t*>(hin.get()), hin.bytes(), 4);
    const ImageView<const std::uint8_t> v(static_cast<const std::uint8_t*>(hin.get()), w, h, 3);
    (void)srcnn_upscale(v, m, o, ctx);  // tunes
    for (auto _ : state) {
        const auto t0 = std::chrono::steady_clock::now();
        Image<std::uint8_t> out = srcnn_upscale(v, m, o, ctx);
        benchmark::DoNotOptimize(out.view().data());
        state.SetIterationTime(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    set_rates(state, 3840.0 * 2160.0, static_cast<double>(hin.bytes()) * 5.0);
}
BENCHMARK(Cuda_SrcnnUpscaleApi1080p)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(3);
#endif

}  // namespace
}  // namespace upres::bench
