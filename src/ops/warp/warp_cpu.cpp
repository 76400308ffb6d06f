// Optimized CPU backend of upres::warp: a schedule of warp_math.hpp.
//
//  * Point transforms (affine, rotation, perspective, remap, flow): OpenMP over output rows;
//    coordinates in double (exact enough for 65536-pixel images), weights and sums in float;
//    pixels whose taps all lie inside the source take a branch-free path specialised on the
//    interpolation and the channel count (row pointers, fixed tap loops); the few near the
//    border take the reference formula (sample_point<double>). On CPUs with AVX2 + FMA (run-time
//    check, simd::cpu_has_avx2_fma), every point map of 1- to 4-channel sources (float, u8,
//    u16) with 2x2 or 4x4 taps runs 8 outputs at a time in warp_cpu_avx2.cpp
//    (warp_cpu_simd.hpp), and so does nearest neighbour (coordinates and offsets; the pixels
//    are copied here); the pixels it flags take the scalar border path here.
//  * Resize: separable. Per-axis tap tables (indices already border-mapped, weights, the
//    Constant "outside" flag) are computed once from warp_math.hpp; each thread takes a
//    contiguous range of output rows and keeps the source rows they need, filtered horizontally
//    (pass 1), in a small cache of taps + 4 rows, then filters columns (pass 2) and converts
//    with saturate_row_from_float. Same summation order as the reference (rows first, then
//    columns). With AVX2, pass 1 of 2- to 4-channel images and pass 2 (with the conversion)
//    run 8 floats at a time in warp_cpu_avx2.cpp, with the same operations (the same values).
#include <upres/image.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/convert_row.hpp"
#include "core/cpu_features.hpp"
#include "core/parallel.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cpu_simd.hpp"

namespace upres::cpu {

namespace simd {
bool cpu_has_avx2_fma() { return warp_avx2_compiled() && cpu_avx2_fma(); }
}  // namespace simd

namespace {

// ---------------------------------------------------------------- point transforms
template <Interp I>
constexpr int kTaps = I == Interp::Nearest ? 1 : (I == Interp::Linear ? 2 : 4);

// True when every tap of the kernel at u lies in [0, n) and map_coord would not move u.
template <Interp I>
inline bool interior(double u, int n) {
    if constexpr (I == Interp::Nearest)
        return u >= 0.0 && u <= n - 1.0;
    else if constexpr (I == Interp::Linear)
        return u >= 0.0 && u < n - 1.0;
    else
        return u >= 1.0 && u < n - 2.0;
}

// 4 floats (GCC/Clang vector extension: SSE on x86-64, NEON on ARM, scalar elsewhere).
typedef float v4 __attribute__((vector_size(16)));
inline v4 load4(const float* p) {
    v4 v;
    std::memcpy(&v, p, sizeof(v));
    return v;
}
template <class S>
inline v4 load4(const S* p) {  // 4 integers (exact in float)
#if defined(__SSE2__)
    // Widened in registers (compilers convert a 4 x u8 vector one lane at a time).
    const __m128i z = _mm_setzero_si128();
    __m128i x;
    if constexpr (sizeof(S) == 1) {
        std::int32_t b;
        std::memcpy(&b, p, sizeof(b));
        x = _mm_unpacklo_epi16(_mm_unpacklo_epi8(_mm_cvtsi32_si128(b), z), z);
    } else {
        x = _mm_unpacklo_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)), z);
    }
    return _mm_cvtepi32_ps(x);
#else
    return v4{static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2]),
              static_cast<float>(p[3])};
#endif
}
inline float hsum(v4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }
// saturate_from_float of a pixel's C (<= 4) channels held in a 4-wide vector.
template <class D, int C>
inline void store_px(v4 s, D* o) {
    float t[4];
    std::memcpy(t, &s, sizeof(t));
    saturate4_from_float<D>(t, o, C);
}
// One past the last element of a span.
template <class S>
inline const S* end_of(Span2D<const S> s) {
    return s.row(s.height - 1) + std::ptrdiff_t{s.width} * s.channels;
}

// Interior sample (all taps inside, u, v >= 0 so truncation is floor).
template <class S, int C, Interp I>
struct Interior {
    static constexpr int K = kTaps<I>;
    v4 poly[4];  // cubic weight polynomials (cubic, bspline)
    float a, fill;
    Border border;
    explicit Interior(const WarpPlan& p) : a(p.cubic_a), fill(p.fill), border(p.border) {
        if constexpr (K == 4) {
            float c[4][4];
            cubic_weight_poly<float>(I, p.cubic_a, c);
            for (int j = 0; j < 4; ++j) poly[j] = v4{c[j][0], c[j][1], c[j][2], c[j][3]};
        }
    }
    inline v4 wpoly(float t) const { return ((poly[0] * t + poly[1]) * t + poly[2]) * t + poly[3]; }

