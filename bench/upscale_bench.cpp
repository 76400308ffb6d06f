// The public upscale() call on a frame already in device memory against the sum of its steps
// (docs/ops/seabi.md, "Colour, other factors, bad input"; the redesign's device-resident
// pipeline).
//
//   Cuda_UpscaleResident1080p/<method>   1920x1080 RGB u8 on the device -> x2 co-sited ->
//       3840x2160 RGB u8 on the device, through upscale(in, out, opts, ctx) with the cuda
//       backend. Methods: 0 silseabi, 1 lseabi, 2 lseai, 3 tap4, 4 bicubic (co-sited Keys).
//       The benchmark's time is the public call's. Counters: api_us, the call's median time;
//       steps_us, the sum of the medians of the pipeline's steps each timed alone on
//       preallocated device images (rgb_to_ycbcr, the luma/chroma split, the method on the luma
//       plane, Keys cubic of the chroma planes, the merge, ycbcr_to_rgb): the kernels' own time;
//       x_steps = api_us / steps_us, the cost of composing them behind one call (pool
//       allocations, launches, synchronisation).
//   Cuda_UpscaleYuv1080p/<method>/<host>   one 1920x1080 yuv420p frame -> x2 -> 3840x2160
//       yuv420p through upscale_yuv (upres/yuv.hpp), the video command's per-frame call: the
//       upscale stage of 1080p -> 4K video. Methods: 0 srcnn (precision fastest), 1 silseabi,
//       2 bicubic. host 0: planes in device memory (decoded and encoded on the device); host 1:
//       planes in pageable host memory, uploaded and downloaded by the call; host 2: planes in
//       host frame memory (alloc_host_frame_memory, page-locked: the video command's path with
//       --backend cuda). Counter fps = 1 / the call's median time.
//   Cuda_NlmYuvWindow1080p/<host>   the video command's NLM-SR call (nlm_fuse_yuv, default
//       options, x2) on a window of 5 1920x1080 yuv420p frames: host 0: the window on the device
//       (the video command keeps it there: each frame uploaded once when decoded); host 1: the
//       5 frames in pageable host memory, uploaded by every call. Counter fps = 1 / the median.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include <upres/color.hpp>
#include <upres/nlmsr.hpp>
#include <upres/seabi.hpp>
#include <upres/upscale.hpp>
#include <upres/warp.hpp>
#include <upres/yuv.hpp>

#include "bench_util.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime.h>

#include "pipelines/upscale/upscale_planes.hpp"
#endif

