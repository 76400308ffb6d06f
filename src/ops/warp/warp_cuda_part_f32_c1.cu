// Part of the CUDA warp (warp_cuda_parts.hpp): float images, 1 channel.
#include "ops/warp/warp_cuda_kernels.cuh"

UPRES_WARP_CUDA_PART(float, float, 1)
