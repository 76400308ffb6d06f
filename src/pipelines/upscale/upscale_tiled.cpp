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
// (tests/ops/upscale_tiled_test.cpp).
#include <upres/tiled.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include <upres/srcnn.hpp>

#include "core/format_number.hpp"
#include "core/tiled_bands.hpp"

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

// SRCNN in tiles, each from its source box (the file's comment).
template <class T>
TiledStats srcnn_tiled(RowSource& src, RowSink& dst, int s, const SrcnnModel& model,
                       const UpscaleOptions& o, const TiledOptions& to, const Context& ctx) {
    const int w = src.width(), h = src.height(), c = src.channels();
    const int ow = s * w, oh = s * h;
    const int halo = halo_of(model, s);
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
    // pipeline (luma, its bicubic upscale, chroma, the network's output: about 4 per channel).
    const std::size_t px = c * sizeof(T) + 16 * static_cast<std::size_t>(c) + 16;
    const auto need = [&](int t) {
        const std::size_t box = static_cast<std::size_t>(box_rows(t)) * box_cols(t);
        return static_cast<std::size_t>(ow) * std::min(t, oh) * c * sizeof(T) +  // the band
               box * c * sizeof(T) + box * s * s * px;                           // a tile
    };
    const std::size_t budget = to.max_memory ? to.max_memory : std::size_t{256} << 20;
    const int band = tiled::band_rows(kOp, to, ow, oh, c, budget, need);
    const int tile = tile_cols(band);

    TiledStats st;
    st.band_rows = band;
    tiled::Rows<T> rows;
    Image<T> box_img, up;  // a tile's box and its result, kept while the tile size is the same
    const std::ptrdiff_t n = std::ptrdiff_t{ow} * c;
    const int end = tiled::end_row(to, oh);
    for (int y0 = to.first_row; y0 < end; y0 += band) {
        const int y1 = std::min(end, y0 + band);
        rows.reset(y1 - y0, n);
        for (int x0 = 0; x0 < ow; x0 += tile) {
            const int x1 = std::min(ow, x0 + tile);
            // The source box: the inputs of outputs [x0, x1) x [y0, y1) and the halo, its
            // corner aligned (8 rows, 64 columns) so the whole-image code meets every pixel at
            // the same alignment as in the whole image.
            Box in;
            in.x0 = std::max(0, x0 / s - halo) / 64 * 64;
            in.y0 = std::max(0, y0 / s - halo) / 8 * 8;
            in.x1 = std::min(w, (x1 + s - 1) / s + halo);
            in.y1 = std::min(h, (y1 + s - 1) / s + halo);
            if (box_img.width() != in.width() || box_img.height() != in.height())
                box_img = Image<T>(in.width(), in.height(), c);
            src.read_box(in.x0, in.y0, in.width(), in.height(), box_img.data(),
                         box_img.view().stride());
            st.rows_read += in.height();
            st.pixels_read += std::int64_t{in.width()} * in.height();
            if (up.width() != s * in.width() || up.height() != s * in.height())
                up = Image<T>(s * in.width(), s * in.height(), c);
            srcnn_upscale(ImageView<const T>(box_img.view()), up.view(), model, o.srcnn, ctx);
            const ImageView<const T> r = up.view();
            const std::size_t bytes = static_cast<std::size_t>(x1 - x0) * c * sizeof(T);
            for (int y = y0; y < y1; ++y)
                std::memcpy(rows.at(y - y0) + static_cast<std::ptrdiff_t>(x0) * c,
                            r.row(y - s * in.y0) + static_cast<std::ptrdiff_t>(x0 - s * in.x0) * c,
                            bytes);
            // The band, the box and the tile's working set (as need() counts them).
            st.buffer_bytes =
                std::max(st.buffer_bytes,
                         rows.buf.capacity() * sizeof(T) +
                             static_cast<std::size_t>(in.width()) * in.height() * c * sizeof(T) +
                             static_cast<std::size_t>(r.width()) * r.height() * px);
        }
        dst.write_rows(y0, y1 - y0, rows.at(0), rows.row);
        ++st.bands;
        if (to.progress) to.progress(y1, oh);
    }
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
    tiled::check_call(kOp, src, static_cast<int>(ow), static_cast<int>(oh), topts, ctx);
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
