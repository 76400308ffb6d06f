// Colour conversion: RGB <-> YCbCr after ITU-R BT.601, studio range, as MATLAB's rgb2ycbcr and
// scikit-image's skimage.color.rgb2ycbcr / ycbcr2rgb (the convention of super-resolution
// papers):
//
//   with R, G, B in [0, 1] (u8 / 255, u16 / 65535, float as is):
//   Y  =  16 +  65.481 R + 128.553 G +  24.966 B      in [16, 235]
//   Cb = 128 -  37.797 R -  74.203 G + 112.0   B      in [16, 240]
//   Cr = 128 + 112.0   R -  93.786 G -  18.214 B
//
// YCbCr is always float on the 8-bit scale above, whatever the RGB type; it is not rounded.
// ycbcr_to_rgb applies numpy.linalg.inv of that matrix (as scikit-image) and rounds half to
// even / saturates to integer types (float RGB in [0, 1], unclamped; NaN -> 0 for integers).
// Alpha: with 4 channels the 4th is alpha, carried on the same 8-bit scale as YCbCr
// (a_ycc = 255 * a / max, float), and mapped back exactly by ycbcr_to_rgb, so an RGBA u8/u16
// image survives the round trip unchanged. luma() ignores alpha.
//
// Channels: rgb_to_ycbcr / ycbcr_to_rgb take 3 or 4 channels, the destination has the same
// size and channel count; luma() also takes 1 channel (gray, Y = 16 + 219 v) and writes 1.
// Errors (upres::Error, InvalidArgument): empty image, other channel counts, a size/channel
// mismatch, source and destination in different memory (host vs device).
//
// Backends (Context::backend): Reference (double), Cpu (float, OpenMP over rows), Cuda (float,
// one thread per pixel; device views run in place, host views are staged through the device).
// Cpu/Cuda agree with Reference within 1e-4 on the YCbCr 8-bit scale, 2e-6 for float RGB and
// 1 LSB for integer RGB (a rounding tie flipped by float rounding). The reference matches
// scikit-image 0.19 to float32 precision (tests/data/color, tools/golden/gen_metrics.py).
// Deterministic (no reductions).
#pragma once

#include <upres/context.hpp>
#include <upres/image.hpp>

namespace upres {

// rgb: 3 or 4 channels of u8/u16/f32; ycbcr: float, same size and channel count.
void rgb_to_ycbcr(ImageView<const std::uint8_t> rgb, ImageView<float> ycbcr,
                  const Context& ctx = {});
void rgb_to_ycbcr(ImageView<const std::uint16_t> rgb, ImageView<float> ycbcr,
                  const Context& ctx = {});
void rgb_to_ycbcr(ImageView<const float> rgb, ImageView<float> ycbcr, const Context& ctx = {});

void ycbcr_to_rgb(ImageView<const float> ycbcr, ImageView<std::uint8_t> rgb,
                  const Context& ctx = {});
void ycbcr_to_rgb(ImageView<const float> ycbcr, ImageView<std::uint16_t> rgb,
                  const Context& ctx = {});
void ycbcr_to_rgb(ImageView<const float> ycbcr, ImageView<float> rgb, const Context& ctx = {});

// Y only (1-channel float on the [16, 235] scale) of a 3/4-channel RGB image; a 1-channel
// image is treated as gray: Y = 16 + 219 * v (v normalised to [0, 1]). The view form writes
// into y (1 channel, same size and place); the other returns a new image where img lives.
void luma(ImageView<const std::uint8_t> img, ImageView<float> y, const Context& ctx = {});
void luma(ImageView<const std::uint16_t> img, ImageView<float> y, const Context& ctx = {});
void luma(ImageView<const float> img, ImageView<float> y, const Context& ctx = {});
Image<float> luma(ImageView<const std::uint8_t> img, const Context& ctx = {});
Image<float> luma(ImageView<const std::uint16_t> img, const Context& ctx = {});
Image<float> luma(ImageView<const float> img, const Context& ctx = {});

}  // namespace upres
