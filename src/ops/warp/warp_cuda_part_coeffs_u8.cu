// Part of the CUDA warp (warp_cuda_parts.hpp): float B-spline coefficients to u8 images, 1-4
// channels.
#include "ops/warp/warp_cuda_kernels.cuh"

UPRES_WARP_CUDA_PART(float, std::uint8_t, 1)
UPRES_WARP_CUDA_PART(float, std::uint8_t, 2)
UPRES_WARP_CUDA_PART(float, std::uint8_t, 3)
UPRES_WARP_CUDA_PART(float, std::uint8_t, 4)
