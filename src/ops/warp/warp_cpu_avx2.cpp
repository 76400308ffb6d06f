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
inline int outside(__m256d u, __m256d v, __m256d ul, __m256d vl) {
    const __m256d z = _mm256_setzero_pd();
    const __m256d in = _mm256_and_pd(
        _mm256_and_pd(_mm256_cmp_pd(u, z, _CMP_GE_OQ), _mm256_cmp_pd(u, ul, _CMP_LE_OQ)),
        _mm256_and_pd(_mm256_cmp_pd(v, z, _CMP_GE_OQ), _mm256_cmp_pd(v, vl, _CMP_LE_OQ)));
    return _mm256_movemask_pd(in) ^ 0xf;
}
// The two floats at p and the two at p + stride: one pixel's 2 x 2 footprint (memcpy: no
// alignment assumed; compilers emit two 64-bit loads).
inline __m128 footprint2x2(const float* p, std::ptrdiff_t stride) {
    long long a, b;
    __builtin_memcpy(&a, p, sizeof(a));
    __builtin_memcpy(&b, p + stride, sizeof(b));
    return _mm_castsi128_ps(_mm_set_epi64x(b, a));
}

// 8 output pixels of a 1-channel float source with Taps x Taps taps (2: bilinear, 4: Keys cubic
// or B-spline), at the double coordinates (ua | ub, va | vb) (pixels 0-3 | 4-7), as the scalar
// path of warp_cpu.cpp computes them. Interior: lo <= u < w - 1 - lo (lo = Taps / 2 - 1), and
// likewise v.
template <int Taps>
class Step8 {
  public:
    Step8(const float* src, std::ptrdiff_t stride, int w, int h, const float poly[4][4], int border,
          float fill)
        : src_(src), stride_(stride), border_(border), fill_(fill) {
        constexpr double lo = Taps / 2 - 1;
        lo_ = _mm256_set1_pd(lo);
        uhi_ = _mm256_set1_pd(w - 1.0 - lo), vhi_ = _mm256_set1_pd(h - 1.0 - lo);
        pw_ = _mm256_set1_pd(2.0 * w - 2.0), nw_ = _mm256_set1_pd(w);
        ph_ = _mm256_set1_pd(2.0 * h - 2.0), nh_ = _mm256_set1_pd(h);
        wl_ = _mm256_set1_pd(w - 1.0), hl_ = _mm256_set1_pd(h - 1.0);
        if constexpr (Taps == 4)
            for (int j = 0; j < 4; ++j)
                for (int k = 0; k < 4; ++k) p_[j][k] = _mm256_set1_ps(poly[j][k]);
        vstride_ = _mm256_set1_epi32(static_cast<int>(stride));
        none_ = w < Taps || h < Taps;
    }
    // No pixel can be interior (source smaller than the footprint).
    bool none() const { return none_; }

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
    // caller. Writes o[i] for the others; returns the number flagged.
    UPRES_AVX2_INLINE int operator()(__m256d ua, __m256d ub, __m256d va, __m256d vb, bool fast,
                                     int n, float* o, std::uint8_t* fl) const {
        int m = 0xff, flagged = 0;
        __m256d ina = _mm256_castsi256_pd(_mm256_set1_epi32(-1)), inb = ina;
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
                if (fillm >> i & 1) o[i] = fill_;
            }
            if (m == 0) return flagged;
        }
        // Interior lanes have u, v >= 0: truncation is floor.
        const __m256d fua = _mm256_round_pd(ua, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fub = _mm256_round_pd(ub, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fva = _mm256_round_pd(va, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fvb = _mm256_round_pd(vb, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 tu = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(ub, fub)),
                                          _mm256_cvtpd_ps(_mm256_sub_pd(ua, fua)));
        const __m256 tv = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(vb, fvb)),
                                          _mm256_cvtpd_ps(_mm256_sub_pd(va, fva)));
        // Offset of each pixel's first tap; lanes not interior get 0 (the source is at least
        // Taps x Taps when any lane is interior).
        const __m256i lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
        const __m256i lanes =
            _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(m), lane_bits), lane_bits);
        const __m256d zero = _mm256_setzero_pd();
        const __m256i iu = _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fub, inb)),
                                            _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fua, ina)));
        const __m256i iv = _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fvb, inb)),
                                            _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fva, ina)));
        const __m256i back = _mm256_set1_epi32(Taps / 2 - 1);
        const __m256i idx = _mm256_and_si256(
            _mm256_add_epi32(_mm256_mullo_epi32(_mm256_sub_epi32(iv, back), vstride_),
                             _mm256_sub_epi32(iu, back)),
            lanes);
        alignas(32) int ofs[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(ofs), idx);
        const __m256 acc = Taps == 4 ? cubic(tu, tv, ofs) : linear(tu, tv, ofs);
        if (m == 0xff && n == 8) {
            _mm256_storeu_ps(o, acc);
        } else {
            alignas(32) float tmp[8];
            _mm256_store_ps(tmp, acc);
            for (int i = 0; i < n; ++i)
                if (m >> i & 1) o[i] = tmp[i];
        }
        return flagged;
    }

  private:
    // 4 x 4 taps. No gathers (slow on AMD Zen: vgatherdps measured 2x slower): the 4 rows of a
    // footprint are 4 unaligned 128-bit loads, two pixels (a, a + 4) per 256-bit register; the
    // weights (cubic_weight_poly's polynomials) are transposed to match and the 8 horizontal
    // sums come out in order from 3 hadds. Summation order of the scalar path:
    // (sum_j wy_j r_j) * wx, then (k0 + k1) + (k2 + k3).
    UPRES_AVX2_INLINE __m256 cubic(__m256 tu, __m256 tv, const int ofs[8]) const {
        __m256 wx[4], wy[4];
        for (int k = 0; k < 4; ++k) {
            wx[k] = _mm256_fmadd_ps(
                _mm256_fmadd_ps(_mm256_fmadd_ps(p_[0][k], tu, p_[1][k]), tu, p_[2][k]), tu,
                p_[3][k]);
            wy[k] = _mm256_fmadd_ps(
                _mm256_fmadd_ps(_mm256_fmadd_ps(p_[0][k], tv, p_[1][k]), tv, p_[2][k]), tv,
                p_[3][k]);
        }
        __m256 X[4], Y[4];  // X[a]: x-weights of pixels a (low half) and a + 4 (high half)
        transpose4x8(wx, X);
        transpose4x8(wy, Y);
        const std::ptrdiff_t s = stride_;
        __m256 P[4];
        for (int a = 0; a < 4; ++a) {
            const float* lo = src_ + ofs[a];
            const float* hi = src_ + ofs[a + 4];
            __m256 r = _mm256_mul_ps(_mm256_permute_ps(Y[a], 0x00), _mm256_loadu2_m128(hi, lo));
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0x55), _mm256_loadu2_m128(hi + s, lo + s),
                                r);
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0xAA),
                                _mm256_loadu2_m128(hi + 2 * s, lo + 2 * s), r);
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0xFF),
                                _mm256_loadu2_m128(hi + 3 * s, lo + 3 * s), r);
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
            P[a] = _mm256_mul_ps(_mm256_set_m128(footprint2x2(src_ + ofs[a + 4], stride_),
                                                 footprint2x2(src_ + ofs[a], stride_)),
                                 W[a]);
        const __m256 q01 = _mm256_mul_ps(_mm256_hadd_ps(P[0], P[1]),
                                         _mm256_unpacklo_ps(_mm256_sub_ps(one, tv), tv));
        const __m256 q23 = _mm256_mul_ps(_mm256_hadd_ps(P[2], P[3]),
                                         _mm256_unpackhi_ps(_mm256_sub_ps(one, tv), tv));
        return _mm256_hadd_ps(q01, q23);
    }

    const float* src_;
    std::ptrdiff_t stride_;
    int border_;
    float fill_;
    bool none_;
    __m256d lo_, uhi_, vhi_, pw_, nw_, ph_, nh_, wl_, hl_;
    __m256 p_[4][4];
    __m256i vstride_;
};

