// Part of the CUDA warp (warp_cuda_parts.hpp): float images, 3 channels.
#include "ops/warp/warp_cuda_kernels.cuh"

UPRES_WARP_CUDA_PART(float, float, 3)
