// CUDA backend of upres::warp: schedules of warp_math.hpp (no formula of its own).
//
// Exact path (plan.fast_texture = false), one kernel per (pixel type, interpolation, channels):
//  * blocks of 32 x 8 threads, each thread 4 outputs of one column (a 32 x 32 output tile);
//  * output -> input coordinates in double with the host's roundings (no FMA contraction:
//    map_matrix_host_rounding, warp_cuda_util.cuh), bit-identical to the reference's and the
//    CPU's, so nearest ties and the Constant edge test agree; weights and sums in float;
//  * outputs whose taps all lie inside the source (and that map_coord would not move) take a
//    branch-free path: warp_math's interp_weights, a fixed tap loop, loads through the read-only
//    cache (__ldg), rows summed first as sample_point does; the others (near or beyond the
//    border) call sample_point<float> itself;
//  * Resize, and Affine maps with m1 = m3 = 0 (every type, interpolation and channel count):
//    warp_separable_kernel, each axis's taps, weights and border test computed once per output
//    column and per output row, and per thread the row sums of the source rows its column reads
//    kept in registers while it walks down the column (1080p -> 4K u8 luma Keys 27 us against
//    58 us tiled, H200);
//  * other Affine maps with Linear, Keys cubic or B-spline on float samples (the image, or the
//    B-spline coefficients; 1, 3, 4 channels), and Linear (3 channels) or Keys cubic on
//    u8 / u16 images (staged as float): warp_tile_lean_kernel, the tiled affine schedule of
//    warp_cuda_util.cuh (each block stages its 32 x 32 tile's input box in shared memory, already
//    border-extended; float coordinates stepped from the tile origin; no border logic per output);
//    box constants per plan from the host (LeanGrid), shared-memory pitch chosen per plan for
//    few bank conflicts (bank_pitch), float4 cp.async staging of interior boxes;
//  * other Affine maps with Linear on u8 / u16 grey and RGBA (and plans whose boxes do not
//    fit): warp_affine_kernel, coordinates split once per thread in double and stepped in
//    float; when all 4 outputs of a thread are interior, their taps are loaded with no branch in
//    between (ILP); near or beyond the border, outputs within one period of the image read
//    border-extended taps at their float coordinate (Mirror, Reflect, Wrap; Nearest for
//    Linear), the others take the exact per-output path above (the field and perspective split
//    kernels likewise);
//  * 4-channel pixels are loaded (interior taps) and stored as one 4-, 8- or 16-byte vector
//    where the image keeps every pixel aligned (pixel_aligned), sample by sample otherwise;
//  * resize with antialias: one thread per output, per-axis taps and weights from
//    warp_math.hpp's resize_aa_* in double, normalised, in the reference's order.
// Measured on an H200 (bench/warp_bench.cpp; docs/ops/warp.md, "CUDA schedules").
//
// Fast texture mode (plan.fast_texture = true), a separate, named mode:
//  * Linear: one hardware bilinear fetch (cudaFilterModeLinear, 8-bit fractional weights);
//  * BSpline: 4 hardware bilinear fetches on the coefficients (Sigg & Hadwiger 2005; Ruijters
//    et al. 2008): per axis g0 = w0 + w1 at offset -1 + w1 / g0, g1 = w2 + w3 at 1 + w3 / g1;
//  * outputs whose taps leave the source (the border rule) and Nearest / Cubic take the exact
#pragma once

//    formula: the texture unit has no whole-sample mirror and Keys weights are not positive.
//  The texture reads the source in place when it is float, 1/2/4 channels and aligned for
//  textures; otherwise it is first copied into an aligned float buffer (slower).
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/convert_math.hpp"
#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cuda_util.cuh"
#include "ops/warp/warp_schedule.hpp"

#include "ops/warp/warp_cuda_parts.hpp"

namespace upres::cuda {

namespace detail {
// Texture objects over caller memory, created once and cached (defined in warp_cuda.cu: one
// cache for every part).
cudaTextureObject_t create_texture(const void* ptr, int w, int h, int ct, std::size_t pitch_bytes);
cudaTextureObject_t cached_texture(const void* ptr, int w, int h, int ct, std::size_t pitch_bytes);
}  // namespace detail

// Internal linkage: every part (warp_cuda_part_*.cu) compiles its own kernels.
namespace {

using namespace detail;

constexpr int kTileW = 32;  // threads along x = output columns per block
constexpr int kRowsY = 8;   // threads along y
constexpr int kPerThread = 4;
constexpr int kTileH = kRowsY * kPerThread;
static_assert(kCudaBoxAlign % kTileW == 0 && kCudaBoxAlign % kTileH == 0,
              "boxes of the output start on a tile");

// A thread's output column or row: its block's and its own offset, plus with kBox its box's corner
// (WarpPlan::box_x0 / box_y0, warp_tiled's boxes). The split and lean kernels take kBox as a
// template argument, false for whole calls: the corner as a runtime value cost the u8 RGBA split
// affine kernel 80 registers instead of 64 (3 blocks an SM instead of 4: a 2048^2 rotation 1.14x
// slower on an H200; 1.00x with the template), which neither telling the compiler that the index
// is not negative nor adding the corner in whole blocks avoided.
template <bool kBox>
__device__ __forceinline__ int out_index(int corner, unsigned block, unsigned size,
                                         unsigned thread) {
    const int v = static_cast<int>(block * size + thread);
    if constexpr (kBox) return corner + v;
    return v;
}
// f(std::true_type) for a box of the output (warp_tiled), f(std::false_type) for a whole call:
// the kBox argument of the kernels f launches.
template <class F>
decltype(auto) with_box(const WarpPlan& p, F&& f) {
    if (p.box_x0 != 0 || p.box_y0 != 0) return f(std::true_type{});
    return f(std::false_type{});
}

// A u8 / u16 sample as float without the conversion unit (I2F runs at 16 per clock and SM on
// sm_90, FP32 adds at 128): its bits as the low mantissa bits of 2^23 + x, then 2^23 taken off
// (exact: x < 2^23).
__device__ __forceinline__ float int_sample_to_float(unsigned x) {
    return __fsub_rn(__uint_as_float(0x4B000000u | x), 8388608.0f);
}

template <class S>
__device__ __forceinline__ float load(const S* p) {
    if constexpr (std::is_same_v<S, float>)
        return __ldg(p);
    else
        return int_sample_to_float(__ldg(p));
}

// 4-channel pixels as one vector access (uchar4, ushort4, float4): where the span's data pointer
// and row stride keep every pixel aligned to 4 * sizeof(T) bytes, true of every image upres
// allocates and of sub-views at any pixel. The samples and the arithmetic on them are those of
// the per-sample path, so the results are the same bits. (2-channel pixels as float2 measured
// slower: 2-channel float flow warp 41.8 -> 51.3 us, H200.)
template <class T>
__device__ __forceinline__ bool pixel_aligned(const T* data, std::ptrdiff_t stride) {
    return (reinterpret_cast<std::uintptr_t>(data) % (4 * sizeof(T))) == 0 && stride % 4 == 0;
}

// A u8 byte b (0-3) of w, or a u16 half h (0-1), as float: PRMT places it under the exponent
// bits of 2^23 (int_sample_to_float without a separate extraction).
__device__ __forceinline__ float byte_to_float(unsigned w, int b) {
    return __fsub_rn(__uint_as_float(__byte_perm(w, 0x4Bu, 0x4550u | b)), 8388608.0f);
}
__device__ __forceinline__ float half_to_float(unsigned w, int h) {
    return __fsub_rn(__uint_as_float(__byte_perm(w, 0x4Bu, h ? 0x4532u : 0x4510u)), 8388608.0f);
}

// The 4 samples of the pixel at p (pixel_aligned) as floats.
template <class S>
__device__ __forceinline__ void load_pixel(const S* p, float (&v)[4]) {
    if constexpr (std::is_same_v<S, float>) {
        const float4 q = __ldg(reinterpret_cast<const float4*>(p));
        v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
    } else if constexpr (sizeof(S) == 1) {
        const unsigned w = __ldg(reinterpret_cast<const unsigned*>(p));
#pragma unroll
        for (int c = 0; c < 4; ++c) v[c] = byte_to_float(w, c);
    } else {
        const uint2 q = __ldg(reinterpret_cast<const uint2*>(p));
        v[0] = half_to_float(q.x, 0), v[1] = half_to_float(q.x, 1);
        v[2] = half_to_float(q.y, 0), v[3] = half_to_float(q.y, 1);
    }
}

// Stores the 4 values of one pixel at o (pixel_aligned) as one vector, each saturated as store().
template <class D>
__device__ __forceinline__ void store_pixel(D* o, const float* v) {
    if constexpr (std::is_same_v<D, float>) {
        *reinterpret_cast<float4*>(o) = make_float4(v[0], v[1], v[2], v[3]);
    } else if constexpr (sizeof(D) == 1) {
        *reinterpret_cast<uchar4*>(o) =
            make_uchar4(saturate_from_float<D>(v[0]), saturate_from_float<D>(v[1]),
                        saturate_from_float<D>(v[2]), saturate_from_float<D>(v[3]));
    } else {
        *reinterpret_cast<ushort4*>(o) =
            make_ushort4(saturate_from_float<D>(v[0]), saturate_from_float<D>(v[1]),
                         saturate_from_float<D>(v[2]), saturate_from_float<D>(v[3]));
    }
}

// One sample of a shared-memory box: float copied asynchronously (the caller commits and waits),
// u8 / u16 loaded and converted.
template <class S>
__device__ __forceinline__ void stage_sample(float* d, const S* g) {
    if constexpr (std::is_same_v<S, float>)
        __pipeline_memcpy_async(d, g, sizeof(float));
    else
        *d = load(g);
}

// The tap sum of sample_point, sample by sample: out[c] = sum_j wy[j] sum_k wx[k]
// rows[j][cols[k] + c] (rows first, then columns). sample_interior (fixed taps) and
// sample_extended (border-extended taps) differ only in the rows and columns they pass.
template <class S, int C, int K>
__device__ __forceinline__ void sum_taps(const S* const (&rows)[K], const int (&cols)[K],
                                         const float* wx, const float* wy, float out[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) out[c] = 0.0f;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        float racc[C];
#pragma unroll
        for (int c = 0; c < C; ++c) racc[c] = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k)
#pragma unroll
            for (int c = 0; c < C; ++c) racc[c] += wx[k] * load(rows[j] + cols[k] + c);
#pragma unroll
        for (int c = 0; c < C; ++c) out[c] += wy[j] * racc[c];
    }
}

