// Colour conversion: RGB <-> YCbCr after ITU-R BT.601, studio range, as MATLAB's rgb2ycbcr and
// scikit-image's skimage.color.rgb2ycbcr (the convention of super-resolution papers):
//
//   with R, G, B in [0, 1] (u8 / 255, u16 / 65535, float as is):
//   Y  =  16 +  65.481 R + 128.553 G +  24.966 B      in [16, 235]
//   Cb = 128 -  37.797 R -  74.203 G + 112.0   B      in [16, 240]
//   Cr = 128 + 112.0   R -  93.786 G -  18.214 B
//
// YCbCr is always float on the 8-bit scale above, whatever the RGB type; it is not rounded.
// ycbcr_to_rgb is the exact inverse and rounds/saturates to integer types (float RGB in
// [0, 1], unclamped). Images with 4 channels keep alpha untouched through rgb_to_ycbcr (4th
// channel of the output holds alpha on the [0, 1] scale * 255) — see docs/conventions.md.
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
// image is treated as gray: Y = 16 + 219 * v (v normalised to [0, 1]).
Image<float> luma(ImageView<const std::uint8_t> img, const Context& ctx = {});
Image<float> luma(ImageView<const std::uint16_t> img, const Context& ctx = {});
Image<float> luma(ImageView<const float> img, const Context& ctx = {});

}  // namespace upres