// Affine row: u = ub + m0 x, v = vb + m3 x (the scalar path's expression, no FMA contraction).
template <int Taps>
int affine_row(const Step8<Taps> step, int w, int h, double ub, double vb, double m0, double m3,
               int x0, int x1, float* out, std::uint8_t* flag) {
    if (step.none()) {
        for (int x = x0; x < x1; ++x) flag[x - x0] = 1;
        return x1 - x0;
    }
    const __m256d vm0 = _mm256_set1_pd(m0), vm3 = _mm256_set1_pd(m3);
    const __m256d vub = _mm256_set1_pd(ub), vvb = _mm256_set1_pd(vb);
    const __m256d step_lo = _mm256_setr_pd(0, 1, 2, 3), four = _mm256_set1_pd(4.0);
    // u and v are monotonic in x, so 8 pixels are interior (no border mapping, no masks) when
    // the first and the last are, with a margin of 1/64 sample (the lanes then cannot round
    // across an edge).
    constexpr double lo = Taps / 2 - 1;
    const double lo_fast = lo + 1.0 / 64, pu_fast = w - 1.0 - lo - 1.0 / 64,
                 pv_fast = h - 1.0 - lo - 1.0 / 64;
    int flagged = 0;
    for (int x = x0; x < x1; x += 8) {
        const int n = x1 - x < 8 ? x1 - x : 8;
        const __m256d xa = _mm256_add_pd(_mm256_set1_pd(static_cast<double>(x)), step_lo);
        const __m256d xb = _mm256_add_pd(xa, four);
        const __m256d ua = _mm256_add_pd(vub, _mm256_mul_pd(vm0, xa));
        const __m256d ubb = _mm256_add_pd(vub, _mm256_mul_pd(vm0, xb));
        const __m256d va = _mm256_add_pd(vvb, _mm256_mul_pd(vm3, xa));
        const __m256d vbb = _mm256_add_pd(vvb, _mm256_mul_pd(vm3, xb));
        const double xl = static_cast<double>(x + 7), xf = static_cast<double>(x);
        const double uf = ub + m0 * xf, ul = ub + m0 * xl, vf = vb + m3 * xf, vl = vb + m3 * xl;
        const bool fast = n == 8 && uf >= lo_fast && uf < pu_fast && ul >= lo_fast &&
                          ul < pu_fast && vf >= lo_fast && vf < pv_fast && vl >= lo_fast &&
                          vl < pv_fast;
        flagged += step(ua, ubb, va, vbb, fast, n, out + (x - x0), flag + (x - x0));
    }
    return flagged;
}

