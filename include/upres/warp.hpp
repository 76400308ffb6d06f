// Geometric transforms with nearest, bilinear, Keys cubic and cubic B-spline interpolation:
// rotation, zoom/resize, affine, perspective (homography), remap by coordinate maps, and
// displacement-field (optical-flow) warps.
//
// Every transform maps an OUTPUT pixel centre (x, y) to the INPUT position (u, v) it samples
// (an inverse map, as scipy.ndimage.affine_transform and OpenCV's WARP_INVERSE_MAP). Pixel
// centres are at integer coordinates; see upres/geometry.hpp for borders.
//
// Pixel types u8, u16, f32, 1-4 interleaved channels, computed in float; integer outputs are
// rounded half to even and saturated. Exact paths agree with the double-precision reference
// within the tolerances of docs/numerics.md, and with scipy.ndimage on golden data.
#pragma once

#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/geometry.hpp>
#include <upres/image.hpp>

namespace upres {

enum class Interp { Nearest, Linear, Cubic, BSpline };
const char* to_string(Interp i) noexcept;
Interp parse_interp(const std::string& name);  // "nearest", "linear", "cubic", "bspline"
template <>
const EnumDesc& enum_desc<Interp>() noexcept;

struct WarpOptions {
    Interp interp = Interp::BSpline;
    Border border = Border::Mirror;
    // Value outside the image with Border::Constant (scipy mode='constant': samples strictly
    // outside [0, n-1] get it, no blending), in the image's units (e.g. 0..255 for u8). u8 / u16
    // outputs round and saturate it; NaN or infinite fills are refused for them (float images
    // may take NaN, like scipy's cval=np.nan).
    float fill = 0.0f;
    int prefilter = 0;  // B-spline: 0 = exact IIR, odd 3..31 = FIR length
    // B-spline: src already holds the B-spline coefficients (bspline_prefilter's output with the
    // same border; scipy's prefilter=False): no prefilter runs and the taps read src directly
    // (with Border::Nearest, clamped to the image as scipy does then, without its padding).
    // Needs a float src; ignored by the other interpolations (as scipy ignores prefilter).
    bool prefiltered = false;
    double cubic_a = -0.5;  // Keys cubic convolution parameter
    // Zoom/resize with Linear or Cubic only: along each axis scaled by s < 1, the kernel is
    // stretched by 1/s and renormalised (MATLAB imresize). MATLAB's bicubic degradation is
    // Cubic + cubic_a -0.5 + antialias + Border::Reflect (docs/ops/warp.md).
    bool antialias = false;
    // CUDA only, a separate named mode: hardware texture filtering (bilinear fetches, 8-bit
    // fractional weights; B-spline via 4 fetches after Sigg & Hadwiger). Its tolerance is
    // documented separately; with fast_texture = false the exact path always runs.
    bool fast_texture = false;
    // Remap / Flow: every field value must be finite, or warp throws (see warp() below). false
    // trusts the field: no check, so a call on device images stays asynchronous (and can be
    // captured in a CUDA graph); a non-finite entry then gives its output the fill value, as a
    // homography's w' = 0 does, on every backend.
    bool check_field = true;
};

// u = m[0] x + m[1] y + m[2],  v = m[3] x + m[4] y + m[5]   (output -> input)
struct Affine {
    double m[6] = {1, 0, 0, 0, 1, 0};
};
// (u', v', w') = H (x, y, 1),  u = u' / w', v = v' / w'    (output -> input, row-major)
struct Homography {
    double h[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
};

// Inverse map of a rotation by `degrees` about the image centre ((w-1)/2, (h-1)/2), in the same
// sense as scipy.ndimage.rotate(img, degrees, reshape=False).
Affine rotation(double degrees, int width, int height);

// What to apply: build with the named constructors.
struct Transform {
    enum class Kind { Affine, Perspective, Resize, Remap, Flow };
    Kind kind = Kind::Resize;
    Affine affine;                 // Kind::Affine (also rotation)
    Homography homography;         // Kind::Perspective
    ImageView<const float> field;  // Kind::Remap: (u, v); Kind::Flow: (dx, dy); 2 channels,
                                   // dst's size, in the same memory as the images

    static Transform make_affine(const Affine& a);
    static Transform make_rotation(double degrees, int width, int height);
    static Transform make_perspective(const Homography& h);
    // Zoom/resize to dst's size: u = (x + 0.5) * src.width / dst.width - 0.5 (scipy zoom with
    // grid_mode=True).
    static Transform make_resize();
    static Transform make_remap(ImageView<const float> map);
    // Output (x, y) samples input (x + dx, y + dy).
    static Transform make_flow(ImageView<const float> flow);
};

// Warps src into dst (dst's size is the output size; src and dst the same pixel type and
// channel count). Throws Error(InvalidArgument) for empty images, non-finite or singular
// matrices, fields of the wrong size/channels or with non-finite values, bad options. Such
// errors are found before any work, except a non-finite value in a DEVICE field: the warp
// kernels find it as they read the field, the call then synchronizes ctx.cuda_stream to read
// their verdict, and when it throws dst's contents are unspecified (written in part). Set
// WarpOptions::check_field = false to skip the check and keep the call asynchronous.
void warp(ImageView<const std::uint8_t> src, ImageView<std::uint8_t> dst, const Transform& t,
          const WarpOptions& opts = {}, const Context& ctx = {});
void warp(ImageView<const std::uint16_t> src, ImageView<std::uint16_t> dst, const Transform& t,
          const WarpOptions& opts = {}, const Context& ctx = {});
void warp(ImageView<const float> src, ImageView<float> dst, const Transform& t,
          const WarpOptions& opts = {}, const Context& ctx = {});

}  // namespace upres
