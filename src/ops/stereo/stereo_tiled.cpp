// upres::stereo_disparity_tiled (upres/tiled.hpp): the window matcher on a pair larger than
// memory, band by band of full rows.
//
// Every step of the window matcher reaches a bounded number of rows: the census window 3 rows,
// the aggregation window its radius (Gauss 7 x 7: 3, 13 x 13: 6, a box of side N: N / 2), the
// median 1; the disparity search, the checks and the sub-pixel fit stay on a row. Its arithmetic
// is integer up to the parabola of each pixel (stereo.hpp), so a pixel's result does not depend
// on where its rows lie. Each band of output rows is therefore the whole-image call on its rows
// plus that halo above and below (the band's first row aligned down to 8, as the other tiled
// operations align theirs), and the band's rows of the result are the whole image's bit for bit.
// Semi-global aggregation (its paths run the whole height) and speckle removal (regions of any
// size) are not local and are refused.
// On the cuda backend each band is the whole cuda call on its rows (the same bytes: both backends
// give the reference's), bands spread over the GPUs as tiled_devices.hpp runs them.
#include <upres/stereo.hpp>
#include <upres/tiled.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/tiled_bands.hpp"
#include "core/tiled_devices.hpp"

namespace upres {

namespace {

constexpr const char* kOp = "stereo_disparity_tiled";

// Rows beyond a band that its outputs read (above).
int stereo_halo(const StereoOptions& o) {
    const int census = o.cost == StereoCost::Census ? 3 : 0;
    const int window = o.aggregation == StereoAggregation::Gauss7    ? 3
                       : o.aggregation == StereoAggregation::Gauss13 ? 6
                                                                     : o.box_size / 2;
    return census + window + (o.median ? 1 : 0);
}

// The input rows [a, b) a band of output rows [y0, y1) reads: the halo above and below, the
// first row aligned down to 8, at least the window's rows (the matcher refuses a shorter image:
// more rows beyond the halo change nothing).
RowRange band_rows_read(int y0, int y1, int halo, int h) {
    int a = std::max(0, y0 - halo) / 8 * 8, b = std::min(h, y1 + halo);
    if (b - a < 2 * halo + 1) b = std::min(h, a + 2 * halo + 1);
    if (b - a < 2 * halo + 1) a = std::max(0, b - 2 * halo - 1) / 8 * 8;
    return {a, b};
}

// What only the window matcher can tile (semi-global paths and speckle regions are not local).
void check_local(const StereoOptions& opts) {
    if (opts.aggregation == StereoAggregation::Sgm4 || opts.aggregation == StereoAggregation::Sgm8)
        tiled::fail(kOp, std::string("aggregation ") + to_string(opts.aggregation) +
                             " is not tiled (its paths run the whole height; allowed: gauss7, "
                             "gauss13, box)");
    if (opts.speckle_size > 0)
        tiled::fail(kOp,
                    "speckle removal is not tiled (its regions may span any number of rows; "
                    "speckle_size must be 0)");
}

template <class T>
TiledStats run(RowSource& left, RowSource& right, RowSink& dst, const StereoOptions& o,
               const TiledOptions& to, const Context& ctx) {
    const int w = left.width(), h = left.height(), c = left.channels();
    const int halo = stereo_halo(o);
    const bool cuda = ctx.backend == Backend::Cuda;
    const std::vector<int> devices =
        cuda ? tiled::cuda_devices(kOp, to, ctx) : std::vector<int>{ctx.device};
    // A band of t rows: both inputs' rows with the halo, the disparity rows (float), and the
    // matcher's own working set, about 16 bytes a pixel per input row (its stripes' layers;
    // device memory on the cuda backend). Every device has its own: each gets its share of the
    // budget.
    const std::size_t work = cuda ? 0 : 16;
    const auto span = [&](int t) { return std::min(h, std::max(t, 1) + 2 * halo + 8); };
    const auto need = [&](int t) {
        return static_cast<std::size_t>(span(t)) * w * (2 * c * sizeof(T) + sizeof(float) + work);
    };
    const std::size_t budget =
        (to.max_memory ? to.max_memory : std::size_t{256} << 20) / devices.size();
    const int band = tiled::band_rows(kOp, to, w, h, c, budget, need);
    const std::ptrdiff_t n = std::ptrdiff_t{w} * c;
    const int end = tiled::end_row(to, h);
    const int bands = (end - to.first_row + band - 1) / band;
    std::mutex reading;  // the sources, read by one device's thread at a time

    // One device's buffers: a band's rows with their halo, and its map.
    struct Bufs {
        tiled::Rows<T> l, r;
        Image<float> disp;
        int a = 0;  // the band's first input row
    };
    using Worker = tiled::StateWorker<Bufs>;
    const auto y0_of = [&](int b) { return to.first_row + b * band; };
    const auto y1_of = [&](int b) { return std::min(end, y0_of(b) + band); };
    const auto compute_band = [&](int bi, Worker& wk) {
        const auto [a, b] = band_rows_read(y0_of(bi), y1_of(bi), halo, h);
        wk.state.a = a;
        wk.state.l.reset(b - a, n);
        wk.state.r.reset(b - a, n);
        {
            const std::lock_guard<std::mutex> lock(reading);
            left.read_rows(a, b - a, wk.state.l.buf.data(), wk.state.l.row);
            right.read_rows(a, b - a, wk.state.r.buf.data(), wk.state.r.row);
        }
        wk.stats.rows_read += 2 * (b - a);
        if (wk.state.disp.width() != w || wk.state.disp.height() != b - a)
            wk.state.disp = Image<float>(w, b - a, 1);
        stereo_disparity(ImageView<const T>(wk.state.l.buf.data(), w, b - a, c, wk.state.l.row),
                         ImageView<const T>(wk.state.r.buf.data(), w, b - a, c, wk.state.r.row),
                         wk.state.disp.view(), o, wk.ctx);
        wk.stats.buffer_bytes =
            std::max(wk.stats.buffer_bytes,
                     (wk.state.l.buf.capacity() + wk.state.r.buf.capacity()) * sizeof(T) +
                         static_cast<std::size_t>(w) * (b - a) * (sizeof(float) + work));
    };
    const auto write_band = [&](int bi, Worker& wk) {
        const int y0 = y0_of(bi), y1 = y1_of(bi);
        dst.write_rows(y0, y1 - y0, wk.state.disp.view().row(y0 - wk.state.a),
                       wk.state.disp.view().stride());
        ++wk.stats.bands;
        if (to.progress) to.progress(y1, h);
    };
    TiledStats st = tiled::run_state_bands<Bufs>(bands, devices, ctx, compute_band, write_band);
    st.band_rows = band;
    dst.commit();
    return st;
}

}  // namespace

TiledStats stereo_disparity_tiled(RowSource& left, RowSource& right, RowSink& disparity,
                                  const StereoOptions& opts, const TiledOptions& topts,
                                  const Context& ctx) {
    tiled::check_call(kOp, left, left.width(), left.height(), topts, ctx, true);
    if (right.width() != left.width() || right.height() != left.height() ||
        right.channels() != left.channels() || right.type() != left.type())
        tiled::fail(kOp, "the right image is " + std::to_string(right.width()) + " x " +
                             std::to_string(right.height()) + " x " +
                             std::to_string(right.channels()) + " " + to_string(right.type()) +
                             ", the left " + std::to_string(left.width()) + " x " +
                             std::to_string(left.height()) + " x " +
                             std::to_string(left.channels()) + " " + to_string(left.type()) +
                             " (they must match)");
    check_local(opts);
    switch (left.type()) {
        case PixelType::U8:
            return run<std::uint8_t>(left, right, disparity, opts, topts, ctx);
        case PixelType::U16:
            return run<std::uint16_t>(left, right, disparity, opts, topts, ctx);
        case PixelType::F32:
            return run<float>(left, right, disparity, opts, topts, ctx);
    }
    tiled::fail(kOp, "unknown pixel type");
}

RowRange stereo_disparity_tiled_source_rows(int width, int height, const StereoOptions& opts,
                                            int y0, int y1) {
    tiled::check_side(kOp, width, "the width");
    tiled::check_side(kOp, height, "the height");
    tiled::check_range(kOp, height, y0, y1);
    check_local(opts);
    return band_rows_read(y0, y1, stereo_halo(opts), height);
}

}  // namespace upres