// Interior sample from a split coordinate u = iu + tu (iu = floor(u), tu in [0, 1); Nearest:
// iu = floor(u + 0.5)): the formula of sample_point with fixed taps (rows first, then columns).
template <class S, int C, Interp I>
__device__ __forceinline__ void sample_interior(Span2D<const S> src, int iu, float tu, int iv,
                                                float tv, float a, float out[C]) {
    constexpr int K = kTaps<I>;
    int ix, iy;
    float wx[4], wy[4];
    if constexpr (I == Interp::Nearest) {
        ix = iu;  // Nearest: the caller passes floor(u + 0.5) (computed in double: ties as ref)
        iy = iv;
        (void)tu, (void)tv;
        wx[0] = wy[0] = 1.0f;
    } else {
        interp_weights<float>(tu, I, a, wx);
        interp_weights<float>(tv, I, a, wy);
        ix = iu - (K == 4 ? 1 : 0);
        iy = iv - (K == 4 ? 1 : 0);
    }
    const S* base = src.row(iy) + static_cast<std::ptrdiff_t>(ix) * C;
#pragma unroll
    for (int c = 0; c < C; ++c) out[c] = 0.0f;
    // 4 channels: one vector load per tap where aligned (u8 RGBA rotation on the split kernel,
    // H200: 66.2 -> 44.7 us). 2 channels keep the per-sample loads: the vector path made the
    // 2-channel float flow warp slower (41.8 -> 51.3 us, H200). The
    // vector tap loop is written out beside sum_taps on purpose: one template for both (a bool
    // parameter choosing the load) compiled the u16 RGBA rotation 14% slower (H200: 50.5 -> 57.8
    // us).
    if constexpr (C == 4) {
        if (pixel_aligned<S>(src.data, src.stride)) {
#pragma unroll
            for (int j = 0; j < K; ++j) {
                const S* r = base + j * src.stride;
                float racc[C];
#pragma unroll
                for (int c = 0; c < C; ++c) racc[c] = 0.0f;
#pragma unroll
                for (int k = 0; k < K; ++k) {
                    float px[C];
                    load_pixel<S>(r + k * C, px);
#pragma unroll
                    for (int c = 0; c < C; ++c) racc[c] += wx[k] * px[c];
                }
#pragma unroll
                for (int c = 0; c < C; ++c) out[c] += wy[j] * racc[c];
            }
            return;
        }
    }
    const S* rows[K];
    int cols[K];
#pragma unroll
    for (int j = 0; j < K; ++j) rows[j] = base + j * src.stride;
#pragma unroll
    for (int k = 0; k < K; ++k) cols[k] = k * C;
    sum_taps<S, C, K>(rows, cols, wx, wy, out);
}

template <class D, int C>
__device__ __forceinline__ void store(Span2D<D> dst, int x, int y, const float* v) {
    D* o = dst.row(y) + x * C;
    if constexpr (C == 4) {
        if (pixel_aligned<D>(dst.data, dst.stride)) {
            store_pixel<D>(o, v);
            return;
        }
    }
#pragma unroll
    for (int c = 0; c < C; ++c) o[c] = saturate_from_float<D>(v[c]);
}

// Border-extended taps (the split kernels' outputs near or beyond the border; docs/ops/warp.md,
// CUDA schedules). For Mirror, Reflect and Wrap, interpolating the border-extended samples
// at the unmapped coordinate is the border rule of warp_math.hpp: map_coord reflects or wraps u
// about the centres that the tap extension is symmetric about, and the kernels are even (the
// argument of the tiled kernel's border-extended boxes, warp_cuda_util.cuh); for Linear,
// Nearest's clamped coordinate and clamped taps give the same value. ext_index is tap_index's
// extension without its loop over periods: valid for taps in [-(n - 1), 2n - 2] (ExtRange), which
// every output that maps within one period of the image meets.
template <Interp I>
struct ExtRange {
    static constexpr int kLo = kTaps<I> == 4 ? 1 : 0;  // first tap = iu - kLo
    int w, h;
    bool on;  // the plan's border and interpolation allow the extended path
    template <class S>
    __device__ ExtRange(Span2D<const S> src, const WarpPlan& p)
        : w(src.width),
          h(src.height),
          on(p.pad == 0 &&
             (p.border == Border::Mirror || p.border == Border::Reflect ||
              p.border == Border::Wrap || (p.border == Border::Nearest && I == Interp::Linear))) {}
    // Taps iu - kLo .. iu - kLo + K - 1 within [-(n - 1), 2n - 2] on both axes.
    __device__ bool operator()(int iu, int iv) const {
        constexpr int K = kTaps<I>;
        return on && iu - kLo >= 1 - w && iu - kLo + K - 1 <= 2 * w - 2 && iv - kLo >= 1 - h &&
               iv - kLo + K - 1 <= 2 * h - 2;
    }
};

__device__ __forceinline__ int ext_index(int i, int n, Border b) {
    switch (b) {
        case Border::Mirror:  // period 2n - 2: |i| folded about n - 1
            return (n - 1) - abs((n - 1) - abs(i));
        case Border::Reflect: {  // period 2n: i < 0 -> -1 - i, i >= n -> 2n - 1 - i
            const int m = i ^ (i >> 31);
            return min(m, 2 * n - 1 - m);
        }
        case Border::Wrap:
            return i < 0 ? i + n : (i >= n ? i - n : i);
        default:  // Nearest (Linear only)
            return min(max(i, 0), n - 1);
    }
}

// sample_interior's formula (same taps, weights and order of the sums, so the same bits where
// every tap is inside) with each tap's row and column through ext_index.
template <class S, int C, Interp I>
__device__ __forceinline__ void sample_extended(Span2D<const S> src, int iu, float tu, int iv,
                                                float tv, float a, Border b, float out[C]) {
    static_assert(I != Interp::Nearest, "Nearest keeps the double path");
    constexpr int K = kTaps<I>;
    float wx[4], wy[4];
    interp_weights<float>(tu, I, a, wx);
    interp_weights<float>(tv, I, a, wy);
    const int ix = iu - ExtRange<I>::kLo, iy = iv - ExtRange<I>::kLo;
    const S* rows[K];
    int cols[K];
#pragma unroll
    for (int j = 0; j < K; ++j) rows[j] = src.row(ext_index(iy + j, src.height, b));
#pragma unroll
    for (int k = 0; k < K; ++k) cols[k] = ext_index(ix + k, src.width, b) * C;
    sum_taps<S, C, K>(rows, cols, wx, wy, out);
}

// The border rule (sample_point<float>) for a coordinate given in double.
template <class S, int C, Interp I>
__device__ __forceinline__ void sample_border(Span2D<const S> src, double u, double v,
                                              const WarpPlan& p, float out[C]) {
    float r[4];
    Span2D<const S> s = src;
    s.channels = C;
    const bool in = sample_point<float, S>(s, static_cast<float>(u), static_cast<float>(v), I,
                                           p.border, p.cubic_a, r);
#pragma unroll
    for (int c = 0; c < C; ++c) out[c] = in ? r[c] : p.fill;
}

// One output of the exact path from a double coordinate (perspective, remap, flow).
template <class S, class D, int C, Interp I>
__device__ __forceinline__ void warp_one(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p,
                                         const double m[9], int x, int y) {
    double u, v;
    input_point(p, m, x, y, u, v);
    float out[C];
    if (interior<I>(u, src.width) && interior<I>(v, src.height)) {
        if constexpr (I == Interp::Nearest) {
            sample_interior<S, C, I>(src, static_cast<int>(floor(u + 0.5)), 0.0f,
                                     static_cast<int>(floor(v + 0.5)), 0.0f, p.cubic_a, out);
        } else {
            const double fu = floor(u), fv = floor(v);
            sample_interior<S, C, I>(src, static_cast<int>(fu), static_cast<float>(u - fu),
                                     static_cast<int>(fv), static_cast<float>(v - fv), p.cubic_a,
                                     out);
        }
    } else {
        sample_border<S, C, I>(src, u, v, p, out);
    }
    store<D, C>(dst, x, y, out);
}

