// upres::upscale: super-resolution and interpolation of whole images by any factor in [1, 16],
// every method upres has behind one call: SRCNN (upres/srcnn.hpp), the SEABI family
// (upres/seabi.hpp), the paper's tap filters and the bilinear / bicubic baselines.
//
//   Method Auto: the best-quality method available for the factor: SRCNN for the integer factors
//   that have a model (the bundled x2, x3, x4), otherwise bicubic.
//   Method Nlm: non-local-means super-resolution (upres/nlmsr.hpp, default options) of one image,
//   centre-aligned, integer factors 2 to 4; on a video (upres/video.hpp) it fuses a window of
//   frames.
//   Method BSpline: exact cubic B-spline interpolation (upres/warp.hpp's resize with the default
//   WarpOptions: prefiltered, Border::Mirror), centre-aligned, any factor and depth: upres warp
//   --zoom.
//   Lattice Auto: centre-aligned for every method (output pixel centres where upres warp --zoom
//   and MATLAB's imresize put them: output x samples (x + 0.5) / s - 0.5; the lattice of images
//   down-scaled by area or an antialiased filter). Lattice::CoSited (output x samples x / s,
//   Border::Nearest) is the SEABI paper's lattice, for reproducing it: the SEABI family, tap4 /
//   tap6, bilinear, bicubic (Keys a = -0.5) and bspline run on it; SRCNN and nlm refuse it.
//   Centre-aligned bicubic is MATLAB imresize (bicubic_resize in upres/srcnn.hpp).
//
//   The SEABI family, tap4 / tap6 (either lattice) and the co-sited baselines: colour (3 or 4
//   channels, RGB[A]) goes through BT.601 YCbCr (upres/color.hpp); Y rounded to u8 goes through
//   the method, Cb, Cr (and alpha) through bicubic on the same lattice; gray: the method.
//   Factors 2^k cascade x2 (SEABI, tap4, tap6; co-sited bilinear and bicubic interpolate the 2^k
//   grid directly); any other factor s goes to the next power of two, then cubic B-spline
//   resampling to the output size. 8-bit images only (the paper's integer arithmetic): u16 /
//   f32 are Error(UnsupportedFormat).
//   The other centre-aligned methods: u8, u16 and f32 images; SRCNN as srcnn_upscale (integer
//   factors of its model); bilinear and bicubic to ceil(s W) x ceil(s H).
//   Memory: host or device images. Device images (ctx.backend Auto or Cuda) keep every
//   intermediate on the device, in upres's memory pool; host images with ctx.backend Cuda are
//   uploaded once, run on the device and downloaded once; with Reference / Cpu every step runs
//   on the host.
#pragma once

#include <cstdint>
#include <string>

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/options.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>

namespace upres {

enum class UpscaleMethod {
    Auto,
    Srcnn,
    LSeai,
    SilSeabi,
    LSeabi,
    Tap4,
    Tap6,
    Bilinear,
    Bicubic,
    Nlm,
    BSpline
};
const char* to_string(UpscaleMethod m) noexcept;
// "auto", "srcnn", "lseai", "silseabi", "lseabi", "tap4", "tap6", "bilinear", "bicubic", "nlm",
// "bspline".
UpscaleMethod parse_upscale_method(const std::string& name);
template <>
const EnumDesc& enum_desc<UpscaleMethod>() noexcept;

struct UpscaleOptions {
    UpscaleMethod method = UpscaleMethod::Auto;
    Lattice lattice = Lattice::Auto;
    // In [1, 16]; 1 returns a copy. SRCNN: a factor with a bundled model, or with a model file
    // its factor or 0 (= the model's factor).
    double scale = 2.0;
    int max_iterations = 4;   // L-SEABI (see SeabiOptions)
    double max_error = 0.25;  // L-SEABI (see SeabiOptions)
    // SRCNN: a .srcnn weights file; empty = the bundled model for the scale
    // (load_default_srcnn_model).
    std::string model;
    SrcnnOptions srcnn;  // SRCNN: precision and kernels
};

// The method and lattice Auto stands for, for these options (method Auto: SRCNN when the scale
// is an integer with a bundled model, else bicubic). Throws what upscale() throws for options
// that do not go together (a lattice the method is not defined on).
UpscaleMethod resolved_method(const UpscaleOptions& opts);
Lattice resolved_lattice(const UpscaleOptions& opts);
// Whether these options run the 8-bit integer pipeline (the SEABI family and the tap filters on
// either lattice, bilinear / bicubic / bspline co-sited), which refuses u16 and f32 images.
bool upscale_needs_8bit(const UpscaleOptions& opts);

// Output size: round(scale * W) x round(scale * H) co-sited, ceil(scale * W) x ceil(scale * H)
// centre-aligned (the same for integer factors); same channel count (1, 3 or 4; 2 for the
// centre-aligned methods).
Image<std::uint8_t> upscale(ImageView<const std::uint8_t> img, const UpscaleOptions& opts = {},
                            const Context& ctx = {});
AnyImage upscale(const AnyImage& img, const UpscaleOptions& opts = {}, const Context& ctx = {});
// As above; plan (when not null) receives what SRCNN ran.
AnyImage upscale(const AnyImage& img, const UpscaleOptions& opts, const Context& ctx,
                 SrcnnPlan* plan);
// As above into out, which must have the output size, img's channels and img's memory (host
// or device): nothing is allocated for the result (the video and streaming case).
void upscale(ImageView<const std::uint8_t> img, ImageView<std::uint8_t> out,
             const UpscaleOptions& opts = {}, const Context& ctx = {});

}  // namespace upres
