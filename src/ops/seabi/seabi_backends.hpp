// SEABI backends (internal). Arguments are validated by seabi.cpp (opts.lattice is CoSited or
// Centered, never Auto); spans are host memory for
// the reference and CPU backends and device memory for the CUDA backend.
#pragma once

#include <cstddef>
#include <cstdint>

#include <upres/seabi.hpp>
#include "core/span2d.hpp"

namespace upres {

namespace ref {
SeabiStats seabi_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                          const SeabiOptions& opts);
void tap_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f,
                  bool centered);
}  // namespace ref

namespace cpu {
SeabiStats seabi_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                          const SeabiOptions& opts, int threads);
void tap_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f,
                  bool centered, int threads);

// Streaming (seabi_stream.cpp): a window of input rows [lo, hi) of a width x height image, and
// a window of output rows starting at output row lo (rows [2 r0, 2 r1) written).
struct SeabiRowsIn {
    const std::uint8_t* data;
    std::ptrdiff_t stride;
    int width, height, lo, hi;
    const std::uint8_t* row(int y) const { return data + (y - lo) * stride; }
};
struct SeabiRowsOut {
    std::uint8_t* data;
    std::ptrdiff_t stride;
    int width, height, lo;
    std::uint8_t* row(int y) const { return data + (y - lo) * stride; }
};
// R1's sum over one row (the row below it given; the last row is its own "below").
std::int64_t seabi_tv_rows(const std::uint8_t* row, const std::uint8_t* below, int w);
// L-SEAI or SIL-SEABI of input rows [r0, r1) (in pieces of stripe_rows, in parallel) with the
// threshold of (tv, tv_pixels): output rows [2 r0, 2 r1). The input window must hold rows
// [r0 - 6, r1 + 6) clipped to the image (the stripe halo of either lattice).
void seabi_stream_stripes(const SeabiRowsIn& in, const SeabiRowsOut& out, SeabiMethod method,
                          bool centered, std::int64_t tv, std::int64_t tv_pixels, int r0, int r1,
                          int stripe_rows, int threads);
}  // namespace cpu

namespace cuda {
// Device spans; asynchronous on `stream` except that L-SEABI reads the l1 norm back each
// iteration (and every method reads the TV sum back once). Defined in CUDA builds only.
SeabiStats seabi_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                          const SeabiOptions& opts, void* stream);
void tap_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f,
                  bool centered, void* stream);
}  // namespace cuda

}  // namespace upres
