// AVX2 + FMA hot loops of the CPU warp backend (declared in warp_cpu_simd.hpp). This file alone
// is compiled with -mavx2 -mfma (CMakeLists.txt) and called only after a run-time CPU check.
//
// It must not instantiate any inline function or template shared with other translation units
// (std::min, Span2D::row, warp_math.hpp, ...): the linker keeps one copy of each, and the copy
// compiled here would contain AVX2 instructions that the baseline build could then execute on a
// CPU without them. Hence only <immintrin.h> and plain code below (the templates are in an
// anonymous namespace: internal linkage, never merged).
#include "ops/warp/warp_cpu_simd.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace upres::cpu::simd {

namespace {  // internal linkage: never merged with a baseline copy

#define UPRES_AVX2_INLINE inline __attribute__((always_inline))

// Border::Mirror's map_coord (warp_math.hpp) for coordinates within one reflection of the image,
// same double operations: u < 0 -> -u; then u >= n -> (2n - 2) - u. Coordinates further out
// end up outside the interior and are left to the caller (exact scipy rule).
inline __m256d mirror_once(__m256d u, __m256d p, __m256d n) {
    u = _mm256_blendv_pd(u, _mm256_sub_pd(_mm256_setzero_pd(), u),
                         _mm256_cmp_pd(u, _mm256_setzero_pd(), _CMP_LT_OQ));
    return _mm256_blendv_pd(u, _mm256_sub_pd(p, u), _mm256_cmp_pd(u, n, _CMP_GE_OQ));
}
// w[k] lane p (k < 4, p < 8) -> t[a] = (w[0..3] of pixel a | w[0..3] of pixel a + 4).
inline void transpose4x8(const __m256 w[4], __m256 t[4]) {
    const __m256 t0 = _mm256_unpacklo_ps(w[0], w[1]), t1 = _mm256_unpacklo_ps(w[2], w[3]);
    const __m256 t2 = _mm256_unpackhi_ps(w[0], w[1]), t3 = _mm256_unpackhi_ps(w[2], w[3]);
    t[0] = _mm256_shuffle_ps(t0, t1, 0x44);
    t[1] = _mm256_shuffle_ps(t0, t1, 0xEE);
    t[2] = _mm256_shuffle_ps(t2, t3, 0x44);
    t[3] = _mm256_shuffle_ps(t2, t3, 0xEE);
}
// Lanes (4-bit mask) with u or v outside [0, last] or NaN: Border::Constant's fill value.
// Lanes with u in [0, ul] and v in [0, vl] (false for NaN), as a vector mask.
inline __m256d inside(__m256d u, __m256d v, __m256d ul, __m256d vl) {
    const __m256d z = _mm256_setzero_pd();
    return _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(u, z, _CMP_GE_OQ), _mm256_cmp_pd(u, ul, _CMP_LE_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(v, z, _CMP_GE_OQ), _mm256_cmp_pd(v, vl, _CMP_LE_OQ)));
}
inline int outside(__m256d u, __m256d v, __m256d ul, __m256d vl) {
    return _mm256_movemask_pd(inside(u, v, ul, vl)) ^ 0xf;
}
// The two floats at p and the two at p + stride: one pixel's 2 x 2 footprint (memcpy: no
// alignment assumed; compilers emit two 64-bit loads).
inline __m128 footprint2x2(const float* p, std::ptrdiff_t stride) {
    long long a, b;
    __builtin_memcpy(&a, p, sizeof(a));
    __builtin_memcpy(&b, p + stride, sizeof(b));
    return _mm_castsi128_ps(_mm_set_epi64x(b, a));
}

// The footprints of pixels a (low half) and b (high half), as floats.
inline __m256 footprints2x2(const float* a, const float* b, std::ptrdiff_t stride) {
    return _mm256_set_m128(footprint2x2(b, stride), footprint2x2(a, stride));
}
inline __m256 footprints2x2(const std::uint8_t* a, const std::uint8_t* b, std::ptrdiff_t stride) {
    std::uint16_t w[4];
    __builtin_memcpy(&w[0], a, 2);
    __builtin_memcpy(&w[1], a + stride, 2);
    __builtin_memcpy(&w[2], b, 2);
    __builtin_memcpy(&w[3], b + stride, 2);
    long long q;
    __builtin_memcpy(&q, w, sizeof(q));
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(q)));
}
inline __m256 footprints2x2(const std::uint16_t* a, const std::uint16_t* b, std::ptrdiff_t stride) {
    std::uint32_t w[4];
    __builtin_memcpy(&w[0], a, 4);
    __builtin_memcpy(&w[1], a + stride, 4);
    __builtin_memcpy(&w[2], b, 4);
    __builtin_memcpy(&w[3], b + stride, 4);
    __m128i v;
    __builtin_memcpy(&v, w, sizeof(v));
    return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(v));
}

// The interior lanes of one step of 8 output pixels (Geometry::prepare).
struct Lanes {
    int m;                   // 8-bit mask of the lanes to interpolate
    __m256 tu, tv;           // fractions of u and v
    alignas(32) int ofs[8];  // element offset of each lane's first tap
};

// Where 8 output pixels fall in a source of C samples per pixel (C = 1 to 4) with Taps x Taps
// taps (2: bilinear, 4: Keys cubic or B-spline), at the double coordinates (ua | ub, va | vb)
// (pixels 0-3 | 4-7), as the scalar path of warp_cpu.cpp computes them. Interior:
// lo <= u < w - 1 - lo (lo = Taps / 2 - 1), and likewise v.
template <int Taps, int C>
class Geometry {
  public:
    Geometry(const RowSource& s, int border, float fill) : border_(border), fill_(fill) {
        constexpr double lo = Taps / 2 - 1;
        const int w = s.w, h = s.h;
        lo_ = _mm256_set1_pd(lo);
        uhi_ = _mm256_set1_pd(w - 1.0 - lo), vhi_ = _mm256_set1_pd(h - 1.0 - lo);
        pw_ = _mm256_set1_pd(2.0 * w - 2.0), nw_ = _mm256_set1_pd(w);
        ph_ = _mm256_set1_pd(2.0 * h - 2.0), nh_ = _mm256_set1_pd(h);
        wl_ = _mm256_set1_pd(w - 1.0), hl_ = _mm256_set1_pd(h - 1.0);
        vstride_ = _mm256_set1_epi32(static_cast<int>(s.stride));
        // split_lanes: the largest first-tap column and row, w - Taps and h - Taps (negative:
        // none; none_ keeps the maps from calling it)
        umax_ = w - Taps, vmax_ = h - Taps;
        // 2 and 3 channels: a pixel is read as 4 samples, so the first tap's offset must leave
        // room for the last tap's 4th sample: ofs + (Taps - 1) (stride + C) + 3 < (h - 1) stride
        // + C w.
        if constexpr (C == 2 || C == 3) {
            const long long last =
                (h - 1LL) * s.stride + 1LL * C * w - 1 - (Taps - 1LL) * (s.stride + C) - 3;
            last_ok_ = _mm256_set1_epi32(static_cast<int>(last < -1 ? -1 : last));
        }
        none_ = w < Taps || h < Taps;
    }
    // No pixel can be interior (source smaller than the footprint).
    bool none() const { return none_; }