// Field row: Remap u = f[2x] + pad; Flow u = (x + f[2x]) + pad, v = (y + f[2x + 1]) + pad (the
// scalar path's expressions, in double).
template <int Taps, bool Flow>
int field_row(const Step8<Taps> step, const float* field, double y, double pad, int x0, int x1,
              float* out, std::uint8_t* flag) {
    if (step.none()) {
        for (int x = x0; x < x1; ++x) flag[x - x0] = 1;
        return x1 - x0;
    }
    const __m256d vpad = _mm256_set1_pd(pad), vy = _mm256_set1_pd(y);
    const __m256d step_lo = _mm256_setr_pd(0, 1, 2, 3), four = _mm256_set1_pd(4.0);
    int flagged = 0;
    for (int x = x0; x < x1; x += 8) {
        const int n = x1 - x < 8 ? x1 - x : 8;
        __m256 f0, f1;  // (dx, dy) of pixels 0-3 and 4-7
        if (n == 8) {
            f0 = _mm256_loadu_ps(field + 2 * x);
            f1 = _mm256_loadu_ps(field + 2 * x + 8);
        } else {
            alignas(32) float tmp[16] = {};
            for (int i = 0; i < 2 * n; ++i) tmp[i] = field[2 * x + i];
            f0 = _mm256_load_ps(tmp);
            f1 = _mm256_load_ps(tmp + 8);
        }
        const __m128 a = _mm256_castps256_ps128(f0), b = _mm256_extractf128_ps(f0, 1);
        const __m128 c = _mm256_castps256_ps128(f1), d = _mm256_extractf128_ps(f1, 1);
        __m256d ua = _mm256_cvtps_pd(_mm_shuffle_ps(a, b, 0x88));  // dx of pixels 0-3
        __m256d va = _mm256_cvtps_pd(_mm_shuffle_ps(a, b, 0xDD));  // dy of pixels 0-3
        __m256d ub = _mm256_cvtps_pd(_mm_shuffle_ps(c, d, 0x88));
        __m256d vb = _mm256_cvtps_pd(_mm_shuffle_ps(c, d, 0xDD));
        if constexpr (Flow) {
            const __m256d xa = _mm256_add_pd(_mm256_set1_pd(static_cast<double>(x)), step_lo);
            ua = _mm256_add_pd(xa, ua), ub = _mm256_add_pd(_mm256_add_pd(xa, four), ub);
            va = _mm256_add_pd(vy, va), vb = _mm256_add_pd(vy, vb);
        }
        ua = _mm256_add_pd(ua, vpad), ub = _mm256_add_pd(ub, vpad);
        va = _mm256_add_pd(va, vpad), vb = _mm256_add_pd(vb, vpad);
        __m256d ina, inb;
        const bool fast = n == 8 && step.interior(ua, ub, va, vb, 8, ina, inb) == 0xff;
        flagged += step(ua, ub, va, vb, fast, n, out + (x - x0), flag + (x - x0));
    }
    return flagged;
}

}  // namespace

