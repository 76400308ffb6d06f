// Scan of host float data for non-finite values (NaN, +-inf): the validation that the warp's
// remap / flow fields and the B-spline prefilter's input need before any output is written.
#pragma once

#include <cstddef>
#include <cstdint>

namespace upres {

// Row-major index (y * row_elems + i) of the first non-finite float in `rows` rows of
// `row_elems` floats (row y at data + y * stride), or -1 when all are finite. The rows are split
// over `threads` OpenMP threads (0: all; small inputs run on one) and each row is tested with a
// branch-free bit test that the compiler vectorizes: one read of the data.
std::int64_t find_nonfinite_host(const float* data, std::ptrdiff_t row_elems, int rows,
                                 std::ptrdiff_t stride, int threads);

}  // namespace upres