    // The lanes of 8 pixels at u = iu + tu, v = iv + tv (integers and fractions, as the field
    // maps split them) when all 8 are interior: lo <= iu <= w - 2 - lo and likewise iv, which
    // is interior()'s test of u for tu in [0, 1). Returns false (L untouched) otherwise.
    UPRES_AVX2_INLINE bool split_lanes(__m256i iu, __m256i iv, __m256 tu, __m256 tv,
                                       Lanes& L) const {
        const __m256i back = _mm256_set1_epi32(Taps / 2 - 1);
        const __m256i col = _mm256_sub_epi32(iu, back), row = _mm256_sub_epi32(iv, back);
        // unsigned col <= umax and row <= vmax (negative values are large as unsigned)
        const __m256i umax = _mm256_set1_epi32(umax_), vmax = _mm256_set1_epi32(vmax_);
        const __m256i ok = _mm256_and_si256(_mm256_cmpeq_epi32(_mm256_min_epu32(col, umax), col),
                                            _mm256_cmpeq_epi32(_mm256_min_epu32(row, vmax), row));
        if (_mm256_movemask_ps(_mm256_castsi256_ps(ok)) != 0xff) return false;
        const __m256i idx = offset(col, row);
        if constexpr (C == 2 || C == 3) {  // a 4-sample read past the end: the double path
            if (_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, last_ok_))))
                return false;
        }
        _mm256_store_si256(reinterpret_cast<__m256i*>(L.ofs), idx);
        L.tu = tu, L.tv = tv, L.m = 0xff;
        return true;
    }

    // Lanes (8-bit mask, first n) whose footprint lies inside the source, without mapping.
    UPRES_AVX2_INLINE int interior(__m256d ua, __m256d ub, __m256d va, __m256d vb, int n,
                                   __m256d& ina, __m256d& inb) const {
        ina = _mm256_and_pd(
            _mm256_and_pd(_mm256_cmp_pd(ua, lo_, _CMP_GE_OQ), _mm256_cmp_pd(ua, uhi_, _CMP_LT_OQ)),
            _mm256_and_pd(_mm256_cmp_pd(va, lo_, _CMP_GE_OQ), _mm256_cmp_pd(va, vhi_, _CMP_LT_OQ)));
        inb = _mm256_and_pd(
            _mm256_and_pd(_mm256_cmp_pd(ub, lo_, _CMP_GE_OQ), _mm256_cmp_pd(ub, uhi_, _CMP_LT_OQ)),
            _mm256_and_pd(_mm256_cmp_pd(vb, lo_, _CMP_GE_OQ), _mm256_cmp_pd(vb, vhi_, _CMP_LT_OQ)));
        return (_mm256_movemask_pd(ina) | (_mm256_movemask_pd(inb) << 4)) & ((1 << n) - 1);
    }

    // fast: the caller knows all 8 pixels are interior (no mapping, no masks). Otherwise the
    // border is applied first (Mirror: one reflection; Constant: the fill outside
    // [0, w - 1] x [0, h - 1]); pixels still not interior get fl[i] = 1 and are left to the
    // caller. Writes the fill to o (C = 1: o[i]; else o[4 i + c]) and the lanes to interpolate
    // to L; returns the number flagged.
    UPRES_AVX2_INLINE int prepare(__m256d ua, __m256d ub, __m256d va, __m256d vb, bool fast, int n,
                                  float* o, std::uint8_t* fl, Lanes& L) const {
        int m = 0xff, flagged = 0;
        __m256d ina = _mm256_castsi256_pd(_mm256_set1_epi32(-1)), inb = ina;
        L.m = 0;
        if (fast) {
            for (int i = 0; i < 8; ++i) fl[i] = 0;
        } else {
            int fillm = 0;  // Constant: lanes outside [0, w - 1] x [0, h - 1] (or NaN)
            if (border_ == 1) {
                ua = mirror_once(ua, pw_, nw_), ub = mirror_once(ub, pw_, nw_);
                va = mirror_once(va, ph_, nh_), vb = mirror_once(vb, ph_, nh_);
            } else if (border_ == 2) {
                fillm =
                    (outside(ua, va, wl_, hl_) | (outside(ub, vb, wl_, hl_) << 4)) & ((1 << n) - 1);
            }
            m = interior(ua, ub, va, vb, n, ina, inb);  // false for NaN
            for (int i = 0; i < n; ++i) {
                fl[i] = static_cast<std::uint8_t>(((m | fillm) >> i & 1) ^ 1);
                flagged += fl[i];
                if (fillm >> i & 1)
                    for (int c = 0; c < (C == 1 ? 1 : 4); ++c) o[(C == 1 ? 1 : 4) * i + c] = fill_;
            }
            if (m == 0) return flagged;
        }
        // Interior lanes have u, v >= 0: truncation is floor.
        const __m256d fua = _mm256_round_pd(ua, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fub = _mm256_round_pd(ub, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fva = _mm256_round_pd(va, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fvb = _mm256_round_pd(vb, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        L.tu = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(ub, fub)),
                               _mm256_cvtpd_ps(_mm256_sub_pd(ua, fua)));
        L.tv = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(vb, fvb)),
                               _mm256_cvtpd_ps(_mm256_sub_pd(va, fva)));
        // Offset of each pixel's first tap; lanes not interior get 0 (the source is at least
        // Taps x Taps when any lane is interior).
        const __m256d zero = _mm256_setzero_pd();
        const __m256i iu = _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fub, inb)),
                                            _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fua, ina)));
        const __m256i iv = _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fvb, inb)),
                                            _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fva, ina)));
        const __m256i back = _mm256_set1_epi32(Taps / 2 - 1);
        const __m256i idx = offset(_mm256_sub_epi32(iu, back), _mm256_sub_epi32(iv, back));
        if constexpr (C == 2 || C == 3) {  // lanes whose last read would pass the end: the caller's
            const int bad =
                _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, last_ok_))) & m;
            if (bad) {
                m &= ~bad;
                for (int i = 0; i < 8; ++i)
                    if (bad >> i & 1) fl[i] = 1, ++flagged;
                if (m == 0) return flagged;
            }
        }
        const __m256i lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        const __m256i lanes =
            _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(m), lane_bits), lane_bits);
        _mm256_store_si256(reinterpret_cast<__m256i*>(L.ofs), _mm256_and_si256(idx, lanes));
        // Lanes not interpolated read an interpolated lane's taps (offset 0 may lie outside a
        // box's samples: cpu::warp_box addresses them from the whole span's origin).
        {
            if (m != 0xff) {
                const int f = L.ofs[__builtin_ctz(static_cast<unsigned>(m))];
                for (int i = 0; i < 8; ++i)
                    if (!(m >> i & 1)) L.ofs[i] = f;
            }
        }
        L.m = m;
        return flagged;
    }

  private:
    // Element offset of the first tap at column col, row row.
    UPRES_AVX2_INLINE __m256i offset(__m256i col, __m256i row) const {
        if constexpr (C > 1) col = _mm256_mullo_epi32(col, _mm256_set1_epi32(C));
        return _mm256_add_epi32(_mm256_mullo_epi32(row, vstride_), col);
    }

    int border_;
    float fill_;
    bool none_;
    __m256d lo_, uhi_, vhi_, pw_, nw_, ph_, nh_, wl_, hl_;
    __m256i vstride_, last_ok_;
    int umax_, vmax_;
};

