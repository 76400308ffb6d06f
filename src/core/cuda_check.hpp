// CUDA error checking. Every runtime call goes through UPRES_CUDA_CHECK and every kernel launch
// is followed by UPRES_CUDA_CHECK_LAUNCH(); both convert failures into upres::Error where they
// happen, naming the call, file and line. Internal header; include only where UPRES_HAVE_CUDA.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include <upres/error.hpp>

namespace upres::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t err, const char* expr, const char* file, int line);

}  // namespace upres::cuda

#define UPRES_CUDA_CHECK(expr)                                                      \
    do {                                                                            \
        cudaError_t upres_err_ = (expr);                                            \
        if (upres_err_ != cudaSuccess)                                              \
            ::upres::cuda::throw_cuda_error(upres_err_, #expr, __FILE__, __LINE__); \
    } while (0)

#define UPRES_CUDA_CHECK_LAUNCH() UPRES_CUDA_CHECK(cudaGetLastError())
