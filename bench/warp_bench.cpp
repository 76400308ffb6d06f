// Benchmarks of the CUDA warp (docs/ops/warp.md, CUDA section; docs/ops/bspline_paper.md).
//
//   Cuda_WarpRotate/<mode>   2048^2 float32, 1 channel, rotation by 30 degrees about the centre,
//                            Border::Mirror (the setting of cupyx.scipy.ndimage.rotate(order=3,
//                            mode='mirror', reshape=False), tools/peers/peers_foundation.py);
//   Cuda_WarpRotateAngle/<mode>/<deg>  the recursive fused kernel at other angles;
//   Cuda_WarpRotateInside/<mode>  the same rotation scaled by 0.7 (every output interior);
//   Cuda_WarpZoom/<mode>/<z> zoom x2, x4, x8, x16 to a 2048^2 output (paper Table 3);
//   Cuda_WarpVideo/<mode>/<c> a 1920 x 1080 u8 frame with c channels (1: luma, 3: RGB) resized to
//                            3840 x 2160 u8 (the kernel alone; Keys cubic with a = -0.75, as
//                            PyTorch's bicubic, the peer torch_bicubic_x2_1080p_u8);
//   Cuda_BsplinePrefilter/<fir>/<n>  the prefilter alone, n^2 float32 (paper Table 1);
//   Api_CudaWarp/<case>/<keep>  the public upres::warp on device images (see below);
//   Cuda_MallocFree/<MiB>    a cudaMalloc + cudaFree pair (the per-call cost upres's pool avoids).
// Modes: nearest, linear, cubic (Keys), bspline_iir (exact prefilter + interpolation),
// bspline_fir15 (FIR15 prefilter + interpolation, two passes), bspline_fir15_texture and
// linear_texture (fast texture mode), bspline_interp (the interpolation step alone: the random
// source read as coefficients), linear_per_output, cubic_per_output and bspline_fir15_per_output
// (the per-output kernels instead of the tiled default, WarpScheduleOverride::PerOutput),
// bspline_iir_fused (exact prefilter and interpolation in one pass, the recursive fused kernel that
// upres::warp runs for such plans) and the same kernel with its tap form forced:
// bspline_iir_fused_narrow, _wide, _narrow16, _wide16, _narrow8 and _wide8 (warp_bspline_rec: tap
// forms 0 to 5), linear_tiled, cubic_tiled and bspline_interp_tiled (WarpScheduleOverride::Tiled:
// the tiled kernel, which resizes took before the separable kernel; u8 Linear: warp_affine_kernel).
// B-spline times include the prefilter. Bytes: input read once + output written once (the floor of
// every mode); "copy_frac" is bytes/s over the device-to-device copy bandwidth measured in the same
// process (copy_bytes_per_s(), also reported as Cuda_WarpCopyFloor).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/image.hpp>
#include <upres/warp.hpp>

#include "bench_util.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_temp.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cuda.hpp"
#endif