    // Border rule of warp_math.hpp: map the coordinate first (most samples then become
    // interior), gather with border-mapped tap indices otherwise.
    template <class D>
    void border_sample(Span2D<const S> src, double u, double v, D* o) const {
        if (!map_coord(u, src.width, border) || !map_coord(v, src.height, border)) {
            for (int c = 0; c < C; ++c) o[c] = saturate_from_float<D>(fill);
            return;
        }
        if (interior<I>(u, src.width) && interior<I>(v, src.height)) return (*this)(src, u, v, o);
        float wx[4], wy[4];
        interp_weights<float>(static_cast<float>(u - std::floor(u)), I, a, wx);
        interp_weights<float>(static_cast<float>(v - std::floor(v)), I, a, wy);
        const long long x0 = first_tap(u, I), y0 = first_tap(v, I);
        int ix[4];
        for (int k = 0; k < K; ++k) ix[k] = tap_index(x0 + k, src.width, border) * C;
        float acc[C] = {};
        for (int j = 0; j < K; ++j) {
            const S* r = src.row(tap_index(y0 + j, src.height, border));
            float racc[C] = {};
            for (int k = 0; k < K; ++k)
                for (int c = 0; c < C; ++c) racc[c] += wx[k] * static_cast<float>(r[ix[k] + c]);
            for (int c = 0; c < C; ++c) acc[c] += wy[j] * racc[c];
        }
        for (int c = 0; c < C; ++c) o[c] = saturate_from_float<D>(acc[c]);
    }

    template <class D>
    inline void operator()(Span2D<const S> src, double u, double v, D* o) const {
        if constexpr (I == Interp::Nearest) {
            const S* px = src.row(static_cast<int>(v + 0.5)) + static_cast<int>(u + 0.5) * C;
            for (int c = 0; c < C; ++c) o[c] = saturate_from_float<D>(static_cast<float>(px[c]));
        } else if constexpr (I == Interp::Linear) {
            const int ix = static_cast<int>(u), iy = static_cast<int>(v);
            const float tx = static_cast<float>(u - ix), ty = static_cast<float>(v - iy);
            const S* r0 = src.row(iy) + ix * C;
            const S* r1 = r0 + src.stride;
            // 3 and 4 channels: a pixel as one 4-wide vector, the same operations per channel
            // (for 3, the 4th lane reads the next sample; not past the end of the image).
            if (C == 4 || (C == 3 && r1 + 2 * C + 1 <= end_of(src))) {
                const v4 a0 = (1.0f - tx) * load4(r0) + tx * load4(r0 + C);
                const v4 a1 = (1.0f - tx) * load4(r1) + tx * load4(r1 + C);
                store_px<D, C>((1.0f - ty) * a0 + ty * a1, o);
                return;
            }
            for (int c = 0; c < C; ++c) {
                const float a0 =
                    (1.0f - tx) * static_cast<float>(r0[c]) + tx * static_cast<float>(r0[C + c]);
                const float a1 =
                    (1.0f - tx) * static_cast<float>(r1[c]) + tx * static_cast<float>(r1[C + c]);
                o[c] = saturate_from_float<D>((1.0f - ty) * a0 + ty * a1);
            }
        } else {
            const int ix = static_cast<int>(u), iy = static_cast<int>(v);
            const v4 wx = wpoly(static_cast<float>(u - ix));
            const v4 wy = wpoly(static_cast<float>(v - iy));
            const S* p0 = src.row(iy - 1) + (ix - 1) * C;
            const std::ptrdiff_t st = src.stride;
            if constexpr (C == 1) {
                const v4 acc = wy[0] * load4(p0) + wy[1] * load4(p0 + st) +
                               wy[2] * load4(p0 + 2 * st) + wy[3] * load4(p0 + 3 * st);
                o[0] = saturate_from_float<D>(hsum(acc * wx));
            } else if (C == 4 || (C == 3 && p0 + 3 * st + 4 * C + 1 <= end_of(src))) {
                // A pixel as one 4-wide vector (for 3 channels, the 4th lane reads the next
                // sample; not past the end of the image).
                v4 acc = {0, 0, 0, 0};
                for (int j = 0; j < 4; ++j) {
                    const S* r = p0 + j * st;
                    acc += wy[j] * (wx[0] * load4(r) + wx[1] * load4(r + C) +
                                    wx[2] * load4(r + 2 * C) + wx[3] * load4(r + 3 * C));
                }
                store_px<D, C>(acc, o);
            } else {
                float acc[C] = {};
                for (int j = 0; j < 4; ++j) {
                    const S* r = p0 + j * st;
                    float racc[C] = {};
                    for (int k = 0; k < 4; ++k)
                        for (int c = 0; c < C; ++c)
                            racc[c] += wx[k] * static_cast<float>(r[k * C + c]);
                    for (int c = 0; c < C; ++c) acc[c] += wy[j] * racc[c];
                }
                for (int c = 0; c < C; ++c) o[c] = saturate_from_float<D>(acc[c]);
            }
        }
    }
};

