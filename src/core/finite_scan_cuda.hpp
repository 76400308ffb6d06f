// CUDA side of the non-finite scan (src/core/finite_scan_cuda.cu): the validation of device
// data that the B-spline prefilter's input and the warp's remap / flow fields need.
#pragma once

#include <cstdint>

#include "core/span2d.hpp"

namespace upres::cuda {

// Row-major element index (y * width * channels + x * channels + c) of the first non-finite
// value (NaN, +-inf) of a DEVICE span, or -1 if all are finite. One read of the data;
// synchronizes `stream`. Throws upres::Error(CudaError) on a CUDA failure.
std::int64_t find_nonfinite_device(Span2D<const float> src, void* stream);

}  // namespace upres::cuda
