// Device images on upres's stream-ordered memory pool (device_temp.hpp), for the Cuda backends'
// staging of host images and a pipeline's intermediates (internal; include only where
// UPRES_HAVE_CUDA). Unlike Image<T>(..., Location::Device), whose cudaMalloc / cudaFree cost tens
// of microseconds and make cudaFree wait for the whole device, these reuse the pool's memory
// from one call to the next and are freed in stream order.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <type_traits>

#include <upres/image.hpp>

#include "core/device_temp.hpp"

namespace upres::cuda {

template <class T>
class PooledImage {
  public:
    // A w x h image of c channels, rows packed, uninitialised; `what` names the allocation in an
    // OutOfMemory error.
    PooledImage(int w, int h, int c, void* stream, const char* what)
        : mem_(sizeof(T) * static_cast<std::size_t>(w) * h * c, static_cast<cudaStream_t>(stream),
               what),
          w_(w),
          h_(h),
          c_(c) {}

    ImageView<T> view() const {
        return ImageView<T>(mem_.as<T>(), w_, h_, c_, 0, Location::Device);
    }
    ImageView<const T> cview() const { return view(); }

  private:
    DeviceTemp mem_;
    int w_, h_, c_;
};

// The staging of a host view: a pooled device copy of it, uploaded on `stream`.
template <class T>
PooledImage<std::remove_const_t<T>> upload(ImageView<T> host, void* stream, const char* what) {
    PooledImage<std::remove_const_t<T>> d(host.width(), host.height(), host.channels(), stream,
                                          what);
    copy(ImageView<const std::remove_const_t<T>>(host), d.view(), stream);
    return d;
}

}  // namespace upres::cuda