namespace upres::bench {
namespace {

void Cuda_UpscaleResident1080p(benchmark::State& state) {
    if (!require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const int w = 1920, h = 1080, W = 2 * w, H = 2 * h, ch = 3;
    constexpr UpscaleMethod kMethods[] = {UpscaleMethod::SilSeabi, UpscaleMethod::LSeabi,
                                          UpscaleMethod::LSeai, UpscaleMethod::Tap4,
                                          UpscaleMethod::Bicubic};
    UpscaleOptions o;
    o.method = kMethods[state.range(0)];
    o.lattice = Lattice::CoSited;
    o.scale = 2;
    Stream st;
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    Image<std::uint8_t> din(w, h, ch, Location::Device), dout(W, H, ch, Location::Device);
    fill_random_device(din.data(), static_cast<std::size_t>(w) * h * ch, 11, st);
    const ImageView<const std::uint8_t> in(din.view());
    const auto call = [&] { upscale(in, dout.view(), o, ctx); };
    time_device(state, st, [&](std::int64_t) { call(); });
    if (state.error_occurred()) return;

    // The steps alone, on preallocated device images.
    Image<float> ycc(w, h, ch, Location::Device), chroma(w, h, ch - 1, Location::Device);
    Image<float> chroma_up(W, H, ch - 1, Location::Device), ycc_up(W, H, ch, Location::Device);
    Image<std::uint8_t> luma(w, h, 1, Location::Device), luma_up(W, H, 1, Location::Device);
    WarpOptions cubic;
    cubic.interp = Interp::Cubic;
    cubic.border = Border::Nearest;
    Affine half;
    half.m[0] = half.m[4] = 0.5;
    half.m[1] = half.m[2] = half.m[3] = half.m[5] = 0.0;
    const Transform t = Transform::make_affine(half);
    SeabiOptions so;
    so.method = o.method == UpscaleMethod::LSeabi  ? SeabiMethod::LSeabi
                : o.method == UpscaleMethod::LSeai ? SeabiMethod::LSeai
                                                   : SeabiMethod::SilSeabi;
    so.lattice = Lattice::CoSited;
    double steps = 0;
    steps += median_event_us(st, [&] { rgb_to_ycbcr(in, ycc.view(), ctx); });
    steps += median_event_us(st, [&] {
        cuda::split_ycc(span_of(ImageView<const float>(ycc.view())), span_of(luma.view()),
                        span_of(chroma.view()), st.get());
    });
    const ImageView<const std::uint8_t> lv(luma.view());
    steps += median_event_us(st, [&] {
        if (o.method == UpscaleMethod::Tap4)
            tap_upscale2(lv, luma_up.view(), TapFilter::Tap4, Lattice::CoSited, ctx);
        else if (o.method == UpscaleMethod::Bicubic)
            warp(lv, luma_up.view(), t, cubic, ctx);
        else
            seabi_upscale2(lv, luma_up.view(), so, ctx);
    });
    steps += median_event_us(
        st, [&] { warp(ImageView<const float>(chroma.view()), chroma_up.view(), t, cubic, ctx); });
    steps += median_event_us(st, [&] {
        cuda::merge_ycc(span_of(ImageView<const std::uint8_t>(luma_up.view())),
                        span_of(ImageView<const float>(chroma_up.view())), span_of(ycc_up.view()),
                        st.get());
    });
    steps += median_event_us(
        st, [&] { ycbcr_to_rgb(ImageView<const float>(ycc_up.view()), dout.view(), ctx); });
    const double api = median_event_us(st, call);
    state.counters["api_us"] = api;
    state.counters["steps_us"] = steps;
    state.counters["x_steps"] = api / steps;
    state.SetLabel(std::string(to_string(o.method)) + ", device-resident");
    set_rates(state, static_cast<double>(W) * H,
              static_cast<double>(w) * h * ch + static_cast<double>(W) * H * ch);
#endif
}
BENCHMARK(Cuda_UpscaleResident1080p)
    ->DenseRange(0, 4)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.3);

void Cuda_UpscaleYuv1080p(benchmark::State& state) {
    if (!require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const int w = 1920, h = 1080;
    constexpr UpscaleMethod kMethods[] = {UpscaleMethod::Srcnn, UpscaleMethod::SilSeabi,
                                          UpscaleMethod::Bicubic};
    UpscaleOptions o;
    o.method = kMethods[state.range(0)];
    o.scale = 2;
    o.srcnn.precision = SrcnnPrecision::Fastest;
    const int host = static_cast<int>(state.range(1));
    const Location loc = host ? Location::Host : Location::Device;
    Stream st;
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    Image<std::uint8_t> y(w, h, 1, Location::Device), cb(w / 2, h / 2, 1, Location::Device),
        cr(w / 2, h / 2, 1, Location::Device);
    fill_random_device(y.data(), static_cast<std::size_t>(w) * h, 21, st);
    fill_random_device(cb.data(), static_cast<std::size_t>(w) * h / 4, 22, st);
    fill_random_device(cr.data(), static_cast<std::size_t>(w) * h / 4, 23, st);
    cudaStreamSynchronize(st.get());
    const Image<std::uint8_t> iy = clone(y.view(), loc), icb = clone(cb.view(), loc),
                              icr = clone(cr.view(), loc);
    Image<std::uint8_t> oy(2 * w, 2 * h, 1, loc), ocb(w, h, 1, loc), ocr(w, h, 1, loc);
    YuvPlanes<const std::uint8_t> in{iy.view(), icb.view(), icr.view()};
    YuvPlanes<std::uint8_t> out{oy.view(), ocb.view(), ocr.view()};
    // host 2: the same planes in one block of host frame memory each way.
    struct FrameMemory {
        void* p;
        explicit FrameMemory(std::size_t n) : p(alloc_host_frame_memory(n)) {}
        ~FrameMemory() { free_host_frame_memory(p); }
        std::uint8_t* at(std::size_t off) const { return static_cast<std::uint8_t*>(p) + off; }
    };
    const std::size_t n = static_cast<std::size_t>(w) * h;
    FrameMemory pin_in(n * 3 / 2), pin_out(n * 6);
    if (host == 2) {
        std::memcpy(pin_in.at(0), iy.data(), n);
        std::memcpy(pin_in.at(n), icb.data(), n / 4);
        std::memcpy(pin_in.at(n + n / 4), icr.data(), n / 4);
        in = {ImageView<const std::uint8_t>(pin_in.at(0), w, h, 1),
              ImageView<const std::uint8_t>(pin_in.at(n), w / 2, h / 2, 1),
              ImageView<const std::uint8_t>(pin_in.at(n + n / 4), w / 2, h / 2, 1)};
        out = {ImageView<std::uint8_t>(pin_out.at(0), 2 * w, 2 * h, 1),
               ImageView<std::uint8_t>(pin_out.at(4 * n), w, h, 1),
               ImageView<std::uint8_t>(pin_out.at(5 * n), w, h, 1)};
    }
    const YuvLayout layout;
    const auto call = [&] { upscale_yuv(in, out, layout, o, ctx); };
    time_device(state, st, [&](std::int64_t) { call(); });
    if (state.error_occurred()) return;
    const double us = median_event_us(st, call);
    state.counters["fps"] = 1e6 / us;
    state.SetLabel(std::string(to_string(o.method)) + (host == 2   ? ", pinned host planes"
                                                       : host == 1 ? ", host planes"
                                                                   : ", device planes"));
    set_rates(state, 4.0 * w * h, 1.5 * w * h * 5);
#endif
}
BENCHMARK(Cuda_UpscaleYuv1080p)
    ->ArgsProduct({{0, 1, 2}, {0, 1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.3);

void Cuda_NlmYuvWindow1080p(benchmark::State& state) {
    if (!require_cuda(state)) return;
#if UPRES_HAVE_CUDA
    const int w = 1920, h = 1080, frames = 5;
    const bool host = state.range(0) != 0;
    const Location loc = host ? Location::Host : Location::Device;
    Stream st;
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    std::vector<Image<std::uint8_t>> planes;
    for (int t = 0; t < frames; ++t)
        for (int k = 0; k < 3; ++k) {
            const int pw = k ? w / 2 : w, ph = k ? h / 2 : h;
            Image<std::uint8_t> d(pw, ph, 1, Location::Device);
            fill_random_device(d.data(), static_cast<std::size_t>(pw) * ph, 31 + 3 * t + k, st);
            cudaStreamSynchronize(st.get());
            planes.push_back(clone(d.view(), loc));
        }
    std::vector<YuvPlanes<const std::uint8_t>> in;
    for (int t = 0; t < frames; ++t)
        in.push_back({planes[3 * t].view(), planes[3 * t + 1].view(), planes[3 * t + 2].view()});
    Image<std::uint8_t> oy(2 * w, 2 * h, 1, loc), ocb(w, h, 1, loc), ocr(w, h, 1, loc);
    const YuvPlanes<std::uint8_t> out{oy.view(), ocb.view(), ocr.view()};
    NlmsrOptions n;
    const auto call = [&] {
        nlm_fuse_yuv(std::span<const YuvPlanes<const std::uint8_t>>(in), frames / 2, out,
                     YuvLayout{}, n, ctx);
    };
    time_device(state, st, [&](std::int64_t) { call(); });
    if (state.error_occurred()) return;
    const double us = median_event_us(st, call);
    state.counters["fps"] = 1e6 / us;
    state.SetLabel(host ? "5 frames in host memory, uploaded per call" : "5 frames on the device");
#endif
}
BENCHMARK(Cuda_NlmYuvWindow1080p)
    ->DenseRange(0, 1)
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.3);

}  // namespace
}  // namespace upres::bench
