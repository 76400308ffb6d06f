// upres::upscale: super-resolution / interpolation of whole images by any factor in [1, 16]
// with the SEABI methods of upres/seabi.hpp or the baselines the SEABI paper compares against.
//
//   Colour (3 or 4 channels, RGB[A]): BT.601 YCbCr (upres/color.hpp); Y rounded to u8 goes
//   through the method; Cb, Cr (and alpha) through bicubic; back to RGB. Gray: the method.
//   Factors: 2^k by cascading x2 (SEABI, tap4, tap6; bilinear and bicubic interpolate the
//   2^k grid directly); any other factor s by the next power of two, then cubic B-spline
//   resampling to round(s W) x round(s H).
//   Lattice: co-sited (output x samples input x / s), like SEABI itself (docs/ops/seabi.md);
//   border: nearest.
//   Types: 8-bit only (the paper's integer arithmetic). The AnyImage overload refuses u16 and
//   f32 images with ErrorCode::UnsupportedFormat (convert them first).
//   Memory: host images; the work of each step runs on ctx's backend (Cuda stages through the
//   device).
#pragma once

#include <cstdint>
#include <string>

#include <upres/context.hpp>
#include <upres/image.hpp>

namespace upres {

enum class UpscaleMethod { LSeai, SilSeabi, LSeabi, Tap4, Tap6, Bilinear, Bicubic };
const char* to_string(UpscaleMethod m) noexcept;
// "lseai", "silseabi", "lseabi", "tap4", "tap6", "bilinear", "bicubic".
UpscaleMethod parse_upscale_method(const std::string& name);

struct UpscaleOptions {
    UpscaleMethod method = UpscaleMethod::SilSeabi;
    double scale = 2.0;       // in [1, 16]; 1 returns a copy
    int max_iterations = 4;   // L-SEABI (see SeabiOptions)
    double max_error = 0.25;  // L-SEABI (see SeabiOptions)
};

// Output size round(scale * W) x round(scale * H), same channel count (1, 3 or 4).
Image<std::uint8_t> upscale(ImageView<const std::uint8_t> img, const UpscaleOptions& opts = {},
                            const Context& ctx = {});
AnyImage upscale(const AnyImage& img, const UpscaleOptions& opts = {}, const Context& ctx = {});

}  // namespace upres