bool warp_avx2_compiled() { return true; }

int affine_row_c1_avx2(const float* src, std::ptrdiff_t stride, int w, int h, int taps, double ub,
                       double vb, double m0, double m3, int x0, int x1, const float poly[4][4],
                       int border, float fill, float* out, std::uint8_t* flag) {
    if (taps == 4)
        return affine_row(Step8<4>(src, stride, w, h, poly, border, fill), w, h, ub, vb, m0, m3, x0,
                          x1, out, flag);
    return affine_row(Step8<2>(src, stride, w, h, poly, border, fill), w, h, ub, vb, m0, m3, x0, x1,
                      out, flag);
}

int field_row_c1_avx2(const float* src, std::ptrdiff_t stride, int w, int h, int taps, bool flow,
                      const float* field, double y, double pad, int x0, int x1,
                      const float poly[4][4], int border, float fill, float* out,
                      std::uint8_t* flag) {
    if (taps == 4) {
        const Step8<4> step(src, stride, w, h, poly, border, fill);
        return flow ? field_row<4, true>(step, field, y, pad, x0, x1, out, flag)
                    : field_row<4, false>(step, field, y, pad, x0, x1, out, flag);
    }
    const Step8<2> step(src, stride, w, h, poly, border, fill);
    return flow ? field_row<2, true>(step, field, y, pad, x0, x1, out, flag)
                : field_row<2, false>(step, field, y, pad, x0, x1, out, flag);
}

}  // namespace upres::cpu::simd

#else  // not x86-64 with AVX2 flags: never called (cpu_has_avx2_fma() is false)

namespace upres::cpu::simd {
bool warp_avx2_compiled() { return false; }
int affine_row_c1_avx2(const float*, std::ptrdiff_t, int, int, int, double, double, double, double,
                       int, int, const float[4][4], int, float, float*, std::uint8_t*) {
    return 0;
}
int field_row_c1_avx2(const float*, std::ptrdiff_t, int, int, int, bool, const float*, double,
                      double, int, int, const float[4][4], int, float, float*, std::uint8_t*) {
    return 0;
}
}  // namespace upres::cpu::simd

#endif