// Nearest rows (simd::nearest_row_avx2's flags): out[i] = the pixel at element offset ofs[i] of
// src where flag[i] is 0, the fill where it is 2; the others are left.
template <class S, class D, int C>
void copy_pixels(const S* __restrict src, const int* __restrict ofs,
                 const std::uint8_t* __restrict flag, int n, D fill, D* __restrict out) {
    for (int i = 0; i < n; ++i) {
        if (flag[i] == 0) {
            const S* px = src + ofs[i];
            for (int c = 0; c < C; ++c) {
                if constexpr (std::is_same_v<S, D>)
                    out[i * C + c] = px[c];
                else
                    out[i * C + c] = saturate_from_float<D>(static_cast<float>(px[c]));
            }
        } else if (flag[i] == 2) {
            for (int c = 0; c < C; ++c) out[i * C + c] = fill;
        }
    }
}

// dst holds outputs [ox, ox + dst.width) x [oy, oy + dst.height) of the whole output (the
// whole call: ox = oy = 0), and p.field the same box of the field; src may be a view whose
// data points where sample (0, 0) of the span would be (cpu::warp_box): every index below is
// the whole call's.
template <class S, class D, int C, Interp I>
void warp_points(Span2D<const S> src, Span2D<D> dst, int ox, int oy, const WarpPlan& p,
                 int threads) {
    const double pad = p.pad;
    const int sw = src.width, sh = src.height;
    const double m0 = p.m[0], m3 = p.m[3];
    // Tiles of kTileH x kTileW output pixels keep the source footprint of rotations in cache
    // and TLB (a 2048-wide rotated row touches ~1000 source rows).
    constexpr int kTileH = 16, kTileW = 64;
    const int bands = (dst.height + kTileH - 1) / kTileH;
    // AVX2 row kernels (warp_cpu_avx2.cpp): affine, perspective, remap and displacement-field
    // maps of 1- to 4-channel sources of any sample type, with 2 x 2 or 4 x 4 taps, when the CPU
    // has AVX2 + FMA and element offsets fit in 32 bits.
    constexpr bool kVecType = kTaps<I> >= 2;
    bool vec = false;
    simd::RowSource vsrc{};
    simd::RowKernel vkern{};
    if constexpr (kVecType) {
        vec = p.kind != Transform::Kind::Resize && simd::cpu_has_avx2_fma() &&
              (std::int64_t{sh} - 1) * src.stride + std::int64_t{sw} * C < (std::int64_t{1} << 31);
        vsrc = {src.data, std::is_same_v<S, float> ? 0 : (sizeof(S) == 1 ? 1 : 2),
                C,        src.stride,
                sw,       sh};
        vkern.taps = kTaps<I>;
        if constexpr (kTaps<I> == 4) cubic_weight_poly<float>(I, p.cubic_a, vkern.poly);
        vkern.fill = p.fill;
    }
    // Nearest: the AVX2 rows compute the coordinates and the source offsets (any sample type and
    // channel count; the pixels are copied here). Resize plans take resize_separable.
    const bool vec_nearest =
        I == Interp::Nearest && p.kind != Transform::Kind::Resize && simd::cpu_has_avx2_fma() &&
        (std::int64_t{sh} - 1) * src.stride + std::int64_t{sw} * C < (std::int64_t{1} << 31);
    if (vec_nearest) vsrc = {src.data, 0, C, src.stride, sw, sh};
    const D fill_d = saturate_from_float<D>(p.fill);  // Constant's fill of the nearest rows
    const simd::RowMap::Kind map_kind = p.kind == Transform::Kind::Affine  ? simd::RowMap::Affine
                                        : p.kind == Transform::Kind::Remap ? simd::RowMap::Remap
                                        : p.kind == Transform::Kind::Flow
                                            ? simd::RowMap::Flow
                                            : simd::RowMap::Perspective;
    // pad > 0 (B-spline + Nearest) clamps in the padded span: no vector border mapping.
    if (p.pad == 0) {
        if (p.border == Border::Mirror) vkern.border = 1;
        if (p.border == Border::Constant) vkern.border = 2;
    }
    // Source coordinates of output (x, y); ub, vb: the affine row's base (m1 y + m2 + pad, ...).
    auto coords = [&](int x, int y, const float* frow, double ub, double vb, double& u, double& v) {
        switch (p.kind) {
            case Transform::Kind::Remap:
                u = frow[2 * x] + pad;
                v = frow[2 * x + 1] + pad;
                break;
            case Transform::Kind::Flow:
                u = x + static_cast<double>(frow[2 * x]) + pad;
                v = y + static_cast<double>(frow[2 * x + 1]) + pad;
                break;
            case Transform::Kind::Perspective:
                map_matrix<double>(p.m, p.kind, x, y, u, v);
                u += pad;
                v += pad;
                break;
            default:
                if constexpr (I == Interp::Nearest) {
                    // The reference's expression: same rounding, same .5 ties.
                    map_matrix<double>(p.m, p.kind, x, y, u, v);
                    u += pad;
                    v += pad;
                } else {  // continuous in u: the last-bit rounding is invisible
                    u = ub + m0 * x;
                    v = vb + m3 * x;
                }
        }
    };
    // A displacement field's taps stay near the output row: its bands go row by row (long
    // streams through the field, source and output rows; 2048^2 float flow warp, dev machine:
    // 8-23% faster than by tiles, docs/ops/warp.md). Every other map goes by tiles.
    const bool by_rows = p.kind == Transform::Kind::Flow;
    parallel_for(0, bands, threads, [&](int band) {
        const Interior<S, C, I> interior_sample(p);  // local: constants stay in registers
        // AVX2 rows' output: 1 float per pixel (1 channel) or 4 (2 to 4 channels); flagged
        // entries are never written.
        float vbuf[kTileW * (C == 1 ? 1 : 4)] = {};
        std::uint8_t vflag[kTileW];
        int vofs[I == Interp::Nearest ? kTileW : 1];
        const int y0 = oy + band * kTileH, y1 = std::min(oy + dst.height, y0 + kTileH);
        const int xend = ox + dst.width;
        // Output pixels [x0, x0 + kTileW) of row y; out and frow indexed by the whole
        // output's x.
        auto tile_row = [&](int x0, int y) {
            const int x1 = std::min(xend, x0 + kTileW);
            D* out = dst.row(y - oy) - std::ptrdiff_t{ox} * C;
            const float* frow =
                p.field.data ? p.field.row(y - oy) - 2 * std::ptrdiff_t{ox} : nullptr;
            const double ub = p.m[1] * y + p.m[2] + pad, vb = p.m[4] * y + p.m[5] + pad;
            if constexpr (I == Interp::Nearest) {
                if (vec_nearest) {  // AVX2 coordinates and offsets, 8 at a time; pixels copied
                    simd::RowMap map{};
                    map.kind = map_kind;
                    map.field = frow, map.h = p.m, map.y = y, map.pad = pad;
                    float* fout = nullptr;
                    if constexpr (std::is_same_v<S, float> && std::is_same_v<D, float> && C == 1)
                        fout = out + x0;
                    const int flagged =
                        simd::nearest_row_avx2(vsrc, map, vkern.border, x0, x1, vofs, vflag, fout);
                    copy_pixels<S, D, C>(src.data, vofs, vflag, x1 - x0, fill_d, out + x0 * C);
                    if (flagged == 0) return;
                    for (int x = x0; x < x1; ++x)
                        if (vflag[x - x0] == 1) {
                            double u, v;
                            coords(x, y, frow, ub, vb, u, v);
                            interior_sample.border_sample(src, u, v, out + x * C);
                        }
                    return;
                }
            }
            if constexpr (kVecType) {
                if (vec) {  // AVX2: interior pixels 8 at a time, the rest below
                    simd::RowMap map{};
                    map.kind = map_kind;
                    map.ub = ub, map.vb = vb, map.m0 = m0, map.m3 = m3;
                    map.field = frow, map.h = p.m, map.y = y, map.pad = pad;
                    constexpr bool kDirect = std::is_same_v<D, float> && C == 1;
                    float* vo = kDirect ? reinterpret_cast<float*>(out) + x0 : vbuf;
                    const int flagged = simd::warp_row_avx2(vsrc, vkern, map, x0, x1, vo, vflag);
                    if constexpr (C == 1 && !kDirect) {
                        saturate_row_from_float<D>(vbuf, out + x0, x1 - x0);
                    } else if constexpr (C > 1) {
                        for (int x = x0; x < x1; ++x)
                            if (!vflag[x - x0])
                                store_px<D, C>(load4(vbuf + 4 * (x - x0)), out + x * C);
                    }
                    if (flagged == 0) return;
                    for (int x = x0; x < x1; ++x)
                        if (vflag[x - x0]) {
                            double u, v;
                            coords(x, y, frow, ub, vb, u, v);
                            interior_sample.border_sample(src, u, v, out + x * C);
                        }
                    return;
                }
            }
            for (int x = x0; x < x1; ++x) {
                double u, v;
                coords(x, y, frow, ub, vb, u, v);
                D* o = out + x * C;
                if (interior<I>(u, sw) && interior<I>(v, sh)) {
                    interior_sample(src, u, v, o);
                } else {
                    interior_sample.border_sample(src, u, v, o);
                }
            }
        };
        if (by_rows) {
            for (int y = y0; y < y1; ++y)
                for (int x0 = ox; x0 < xend; x0 += kTileW) tile_row(x0, y);
        } else {
            for (int x0 = ox; x0 < xend; x0 += kTileW)
                for (int y = y0; y < y1; ++y) tile_row(x0, y);
        }
    });
}