// cubic_weight_poly's polynomials broadcast to 8 lanes (set: once per row call, 4-tap kernels
// only); weights: ((p0 t + p1) t + p2) t + p3 of 8 fractions, one register per tap.
struct CubicPoly {
    __m256 p[4][4];
    void set(const float (&poly)[4][4]) {
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 4; ++k) p[j][k] = _mm256_set1_ps(poly[j][k]);
    }
    UPRES_AVX2_INLINE void weights(__m256 t, __m256 w[4]) const {
        for (int k = 0; k < 4; ++k)
            w[k] = _mm256_fmadd_ps(
                _mm256_fmadd_ps(_mm256_fmadd_ps(p[0][k], t, p[1][k]), t, p[2][k]), t, p[3][k]);
    }
};

// 4 samples at a (low half) and 4 at b (high half), as floats.
UPRES_AVX2_INLINE __m256 load2px(const float* a, const float* b) {
    return _mm256_loadu2_m128(b, a);
}
UPRES_AVX2_INLINE __m256 load2px(const std::uint8_t* a, const std::uint8_t* b) {
    int x, y;
    __builtin_memcpy(&x, a, sizeof(x));
    __builtin_memcpy(&y, b, sizeof(y));
    return _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_insert_epi32(_mm_cvtsi32_si128(x), y, 1)));
}
UPRES_AVX2_INLINE __m256 load2px(const std::uint16_t* a, const std::uint16_t* b) {
    long long x, y;
    __builtin_memcpy(&x, a, sizeof(x));
    __builtin_memcpy(&y, b, sizeof(y));
    return _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm_set_epi64x(y, x)));
}

// What Kernel1 and KernelC share: the source rows, the cubic weights' polynomials (4 x 4 taps)
// and the prefetch of a footprint's rows.
template <int Taps, class S>
class KernelSource {
  public:
    KernelSource(const RowSource& s, const RowKernel& k)
        : src_(static_cast<const S*>(s.data)), stride_(s.stride) {
        if constexpr (Taps == 4) poly_.set(k.poly);
    }
    // The tap rows of the footprint at ofs, 512 bytes further on (run_row).
    UPRES_AVX2_INLINE void prefetch_ahead(int ofs) const {
        for (int j = 0; j < Taps; ++j)
            _mm_prefetch(reinterpret_cast<const char*>(src_ + ofs + j * stride_) + 512,
                         _MM_HINT_T0);
    }

  protected:
    const S* src_;
    std::ptrdiff_t stride_;
    CubicPoly poly_;
};

// 1-channel source of sample type S (float, u8, u16; integers widened to float as they are
// loaded): out[i] for the lanes of L.
template <int Taps, class S = float>
class Kernel1 : public KernelSource<Taps, S> {
    using Base = KernelSource<Taps, S>;
    using Base::poly_;
    using Base::src_;
    using Base::stride_;

  public:
    static constexpr int kOut = 1;  // floats per output pixel
    using Base::Base;
    UPRES_AVX2_INLINE void operator()(const Lanes& L, int n, float* o) const {
        const __m256 acc = Taps == 4 ? cubic(L.tu, L.tv, L.ofs) : linear(L.tu, L.tv, L.ofs);
        if (L.m == 0xff && n == 8) {
            _mm256_storeu_ps(o, acc);
        } else {
            alignas(32) float tmp[8];
            _mm256_store_ps(tmp, acc);
            for (int i = 0; i < n; ++i)
                if (L.m >> i & 1) o[i] = tmp[i];
        }
    }

  private:
    // 4 x 4 taps. No gathers (slow on AMD Zen: vgatherdps measured 2x slower): the 4 rows of a
    // footprint are 4 unaligned 128-bit loads, two pixels (a, a + 4) per 256-bit register; the
    // weights (cubic_weight_poly's polynomials) are transposed to match and the 8 horizontal
    // sums come out in order from 3 hadds. Summation order of the scalar path:
    // (sum_j wy_j r_j) * wx, then (k0 + k1) + (k2 + k3).
    UPRES_AVX2_INLINE __m256 cubic(__m256 tu, __m256 tv, const int ofs[8]) const {
        __m256 wx[4], wy[4];
        poly_.weights(tu, wx);
        poly_.weights(tv, wy);
        __m256 X[4], Y[4];  // X[a]: x-weights of pixels a (low half) and a + 4 (high half)
        transpose4x8(wx, X);
        transpose4x8(wy, Y);
        const std::ptrdiff_t s = stride_;
        __m256 P[4];
        for (int a = 0; a < 4; ++a) {
            const S* lo = src_ + ofs[a];
            const S* hi = src_ + ofs[a + 4];
            __m256 r = _mm256_mul_ps(_mm256_permute_ps(Y[a], 0x00), load2px(lo, hi));
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0x55), load2px(lo + s, hi + s), r);
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0xAA), load2px(lo + 2 * s, hi + 2 * s), r);
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0xFF), load2px(lo + 3 * s, hi + 3 * s), r);
            P[a] = _mm256_mul_ps(r, X[a]);
        }
        return _mm256_hadd_ps(_mm256_hadd_ps(P[0], P[1]), _mm256_hadd_ps(P[2], P[3]));
    }
    // 2 x 2 taps: each pixel's footprint as one 128-bit register (two 64-bit loads), two pixels
    // (a, a + 4) per 256-bit register, times (1 - tx, tx, 1 - tx, tx); two hadds give the row
    // sums a0 = (1 - tx) r00 + tx r01 and a1, times (1 - ty, ty), and a third hadd the 8 outputs
    // in order: the scalar path's operations (no FMA), so the same bits.
    UPRES_AVX2_INLINE __m256 linear(__m256 tu, __m256 tv, const int ofs[8]) const {
        const __m256 one = _mm256_set1_ps(1.0f);
        const __m256 xl = _mm256_unpacklo_ps(_mm256_sub_ps(one, tu), tu);  // pixels 0 1 | 4 5
        const __m256 xh = _mm256_unpackhi_ps(_mm256_sub_ps(one, tu), tu);  // pixels 2 3 | 6 7
        const __m256 W[4] = {_mm256_castpd_ps(_mm256_movedup_pd(_mm256_castps_pd(xl))),
                             _mm256_castpd_ps(_mm256_permute_pd(_mm256_castps_pd(xl), 0xF)),
                             _mm256_castpd_ps(_mm256_movedup_pd(_mm256_castps_pd(xh))),
                             _mm256_castpd_ps(_mm256_permute_pd(_mm256_castps_pd(xh), 0xF))};
        __m256 P[4];
        for (int a = 0; a < 4; ++a)
            P[a] = _mm256_mul_ps(footprints2x2(src_ + ofs[a], src_ + ofs[a + 4], stride_), W[a]);
        const __m256 q01 = _mm256_mul_ps(_mm256_hadd_ps(P[0], P[1]),
                                         _mm256_unpacklo_ps(_mm256_sub_ps(one, tv), tv));
        const __m256 q23 = _mm256_mul_ps(_mm256_hadd_ps(P[2], P[3]),
                                         _mm256_unpackhi_ps(_mm256_sub_ps(one, tv), tv));
        return _mm256_hadd_ps(q01, q23);
    }
};

