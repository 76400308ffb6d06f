// The co-sited upscale pipeline's plane steps (upscale.cpp), written once for the host and the
// device: the luma plane rounded to 8 bits plus the chroma (and alpha) planes split out of a
// YCbCr image, and merged back. Internal header.
#pragma once

#include <cmath>
#include <cstdint>

#include "core/hd.hpp"
#include "core/span2d.hpp"

namespace upres::upscale_planes {

// Y on the 8-bit scale -> the u8 luma the SEABI family works on: rounded half to even (the
// default rounding mode's nearbyint), saturated to [0, 255].
UPRES_HD std::uint8_t luma_u8(float y) {
    const float v = rintf(y);
    return static_cast<std::uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v));
}

// Pixel x of row y: ycc (C channels) -> luma (1 channel, u8) and chroma (C - 1 channels).
UPRES_HD void split_pixel(const Span2D<const float>& ycc, const Span2D<std::uint8_t>& luma,
                          const Span2D<float>& chroma, int x, int y) {
    const float* s = ycc.row(y) + static_cast<std::ptrdiff_t>(x) * ycc.channels;
    luma.row(y)[x] = luma_u8(s[0]);
    float* c = chroma.row(y) + static_cast<std::ptrdiff_t>(x) * chroma.channels;
    for (int k = 1; k < ycc.channels; ++k) c[k - 1] = s[k];
}

// Pixel x of row y: luma (u8) and chroma (C - 1 channels) -> ycc (C channels).
UPRES_HD void merge_pixel(const Span2D<const std::uint8_t>& luma, const Span2D<const float>& chroma,
                          const Span2D<float>& ycc, int x, int y) {
    float* d = ycc.row(y) + static_cast<std::ptrdiff_t>(x) * ycc.channels;
    d[0] = static_cast<float>(luma.row(y)[x]);
    const float* c = chroma.row(y) + static_cast<std::ptrdiff_t>(x) * chroma.channels;
    for (int k = 1; k < ycc.channels; ++k) d[k] = c[k - 1];
}

}  // namespace upres::upscale_planes

namespace upres::cpu {
inline void split_ycc(Span2D<const float> ycc, Span2D<std::uint8_t> luma, Span2D<float> chroma) {
    for (int y = 0; y < ycc.height; ++y)
        for (int x = 0; x < ycc.width; ++x) upscale_planes::split_pixel(ycc, luma, chroma, x, y);
}
inline void merge_ycc(Span2D<const std::uint8_t> luma, Span2D<const float> chroma,
                      Span2D<float> ycc) {
    for (int y = 0; y < ycc.height; ++y)
        for (int x = 0; x < ycc.width; ++x) upscale_planes::merge_pixel(luma, chroma, ycc, x, y);
}
}  // namespace upres::cpu

namespace upres::cuda {
// DEVICE spans, asynchronous on `stream` (a cudaStream_t).
void split_ycc(Span2D<const float> ycc, Span2D<std::uint8_t> luma, Span2D<float> chroma,
               void* stream);
void merge_ycc(Span2D<const std::uint8_t> luma, Span2D<const float> chroma, Span2D<float> ycc,
               void* stream);
}  // namespace upres::cuda