// Blocks of 32 x 8 threads; a warp is 32 consecutive outputs of a row and each thread does 4
// rows 8 apart (a 32 x 32 output tile). Tried on the H200 (docs/ops/warp.md): warps of 8 x 4
// outputs and float-stepped coordinates made rotation 1.7x slower.
// The thread's outputs (x, y0 + 8 r), r < kPerThread, each by warp_one.
template <class S, class D, int C, Interp I>
__device__ __forceinline__ void warp_thread_outputs(Span2D<const S> src, Span2D<D> dst,
                                                    const WarpPlan& p, int x, int y0) {
    if (x >= dst.width) return;
    double m[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) m[i] = p.m[i];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
        const int y = y0 + r * kRowsY;
        if (y < dst.height) warp_one<S, D, C, I>(src, dst, p, m, x, y);
    }
}

template <class S, class D, int C, Interp I>
__global__ void __launch_bounds__(kTileW* kRowsY)
    warp_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p) {
    warp_thread_outputs<S, D, C, I>(src, dst, p, p.box_x0 + blockIdx.x * kTileW + threadIdx.x,
                                    p.box_y0 + blockIdx.y * kTileH + threadIdx.y);
}

// Interior in split form: taps iu - 1 .. iu + 2 (cubic) or iu .. iu + 1 (linear) inside, and u at
// least one pixel from the Constant border's fill test: iu in [1, n - 2) on both axes, i.e.
// (iu - 1) < n - 3 as unsigned; big: n >= 4 (smaller images never take the fixed-tap path). The
// test of warp_affine_kernel and warp_field_kernel.
struct SplitInterior {
    unsigned wlim, hlim;
    bool big;
    template <class S>
    __device__ explicit SplitInterior(Span2D<const S> src)
        : wlim(static_cast<unsigned>(src.width - 3)),
          hlim(static_cast<unsigned>(src.height - 3)),
          big(src.width >= 4 && src.height >= 4) {}
    __device__ bool operator()(int iu, int iv) const {
        return static_cast<unsigned>(iu - 1) < wlim && static_cast<unsigned>(iv - 1) < hlim;
    }
};

// The outputs (x, y0 + kRowsY r) of a thread of warp_affine_kernel / warp_field_kernel from their
// split coordinates (iu + tu, iv + tv): when all are interior (all_in, taps in [1, n - 2)) and
// in the image, with no branch between them, so their loads are issued together (the common
// case); otherwise each by the fixed-tap path where interior (in[r]) and by the exact per-output
// path (warp_one) elsewhere.
template <class S, class D, int C, Interp I>
__device__ __forceinline__ void split_outputs(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p,
                                              int x, int y0, const int (&iu)[kPerThread],
                                              const float (&tu)[kPerThread],
                                              const int (&iv)[kPerThread],
                                              const float (&tv)[kPerThread],
                                              const bool (&fin)[kPerThread],
                                              const bool (&in)[kPerThread], bool all_in) {
    const bool full = y0 + (kPerThread - 1) * kRowsY < dst.height;
    if (all_in && full) {
        // The common case: no branch between the outputs, so their loads are issued together.
        float out[kPerThread][C];
#pragma unroll
        for (int r = 0; r < kPerThread; ++r)
            sample_interior<S, C, I>(src, iu[r], tu[r], iv[r], tv[r], p.cubic_a, out[r]);
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) store<D, C>(dst, x, y0 + r * kRowsY, out[r]);
        return;
    }
    // Near or beyond the border (tested only here, so the interior case above pays nothing):
    // outputs whose taps lie within one period take the extended taps, all 4 with no branch
    // between them where they all do; the others the exact per-output path.
    const ExtRange<I> er(src, p);
    bool ext[kPerThread];
    bool all_ext = true;
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
        ext[r] = fin[r] && er(iu[r], iv[r]);
        all_ext = all_ext && (in[r] || ext[r]);
    }
    if (all_ext && full) {
        float out[kPerThread][C];
#pragma unroll
        for (int r = 0; r < kPerThread; ++r)
            sample_extended<S, C, I>(src, iu[r], tu[r], iv[r], tv[r], p.cubic_a, p.border, out[r]);
#pragma unroll
        for (int r = 0; r < kPerThread; ++r) store<D, C>(dst, x, y0 + r * kRowsY, out[r]);
        return;
    }
    double m[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) m[i] = p.m[i];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
        const int y = y0 + r * kRowsY;
        if (y >= dst.height) break;
        if (in[r] || ext[r]) {
            float out[C];
            sample_extended<S, C, I>(src, iu[r], tu[r], iv[r], tv[r], p.cubic_a, p.border, out);
            store<D, C>(dst, x, y, out);
        } else {
            warp_one<S, D, C, I>(src, dst, p, m, x, y);
        }
    }
}

// The per-thread body of the split kernels (warp_affine_kernel, warp_field_kernel,
// warp_persp_kernel): coord(r, iu, tu, iv, tv) splits the coordinate of output (x, y0 + kRowsY r)
// into integer + float fraction and returns false where it is not finite (warp_one then computes
// that output); ok = false sends every output there. Outputs whose taps lie in [1, n - 2) on both
// axes take split_outputs' fixed-tap path, those within one period of the image (for the borders
// ExtRange allows) its extended taps.
template <class S, class D, int C, Interp I, class Coord>
__device__ __forceinline__ void split_thread(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p,
                                             int x, int y0, bool ok, Coord coord) {
    const SplitInterior inside(src);
    int iu[kPerThread], iv[kPerThread];
    float tu[kPerThread], tv[kPerThread];
    bool fin[kPerThread], in[kPerThread];
    bool all_in = ok && inside.big;
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
        const bool finite = coord(r, iu[r], tu[r], iv[r], tv[r]);
        fin[r] = ok && inside.big && finite;
        in[r] = fin[r] && inside(iu[r], iv[r]);
        all_in = all_in && in[r];
    }
    split_outputs<S, D, C, I>(src, dst, p, x, y0, iu, tu, iv, tv, fin, in, all_in);
}

// Affine / Resize (dispatched for Linear only, see launch_exact): each thread splits the
// coordinate of its first output (x, y0) once in double (SplitAffine: host rounding, then integer +
// float fraction) and steps to its other outputs (x, y0 + 8 r) in float (fmaf; error ~1e-6 pixel,
// far below the tolerances). An output whose float taps lie in the conservative interior [1, n - 2)
// on both axes takes the fixed-tap path with no border logic and no double arithmetic: there the
// exact coordinate is inside [0, n - 1] too (the float one is within 1e-5 of it), so the Constant
// border's fill test cannot differ, and near a tap boundary every interpolation here is continuous
// (a floor that differs by one gives the same value up to rounding). Every other output (near or
// beyond the border) recomputes its coordinate exactly as warp_one does. Nearest keeps the double
// path: its ties (floor(u + 0.5) at half-integers, 20% of the outputs of some resizes) must resolve
// as on the CPU. Instantiated for the kSplitFast combinations below.
template <class S, class D, int C, Interp I, bool kBox>
__global__ void __launch_bounds__(kTileW* kRowsY)
    warp_affine_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p) {
    static_assert(I != Interp::Nearest, "Nearest needs the double coordinates of warp_kernel");
    const int x = out_index<kBox>(p.box_x0, blockIdx.x, kTileW, threadIdx.x);
    if (x >= dst.width) return;
    const int y0 = out_index<kBox>(p.box_y0, blockIdx.y, kTileH, threadIdx.y);
    SplitAffine sa;
    const bool ok = sa.init(p, p.m, x, y0);
    split_thread<S, D, C, I>(src, dst, p, x, y0, ok,
                             [&](int r, int& iu, float& tu, int& iv, float& tv) {
                                 sa.at(r * kRowsY, iu, tu, iv, tv);
                                 return true;
                             });
}

// The (source, output, channels, interpolation) combinations that get the split kernels
// (warp_affine_kernel for Linear; warp_field_kernel and warp_persp_kernel for Linear, Keys cubic
// and B-spline): every pair upres::warp instantiates (float -> float / u8 / u16, u8 -> u8,
// u16 -> u16), 1 to 4 channels, B-spline on float sources only (integer images are prefiltered
// into float coefficients first, so u8 / u16 sources never meet it).
template <class S, class D, int C, Interp I>
constexpr bool kSplitFast = warp_schedule::split_compiled(PixelTraits<S>::type,
                                                          PixelTraits<D>::type, C, I);

