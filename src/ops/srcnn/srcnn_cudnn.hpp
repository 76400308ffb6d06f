// The SRCNN `cudnn` per-layer variant (srcnn_cudnn.cu), used by the CUDA engine (srcnn_cuda.cu).
// Built when CMake finds cudnn.h (UPRES_WITH_CUDNN, UPRES_HAVE_CUDNN); libcudnn.so.9 is never
// linked: it is loaded with dlopen on first use, so binaries start without it and the variant
// then reports why it is unavailable. Without UPRES_HAVE_CUDNN the functions below are stubs.
#pragma once

#include <cstddef>
#include <string>

#include <upres/srcnn.hpp>

namespace upres::srcnn::cuda {

// Empty when the cudnn variant can run in this process; otherwise why not ("this build of upres
// has no cuDNN", or the library that could not be loaded and how to make it visible). The load
// is attempted once per process.
const std::string& cudnn_unavailable_reason();

// True if the variant runs at this precision (fp32: FMA math, no TF32; tf32: tensor cores).
bool cudnn_supports(SrcnnPrecision p) noexcept;

// One layer on the device: in has cin planes of w x h fp32 (row stride in_row, plane stride
// in_plane elements), out cout planes (row stride out_row, plane stride out_plane); weights OIHW
// and bias fp32 in device memory. Replicate borders (a padded copy of the input is made first),
// bias and ReLU fused. Asynchronous on `stream`, except the first call for a shape, which picks
// the algorithm with cudnnFindConvolutionForwardAlgorithm. Errors: BackendUnavailable (see
// above), InvalidArgument (precision), CudaError (a cuDNN status, with cudnnGetErrorString).
void cudnn_conv_layer(const float* in, std::ptrdiff_t in_row, std::ptrdiff_t in_plane, float* out,
                      std::ptrdiff_t out_row, std::ptrdiff_t out_plane, int w, int h, int cin,
                      int cout, int k, const float* weights, const float* bias, bool relu,
                      SrcnnPrecision p, void* stream);

// Frees the handles, descriptors and workspaces (also done at exit).
void cudnn_release() noexcept;

}  // namespace upres::srcnn::cuda
