// Backends of upres colour conversion (src/ops/color). Arguments are validated by color.cpp;
// composite operations (super-resolution pipelines) may call these directly on views they
// have already checked. RawView carries the RGB pixel type; YCbCr / Y are always float.
//
// Reference: double per pixel, one thread. Cpu: float per pixel, rows over OpenMP threads.
// Cuda: float per pixel, one thread per pixel, asynchronous on `stream`.
// Cpu/Cuda vs Reference (measured in tests/ops/color_test.cpp): YCbCr within 1e-4 on the
// 8-bit scale, float RGB within 2e-6, integer RGB within 1 LSB (a rounding tie flipped by
// float rounding; rare).
#pragma once

#include <upres/image.hpp>

#include "core/span2d.hpp"

namespace upres {

namespace ref {
void rgb_to_ycbcr(const detail::RawView& rgb, Span2D<float> ycc);
void ycbcr_to_rgb(Span2D<const float> ycc, const detail::RawView& rgb);
void luma(const detail::RawView& img, Span2D<float> y);
}  // namespace ref

namespace cpu {
void rgb_to_ycbcr(const detail::RawView& rgb, Span2D<float> ycc, int threads);
void ycbcr_to_rgb(Span2D<const float> ycc, const detail::RawView& rgb, int threads);
void luma(const detail::RawView& img, Span2D<float> y, int threads);
}  // namespace cpu

namespace cuda {
// Device views only.
void rgb_to_ycbcr(const detail::RawView& rgb, Span2D<float> ycc, void* stream);
void ycbcr_to_rgb(Span2D<const float> ycc, const detail::RawView& rgb, void* stream);
void luma(const detail::RawView& img, Span2D<float> y, void* stream);
}  // namespace cuda

}  // namespace upres
