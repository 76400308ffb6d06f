// upres::warp on the CPU backend (and the reference, for scale). The peers of the speed
// claims (scipy.ndimage.rotate(order=3) single-threaded, OpenCV on all cores) have no C++ API
// here: tools/peers/run_peers.py --kind cpu (peers_foundation.py, peers_warp_cpu.py) measures
// them in the same job, and tools/perf_tables.py puts both in docs/ops/warp.md. pixels/s counts
// output pixels; bytes: the input read once plus the output written once (float32). Time: wall
// clock; the CPU column is the whole process's CPU time (all threads), useful on a shared, busy
// machine.
#include <cstdint>
#include <vector>

#include <upres/warp.hpp>

#include "bench_util.hpp"

namespace ub = upres::bench;
using namespace upres;

namespace {

Image<float> random_float(int w, int h, int c, std::uint64_t seed) {
    Image<float> img(w, h, c);
    ub::fill_random(img.data(), static_cast<std::size_t>(w) * h * c, seed);
    return img;
}

// args: size, threads (0: all), interp, fir length.
void Warp_CpuRotate(benchmark::State& state) {
    const int n = static_cast<int>(state.range(0));
    const int threads = ub::host_threads(static_cast<int>(state.range(1)));
    WarpOptions o;
    o.interp = static_cast<Interp>(state.range(2));
    o.prefilter = static_cast<int>(state.range(3));
    const Image<float> src = random_float(n, n, 1, 1);
    Image<float> dst(n, n, 1);
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = threads;
    const Transform t = Transform::make_rotation(30, n, n);
    for (auto _ : state) {
        warp(src.view(), dst.view(), t, o, ctx);
        benchmark::ClobberMemory();
    }
    state.SetLabel(to_string(o.interp));
    ub::set_rates(state, double(n) * n, 8.0 * n * n);
}
void rotate_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"size", "threads", "interp", "fir"});
    for (int th : {1, 0}) {
        b->Args({2048, th, static_cast<int>(Interp::BSpline), 0});
        b->Args({2048, th, static_cast<int>(Interp::BSpline), 15});
        b->Args({2048, th, static_cast<int>(Interp::Cubic), 0});
        b->Args({2048, th, static_cast<int>(Interp::Linear), 0});
        b->Args({2048, th, static_cast<int>(Interp::Nearest), 0});
    }
}
BENCHMARK(Warp_CpuRotate)
    ->Apply(rotate_args)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// args: threads (1, all) x interp (B-spline, Keys cubic, bilinear).
void flow_args(benchmark::internal::Benchmark* b) {
    b->ArgNames({"threads", "interp"});
    for (int th : {1, 0})
        for (Interp i : {Interp::BSpline, Interp::Cubic, Interp::Linear})
            b->Args({th, static_cast<int>(i)});
}

// Times warp(src, dst, t) on the Cpu backend with the threads and interpolation of flow_args;
// bytes: the bytes moved per call.
template <class T>
void time_cpu_warp(benchmark::State& state, const Image<T>& src, Image<T>& dst, const Transform& t,
                   double bytes) {
    WarpOptions o;
    o.interp = static_cast<Interp>(state.range(1));
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = ub::host_threads(static_cast<int>(state.range(0)));
    for (auto _ : state) {
        warp(src.view(), dst.view(), t, o, ctx);
        benchmark::ClobberMemory();
    }
    state.SetLabel(to_string(o.interp));
    ub::set_rates(state, double(dst.width()) * dst.height(), bytes);
}

Image<std::uint8_t> video_frame(std::uint64_t seed) {  // 1920 x 1080 RGB u8
    Image<std::uint8_t> f(1920, 1080, 3);
    ub::fill_random(f.data(), std::size_t{1920} * 1080 * 3, seed);
    return f;
}

// Rotation of an RGB u8 video frame (1920 x 1080, 30 degrees about the centre, Mirror). Peer:
// cv2.warpAffine on the same cores (tools/peers/peers_warp_cpu.py, "video"). Bytes: input, output.
// The cost of one call on a tiny image: a 16 x 16 float shift by one pixel, bilinear, one thread
// (the C++ side of the Python module's per-call overhead, tools/bench_python.py).
void Warp_CpuTinyCall(benchmark::State& state) {
    const Image<float> src = random_float(16, 16, 1, 3);
    Image<float> dst(16, 16, 1);
    WarpOptions o;
    o.interp = Interp::Linear;
    o.border = Border::Constant;
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = 1;
    Affine a;
    a.m[2] = -1;
    const Transform t = Transform::make_affine(a);
    for (auto _ : state) {
        warp(src.view(), dst.view(), t, o, ctx);
        benchmark::ClobberMemory();
    }
}
BENCHMARK(Warp_CpuTinyCall)->UseRealTime()->Unit(benchmark::kMicrosecond);