namespace upres::bench {
namespace {

#if UPRES_HAVE_CUDA
enum Mode {
    kNearest,
    kLinear,
    kCubic,
    kBsplineIir,
    kBsplineFir15,
    kRemovedFir15Fused,  // (the FIR-fused warp kernel, removed: the numbering stays)
    kBsplineFir15Texture,
    kLinearTexture,
    kBsplineInterp,
    kLinearPerOutput,
    kBsplineFir15PerOutput,
    kBsplineIirFused,
    kBsplineIirFusedNarrow,    // the recursive fused kernel, tap form 0 (4-byte loads, 32 x 1)
    kBsplineIirFusedWide,      // tap form 1 (8-byte pairs, 32 x 1 outputs per warp)
    kBsplineIirFusedNarrow16,  // tap form 2 (4-byte loads, 16 x 2 outputs per warp)
    kBsplineIirFusedRowMajor,  // the default tap form, tiles in blockIdx order (RowMajor)
    kBsplineIirFusedYFirst,    // the default tap form, edges first along y only (EdgesFirstY)
    kCubicPerOutput,           // Keys cubic on the per-output kernel
    kLinearTiled,              // WarpScheduleOverride::Tiled: the tiled kernel
    kCubicTiled,               // Keys cubic on the tiled kernel
    kBsplineInterpTiled,       // bspline_interp on the tiled kernel
    kBsplineIirFusedWide16,    // the recursive fused kernel, tap form 3 (8-byte pairs, 16 x 2)
    kBsplineIirFusedNarrow8,   // tap form 4 (4-byte loads, 8 x 4 outputs per warp)
    kBsplineIirFusedWide8,     // tap form 5 (8-byte pairs, 8 x 4)
};
const char* const kModeNames[] = {"nearest",
                                  "linear",
                                  "cubic",
                                  "bspline_iir",
                                  "bspline_fir15",
                                  "removed",
                                  "bspline_fir15_texture",
                                  "linear_texture",
                                  "bspline_interp",
                                  "linear_per_output",
                                  "bspline_fir15_per_output",
                                  "bspline_iir_fused",
                                  "bspline_iir_fused_narrow",
                                  "bspline_iir_fused_wide",
                                  "bspline_iir_fused_narrow16",
                                  "bspline_iir_fused_rowmajor",
                                  "bspline_iir_fused_yfirst",
                                  "cubic_per_output",
                                  "linear_tiled",
                                  "cubic_tiled",
                                  "bspline_interp_tiled",
                                  "bspline_iir_fused_wide16",
                                  "bspline_iir_fused_narrow8",
                                  "bspline_iir_fused_wide8"};

// Device-to-device copy bandwidth (read + write bytes per second) of this process: median of 20
// event-timed runs of the bench copy kernel over 2 x 256 MiB, measured once.
double copy_bytes_per_s() {
    static double bw = [] {
        Stream st;
        const std::size_t bytes = std::size_t{256} << 20;
        DeviceBuffer a(bytes), b(bytes);
        fill_random_device(a.as<float>(), bytes / 4, 5, st);
        cudaEvent_t e0, e1;
        UPRES_BENCH_CUDA(cudaEventCreate(&e0));
        UPRES_BENCH_CUDA(cudaEventCreate(&e1));
        std::vector<float> ms;
        for (int i = 0; i < 23; ++i) {
            UPRES_BENCH_CUDA(cudaEventRecord(e0, st));
            launch_copy_kernel(a.get(), b.get(), bytes, st);
            UPRES_BENCH_CUDA(cudaEventRecord(e1, st));
            UPRES_BENCH_CUDA(cudaEventSynchronize(e1));
            float t = 0;
            UPRES_BENCH_CUDA(cudaEventElapsedTime(&t, e0, e1));
            if (i >= 3) ms.push_back(t);
        }
        UPRES_BENCH_CUDA(cudaEventDestroy(e0));
        UPRES_BENCH_CUDA(cudaEventDestroy(e1));
        std::sort(ms.begin(), ms.end());
        return 2.0 * static_cast<double>(bytes) / (ms[ms.size() / 2] * 1e-3);
    }();
    return bw;
}

// One image set: source, B-spline coefficients, output.
struct Set {
    DeviceBuffer src, coef, dst;
};

WarpPlan plan_for(Mode mode, const Affine& a, Transform::Kind kind) {
    WarpPlan p;
    p.kind = kind;
    for (int i = 0; i < 6; ++i) p.m[i] = a.m[i];
    p.m[6] = 0, p.m[7] = 0, p.m[8] = 1;
    p.border = Border::Mirror;
    switch (mode) {
        case kNearest:
            p.interp = Interp::Nearest;
            break;
        case kLinear:
        case kLinearTexture:
        case kLinearPerOutput:
        case kLinearTiled:
            p.interp = Interp::Linear;
            break;
        case kCubic:
        case kCubicPerOutput:
        case kCubicTiled:
            p.interp = Interp::Cubic;
            break;
        default:
            p.interp = Interp::BSpline;
    }
    p.fast_texture = mode == kBsplineFir15Texture || mode == kLinearTexture;
    // Schedule comparisons: the per-output kernels or the tiled kernel instead of the policy's
    // (the separable kernel for resizes, the tiled one for other affine maps). A forced kernel
    // that cannot run the case skips it with cuda::warp's error.
    p.schedule =
        mode == kLinearPerOutput || mode == kBsplineFir15PerOutput || mode == kCubicPerOutput
            ? WarpScheduleOverride::PerOutput
        : mode == kLinearTiled || mode == kCubicTiled || mode == kBsplineInterpTiled
            ? WarpScheduleOverride::Tiled
            : WarpScheduleOverride::Policy;
    return p;
}

// Queues one warp of `mode` (prefilter included) from set s.
void enqueue(Mode mode, const Set& s, int sw, int sh, int dw, int dh, const WarpPlan& p,
             cudaStream_t st) {
    const Span2D<const float> src{s.src.as<const float>(), sw, sh, 1, sw};
    const Span2D<float> dst{s.dst.as<float>(), dw, dh, 1, dw};
    if (p.interp != Interp::BSpline) {
        cuda::warp(src, dst, p, st);
        return;
    }
    if (mode == kBsplineInterp || mode == kBsplineInterpTiled) {  // the interpolation step alone
        cuda::warp(src, dst, p, st);
        return;
    }
    if (mode == kBsplineIirFusedRowMajor || mode == kBsplineIirFusedYFirst) {
        cuda::warp_bspline_rec(src, dst, p, 0, st, cuda::RecTapForm::Auto,
                               mode == kBsplineIirFusedRowMajor ? cuda::RecTileOrder::RowMajor
                                                                : cuda::RecTileOrder::EdgesFirstY);
        return;
    }
    if (mode >= kBsplineIirFusedWide16) {  // tap forms 3, 4, 5
        cuda::warp_bspline_rec(src, dst, p, 0, st,
                               static_cast<cuda::RecTapForm>(mode - kBsplineIirFusedWide16 + 3));
        return;
    }
    if (mode >= kBsplineIirFused) {  // the chosen tap form, or forms 0, 1, 2
        cuda::warp_bspline_rec(src, dst, p, 0, st,
                               static_cast<cuda::RecTapForm>(mode - kBsplineIirFused - 1));
        return;
    }
    const Span2D<float> coef{s.coef.as<float>(), sw, sh, 1, sw};
    PrefilterOptions po;
    po.border = Border::Mirror;
    po.fir_length = mode == kBsplineIir ? 0 : 15;
    cuda::bspline_prefilter(src, coef, po, st);
    cuda::warp(Span2D<const float>{coef.data, sw, sh, 1, sw}, dst, p, st);
}

void run_warp(benchmark::State& state, Mode mode, int sw, int sh, int dw, int dh,
              const WarpPlan& p) {
    if (!require_cuda(state)) return;
    Stream st;
    const std::size_t in_bytes = sizeof(float) * sw * sh, out_bytes = sizeof(float) * dw * dh;
    const int sets = rotation_count(2 * in_bytes + out_bytes, device_l2_bytes(), 8);
    std::vector<Set> v(sets);
    for (int i = 0; i < sets; ++i) {
        v[i].src = DeviceBuffer(in_bytes);
        v[i].coef = DeviceBuffer(in_bytes);
        v[i].dst = DeviceBuffer(out_bytes);
        fill_random_device(v[i].src.as<float>(), static_cast<std::size_t>(sw) * sh, 77 + i, st);
    }
    time_device(state, st,
                [&](std::int64_t i) { enqueue(mode, v[i % sets], sw, sh, dw, dh, p, st); });
    const double bytes = static_cast<double>(in_bytes + out_bytes);
    set_rates(state, static_cast<double>(dw) * dh, bytes);
    state.counters["copy_frac"] =
        benchmark::Counter(bytes * static_cast<double>(state.iterations()) / copy_bytes_per_s(),
                           benchmark::Counter::kIsRate);
    state.SetLabel(kModeNames[mode]);
}

// Device copy floor of this process (read + write), the reference of copy_frac.
void Cuda_WarpCopyFloor(benchmark::State& state) {
    if (!require_cuda(state)) return;
    Stream st;
    const std::size_t bytes = std::size_t{256} << 20;
    DeviceBuffer a(bytes), b(bytes);
    fill_random_device(a.as<float>(), bytes / 4, 5, st);
    time_device(state, st, [&](std::int64_t) { launch_copy_kernel(a.get(), b.get(), bytes, st); });
    set_rates(state, 0, 2.0 * bytes);
}

void Cuda_WarpRotate(benchmark::State& state) {
    const Mode mode = static_cast<Mode>(state.range(0));
    const int n = static_cast<int>(state.range(1));
    run_warp(state, mode, n, n, n, n,
             plan_for(mode, rotation(30.0, n, n), Transform::Kind::Affine));
}

// Rotation by other angles (degrees), the recursive fused kernel's chosen and forced tap forms:
// the bank-conflict pattern of its tap reads, hence the form it picks, depends on the angle.
void Cuda_WarpRotateAngle(benchmark::State& state) {
    const Mode mode = static_cast<Mode>(state.range(0));
    const int n = 2048;
    run_warp(state, mode, n, n, n, n,
             plan_for(mode, rotation(static_cast<double>(state.range(1)), n, n),
                      Transform::Kind::Affine));
}

// Rotation by 30 degrees with a scale of 0.7 about the centre: every output maps well inside the
// source (no output takes the border rule), to separate the interior cost from the border cost.
// (tools/peers/peers_npp.py's inside() is the same matrix, for nppiWarpAffineBack.)
Affine rotation_inside(int n) {
    Affine a = rotation(30.0, n, n);
    const double c = 0.5 * (n - 1);
    for (int i : {0, 1, 3, 4}) a.m[i] *= 0.7;
    a.m[2] = c - a.m[0] * c - a.m[1] * c;
    a.m[5] = c - a.m[3] * c - a.m[4] * c;
    return a;
}

void Cuda_WarpRotateInside(benchmark::State& state) {
    const Mode mode = static_cast<Mode>(state.range(0));
    const int n = static_cast<int>(state.range(1));
    run_warp(state, mode, n, n, n, n, plan_for(mode, rotation_inside(n), Transform::Kind::Affine));
}

// The resize of sw x sh to dw x dh as the Affine that plan_for takes.
Affine resize_affine(int sw, int sh, int dw, int dh) {
    double m[9];
    resize_matrix(sw, sh, dw, dh, m);
    Affine a;
    for (int i = 0; i < 6; ++i) a.m[i] = m[i];
    return a;
}

void Cuda_WarpZoom(benchmark::State& state) {
    const Mode mode = static_cast<Mode>(state.range(0));
    const int z = static_cast<int>(state.range(1)), n = 2048, m = n / z;
    run_warp(state, mode, m, m, n, n,
             plan_for(mode, resize_affine(m, m, n, n), Transform::Kind::Resize));
}

// 1080p -> 4K on u8 frames: Linear (warp_affine_kernel), Keys cubic with a = -0.75 on the tiled
// kernel (the default) or on the per-output kernel (modes linear, cubic, cubic_per_output).
void Cuda_WarpVideo(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const Mode mode = static_cast<Mode>(state.range(0));
    const int c = static_cast<int>(state.range(1));
    const int sw = 1920, sh = 1080, dw = 3840, dh = 2160;
    WarpPlan p = plan_for(mode, resize_affine(sw, sh, dw, dh), Transform::Kind::Resize);
    p.cubic_a = -0.75;
    Stream st;
    const std::size_t in_n = std::size_t(sw) * sh * c, out_n = std::size_t(dw) * dh * c;
    const int sets = rotation_count(in_n + out_n, device_l2_bytes(), 8);
    std::vector<DeviceBuffer> in, out;
    for (int i = 0; i < sets; ++i) {
        in.emplace_back(in_n);
        out.emplace_back(out_n);
        fill_random_device(in.back().as<std::uint8_t>(), in_n, 41 + i, st);
    }
    time_device(state, st, [&](std::int64_t i) {
        const int k = static_cast<int>(i % sets);
        cuda::warp(Span2D<const std::uint8_t>{in[k].as<const std::uint8_t>(), sw, sh, c, sw * c},
                   Span2D<std::uint8_t>{out[k].as<std::uint8_t>(), dw, dh, c, dw * c}, p, st);
    });
    set_rates(state, static_cast<double>(dw) * dh, static_cast<double>(in_n + out_n));
    state.SetLabel(std::string(kModeNames[mode]) + (c == 1 ? " luma" : " rgb"));
}

// bench_util's flow_field() for an n x n output, as a device image (dx, dy per pixel).
Image<float> device_flow_field(int n) {
    const std::vector<float> f = flow_field(n, n);
    return clone(ImageView<const float>(f.data(), n, n, 2), Location::Device);
}

// The split kernels on every pixel type they run, and the tiled kernel on integer images, against
// the per-output kernel (WarpScheduleOverride::PerOutput) and, for the affine and perspective
// cases, the split kernels (schedule 4: the default without the tiled kernel) in the same binary:
// 2048^2 images warped by bench_util's flow_field(), rotated by 30 degrees or warped by keystone(),
// Mirror. range(0): the case, 0 a u16 grey flow warp, bilinear (PIV on 16-bit camera frames), 1 the
// same with Keys cubic, 2 a u16 grey rotation, bilinear, 3 a 2-channel float flow warp, bilinear
// (warping a flow field itself), 4 a u8 grey rotation, bilinear, 5 a u8 RGB rotation, bilinear, 6 a
// u16 grey rotation, Keys cubic, 7 a u16 grey keystone, bilinear, 8 a u8 RGB rotation, Keys cubic,
// 9 a float RGB rotation, bilinear, 10 a u8 RGBA rotation, bilinear, 11 a float RGBA rotation,
// bilinear, 12 a u16 RGBA rotation, bilinear, 13 a u8 RGBA rotation, Keys cubic, 14 and 15 a u16
// and a u8 grey rotation scaled by 0.7 (rotation_inside: every output interior), bilinear (the
// NPP peers npp_warpaffine_linear_inside_*, which do the same work: no output maps outside), 16
// a float grey rotation, bilinear (Cuda_WarpRotate/1 on this benchmark's schedules), 17 a float
// grey keystone, bilinear (Api_CudaWarp/6's map on this benchmark's schedules), 18 a u8 grey
// keystone, bilinear;
// range(1): the schedule, 0 the default, 1 the per-output kernel, 2 the tiled kernel, 4 no tiled
// kernel. Bytes:
// input and output, plus the 2-float field of the flow warps.
template <class T>
void time_schedule(benchmark::State& state, int c, const WarpPlan& p, double extra_bytes) {
    Stream st;
    const int n = 2048;
    const std::size_t in_n = std::size_t(n) * n * c;
    const int sets = rotation_count(2 * sizeof(T) * in_n, device_l2_bytes(), 8);
    std::vector<DeviceBuffer> in, out;
    for (int i = 0; i < sets; ++i) {
        in.emplace_back(sizeof(T) * in_n);
        out.emplace_back(sizeof(T) * in_n);
        fill_random_device(in.back().as<T>(), in_n, 51 + i, st);
    }
    time_device(state, st, [&](std::int64_t i) {
        const int k = static_cast<int>(i % sets);
        cuda::warp(Span2D<const T>{in[k].as<const T>(), n, n, c, n * c},
                   Span2D<T>{out[k].as<T>(), n, n, c, n * c}, p, st);
    });
    set_rates(state, static_cast<double>(n) * n, 2.0 * sizeof(T) * in_n + extra_bytes);
}

void Cuda_WarpSplitTypes(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const int kase = static_cast<int>(state.range(0)), n = 2048;
    const bool flow = kase == 0 || kase == 1 || kase == 3,
               persp = kase == 7 || kase == 17 || kase == 18;
    const bool cubic = kase == 1 || kase == 6 || kase == 8 || kase == 13;
    const Transform::Kind kind = flow    ? Transform::Kind::Flow
                                 : persp ? Transform::Kind::Perspective
                                         : Transform::Kind::Affine;
    const bool inside = kase == 14 || kase == 15;  // rotation_inside: every output interior
    WarpPlan p = plan_for(cubic ? kCubic : kLinear,
                          inside ? rotation_inside(n) : rotation(flow ? 0.0 : 30.0, n, n), kind);
    if (persp) keystone(n, p.m);
    // range(1): 0 the policy, 1 the per-output kernel, 2 the tiled kernel, 4 no tiled kernel.
    constexpr WarpScheduleOverride kSched[] = {
        WarpScheduleOverride::Policy, WarpScheduleOverride::PerOutput, WarpScheduleOverride::Tiled,
        WarpScheduleOverride::Policy, WarpScheduleOverride::NoTiled};
    p.schedule = kSched[state.range(1)];
    Image<float> field;  // the flow cases' field (none for the others)
    if (flow) {
        field = device_flow_field(n);
        p.field = span_of(ImageView<const float>(field.view()));
    }
    const double fb = flow ? 8.0 * n * n : 0.0;
    // Per case: the sample type (0 u16, 1 u8, 2 float) and the channel count.
    constexpr int kType[] = {0, 0, 0, 2, 1, 1, 0, 0, 1, 2, 1, 2, 0, 1, 0, 1, 2, 2, 1};
    constexpr int kChannels[] = {1, 1, 1, 2, 1, 3, 1, 1, 3, 3, 4, 4, 4, 4, 1, 1, 1, 1, 1};
    if (kType[kase] == 2)
        time_schedule<float>(state, kChannels[kase], p, fb);
    else if (kType[kase] == 1)
        time_schedule<std::uint8_t>(state, kChannels[kase], p, fb);
    else
        time_schedule<std::uint16_t>(state, kChannels[kase], p, fb);
    const char* const names[] = {
        "u16 flow linear",           "u16 flow cubic",        "u16 rotate linear",
        "f32 2-channel flow linear", "u8 rotate linear",      "u8 rgb rotate linear",
        "u16 rotate cubic",          "u16 keystone linear",   "u8 rgb rotate cubic",
        "f32 rgb rotate linear",     "u8 rgba rotate linear", "f32 rgba rotate linear",
        "u16 rgba rotate linear",    "u8 rgba rotate cubic",  "u16 rotate inside linear",
        "u8 rotate inside linear",   "f32 rotate linear",     "f32 keystone linear",
        "u8 keystone linear"};
    const char* const sched[] = {"", " per-output", " tiled", "", " no tiled"};
    state.SetLabel(std::string(names[kase]) + sched[state.range(1)]);
}

void Cuda_BsplinePrefilter(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const int fir = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1));
    Stream st;
    const std::size_t bytes = sizeof(float) * n * n;
    const int sets = rotation_count(2 * bytes, device_l2_bytes(), 8);
    std::vector<DeviceBuffer> a, b;
    for (int i = 0; i < sets; ++i) {
        a.emplace_back(bytes);
        b.emplace_back(bytes);
        fill_random_device(a.back().as<float>(), static_cast<std::size_t>(n) * n, 9 + i, st);
    }
    PrefilterOptions po;
    po.fir_length = fir;
    time_device(state, st, [&](std::int64_t i) {
        const int k = static_cast<int>(i % sets);
        cuda::bspline_prefilter(Span2D<const float>{a[k].as<const float>(), n, n, 1, n},
                                Span2D<float>{b[k].as<float>(), n, n, 1, n}, po, st);
    });
    set_rates(state, static_cast<double>(n) * n, 2.0 * bytes);
    state.SetLabel(fir == 0 ? "iir" : "fir" + std::to_string(fir));
}