// 2-, 3- or 4-channel source of sample type S: each pixel one 4-sample vector, two pixels (i, i +
// 1) per 256-bit register; out[4 i + c] for the lanes of L. Bilinear: the scalar path's operations
// per channel ((1 - tx) r0 + tx r1, then (1 - ty) a0 + ty a1), so the same bits. 4 x 4 taps: sum_j
// wy_j (sum_k wx_k r_jk) with FMA.
template <int Taps, class S, int C>
class KernelC : public KernelSource<Taps, S> {
    using Base = KernelSource<Taps, S>;
    using Base::poly_;
    using Base::src_;
    using Base::stride_;

  public:
    static constexpr int kOut = 4;
    using Base::Base;
    UPRES_AVX2_INLINE void operator()(const Lanes& L, int n, float* o) const {
        (void)n;
        __m256 wx[4], wy[4];
        if constexpr (Taps == 4) {
            poly_.weights(L.tu, wx);
            poly_.weights(L.tv, wy);
        }
        const std::ptrdiff_t s = stride_;
        for (int i = 0; i < 8; i += 2) {
            const int pm = L.m >> i & 3;
            if (!pm) continue;
            const __m256i pat = _mm256_setr_epi32(i, i, i, i, i + 1, i + 1, i + 1, i + 1);
            const S* a = src_ + L.ofs[i];
            const S* b = src_ + L.ofs[i + 1];
            __m256 r;
            if constexpr (Taps == 2) {
                const __m256 one = _mm256_set1_ps(1.0f);
                const __m256 tx = _mm256_permutevar8x32_ps(L.tu, pat);
                const __m256 ty = _mm256_permutevar8x32_ps(L.tv, pat);
                const __m256 ox = _mm256_sub_ps(one, tx), oy = _mm256_sub_ps(one, ty);
                const __m256 a0 = _mm256_add_ps(_mm256_mul_ps(ox, load2px(a, b)),
                                                _mm256_mul_ps(tx, load2px(a + C, b + C)));
                const __m256 a1 = _mm256_add_ps(_mm256_mul_ps(ox, load2px(a + s, b + s)),
                                                _mm256_mul_ps(tx, load2px(a + s + C, b + s + C)));
                r = _mm256_add_ps(_mm256_mul_ps(oy, a0), _mm256_mul_ps(ty, a1));
            } else {
                __m256 X[4];
                for (int k = 0; k < 4; ++k) X[k] = _mm256_permutevar8x32_ps(wx[k], pat);
                r = _mm256_setzero_ps();
                for (int j = 0; j < 4; ++j) {
                    const S* ra = a + j * s;
                    const S* rb = b + j * s;
                    __m256 q = _mm256_mul_ps(X[0], load2px(ra, rb));
                    q = _mm256_fmadd_ps(X[1], load2px(ra + C, rb + C), q);
                    q = _mm256_fmadd_ps(X[2], load2px(ra + 2 * C, rb + 2 * C), q);
                    q = _mm256_fmadd_ps(X[3], load2px(ra + 3 * C, rb + 3 * C), q);
                    r = _mm256_fmadd_ps(_mm256_permutevar8x32_ps(wy[j], pat), q, r);
                }
            }
            if (pm == 3) {
                _mm256_storeu_ps(o + 4 * i, r);
            } else if (pm == 1) {
                _mm_storeu_ps(o + 4 * i, _mm256_castps256_ps128(r));
            } else {
                _mm_storeu_ps(o + 4 * i + 4, _mm256_extractf128_ps(r, 1));
            }
        }
    }
};

// Coordinates of 8 pixels from x (n of them valid); returns true when all 8 are known interior.
// Affine: u = ub + m0 x, v = vb + m3 x (the scalar path's expression, no FMA contraction).
template <int Taps>
class AffineMap {
  public:
    AffineMap(const RowMap& r, int w, int h)
        : ub_(r.ub),
          vb_(r.vb),
          m0_(r.m0),
          m3_(r.m3),
          // u and v are monotonic in x, so 8 pixels are interior (no border mapping, no masks)
          // when the first and the last are, with a margin of 1/64 sample (the lanes then cannot
          // round across an edge).
          lo_(Taps / 2 - 1 + 1.0 / 64),
          pu_(w - 1.0 - (Taps / 2 - 1) - 1.0 / 64),
          pv_(h - 1.0 - (Taps / 2 - 1) - 1.0 / 64) {}
    template <class G>
    UPRES_AVX2_INLINE bool operator()(const G&, int x, int n, __m256d& ua, __m256d& ub, __m256d& va,
                                      __m256d& vb) const {
        const __m256d xa =
            _mm256_add_pd(_mm256_set1_pd(static_cast<double>(x)), _mm256_setr_pd(0, 1, 2, 3));
        const __m256d xb = _mm256_add_pd(xa, _mm256_set1_pd(4.0));
        const __m256d vub = _mm256_set1_pd(ub_), vvb = _mm256_set1_pd(vb_);
        const __m256d vm0 = _mm256_set1_pd(m0_), vm3 = _mm256_set1_pd(m3_);
        ua = _mm256_add_pd(vub, _mm256_mul_pd(vm0, xa));
        ub = _mm256_add_pd(vub, _mm256_mul_pd(vm0, xb));
        va = _mm256_add_pd(vvb, _mm256_mul_pd(vm3, xa));
        vb = _mm256_add_pd(vvb, _mm256_mul_pd(vm3, xb));
        const double xl = static_cast<double>(x + 7), xf = static_cast<double>(x);
        const double uf = ub_ + m0_ * xf, ul = ub_ + m0_ * xl, vf = vb_ + m3_ * xf,
                     vl = vb_ + m3_ * xl;
        return n == 8 && uf >= lo_ && uf < pu_ && ul >= lo_ && ul < pu_ && vf >= lo_ && vf < pv_ &&
               vl >= lo_ && vl < pv_;
    }

  private:
    double ub_, vb_, m0_, m3_, lo_, pu_, pv_;
};