template <class S, class D, int C>
void warp_points_c(Span2D<const S> src, Span2D<D> dst, int ox, int oy, const WarpPlan& p,
                   int threads) {
    switch (p.interp) {
        case Interp::Nearest:
            return warp_points<S, D, C, Interp::Nearest>(src, dst, ox, oy, p, threads);
        case Interp::Linear:
            return warp_points<S, D, C, Interp::Linear>(src, dst, ox, oy, p, threads);
        case Interp::Cubic:
            return warp_points<S, D, C, Interp::Cubic>(src, dst, ox, oy, p, threads);
        case Interp::BSpline:
            return warp_points<S, D, C, Interp::BSpline>(src, dst, ox, oy, p, threads);
    }
}

// ---------------------------------------------------------------- separable resize
struct AxisTable {
    int taps = 0;             // per output sample
    std::vector<int> idx;     // n_out * taps, border-mapped source indices
    std::vector<float> w;     // n_out * taps
    std::vector<char> valid;  // n_out; 0: fill value
};

// Taps of one axis: output i0 + i (i < n_out) -> source coordinate m (i0 + i) + off + pad in a
// span of n samples.
AxisTable axis_table(int n_out, int n_span, double m, double off, double pad, int n_orig,
                     const WarpPlan& p, int i0 = 0) {
    AxisTable t;
    const double scale = 1.0 / m;  // n_out / n_orig
    const bool aa = p.antialias && scale < 1.0;
    (void)n_orig;
    if (aa)
        t.taps =
            static_cast<int>(std::ceil(2.0 * resize_kernel_radius<double>(p.interp) / scale)) + 2;
    else
        t.taps = interp_taps(p.interp);
    t.idx.assign(static_cast<std::size_t>(n_out) * t.taps, 0);
    t.w.assign(static_cast<std::size_t>(n_out) * t.taps, 0.0f);
    t.valid.assign(static_cast<std::size_t>(n_out), 0);
    for (int i = 0; i < n_out; ++i) {
        double u = m * (i0 + i) + off + pad;
        if (!map_coord(u, n_span, p.border)) continue;
        t.valid[i] = 1;
        int* ti = &t.idx[static_cast<std::size_t>(i) * t.taps];
        float* tw = &t.w[static_cast<std::size_t>(i) * t.taps];
        if (aa) {
            long long lo, hi;
            resize_aa_range<double>(u, scale, p.interp, lo, hi);
            std::vector<double> wk;
            std::vector<int> ik;
            double sum = 0.0;
            for (long long k = lo; k <= hi; ++k) {
                const double wv = resize_aa_weight<double>(u, k, scale, p.interp, p.cubic_a);
                if (wv == 0.0) continue;
                wk.push_back(wv);
                ik.push_back(tap_index(k, n_span, p.border));
                sum += wv;
            }
            for (std::size_t k = 0; k < wk.size() && static_cast<int>(k) < t.taps; ++k) {
                ti[k] = ik[k];
                tw[k] = static_cast<float>(wk[k] / sum);
            }
            // Unused slots (weight 0) read the last tap's sample: one the output needs anyway,
            // so a band of rows (tiled execution) holds every sample its tables name.
            for (int k = static_cast<int>(wk.size()); k < t.taps && !ik.empty(); ++k)
                ti[k] = ik.back();
        } else {
            double wk[4];
            interp_weights<double>(u - std::floor(u), p.interp, p.cubic_a, wk);
            const long long k0 = first_tap(u, p.interp);
            for (int k = 0; k < t.taps; ++k) {
                ti[k] = tap_index(k0 + k, n_span, p.border);
                tw[k] = static_cast<float>(wk[k]);
            }
        }
    }
    return t;
}

