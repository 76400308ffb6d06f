// BT.601 studio-range RGB <-> YCbCr, written once for every backend (upres/color.hpp).
//
// R is the compute type: double in the reference, float in the Cpu and Cuda backends. RGB
// values are normalised to [0, 1] (u8 / 255, u16 / 65535, float as is); YCbCr is on the 8-bit
// scale. The inverse matrix is numpy.linalg.inv of the forward one, as scikit-image's
// rgb_from_ycbcr (its tiny off-diagonal terms ~1e-9 come from the rounded forward constants).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"

namespace upres::color {

// Forward (Y, Cb, Cr) = offset + F * (R, G, B). Scalars (not arrays) so device code can use
// them as constants.
inline constexpr double kF00 = 65.481, kF01 = 128.553, kF02 = 24.966;
inline constexpr double kF10 = -37.797, kF11 = -74.203, kF12 = 112.0;
inline constexpr double kF20 = 112.0, kF21 = -93.786, kF22 = -18.214;
inline constexpr double kOffY = 16.0, kOffC = 128.0;
// Inverse (R, G, B) = I * ((Y, Cb, Cr) - offset), I = numpy.linalg.inv(F) (17 digits).
inline constexpr double kI00 = 0.004566210045662101, kI01 = 1.1808799897946412e-09,
                        kI02 = 0.006258928969943936;
inline constexpr double kI10 = 0.004566210045662101, kI11 = -0.0015363236860449021,
                        kI12 = -0.003188110949655707;
inline constexpr double kI20 = 0.004566210045662101, kI21 = 0.007910716233554741,
                        kI22 = 1.1977497040190077e-08;
// Gray (1-channel) luma: Y = 16 + 219 v.
inline constexpr double kGrayScale = 219.0;
// Alpha travels through YCbCr on the 8-bit scale: a_ycc = 255 * a_unit.
inline constexpr double kAlphaScale = 255.0;

template <class T>
UPRES_HD constexpr double unit_max() {
    if constexpr (std::is_same_v<T, std::uint8_t>)
        return 255.0;
    else if constexpr (std::is_same_v<T, std::uint16_t>)
        return 65535.0;
    else
        return 1.0;
}

// Pixel value -> [0, 1] in R.
template <class R, class T>
UPRES_HD R to_unit(T v) {
    if constexpr (std::is_same_v<T, float>)
        return static_cast<R>(v);
    else
        return static_cast<R>(v) / static_cast<R>(unit_max<T>());
}

// [0, 1] value in R -> pixel type D: integers round half to even and saturate (NaN -> 0),
// floats are not clamped.
template <class D, class R>
UPRES_HD D from_unit(R v) {
    if constexpr (std::is_same_v<D, float>) {
        return static_cast<float>(v);
    } else {
        const R hi = static_cast<R>(unit_max<D>());
        const R x = v * hi;
        if (!(x > R(0))) return D{0};
        if (x >= hi) return static_cast<D>(unit_max<D>());
        if constexpr (std::is_same_v<R, float>)
            return static_cast<D>(rintf(x));
        else
            return static_cast<D>(rint(x));
    }
}

template <class R>
UPRES_HD R luma(R r, R g, R b) {
    return (R(kF00) * r + R(kF01) * g + R(kF02) * b) + R(kOffY);
}

template <class R>
UPRES_HD R gray_luma(R v) {
    return R(kGrayScale) * v + R(kOffY);
}

// rgb in [0, 1] -> ycc on the 8-bit scale.
template <class R>
UPRES_HD void rgb_to_ycbcr(const R rgb[3], R ycc[3]) {
    ycc[0] = luma(rgb[0], rgb[1], rgb[2]);
    ycc[1] = (R(kF10) * rgb[0] + R(kF11) * rgb[1] + R(kF12) * rgb[2]) + R(kOffC);
    ycc[2] = (R(kF20) * rgb[0] + R(kF21) * rgb[1] + R(kF22) * rgb[2]) + R(kOffC);
}

// ycc on the 8-bit scale -> rgb in [0, 1] (unclamped).
template <class R>
UPRES_HD void ycbcr_to_rgb(const R ycc[3], R rgb[3]) {
    const R d0 = ycc[0] - R(kOffY), d1 = ycc[1] - R(kOffC), d2 = ycc[2] - R(kOffC);
    rgb[0] = R(kI00) * d0 + R(kI01) * d1 + R(kI02) * d2;
    rgb[1] = R(kI10) * d0 + R(kI11) * d1 + R(kI12) * d2;
    rgb[2] = R(kI20) * d0 + R(kI21) * d1 + R(kI22) * d2;
}

// One pixel of channels() values (3 or 4) of type T -> float YCbCr(A), computed in R.
template <class R, class T>
UPRES_HD void pixel_rgb_to_ycbcr(const T* in, float* out, int channels) {
    const R rgb[3] = {to_unit<R>(in[0]), to_unit<R>(in[1]), to_unit<R>(in[2])};
    R ycc[3];
    rgb_to_ycbcr(rgb, ycc);
    for (int i = 0; i < 3; ++i) out[i] = static_cast<float>(ycc[i]);
    if (channels == 4) out[3] = static_cast<float>(to_unit<R>(in[3]) * R(kAlphaScale));
}

template <class R, class D>
UPRES_HD void pixel_ycbcr_to_rgb(const float* in, D* out, int channels) {
    const R ycc[3] = {static_cast<R>(in[0]), static_cast<R>(in[1]), static_cast<R>(in[2])};
    R rgb[3];
    ycbcr_to_rgb(ycc, rgb);
    for (int i = 0; i < 3; ++i) out[i] = from_unit<D>(rgb[i]);
    if (channels == 4) out[3] = from_unit<D>(static_cast<R>(in[3]) / R(kAlphaScale));
}

// Y of one pixel with 1 (gray), 3 or 4 (alpha ignored) channels.
template <class R, class T>
UPRES_HD R pixel_luma(const T* in, int channels) {
    if (channels == 1) return gray_luma(to_unit<R>(in[0]));
    return luma(to_unit<R>(in[0]), to_unit<R>(in[1]), to_unit<R>(in[2]));
}

}  // namespace upres::color
