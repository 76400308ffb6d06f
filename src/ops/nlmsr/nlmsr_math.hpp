// The NLM fusion's formulas, written once for every backend (upres/nlmsr.hpp;
// docs/ops/nlmsr.md): the border rule of patch reads, the candidate rule of the search window,
// the weight of a mean squared patch distance.
#pragma once

#include <cmath>

#include "core/hd.hpp"

namespace upres::nlmsr {

// Largest sides (odd) and frame count the backends take.
inline constexpr int kMaxPatch = 31, kMaxSearch = 41, kMaxFrames = 64;

// Patch pixels outside the image are read at the nearest edge pixel.
UPRES_HD int clamp_index(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// A search offset is a candidate when the pixel it points at is inside the image.
UPRES_HD bool candidate(int x, int y, int w, int h) { return x >= 0 && x < w && y >= 0 && y < h; }

// w = exp(-D / (2 sigma^2)) with D the mean squared patch difference; `neg_inv` is
// -1 / (2 sigma^2 patch^2), applied to the patch's sum of squares. Float on every fast backend;
// the reference evaluates the same expression in double.
template <class F>
UPRES_HD F weight(F sum_sq, F neg_inv) {
    return exp(sum_sq * neg_inv);
}

// Where every weight underflows (all patches more than ~9 sigma apart, RMS) the pixel keeps the
// estimate: the result of num / den with den below this.
inline constexpr float kMinWeightSum = 1e-30f;

}  // namespace upres::nlmsr