// Remap: u = f[2x] + pad; Flow: u = (x + f[2x]) + pad, v = (y + f[2x + 1]) + pad (the scalar
// path's expressions, in double).
template <bool Flow>
class FieldMap {
  public:
    explicit FieldMap(const RowMap& r)
        : field_(r.field), y_(r.y), pad_(r.pad), iy_(static_cast<int>(r.y + r.pad)) {}

    // The common case of 8 pixels x .. x + 7, in float and integers: u = iu + tu with iu = x +
    // floor(dx) + pad (Remap: floor(dx) + pad) and tu = dx - floor(dx), likewise v. x, y and pad
    // are integers, so that is the double path's split of u (operator() below, then
    // Geometry::prepare) up to the rounding of the fraction to float: the same bits but where
    // x + dx + pad itself rounds in double (tiny |dx|), an ulp of float or a
    // fraction of 1 instead of 0 on the integer below. |dx| >= 2^31 converts to INT_MIN, never
    // interior. Returns false, L untouched, unless all 8 are interior (Geometry::split_lanes).
    template <class G>
    UPRES_AVX2_INLINE bool split(const G& g, int x, Lanes& L) const {
        // the field 64 pixels ahead (see run_row)
        _mm_prefetch(reinterpret_cast<const char*>(field_ + 2 * x + 128), _MM_HINT_T0);
        const __m256 f0 = _mm256_loadu_ps(field_ + 2 * x);      // dx dy of pixels 0-3
        const __m256 f1 = _mm256_loadu_ps(field_ + 2 * x + 8);  // and 4-7
        // shuffle: (0 1 4 5 | 2 3 6 7); the 64-bit permute restores pixel order
        const __m256 du = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_shuffle_ps(f0, f1, 0x88)), _MM_SHUFFLE(3, 1, 2, 0)));
        const __m256 dv = _mm256_castpd_ps(_mm256_permute4x64_pd(
            _mm256_castps_pd(_mm256_shuffle_ps(f0, f1, 0xDD)), _MM_SHUFFLE(3, 1, 2, 0)));
        const __m256 fu = _mm256_floor_ps(du), fv = _mm256_floor_ps(dv);
        __m256i iu = _mm256_cvttps_epi32(fu), iv = _mm256_cvttps_epi32(fv);
        if constexpr (Flow) {
            iu =
                _mm256_add_epi32(iu, _mm256_add_epi32(_mm256_set1_epi32(x + static_cast<int>(pad_)),
                                                      _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
            iv = _mm256_add_epi32(iv, _mm256_set1_epi32(iy_));
        } else {
            const __m256i p = _mm256_set1_epi32(static_cast<int>(pad_));
            iu = _mm256_add_epi32(iu, p), iv = _mm256_add_epi32(iv, p);
        }
        return g.split_lanes(iu, iv, _mm256_sub_ps(du, fu), _mm256_sub_ps(dv, fv), L);
    }
    template <class G>
    UPRES_AVX2_INLINE bool operator()(const G& g, int x, int n, __m256d& ua, __m256d& ub,
                                      __m256d& va, __m256d& vb) const {
        __m256 f0, f1;  // (dx, dy) of pixels 0-3 and 4-7
        if (n == 8) {
            f0 = _mm256_loadu_ps(field_ + 2 * x);
            f1 = _mm256_loadu_ps(field_ + 2 * x + 8);
        } else {
            alignas(32) float tmp[16] = {};
            for (int i = 0; i < 2 * n; ++i) tmp[i] = field_[2 * x + i];
            f0 = _mm256_load_ps(tmp);
            f1 = _mm256_load_ps(tmp + 8);
        }
        const __m128 a = _mm256_castps256_ps128(f0), b = _mm256_extractf128_ps(f0, 1);
        const __m128 c = _mm256_castps256_ps128(f1), d = _mm256_extractf128_ps(f1, 1);
        ua = _mm256_cvtps_pd(_mm_shuffle_ps(a, b, 0x88));  // dx of pixels 0-3
        va = _mm256_cvtps_pd(_mm_shuffle_ps(a, b, 0xDD));  // dy of pixels 0-3
        ub = _mm256_cvtps_pd(_mm_shuffle_ps(c, d, 0x88));
        vb = _mm256_cvtps_pd(_mm_shuffle_ps(c, d, 0xDD));
        if constexpr (Flow) {
            const __m256d xa =
                _mm256_add_pd(_mm256_set1_pd(static_cast<double>(x)), _mm256_setr_pd(0, 1, 2, 3));
            const __m256d vy = _mm256_set1_pd(y_);
            ua = _mm256_add_pd(xa, ua),
            ub = _mm256_add_pd(_mm256_add_pd(xa, _mm256_set1_pd(4.0)), ub);
            va = _mm256_add_pd(vy, va), vb = _mm256_add_pd(vy, vb);
        }
        const __m256d vpad = _mm256_set1_pd(pad_);
        ua = _mm256_add_pd(ua, vpad), ub = _mm256_add_pd(ub, vpad);
        va = _mm256_add_pd(va, vpad), vb = _mm256_add_pd(vb, vpad);
        __m256d ina, inb;
        return n == 8 && g.interior(ua, ub, va, vb, 8, ina, inb) == 0xff;
    }

  private:
    const float* field_;
    double y_, pad_;
    int iy_;  // Flow: y + pad
};

// Perspective: (u', v', w') = H (x, y, 1) as map_matrix evaluates it ((h0 x + h1 y) + h2, ...),
// u = u' / w' + pad, v = v' / w' + pad; w' = 0 gives NaN (never interior).
class PerspectiveMap {
  public:
    explicit PerspectiveMap(const RowMap& r) : pad_(r.pad) {
        for (int i = 0; i < 9; ++i) h_[i] = r.h[i];
        for (int i = 0; i < 3; ++i) hy_[i] = h_[3 * i + 1] * r.y;
    }
    template <class G>
    UPRES_AVX2_INLINE bool operator()(const G& g, int x, int n, __m256d& ua, __m256d& ub,
                                      __m256d& va, __m256d& vb) const {
        const __m256d xa =
            _mm256_add_pd(_mm256_set1_pd(static_cast<double>(x)), _mm256_setr_pd(0, 1, 2, 3));
        const __m256d xb = _mm256_add_pd(xa, _mm256_set1_pd(4.0));
        one(xa, ua, va);
        one(xb, ub, vb);
        __m256d ina, inb;
        return n == 8 && g.interior(ua, ub, va, vb, 8, ina, inb) == 0xff;
    }

  private:
    UPRES_AVX2_INLINE __m256d lin(int i, __m256d x) const {
        return _mm256_add_pd(
            _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(h_[3 * i]), x), _mm256_set1_pd(hy_[i])),
            _mm256_set1_pd(h_[3 * i + 2]));
    }
    UPRES_AVX2_INLINE void one(__m256d x, __m256d& u, __m256d& v) const {
        const __m256d w = lin(2, x);
        const __m256d zero = _mm256_cmp_pd(w, _mm256_setzero_pd(), _CMP_EQ_OQ);
        const __m256d nan = _mm256_set1_pd(__builtin_nan(""));
        const __m256d vpad = _mm256_set1_pd(pad_);
        u = _mm256_add_pd(_mm256_blendv_pd(_mm256_div_pd(lin(0, x), w), nan, zero), vpad);
        v = _mm256_add_pd(_mm256_blendv_pd(_mm256_div_pd(lin(1, x), w), nan, zero), vpad);
    }

    double h_[9], hy_[3], pad_;
};

