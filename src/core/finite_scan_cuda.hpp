// CUDA side of the non-finite scan (src/core/finite_scan_cuda.cu): the validation of device
// data that the B-spline prefilter's input and the warp's remap / flow fields need.
#pragma once

#include <cstdint>

#include "core/device_temp.hpp"
#include "core/span2d.hpp"

namespace upres::cuda {

// A device word into which kernels that meet non-finite values themselves report them, by
// atomicMin of a code (say, the value's row-major index): ~0 (none) from construction on, in
// `stream` order. read() copies it back and synchronizes `stream`. Throws upres::Error
// (OutOfMemory, CudaError) naming `what`.
class NonfiniteReport {
  public:
    NonfiniteReport(void* stream, const char* what);
    unsigned long long* device() const { return mem_.as<unsigned long long>(); }
    // The smallest code reported, or -1 if none.
    std::int64_t read() const;

  private:
    DeviceTemp mem_;
    void* stream_;
    const char* what_;
};

// Row-major element index (y * width * channels + x * channels + c) of the first non-finite
// value (NaN, +-inf) of a DEVICE span, or -1 if all are finite. One read of the data;
// synchronizes `stream`. Throws upres::Error(CudaError) on a CUDA failure.
std::int64_t find_nonfinite_device(Span2D<const float> src, void* stream);

}  // namespace upres::cuda
