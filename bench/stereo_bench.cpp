// upres::stereo_disparity on the CPU backend. The peer of the CPU claim (OpenCV
// StereoBM, and StereoSGBM later) has no C++ API here: tools/peers/run_peers.py --kind cpu
// (peers_stereo_cpu.py) measures it in the same job on the same work: a 1282 x 1110 gray u8
// pair (Aloe's size) of random texture whose right image is the left shifted by 20 pixels, 64
// disparities. Time: wall clock; the CPU column is the whole process's CPU time.
#include <cstdint>

#include <upres/stereo.hpp>

#include "bench_util.hpp"

namespace ub = upres::bench;
using namespace upres;

namespace {

constexpr int kW = 1282, kH = 1110, kShift = 20;

// args: aggregation (0 gauss7, 1 gauss13, 2 box 7x7), threads (0: all).
void Stereo_Cpu(benchmark::State& state) {
    const int threads = ub::host_threads(static_cast<int>(state.range(1)));
    Image<std::uint8_t> base(kW + kShift, kH, 1), l(kW, kH, 1), r(kW, kH, 1);
    ub::fill_random(base.data(), static_cast<std::size_t>(kW + kShift) * kH, 5);
    // L(x) = base(x), R(x) = base(x + shift): the left pixel x matches the right x - shift.
    for (int y = 0; y < kH; ++y)
        for (int x = 0; x < kW; ++x) {
            l.view().row(y)[x] = base.view().row(y)[x];
            r.view().row(y)[x] = base.view().row(y)[x + kShift];
        }
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

}  // namespace
