// The cpu backend's per-row cost kernels (internal), shared by the semi-global matcher
// (stereo_sgm_cpu.cpp) and the window matcher's row schedule (stereo_cpu.cpp): a row's costs
// for every pixel x and candidate k as W x D 16-bit values, d fastest. The right row is first
// reversed and edge-extended, q[t] = R[clamp(W - 1 - min_d - t)], so that pixel x's candidates
// R[clamp(x - min_d - k)] are q[W - 1 - x + k], contiguous and ascending in k.
//
// The AVX2 and AVX-512 forms carry their target attributes; callers choose them at run time
// (cpu_avx2_fma(), cpu_avx512_popcnt()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define UPRES_STEREO_X86 1
#else
#define UPRES_STEREO_X86 0
#endif

#include "ops/stereo/stereo_math.hpp"

namespace upres::cpu::stereo_rows {

using u16 = std::uint16_t;

// q (W + D - 1 values) from the right row r (W values): the image's columns W - 1 .. 0 sit at
// t = -min_d .. W - 1 - min_d; the rest repeat the edge columns.
template <class V>
inline void reversed_row(const V* r, int W, int min_d, int D, V* __restrict q) {
    const int n = W + D - 1, a = std::clamp(-min_d, 0, n), b = std::clamp(W - min_d, 0, n);
    for (int t = 0; t < a; ++t) q[t] = r[W - 1];
    const V* src = r + (W - 1 - min_d);
    for (int t = a; t < b; ++t) q[t] = *(src - t);
    for (int t = b; t < n; ++t) q[t] = r[0];
}

// One census cost: min(popcount(a ^ b) << shift, cap) (shift 4, cap max_q:
// stereo::census_cost; shift 0, cap max_q / 16: the same in units of 16).
inline u16 census_unit(std::uint64_t a, std::uint64_t b, int shift, int cap) {
    const int v = __builtin_popcountll(a ^ b) << shift;
    return static_cast<u16>(v < cap ? v : cap);
}
// One gray 8-bit absolute difference in units of 16, capped.
inline std::uint8_t ad_unit(int a, int b, int cap) {
    const int v = a < b ? b - a : a - b;
    return static_cast<std::uint8_t>(v < cap ? v : cap);
}

// Census: out[x D + k] = census_unit(L[x], q[W - 1 - x + k], shift, cap).
inline void census_costs(const std::uint64_t* l, const std::uint64_t* q, int W, int D, int shift,
                         int cap, u16* __restrict out) {
    for (int x = 0; x < W; ++x) {
        const std::uint64_t a = l[x];
        const std::uint64_t* qx = q + (W - 1 - x);
        u16* o = out + static_cast<std::size_t>(x) * D;
        for (int k = 0; k < D; ++k) o[k] = census_unit(a, qx[k], shift, cap);
    }
}

#if UPRES_STEREO_X86
// The same with AVX2: popcounts of four codes by nibble lookups and a byte sum (vpsadbw),
// sixteen costs packed to 16-bit lanes per iteration (a scalar popcount per cost took a quarter
// of the semi-global matcher's time).
__attribute__((target("avx2,popcnt"))) inline void census_costs_avx2(const std::uint64_t* l,
                                                                     const std::uint64_t* q, int W,
                                                                     int D, int shift, int cap,
                                                                     u16* __restrict out) {
    const __m256i lut = _mm256_setr_epi8(0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4, 0, 1, 1, 2,
                                         1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4);
    const __m256i nib = _mm256_set1_epi8(0x0f);
    const __m256i zero = _mm256_setzero_si256();
    const __m256i mq = _mm256_set1_epi16(static_cast<short>(cap));
    const __m128i sh = _mm_cvtsi32_si128(shift);
    // After two rounds of packing, 32-bit pairs hold (k0 k1) (k4 k5) (k8 k9) (k12 k13) | (k2 k3)
    // (k6 k7) (k10 k11) (k14 k15).
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    for (int x = 0; x < W; ++x) {
        const __m256i a = _mm256_set1_epi64x(static_cast<long long>(l[x]));
        const std::uint64_t* qx = q + (W - 1 - x);
        u16* o = out + static_cast<std::size_t>(x) * D;
        int k = 0;
        for (; k + 16 <= D; k += 16) {
            __m256i c[4];
            for (int j = 0; j < 4; ++j) {
                const __m256i v = _mm256_xor_si256(
                    a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + k + 4 * j)));
                const __m256i lo = _mm256_and_si256(v, nib);
                const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(v, 4), nib);
                c[j] = _mm256_sad_epu8(
                    _mm256_add_epi8(_mm256_shuffle_epi8(lut, lo), _mm256_shuffle_epi8(lut, hi)),
                    zero);
            }
            __m256i v = _mm256_packus_epi32(_mm256_packus_epi32(c[0], c[1]),
                                            _mm256_packus_epi32(c[2], c[3]));
            v = _mm256_permutevar8x32_epi32(v, order);
            v = _mm256_min_epu16(_mm256_sll_epi16(v, sh), mq);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + k), v);
        }
        for (; k < D; ++k) o[k] = census_unit(l[x], qx[k], shift, cap);
    }
}