// Maps with a float split of 8 interior pixels (FieldMap::split).
template <class Map, class Geo>
constexpr bool kHasSplit = requires(const Map& m, const Geo& g, Lanes& L) {
    m.split(g, 0, L);
};

// One row: 8 pixels per step (coordinates from Map, border and lanes from Geometry,
// interpolation by Kernel).
template <class Map, class Geo, class Kernel>
int run_row(const Map& map, const Geo& geo, const Kernel& kern, int x0, int x1, float* out,
            std::uint8_t* flag) {
    if (geo.none()) {
        for (int x = x0; x < x1; ++x) flag[x - x0] = 1;
        return x1 - x0;
    }
    int flagged = 0;
    for (int x = x0; x < x1; x += 8) {
        const int n = x1 - x < 8 ? x1 - x : 8;
        float* o = out + static_cast<std::ptrdiff_t>(x - x0) * Kernel::kOut;
        Lanes L;
        if constexpr (kHasSplit<Map, Geo>) {  // field maps: 8 interior pixels, all in float
            // A smooth field's taps follow the output row: the source rows of the footprint
            // and the field are prefetched ahead, 512 bytes (2048^2 float flow warp, dev
            // machine, 1 thread: bilinear 14.7 -> 11.2 ms, Keys cubic -11%; docs/ops/warp.md).
            if (n == 8 && map.split(geo, x, L)) {
                kern.prefetch_ahead(L.ofs[0]);
                for (int i = 0; i < 8; ++i) flag[x - x0 + i] = 0;
                kern(L, 8, o);
                continue;
            }
        }
        __m256d ua, ub, va, vb;
        const bool fast = map(geo, x, n, ua, ub, va, vb);
        flagged += geo.prepare(ua, ub, va, vb, fast, n, o, flag + (x - x0), L);
        if (L.m) kern(L, n, o);
    }
    return flagged;
}

template <int Taps, int C, class Kernel>
int row_map(const RowSource& s, const RowKernel& k, const RowMap& m, int x0, int x1, float* out,
            std::uint8_t* flag) {
    const Geometry<Taps, C> geo(s, k.border, k.fill);
    const Kernel kern(s, k);
    switch (m.kind) {
        case RowMap::Affine:
            return run_row(AffineMap<Taps>(m, s.w, s.h), geo, kern, x0, x1, out, flag);
        default:
            return run_row(PerspectiveMap(m), geo, kern, x0, x1, out, flag);
    }
}

// Field maps in a function of their own: sharing row_map with them cost the affine rows
// registers (2048^2 bilinear rotation 4-13% slower on the dev machine).
template <int Taps, int C, class Kernel, bool Flow>
__attribute__((noinline)) int row_field(const RowSource& s, const RowKernel& k, const RowMap& m,
                                        int x0, int x1, float* out, std::uint8_t* flag) {
    const Geometry<Taps, C> geo(s, k.border, k.fill);
    const Kernel kern(s, k);
    return run_row(FieldMap<Flow>(m), geo, kern, x0, x1, out, flag);
}

// Remap and Flow to row_field, the other maps to row_map.
template <int Taps, int C, class Kernel>
int row_kind(const RowSource& s, const RowKernel& k, const RowMap& m, int x0, int x1, float* out,
             std::uint8_t* flag) {
    if (m.kind == RowMap::Flow) return row_field<Taps, C, Kernel, true>(s, k, m, x0, x1, out, flag);
    if (m.kind == RowMap::Remap)
        return row_field<Taps, C, Kernel, false>(s, k, m, x0, x1, out, flag);
    return row_map<Taps, C, Kernel>(s, k, m, x0, x1, out, flag);
}

template <int Taps, class S>
int row_type(const RowSource& s, const RowKernel& k, const RowMap& m, int x0, int x1, float* out,
             std::uint8_t* flag) {
    if (s.channels == 2) return row_kind<Taps, 2, KernelC<Taps, S, 2>>(s, k, m, x0, x1, out, flag);
    if (s.channels == 3) return row_kind<Taps, 3, KernelC<Taps, S, 3>>(s, k, m, x0, x1, out, flag);
    return row_kind<Taps, 4, KernelC<Taps, S, 4>>(s, k, m, x0, x1, out, flag);
}

template <int Taps>
int row_taps(const RowSource& s, const RowKernel& k, const RowMap& m, int x0, int x1, float* out,
             std::uint8_t* flag) {
    if (s.channels == 1) {
        if (s.type == 1)
            return row_kind<Taps, 1, Kernel1<Taps, std::uint8_t>>(s, k, m, x0, x1, out, flag);
        if (s.type == 2)
            return row_kind<Taps, 1, Kernel1<Taps, std::uint16_t>>(s, k, m, x0, x1, out, flag);
        return row_kind<Taps, 1, Kernel1<Taps>>(s, k, m, x0, x1, out, flag);
    }
    if (s.type == 1) return row_type<Taps, std::uint8_t>(s, k, m, x0, x1, out, flag);
    if (s.type == 2) return row_type<Taps, std::uint16_t>(s, k, m, x0, x1, out, flag);
    return row_type<Taps, float>(s, k, m, x0, x1, out, flag);
}

// Nearest neighbour. The affine map as map_matrix evaluates it, ((m0 x + m1 y) + m2) + pad:
// the rounding of u + 0.5 at half-integers must resolve as in the scalar path and the reference.
class NearestAffineMap {
  public:
    explicit NearestAffineMap(const RowMap& r)
        : m0_(r.h[0]),
          m1y_(r.h[1] * r.y),
          m2_(r.h[2]),
          m3_(r.h[3]),
          m4y_(r.h[4] * r.y),
          m5_(r.h[5]),
          pad_(r.pad) {}
    template <class G>
    UPRES_AVX2_INLINE bool operator()(const G&, int x, int, __m256d& ua, __m256d& ub, __m256d& va,
                                      __m256d& vb) const {
        const __m256d xa =
            _mm256_add_pd(_mm256_set1_pd(static_cast<double>(x)), _mm256_setr_pd(0, 1, 2, 3));
        const __m256d xb = _mm256_add_pd(xa, _mm256_set1_pd(4.0));
        ua = lin(m0_, m1y_, m2_, xa), ub = lin(m0_, m1y_, m2_, xb);
        va = lin(m3_, m4y_, m5_, xa), vb = lin(m3_, m4y_, m5_, xb);
        return false;
    }

  private:
    UPRES_AVX2_INLINE __m256d lin(double a, double by, double c, __m256d x) const {
        const __m256d t =
            _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(a), x), _mm256_set1_pd(by)),
                          _mm256_set1_pd(c));
        return _mm256_add_pd(t, _mm256_set1_pd(pad_));
    }
    double m0_, m1y_, m2_, m3_, m4y_, m5_, pad_;
};