void Warp_CpuRotateRgbU8(benchmark::State& state) {
    const Image<std::uint8_t> src = video_frame(4);
    Image<std::uint8_t> dst(1920, 1080, 3);
    time_cpu_warp(state, src, dst, Transform::make_rotation(30, 1920, 1080), 6.0 * 1920 * 1080);
}
BENCHMARK(Warp_CpuRotateRgbU8)
    ->Apply(flow_args)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Rotation of a 2048^2 u8 grey image (30 degrees, Mirror): 8-bit microscopy and luma frames.
// Peer: cv2.warpAffine on the same cores (tools/peers/peers_warp_cpu.py, "video"). Bytes: in, out.
void Warp_CpuRotateGreyU8(benchmark::State& state) {
    Image<std::uint8_t> src(2048, 2048, 1);
    ub::fill_random(src.data(), std::size_t{2048} * 2048, 6);
    Image<std::uint8_t> dst(2048, 2048, 1);
    time_cpu_warp(state, src, dst, Transform::make_rotation(30, 2048, 2048), 2.0 * 2048 * 2048);
}
BENCHMARK(Warp_CpuRotateGreyU8)
    ->Apply(flow_args)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Warp of a 2048^2 float32 image by a displacement field (PIV window deformation, optical-flow
// warps): output (x, y) samples the input at (x + dx, y + dy), the smooth field of
// bench_util.hpp's flow_field(); Mirror border. B-spline includes its exact prefilter. Peers
// (tools/peers/peers_warp_cpu.py): cv2.remap and scipy.ndimage.map_coordinates on the same field.
// Bytes: input, output and the 2-float field.
void Warp_CpuFlow(benchmark::State& state) {
    constexpr int n = 2048;
    const Image<float> src = random_float(n, n, 1, 3);
    const std::vector<float> f = ub::flow_field(n, n);
    Image<float> dst(n, n, 1);
    time_cpu_warp(state, src, dst, Transform::make_flow(ImageView<const float>(f.data(), n, n, 2)),
                  16.0 * n * n);
}
BENCHMARK(Warp_CpuFlow)
    ->Apply(flow_args)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Perspective warp of a 2048^2 float32 image by bench_util.hpp's keystone() homography (a
// rotation whose scale varies by +-5%: stereo rectification, plane-to-plane registration); Mirror
// border. Peer: cv2.warpPerspective on the same cores (tools/peers/peers_warp_cpu.py,
// "perspective"). Bytes: input, output.
void Warp_CpuPerspective(benchmark::State& state) {
    constexpr int n = 2048;
    const Image<float> src = random_float(n, n, 1, 7);
    Image<float> dst(n, n, 1);
    Homography h;
    ub::keystone(n, h.h);
    time_cpu_warp(state, src, dst, Transform::make_perspective(h), 8.0 * n * n);
}
BENCHMARK(Warp_CpuPerspective)
    ->Apply(flow_args)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The video case: a 1920 x 1080 RGB u8 frame resized to 3840 x 2160 (Mirror). Peer:
// cv2.resize on the same cores (tools/peers/peers_warp_cpu.py, "video"). Bytes: input, output.
void Warp_CpuResizeRgbU8(benchmark::State& state) {
    const Image<std::uint8_t> src = video_frame(5);
    Image<std::uint8_t> dst(3840, 2160, 3);
    time_cpu_warp(state, src, dst, Transform::make_resize(), 15.0 * 1920 * 1080);
}
BENCHMARK(Warp_CpuResizeRgbU8)
    ->Apply(flow_args)
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// Zoom 1024^2 -> 2048^2 (B-spline, the paper's x2 zoom) and the MATLAB-imresize degradation
// 2048^2 -> 512^2 (antialiased Keys cubic).
void Warp_CpuResize(benchmark::State& state) {
    const int in = static_cast<int>(state.range(0)), out = static_cast<int>(state.range(1));
    WarpOptions o;
    o.interp = out < in ? Interp::Cubic : Interp::BSpline;
    o.antialias = out < in;
    o.border = out < in ? Border::Reflect : Border::Mirror;
    const Image<float> src = random_float(in, in, 3, 2);
    Image<float> dst(out, out, 3);
    Context ctx;
    ctx.backend = Backend::Cpu;
    const Transform t = Transform::make_resize();
    for (auto _ : state) {
        warp(src.view(), dst.view(), t, o, ctx);
        benchmark::ClobberMemory();
    }
    ub::set_rates(state, double(out) * out, 12.0 * (double(in) * in + double(out) * out));
}
BENCHMARK(Warp_CpuResize)
    ->ArgNames({"in", "out"})
    ->Args({1024, 2048})
    ->Args({2048, 512})
    ->MeasureProcessCPUTime()
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
