// Pixel-type conversion, written once for host and device (see upres::convert).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"

namespace upres {

template <class T>
UPRES_HD float pixel_max() {
    if constexpr (std::is_same_v<T, std::uint8_t>)
        return 255.0f;
    else if constexpr (std::is_same_v<T, std::uint16_t>)
        return 65535.0f;
    else
        return 1.0f;
}

// Value of v on D's scale as float (normalize: nominal ranges map onto each other).
template <class S, class D>
UPRES_HD float convert_scale() {
    return pixel_max<D>() / pixel_max<S>();
}

// Float -> pixel type D: integers round half to even (as numpy.rint and OpenCV's
// saturate_cast) and saturate; NaN becomes 0. Floats pass through.
// On the device the same function without the conversion unit (rintf and the float -> int
// conversion run at 16 per clock and SM on sm_90, against 128 for FP32 adds): clamp to
// [0, max] (fmaxf(NaN, 0) = 0), then add 1.5 * 2^23, which rounds half to even into the
// low mantissa bits (the sum stays in [2^23, 2^24), where floats are the integers), and keep
// them. Same values bit for bit (tests/core/cuda_test.cpp, CoreCuda.ConvertSaturatesAsHost).
template <class D>
UPRES_HD D saturate_from_float(float v) {
    if constexpr (std::is_same_v<D, float>) {
        return v;
    } else {
#if defined(__CUDA_ARCH__)
        const float c = fminf(fmaxf(v, 0.0f), pixel_max<D>());
        return static_cast<D>(__float_as_uint(__fadd_rn(c, 12582912.0f)));
#else
        if (!(v > 0.0f)) return D{0};  // also NaN
        const float hi = pixel_max<D>();
        if (v >= hi) return static_cast<D>(hi);
        return static_cast<D>(rintf(v));
#endif
    }
}

template <class S, class D>
UPRES_HD D convert_pixel(S v, float scale) {
    return saturate_from_float<D>(static_cast<float>(v) * scale);
}

}  // namespace upres
