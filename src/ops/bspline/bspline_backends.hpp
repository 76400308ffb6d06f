// INTERFACE READY
//
// Internal backend entry points of the cubic B-spline prefilter (upres::bspline_prefilter).
// Composite operations (warp, super-resolution) call these directly so data stays where it is
// and arguments are validated once, by the caller. No validation happens here: the caller
// guarantees equal sizes/channels (1-4), a non-empty image, finite pixels, fir_length 0 or odd
// 3..31. src and dst may be the same view (in place); other overlaps are not allowed.
//
// Spans: Span2D built with span_of(view) (src/core/span2d.hpp); stride in elements.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include <upres/bspline.hpp>

#include "core/span2d.hpp"

namespace upres::ref {
// Double-precision reference (scalar, slow on purpose): rows, then columns, scipy's start-up.
void bspline_prefilter(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts);
// One line of n samples at data[i * step], in place, in double precision. fir_length 0: exact
// IIR with scipy.ndimage's start-up for `border`; odd 3..31: the renormalised FIR.
void bspline_prefilter_line(double* data, int n, std::ptrdiff_t step, Border border,
                            int fir_length);
}  // namespace upres::ref

namespace upres::cpu {
// Optimized CPU backend (OpenMP, float). threads: 0 = OpenMP default.
void bspline_prefilter(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts,
                       int threads);

// A band of rows, or a box, cut out of a larger image (tiled execution,
// src/ops/warp/warp_tiled.cpp and warp_box.cpp): an open end is a cut, not the image's edge.
// There the recursions across it (the column recursions at the top and the bottom, the row
// recursions at the left and the right) start as if the band were reflected (any start would
// do: its effect decays as |z|^k, z = sqrt(3) - 2), and the caller keeps only the samples at
// least kBandWarmup rows or columns away from an open end. Those are bit-identical to the whole
// image's when the band starts at a multiple of kBandAlign rows (the row pass groups 8 rows;
// the ISA path of a row depends on its group) and ends at one or at the image's end, and (left
// and right cuts) starts at a multiple of kBoxAlignX columns and ends at one or at the image's
// end (the column pass's strips of 64 floats then coincide with the whole image's; a partial
// strip takes another ISA path): the float recursions started anywhere else have met the whole
// image's exactly long before (|z|^64 = 3e-37; a residual last-bit difference survives a step
// with probability < 0.3). The FIR filters need only fir_length / 2 samples.
struct BandEnds {
    bool open_top = false, open_bottom = false;
    bool open_left = false, open_right = false;
};
inline constexpr int kBandWarmup = 64;
inline constexpr int kBandAlign = 8;
inline constexpr int kBoxAlignX = 64;
// The rows [a, b) of an image of h rows that its band [y0, y1) is prefiltered with: `warm` more
// at each end that is not the image's, a at a multiple of kBandAlign and b at one or at the
// image's end (the conditions above for the whole image's bits).
inline std::pair<int, int> prefilter_band_span(int h, int warm, int y0, int y1) {
    return {std::max(0, y0 - warm) / kBandAlign * kBandAlign,
            std::min(h, (y1 + warm + kBandAlign - 1) / kBandAlign * kBandAlign)};
}
// The CUDA prefilter's bands (cuda::PrefilterBandPlan below) are cut in units of at most this
// many rows (64-row tiles, or streaming segments of at most 256 rows): a band of the cuda backend
// reads at most 2 units beyond its taps at a cut end, whatever the device.
inline constexpr int kCudaMaxBandUnit = 256;
// The same across columns: [a, b) of w columns for a box's columns [x0, x1).
inline std::pair<int, int> prefilter_box_columns(int w, int warm, int x0, int x1) {
    return {std::max(0, x0 - warm) / kBoxAlignX * kBoxAlignX,
            std::min(w, (x1 + warm + kBoxAlignX - 1) / kBoxAlignX * kBoxAlignX)};
}
void bspline_prefilter_band(Span2D<const float> src, Span2D<float> dst,
                            const PrefilterOptions& opts, int threads, BandEnds ends);
}  // namespace upres::cpu

