// The CUDA warp's kernels, compiled in parts: one translation unit per (source type, output
// type, channel count) group, src/ops/warp/warp_cuda_part_*.cu, so a parallel build does not
// wait on one long nvcc run (the kernels of warp_cuda_kernels.cuh took ~7-9 minutes as one
// unit). warp_cuda.cu dispatches the public cuda::warp() calls here by channel count.
#pragma once

#include <cstdint>

#include "ops/warp/warp_backends.hpp"

namespace upres::cuda {

// Runs `plan` from src into dst (C channels each) on `stream`; defined only for the
// specializations declared below, each in one part.
template <class S, class D, int C>
void warp_part(Span2D<const S> src, Span2D<D> dst, const WarpPlan& plan, void* stream);

#define UPRES_WARP_CUDA_PART_DECL(S, D, C)                                            \
    template <>                                                                       \
    void warp_part<S, D, C>(Span2D<const S> src, Span2D<D> dst, const WarpPlan& plan, \
                            void* stream);
#define UPRES_WARP_CUDA_PART_DECL4(S, D) \
    UPRES_WARP_CUDA_PART_DECL(S, D, 1)   \
    UPRES_WARP_CUDA_PART_DECL(S, D, 2)   \
    UPRES_WARP_CUDA_PART_DECL(S, D, 3)   \
    UPRES_WARP_CUDA_PART_DECL(S, D, 4)

UPRES_WARP_CUDA_PART_DECL4(std::uint8_t, std::uint8_t)
UPRES_WARP_CUDA_PART_DECL4(std::uint16_t, std::uint16_t)
UPRES_WARP_CUDA_PART_DECL4(float, float)
UPRES_WARP_CUDA_PART_DECL4(float, std::uint8_t)   // B-spline coefficients -> u8 image
UPRES_WARP_CUDA_PART_DECL4(float, std::uint16_t)  // B-spline coefficients -> u16 image

#undef UPRES_WARP_CUDA_PART_DECL4
#undef UPRES_WARP_CUDA_PART_DECL

}  // namespace upres::cuda
