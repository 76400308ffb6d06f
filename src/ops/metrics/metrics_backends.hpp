// Backends of upres metrics (src/ops/metrics). They work on one double plane per compared
// channel (metrics.cpp extracts Y or the channels after shaving and validation).
//
// Reference (metrics_ref.cpp): direct loops, the 11 x 11 window summed per pixel. Cpu
// (metrics_cpu.cpp): separable filtering, rows over OpenMP threads, per-row partial sums added
// in row order (run-to-run deterministic). Cpu vs Reference: within 1e-10 (summation order
// only; measured <= 3.5e-13 in tests/ops/metrics_test.cpp).
#pragma once

#include "core/span2d.hpp"

namespace upres {

using Plane = Span2D<const double>;  // channels == 1

namespace ref {
// Sum over pixels of (a - b)^2.
double sum_squared_error(Plane a, Plane b);
// The full SSIM map (scikit-image's `full=True` S), same size as a.
void ssim_map(Plane a, Plane b, double data_range, Span2D<double> out);
// Mean of the SSIM map over pixels at least kSsimRadius from every border (needs >= 11 x 11).
double ssim_mean(Plane a, Plane b, double data_range);
}  // namespace ref

namespace cpu {
double sum_squared_error(Plane a, Plane b, int threads);
void ssim_map(Plane a, Plane b, double data_range, Span2D<double> out, int threads);
double ssim_mean(Plane a, Plane b, double data_range, int threads);
}  // namespace cpu

}  // namespace upres