// Remap / Flow (Linear, Keys cubic, B-spline; the kSplitFast types): the split of
// warp_affine_kernel with the coordinate from the field, in float: Flow u = x + dx as the integer
// x + floor(dx) and the fraction dx - floor(dx), Remap u = floor(u) + (u - floor(u)); both the
// double path's split (warp_one) up to the rounding of the fraction (an ulp of float). Each
// thread reads its 4 outputs' field entries first; outputs whose taps lie in [1, n - 2) on both
// axes take the fixed-tap path, the others (near or beyond the border, or |u| >= 1e9) warp_one.
// With 4 x 4 taps the field, read once, streams past the caches (ld.global.cs) and leaves them
// to the source's gathers (H100, 2048^2 exact B-spline flow warp, public call: 62.7 -> 60.3 us;
// bilinear, 2% slower with it, keeps __ldg).
// Nearest stays on warp_kernel (its ties at half-integers resolve in double, as on the CPU).
template <class S, class D, int C, Interp I, bool kBox>
__global__ void __launch_bounds__(kTileW* kRowsY)
    warp_field_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p) {
    static_assert(I != Interp::Nearest, "Nearest needs the double coordinates of warp_kernel");
    const int x = out_index<kBox>(p.box_x0, blockIdx.x, kTileW, threadIdx.x);
    if (x >= dst.width) return;
    const int y0 = out_index<kBox>(p.box_y0, blockIdx.y, kTileH, threadIdx.y);
    const bool flow = p.kind == Transform::Kind::Flow;
    float fu[kPerThread], fv[kPerThread];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {  // the field entries first: their loads issue together
        const int y = min(y0 + r * kRowsY, dst.height - 1);
        const float* f = p.field.row(y) + 2 * x;
        if constexpr (kTaps<I> == 4) {
            fu[r] = __ldcs(f);
            fv[r] = __ldcs(f + 1);
        } else {
            fu[r] = __ldg(f);
            fv[r] = __ldg(f + 1);
        }
    }
    split_thread<S, D, C, I>(
        src, dst, p, x, y0, true, [&](int r, int& iu, float& tu, int& iv, float& tv) {
            const float au = floorf(fu[r]), av = floorf(fv[r]);
            const bool finite = fabsf(fu[r]) < 1e9f && fabsf(fv[r]) < 1e9f;
            iu = (finite ? static_cast<int>(au) : 0) + (flow ? x : 0) + p.pad;
            iv = (finite ? static_cast<int>(av) : 0) + (flow ? y0 + r * kRowsY : 0) + p.pad;
            tu = fu[r] - au;
            tv = fv[r] - av;
            return finite;
        });
}

// Perspective (Linear, Keys cubic, B-spline; the kSplitFast types): each output's coordinate
// from the homography in double (w' = h6 x + h7 y + h8, u = (h0 x + h1 y + h2) / w', one
// reciprocal for u and v), split into integer + float fraction as warp_field_kernel does; the
// same function as warp_one's map_matrix up to the last bits of the double quotient. Outputs
// whose taps lie in [1, n - 2) on both axes take the fixed-tap path; the others (near or beyond
// the border, w' = 0, |u| >= 1e9) warp_one.
template <class S, class D, int C, Interp I, bool kBox>
__global__ void __launch_bounds__(kTileW* kRowsY)
    warp_persp_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p) {
    static_assert(I != Interp::Nearest, "Nearest needs the double coordinates of warp_kernel");
    const int x = out_index<kBox>(p.box_x0, blockIdx.x, kTileW, threadIdx.x);
    if (x >= dst.width) return;
    const int y0 = out_index<kBox>(p.box_y0, blockIdx.y, kTileH, threadIdx.y);
    const double xd = x;
    const double bu = p.m[0] * xd + p.m[2], bv = p.m[3] * xd + p.m[5], bw = p.m[6] * xd + p.m[8];
    split_thread<S, D, C, I>(src, dst, p, x, y0, true,
                             [&](int r, int& iu, float& tu, int& iv, float& tv) {
                                 const double y = y0 + r * kRowsY;
                                 // w' = 0: infinite reciprocal, u and v not finite
                                 const double rw = 1.0 / fma(p.m[7], y, bw);
                                 const double u = fma(p.m[1], y, bu) * rw;
                                 const double v = fma(p.m[4], y, bv) * rw;
                                 const bool finite = fabs(u) < 1e9 && fabs(v) < 1e9;  // not NaN
                                 const double au = finite ? floor(u) : 0.0;
                                 const double av = finite ? floor(v) : 0.0;
                                 iu = static_cast<int>(au) + p.pad;
                                 iv = static_cast<int>(av) + p.pad;
                                 tu = finite ? static_cast<float>(u - au) : 0.0f;
                                 tv = finite ? static_cast<float>(v - av) : 0.0f;
                                 return finite;
                             });
}

constexpr int kTileCapFloats = 11776;  // 46 KB (+ 2 KB of index maps): no opt-in needed

// Lean tiled schedule (Affine / Resize, float samples: B-spline coefficients or a float image
// for Linear). The box and formulas of the tiled affine schedule (warp_cuda_util.cuh); it
// replaced warp_tile_kernel, which was bound by instruction issue on the H200 (ncu: 268
// instructions per output, 80 registers, 37.5% occupancy, 67% issue slots busy; now ~170
// instructions per output, 48 registers, 56% occupancy; 2048^2 rotation 50.6 -> 33.1 us):
//  * the border mode is a template parameter (kExt: Mirror / Reflect / Wrap, whose staged box is
//    already border-extended, no per-output test; kClamp: Nearest; kFill: Constant);
//  * a box inside the image (most tiles) is copied 4 samples at a time from 4-aligned pixel
//    columns (aligned rows; float: 16-byte cp.async; u8 / u16: 4- / 8-byte loads), without the
//    per-sample index maps of the border case;
//  * the exact per-output fallback (non-finite or huge coordinates) is out of line;
//  * 1-D blocks of 256 threads, at most 48 registers (5 blocks per SM).
// Shared-memory pitch: chosen on the host per plan (bank_pitch, warp_cuda_util.cuh): a warp's 32
// outputs lie along a line of the source, and which pitch keeps their tap loads at ~2-way bank
// conflicts instead of 3-6-way depends on the direction (ncu, 30-degree rotation: 2.8-way with a
// fixed pitch).
enum LeanBorder { kExt = 0, kClamp = 1, kFill = 2 };

template <class S, class D, int C, Interp I>
__device__ __noinline__ void lean_fallback(Span2D<const S> src, Span2D<D> dst, WarpPlan p, int x0,
                                           int y0, int tx, int ty) {
    warp_thread_outputs<S, D, C, I>(src, dst, p, x0 + tx, y0 + ty);
}

// Per-plan constants of the tile boxes (computed on the host; TileGrid of warp_cuda_util.cuh for
// 32 x 32 tiles); the box adds `before` / `after` samples (taps and one of rounding margin), as
// tile_box does (warp_cuda_util.cuh) with a few double operations per block instead of ~200
// instructions per warp (ncu: a quarter of the kernel's instructions went to tile_box).
struct LeanGrid : TileGrid {
    int before, after;
};

// False when some tile's coordinates are non-finite or beyond 1e7 (the kernel then does not
// run; the per-output kernels handle such plans).
inline bool lean_grid(const WarpPlan& p, int taps, int dst_w, int dst_h, LeanGrid& g) {
    g.before = (taps == 4 ? 1 : 0) + 1;
    g.after = taps / 2 + 1;
    return tile_grid(p, kTileOut, dst_w, dst_h, g);
}