// The same with AVX-512's 64-bit popcount: eight costs from one xor and one popcount (a third of
// the AVX2 kernel's instructions).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vpopcntdq"))) inline void
census_costs_avx512(const std::uint64_t* l, const std::uint64_t* q, int W, int D, int shift,
                    int cap, u16* __restrict out) {
    const __m128i mq = _mm_set1_epi16(static_cast<short>(cap));
    const __m128i sh = _mm_cvtsi32_si128(shift);
    for (int x = 0; x < W; ++x) {
        const __m512i a = _mm512_set1_epi64(static_cast<long long>(l[x]));
        const std::uint64_t* qx = q + (W - 1 - x);
        u16* o = out + static_cast<std::size_t>(x) * D;
        int k = 0;
        for (; k + 8 <= D; k += 8) {
            const __m512i v = _mm512_popcnt_epi64(_mm512_xor_si512(a, _mm512_loadu_si512(qx + k)));
            const __m128i c =
                _mm_min_epu16(_mm_sll_epi16(_mm512_maskz_cvtepi64_epi16(0xff, v), sh), mq);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(o + k), c);
        }
        for (; k < D; ++k) o[k] = census_unit(l[x], qx[k], shift, cap);
    }
}
#endif

// Gray 8-bit absolute differences in units of 16 (stereo::pixel_cost / 16, exact for one
// channel), as bytes: out[x D + k] = min(|L[x] - q[W - 1 - x + k]|, cap), cap <= 255.
inline void ad_costs_u8(const std::uint8_t* __restrict l, const std::uint8_t* __restrict q, int W,
                        int D, int cap, std::uint8_t* __restrict out) {
    for (int x = 0; x < W; ++x) {
        const int a = l[x];
        const std::uint8_t* __restrict qx = q + (W - 1 - x);
        std::uint8_t* __restrict o = out + static_cast<std::size_t>(x) * D;
        for (int k = 0; k < D; ++k) o[k] = ad_unit(a, qx[k], cap);
    }
}

#if UPRES_STEREO_X86
// The same on 32 byte lanes: |a - b| as max - min.
__attribute__((target("avx2"))) inline void ad_costs_u8_avx2(const std::uint8_t* l,
                                                             const std::uint8_t* q, int W, int D,
                                                             int cap, std::uint8_t* out) {
    const __m256i cv = _mm256_set1_epi8(static_cast<char>(cap));
    for (int x = 0; x < W; ++x) {
        const __m256i a = _mm256_set1_epi8(static_cast<char>(l[x]));
        const std::uint8_t* qx = q + (W - 1 - x);
        std::uint8_t* o = out + static_cast<std::size_t>(x) * D;
        int k = 0;
        for (; k + 32 <= D; k += 32) {
            const __m256i b = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(qx + k));
            const __m256i d = _mm256_sub_epi8(_mm256_max_epu8(a, b), _mm256_min_epu8(a, b));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(o + k), _mm256_min_epu8(d, cv));
        }
        for (; k < D; ++k) o[k] = ad_unit(l[x], qx[k], cap);
    }
}
#endif

// Right pixel xr's key from the reversed row rev (W + D - 1, right pixel xr at W - 1 - min_d -
// xr); 0xffffffff where xr has no candidate.
inline void right_keys(const std::uint32_t* rev, int W, int D, int min_d, std::uint32_t* right) {
    for (int xr = 0; xr < W; ++xr) {
        const int t = W - 1 - min_d - xr;
        right[xr] = t >= 0 && t < W + D - 1 ? rev[t] : 0xffffffffu;
    }
}

}  // namespace upres::cpu::stereo_rows
