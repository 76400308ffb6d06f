// SEABI backends (internal). Arguments are validated by seabi.cpp (opts.lattice is CoSited or
// Centered, never Auto); spans are host memory for
// the reference and CPU backends and device memory for the CUDA backend.
#pragma once

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
