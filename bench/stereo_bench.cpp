// upres::stereo_disparity benchmarks.
//
//   Stereo_Cpu/agg/threads   the cpu backend on a 1282 x 1110 gray u8 pair (Aloe's size) of
//                            random texture whose right image is the left shifted by 20 pixels,
//                            64 disparities. Wall clock; the CPU column is the process's CPU
//                            time. Peer: OpenCV StereoBM (tools/peers/peers_stereo_cpu.py, run
//                            by tools/peers/run_peers.py --kind cpu in the same job).
//   Stereo_CpuSgm/paths      the semi-global matcher on the same pair (census, 4 or 8 paths,
//                            check 1, all cores). Peer: OpenCV StereoSGBM 3-way.
//   Cuda_Stereo/<variant>    the paper's GPU workload: a 1120 x 1120 gray u8 pair (random
//                            texture, shifted by 50 pixels), 200 disparities, Gauss 13 x 13,
//                            both maps, left-right check, sub-pixel; device-resident inputs and
//                            outputs, device events. Variants stream (the default), cube1,
//                            cube2 (the paper's kernels). Peers on the same host in the same
//                            job (tools/peers/peers_stereo_gpu.py): OpenCV StereoBM with 208
//                            disparities and a 13 x 13 block on all cores; the same matcher in
//                            PyTorch (cost volume, conv2d, argmin, LR check, parabola).
//   Cuda_StereoSgm/paths     the semi-global matcher at libSGM's comparison point: 1282 x 1110
//                            (random texture shifted by 20), 256 disparities, census, 4 or 8
//                            paths, check 1; device-resident.
#include <cstdint>
#include <utility>

#include <upres/stereo.hpp>

#include "bench_util.hpp"

#if UPRES_HAVE_CUDA
#include "bench_cuda.hpp"
#endif

namespace ub = upres::bench;
using namespace upres;

namespace {

constexpr int kW = 1282, kH = 1110, kShift = 20;

// The CPU benchmarks' pair: random texture; L(x) = base(x), R(x) = base(x + shift), so that
// the left pixel x matches the right x - shift.
std::pair<Image<std::uint8_t>, Image<std::uint8_t>> host_pair() {
    Image<std::uint8_t> base(kW + kShift, kH, 1), l(kW, kH, 1), r(kW, kH, 1);
    ub::fill_random(base.data(), static_cast<std::size_t>(kW + kShift) * kH, 5);
    for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x) {
            l.view().row(y)[x] = base.view().row(y)[x];
            r.view().row(y)[x] = base.view().row(y)[x + kShift];
        }
    return {std::move(l), std::move(r)};
}