// Pass 1 of the separable resize, one source row (float, padded by 4 floats): output x of the
// row sums its K taps from 0, in order (K = 0: k taps, known at run time). ofs: each tap's
// element offset (source index times C); w4: each tap's weight 4 times (a ready 4-wide operand).
// For 3 and 4 channels a pixel is one 4-wide vector (for 3, the 4th lane reads the next pixel or
// the padding and is written to the next pixel, which x + 1 then rewrites, or to the padding).
template <int C, int K>
void resize_hpass(const float* in, float* out, int n_out, const int* ofs, const v4* w4, int k) {
    const int kn = K > 0 ? K : k;
    for (int x = 0; x < n_out; ++x) {
        const int* to = ofs + static_cast<std::ptrdiff_t>(x) * kn;
        const v4* tw = w4 + static_cast<std::ptrdiff_t>(x) * kn;
        if constexpr (C >= 3) {
            v4 acc = tw[0] * load4(in + to[0]);  // (0 + first: the same up to the sign of 0)
            for (int j = 1; j < kn; ++j) acc += tw[j] * load4(in + to[j]);
            std::memcpy(out + x * C, &acc, sizeof(acc));
        } else {
            float acc[C] = {};
            for (int j = 0; j < kn; ++j)
                for (int c = 0; c < C; ++c) acc[c] += tw[j][0] * in[to[j] + c];
            for (int c = 0; c < C; ++c) out[x * C + c] = acc[c];
        }
    }
}

