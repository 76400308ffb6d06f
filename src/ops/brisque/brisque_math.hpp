// BRISQUE's formulas, written once (upres/brisque.hpp; docs/ops/brisque.md): the window, the
// statistics each backend gathers, the asymmetric generalised Gaussian fit, the half-size
// resize weights.
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>

namespace upres::brisque_math {

inline constexpr int kRadius = 3;  // the 7 x 7 window
inline constexpr double kSigma = 7.0 / 6.0;
inline constexpr double kC = 1.0 / 255.0;  // the MSCN denominator's constant
inline constexpr int kMinSide = 14;        // the half-size scale still holds a 7 x 7 window

// The normalised 7 x 7 Gaussian window w(dx, dy), a function of dx^2 + dy^2: the reference
// package's values bit for bit (numpy's 1 / (2 pi s^2) exp(-(x^2 + y^2) / (2 s^2)) divided by
// numpy's sum of the 49; printed by tools/golden/gen_brisque.py), because on flat regions the
// MSCN values are rounding noise whose signs decide the fit (see mscn_row).
inline double window(int dx, int dy) {
    switch (dx * dx + dy * dy) {
        case 0:
            return 0x1.e0db00311d7f1p-4;
        case 1:
            return 0x1.4d06977d8ad64p-4;
        case 2:
            return 0x1.cd496e1480e88p-5;
        case 4:
            return 0x1.ba83b9de5989ep-6;
        case 5:
            return 0x1.3278d5665da8fp-6;
        case 8:
            return 0x1.973b1202ace5bp-8;
        case 9:
            return 0x1.1a0917e5476abp-8;
        case 10:
            return 0x1.86a8865c4c6d1p-9;
        case 13:
            return 0x1.038c273f9a49bp-10;
        default:
            return 0x1.4ad805ce81344p-13;  // 18
    }
}

// Row y of the MSCN map of gray (w x h, rows of `stride`) into out: mu and E[I^2] by the
// window with zero padding, summed in scipy.signal.convolve2d's order (window row j = 0..6,
// column k = 0..6, input (x + 3 - k, y + 3 - j)), then (I - mu) / (sqrt|mu^2 - E[I^2]| + 1/255).
// That order matters: on a flat patch I - mu is rounding noise, and 40 % of an image like
// smarties.png is flat; any other order (the separable filter included) flips the signs of
// those values and moves its features by up to 100 % (tests).
inline void mscn_row(const double* gray, int w, int h, std::ptrdiff_t stride, int y, double* out) {
    for (int x = 0; x < w; ++x) {
        double mu = 0.0, e2 = 0.0;
        for (int j = 0; j < 2 * kRadius + 1; ++j) {
            const int yy = y + kRadius - j;
            if (yy < 0 || yy >= h) continue;
            const double* r = gray + yy * stride;
            for (int k = 0; k < 2 * kRadius + 1; ++k) {
                const int xx = x + kRadius - k;
                if (xx < 0 || xx >= w) continue;
                const double g = window(kRadius - k, kRadius - j);
                mu = mu + g * r[xx];
                e2 = e2 + g * (r[xx] * r[xx]);
            }
        }
        const double v = gray[y * stride + x];
        out[x] = (v - mu) / (std::sqrt(std::fabs(mu * mu - e2)) + kC);
    }
}

// The sums one coefficient set contributes to its fit.
struct Moments {
    double abs_sum = 0, sq_sum = 0, neg_sq = 0, pos_sq = 0;
    std::int64_t n = 0, n_neg = 0, n_pos = 0;
    void add(double x) {
        abs_sum += std::fabs(x);
        sq_sum += x * x;
        if (x < 0) {
            neg_sq += x * x;
            ++n_neg;
        } else {
            pos_sq += x * x;
            ++n_pos;
        }
        ++n;
    }
    void merge(const Moments& o) {
        abs_sum += o.abs_sum;
        sq_sum += o.sq_sum;
        neg_sq += o.neg_sq;
        pos_sq += o.pos_sq;
        n += o.n;
        n_neg += o.n_neg;
        n_pos += o.n_pos;
    }
};
// The five sets: MSCN, and its products with the right, lower, lower-right neighbours and the
// (lower-left, upper-right) pairs.
using SetMoments = std::array<Moments, 5>;

// Gamma(2/a)^2 / (Gamma(1/a) Gamma(3/a)), increasing from 0 to 3/4.
inline double phi(double a) {
    return std::exp(2 * std::lgamma(2 / a) - std::lgamma(1 / a) - std::lgamma(3 / a));
}

struct Fit {
    double alpha, mean, var_l, var_r;
    bool ok;  // false: no spread on one side (a flat image)
};

// The asymmetric generalised Gaussian fit by moments; alpha by bisection on log alpha in
// [0.02, 50] (phi's root is unique), clamped to the interval where R leaves it.
inline Fit fit(const Moments& m) {
    if (m.n_neg == 0 || m.n_pos == 0 || m.sq_sum <= 0 || m.pos_sq <= 0 || m.neg_sq <= 0)
        return {0, 0, 0, 0, false};
    const double n = static_cast<double>(m.n);
    const double r = (m.abs_sum / n) * (m.abs_sum / n) / (m.sq_sum / n);
    const double var_l = m.neg_sq / static_cast<double>(m.n_neg);
    const double var_r = m.pos_sq / static_cast<double>(m.n_pos);
    const double g = std::sqrt(var_l) / std::sqrt(var_r);
    const double big_r = r * (g * g * g + 1) * (g + 1) / ((g * g + 1) * (g * g + 1));
    double lo = std::log(0.02), hi = std::log(50.0);
    for (int i = 0; i < 200; ++i) {
        const double mid = 0.5 * (lo + hi);
        (phi(std::exp(mid)) < big_r ? lo : hi) = mid;
    }
    const double a = std::exp(0.5 * (lo + hi));
    const double c = std::sqrt(std::tgamma(1 / a) / std::tgamma(3 / a));
    const double mean =
        (std::sqrt(var_r) - std::sqrt(var_l)) * c * std::tgamma(2 / a) / std::tgamma(1 / a);
    return {a, mean, var_l, var_r, true};
}

// OpenCV's INTER_CUBIC halving (Keys a = -0.75): output i from inputs 2i - 1 .. 2i + 2 (clamped)
// with these weights (the fraction 1/2; exact in float, as OpenCV stores them).
inline constexpr double kHalfWeights[4] = {-0.09375, 0.59375, 0.59375, -0.09375};
// The halved length: n / 2 rounded half to even (OpenCV's cvRound of n * 0.5).
inline int half_length(int n) { return (n / 2) + ((n % 2) && ((n / 2) % 2) ? 1 : 0); }

}  // namespace upres::brisque_math
