// Part of the CUDA warp (warp_cuda_parts.hpp): u8 images, 3 and 4 channels.
#include "ops/warp/warp_cuda_kernels.cuh"

UPRES_WARP_CUDA_PART(std::uint8_t, std::uint8_t, 3)
UPRES_WARP_CUDA_PART(std::uint8_t, std::uint8_t, 4)