// The public call upres::warp on device images (what an application runs: plan, validation,
// temporaries, kernels), one call per timed iteration with a synchronization after each (the
// benchmark loop), so temporaries that the device's pool would give back at a synchronization
// are allocated again at every call. range(0): the case; range(1): 1 keeps the temporaries in
// upres's pool between calls (the library's behaviour), 0 gives them back at every
// synchronization (release threshold 0, as the device's default pool).
//   0: 2048^2 float32 rotation by 30 degrees, exact B-spline (the recursive fused kernel: no
//      temporaries; compare with Cuda_WarpRotate/bspline_iir_fused);
//   1: the same with the FIR15 prefilter (two passes: a 16 MiB coefficient temporary);
//   2: 1920 x 1080 RGB u8 zoomed to 3840 x 2160, exact B-spline (a float staging image and the
//      coefficients, 24 MiB each: the video case);
//   3: 2048^2 float32 perspective warp, exact B-spline (two passes, as 1);
//   4: 2048^2 float32 warp by a displacement field (Transform::make_flow: the optical-flow /
//      PIV warp), exact B-spline (prefilter, then the per-output kernel reading the field);
//      the field is bench_util.hpp's flow_field(), the peers' (tools/peers/peers_warp.py);
//   5: the same warp, bilinear;
//   6, 7, 8: 2048^2 float32 perspective warp by bench_util.hpp's keystone() (the homography of
//      the CPU benchmark Warp_CpuPerspective and of the NPP peer), bilinear, Keys cubic, exact
//      B-spline (stereo rectification, plane-to-plane registration).
//   9: the warp of 4 and 5 with Keys cubic, a = -0.75 (PyTorch's bicubic, the peer
//      torch_grid_sample_bicubic_flow_2048).
//   10, 11, 12: the warps of 4, 5 and 9 with WarpOptions::check_field = false (no finiteness
//      check of the field: the call stays asynchronous).
// Bytes: input and output, plus the 2-float field for 4, 5, 9 and 10-12.
enum ApiCase {
    kApiRotateIir,
    kApiRotateFir15,
    kApiZoomRgbU8,
    kApiPerspective,
    kApiFlowBspline,
    kApiFlowLinear,
    kApiKeystoneLinear,
    kApiKeystoneCubic,
    kApiKeystoneBspline,
    kApiFlowCubic,
    kApiFlowBsplineUnchecked,
    kApiFlowLinearUnchecked,
    kApiFlowCubicUnchecked
};
const char* const kApiNames[] = {"rotate_bspline_iir",
                                 "rotate_bspline_fir15",
                                 "zoom_rgb_u8_1080p_to_4k",
                                 "perspective_bspline_iir",
                                 "flow_bspline_iir",
                                 "flow_linear",
                                 "keystone_linear",
                                 "keystone_cubic",
                                 "keystone_bspline_iir",
                                 "flow_cubic",
                                 "flow_bspline_iir_unchecked",
                                 "flow_linear_unchecked",
                                 "flow_cubic_unchecked"};