// kPersp: a Perspective plan (g: only before / after). The tile's box is the bounding box of its
// 4 corners' coordinates (the image of the tile is the convex quadrilateral they span, w' having
// one sign on the whole output, which launch_lean checks), and each output's coordinate comes
// from the homography about the tile origin in float (PerspTile, warp_cuda_util.cuh).
template <class S, class D, int C, Interp I, int kB, bool kPersp = false, bool kBox = false>
__global__ void __launch_bounds__(kTileW* kRowsY, 5)
    warp_tile_lean_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p, LeanGrid g, int pitch,
                          int cap_floats) {
    static_assert(kTaps<I> >= 2, "Linear, Keys cubic and B-spline (2- and 4-tap kernels)");
    extern __shared__ float4 lean_smem4[];
    float* s = reinterpret_cast<float*>(lean_smem4);
    __shared__ int xmap[kMaxSpan], ymap[kMaxSpan];
    // The block's tile of the whole output (kBox: a box's, out_index's comment).
    const unsigned bx = blockIdx.x + (kBox ? static_cast<unsigned>(p.box_x0 / kTileOut) : 0u);
    const unsigned by = blockIdx.y + (kBox ? static_cast<unsigned>(p.box_y0 / kTileOut) : 0u);
    const int x0 = bx * kTileOut, y0 = by * kTileOut;
    const int tid = threadIdx.x, tx = tid & 31, ty = tid >> 5;
    TileBox b;
    PerspTile pt;
    if constexpr (kPersp) {
        if (!persp_tile_box(p, x0, y0, dst.width, dst.height, g.before, g.after, kB == kClamp,
                            src.width, src.height, b, pt)) {
            lean_fallback<S, D, C, I>(src, dst, p, x0, y0, tx, ty);
            return;
        }
    } else {
        const double ub =
            fma(static_cast<double>(by), g.duy, fma(static_cast<double>(bx), g.dux, g.u0));
        const double vb =
            fma(static_cast<double>(by), g.dvy, fma(static_cast<double>(bx), g.dvx, g.v0));
        coord_box(ub + g.ulo, ub + g.uhi, vb + g.vlo, vb + g.vhi, kB == kClamp, src.width,
                  src.height, g.before, g.after, b);
        b.lu0 = static_cast<float>(ub - b.xa);
        b.lv0 = static_cast<float>(vb - b.ya);
    }
    // 1. Stage the box (rows `pitch` floats apart).
    const bool inside =
        b.xa >= 0 && b.ya >= 0 && b.xa + b.rw <= src.width && b.ya + b.rh <= src.height;
    // Pixel columns from xs (4-aligned) in groups of 4 pixels: 4 C samples, i.e. C copies of
    // 4 samples, 4 * sizeof(S)-aligned when the row is.
    const int xs = b.xa & ~3, nq = (b.xa + b.rw - xs + 3) >> 2;
    // Boxes inside the image whose rows are 4-sample aligned: 4 samples per copy (16-byte
    // cp.async for float; 8- / 4-byte loads of u16 / u8 converted to a float4), for 1, 3 or 4
    // channels. Otherwise sample by sample (below).
    const bool vec = inside && xs + 4 * nq <= src.width &&
                     (reinterpret_cast<std::uintptr_t>(src.data) & (4 * sizeof(S) - 1)) == 0 &&
                     (src.stride & 3) == 0;
    if (vec) {
        // 16 rows at a time, one float4 per thread and row.
        b.lu0 += static_cast<float>(b.xa - xs);
        b.xa = xs;
        b.rw = 4 * nq;
        if (b.rw * C > pitch || b.rh * pitch > cap_floats) {  // not with the host bound; stay safe
            lean_fallback<S, D, C, I>(src, dst, p, x0, y0, tx, ty);
            return;
        }
        const int half = tid >> 4, l16 = tid & 15;
        const std::ptrdiff_t gstep = 16 * src.stride;
        if constexpr (std::is_same_v<S, float>) {
            const int nc = nq * C;
            const unsigned sstep = 16u * static_cast<unsigned>(pitch) * sizeof(float);
            for (int q = l16; q < nc; q += 16) {
                const S* gp = src.row(b.ya + half) + xs * C + 4 * q;
                unsigned sp =
                    static_cast<unsigned>(__cvta_generic_to_shared(s + half * pitch + 4 * q));
                // 1 channel: through L2 only (.cg); 3 and 4 channels through L1 too (.ca), which
                // measured faster for them and slower for 1 channel (H100, 2048^2 rotation,
                // .cg -> .ca: RGBA 65.8 -> 60.1 us, RGB 49.1 -> 47.2, 1-channel B-spline
                // interpolation 32.7 -> 33.3, H100).
                for (int j = half; j < b.rh; j += 16, gp += gstep, sp += sstep) {
                    if constexpr (C == 1)
                        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sp),
                                     "l"(gp)
                                     : "memory");
                    else
                        asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" ::"r"(sp),
                                     "l"(gp)
                                     : "memory");
                }
            }
            asm volatile("cp.async.commit_group;\n" ::: "memory");
            asm volatile("cp.async.wait_group 0;\n" ::: "memory");
        } else {
            // Up to kAhead rows' loads in flight before their conversions and stores.
            constexpr int kAhead = 4;
            using V = std::conditional_t<sizeof(S) == 1, uchar4, ushort4>;
            const int nc = nq * C;
            for (int q = l16; q < nc; q += 16) {
                const S* gp = src.row(b.ya + half) + xs * C + 4 * q;
                for (int j0 = half; j0 < b.rh; j0 += 16 * kAhead, gp += kAhead * gstep) {
                    V v[kAhead];
#pragma unroll
                    for (int u = 0; u < kAhead; ++u)
                        if (j0 + 16 * u < b.rh)
                            v[u] = __ldg(reinterpret_cast<const V*>(gp + u * gstep));
#pragma unroll
                    for (int u = 0; u < kAhead; ++u)
                        if (j0 + 16 * u < b.rh)
                            *reinterpret_cast<float4*>(s + (j0 + 16 * u) * pitch + 4 * q) =
                                make_float4(
                                    int_sample_to_float(v[u].x), int_sample_to_float(v[u].y),
                                    int_sample_to_float(v[u].z), int_sample_to_float(v[u].w));
                }
            }
        }
    } else {
        if (b.rw * C > pitch || b.rh * pitch > cap_floats || b.rw > kMaxSpan || b.rh > kMaxSpan) {
            lean_fallback<S, D, C, I>(src, dst, p, x0, y0, tx, ty);
            return;
        }
        // A box inside the image is a plain rectangle of the source: its rows are copied as they
        // are (u8 / u16 converted to float); one that crosses a side maps each row and column
        // through the border rule first (`inside` is the same for the whole block).
        if (!inside) {
            for (int i = tid; i < b.rw; i += kTileW * kRowsY)
                xmap[i] = tap_index(b.xa + i, src.width, p.border);
            for (int j = tid; j < b.rh; j += kTileW * kRowsY)
                ymap[j] = tap_index(b.ya + j, src.height, p.border);
            __syncthreads();
        }
        for (int j = ty; j < b.rh; j += kRowsY) {
            float* srow = s + j * pitch;
            if (inside) {
                const S* row = src.row(b.ya + j) + b.xa * C;
                for (int e = tx; e < b.rw * C; e += kTileW) stage_sample(srow + e, row + e);
                continue;
            }
            const S* row = src.row(ymap[j]);
            for (int e = tx; e < b.rw * C; e += kTileW) {
                const int px = e / C;
                stage_sample(srow + e, row + xmap[px] * C + (e - px * C));
            }
        }
        if constexpr (std::is_same_v<S, float>) {
            __pipeline_commit();
            __pipeline_wait_prior(0);
        }
    }
    __syncthreads();
    // 2. Interpolate the thread's outputs (x0 + tx, y0 + ty + 8 r).
    const int x = x0 + tx;
    if (x >= dst.width) return;
    float out[kPerThread][C];
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
        float lu, lv;
        if constexpr (kPersp) {
            pt.at(tx, ty + r * kRowsY, lu, lv);
            lu += b.lu0;  // the 16-byte staging's shift of xa (0 otherwise)
            lv += b.lv0;
        } else {
            tile_coord(p, b, tx, ty + r * kRowsY, lu, lv);
        }
        if constexpr (kB == kClamp) {  // map_coord clamps
            lu = fminf(fmaxf(lu, static_cast<float>(-b.xa)),
                       static_cast<float>(src.width - 1 - b.xa));
            lv = fminf(fmaxf(lv, static_cast<float>(-b.ya)),
                       static_cast<float>(src.height - 1 - b.ya));
        }
        tile_interp<C, I>(s, pitch, b.rw, b.rh, lu, lv, p.cubic_a, out[r]);
        if constexpr (kB == kFill) {
            if (constant_outside(p, b, lu, lv, x, y0 + ty + r * kRowsY, src.width, src.height)) {
#pragma unroll
                for (int c = 0; c < C; ++c) out[r][c] = p.fill;
            }
        }
    }
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
        const int y = y0 + ty + r * kRowsY;
        if (y < dst.height) store<D, C>(dst, x, y, out[r]);
    }
}

// The (source type, interpolation, channels) triples that get warp_tile_lean_kernel, the hot
// channel counts: float samples (an image or B-spline coefficients) with Linear, Keys cubic or
// B-spline, and u8 / u16 images with Linear or Keys cubic (staged as float). Resizes take the
// separable kernel first, so for Linear on u8 / u16 this means rotations, general affine and
// perspective maps (launch_exact gives 1- and 4-channel affine maps and 1-channel perspective
// maps the split kernel instead); the other triples
// keep warp_kernel, which also bounds the number of instantiations.
template <class S, Interp I, int C>
constexpr bool kTiled = warp_schedule::tiled_compiled(PixelTraits<S>::type, C, I);

// ---------------------------------------------------------------- separable schedule
// Resize plans, and Affine maps with m1 = m3 = 0 (scales, shifts, flips): u depends on x only and
// v on y only, so sample_point's border test, first tap, tap indices and weights split by axis,
// and so does its sum: out = sum_j wy_j h_j with the row sums h_j = sum_k wx_k src(ix_k, iy_j),
// in sample_point's order. A block is kSepThreads threads of kX adjacent output columns each, by
// kRows output rows (launch_separable picks both):
//  * each thread computes its columns' taps, weights and test once, in double as the reference
//    does (map_matrix_host_rounding, map_coord, first_tap), the weights in float
//    (interp_weights), as the per-output kernels' interior path;
//  * the block's rows get theirs likewise, in shared memory, with what each row needs of the
//    row sums (s_act: the same source rows as the row before, rows moved by d, or all new);
//  * the thread walks down its columns holding the row sums of the K source rows that the
//    current output row reads: consecutive output rows of an up-scale read the same rows or the
//    next one, so each source row is summed once per strip instead of K times per output, from
//    loads that neighbouring lanes share through L1.
// Rows and columns outside (map_coord false: Constant beyond the image, non-finite or huge
// coordinates) give the fill value.
constexpr int kSepThreads = 128;
constexpr int kSepOutside = INT_MIN;  // logical first tap of a row or column that is the fill