// The maps' interior test is not used by the nearest rows.
struct NoGeometry {
    int interior(__m256d, __m256d, __m256d, __m256d, int, __m256d&, __m256d&) const { return 0; }
};

// Coordinates from Map, 8 pixels per step. border 1 (Mirror): coordinates within one reflection
// are mirrored first (mirror_once, map_coord's operations); border 2 (Constant): pixels outside
// [0, w - 1] x [0, h - 1] (or NaN) get flag 2, the fill. Then the scalar path's interior test
// (0 <= u <= w - 1, 0 <= v <= h - 1) and rounding (truncation of u + 0.5, u >= 0): flag 0 and
// the element offset in ofs; the rest flag 1. fout (1-channel float images): interior pixels are
// read and stored to fout[x - x0] here (flag 3), each step's loads issued together (2048^2
// rotation: 26.9 -> 20.0 ms, one thread, against copying them afterwards).
template <class Map>
int nearest_run(const Map& map, const RowSource& s, int border, int x0, int x1, int* ofs,
                std::uint8_t* flag, float* fout) {
    const __m256d zero = _mm256_setzero_pd(), half = _mm256_set1_pd(0.5);
    const __m256d wl = _mm256_set1_pd(s.w - 1.0), hl = _mm256_set1_pd(s.h - 1.0);
    const __m256d pw = _mm256_set1_pd(2.0 * s.w - 2.0), nw = _mm256_set1_pd(s.w);
    const __m256d ph = _mm256_set1_pd(2.0 * s.h - 2.0), nh = _mm256_set1_pd(s.h);
    const __m256i stride = _mm256_set1_epi32(static_cast<int>(s.stride));
    const __m256i chans = _mm256_set1_epi32(s.channels);
    const float* sf = static_cast<const float*>(s.data);
    const NoGeometry geo;
    int flagged = 0;
    for (int x = x0; x < x1; x += 8) {
        const int n = x1 - x < 8 ? x1 - x : 8;
        const int all = (1 << n) - 1;
        __m256d ua, ub, va, vb;
        map(geo, x, n, ua, ub, va, vb);
        int fill = 0;  // Constant: lanes outside the image (or NaN)
        if (border == 1) {
            ua = mirror_once(ua, pw, nw), ub = mirror_once(ub, pw, nw);
            va = mirror_once(va, ph, nh), vb = mirror_once(vb, ph, nh);
        }
        const __m256d ina = inside(ua, va, wl, hl), inb = inside(ub, vb, wl, hl);
        const int m = (_mm256_movemask_pd(ina) | (_mm256_movemask_pd(inb) << 4)) & all;
        if (border == 2) fill = ~m & all;
        // lanes not interior: offset 0, never read
        auto idx = [&](__m256d a, __m256d b) {
            return _mm256_set_m128i(
                _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, _mm256_add_pd(b, half), inb)),
                _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, _mm256_add_pd(a, half), ina)));
        };
        const __m256i o = _mm256_add_epi32(_mm256_mullo_epi32(idx(va, vb), stride),
                                           _mm256_mullo_epi32(idx(ua, ub), chans));
        alignas(32) int t[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(t), o);
        if (fout && m == 0xff) {
            _mm256_storeu_ps(fout + (x - x0),
                             _mm256_setr_ps(sf[t[0]], sf[t[1]], sf[t[2]], sf[t[3]], sf[t[4]],
                                            sf[t[5]], sf[t[6]], sf[t[7]]));
            for (int i = 0; i < 8; ++i) flag[x - x0 + i] = 3;
            continue;
        }
        for (int i = 0; i < n; ++i) {
            const int f = (m >> i & 1) ? 0 : (fill >> i & 1) ? 2 : 1;
            ofs[x - x0 + i] = t[i];
            flag[x - x0 + i] = static_cast<std::uint8_t>(f);
            flagged += f == 1;
        }
    }
    return flagged;
}

// saturate_row_from_float (core/convert_row.hpp) of 32 floats, the same instructions 8 wide:
// u8: min(max, v), cvtps2dq, saturating packs; u16: min(max(v, 0), max), cvtps2dq, packs on the
// signed range. The 256-bit packs work per 128-bit half, hence the permutes.
template <class D>
UPRES_AVX2_INLINE void store_saturated(const __m256 v[4], D* out) {
    __m256i k[4];
    for (int i = 0; i < 4; ++i) {
        if constexpr (sizeof(D) == 1) {
            k[i] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_set1_ps(255.0f), v[i]));
        } else {
            k[i] = _mm256_cvtps_epi32(
                _mm256_min_ps(_mm256_max_ps(v[i], _mm256_setzero_ps()), _mm256_set1_ps(65535.0f)));
        }
    }
    if constexpr (sizeof(D) == 1) {
        const __m256i b =
            _mm256_packus_epi16(_mm256_packs_epi32(k[0], k[1]), _mm256_packs_epi32(k[2], k[3]));
        _mm256_storeu_si256(
            reinterpret_cast<__m256i*>(out),
            _mm256_permutevar8x32_epi32(b, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
    } else {
        const __m256i off = _mm256_set1_epi32(32768);
        const __m256i flip = _mm256_set1_epi16(-32768);
        for (int h = 0; h < 2; ++h) {
            const __m256i p =
                _mm256_xor_si256(_mm256_packs_epi32(_mm256_sub_epi32(k[2 * h], off),
                                                    _mm256_sub_epi32(k[2 * h + 1], off)),
                                 flip);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 16 * h),
                                _mm256_permute4x64_epi64(p, 0xD8));
        }
    }
}