// Pass 2, one output row: acc = sum_j w_j r_j from 0, taps in order (K = 0: k taps).
template <int K>
void resize_vpass(const float* const* r, const float* w, float* acc, std::ptrdiff_t n, int k) {
    if constexpr (K == 2) {
        for (std::ptrdiff_t i = 0; i < n; ++i) acc[i] = w[0] * r[0][i] + w[1] * r[1][i];
    } else if constexpr (K == 4) {
        for (std::ptrdiff_t i = 0; i < n; ++i)
            acc[i] = ((w[0] * r[0][i] + w[1] * r[1][i]) + w[2] * r[2][i]) + w[3] * r[3][i];
    } else {
        for (std::ptrdiff_t i = 0; i < n; ++i) acc[i] = w[0] * r[0][i];
        for (int j = 1; j < k; ++j)
            for (std::ptrdiff_t i = 0; i < n; ++i) acc[i] += w[j] * r[j][i];
    }
}

// Each thread takes a contiguous range of output rows, in order, and keeps the source rows they
// need, filtered horizontally, in a small cache (taps + 4 rows: a few hundred KB, it stays in
// the core's cache): each source row is filtered once per thread, whatever the border does to
// the row order. Then the columns are filtered, in chunks that stay in L1 when the output is an
// integer type.
template <class S, class D, int C, int KX, int KY>
void resize_rows(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, const AxisTable& tx,
                 const AxisTable& ty, int threads) {
    const std::ptrdiff_t tstride = std::ptrdiff_t{dst.width} * C;
    const std::ptrdiff_t rstride = tstride + 4;  // + the 4-wide store's padding
    const std::ptrdiff_t in_n = std::ptrdiff_t{src.width} * C;
    std::vector<int> ofs(tx.idx.size());
    std::vector<v4> w4(tx.w.size());
    for (std::size_t i = 0; i < ofs.size(); ++i) {
        ofs[i] = tx.idx[i] * C;
        w4[i] = v4{tx.w[i], tx.w[i], tx.w[i], tx.w[i]};
    }
    std::vector<int> outside_x;  // Constant: outputs whose column maps outside
    for (int x = 0; x < dst.width; ++x)
        if (!tx.valid[x]) outside_x.push_back(x);
    const D fill = saturate_from_float<D>(p.fill);
    // AVX2 passes (warp_cpu_avx2.cpp): the same operations, 8 floats at a time.
    const bool avx2 = simd::cpu_has_avx2_fma();
    constexpr int kType = std::is_same_v<D, float> ? 0 : (sizeof(D) == 1 ? 1 : 2);
    const int parts = std::min(resolve_threads(threads), dst.height);
    parallel_for(0, parts, parts, [&](int part) {
        const int y0 = static_cast<int>(std::int64_t{dst.height} * part / parts);
        const int y1 = static_cast<int>(std::int64_t{dst.height} * (part + 1) / parts);
        const int slots = ty.taps + 4;
        // Uninitialised: every element read is written first (the padding lanes only feed the
        // 4th lane of 3-channel pixels, which is never stored in the end).
        const std::unique_ptr<float[]> buf(new float[static_cast<std::size_t>(slots) * rstride]);
        std::vector<int> tag(static_cast<std::size_t>(slots), -1);   // source row of each slot
        std::vector<int> used(static_cast<std::size_t>(slots), -1);  // last output row using it
        const std::unique_ptr<float[]> in(new float[in_n + 4]);
        std::fill(in.get() + in_n, in.get() + in_n + 4, 0.0f);
        std::vector<const float*> rp(static_cast<std::size_t>(ty.taps)), rc(rp.size());
        for (int y = y0; y < y1; ++y) {
            D* out = dst.row(y);
            if (!ty.valid[y]) {
                std::fill(out, out + tstride, fill);
                continue;
            }
            const int* ti = &ty.idx[static_cast<std::size_t>(y) * ty.taps];
            for (int j = 0; j < ty.taps; ++j) {
                int s = 0;
                while (s < slots && tag[s] != ti[j]) ++s;
                if (s == slots) {  // not cached: the least recently used slot this row does not use
                    s = -1;
                    for (int k = 0; k < slots; ++k)
                        if (used[k] < y && (s < 0 || used[k] < used[s])) s = k;
                    const S* r = src.row(ti[j]);
                    for (std::ptrdiff_t i = 0; i < in_n; ++i) in[i] = static_cast<float>(r[i]);
                    if (C >= 2 && avx2)
                        simd::resize_hpass_avx2(in.get(), buf.get() + s * rstride, dst.width, C,
                                                ofs.data(),
                                                reinterpret_cast<const float*>(w4.data()), tx.taps);
                    else
                        resize_hpass<C, KX>(in.get(), buf.get() + s * rstride, dst.width,
                                            ofs.data(), w4.data(), tx.taps);
                    tag[s] = ti[j];
                }
                used[s] = y;
                rp[j] = buf.get() + s * rstride;
            }
            const float* tw = &ty.w[static_cast<std::size_t>(y) * ty.taps];
            if (avx2) {
                simd::resize_vpass_avx2(rp.data(), tw, ty.taps, tstride, out, kType);
            } else if constexpr (std::is_same_v<D, float>) {
                resize_vpass<KY>(rp.data(), tw, out, tstride, ty.taps);
            } else {
                constexpr std::ptrdiff_t kChunk = 1024;  // 4 KB of sums
                float acc[kChunk];
                for (std::ptrdiff_t i0 = 0; i0 < tstride; i0 += kChunk) {
                    const std::ptrdiff_t n = std::min(kChunk, tstride - i0);
                    for (int j = 0; j < ty.taps; ++j) rc[j] = rp[j] + i0;
                    resize_vpass<KY>(rc.data(), tw, acc, n, ty.taps);
                    saturate_row_from_float<D>(acc, out + i0, n);
                }
            }
            for (int x : outside_x)
                for (int c = 0; c < C; ++c) out[x * C + c] = fill;
        }
    });
}

