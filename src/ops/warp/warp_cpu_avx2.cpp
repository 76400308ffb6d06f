// AVX2 + FMA hot loops of the CPU warp backend (declared in warp_cpu_simd.hpp). This file alone
// is compiled with -mavx2 -mfma (CMakeLists.txt) and called only after a run-time CPU check.
//
// It must not instantiate any inline function or template shared with other translation units
// (std::min, Span2D::row, warp_math.hpp, ...): the linker keeps one copy of each, and the copy
// compiled here would contain AVX2 instructions that the baseline build could then execute on a
// CPU without them. Hence only <immintrin.h> and plain code below.
#include "ops/warp/warp_cpu_simd.hpp"

#if defined(__x86_64__) && defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>

namespace upres::cpu::simd {

namespace {  // internal linkage: never merged with a baseline copy

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

}  // namespace

bool warp_avx2_compiled() { return true; }

// 8 output pixels per step: coordinates in double (two 4-lane halves, the scalar path's
// expression ub + m0 x), the 4 x-weights and 4 y-weights as cubic polynomials in float, the 4
// rows of each 4x4 footprint as 128-bit loads (see below; vgatherdps was 2x slower on Zen 3).
int cubic_affine_row_c1_avx2(const float* src, std::ptrdiff_t stride, int w, int h, double ub,
                             double vb, double m0, double m3, int x0, int x1,
                             const float poly[4][4], int border, float fill, float* out,
                             std::uint8_t* flag) {
    const __m256d vm0 = _mm256_set1_pd(m0), vm3 = _mm256_set1_pd(m3);
    const __m256d vub = _mm256_set1_pd(ub), vvb = _mm256_set1_pd(vb);
    const __m256d one = _mm256_set1_pd(1.0), uhi = _mm256_set1_pd(w - 2.0),
                  vhi = _mm256_set1_pd(h - 2.0);
    const __m256d pw = _mm256_set1_pd(2.0 * w - 2.0), nw = _mm256_set1_pd(w);
    const __m256d ph = _mm256_set1_pd(2.0 * h - 2.0), nh = _mm256_set1_pd(h);
    const __m256d wl = _mm256_set1_pd(w - 1.0), hl = _mm256_set1_pd(h - 1.0);
    const __m256d step_lo = _mm256_setr_pd(0, 1, 2, 3), four = _mm256_set1_pd(4.0);
    __m256 p[4][4];
    for (int j = 0; j < 4; ++j)
        for (int k = 0; k < 4; ++k) p[j][k] = _mm256_set1_ps(poly[j][k]);
    const __m256i vstride = _mm256_set1_epi32(static_cast<int>(stride));
    const __m256i ione = _mm256_set1_epi32(1);
    const __m256i lane_bits = _mm256_setr_epi32(1, 2, 4, 8, 16, 32, 64, 128);
    if (w < 4 || h < 4) {  // no interior pixel
        for (int x = x0; x < x1; ++x) flag[x - x0] = 1;
        return x1 - x0;
    }
    int flagged = 0;
    const double pu_max = w - 2.0, pv_max = h - 2.0;
    const double lo_fast = 1.0 + 1.0 / 64, pu_fast = pu_max - 1.0 / 64, pv_fast = pv_max - 1.0 / 64;
    for (int x = x0; x < x1; x += 8) {
        const int n = x1 - x < 8 ? x1 - x : 8;
        const __m256d xa = _mm256_add_pd(_mm256_set1_pd(static_cast<double>(x)), step_lo);
        const __m256d xb = _mm256_add_pd(xa, four);
        __m256d ua = _mm256_add_pd(vub, _mm256_mul_pd(vm0, xa));
        __m256d ub2 = _mm256_add_pd(vub, _mm256_mul_pd(vm0, xb));
        __m256d va = _mm256_add_pd(vvb, _mm256_mul_pd(vm3, xa));
        __m256d vb2 = _mm256_add_pd(vvb, _mm256_mul_pd(vm3, xb));
        // Fast path: u and v are monotonic in x, so the 8 pixels are interior (no border
        // mapping, no masks) when the first and the last are.
        std::uint8_t* fl = flag + (x - x0);
        float* o = out + (x - x0);
        int m = 0xff;
        __m256d ina = _mm256_castsi256_pd(_mm256_set1_epi32(-1)), inb = ina;
        const double xl = static_cast<double>(x + 7), xf = static_cast<double>(x);
        const double uf = ub + m0 * xf, ul = ub + m0 * xl, vf = vb + m3 * xf, vl = vb + m3 * xl;
        // (With a margin of 1/64 sample: the lanes then cannot round across an edge.)
        if (n == 8 && uf >= lo_fast && uf < pu_fast && ul >= lo_fast && ul < pu_fast &&
            vf >= lo_fast && vf < pv_fast && vl >= lo_fast && vl < pv_fast) {
            for (int i = 0; i < 8; ++i) fl[i] = 0;
        } else {
            int fillm = 0;  // Constant: lanes outside [0, w - 1] x [0, h - 1] (or NaN) get the fill
            if (border == 1) {
                ua = mirror_once(ua, pw, nw), ub2 = mirror_once(ub2, pw, nw);
                va = mirror_once(va, ph, nh), vb2 = mirror_once(vb2, ph, nh);
            } else if (border == 2) {
                fillm =
                    (outside(ua, va, wl, hl) | (outside(ub2, vb2, wl, hl) << 4)) & ((1 << n) - 1);
            }
            // Interior: 1 <= u < w - 2 and 1 <= v < h - 2 (false for NaN).
            ina = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(ua, one, _CMP_GE_OQ),
                                              _mm256_cmp_pd(ua, uhi, _CMP_LT_OQ)),
                                _mm256_and_pd(_mm256_cmp_pd(va, one, _CMP_GE_OQ),
                                              _mm256_cmp_pd(va, vhi, _CMP_LT_OQ)));
            inb = _mm256_and_pd(_mm256_and_pd(_mm256_cmp_pd(ub2, one, _CMP_GE_OQ),
                                              _mm256_cmp_pd(ub2, uhi, _CMP_LT_OQ)),
                                _mm256_and_pd(_mm256_cmp_pd(vb2, one, _CMP_GE_OQ),
                                              _mm256_cmp_pd(vb2, vhi, _CMP_LT_OQ)));
            m = (_mm256_movemask_pd(ina) | (_mm256_movemask_pd(inb) << 4)) & ((1 << n) - 1);
            for (int i = 0; i < n; ++i) {
                fl[i] = static_cast<std::uint8_t>(((m | fillm) >> i & 1) ^ 1);
                flagged += fl[i];
                if (fillm >> i & 1) o[i] = fill;
            }
            if (m == 0) continue;
        }
        // Interior lanes have u, v >= 1: truncation is floor.
        const __m256d fua = _mm256_round_pd(ua, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fub = _mm256_round_pd(ub2, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fva = _mm256_round_pd(va, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256d fvb = _mm256_round_pd(vb2, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        const __m256 tu = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(ub2, fub)),
                                          _mm256_cvtpd_ps(_mm256_sub_pd(ua, fua)));
        const __m256 tv = _mm256_set_m128(_mm256_cvtpd_ps(_mm256_sub_pd(vb2, fvb)),
                                          _mm256_cvtpd_ps(_mm256_sub_pd(va, fva)));
        // Lanes outside get index 0 (the source is >= 4 x 4 when any lane is interior).
        const __m256i lanes =
            _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_set1_epi32(m), lane_bits), lane_bits);
        const __m256d zero = _mm256_setzero_pd();
        const __m256i iu = _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fub, inb)),
                                            _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fua, ina)));
        const __m256i iv = _mm256_set_m128i(_mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fvb, inb)),
                                            _mm256_cvttpd_epi32(_mm256_blendv_pd(zero, fva, ina)));
        const __m256i idx = _mm256_and_si256(
            _mm256_add_epi32(_mm256_mullo_epi32(_mm256_sub_epi32(iv, ione), vstride),
                             _mm256_sub_epi32(iu, ione)),
            lanes);
        __m256 wx[4], wy[4];
        for (int k = 0; k < 4; ++k) {
            wx[k] = _mm256_fmadd_ps(
                _mm256_fmadd_ps(_mm256_fmadd_ps(p[0][k], tu, p[1][k]), tu, p[2][k]), tu, p[3][k]);
            wy[k] = _mm256_fmadd_ps(
                _mm256_fmadd_ps(_mm256_fmadd_ps(p[0][k], tv, p[1][k]), tv, p[2][k]), tv, p[3][k]);
        }
        // No gathers (slow on AMD Zen): the 4 rows of a footprint are 4 unaligned 128-bit loads,
        // two pixels (a, a + 4) per 256-bit register; the weights are transposed to match and
        // the 4 horizontal sums of 8 pixels come out in order from 3 hadds. Same summation order
        // as the scalar path: (sum_j wy_j r_j) * wx, then (k0 + k1) + (k2 + k3).
        alignas(32) int ofs[8];
        _mm256_store_si256(reinterpret_cast<__m256i*>(ofs), idx);
        __m256 X[4], Y[4];  // X[a]: x-weights of pixels a (low half) and a + 4 (high half)
        transpose4x8(wx, X);
        transpose4x8(wy, Y);
        __m256 P[4];
        for (int a = 0; a < 4; ++a) {
            const float* lo = src + ofs[a];
            const float* hi = src + ofs[a + 4];
            __m256 r = _mm256_mul_ps(_mm256_permute_ps(Y[a], 0x00), _mm256_loadu2_m128(hi, lo));
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0x55),
                                _mm256_loadu2_m128(hi + stride, lo + stride), r);
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0xAA),
                                _mm256_loadu2_m128(hi + 2 * stride, lo + 2 * stride), r);
            r = _mm256_fmadd_ps(_mm256_permute_ps(Y[a], 0xFF),
                                _mm256_loadu2_m128(hi + 3 * stride, lo + 3 * stride), r);
            P[a] = _mm256_mul_ps(r, X[a]);
        }
        const __m256 acc = _mm256_hadd_ps(_mm256_hadd_ps(P[0], P[1]), _mm256_hadd_ps(P[2], P[3]));
        if (n == 8 && m == 0xff) {
            _mm256_storeu_ps(o, acc);
        } else {
            alignas(32) float tmp[8];
            _mm256_store_ps(tmp, acc);
            for (int i = 0; i < n; ++i)
                if (m >> i & 1) o[i] = tmp[i];
        }
    }
    return flagged;
}

}  // namespace upres::cpu::simd

#else  // not x86-64 with AVX2 flags: never called (cpu_has_avx2_fma() is false)

namespace upres::cpu::simd {
bool warp_avx2_compiled() { return false; }
int cubic_affine_row_c1_avx2(const float*, std::ptrdiff_t, int, int, double, double, double, double,
                             int, int, const float[4][4], int, float, float*, std::uint8_t*) {
    return 0;
}
}  // namespace upres::cpu::simd

#endif