// K taps (0: k at run time). K > 0: the row pointers and weights in locals (the u8 stores may
// alias anything, so they would be reloaded after every store).
template <int K>
struct Taps {
    const float* r[K];
    float w[K];
    Taps(const float* const* rows, const float* wts, int) {
        for (int j = 0; j < K; ++j) r[j] = rows[j], w[j] = wts[j];
    }
};
template <>
struct Taps<0> {
    const float* const* r;
    const float* w;
    Taps(const float* const* rows, const float* wts, int) : r(rows), w(wts) {}
};
template <int K, class D>
void vpass(const float* const* rows, const float* wts, int k, std::ptrdiff_t n, D* out) {
    const int kn = K > 0 ? K : k;
    const Taps<K> tp(rows, wts, k);
    const auto& r = tp.r;
    const auto& w = tp.w;
    std::ptrdiff_t i = 0;
    for (; i + 32 <= n; i += 32) {
        __m256 acc[4];
        for (int q = 0; q < 4; ++q)
            acc[q] = _mm256_mul_ps(_mm256_set1_ps(w[0]), _mm256_loadu_ps(r[0] + i + 8 * q));
        for (int j = 1; j < kn; ++j) {
            const __m256 wj = _mm256_set1_ps(w[j]);
            for (int q = 0; q < 4; ++q)
                acc[q] =
                    _mm256_add_ps(acc[q], _mm256_mul_ps(wj, _mm256_loadu_ps(r[j] + i + 8 * q)));
        }
        if constexpr (sizeof(D) == 4) {
            for (int q = 0; q < 4; ++q) _mm256_storeu_ps(out + i + 8 * q, acc[q]);
        } else {
            store_saturated(acc, out + i);
        }
    }
    if (i == n) return;
    alignas(32) float tail[32] = {};  // the last n - i sums, the same operations one by one
    for (std::ptrdiff_t t = i; t < n; ++t) {
        float a = w[0] * r[0][t];
        for (int j = 1; j < kn; ++j) a = a + w[j] * r[j][t];
        tail[t - i] = a;
    }
    if constexpr (sizeof(D) == 4) {
        for (std::ptrdiff_t t = i; t < n; ++t) out[t] = tail[t - i];
    } else {
        __m256 v[4];
        for (int q = 0; q < 4; ++q) v[q] = _mm256_load_ps(tail + 8 * q);
        D tmp[32];
        store_saturated(v, tmp);
        for (std::ptrdiff_t t = i; t < n; ++t) out[t] = tmp[t - i];
    }
}
template <class D>
void vpass_k(const float* const* r, const float* w, int k, std::ptrdiff_t n, D* out) {
    if (k == 2) return vpass<2>(r, w, k, n, out);
    if (k == 4) return vpass<4>(r, w, k, n, out);
    vpass<0>(r, w, k, n, out);
}

// Pass 1, C = 2, 3 or 4: two output pixels (x, x + 1) per 256-bit register; K taps (0: k at run
// time).
template <int C, int K>
void hpass(const float* in, float* out, int n_out, const int* ofs, const float* w4, int k) {
    const int kn = K > 0 ? K : k;
    int x = 0;
    for (; x + 2 <= n_out; x += 2) {
        const int* ta = ofs + static_cast<std::ptrdiff_t>(x) * kn;
        const int* tb = ta + kn;
        const float* wa = w4 + 4 * static_cast<std::ptrdiff_t>(x) * kn;
        const float* wb = wa + 4 * kn;
        __m256 acc =
            _mm256_mul_ps(_mm256_loadu2_m128(wb, wa), _mm256_loadu2_m128(in + tb[0], in + ta[0]));
        for (int j = 1; j < kn; ++j)
            acc = _mm256_add_ps(acc, _mm256_mul_ps(_mm256_loadu2_m128(wb + 4 * j, wa + 4 * j),
                                                   _mm256_loadu2_m128(in + tb[j], in + ta[j])));
        if constexpr (C == 4) {
            _mm256_storeu_ps(out + 4 * x, acc);
        } else if constexpr (C == 2) {  // the 2 samples of x and of x + 1
            _mm_storeu_ps(out + 2 * x, _mm256_castps256_ps128(_mm256_permutevar8x32_ps(
                                           acc, _mm256_setr_epi32(0, 1, 4, 5, 4, 5, 6, 7))));
        } else {  // the 6 samples, then 2 of scratch (the next pair's, or the padding)
            _mm256_storeu_ps(out + 3 * x, _mm256_permutevar8x32_ps(
                                              acc, _mm256_setr_epi32(0, 1, 2, 4, 5, 6, 7, 7)));
        }
    }
    for (; x < n_out; ++x) {
        const int* ta = ofs + static_cast<std::ptrdiff_t>(x) * kn;
        const float* wa = w4 + 4 * static_cast<std::ptrdiff_t>(x) * kn;
        __m128 acc = _mm_mul_ps(_mm_loadu_ps(wa), _mm_loadu_ps(in + ta[0]));
        for (int j = 1; j < kn; ++j)
            acc = _mm_add_ps(acc, _mm_mul_ps(_mm_loadu_ps(wa + 4 * j), _mm_loadu_ps(in + ta[j])));
        _mm_storeu_ps(out + C * x, acc);
    }
}
template <int C>
void hpass_k(const float* in, float* out, int n_out, const int* ofs, const float* w4, int k) {
    if (k == 2) return hpass<C, 2>(in, out, n_out, ofs, w4, k);
    if (k == 4) return hpass<C, 4>(in, out, n_out, ofs, w4, k);
    hpass<C, 0>(in, out, n_out, ofs, w4, k);
}

}  // namespace

bool warp_avx2_compiled() { return true; }

int nearest_row_avx2(const RowSource& src, const RowMap& map, int border, int x0, int x1, int* ofs,
                     std::uint8_t* flag, float* fout) {
    switch (map.kind) {
        case RowMap::Affine:
            return nearest_run(NearestAffineMap(map), src, border, x0, x1, ofs, flag, fout);
        case RowMap::Remap:
            return nearest_run(FieldMap<false>(map), src, border, x0, x1, ofs, flag, fout);
        case RowMap::Flow:
            return nearest_run(FieldMap<true>(map), src, border, x0, x1, ofs, flag, fout);
        default:
            return nearest_run(PerspectiveMap(map), src, border, x0, x1, ofs, flag, fout);
    }
}

int warp_row_avx2(const RowSource& src, const RowKernel& k, const RowMap& map, int x0, int x1,
                  float* out, std::uint8_t* flag) {
    return k.taps == 4 ? row_taps<4>(src, k, map, x0, x1, out, flag)
                       : row_taps<2>(src, k, map, x0, x1, out, flag);
}

void resize_hpass_avx2(const float* in, float* out, int n_out, int channels, const int* ofs,
                       const float* w4, int k) {
    if (channels == 2) return hpass_k<2>(in, out, n_out, ofs, w4, k);
    if (channels == 3) return hpass_k<3>(in, out, n_out, ofs, w4, k);
    hpass_k<4>(in, out, n_out, ofs, w4, k);
}

void resize_vpass_avx2(const float* const* r, const float* w, int k, std::ptrdiff_t n, void* out,
                       int type) {
    if (type == 1) return vpass_k(r, w, k, n, static_cast<std::uint8_t*>(out));
    if (type == 2) return vpass_k(r, w, k, n, static_cast<std::uint16_t*>(out));
    vpass_k(r, w, k, n, static_cast<float*>(out));
}

}  // namespace upres::cpu::simd

#else  // not x86-64 with AVX2 flags: never called (cpu_has_avx2_fma() is false)

namespace upres::cpu::simd {
bool warp_avx2_compiled() { return false; }
int warp_row_avx2(const RowSource&, const RowKernel&, const RowMap&, int, int, float*,
                  std::uint8_t*) {
    return 0;
}
int nearest_row_avx2(const RowSource&, const RowMap&, int, int, int, int*, std::uint8_t*, float*) {
    return 0;
}
void resize_hpass_avx2(const float*, float*, int, int, const int*, const float*, int) {}
void resize_vpass_avx2(const float* const*, const float*, int, std::ptrdiff_t, void*, int) {}
}  // namespace upres::cpu::simd

#endif