// Band (Resize): output rows [band.y0, band.y0 + dst.height) of the whole output, reading rows
// [band.r0, band.r0 + src.height) of a band.span_h-row span (the whole call: y0 = r0 = 0 and
// span_h = src.height). Point maps: dst's outputs start at (band.x0, band.y0) (warp_points).
struct Band {
    int y0 = 0, r0 = 0, span_h = 0, x0 = 0;
};

template <class S, class D, int C>
void resize_separable(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, int threads,
                      Band band) {
    if (band.span_h == 0) band.span_h = src.height;
    const int orig_w = src.width - 2 * p.pad, orig_h = band.span_h - 2 * p.pad;
    const AxisTable tx = axis_table(dst.width, src.width, p.m[0], p.m[2], p.pad, orig_w, p);
    AxisTable ty = axis_table(dst.height, band.span_h, p.m[4], p.m[5], p.pad, orig_h, p, band.y0);
    if (band.r0 != 0 || src.height != band.span_h)
        for (std::size_t i = 0; i < ty.idx.size(); ++i) {
            if (!ty.valid[i / static_cast<std::size_t>(ty.taps)]) continue;
            ty.idx[i] -= band.r0;
            if (ty.idx[i] < 0 || ty.idx[i] >= src.height)
                throw Error(ErrorCode::Internal, "warp: a band's tap row is outside its rows");
        }
    // The plain kernels' tap counts as constants (antialiased axes: at run time).
    auto ky = [&](auto kx) {
        constexpr int KX = decltype(kx)::value;
        if (ty.taps == 2) return resize_rows<S, D, C, KX, 2>(src, dst, p, tx, ty, threads);
        if (ty.taps == 4) return resize_rows<S, D, C, KX, 4>(src, dst, p, tx, ty, threads);
        return resize_rows<S, D, C, KX, 0>(src, dst, p, tx, ty, threads);
    };
    if (tx.taps == 2) return ky(std::integral_constant<int, 2>());
    if (tx.taps == 4) return ky(std::integral_constant<int, 4>());
    return ky(std::integral_constant<int, 0>());
}

template <class S, class D>
void warp_impl(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, int threads, Band band = {}) {
    // Small outputs run on one thread: a parallel region costs more than the work (measured:
    // 23 x 17 outputs took ~10x longer on 2 busy cores with OpenMP than without).
    if (std::int64_t{dst.width} * dst.height < (1 << 14)) threads = 1;
    const bool resize = p.kind == Transform::Kind::Resize;
    switch (dst.channels) {
        case 1:
            return resize ? resize_separable<S, D, 1>(src, dst, p, threads, band)
                          : warp_points_c<S, D, 1>(src, dst, band.x0, band.y0, p, threads);
        case 2:
            return resize ? resize_separable<S, D, 2>(src, dst, p, threads, band)
                          : warp_points_c<S, D, 2>(src, dst, band.x0, band.y0, p, threads);
        case 3:
            return resize ? resize_separable<S, D, 3>(src, dst, p, threads, band)
                          : warp_points_c<S, D, 3>(src, dst, band.x0, band.y0, p, threads);
        default:
            return resize ? resize_separable<S, D, 4>(src, dst, p, threads, band)
                          : warp_points_c<S, D, 4>(src, dst, band.x0, band.y0, p, threads);
    }
}

}  // namespace

