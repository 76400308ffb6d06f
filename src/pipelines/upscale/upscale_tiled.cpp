// upres::upscale_tiled (upres/tiled.hpp): upscale() of an image larger than memory, in tiles.
//
// bicubic, bilinear and bspline are warp resizes: warp_tiled runs them (bands of rows, with the
// B-spline prefilter's warm-up). srcnn is local: an output pixel depends on the input pixels
// within a fixed radius (the bicubic step's 2, plus the network's receptive field on the output
// grid), and its CPU code computes every output pixel by the same arithmetic wherever it lies in
// the image (srcnn_cpu.cpp: "the same code whatever the tile"). So each output tile is computed by
// the whole-image call on its source box: the input pixels it reads plus a halo beyond that
// radius, the box's top-left corner aligned to 8 rows and 64 columns (as warp_box aligns its
// boxes), and cut out of the result; at the image's true edges the box reaches the edge and the
// whole-image call applies its own border. The output is the whole-image call's bit for bit
// (tests/ops/upscale_tiled_test.cpp). On the cuda backend each tile is the whole cuda call on
// its box, whose per-pixel arithmetic is the same wherever the pixel lies, once its kernels are
// fixed (the first tile's choice serves every tile); bands spread over the GPUs as
// tiled_devices.hpp runs them.
#include <upres/tiled.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <upres/srcnn.hpp>

#include "core/format_number.hpp"
#include "core/tiled_bands.hpp"
#include "core/tiled_devices.hpp"

