// Cubic B-spline prefilter math, written once for every backend (docs/ops/bspline.md).
//
// The prefilter inverts the sampled cubic B-spline, (1/6)[1 4 1], along rows and columns:
//   exact:  c = 6 / ((1 - z q^-1)(1 - z q)) x,  pole z = sqrt(3) - 2 (gain 6), i.e. the
//           infinite impulse response h(k) = sqrt(3) z^|k| (sum 1, sum |h| = 3);
//   FIR:    the paper's eq. (6), h(k) for |k| <= K, divided by its sum S_K (DC gain 1).
// Borders: the exact IIR equals the convolution of h with the input extended by
// prefilter_extension(border) (scipy.ndimage's start-ups are exact for these extensions), and
// the FIR uses the same extension, so FIR -> IIR for every border as K grows.
#pragma once

#include <cmath>
#include <cstddef>

#include <upres/geometry.hpp>

#include "core/border_math.hpp"
#include "core/hd.hpp"

namespace upres::bspline {

inline constexpr double kPole = -0.267949192431122706472553658494127633;  // sqrt(3) - 2
inline constexpr double kGain = 6.0;                                      // (1 - z)(1 - 1/z)
inline constexpr double kSqrt3 = 1.732050807568877293527446341505872367;
inline constexpr int kMaxFirLength = 31;
inline constexpr int kMaxFirRadius = (kMaxFirLength - 1) / 2;  // 15

// The extension of the signal that scipy.ndimage.spline_filter(order=3, mode) inverts exactly:
//   Mirror, Constant -> mirror (scipy 'mirror', 'constant', 'grid-constant', 'wrap': mirror
//                       start-up);
//   Reflect, Nearest -> reflect (scipy 'reflect', 'nearest': reflect start-up);
//   Wrap             -> wrap (scipy 'grid-wrap').
UPRES_HD Border prefilter_extension(Border b) {
    switch (b) {
        case Border::Reflect:
        case Border::Nearest:
            return Border::Reflect;
        case Border::Wrap:
            return Border::Wrap;
        case Border::Mirror:
        case Border::Constant:
            return Border::Mirror;
    }
    return Border::Mirror;
}

// Index of sample i (any integer) of a line of n samples under the prefilter's extension.
UPRES_HD int prefilter_index(int i, int n, Border b) {
    return border_index(i, n, prefilter_extension(b));
}

// Unnormalised tap h(k) = sqrt(3) z^|k| of the exact filter (double).
inline double exact_tap(int k) {
    return kSqrt3 * std::pow(-kPole, std::abs(k)) * ((k & 1) ? -1 : 1);
}

// Sum of |h(k)| over |k| > K: 2 sqrt(3) |z|^(K+1) / (1 - |z|).
inline double exact_tail_abs(int K) {
    return 2.0 * kSqrt3 * std::pow(-kPole, K + 1) / (1.0 + kPole);
}

// Number of samples after which the float IIR start-up sums are truncated: |z|^16 = 7e-10,
// far below float32 resolution. The double reference never truncates (exact scipy sums).
inline constexpr int kFloatHorizon = 16;

// ---------------------------------------------------------------- IIR start-ups (scipy)
// Accessor-based so that host loops, strided device columns and registers share the formula.
// `x(i)` returns the (gain-scaled) input sample i in [0, n); `horizon` = n for the exact sums
// or a truncation length (kFloatHorizon) for float backends. n >= 2.

// Causal start value c+(0) (scipy _init_causal_mirror / _reflect / _wrap).
template <class T, class X>
UPRES_HD T causal_init(const X& x, int n, Border border, int horizon) {
    const T z = static_cast<T>(kPole);
    const Border e = prefilter_extension(border);
    if (e == Border::Mirror) {
        if (n - 1 > horizon) {  // z^(n-1) negligible: the mirrored terms vanish
            T s = x(0), zi = z;
            for (int i = 1; i < horizon; ++i, zi *= z) s += zi * x(i);
            return s;
        }
        T zn1 = 1;
        for (int i = 0; i < n - 1; ++i) zn1 *= z;
        T s = x(0) + zn1 * x(n - 1), zi = z;
        for (int i = 1; i < n - 1; ++i, zi *= z) s += zi * (x(i) + zn1 * x(n - 1 - i));
        return s / (T(1) - zn1 * zn1);
    }
    if (e == Border::Reflect) {
        if (n > horizon) {
            T s = x(0), zi = z;
            for (int i = 1; i < horizon; ++i, zi *= z) s += zi * x(i);
            return x(0) + z * s;
        }
        T zn = 1;
        for (int i = 0; i < n; ++i) zn *= z;
        // scipy updates c[0] in place while summing, so its last term (i = n - 1) reads the
        // running sum instead of x(0); reproduced exactly (differs from the exact reflect
        // start-up by up to 6e-4 for n = 2, < 1e-9 for n >= 8).
        T s = x(0) + zn * x(n - 1), zi = z;
        for (int i = 1; i < n; ++i, zi *= z)
            s += zi * (x(i) + zn * (i == n - 1 ? s : x(n - 1 - i)));
        return x(0) + s * z / (T(1) - zn * zn);
    }
    // Wrap: sum_{i>=0} z^i x(-i) over the periodic signal.
    const int m = n < horizon ? n : horizon;
    T s = x(0), zi = z;
    for (int i = 1; i < m; ++i, zi *= z) s += zi * x(n - i);
    if (n <= horizon) return s / (T(1) - zi);  // zi = z^n
    return s;
}

// Anticausal start value c(n-1) from the causal outputs `cp(i)` (scipy _init_anticausal_*).
template <class T, class C>
UPRES_HD T anticausal_init(const C& cp, int n, Border border, int horizon) {
    const T z = static_cast<T>(kPole);
    const Border e = prefilter_extension(border);
    if (e == Border::Mirror) return (z * cp(n - 2) + cp(n - 1)) * z / (z * z - T(1));
    if (e == Border::Reflect) return cp(n - 1) * z / (z - T(1));
    // Wrap
    const int m = n - 1 < horizon ? n - 1 : horizon;
    T s = cp(n - 1), zi = z;
    for (int i = 0; i < m; ++i, zi *= z) s += zi * cp(i);
    if (n - 1 <= horizon) return s * z / (zi - T(1));  // zi = z^n
    return -s * z;                                     // z^n negligible
}

// ---------------------------------------------------------------- FIR
// Fills taps[0 .. 2K] (index 0 is k = -K) with the paper's renormalised FIR of length 2K + 1.
inline void fir_taps(int length, double* taps) {
    const int K = (length - 1) / 2;
    double s = 0;
    for (int k = -K; k <= K; ++k) s += (taps[k + K] = exact_tap(k));
    for (int k = 0; k < length; ++k) taps[k] /= s;
}

// Sup-norm bound of |FIR_K - IIR| for ONE 1-D pass on a signal with values in [0, 1]
// (docs/ops/bspline.md): 0.5 * (D_K / S_K * (3 - T_K) + T_K), with T_K the absolute tail,
// S_K the truncated sum and D_K = |1 - S_K|.
inline double fir_error_bound_1d(int length) {
    const int K = (length - 1) / 2;
    const double t = exact_tail_abs(K);
    const double az = -kPole;
    const double d = 2.0 * kSqrt3 * std::pow(az, K + 1) / (1.0 + az);  // |1 - S_K|
    const double s = 1.0 + ((K & 1) ? -d : d);                         // S_K = 1 + (-1)^K d
    return 0.5 * (d / s * (3.0 - t) + t);
}

// The same bound for the 2-D (rows then columns) prefilter of an image with values in [0, 1]:
// F F - H H = F (F - H) + (F - H) H; |F|_1 = (3 - T_K) / S_K and H x spans a range of 3.
inline double fir_error_bound_2d(int length) {
    const int K = (length - 1) / 2;
    const double az = -kPole;
    const double d = 2.0 * kSqrt3 * std::pow(az, K + 1) / (1.0 + az);
    const double s = 1.0 + ((K & 1) ? -d : d);
    const double f1 = (3.0 - exact_tail_abs(K)) / s;
    return fir_error_bound_1d(length) * (f1 + 3.0);
}

// ---------------------------------------------------------------- truncated IIR on a segment
// The two recursions p(i) = x(i) + z p(i - 1) and q(i) = z q(i + 1) - p(i) (the exact filter up
// to the gain: c = 6 z q) on a segment [s, e) of a line, each started H samples outside it as the
// CUDA box kernels do (p = 0 before x(s - H), q = 0 after p(e + H - 1); the tails they drop weigh
// at most 2 sqrt(3) |z|^(H+1) / (1 - |z|) of the range, docs/ops/bspline.md). Their start values
// in closed form, so that a thread can take them from the raw samples before its neighbours
// overwrite those and then run its segment with no warm-up steps:
//   p(s - 1) = sum_{k < H} z^k x(s - 1 - k);
//   q(e)     = -sum_{j < H} z^j p(e + j), where p(e + j) = z^(j+1) p(e - 1) + sum_{l <= j}
//              z^(j-l) x(e + l), so q(e) = -alpha p(e - 1) - sum_{l < H} beta_l x(e + l) with
//              alpha = sum_{j < H} z^(2j+1) and beta_l = sum_{j = l}^{H-1} z^(2j-l).
template <int H>
struct IirSegmentStarts {
    double zk[H];    // z^k: weight of x(s - 1 - k) in p(s - 1)
    double beta[H];  // weight of x(e + l) in -q(e)
    double alpha;    // weight of p(e - 1) in -q(e)
};

template <int H>
constexpr IirSegmentStarts<H> iir_segment_starts() {
    IirSegmentStarts<H> r{};
    double zp[2 * H + 1] = {};
    zp[0] = 1.0;
    for (int i = 1; i <= 2 * H; ++i) zp[i] = zp[i - 1] * kPole;
    r.alpha = 0.0;
    for (int j = 0; j < H; ++j) r.alpha += zp[2 * j + 1];
    for (int k = 0; k < H; ++k) {
        r.zk[k] = zp[k];
        r.beta[k] = 0.0;
        for (int j = H - 1; j >= k; --j) r.beta[k] += zp[2 * j - k];
    }
    return r;
}

}  // namespace upres::bspline