ResizeRowReach::ResizeRowReach(const WarpPlan& plan, int span_h, int y0, int y1)
    : y0_(y0), span_h_(span_h) {
    const int n = std::max(0, y1 - y0);
    lo_.assign(static_cast<std::size_t>(n), span_h);
    hi_.assign(static_cast<std::size_t>(n), -1);
    // In pieces: the tables of a piece stay in cache.
    constexpr int kPiece = 4096;
    for (int a = 0; a < n; a += kPiece) {
        const int m = std::min(kPiece, n - a);
        const AxisTable ty = axis_table(m, span_h, plan.m[4], plan.m[5], plan.pad,
                                        span_h - 2 * plan.pad, plan, y0 + a);
        const auto taps = static_cast<std::size_t>(ty.taps);
        for (int i = 0; i < m; ++i) {
            if (!ty.valid[static_cast<std::size_t>(i)]) continue;
            const int* t = &ty.idx[static_cast<std::size_t>(i) * taps];
            const auto r = static_cast<std::size_t>(a + i);
            lo_[r] = *std::min_element(t, t + taps);
            hi_[r] = *std::max_element(t, t + taps);
        }
    }
}

std::pair<int, int> ResizeRowReach::rows(int a, int b) const {
    const auto first = static_cast<std::size_t>(a - y0_), last = static_cast<std::size_t>(b - y0_);
    if (a >= b) return {span_h_, -1};
    return {*std::min_element(lo_.begin() + first, lo_.begin() + last),
            *std::max_element(hi_.begin() + first, hi_.begin() + last)};
}

template <class S, class D>
void warp_box(Span2D<const S> src, int sx0, int sy0, int span_w, int span_h, Span2D<D> dst, int ox,
              int oy, const WarpPlan& plan, int threads) {
    // The view of the span whose sample (0, 0) is where the box's sample (-sx0, -sy0) would
    // be: the whole call's indices then address the box's samples.
    const Span2D<const S> span{src.data - sy0 * src.stride - std::ptrdiff_t{sx0} * src.channels,
                               span_w, span_h, src.channels, src.stride};
    warp_impl(span, dst, plan, threads, Band{oy, 0, span_h, ox});
}
template void warp_box(Span2D<const std::uint8_t>, int, int, int, int, Span2D<std::uint8_t>, int,
                       int, const WarpPlan&, int);
template void warp_box(Span2D<const std::uint16_t>, int, int, int, int, Span2D<std::uint16_t>, int,
                       int, const WarpPlan&, int);
template void warp_box(Span2D<const float>, int, int, int, int, Span2D<float>, int, int,
                       const WarpPlan&, int);
template void warp_box(Span2D<const float>, int, int, int, int, Span2D<std::uint8_t>, int, int,
                       const WarpPlan&, int);
template void warp_box(Span2D<const float>, int, int, int, int, Span2D<std::uint16_t>, int, int,
                       const WarpPlan&, int);

template <class S, class D>
void warp_resize_band(Span2D<const S> src, Span2D<D> dst, const WarpPlan& plan, int span_h, int y0,
                      int r0, int threads) {
    warp_impl(src, dst, plan, threads, Band{y0, r0, span_h});
}
template void warp_resize_band(Span2D<const std::uint8_t>, Span2D<std::uint8_t>, const WarpPlan&,
                               int, int, int, int);
template void warp_resize_band(Span2D<const std::uint16_t>, Span2D<std::uint16_t>, const WarpPlan&,
                               int, int, int, int);
template void warp_resize_band(Span2D<const float>, Span2D<float>, const WarpPlan&, int, int, int,
                               int);
template void warp_resize_band(Span2D<const float>, Span2D<std::uint8_t>, const WarpPlan&, int, int,
                               int, int);
template void warp_resize_band(Span2D<const float>, Span2D<std::uint16_t>, const WarpPlan&, int,
                               int, int, int);

void warp(Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst, const WarpPlan& plan,
          int threads) {
    warp_impl(src, dst, plan, threads);
}
void warp(Span2D<const std::uint16_t> src, Span2D<std::uint16_t> dst, const WarpPlan& plan,
          int threads) {
    warp_impl(src, dst, plan, threads);
}
void warp(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan, int threads) {
    warp_impl(src, dst, plan, threads);
}
void warp(Span2D<const float> coeffs, Span2D<std::uint8_t> dst, const WarpPlan& plan, int threads) {
    warp_impl(coeffs, dst, plan, threads);
}
void warp(Span2D<const float> coeffs, Span2D<std::uint16_t> dst, const WarpPlan& plan,
          int threads) {
    warp_impl(coeffs, dst, plan, threads);
}

}  // namespace upres::cpu