namespace upres {

namespace {

constexpr const char* kOp = "upscale_tiled";

// Input pixels beyond what an output tile's own inputs reach: the bicubic step reads 2 pixels
// on either side of a sample's position (3: one more for the rounding of the position), and the
// network its receptive radius on the output grid, in input pixels.
int halo_of(const SrcnnModel& model, int s) {
    const int radius = model.receptive_field() / 2;  // output pixels
    return 3 + (radius + s - 1) / s;
}

// SRCNN in tiles, each from its source box (the file's comment), band by band: on the cuda
// backend the bands spread over TiledOptions::devices (tiled_devices.hpp).
template <class T>
TiledStats srcnn_tiled(RowSource& src, RowSink& dst, int s, const SrcnnModel& model,
                       const UpscaleOptions& o, const TiledOptions& to, const Context& ctx) {
    const int w = src.width(), h = src.height(), c = src.channels();
    const int ow = s * w, oh = s * h;
    const int halo = halo_of(model, s);
    const bool cuda = ctx.backend == Backend::Cuda;
    const std::vector<int> devices =
        cuda ? tiled::cuda_devices(kOp, to, ctx) : std::vector<int>{ctx.device};
    const int nd = static_cast<int>(devices.size());
    // Tiles of t rows (the band) and tw columns read boxes of about (t / s + 2 halo + 8) x
    // (tw / s + 2 halo + 64) inputs (the alignment). Wide tiles keep the halo and the alignment
    // a small part of a box: 2048 output columns, or the band's height if taller.
    const auto tile_cols = [&](int t) {
        return std::min(ow, to.tile_columns > 0 ? to.tile_columns : std::max(t, 2048));
    };
    const auto box_rows = [&](int t) { return std::min(h, (t + s - 1) / s + 2 * halo + 8); };
    const auto box_cols = [&](int t) {
        return std::min(w, (tile_cols(t) + s - 1) / s + 2 * halo + 64);
    };
    // Bytes per output pixel of a tile beyond its box: the result, and the float planes of the
    // pipeline (luma, its bicubic upscale, chroma, the network's output: about 4 per channel;
    // on the cuda backend they are device memory, the host keeps the result).
    const std::size_t px = c * sizeof(T) + (cuda ? 0 : 16 * static_cast<std::size_t>(c) + 16);
    const auto need = [&](int t) {
        const std::size_t box = static_cast<std::size_t>(box_rows(t)) * box_cols(t);
        return static_cast<std::size_t>(ow) * std::min(t, oh) * c * sizeof(T) +  // the band
               static_cast<std::size_t>(box_rows(t)) * w * c * sizeof(T) +       // its inputs
               box * s * s * px;                                                 // a tile
    };
    // Every device has its band, box and tile: each gets its share of the budget.
    const std::size_t budget = (to.max_memory ? to.max_memory : std::size_t{256} << 20) / nd;
    const int band = tiled::band_rows(kOp, to, ow, oh, c, budget, need);
    const int tile = tile_cols(band);
    const int end = tiled::end_row(to, oh);
    const int bands = (end - to.first_row + band - 1) / band;
    std::mutex reading;  // the source, read by one device's thread at a time
    // cuda: the options naming the kernels the first tile ran (Auto and Fastest choose by the
    // plane's shape); every later tile, on every device, runs them, so no seam changes the
    // arithmetic. Set by device 0's first band, which runs before the other devices start.
    std::optional<SrcnnOptions> fixed;

    // One device's buffers.
    struct Bufs {
        tiled::Rows<T> rows, in_rows;  // the band's output rows, its input rows (all columns)
        Image<T> up;                   // a tile's result, kept while the tile size is the same
    };
    using Worker = tiled::StateWorker<Bufs>;
    const auto y0_of = [&](int b) { return to.first_row + b * band; };
    const auto y1_of = [&](int b) { return std::min(end, y0_of(b) + band); };
    const auto compute_band = [&](int b, Worker& wk) {
        const int a = y0_of(b), z = y1_of(b);
        wk.state.rows.reset(z - a, std::ptrdiff_t{ow} * c);
        SrcnnOptions so = fixed ? *fixed : o.srcnn;
        // The band's input rows, every column, read once: its tiles' boxes are views of them (a
        // box read per tile decoded a compressed file's strips once per tile: 8 times the
        // decoding of a 16384-wide output's band).
        const int ry0 = std::max(0, a / s - halo) / 8 * 8;
        const int ry1 = std::min(h, (z + s - 1) / s + halo);
        wk.state.in_rows.reset(ry1 - ry0, std::ptrdiff_t{w} * c);
        {
            const std::lock_guard<std::mutex> l(reading);
            src.read_rows(ry0, ry1 - ry0, wk.state.in_rows.buf.data(), wk.state.in_rows.row);
        }
        wk.stats.rows_read += ry1 - ry0;
        const ImageView<const T> band_in(wk.state.in_rows.buf.data(), w, ry1 - ry0, c,
                                         wk.state.in_rows.row);
        for (int x0 = 0; x0 < ow; x0 += tile) {
            const int x1 = std::min(ow, x0 + tile);
            // The source box: the inputs of outputs [x0, x1) x [a, z) and the halo, its corner
            // aligned (8 rows, 64 columns) so the whole-image code meets every pixel at the same
            // alignment as in the whole image.
            Box in;
            in.x0 = std::max(0, x0 / s - halo) / 64 * 64;
            in.y0 = ry0;
            in.x1 = std::min(w, (x1 + s - 1) / s + halo);
            in.y1 = ry1;
            const ImageView<const T> box = band_in.sub(in.x0, 0, in.width(), in.height());
            wk.stats.pixels_read += std::int64_t{in.width()} * in.height();
            if (wk.state.up.width() != s * in.width() || wk.state.up.height() != s * in.height())
                wk.state.up = Image<T>(s * in.width(), s * in.height(), c);
            const SrcnnPlan plan = srcnn_upscale(box, wk.state.up.view(), model, so, wk.ctx);
            if (cuda && !fixed) {
                so.precision = plan.precision;
                so.variant = plan.fused ? SrcnnVariant::FusedNetwork : SrcnnVariant::Auto;
                if (!plan.fused) so.layer_variants = plan.layers;
                fixed = so;
            }
            const ImageView<const T> r = wk.state.up.view();
            const std::size_t bytes = static_cast<std::size_t>(x1 - x0) * c * sizeof(T);
            for (int y = a; y < z; ++y)
                std::memcpy(wk.state.rows.at(y - a) + static_cast<std::ptrdiff_t>(x0) * c,
                            r.row(y - s * in.y0) + static_cast<std::ptrdiff_t>(x0 - s * in.x0) * c,
                            bytes);
            // The band, its inputs and the tile's working set (as need() counts them).
            wk.stats.buffer_bytes = std::max(
                wk.stats.buffer_bytes,
                (wk.state.rows.buf.capacity() + wk.state.in_rows.buf.capacity()) * sizeof(T) +
                    static_cast<std::size_t>(r.width()) * r.height() * px);
        }
    };
    const auto write_band = [&](int b, Worker& wk) {
        dst.write_rows(y0_of(b), y1_of(b) - y0_of(b), wk.state.rows.at(0), wk.state.rows.row);
        ++wk.stats.bands;
        if (to.progress) to.progress(y1_of(b), oh);
    };
    TiledStats st = tiled::run_state_bands<Bufs>(bands, devices, ctx, compute_band, write_band,
                                                 /*first_alone=*/cuda);
    st.band_rows = band;
    dst.commit();
    return st;
}

}  // namespace

TiledStats upscale_tiled(RowSource& src, RowSink& dst, const UpscaleOptions& opts,
                         const TiledOptions& topts, const Context& ctx) {
    const UpscaleMethod m = resolved_method(opts);
    std::optional<SrcnnModel> model;
    double scale = opts.scale;
    if (m == UpscaleMethod::Srcnn) {
        if (scale != 0.0 && scale != std::floor(scale))
            tiled::fail(kOp, "srcnn needs an integer scale, not " + format_number(scale));
        model = opts.model.empty() ? load_default_srcnn_model(static_cast<int>(scale))
                                   : load_srcnn_model(opts.model);
        if (scale == 0.0) scale = model->scale;
        if (scale != model->scale)
            tiled::fail(kOp, "the model " + opts.model + " is for x" +
                                 std::to_string(model->scale) + ", not scale " +
                                 format_number(scale));
    }
    if (!std::isfinite(scale) || scale != std::floor(scale) || scale < 1 || scale > 16)
        tiled::fail(kOp, "the scale must be an integer in [1, 16] for tiled upscaling, not " +
                             format_number(scale) + " (the whole-image call takes any factor)");
    const int s = static_cast<int>(scale);
    if (resolved_lattice(opts) != Lattice::Centered)
        tiled::fail(kOp,
                    "tiled upscaling runs the centre-aligned lattice (allowed: auto, centered)");
    const long long ow = static_cast<long long>(s) * src.width();
    const long long oh = static_cast<long long>(s) * src.height();
    tiled::check_side(kOp, ow, "the output width");
    tiled::check_side(kOp, oh, "the output height");
    tiled::check_call(kOp, src, static_cast<int>(ow), static_cast<int>(oh), topts, ctx, true);
    if (topts.tile_columns < 0)
        tiled::fail(kOp, "tile_columns " + std::to_string(topts.tile_columns) +
                             " is negative (0: automatic)");
    if (m == UpscaleMethod::Bilinear || m == UpscaleMethod::BSpline ||
        m == UpscaleMethod::Bicubic) {
        // The warps upscale() runs for them: the exact B-spline; linear, or MATLAB's bicubic
        // (Keys a = -0.5; no antialiasing when enlarging), with the reflect border.
        WarpOptions wo;
        if (m != UpscaleMethod::BSpline) {
            wo.interp = m == UpscaleMethod::Bicubic ? Interp::Cubic : Interp::Linear;
            wo.cubic_a = -0.5;
            wo.border = Border::Reflect;
        }
        return warp_tiled(src, dst, static_cast<int>(ow), static_cast<int>(oh),
                          Transform::make_resize(), wo, topts, ctx);
    }
    if (m != UpscaleMethod::Srcnn)
        tiled::fail(kOp, std::string("method ") + to_string(m) +
                             " is not tiled (allowed: srcnn, bicubic, bilinear, bspline; the "
                             "SEABI family streams instead: upscale --stream)");
    switch (src.type()) {
        case PixelType::U8:
            return srcnn_tiled<std::uint8_t>(src, dst, s, *model, opts, topts, ctx);
        case PixelType::U16:
            return srcnn_tiled<std::uint16_t>(src, dst, s, *model, opts, topts, ctx);
        case PixelType::F32:
            return srcnn_tiled<float>(src, dst, s, *model, opts, topts, ctx);
    }
    tiled::fail(kOp, "unknown pixel type");
}

}  // namespace upres