template <class T>
void time_api(benchmark::State& state, int sw, int sh, int dw, int dh, int c, const Transform& t,
              const WarpOptions& o, double extra_bytes = 0) {
    Stream st;
    const std::size_t in_n = std::size_t(sw) * sh * c, out_n = std::size_t(dw) * dh * c;
    const int sets = rotation_count(sizeof(T) * (in_n + out_n), device_l2_bytes(), 8);
    std::vector<DeviceBuffer> in, out;
    for (int i = 0; i < sets; ++i) {
        in.emplace_back(sizeof(T) * in_n);
        out.emplace_back(sizeof(T) * out_n);
        fill_random_device(in.back().as<T>(), in_n, 31 + i, st);
    }
    Context ctx;
    ctx.backend = Backend::Cuda;
    ctx.cuda_stream = st.get();
    time_device(state, st, [&](std::int64_t i) {
        const int k = static_cast<int>(i % sets);
        warp(ImageView<const T>(in[k].as<const T>(), sw, sh, c, 0, Location::Device),
             ImageView<T>(out[k].as<T>(), dw, dh, c, 0, Location::Device), t, o, ctx);
    });
    set_rates(state, static_cast<double>(dw) * dh,
              static_cast<double>(sizeof(T) * (in_n + out_n)) + extra_bytes);
}

