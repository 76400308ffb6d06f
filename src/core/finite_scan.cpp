#include "core/finite_scan.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/parallel.hpp"

namespace upres {

namespace {

// True when a float of the row has all exponent bits set (NaN or infinite): adding 1 to the
// exponent field of such a value carries into bit 31, and of no other value.
bool row_has_nonfinite(const float* r, std::ptrdiff_t n) {
    std::uint32_t acc = 0;
    for (std::ptrdiff_t i = 0; i < n; ++i) {
        std::uint32_t b;
        std::memcpy(&b, r + i, sizeof(b));
        acc |= (b & 0x7f800000u) + 0x00800000u;
    }
    return (acc >> 31) != 0;
}

}  // namespace

std::int64_t find_nonfinite_host(const float* data, std::ptrdiff_t row_elems, int rows,
                                 std::ptrdiff_t stride, int threads) {
    if (rows <= 0 || row_elems <= 0) return -1;
    if (row_elems * rows < (std::ptrdiff_t{1} << 16)) threads = 1;
    constexpr int kBlock = 16;  // rows per task
    const int blocks = (rows + kBlock - 1) / kBlock;
    std::vector<int> first_bad(static_cast<std::size_t>(blocks), -1);
    parallel_for(0, blocks, threads, [&](int b) {
        const int y1 = std::min(rows, (b + 1) * kBlock);
        for (int y = b * kBlock; y < y1; ++y)
            if (row_has_nonfinite(data + y * stride, row_elems)) {
                first_bad[static_cast<std::size_t>(b)] = y;
                return;
            }
    });
    for (int y : first_bad)
        if (y >= 0) {
            const float* r = data + y * stride;
            for (std::ptrdiff_t i = 0; i < row_elems; ++i)
                if (!std::isfinite(r[i])) return std::int64_t{y} * row_elems + i;
        }
    return -1;
}

}  // namespace upres
