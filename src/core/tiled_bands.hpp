// What every tiled operation (upres/tiled.hpp) does the same way: its argument checks, the band
// buffers, the band height chosen from the memory budget, and the scan of a band for values the
// whole image's IIR prefilter would spread over every row of their column.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/rows.hpp>
#include <upres/tiled.hpp>

#include "core/finite_scan.hpp"

namespace upres::tiled {

[[noreturn]] inline void fail(const char* op, const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(op) + ": " + msg);
}

inline void check_side(const char* op, long long v, const char* what) {
    if (v < 1 || v > kMaxTiledDimension)
        fail(op, std::string(what) + " " + std::to_string(v) + " is outside [1, " +
                     std::to_string(kMaxTiledDimension) + "]");
}

// The source's sides and channels, the output's sides, TiledOptions and the backend (cpu or
// auto; `cuda`: the operation also tiles on the cuda backend).
inline void check_call(const char* op, const RowSource& src, int out_width, int out_height,
                       const TiledOptions& to, const Context& ctx, bool cuda = false) {
    check_side(op, src.width(), "the source width");
    check_side(op, src.height(), "the source height");
    check_side(op, out_width, "the output width");
    check_side(op, out_height, "the output height");
    if (src.channels() < 1 || src.channels() > 4)
        fail(op,
             "the source has " + std::to_string(src.channels()) + " channels (allowed: 1 to 4)");
    if (to.band_rows < 0 || to.band_rows > out_height)
        fail(op, "band_rows " + std::to_string(to.band_rows) + " is outside [0, " +
                     std::to_string(out_height) + "] (the output's rows; 0: automatic)");
    if (to.max_band_rows < 0 || to.band_align < 1)
        fail(op, "max_band_rows must be >= 0 and band_align >= 1");
    if (to.first_row < 0 || to.first_row > out_height)
        fail(op, "first_row " + std::to_string(to.first_row) + " is outside [0, " +
                     std::to_string(out_height) + "]");
    if (to.last_row != 0 && (to.last_row < to.first_row || to.last_row > out_height))
        fail(op, "last_row " + std::to_string(to.last_row) + " is outside [first_row " +
                     std::to_string(to.first_row) + ", " + std::to_string(out_height) +
                     "] (0: the output's end)");
    if (ctx.backend == Backend::Cuda && cuda) return;
    if (ctx.backend != Backend::Auto && ctx.backend != Backend::Cpu)
        fail(op, std::string("tiled execution runs the ") +
                     (cuda ? "cpu and cuda backends" : "cpu backend") + ", not " +
                     to_string(ctx.backend) + " (the whole-image call runs every backend)");
    if (!to.devices.empty())
        fail(op,
             std::string("devices name GPUs for the cuda backend, not ") + to_string(ctx.backend));
}

// The end of the output rows a call computes: TiledOptions::last_row, 0 for the output's end.
inline int end_row(const TiledOptions& to, int out_height) {
    return to.last_row > 0 ? to.last_row : out_height;
}

// A range of output rows [y0, y1) inside [0, out_height], non-empty.
inline void check_range(const char* op, int out_height, int y0, int y1) {
    if (y0 < 0 || y1 <= y0 || y1 > out_height)
        fail(op, "output rows [" + std::to_string(y0) + ", " + std::to_string(y1) +
                     ") are not a non-empty range inside [0, " + std::to_string(out_height) + ")");
}

// Host buffer of `rows` rows of `row` elements (no side limit, unlike Image). Not
// zero-filled: every element is written before it is read (std::vector's zero-filling was a
// memset of every buffer, 2.7 % of a one-band 8192^2 u16 zoom's profile).
template <class T>
struct Rows {
    struct Buffer {
        std::unique_ptr<T[]> p;
        std::size_t n = 0;
        T* data() const noexcept { return p.get(); }
        std::size_t capacity() const noexcept { return n; }
    } buf;
    std::ptrdiff_t row = 0;
    void reset(int rows, std::ptrdiff_t elems) {
        row = elems;
        const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(elems);
        if (n > buf.n) {  // exactly n
            buf.p.reset();
            buf.p = std::make_unique_for_overwrite<T[]>(n);
            buf.n = n;
        }
    }
    T* at(int y) { return buf.data() + static_cast<std::ptrdiff_t>(y) * row; }
};

// Output rows per band: to.band_rows, or the largest count whose buffers need(rows) (growing
// with rows) fit `budget`, capped by to.max_band_rows and rounded down to to.band_align.
// Error(InvalidArgument) when even 8 rows (fewer in a shorter output) need more than the budget.
template <class Need>
int band_rows(const char* op, const TiledOptions& to, int out_width, int out_height, int channels,
              std::size_t budget, const Need& need) {
    if (to.band_rows > 0) return std::min(to.band_rows, out_height);
    int lo = 1, hi = out_height;
    while (lo < hi) {
        const int mid = lo + (hi - lo + 1) / 2;
        if (need(mid) <= budget)
            lo = mid;
        else
            hi = mid - 1;
    }
    int band = lo;
    if (to.max_band_rows > 0) band = std::min(band, std::max(1, to.max_band_rows));
    if (to.band_align > 1 && band >= to.band_align) band = band / to.band_align * to.band_align;
    if (need(band) > budget && band < std::min(8, out_height))
        fail(op, "max_memory " + std::to_string(budget) + " bytes is too small: 8 rows of " +
                     std::to_string(out_width) + " x " + std::to_string(channels) +
                     " outputs and their halo need " +
                     std::to_string(need(std::min(8, out_height))));
    return band;
}

// A NaN or an infinity reaches every row of its column through the whole image's IIR
// prefilter but only its band's rows in a band: refused, as bspline_prefilter refuses it.
// `rows` rows of width x channels floats from source row `first` and column `first_x` on.
inline void check_finite(const char* op, const float* data, int width, int channels, int first,
                         int rows, std::ptrdiff_t stride, int threads, int first_x = 0) {
    const std::ptrdiff_t n = std::ptrdiff_t{width} * channels;
    const std::int64_t bad = find_nonfinite_host(data, n, rows, stride, threads);
    if (bad < 0) return;
    const std::int64_t y = bad / n, i = bad % n;
    fail(op, "the source value at (x " + std::to_string(first_x + i / channels) + ", y " +
                 std::to_string(first + y) + ", channel " + std::to_string(i % channels) + ") is " +
                 (std::isnan(data[y * stride + i]) ? "NaN" : "infinite") +
                 "; the B-spline prefilter needs finite values");
}

}  // namespace upres::tiled
