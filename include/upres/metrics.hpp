// Image quality metrics: PSNR and SSIM / MSSIM (Wang et al., "Image quality assessment: from
// error visibility to structural similarity", IEEE TIP 2004).
//
// PSNR = 10 log10(data_range^2 / MSE), MSE over all compared pixels and channels; identical
// images give +infinity (std::numeric_limits<double>::infinity(), not an error).
// SSIM uses an 11x11 Gaussian window (sigma 1.5, scipy.ndimage.gaussian_filter with
// truncate 3.5 and mode 'reflect' over the whole image), K1 = 0.01, K2 = 0.03, population (not
// sample) covariance, and MSSIM is the mean of the SSIM map after cropping
// (win_size - 1) / 2 = 5 pixels at every border — exactly scikit-image's
// structural_similarity(a, b, gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
// data_range=...) and peak_signal_noise_ratio(a, b, data_range=...) computed in float64.
// Tested against golden data from tools/golden/gen_metrics.py (scikit-image 0.19.3): measured
// deviations ~1e-14 (tolerance 1e-6 for SSIM, 1e-6 dB for PSNR).
//
// Channels (1 to 4): with on_y (default) 3/4-channel images are compared on their BT.601 luma Y
// (upres/color.hpp, computed here in double, alpha ignored, data range 255 whatever the type);
// 1- and 2-channel images, and every image with on_y = false, are compared on all channels
// (SSIM: mean over channels, as scikit-image's channel_axis). `shave` pixels are removed from
// every border first (the super-resolution convention). data_range 0 means: 255 on Y or for
// u8, 65535 for u16, 1.0 for float (scikit-image would use 2.0 for float: pass it if needed).
//
// Errors (upres::Error, InvalidArgument unless said): an empty image; a and b of different
// size, channel count or memory place; shave < 0; data_range < 0, NaN or Inf; NaN/Inf pixels in
// a float image (the message names image, value and position; shaved-off pixels are not
// looked at); nothing left after shaving (PSNR) or less than 11 x 11 left (SSIM; the message
// names the size). Host images only: the cuda backend, or Auto with device images, is
// BackendUnavailable.
// Backends: Reference (direct 11x11 sums) and Cpu (separable, OpenMP rows), in double, equal
// within 1e-10 (summation order; measured ~1e-13); both deterministic for any thread count.
// Memory: one double plane per compared channel and image (after shaving).
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