// One axis of sample_point at coordinate u (n samples along it): the logical first tap (or
// kSepOutside), the tap indices after the border rule (times `scale`: C for columns, 1 for rows)
// and the weights. Unused taps get index 0 and weight 0.
template <Interp I>
__device__ __forceinline__ int sep_axis(double u, int n, const WarpPlan& p, int scale, int idx[4],
                                        float w[4]) {
#pragma unroll
    for (int k = 0; k < 4; ++k) idx[k] = 0, w[k] = 0.0f;
    if (!map_coord(u, n, p.border)) return kSepOutside;
    constexpr int K = kTaps<I>;
    const long long f = first_tap(u, I);
    if constexpr (I == Interp::Nearest)
        w[0] = 1.0f;
    else
        interp_weights<float>(static_cast<float>(u - floor(u)), I, p.cubic_a, w);
#pragma unroll
    for (int k = 0; k < K; ++k) idx[k] = tap_index(f + k, n, p.border) * scale;
    return static_cast<int>(f);
}

template <class S, int C, int K>
__device__ __forceinline__ void sep_row_sum(const S* row, const int ix[4], const float wx[4],
                                            float h[C]) {
#pragma unroll
    for (int c = 0; c < C; ++c) h[c] = 0.0f;
#pragma unroll
    for (int k = 0; k < K; ++k)
#pragma unroll
        for (int c = 0; c < C; ++c) h[c] += wx[k] * load(row + ix[k] + c);
}

// Stores kX adjacent outputs of C channels at o (nx <= kX of them inside the image): one wider
// store where the kX * C values are consecutive and aligned for it.
template <class D, int C, int kX>
__device__ __forceinline__ void sep_store(D* o, int nx, const float (&out)[kX][C]) {
    if constexpr (kX == 2 && C == 1 && sizeof(D) <= 4) {
        using Pair = std::conditional_t<sizeof(D) == 1, uchar2,
                                        std::conditional_t<sizeof(D) == 2, ushort2, float2>>;
        if (nx == 2 && (reinterpret_cast<std::uintptr_t>(o) % sizeof(Pair)) == 0) {
            Pair v;
            v.x = saturate_from_float<D>(out[0][0]);
            v.y = saturate_from_float<D>(out[1][0]);
            *reinterpret_cast<Pair*>(o) = v;
            return;
        }
    }
#pragma unroll
    for (int q = 0; q < kX; ++q)
        if (q < nx)
#pragma unroll
            for (int c = 0; c < C; ++c) o[q * C + c] = saturate_from_float<D>(out[q][c]);
}

template <class S, class D, int C, Interp I, int kRows, int kX>
__device__ __forceinline__ void separable_body(Span2D<const S> src, Span2D<D> dst,
                                               const WarpPlan& p) {
    constexpr int K = kTaps<I>;
    // Per output row of the strip: its taps, weights, and what the row sums in registers need
    // (s_act): -1 the fill value, 0 the same source rows as the last row that was not the fill, d
    // in [1, K) those rows moved down by d (K - d kept, d new ones summed), K all K summed anew.
    __shared__ int s_l0[kRows];
    __shared__ int s_act[kRows];
    __shared__ int4 s_iy[kRows];
    __shared__ float4 s_wy[kRows];
    const int tid = threadIdx.x;
    const int y0 = p.box_y0 + blockIdx.y * kRows;
    const int nrows = min(kRows, dst.height - y0);
    if (tid < nrows) {
        double u, v;
        map_matrix_host_rounding(p.m, p.kind, 0, p.out_row0 + y0 + tid, u, v);
        int iy[4];
        float wy[4];
        s_l0[tid] = sep_axis<I>(v + p.pad, p.src_rows > 0 ? p.src_rows : src.height, p, 1, iy, wy);
#pragma unroll
        for (int k = 0; k < 4; ++k) iy[k] -= p.src_row0;  // a band's rows (WarpPlan::src_row0)
        s_iy[tid] = make_int4(iy[0], iy[1], iy[2], iy[3]);
        s_wy[tid] = make_float4(wy[0], wy[1], wy[2], wy[3]);
    }
    __syncthreads();
    if (tid == 0) {
        bool have = false;
        int last = 0;
        for (int r = 0; r < nrows; ++r) {
            const int l0 = s_l0[r];
            int act = -1;
            if (l0 != kSepOutside) {
                const int d = l0 - last;
                act = !have ? K : (d >= 0 && d < K ? d : K);
                have = true;
                last = l0;
            }
            s_act[r] = act;
        }
    }
    __syncthreads();
    const int xb = p.box_x0 + (blockIdx.x * kSepThreads + tid) * kX;
    if (xb >= dst.width) return;
    int ix[kX][4];
    float wx[kX][4];
    bool col_in[kX];
#pragma unroll
    for (int q = 0; q < kX; ++q) {
        double u, v;
        map_matrix_host_rounding(p.m, p.kind, min(xb + q, dst.width - 1), 0, u, v);
        col_in[q] = sep_axis<I>(u + p.pad, src.width, p, C, ix[q], wx[q]) != kSepOutside;
    }
    const int nx = min(kX, dst.width - xb);
    float h[kX][K][C];  // row sums of the source rows that the current output row reads
#pragma unroll
    for (int q = 0; q < kX; ++q)
#pragma unroll
        for (int j = 0; j < K; ++j)
#pragma unroll
            for (int c = 0; c < C; ++c) h[q][j][c] = 0.0f;
    D* o = dst.row(y0) + static_cast<std::ptrdiff_t>(xb) * C;
    for (int r = 0; r < nrows; ++r, o += dst.stride) {
        const int act = s_act[r];  // block-uniform
        float out[kX][C];
        if (act < 0) {
#pragma unroll
            for (int q = 0; q < kX; ++q)
#pragma unroll
                for (int c = 0; c < C; ++c) out[q][c] = p.fill;
        } else {
            if (act > 0) {
                const int4 iy4 = s_iy[r];
                const int iy[4] = {iy4.x, iy4.y, iy4.z, iy4.w};
#pragma unroll
                for (int sh = 1; sh <= K; ++sh)
                    if (act == sh) {  // keep the K - sh rows still read, sum the sh new ones
#pragma unroll
                        for (int q = 0; q < kX; ++q)
#pragma unroll
                            for (int j = 0; j + sh < K; ++j)
#pragma unroll
                                for (int c = 0; c < C; ++c) h[q][j][c] = h[q][j + sh][c];
#pragma unroll
                        for (int j = K - sh; j < K; ++j)
#pragma unroll
                            for (int q = 0; q < kX; ++q)
                                sep_row_sum<S, C, K>(src.row(iy[j]), ix[q], wx[q], h[q][j]);
                    }
            }
            const float4 wy4 = s_wy[r];
            const float wy[4] = {wy4.x, wy4.y, wy4.z, wy4.w};
#pragma unroll
            for (int q = 0; q < kX; ++q)
#pragma unroll
                for (int c = 0; c < C; ++c) {
                    out[q][c] = 0.0f;
#pragma unroll
                    for (int j = 0; j < K; ++j) out[q][c] += wy[j] * h[q][j][c];
                    if (!col_in[q]) out[q][c] = p.fill;
                }
        }
        sep_store<D, C, kX>(o, nx, out);
    }
}

// The kernels: the body above with the compiler's register choice, and for 1-channel B-spline
// with at most 64 registers (8 blocks per SM): those instantiations took 66 registers, hence 7
// blocks, and ran 17-20% slower than Keys cubic on the same loop (H200, zoom x2 / x16 to 2048^2:
// 22.3 / 15.0 against 18.4 / 13.2 us with the bound). The same bound on every instantiation made
// Keys and RGB 3-12% slower (RGB B-spline 2%), and even a bound of 1 block per SM made them
// 10-40% slower (the compiler then takes more registers), so the others keep the plain kernel.
template <class S, class D, int C, Interp I, int kRows, int kX>
__global__ void __launch_bounds__(kSepThreads)
    warp_separable_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p) {
    separable_body<S, D, C, I, kRows, kX>(src, dst, p);
}
template <class S, class D, int C, Interp I, int kRows, int kX>
__global__ void __launch_bounds__(kSepThreads, 8)
    warp_separable_kernel_r64(Span2D<const S> src, Span2D<D> dst, WarpPlan p) {
    separable_body<S, D, C, I, kRows, kX>(src, dst, p);
}

// ---------------------------------------------------------------- antialiased resize
// Per-axis taps of the reference's axis_taps(): the antialiased kernel when scale < 1, else the
// plain kernel. Weights in double, normalised by their sum.
struct AxisTaps {
    bool aa;
    double u, scale, sum;
    long long lo, hi;  // aa: tap range; plain: first tap, count - 1
    double w[4];
};

