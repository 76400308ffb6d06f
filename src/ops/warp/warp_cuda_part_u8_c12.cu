// Part of the CUDA warp (warp_cuda_parts.hpp): u8 images, 1 and 2 channels.
#include "ops/warp/warp_cuda_kernels.cuh"

UPRES_WARP_CUDA_PART(std::uint8_t, std::uint8_t, 1)
UPRES_WARP_CUDA_PART(std::uint8_t, std::uint8_t, 2)
