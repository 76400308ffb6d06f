// SEABI backends (internal). Arguments are validated by seabi.cpp; spans are host memory for
// the reference and CPU backends and device memory for the CUDA backend.
#pragma once

#include <cstdint>

#include <upres/seabi.hpp>
#include "core/span2d.hpp"

namespace upres::seabi {

SeabiStats run_reference(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                         const SeabiOptions& opts);
SeabiStats run_cpu(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                   const SeabiOptions& opts, int threads);
void tap_reference(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f);
void tap_cpu(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f, int threads);

#if UPRES_HAVE_CUDA
// Device spans; asynchronous on `stream` except that L-SEABI reads the l1 norm back each
// iteration (and every method reads the TV sum back once).
SeabiStats run_cuda(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                    const SeabiOptions& opts, void* stream);
void tap_cuda(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f, void* stream);
#endif

}  // namespace upres::seabi
