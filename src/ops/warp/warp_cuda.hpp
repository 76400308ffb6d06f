// CUDA-only entry points of upres::warp beyond warp_backends.hpp (include only where
// UPRES_HAVE_CUDA): the exact B-spline prefilter fused with the interpolation.
#pragma once

#include <cstdint>

#include "ops/warp/warp_backends.hpp"

namespace upres::cuda {

// Recursive fused path (float images, 1 channel, the exact IIR prefilter): one kernel per 64x64
// output tile gathers the tile's footprint plus kIirHalo = 12 samples on each side, runs the IIR's
// causal and anticausal recursions along its rows and then its columns in shared memory (started
// at the box's edges: the truncated tails weigh |z|^13, 1.7e-7 of the range per pass) and
// interpolates from there: one read of the image and one write of the output, ~3 operations per
// box sample and pass for the prefilter instead of 15 for the FIR15 taps. Same function as
// bspline_prefilter(IIR) followed by cuda::warp up to float rounding (CudaWarpRec tests). 2048^2,
// 30-degree rotation: 47.5 us against 76-78 us for the two passes on an H200 and on an H100
// (docs/ops/warp.md), 54 us since the two passes' prefilter runs on box tiles.
// Runs Affine and Resize plans, Interp::BSpline, exact mode, every border but Nearest (whose
// prefilter pads the image first), sources of 16 x 16 pixels or more, when the tile box fits
// 100 KB of shared memory; prefilter must be 0 (IIR).
bool warp_rec_supported(const WarpPlan& plan, int src_w, int src_h, int dst_w, int dst_h,
                        int channels, int prefilter);
// What warp.cpp asks: supported, plan.schedule Policy, a map that is not axis-aligned (m1 or m3
// non-zero: resizes take the prefilter + the separable interpolation of cuda::warp, measured
// faster: zoom x2 26.6 against 29.1 us, H200) and a tile box of at most 64 KB (the measured
// regime: rotations).
bool warp_rec_preferred(const WarpPlan& plan, int src_w, int src_h, int dst_w, int dst_h,
                        int channels, int prefilter);
// What the recursive fused path sets up for a plan (1 channel, IIR), for tests and experiments:
// the host bound of the tiles' input boxes (box_w x box_h samples, which sets the shared memory
// per block), the pitch, tap form and lane layout it picks, the blocks per SM that shared memory
// allows on the current device (at most 4, the register bound), and, over every 64 x 64 tile of
// the output, the widest and tallest box and how many exceed the bound (those tiles take the
// per-output fallback: correct, but with the taps read from global memory). False when
// !warp_rec_supported().
struct RecLayout {
    int box_w = 0, box_h = 0, pitch = 0, wide = 0, lanes_x = 0, blocks_per_sm = 0;
    int widest = 0, tallest = 0;
    long long tiles = 0, tiles_beyond_bound = 0;
};
bool warp_rec_layout(const WarpPlan& plan, int src_w, int src_h, int dst_w, int dst_h,
                     RecLayout& out);
// How the interpolation reads the taps from shared memory (tests and benchmarks force one):
// Auto the form with the fewest modelled bank conflicts for the plan (what upres::warp runs);
// otherwise the row form (Narrow: four 4-byte loads; Wide: two 8-byte loads and one 4-byte load,
// fewer wavefronts for some rotations) and the warp's outputs (32 x 1, 16 x 2 or 8 x 4). The two
// row forms give identical results; the layouts differ by float rounding of the coordinates
// (tests run all six).
enum class RecTapForm : int { Auto = -1, Narrow, Wide, Narrow16, Wide16, Narrow8, Wide8 };
// The order in which blocks take the 64 x 64 output tiles (same results): Auto, edges first along
// both axes; RowMajor; edges first (0, n - 1, 1, n - 2, ...) along x, y or both. Edges first
// puts the tiles whose boxes cross a side of the image (the slower gather) in the first wave and
// ends on interior tiles: 2048^2 rotation by 30 degrees 47.3 us against 48.4 us row-major on an
// H100.
enum class RecTileOrder : int { Auto = -1, RowMajor, EdgesFirstX, EdgesFirstY, EdgesFirstXY };
// src is the IMAGE (device memory), dst the output; asynchronous on `stream`. Throws
// ErrorCode::Internal when !warp_rec_supported(), InvalidArgument for a form or order out of
// range.
void warp_bspline_rec(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan,
                      int prefilter, void* stream, RecTapForm form = RecTapForm::Auto,
                      RecTileOrder order = RecTileOrder::Auto);

}  // namespace upres::cuda
