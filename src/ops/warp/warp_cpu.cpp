// Optimized CPU backend of upres::warp: a schedule of warp_math.hpp.
//
//  * Point transforms (affine, rotation, perspective, remap, flow): OpenMP over output rows;
//    coordinates in double (exact enough for 65536-pixel images), weights and sums in float;
//    pixels whose taps all lie inside the source take a branch-free path specialised on the
//    interpolation and the channel count (row pointers, fixed tap loops); the few near the
//    border take the reference formula (sample_point<double>). On CPUs with AVX2 + FMA (run-time
//    check, simd::cpu_has_avx2_fma), affine maps, remaps and displacement fields of 1-channel
//    float sources with 2x2 or 4x4 taps run 8 outputs at a time in warp_cpu_avx2.cpp
//    (warp_cpu_simd.hpp); the pixels it flags take the scalar border path here.
//  * Resize: separable. Per-axis tap tables (indices already border-mapped, weights, the
//    Constant "outside" flag) are computed once from warp_math.hpp; pass 1 filters the needed
//    source rows horizontally into a float buffer, pass 2 filters columns. Same summation order
//    as the reference (rows first, then columns).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>
#include <vector>

#include "core/convert_math.hpp"
#include "core/parallel.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cpu_simd.hpp"

namespace upres::cpu {

namespace simd {
bool cpu_has_avx2_fma() {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    // UPRES_CPU_BASELINE=1 forces the portable path (tests of the fallback on AVX2 machines).
    static const bool ok = warp_avx2_compiled() && __builtin_cpu_supports("avx2") &&
                           __builtin_cpu_supports("fma") && !std::getenv("UPRES_CPU_BASELINE");
    return ok;
#else
    return false;
#endif
}
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
inline v4 load4(const S* p) {
    return v4{static_cast<float>(p[0]), static_cast<float>(p[1]), static_cast<float>(p[2]),
              static_cast<float>(p[3])};
}
inline float hsum(v4 v) { return (v[0] + v[1]) + (v[2] + v[3]); }

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
            } else if constexpr (C == 4) {
                v4 acc = {0, 0, 0, 0};
                for (int j = 0; j < 4; ++j) {
                    const S* r = p0 + j * st;
                    acc += wy[j] * (wx[0] * load4(r) + wx[1] * load4(r + 4) + wx[2] * load4(r + 8) +
                                    wx[3] * load4(r + 12));
                }
                for (int c = 0; c < 4; ++c) o[c] = saturate_from_float<D>(acc[c]);
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

template <class S, class D, int C, Interp I>
void warp_points(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, int threads) {
    const double pad = p.pad;
    const int sw = src.width, sh = src.height;
    const double m0 = p.m[0], m3 = p.m[3];
    // Tiles of kTileH x kTileW output pixels keep the source footprint of rotations in cache
    // and TLB (a 2048-wide rotated row touches ~1000 source rows).
    constexpr int kTileH = 16, kTileW = 64;
    const int bands = (dst.height + kTileH - 1) / kTileH;
    // AVX2 row kernels (warp_cpu_avx2.cpp): affine maps, remaps and displacement fields of
    // 1-channel float sources with 2 x 2 or 4 x 4 taps, when the CPU has AVX2 + FMA and gather
    // offsets fit in 32 bits.
    constexpr bool kVecType = std::is_same_v<S, float> && C == 1 && kTaps<I> >= 2;
    bool vec = false;
    float poly[4][4] = {};
    if constexpr (kVecType) {
        vec = (p.kind == Transform::Kind::Affine || p.kind == Transform::Kind::Remap ||
               p.kind == Transform::Kind::Flow) &&
              simd::cpu_has_avx2_fma() &&
              (std::int64_t{sh} - 1) * src.stride + sw < (std::int64_t{1} << 31);
        if constexpr (kTaps<I> == 4) cubic_weight_poly<float>(I, p.cubic_a, poly);
    }
    // pad > 0 (B-spline + Nearest) clamps in the padded span: no vector border mapping.
    int vborder = 0;
    if (p.pad == 0) {
        if (p.border == Border::Mirror) vborder = 1;
        if (p.border == Border::Constant) vborder = 2;
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
    parallel_for(0, bands, threads, [&](int band) {
        const Interior<S, C, I> interior_sample(p);  // local: constants stay in registers
        float vbuf[kTileW];
        std::uint8_t vflag[kTileW];
        const int y0 = band * kTileH, y1 = std::min(dst.height, y0 + kTileH);
        for (int x0 = 0; x0 < dst.width; x0 += kTileW) {
            const int x1 = std::min(dst.width, x0 + kTileW);
            for (int y = y0; y < y1; ++y) {
                D* out = dst.row(y);
                const float* frow = p.field.data ? p.field.row(y) : nullptr;
                const double ub = p.m[1] * y + p.m[2] + pad, vb = p.m[4] * y + p.m[5] + pad;
                if constexpr (kVecType) {
                    if (vec) {  // AVX2: interior pixels 8 at a time, the rest below
                        float* vo =
                            std::is_same_v<D, float> ? reinterpret_cast<float*>(out) + x0 : vbuf;
                        const int flagged =
                            p.kind == Transform::Kind::Affine
                                ? simd::affine_row_c1_avx2(src.data, src.stride, sw, sh, kTaps<I>,
                                                           ub, vb, m0, m3, x0, x1, poly, vborder,
                                                           p.fill, vo, vflag)
                                : simd::field_row_c1_avx2(src.data, src.stride, sw, sh, kTaps<I>,
                                                          p.kind == Transform::Kind::Flow, frow, y,
                                                          pad, x0, x1, poly, vborder, p.fill, vo,
                                                          vflag);
                        if (flagged == 0 && std::is_same_v<D, float>) continue;
                        for (int x = x0; x < x1; ++x) {
                            if (vflag[x - x0]) {
                                double u, v;
                                coords(x, y, frow, ub, vb, u, v);
                                interior_sample.border_sample(src, u, v, out + x);
                            } else if constexpr (!std::is_same_v<D, float>) {
                                out[x] = saturate_from_float<D>(vo[x - x0]);
                            }
                        }
                        continue;
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
            }
        }
    });
}

template <class S, class D, int C>
void warp_points_c(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, int threads) {
    switch (p.interp) {
        case Interp::Nearest:
            return warp_points<S, D, C, Interp::Nearest>(src, dst, p, threads);
        case Interp::Linear:
            return warp_points<S, D, C, Interp::Linear>(src, dst, p, threads);
        case Interp::Cubic:
            return warp_points<S, D, C, Interp::Cubic>(src, dst, p, threads);
        case Interp::BSpline:
            return warp_points<S, D, C, Interp::BSpline>(src, dst, p, threads);
    }
}

// ---------------------------------------------------------------- separable resize
struct AxisTable {
    int taps = 0;             // per output sample
    std::vector<int> idx;     // n_out * taps, border-mapped source indices
    std::vector<float> w;     // n_out * taps
    std::vector<char> valid;  // n_out; 0: fill value
};

// Taps of one axis: output i -> source coordinate m * i + off + pad in a span of n samples.
AxisTable axis_table(int n_out, int n_span, double m, double off, double pad, int n_orig,
                     const WarpPlan& p) {
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
        double u = m * i + off + pad;
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

template <class S, class D, int C>
void resize_separable(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, int threads) {
    const int orig_w = src.width - 2 * p.pad, orig_h = src.height - 2 * p.pad;
    const AxisTable tx = axis_table(dst.width, src.width, p.m[0], p.m[2], p.pad, orig_w, p);
    const AxisTable ty = axis_table(dst.height, src.height, p.m[4], p.m[5], p.pad, orig_h, p);
    // Source rows used by pass 2.
    std::vector<int> row_slot(static_cast<std::size_t>(src.height), -1);
    std::vector<int> rows;
    for (int y = 0; y < dst.height; ++y)
        if (ty.valid[y])
            for (int j = 0; j < ty.taps; ++j) {
                const int r = ty.idx[static_cast<std::size_t>(y) * ty.taps + j];
                if (row_slot[r] < 0) {
                    row_slot[r] = static_cast<int>(rows.size());
                    rows.push_back(r);
                }
            }
    const std::ptrdiff_t tstride = std::ptrdiff_t{dst.width} * C;
    std::vector<float> tmp(rows.size() * static_cast<std::size_t>(tstride));
    // Pass 1: horizontal.
    const int KX = tx.taps;
    parallel_for(0, static_cast<int>(rows.size()), threads, [&](int ri) {
        const S* in = src.row(rows[ri]);
        float* o = tmp.data() + ri * tstride;
        for (int x = 0; x < dst.width; ++x) {
            const int* ti = &tx.idx[static_cast<std::size_t>(x) * KX];
            const float* tw = &tx.w[static_cast<std::size_t>(x) * KX];
            float acc[C] = {};
            for (int k = 0; k < KX; ++k) {
                const S* px = in + ti[k] * C;
                for (int c = 0; c < C; ++c) acc[c] += tw[k] * static_cast<float>(px[c]);
            }
            for (int c = 0; c < C; ++c) o[x * C + c] = acc[c];
        }
    });
    // Pass 2: vertical.
    const int KY = ty.taps;
    parallel_for(0, dst.height, threads, [&](int y) {
        D* out = dst.row(y);
        if (!ty.valid[y]) {
            for (std::ptrdiff_t i = 0; i < tstride; ++i) out[i] = saturate_from_float<D>(p.fill);
            return;
        }
        const int* ti = &ty.idx[static_cast<std::size_t>(y) * KY];
        const float* tw = &ty.w[static_cast<std::size_t>(y) * KY];
        std::vector<float> acc(static_cast<std::size_t>(tstride), 0.0f);
        for (int j = 0; j < KY; ++j) {
            const float* r = tmp.data() + row_slot[ti[j]] * tstride;
            const float wj = tw[j];
            for (std::ptrdiff_t i = 0; i < tstride; ++i) acc[i] += wj * r[i];
        }
        for (int x = 0; x < dst.width; ++x)
            for (int c = 0; c < C; ++c)
                out[x * C + c] = saturate_from_float<D>(tx.valid[x] ? acc[x * C + c] : p.fill);
    });
}

template <class S, class D>
void warp_impl(Span2D<const S> src, Span2D<D> dst, const WarpPlan& p, int threads) {
    // Small outputs run on one thread: a parallel region costs more than the work (measured:
    // 23 x 17 outputs took ~10x longer on 2 busy cores with OpenMP than without).
    if (std::int64_t{dst.width} * dst.height < (1 << 14)) threads = 1;
    const bool resize = p.kind == Transform::Kind::Resize;
    switch (dst.channels) {
        case 1:
            return resize ? resize_separable<S, D, 1>(src, dst, p, threads)
                          : warp_points_c<S, D, 1>(src, dst, p, threads);
        case 2:
            return resize ? resize_separable<S, D, 2>(src, dst, p, threads)
                          : warp_points_c<S, D, 2>(src, dst, p, threads);
        case 3:
            return resize ? resize_separable<S, D, 3>(src, dst, p, threads)
                          : warp_points_c<S, D, 3>(src, dst, p, threads);
        default:
            return resize ? resize_separable<S, D, 4>(src, dst, p, threads)
                          : warp_points_c<S, D, 4>(src, dst, p, threads);
    }
}

}  // namespace

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
