// Internal backend entry points of upres::brisque: the MSCN coefficients of one gray scale and
// the sums of their five coefficient sets (brisque_math.hpp's Moments). brisque.cpp validates,
// converts to gray, halves, fits and scores.
#pragma once

#include "core/span2d.hpp"
#include "ops/brisque/brisque_math.hpp"

namespace upres::ref {
// The 2-D 7 x 7 window directly.
brisque_math::SetMoments brisque_moments(Span2D<const double> gray);
}  // namespace upres::ref

namespace upres::cpu {
// The separable window, OpenMP over rows; per-row sums added in row order (deterministic).
brisque_math::SetMoments brisque_moments(Span2D<const double> gray, int threads);
}  // namespace upres::cpu

namespace upres::brisque_math {
// The five sets' sums from the MSCN map m (w x h, rows of `stride`), rows [y0, y1): each set
// takes the pairs whose first (upper) row is in the range (brisque_ref / brisque_cpu share it).
SetMoments moments_of_rows(const double* m, int w, int h, std::ptrdiff_t stride, int y0, int y1);
}  // namespace upres::brisque_math