void Api_CudaWarp(benchmark::State& state) {
    if (!require_cuda(state)) return;
    const auto kase = static_cast<ApiCase>(state.range(0));
    const bool keep = state.range(1) != 0;
    cuda::set_temp_caching(keep);
    WarpOptions o;  // B-spline, exact prefilter, Mirror
    const int n = 2048;
    switch (kase) {
        case kApiRotateIir:
        case kApiRotateFir15:
            o.prefilter = kase == kApiRotateFir15 ? 15 : 0;
            time_api<float>(state, n, n, n, n, 1, Transform::make_affine(rotation(30.0, n, n)), o);
            break;
        case kApiZoomRgbU8:
            time_api<std::uint8_t>(state, 1920, 1080, 3840, 2160, 3, Transform::make_resize(), o);
            break;
        case kApiPerspective: {
            Homography h;  // a mild keystone about the centre
            const double hs[9] = {1.05, 0.08, -60.0, -0.03, 0.97, 40.0, 2e-5, -1.5e-5, 1.0};
            for (int i = 0; i < 9; ++i) h.h[i] = hs[i];
            time_api<float>(state, n, n, n, n, 1, Transform::make_perspective(h), o);
            break;
        }
        case kApiKeystoneLinear:
        case kApiKeystoneCubic:
        case kApiKeystoneBspline: {
            if (kase == kApiKeystoneLinear) o.interp = Interp::Linear;
            if (kase == kApiKeystoneCubic) o.interp = Interp::Cubic;
            Homography h;
            keystone(n, h.h);
            time_api<float>(state, n, n, n, n, 1, Transform::make_perspective(h), o);
            break;
        }
        case kApiFlowBspline:
        case kApiFlowLinear:
        case kApiFlowCubic:
        case kApiFlowBsplineUnchecked:
        case kApiFlowLinearUnchecked:
        case kApiFlowCubicUnchecked: {
            if (kase == kApiFlowLinear || kase == kApiFlowLinearUnchecked)
                o.interp = Interp::Linear;
            if (kase == kApiFlowCubic || kase == kApiFlowCubicUnchecked)
                o.interp = Interp::Cubic, o.cubic_a = -0.75;
            o.check_field = kase < kApiFlowBsplineUnchecked;
            const Image<float> field = device_flow_field(n);
            time_api<float>(state, n, n, n, n, 1, Transform::make_flow(field.view()), o,
                            8.0 * n * n);
            break;
        }
    }
    state.counters["pool_MiB"] = static_cast<double>(cuda::temp_reserved_bytes()) / (1 << 20);
    cuda::set_temp_caching(true);
    state.SetLabel(std::string(kApiNames[kase]) + (keep ? " pool" : " release"));
}

