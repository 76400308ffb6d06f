// SEABI CUDA backend internals shared with bench/seabi_bench.cpp (which times the kernels
// alone, with a workspace allocated once, as the paper does). Include only where
// UPRES_HAVE_CUDA.
#pragma once

#include <cstddef>
#include <cstdint>

#include <upres/seabi.hpp>
#include "core/span2d.hpp"

namespace upres::seabi {

// Device bytes run_cuda_ws needs for a w x h input.
std::size_t cuda_workspace_bytes(int w, int h, SeabiMethod m);

// Runs SEABI on device spans with a caller-owned device workspace of cuda_workspace_bytes.
// With want_stats false and method L-SEAI / SIL-SEABI it is fully asynchronous on `stream`
// (4 kernel launches for SIL-SEABI, no host round trip) and returns zeroed stats; L-SEABI
// always reads each iteration's l1 norm back.
// tv >= 0: use this total variation over tv_pixels pixels for the threshold instead of the
// input's own (the streaming engine's windows: the whole image's threshold).
SeabiStats run_cuda_ws(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                       const SeabiOptions& opts, void* workspace, bool want_stats, void* stream,
                       std::int64_t tv = -1, std::int64_t tv_pixels = 0);

}  // namespace upres::seabi
