// PSNR and SSIM (Wang et al., "Image quality assessment: from error visibility to structural
// similarity", IEEE TIP 2004), written once for every backend (upres/metrics.hpp).
//
// SSIM is scikit-image's structural_similarity(gaussian_weights=True, sigma=1.5,
// use_sample_covariance=False): the five moments mu_a, mu_b, E[a^2], E[b^2], E[ab] are
// scipy.ndimage.gaussian_filter(x, 1.5, mode='reflect', truncate=3.5) of the whole image (a
// separable 11-tap Gaussian, half-sample symmetric border "d c b a | a b c d | d c b a"); the
// SSIM map is averaged over the pixels at least kSsimRadius = 5 from every border.
#pragma once

#include <cmath>

#include "core/hd.hpp"

namespace upres::metrics {

inline constexpr double kSsimSigma = 1.5;
inline constexpr double kSsimTruncate = 3.5;
inline constexpr int kSsimRadius = 5;  // int(truncate * sigma + 0.5), as scipy.ndimage
inline constexpr int kSsimWindow = 2 * kSsimRadius + 1;  // 11
inline constexpr double kSsimK1 = 0.01;
inline constexpr double kSsimK2 = 0.03;

// The 11 Gaussian weights exactly as scipy.ndimage._gaussian_kernel1d builds them:
// phi(x) = exp(-0.5 / sigma^2 * x^2), x = -5..5, divided by their sum.
inline void gaussian_window(double w[kSsimWindow]) {
    const double sigma2 = kSsimSigma * kSsimSigma;
    double sum = 0.0;
    for (int i = 0; i < kSsimWindow; ++i) {
        const double x = i - kSsimRadius;
        w[i] = std::exp(-0.5 / sigma2 * (x * x));
        sum += w[i];
    }
    for (int i = 0; i < kSsimWindow; ++i) w[i] /= sum;
}

// scipy.ndimage 'reflect' (half-sample symmetric) index into [0, n), any i.
UPRES_HD int reflect_index(int i, int n) {
    if (i >= 0 && i < n) return i;
    const int p = 2 * n;
    int m = i % p;
    if (m < 0) m += p;
    return m < n ? m : p - 1 - m;
}

// SSIM at one pixel from the filtered moments, in scikit-image's order of operations:
// population variances/covariance, C1 = (K1 L)^2, C2 = (K2 L)^2.
UPRES_HD double ssim_from_moments(double ux, double uy, double uxx, double uyy, double uxy,
                                  double c1, double c2) {
    const double vx = uxx - ux * ux;
    const double vy = uyy - uy * uy;
    const double vxy = uxy - ux * uy;
    const double a1 = 2.0 * ux * uy + c1;
    const double a2 = 2.0 * vxy + c2;
    const double b1 = ux * ux + uy * uy + c1;
    const double b2 = vx + vy + c2;
    return (a1 * a2) / (b1 * b2);
}

UPRES_HD double ssim_c1(double data_range) {
    return (kSsimK1 * data_range) * (kSsimK1 * data_range);
}
UPRES_HD double ssim_c2(double data_range) {
    return (kSsimK2 * data_range) * (kSsimK2 * data_range);
}

// PSNR in dB from the mean squared error; +inf for identical images (mse == 0).
UPRES_HD double psnr_from_mse(double mse, double data_range) {
    if (mse == 0.0) return HUGE_VAL;
    return 10.0 * std::log10((data_range * data_range) / mse);
}

}  // namespace upres::metrics