// What a cudaMalloc + cudaFree pair of `MiB` costs on this device (the device Image that the
// two-pass warp allocated per call before upres's pool; cudaFree also waits for the device).
void Cuda_MallocFree(benchmark::State& state) {
    if (!require_cuda(state)) return;
    Stream st;
    const std::size_t bytes = static_cast<std::size_t>(state.range(0)) << 20;
    time_device(state, st, [&](std::int64_t) {
        void* p = nullptr;
        UPRES_BENCH_CUDA(cudaMalloc(&p, bytes));
        UPRES_BENCH_CUDA(cudaFree(p));
    });
}

// The copy floor (the same kernel copy_bytes_per_s() times, for the report).
BENCHMARK(Cuda_WarpCopyFloor)->UseManualTime()->Unit(benchmark::kMicrosecond);

// Every mode but the tiled-schedule comparisons (resizes' schedules, Cuda_WarpZoom / Video).
std::vector<std::int64_t> rotate_modes() {
    std::vector<std::int64_t> m;
    for (int k = kNearest; k <= kBsplineIirFusedWide8; ++k)
        if (k != kLinearTiled && k != kCubicTiled && k != kBsplineInterpTiled &&
            k != kRemovedFir15Fused)
            m.push_back(k);
    return m;
}

BENCHMARK(Cuda_WarpRotate)
    ->ArgsProduct({rotate_modes(), {2048}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(Cuda_WarpRotateAngle)
    ->ArgsProduct({{kBsplineIirFused, kBsplineIirFusedNarrow, kBsplineIirFusedWide,
                    kBsplineIirFusedNarrow16, kBsplineIirFusedRowMajor, kBsplineIirFusedWide16,
                    kBsplineIirFusedNarrow8, kBsplineIirFusedWide8},
                   {-30, 10, 45, 60}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(Cuda_WarpRotateInside)
    ->ArgsProduct({{kNearest, kLinear, kCubic, kBsplineInterp, kLinearPerOutput, kCubicPerOutput},
                   {2048}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(Cuda_WarpZoom)
    ->ArgsProduct({{kLinear, kBsplineIir, kBsplineFir15, kBsplineIirFused, kBsplineIirFusedRowMajor,
                    kCubic, kCubicPerOutput, kBsplineInterp, kLinearTiled, kCubicTiled,
                    kBsplineInterpTiled},
                   {2, 4, 8, 16}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(Cuda_WarpVideo)
    ->ArgsProduct({{kLinear, kCubic, kCubicPerOutput, kLinearTiled, kCubicTiled}, {1, 3}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(Cuda_WarpSplitTypes)
    ->ArgsProduct({{0, 1, 3}, {0, 1}})
    ->ArgsProduct({{2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18}, {0, 4, 1}})
    ->ArgsProduct({{2, 4, 7, 10, 12, 13, 17, 18}, {2}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(Api_CudaWarp)
    ->ArgsProduct({{kApiRotateIir, kApiRotateFir15, kApiZoomRgbU8, kApiPerspective, kApiFlowBspline,
                    kApiFlowLinear, kApiKeystoneLinear, kApiKeystoneCubic, kApiKeystoneBspline,
                    kApiFlowCubic, kApiFlowBsplineUnchecked, kApiFlowLinearUnchecked,
                    kApiFlowCubicUnchecked},
                   {1, 0}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(Cuda_MallocFree)->Arg(16)->Arg(24)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(Cuda_BsplinePrefilter)
    ->ArgsProduct({{0, 15}, {1024, 2048}})
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
#endif

}  // namespace
}  // namespace upres::bench
