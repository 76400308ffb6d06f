// The upscale pipelines' plane steps, written once for the host and the device: the co-sited
// pipeline's (upscale.cpp) luma plane rounded to 8 bits plus the chroma (and alpha) planes split
// out of a YCbCr image, and merged back; the video frames' (upscale_yuv.cpp) change of depth to
// the 16-bit scale and back. Internal header.
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

// Samples of `bits` bits (maximum maxv) <-> the 16-bit scale, rounded to nearest: an exact
// round trip, so deeper video frames run through the u16 methods and come back unchanged where
// the method keeps them. Samples above maxv are taken as maxv.
UPRES_HD std::uint16_t to16(std::uint32_t v, std::uint32_t maxv) {
    v = v < maxv ? v : maxv;
    return static_cast<std::uint16_t>((v * 65535u + maxv / 2) / maxv);
}
UPRES_HD std::uint16_t from16(std::uint32_t v, std::uint32_t maxv) {
    return static_cast<std::uint16_t>((v * maxv + 32767u) / 65535u);
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
// Video planes of maxv = 2^bits - 1 on the device: to the 16-bit scale (to16), back (from16),
// and clamped to maxv in place.
void widen_depth(Span2D<const std::uint16_t> in, Span2D<std::uint16_t> out, std::uint32_t maxv,
                 void* stream);
void narrow_depth(Span2D<const std::uint16_t> in, Span2D<std::uint16_t> out, std::uint32_t maxv,
                  void* stream);
void clamp_depth(Span2D<std::uint16_t> plane, std::uint16_t maxv, void* stream);
}  // namespace upres::cuda
