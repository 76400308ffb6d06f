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
        const __m128 zero = _mm_setzero_ps(), hi = _mm_set1_ps(pixel_max<D>());
        auto rounded = [&](const float* p) {
            const __m128 v = _mm_loadu_ps(p);
            if constexpr (std::is_same_v<D, std::uint8_t>)
                return _mm_cvtps_epi32(_mm_min_ps(hi, v));
            else
                return _mm_cvtps_epi32(_mm_min_ps(_mm_max_ps(v, zero), hi));
        };
        for (; i + 16 <= n; i += 16) {
            const __m128i k0 = rounded(in + i), k1 = rounded(in + i + 4);
            const __m128i k2 = rounded(in + i + 8), k3 = rounded(in + i + 12);
            if constexpr (std::is_same_v<D, std::uint8_t>) {
                const __m128i b =
                    _mm_packus_epi16(_mm_packs_epi32(k0, k1), _mm_packs_epi32(k2, k3));
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), b);
            } else {  // 0..65535: shift to the signed 16-bit range for packs, then back
                const __m128i off = _mm_set1_epi32(32768), flip = _mm_set1_epi16(-32768);
                const __m128i lo = _mm_xor_si128(
                    _mm_packs_epi32(_mm_sub_epi32(k0, off), _mm_sub_epi32(k1, off)), flip);
                const __m128i hi16 = _mm_xor_si128(
                    _mm_packs_epi32(_mm_sub_epi32(k2, off), _mm_sub_epi32(k3, off)), flip);
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), lo);
                _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i + 8), hi16);
            }
        }
#endif
        for (; i < n; ++i) out[i] = saturate_from_float<D>(in[i]);
    }
}

}  // namespace upres