__device__ inline bool axis_setup(double u, int n, double scale, const WarpPlan& p, AxisTaps& t) {
    if (!map_coord(u, n, p.border)) return false;
    t.u = u;
    t.scale = scale;
    t.aa = scale < 1.0;
    if (t.aa) {
        resize_aa_range<double>(u, scale, p.interp, t.lo, t.hi);
        double s = 0.0;
        for (long long k = t.lo; k <= t.hi; ++k)
            s += resize_aa_weight<double>(u, k, scale, p.interp, p.cubic_a);
        t.sum = s;
    } else {
        interp_weights<double>(u - floor(u), p.interp, p.cubic_a, t.w);
        t.lo = first_tap(u, p.interp);
        t.hi = t.lo + interp_taps(p.interp) - 1;
        t.sum = 1.0;
    }
    return true;
}

__device__ __forceinline__ double axis_weight(const AxisTaps& t, long long k, const WarpPlan& p) {
    if (!t.aa) return t.w[k - t.lo];
    return resize_aa_weight<double>(t.u, k, t.scale, p.interp, p.cubic_a);
}

template <class S, class D, int C>
__global__ void __launch_bounds__(256)
    resize_aa_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= dst.width || y >= dst.height) return;
    double u, v;
    map_matrix_host_rounding(p.m, p.kind, x, y, u, v);
    AxisTaps tx, ty;
    float out[C];
    const bool in = axis_setup(u, src.width, 1.0 / p.m[0], p, tx) &&
                    axis_setup(v, src.height, 1.0 / p.m[4], p, ty);
    if (in) {
        double acc[C];
        for (int c = 0; c < C; ++c) acc[c] = 0.0;
        for (long long j = ty.lo; j <= ty.hi; ++j) {
            const double wy = axis_weight(ty, j, p);
            if (wy == 0.0 && ty.aa) continue;
            const S* row = src.row(tap_index(j, src.height, p.border));
            double racc[C];
            for (int c = 0; c < C; ++c) racc[c] = 0.0;
            for (long long k = tx.lo; k <= tx.hi; ++k) {
                const double wx = axis_weight(tx, k, p);
                if (wx == 0.0 && tx.aa) continue;
                const S* px = row + tap_index(k, src.width, p.border) * C;
                for (int c = 0; c < C; ++c)
                    racc[c] += (wx / tx.sum) * static_cast<double>(__ldg(px + c));
            }
            for (int c = 0; c < C; ++c) acc[c] += (wy / ty.sum) * racc[c];
        }
        for (int c = 0; c < C; ++c) out[c] = static_cast<float>(acc[c]);
    } else {
        for (int c = 0; c < C; ++c) out[c] = p.fill;
    }
    store<D, C>(dst, x, y, out);
}

// ---------------------------------------------------------------- texture mode
template <int C>
struct TexVec;
template <>
struct TexVec<1> {
    using type = float;
};
template <>
struct TexVec<2> {
    using type = float2;
};
template <>
struct TexVec<4> {
    using type = float4;
};

template <int CT>
__device__ __forceinline__ void tex_fetch(cudaTextureObject_t t, float x, float y, float* o) {
    if constexpr (CT == 1) {
        o[0] = tex2D<float>(t, x, y);
    } else if constexpr (CT == 2) {
        const float2 f = tex2D<float2>(t, x, y);
        o[0] = f.x, o[1] = f.y;
    } else {
        const float4 f = tex2D<float4>(t, x, y);
        o[0] = f.x, o[1] = f.y, o[2] = f.z, o[3] = f.w;
    }
}

// C: channels of src/dst; CT: channels of the texture (C, or 4 for C = 3).
template <class S, class D, int C, int CT, Interp I>
__global__ void __launch_bounds__(kTileW* kRowsY)
    warp_texture_kernel(Span2D<const S> src, Span2D<D> dst, WarpPlan p, cudaTextureObject_t tex) {
    const int x = blockIdx.x * kTileW + threadIdx.x;
    if (x >= dst.width) return;
    double m[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) m[i] = p.m[i];
    const int y0 = blockIdx.y * kTileH + threadIdx.y;
#pragma unroll
    for (int r = 0; r < kPerThread; ++r) {
        const int y = y0 + r * kRowsY;
        if (y >= dst.height) continue;
        double u, v;
        input_point(p, m, x, y, u, v);
        if (!(interior<I>(u, src.width) && interior<I>(v, src.height))) {
            warp_one<S, D, C, I>(src, dst, p, m, x, y);  // the exact border rule
            continue;
        }
        float out[4];
        const double fx = floor(u), fy = floor(v);
        const float tx = static_cast<float>(u - fx), ty = static_cast<float>(v - fy);
        const float bx = static_cast<float>(fx) + 0.5f, by = static_cast<float>(fy) + 0.5f;
        if constexpr (I == Interp::Linear) {
            tex_fetch<CT>(tex, bx + tx, by + ty, out);
        } else {
            float wx[4], wy[4];
            interp_weights<float>(tx, Interp::BSpline, 0.0f, wx);
            interp_weights<float>(ty, Interp::BSpline, 0.0f, wy);
            const float g0x = wx[0] + wx[1], g1x = wx[2] + wx[3];
            const float g0y = wy[0] + wy[1], g1y = wy[2] + wy[3];
            const float h0x = bx - 1.0f + wx[1] / g0x, h1x = bx + 1.0f + wx[3] / g1x;
            const float h0y = by - 1.0f + wy[1] / g0y, h1y = by + 1.0f + wy[3] / g1y;
            float a00[4], a10[4], a01[4], a11[4];
            tex_fetch<CT>(tex, h0x, h0y, a00);
            tex_fetch<CT>(tex, h1x, h0y, a10);
            tex_fetch<CT>(tex, h0x, h1y, a01);
            tex_fetch<CT>(tex, h1x, h1y, a11);
#pragma unroll
            for (int c = 0; c < C; ++c)
                out[c] = g0y * (g0x * a00[c] + g1x * a10[c]) + g1y * (g0x * a01[c] + g1x * a11[c]);
        }
        store<D, C>(dst, x, y, out);
    }
}

// Copies a C-channel source into a CT-channel float buffer (pitch in floats) for the texture.
template <class S, int C, int CT>
__global__ void to_texture_buffer(Span2D<const S> src, float* buf, std::ptrdiff_t pitch) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (x >= src.width) return;
    const S* in = src.row(y) + x * C;
    float* o = buf + y * pitch + x * CT;
#pragma unroll
    for (int c = 0; c < CT; ++c) o[c] = c < C ? static_cast<float>(in[c]) : 0.0f;
}

// ---------------------------------------------------------------- launchers
inline dim3 grid_for(int w, int h) {
    return dim3((w + kTileW - 1) / kTileW, (h + kTileH - 1) / kTileH);
}
// The blocks of the outputs a plan computes: the whole dst, or its box (WarpPlan::box_x0).
template <class D>
dim3 grid_for(Span2D<D> dst, const WarpPlan& p) {
    return grid_for(dst.width - p.box_x0, dst.height - p.box_y0);
}
// The whole output's size (the host's kernel choices are those of the whole call).
template <class D>
int out_width(Span2D<D> dst, const WarpPlan& p) {
    return p.out_w > 0 ? p.out_w : dst.width;
}
template <class D>
int out_height(Span2D<D> dst, const WarpPlan& p) {
    return p.out_h > 0 ? p.out_h : dst.height;
}

// The lean tiled kernel for an Affine / Resize plan whose largest tile box fits kTileCapFloats
// (false: not launched: the triples kTiled excludes, or a box beyond kTileCapFloats).
template <class S, class D, int C, Interp I>
bool launch_lean(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, cudaStream_t st) {
    if constexpr (kTiled<S, I, C>) {
        const bool persp = p.kind == Transform::Kind::Perspective;
        int rw = 0, rh = 0;
        LeanGrid g;
        WarpPlan model = p;  // the bank-conflict model's affine steps
        if (persp) {
            g.before = (kTaps<I> == 4 ? 1 : 0) + 1;
            g.after = kTaps<I> / 2 + 1;
            if (!persp_box_estimate(p, kTaps<I>, out_width(dst, p), out_height(dst, p), rw, rh,
                                    model.m))
                return false;
        } else if (!tile_box_bound(p, kTaps<I>, 0, rw, rh) ||
                   !lean_grid(p, kTaps<I>, out_width(dst, p), out_height(dst, p), g)) {
            return false;
        }
        // + 3 columns of alignment (boxes staged in groups of 4 pixels), the pitch a multiple of
        // 4 floats (float4 stores; 4-channel taps read as float4)
        const int min_floats = (rw + 3) * C;
        const int pitch = bank_pitch(model, (min_floats + 3) / 4 * 4, 4, C);
        const int cap = pitch * rh;
        if (cap > kTileCapFloats) return false;
        const std::size_t smem = sizeof(float) * static_cast<std::size_t>(cap);
        const dim3 grid = grid_for(dst, p);
        auto launch = [&](auto persp_tag, auto box_tag) {
            constexpr bool kP = decltype(persp_tag)::value, kBx = decltype(box_tag)::value;
            switch (p.border) {
                case Border::Nearest:
                    warp_tile_lean_kernel<S, D, C, I, kClamp, kP, kBx>
                        <<<grid, kTileW * kRowsY, smem, st>>>(src, dst, p, g, pitch, cap);
                    break;
                case Border::Constant:
                    warp_tile_lean_kernel<S, D, C, I, kFill, kP, kBx>
                        <<<grid, kTileW * kRowsY, smem, st>>>(src, dst, p, g, pitch, cap);
                    break;
                default:  // Mirror, Reflect, Wrap
                    warp_tile_lean_kernel<S, D, C, I, kExt, kP, kBx>
                        <<<grid, kTileW * kRowsY, smem, st>>>(src, dst, p, g, pitch, cap);
                    break;
            }
        };
        with_box(p, [&](auto box_tag) {
            if (persp)
                launch(std::true_type(), box_tag);
            else
                launch(std::false_type(), box_tag);
        });
        UPRES_CUDA_CHECK_LAUNCH();
        return true;
    }
    (void)src, (void)dst, (void)p, (void)st;
    return false;
}

