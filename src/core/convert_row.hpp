// Host-only row forms of convert_math.hpp's conversions, written for SIMD (SSE2 on x86-64, which
// every x86-64 CPU has; plain loops elsewhere).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "core/convert_math.hpp"

namespace upres {

#if defined(__SSE2__)
namespace detail {
// 4 floats rounded as saturate_from_float<D> rounds them, as int32 (why this is the same: see
// saturate_row_from_float).
template <class D>
inline __m128i saturate_round4(__m128 v) {
    const __m128 hi = _mm_set1_ps(pixel_max<D>());
    if constexpr (std::is_same_v<D, std::uint8_t>)
        return _mm_cvtps_epi32(_mm_min_ps(hi, v));
    else
        return _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(v, _mm_setzero_ps()), hi));
}
// Two groups of 4 rounded values -> 8 u16 (shifted to the signed range for packs, then back).
inline __m128i pack_u16(__m128i a, __m128i b) {
    const __m128i off = _mm_set1_epi32(32768);
    return _mm_xor_si128(_mm_packs_epi32(_mm_sub_epi32(a, off), _mm_sub_epi32(b, off)),
                         _mm_set1_epi16(-32768));
}
}  // namespace detail
#endif

// saturate_from_float of 4 values (e.g. one pixel's channels); the first n (<= 4) are stored.
template <class D>
inline void saturate4_from_float(const float in[4], D* out, int n) {
#if defined(__SSE2__)
    if constexpr (!std::is_same_v<D, float>) {
        const __m128i k = detail::saturate_round4<D>(_mm_loadu_ps(in));
        D tmp[8];
        if constexpr (std::is_same_v<D, std::uint8_t>)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(tmp),
                             _mm_packus_epi16(_mm_packs_epi32(k, k), _mm_setzero_si128()));
        else
            _mm_storeu_si128(reinterpret_cast<__m128i*>(tmp), detail::pack_u16(k, k));
        std::memcpy(out, tmp, sizeof(D) * static_cast<std::size_t>(n));
        return;
    }
#endif
    for (int c = 0; c < n; ++c) out[c] = saturate_from_float<D>(in[c]);
}

// saturate_from_float over a row, 16 values per step with no branch and no libm call:
// cvtps2dq rounds in the current rounding mode, as rintf does (half to even by default); NaN and
// values beyond the int32 range convert to INT_MIN. u8: min(max, v) (maxps / minps return their
// second operand when one is NaN, so NaN stays NaN) caps the top, then the saturating packs
// (int32 -> int16 -> uint8) clamp the rest, INT_MIN to 0. u16: max(v, 0) (NaN -> 0) and min(., max)
// first, then the packs on values shifted to the signed range. The same value as
// saturate_from_float<D> for every float (tested in tests/core/image_test.cpp).
template <class D>
void saturate_row_from_float(const float* in, D* out, std::ptrdiff_t n) {
    if constexpr (std::is_same_v<D, float>) {
        if (n > 0) std::memcpy(out, in, sizeof(float) * static_cast<std::size_t>(n));
    } else {
        std::ptrdiff_t i = 0;
#if defined(__SSE2__)
        auto rounded = [](const float* p) { return detail::saturate_round4<D>(_mm_loadu_ps(p)); };
        for (; i + 16 <= n; i += 16) {
            const __m128i k0 = rounded(in + i), k1 = rounded(in + i + 4);
            const __m128i k2 = rounded(in + i + 8), k3 = rounded(in + i + 12);
            if constexpr (std::is_same_v<D, std::uint8_t>) {
                const __m128i b =
                    _mm_packus_epi16(_mm_packs_epi32(k0, k1), _mm_packs_epi32(k2, k3));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), b);
            } else {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), detail::pack_u16(k0, k1));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 8), detail::pack_u16(k2, k3));
            }
        }
#endif
        for (; i < n; ++i) out[i] = saturate_from_float<D>(in[i]);
    }
}

}  // namespace upres
