// Image quality metrics: PSNR and SSIM / MSSIM (Wang et al. 2004).
//
// PSNR = 10 log10(data_range^2 / MSE). SSIM uses an 11x11 Gaussian window (sigma 1.5),
// K1 = 0.01, K2 = 0.03, population (not sample) covariance, and MSSIM is the mean of the SSIM
// map over the pixels where the window fits — exactly scikit-image's
// structural_similarity(a, b, gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
// data_range=...) (which crops (win_size - 1) / 2 = 5 pixels from each side before averaging)
// and peak_signal_noise_ratio. Tested to 1e-6 against golden data from tools/gen_golden_metrics.py.
//
// Multi-channel images: with on_y (default) RGB/RGBA images are compared on their BT.601 luma
// Y (upres/color.hpp, float on the 8-bit scale, data range 255); otherwise all channels are
// used (SSIM: mean over channels, as scikit-image's channel_axis). `shave` pixels are removed
// from every border first (the super-resolution convention). Computed in double.
// Backends: Reference and Cpu (OpenMP); identical results up to summation order (1e-12).
#pragma once

#include <upres/context.hpp>
#include <upres/image.hpp>

namespace upres {

struct MetricOptions {
    int shave = 0;            // border pixels removed on every side before comparing
    bool on_y = true;         // colour images: compare luma Y only
    double data_range = 0.0;  // 0: from the pixel type (255, 65535, 1.0; 255 on Y)
};

double psnr(ImageView<const std::uint8_t> a, ImageView<const std::uint8_t> b,
            const MetricOptions& opts = {}, const Context& ctx = {});
double psnr(ImageView<const std::uint16_t> a, ImageView<const std::uint16_t> b,
            const MetricOptions& opts = {}, const Context& ctx = {});
double psnr(ImageView<const float> a, ImageView<const float> b, const MetricOptions& opts = {},
            const Context& ctx = {});

double ssim(ImageView<const std::uint8_t> a, ImageView<const std::uint8_t> b,
            const MetricOptions& opts = {}, const Context& ctx = {});
double ssim(ImageView<const std::uint16_t> a, ImageView<const std::uint16_t> b,
            const MetricOptions& opts = {}, const Context& ctx = {});
double ssim(ImageView<const float> a, ImageView<const float> b, const MetricOptions& opts = {},
            const Context& ctx = {});

}  // namespace upres