// The separable kernel for a Resize plan or an Affine one with m1 = m3 = 0 (false: not launched).
template <class S, class D, int C, Interp I>
bool launch_separable(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, cudaStream_t st) {
    if (!axis_aligned(p)) return false;
    // Strip height and adjacent columns per thread, chosen on the H200: 1-channel float images 16
    // rows x 2 columns (zoom x2 to 2048^2: bilinear 14.1 against 17.8 us, Keys 17.7 against 20.3),
    // 1-channel integer images 32 x 2 (1080p -> 4K luma u8, Keys: 27.2 against 34.2 us), more
    // channels 32 x 1 (two columns of RGB took 56-77 us against 41-55).
    constexpr int kRows = C == 1 && std::is_same_v<S, float> ? 16 : 32;
    constexpr int kX = C == 1 ? 2 : 1;
    const dim3 grid((dst.width - p.box_x0 + kSepThreads * kX - 1) / (kSepThreads * kX),
                    (dst.height - p.box_y0 + kRows - 1) / kRows);
    if constexpr (I == Interp::BSpline && C == 1)
        warp_separable_kernel_r64<S, D, C, I, kRows, kX><<<grid, kSepThreads, 0, st>>>(src, dst, p);
    else
        warp_separable_kernel<S, D, C, I, kRows, kX><<<grid, kSepThreads, 0, st>>>(src, dst, p);
    UPRES_CUDA_CHECK_LAUNCH();
    return true;
}

// The exact path: the kernels warp_schedule::candidates lists for the plan, in order, until one
// accepts it (the separable and tiled launchers decline plans they cannot run; the split and
// per-output kernels never do). A forced kernel that declines throws instead.
template <class S, class D, int C, Interp I>
void launch_exact(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, cudaStream_t st) {
    using warp_schedule::Kernel;
    // The prefilter is warp.cpp's concern (it runs the recursive fused kernel before calling here).
    const warp_schedule::Case c =
        warp_schedule::case_of(p, PixelTraits<S>::type, PixelTraits<D>::type, C, 0);
    for (Kernel k : warp_schedule::candidates(c)) {
        switch (k) {
            case Kernel::Separable:
                if (launch_separable<S, D, C, I>(src, dst, p, st)) return;
                if (p.schedule == WarpScheduleOverride::Separable)
                    warp_schedule::forced_kernel_declined(k);
                break;
            case Kernel::Tiled:
                if (launch_lean<S, D, C, I>(src, dst, p, st)) return;
                if (p.schedule == WarpScheduleOverride::Tiled)
                    warp_schedule::forced_kernel_declined(k);
                break;
            case Kernel::Split:
                if constexpr (kSplitFast<S, D, C, I>) {
                    const dim3 grid = grid_for(dst, p), block(kTileW, kRowsY);
                    const auto split = [&](auto box) {
                        constexpr bool kB = decltype(box)::value;
                        if (p.kind == Transform::Kind::Remap || p.kind == Transform::Kind::Flow)
                            warp_field_kernel<S, D, C, I, kB><<<grid, block, 0, st>>>(src, dst, p);
                        else if (p.kind == Transform::Kind::Perspective)
                            warp_persp_kernel<S, D, C, I, kB><<<grid, block, 0, st>>>(src, dst, p);
                        else if constexpr (I == Interp::Linear)
                            warp_affine_kernel<S, D, C, I, kB><<<grid, block, 0, st>>>(src, dst, p);
                        else
                            return false;
                        return true;
                    };
                    const bool launched = with_box(p, split);
                    if (!launched) break;
                    UPRES_CUDA_CHECK_LAUNCH();
                    return;
                }
                break;
            case Kernel::PerOutput:
                warp_kernel<S, D, C, I>
                    <<<grid_for(dst, p), dim3(kTileW, kRowsY), 0, st>>>(src, dst, p);
                UPRES_CUDA_CHECK_LAUNCH();
                return;
            default:  // RecFused (warp.cpp), Antialias and Texture (launch_c) run elsewhere
                break;
        }
    }
    warp_schedule::no_kernel(I, C);
}

template <class S, class D, int C, int CT, Interp I>
void launch_texture_c(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, cudaStream_t st) {
    int dev = 0, pitch_align = 0, base_align = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&pitch_align, cudaDevAttrTexturePitchAlignment, dev));
    UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&base_align, cudaDevAttrTextureAlignment, dev));
    const std::size_t pitch_bytes = static_cast<std::size_t>(src.stride) * sizeof(S);
    const bool direct = std::is_same_v<S, float> && C == CT &&
                        reinterpret_cast<std::uintptr_t>(src.data) % base_align == 0 &&
                        pitch_bytes % pitch_align == 0;
    const dim3 grid = grid_for(dst.width, dst.height), block(kTileW, kRowsY);
    if (direct) {
        const cudaTextureObject_t t =
            cached_texture(src.data, src.width, src.height, CT, pitch_bytes);
        warp_texture_kernel<S, D, C, CT, I><<<grid, block, 0, st>>>(src, dst, p, t);
        UPRES_CUDA_CHECK_LAUNCH();
        return;
    }
    // Staging copy into an aligned float buffer with CT channels; the texture over it is
    // destroyed after the kernel (synchronous on the stream).
    std::size_t row = static_cast<std::size_t>(src.width) * CT * sizeof(float);
    row = (row + pitch_align - 1) / pitch_align * pitch_align;
    const std::size_t bytes = row * src.height + static_cast<std::size_t>(base_align);
    const DeviceTemp raw(bytes, st, "warp (texture staging copy)");
    float* buf = reinterpret_cast<float*>(
        (reinterpret_cast<std::uintptr_t>(raw.get()) + base_align - 1) / base_align * base_align);
    to_texture_buffer<S, C, CT><<<dim3((src.width + 127) / 128, src.height), 128, 0, st>>>(
        src, buf, static_cast<std::ptrdiff_t>(row / sizeof(float)));
    UPRES_CUDA_CHECK_LAUNCH();
    const cudaTextureObject_t t = create_texture(buf, src.width, src.height, CT, row);
    warp_texture_kernel<S, D, C, CT, I><<<grid, block, 0, st>>>(src, dst, p, t);
    cudaError_t err = cudaGetLastError();
    const cudaError_t sync = cudaStreamSynchronize(st);
    cudaDestroyTextureObject(t);
    UPRES_CUDA_CHECK(err);
    UPRES_CUDA_CHECK(sync);
}

template <class S, class D, int C>
void launch_c(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, cudaStream_t st) {
    if (p.antialias && p.kind == Transform::Kind::Resize) {
        const dim3 block(32, 8);
        const dim3 grid((dst.width + 31) / 32, (dst.height + 7) / 8);
        resize_aa_kernel<S, D, C><<<grid, block, 0, st>>>(src, dst, p);
        UPRES_CUDA_CHECK_LAUNCH();
        return;
    }
    constexpr int CT = C == 3 ? 4 : C;
    if constexpr (std::is_same_v<S, float>) {
        if (p.interp == Interp::BSpline) {
            if (p.fast_texture)
                return launch_texture_c<S, D, C, CT, Interp::BSpline>(src, dst, p, st);
            return launch_exact<S, D, C, Interp::BSpline>(src, dst, p, st);
        }
    }
    if constexpr (std::is_same_v<S, D>) {
        switch (p.interp) {
            case Interp::Nearest:
                return launch_exact<S, D, C, Interp::Nearest>(src, dst, p, st);
            case Interp::Linear:
                if (p.fast_texture)
                    return launch_texture_c<S, D, C, CT, Interp::Linear>(src, dst, p, st);
                return launch_exact<S, D, C, Interp::Linear>(src, dst, p, st);
            case Interp::Cubic:
                return launch_exact<S, D, C, Interp::Cubic>(src, dst, p, st);
            case Interp::BSpline:
                break;
        }
    }
    throw Error(ErrorCode::Internal,
                "cuda::warp: this pixel type does not hold B-spline coefficients (float needed)");
}

}  // namespace
}  // namespace upres::cuda

// Defines warp_part<S, D, C> (warp_cuda_parts.hpp) in a part's translation unit.
#define UPRES_WARP_CUDA_PART(S, D, C)                                                 \
    namespace upres::cuda {                                                           \
    template <>                                                                       \
    void warp_part<S, D, C>(Span2D<const S> src, Span2D<D> dst, const WarpPlan& plan, \
                            void* stream) {                                           \
        launch_c<S, D, C>(src, dst, plan, static_cast<cudaStream_t>(stream));         \
    }                                                                                 \
    }