namespace upres::cuda {
// CUDA backend. src and dst are DEVICE spans. Asynchronous on `stream` (a cudaStream_t;
// nullptr = default stream); may allocate a temporary device buffer (freed before returning,
// stream-ordered). opts.variant picks the kernel family (Auto: fastest for the filter).
// Throws upres::Error(CudaError) on launch failure.
void bspline_prefilter(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts,
                       void* stream);
// Benchmarks only (paper Table 2): runs just the row pass (pass 0, src -> dst) or just the
// column pass (pass 1, src -> dst; in place for Recursive) of the Recursive or FirShared
// variant. Other variants throw Error(InvalidArgument).
void bspline_prefilter_pass(Span2D<const float> src, Span2D<float> dst,
                            const PrefilterOptions& opts, int pass, void* stream);
// The kernels of FirFused / IirFused (docs/ops/bspline.md, section 5): Auto what
// bspline_prefilter runs (exact: Box for 1 channel from 32 x 32, else Stream from 2^21 elements,
// else Tile; FIR: FirRec for 1 channel, FIR 17..31 and 2^23 samples or more, else Tile); Tile the
// 2-D tile kernels; Stream the warp-streaming kernels (a cp.async ring per warp); FirRec the
// recursive-sum tiles (1 channel; the exact filter as its taps truncated at 15); Box the exact
// filter's recursions on 128 x 64 tiles in shared memory (bspline_iir_box.cuh; 1 channel, 32 x 32
// or more).
enum class FusedKernel { Auto, Tile, Stream, FirRec, Box };
// Benchmarks and tests only: FirFused / IirFused (opts.variant) on the forced kernel. seg: rows
// per warp segment of Stream (0: automatic; other kernels take 0). Throws
// Error(InvalidArgument) when the kernel cannot run the case (a variant other than the fused
// one of the filter, lines under 32 samples for the exact filter, FirRec on several channels, Box
// on a FIR or several channels or under 32 x 32): nothing else runs in its place.
void bspline_prefilter_forced(Span2D<const float> src, Span2D<float> dst,
                              const PrefilterOptions& opts, FusedKernel kernel, int seg,
                              void* stream);
// CUDA bands of rows (warp_tiled): the kernel bspline_prefilter runs on the whole w x h x c image
// and the rows its tiles or segments are cut in (unit; 0: the whole image is one band, as where a
// side is under 32 samples). A band of rows [a, b) of the image (a a multiple of unit, b one or
// h) prefiltered by bspline_prefilter_band with the plan holds the whole call's coefficients, bit
// for bit, in every unit but its first (when a > 0) and its last (when b < h): each unit reads at
// most kMaxFirRadius + 1 = 16 rows beyond its own (the recursions' warm-up, the FIR's radius),
// and a unit has at least 32 rows.
struct PrefilterBandPlan {
    FusedKernel kernel = FusedKernel::Auto;
    int seg = 0;   // Stream: rows per warp segment (the whole image's)
    int unit = 0;  // rows per tile or segment; 0: no bands
    // Columns (pixels) per tile or warp strip: a box of the image whose first column is a
    // multiple of it meets the kernel's tiles where the whole image does (0: no bands).
    int unit_x = 0;
    // any_device: unit is only a bound (the streaming kernel's segments depend on the device's
    // SM count: at most cpu::kCudaMaxBandUnit rows on any device); seg is then 0.
    bool unit_is_bound = false;
};
// any_device: the plan without a device (warp_source_box on a client with no GPU), for boxes
// that must hold every device's units; not for running the prefilter.
PrefilterBandPlan prefilter_band_plan(int w, int h, int c, const PrefilterOptions& opts,
                                      bool any_device = false);
void bspline_prefilter_band(Span2D<const float> src, Span2D<float> dst,
                            const PrefilterOptions& opts, const PrefilterBandPlan& plan,
                            void* stream);
}  // namespace upres::cuda
