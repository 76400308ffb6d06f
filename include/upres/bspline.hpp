// Cubic B-spline prefilters (Champagnat & Le Sant 2011; Unser 1999; scipy.ndimage.spline_filter).
//
// Interpolating with the cubic B-spline needs coefficients c such that sampling the spline at
// the integers gives back the image: c = (1/6 [1 4 1])^-1 * image, applied along rows, then
// columns. Two ways to compute it:
//   * exact recursive (IIR) filter, pole z = sqrt(3) - 2, with the same boundary start-up as
//     scipy.ndimage.spline_filter(order=3, mode=...) for every Border;
//   * the paper's FIR approximation, eq. (6): b(k) = sqrt(3) (sqrt(3) - 2)^|k|, k = -K..K,
//     renormalised to sum 1, for an odd length 2K + 1 in 3..31; borders as in upres::Border.
// Works on float images with 1-4 channels (each channel filtered independently); in place
// (src and dst the same view) is allowed.
#pragma once

#include <vector>

#include <upres/context.hpp>
#include <upres/geometry.hpp>
#include <upres/image.hpp>

namespace upres {

inline constexpr int kDefaultFirLength = 15;

// CUDA kernel families for the prefilter (ignored by the CPU backends). Auto picks the fastest
// measured variant for the filter; the others are the paper's variants, kept for comparison.
enum class PrefilterVariant {
    Auto,
    Recursive,  // IIR, one thread per row / column (Ruijters & Thevenaz; the paper's baseline)
    FirShared,  // FIR rows through shared memory, columns with a rotating window (paper Fig. 5)
    FirFused,   // beyond the paper: rows and columns in one pass over the image
};

struct PrefilterOptions {
    Border border = Border::Mirror;
    int fir_length = 0;  // 0: exact IIR; odd 3..31: the paper's FIR filter with that many taps
    PrefilterVariant variant = PrefilterVariant::Auto;
};

// Computes B-spline coefficients of src into dst (same size and channel count).
// Throws Error(InvalidArgument) for even or out-of-range FIR lengths, empty images, mismatched
// sizes or non-finite pixels.
void bspline_prefilter(ImageView<const float> src, ImageView<float> dst,
                       const PrefilterOptions& opts = {}, const Context& ctx = {});

// The 2K+1 taps of the paper's renormalised FIR prefilter (index 0 is k = -K).
std::vector<double> fir_prefilter_taps(int fir_length);

// Smallest odd FIR length in 3..31 whose prefilter, on a unit-range signal, differs from the
// exact IIR result by at most `max_abs_error` (bound from the truncated tail, see
// docs/ops/bspline.md). Throws if no length reaches it.
int fir_length_for_accuracy(double max_abs_error);

}  // namespace upres