// args: aggregation (0 gauss7, 1 gauss13, 2 box 7x7), threads (0: all).
void Stereo_Cpu(benchmark::State& state) {
    const int threads = ub::host_threads(static_cast<int>(state.range(1)));
    const auto [l, r] = host_pair();
    StereoOptions o;
    o.num_disparities = 64;
    o.aggregation = state.range(0) == 1   ? StereoAggregation::Gauss13
                    : state.range(0) == 2 ? StereoAggregation::Box
                                          : StereoAggregation::Gauss7;
    o.box_size = 7;
    Image<float> d(kW, kH, 1);
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = threads;
    for (auto _ : state) {
        stereo_disparity(ImageView<const std::uint8_t>(l.view()),
                         ImageView<const std::uint8_t>(r.view()), d.view(), o, ctx);
        benchmark::ClobberMemory();
    }
    state.SetLabel(to_string(o.aggregation));
    ub::set_rates(state, double(kW) * kH, 2.0 * kW * kH + 4.0 * kW * kH);
    state.counters["Gpd/s"] = benchmark::Counter(double(kW) * kH * o.num_disparities * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(Stereo_Cpu)
    ->ArgNames({"agg", "threads"})
    ->ArgsProduct({{0, 1, 2}, {1, 0}})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The semi-global matcher on the same pair: census, 4 or 8 paths, left-right check 1, all
// cores. Peer: OpenCV StereoSGBM 3-way, 64 disparities (peers_stereo_cpu.py).
void Stereo_CpuSgm(benchmark::State& state) {
    const auto [l, r] = host_pair();
    StereoOptions o;
    o.num_disparities = 64;
    o.cost = StereoCost::Census;
    o.aggregation = state.range(0) == 8 ? StereoAggregation::Sgm8 : StereoAggregation::Sgm4;
    o.lr_check = 1;
    Image<float> d(kW, kH, 1);
    Context ctx;
    ctx.backend = Backend::Cpu;
    for (auto _ : state) {
        stereo_disparity(ImageView<const std::uint8_t>(l.view()),
                         ImageView<const std::uint8_t>(r.view()), d.view(), o, ctx);
        benchmark::ClobberMemory();
    }
    state.SetLabel(to_string(o.aggregation));
    state.counters["Gpd/s"] = benchmark::Counter(double(kW) * kH * o.num_disparities * 1e-9,
                                                 benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(Stereo_CpuSgm)
    ->ArgNames({"paths"})
    ->Arg(4)
    ->Arg(8)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

#if UPRES_HAVE_CUDA
constexpr int kGpuSide = 1120, kGpuShift = 50, kGpuD = 200;

void Cuda_Stereo(benchmark::State& state, StereoVariant v) {
    if (!ub::require_cuda(state)) return;
    const int w = kGpuSide, h = kGpuSide;
    const std::size_t n = std::size_t{w} * h;
    ub::Stream st;
    // A random base; L(x) = base(x), R(x) = base(x + shift).
    ub::DeviceBuffer base((w + kGpuShift) * std::size_t{h}), l(n), r(n);
    ub::fill_random_device(base.as<std::uint8_t>(), (w + kGpuShift) * std::size_t{h}, 11, st.get());
    UPRES_BENCH_CUDA(cudaMemcpy2DAsync(l.get(), w, base.get(), w + kGpuShift, w, h,
                                       cudaMemcpyDeviceToDevice, st.get()));
    UPRES_BENCH_CUDA(cudaMemcpy2DAsync(r.get(), w, base.as<std::uint8_t>() + kGpuShift,
                                       w + kGpuShift, w, h, cudaMemcpyDeviceToDevice, st.get()));
    ub::DeviceBuffer d(n * sizeof(float)), m(n);
    const ImageView<const std::uint8_t> lv(l.as<std::uint8_t>(), w, h, 1, 0, Location::Device),
        rv(r.as<std::uint8_t>(), w, h, 1, 0, Location::Device);
    const ImageView<float> dv(d.as<float>(), w, h, 1, 0, Location::Device);
    const ImageView<std::uint8_t> mv(m.as<std::uint8_t>(), w, h, 1, 0, Location::Device);
    StereoOptions o;
    o.num_disparities = kGpuD;
    o.aggregation = StereoAggregation::Gauss13;
    o.lr_check = 0;
    o.variant = v;
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    ub::time_device(state, st.get(),
                    [&](std::int64_t) { stereo_disparity(lv, rv, dv, o, ctx, {}, mv); });
    state.SetLabel(to_string(v));
    ub::set_rates(state, double(n), 2.0 * n + 5.0 * n);
    state.counters["Gpd/s"] =
        benchmark::Counter(double(n) * kGpuD * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
// The semi-global matcher at libSGM's comparison point: Aloe's size (1282 x 1110, random
// texture shifted by 20), 256 disparities, census, 4 or 8 paths, check 1, device-resident.
void Cuda_StereoSgm(benchmark::State& state) {
    if (!ub::require_cuda(state)) return;
    const int w = kW, h = kH;
    const std::size_t n = std::size_t{w} * h;
    ub::Stream st;
    ub::DeviceBuffer base((w + kShift) * std::size_t{h}), l(n), r(n);
    ub::fill_random_device(base.as<std::uint8_t>(), (w + kShift) * std::size_t{h}, 12, st.get());
    UPRES_BENCH_CUDA(cudaMemcpy2DAsync(l.get(), w, base.get(), w + kShift, w, h,
                                       cudaMemcpyDeviceToDevice, st.get()));
    UPRES_BENCH_CUDA(cudaMemcpy2DAsync(r.get(), w, base.as<std::uint8_t>() + kShift, w + kShift, w,
                                       h, cudaMemcpyDeviceToDevice, st.get()));
    ub::DeviceBuffer d(n * sizeof(float));
    const ImageView<const std::uint8_t> lv(l.as<std::uint8_t>(), w, h, 1, 0, Location::Device),
        rv(r.as<std::uint8_t>(), w, h, 1, 0, Location::Device);
    const ImageView<float> dv(d.as<float>(), w, h, 1, 0, Location::Device);
    StereoOptions o;
    o.num_disparities = 256;
    o.cost = StereoCost::Census;
    o.aggregation = state.range(0) == 8 ? StereoAggregation::Sgm8 : StereoAggregation::Sgm4;
    o.lr_check = 1;
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    ub::time_device(state, st.get(), [&](std::int64_t) { stereo_disparity(lv, rv, dv, o, ctx); });
    state.SetLabel(to_string(o.aggregation));
    state.counters["Gpd/s"] =
        benchmark::Counter(double(n) * 256 * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(Cuda_StereoSgm)->ArgNames({"paths"})->Arg(4)->Arg(8)->UseManualTime()->MinTime(0.3);

BENCHMARK_CAPTURE(Cuda_Stereo, stream, StereoVariant::Stream)->UseManualTime()->MinTime(0.3);
BENCHMARK_CAPTURE(Cuda_Stereo, cube1, StereoVariant::Cube1)->UseManualTime()->MinTime(0.3);
BENCHMARK_CAPTURE(Cuda_Stereo, cube2, StereoVariant::Cube2)->UseManualTime()->MinTime(0.3);
#endif

}  // namespace
