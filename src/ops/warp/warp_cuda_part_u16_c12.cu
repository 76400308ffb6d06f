// Part of the CUDA warp (warp_cuda_parts.hpp): u16 images, 1 and 2 channels.
#include "ops/warp/warp_cuda_kernels.cuh"

UPRES_WARP_CUDA_PART(std::uint16_t, std::uint16_t, 1)
UPRES_WARP_CUDA_PART(std::uint16_t, std::uint16_t, 2)
