// Cubic B-spline prefilters (Champagnat & Le Sant 2011; Unser 1999; scipy.ndimage.spline_filter).
//
// Interpolating with the cubic B-spline needs coefficients c such that sampling the spline at
// the integers gives back the image: c = (1/6 [1 4 1])^-1 * image, applied along rows and
// columns. Two ways to compute it:
//   * exact recursive (IIR) filter, pole z = sqrt(3) - 2, gain 6, with the same boundary
//     start-ups as scipy.ndimage.spline_filter(order=3, mode=M):
//       Border::Mirror   -> M = 'mirror'    (= scipy 'wrap', 'constant', 'grid-constant')
//       Border::Reflect  -> M = 'reflect'   (= scipy 'grid-mirror', 'nearest')
//       Border::Nearest  -> M = 'nearest'   (scipy filters it with the reflect start-up)
//       Border::Wrap     -> M = 'grid-wrap' (periodic)
//       Border::Constant -> M = 'constant'  (scipy's prefilter for it is the mirror one)
//   * the paper's FIR approximation, eq. (6): b(k) = sqrt(3) (sqrt(3) - 2)^|k|, k = -K..K,
//     renormalised to sum 1, for an odd length 2K + 1 in 3..31, applied to the image extended
//     exactly as the IIR of the same Border extends it (mirror / reflect / periodic), so it
//     converges to the IIR for every Border (bound: fir_prefilter_error_bound).
// Works on float images with 1-4 interleaved channels (each channel filtered independently),
// in host memory (reference, cpu) or device memory (cuda); in place (src and dst the same
// view) is allowed. Results are run-to-run deterministic on every backend. The CPU and CUDA
// backends agree with the double reference within 2e-6 of the image's value range.
// docs/ops/bspline.md has the formulas, the kernels and the measured speed.
#pragma once

#include <string>
#include <vector>

#include <upres/context.hpp>
#include <upres/geometry.hpp>
#include <upres/image.hpp>

namespace upres {

// Default FIR length: the shortest whose result after the paper's 36 x 10-degree rotation test
// stays under one grey level (0..255) of the exact IIR result on our photos (baboon 0.22,
// butterfly 0.36; FIR15 gives 1.33 on butterfly). See docs/ops/bspline_paper.md.
inline constexpr int kDefaultFirLength = 17;
// The prefilter as users name it (the CLI's --prefilter, Python's prefilter=): "iir" -> 0 (exact),
// "fir" -> kDefaultFirLength, "firK" with K odd in 3..31 -> K. Error(InvalidArgument) listing
// the forms otherwise.
int parse_prefilter_name(const std::string& name);

// CUDA kernel families for the prefilter (ignored by the CPU backends). Auto picks the fastest
// measured variant for the filter; the others are the paper's variants, kept for comparison.
// Exact IIR (fir_length 0): Recursive or IirFused; FIR: FirShared or FirFused. A variant that
// does not compute the requested filter is an InvalidArgument error, on every backend.
enum class PrefilterVariant {
    Auto,
    Recursive,  // IIR, one thread per row / column (Ruijters & Thevenaz; the paper's baseline)
    FirShared,  // FIR rows through shared memory, columns with a rotating window (paper Fig. 5)
    FirFused,   // beyond the paper: rows and columns in one pass over the image (2-D tiles)
    // Beyond the paper, exact path, one pass over the image. 1 channel: the recursions on
    // overlapped 128 x 64 tiles in shared memory, each started 12 samples outside the outputs
    // it affects (start error at most 1.7e-7 of the range per pass, below float rounding of the
    // result). More channels: from 2^21 elements a warp-streaming kernel (causal + anticausal
    // sums in registers), below it the recursive filter on overlapped 2-D tiles; both start
    // 15-16 samples outside (|z|^16 = 7e-10). All start from the exact border extension. Lines
    // shorter than 32 samples run Recursive (scipy's reflect start-up differs from the exact
    // extension for very short lines).
    IirFused,
};
const char* to_string(PrefilterVariant v) noexcept;  // "auto", "recursive", "fir-shared", ...
PrefilterVariant parse_prefilter_variant(const std::string& name);
template <>
const EnumDesc& enum_desc<PrefilterVariant>() noexcept;

// Which axes the prefilter runs along. Both is the 2-D prefilter (scipy spline_filter); X or Y
// alone is the 1-D filter along rows or along columns (scipy spline_filter1d with axis=-1 or
// axis=0 of an (H, W) array). One axis runs the Recursive (IIR) or FirShared (FIR) kernels on
// CUDA (the fused variants filter both axes and are refused with X or Y).
enum class PrefilterAxes { Both, X, Y };
const char* to_string(PrefilterAxes a) noexcept;  // "both", "x", "y"
template <>
const EnumDesc& enum_desc<PrefilterAxes>() noexcept;

struct PrefilterOptions {
    Border border = Border::Mirror;
    int fir_length = 0;  // 0: exact IIR; odd 3..31: the paper's FIR filter with that many taps
    PrefilterVariant variant = PrefilterVariant::Auto;
    PrefilterAxes axes = PrefilterAxes::Both;
};

// Computes B-spline coefficients of src into dst (same size and channel count).
// Throws Error(InvalidArgument) for even or out-of-range FIR lengths, a variant that does not
// compute the requested filter, empty images, mismatched sizes or channels, src and dst in
// different memory or partially overlapping, and non-finite pixels (the message names the
// first one). The backend follows upres::Context (resolve_backend rules; Cuda with host data
// stages through device memory). Device data: asynchronous on ctx.cuda_stream, except for the
// non-finite scan, which synchronizes the stream.
void bspline_prefilter(ImageView<const float> src, ImageView<float> dst,
                       const PrefilterOptions& opts = {}, const Context& ctx = {});

// The 2K+1 taps of the paper's renormalised FIR prefilter (index 0 is k = -K).
std::vector<double> fir_prefilter_taps(int fir_length);

// Upper bound of max |FIR - IIR| over the 2-D prefilter of an image with values in [0, 1]
// (scale by the value range otherwise); see docs/ops/bspline.md for the derivation.
double fir_prefilter_error_bound(int fir_length);

// Smallest odd FIR length in 3..31 whose prefilter, on a unit-range signal, differs from the
// exact IIR result by at most `max_abs_error` (bound from the truncated tail, see
// docs/ops/bspline.md). Throws if no length reaches it.
int fir_length_for_accuracy(double max_abs_error);

}  // namespace upres
