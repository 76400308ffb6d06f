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
template <class D>
UPRES_HD D saturate_from_float(float v) {
    if constexpr (std::is_same_v<D, float>) {
        return v;
    } else {
        if (!(v > 0.0f)) return D{0};  // also NaN
        const float hi = pixel_max<D>();
        if (v >= hi) return static_cast<D>(hi);
        return static_cast<D>(rintf(v));
    }
}

template <class S, class D>
UPRES_HD D convert_pixel(S v, float scale) {
    return saturate_from_float<D>(static_cast<float>(v) * scale);
}

}  // namespace upres
