// upres::warp_tiled: the warp band by band of output rows (upres/tiled.hpp). The point maps
// (affine, perspective, remap, flow) cut each band into square tiles, each computed from its
// source box by warp_box (warp_box.cpp: run_points below). The zoom/resize warp computes whole
// bands:
//
// Each band of output rows [y0, y1) needs the source rows its vertical taps name, [lo, hi]
// (cpu::ResizeRowReach, from the whole call's tap tables). With the B-spline, those rows'
// coefficients come from a band of the source extended by kBandWarmup rows at each cut end,
// aligned to kBandAlign rows, and prefiltered on its own (cpu::bspline_prefilter_band): the rows
// the taps read are then the whole image's coefficients bit for bit, and so is every output row
// (cpu::warp_resize_band runs the whole call's per-row arithmetic). Full rows keep the row pass
// and the horizontal taps exactly those of the whole call.
#include <upres/tiled.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <exception>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "core/parallel.hpp"
#include "core/span2d.hpp"
#include "core/tiled_bands.hpp"
#include "core/tiled_devices.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/bspline/bspline_math.hpp"
#include "ops/warp/warp_backends.hpp"

namespace upres {

namespace {

constexpr const char* kOp = "warp_tiled";

[[noreturn]] void fail(const std::string& msg) { tiled::fail(kOp, msg); }

using tiled::Rows;

struct Geometry {
    int sw, sh, c, ow, oh;
    int pad, span_w, span_h;  // the span: the source padded by pad edge samples per side
    bool bspline;             // source rows staged as float (B-spline coefficients)
    bool prefilter;           // and prefiltered here
    int warm;                 // rows of warm-up at a cut end
};

// The span rows a band [y0, y1) reads, extended by the warm-up and aligned: [a, b).
std::pair<int, int> band_span(const cpu::ResizeRowReach& reach, const Geometry& g, int y0, int y1) {
    auto [lo, hi] = reach.rows(y0, y1);
    if (lo > hi) lo = hi = 0;  // Constant: every row outside, nothing is read
    if (g.prefilter) return cpu::prefilter_band_span(g.span_h, g.warm, lo, hi + 1);
    return {std::max(0, lo - g.warm), std::min(g.span_h, hi + 1 + g.warm)};
}

// The image rows behind a band's span rows [a, b) (clamped: edge replication of the padded
// span), as [first, last).
RowRange image_rows(const Geometry& g, std::pair<int, int> span) {
    return {std::clamp(span.first - g.pad, 0, g.sh - 1),
            std::clamp(span.second - 1 - g.pad, 0, g.sh - 1) + 1};
}

std::size_t band_bytes(const Geometry& g, int out_rows, int span_rows, std::size_t px) {
    const std::size_t stage = g.bspline ? std::size_t{4} * g.span_w * g.c : 0;
    return static_cast<std::size_t>(out_rows) * g.ow * g.c * px +
           static_cast<std::size_t>(span_rows) * (stage + std::size_t{1} * g.sw * g.c * px);
}

template <class T>
TiledStats run(RowSource& src, RowSink& dst, const Geometry& g, const WarpPlan& p,
               const WarpOptions& o, const TiledOptions& to, const Context& ctx) {
    // The band height: the largest whose buffers fit the budget. A band's span rows, measured
    // at the top, the middle and the bottom of the output (the middle one has warm-up at both
    // ends), stand for all; bands elsewhere differ by a row or an aligned group at most.
    const cpu::ResizeRowReach reach(p, g.span_h, 0, g.oh);
    const auto need = [&](int rows) {
        rows = std::min(g.oh, rows);
        int span = 0;
        for (int y0 : {0, (g.oh - rows) / 2, g.oh - rows}) {
            const auto [a, b] = band_span(reach, g, y0, y0 + rows);
            span = std::max(span, b - a);
        }
        return band_bytes(g, rows, std::min(g.span_h, span + 2 * cpu::kBandAlign), sizeof(T));
    };
    std::size_t budget = to.max_memory;
    if (budget == 0) {
        // Automatic: 64 MiB, or more where bands of that size would read fewer than 256 rows of
        // their own (the warm-up, 2 x 64 rows per band, would then cost more than half of the
        // prefilter's work: on a 40000^2 u16 zoom x2, 107-row bands took 53 s, 826-row bands
        // 37 s).
        const int own = std::max(1, static_cast<int>(256.0 * g.oh / g.sh));
        budget = std::max(std::size_t{64} << 20, need(own));
    }
    const int band = tiled::band_rows(kOp, to, g.ow, g.oh, g.c, budget, need);

    TiledStats st;
    st.band_rows = band;
    Rows<T> in, out;
    Rows<float> stage;
    PrefilterOptions po;
    po.border = g.pad > 0 ? Border::Mirror : tap_border(o.border);
    po.fir_length = o.prefilter;
    const int end = tiled::end_row(to, g.oh);
    for (int y0 = to.first_row; y0 < end; y0 += band) {
        const int y1 = std::min(end, y0 + band);
        const auto [a, b] = band_span(reach, g, y0, y1);
        const RowRange rr = image_rows(g, {a, b});
        const int ia = rr.first, ib = rr.last - 1;
        // The source rows and the output rows in place when the source and the sink hold
        // them in memory (no copy of either: 8192^2 u16 zoom x2 as one band on one thread,
        // 0.65 s, against 1.04 s with both copies and zero-filled buffers and 0.60 s for
        // upres::warp).
        std::ptrdiff_t in_row = 0, out_row = 0;
        const T* inp = static_cast<const T*>(src.rows_in_memory(ia, ib - ia + 1, &in_row));
        if (!inp) {
            in.reset(ib - ia + 1, std::ptrdiff_t{g.sw} * g.c);
            src.read_rows(ia, ib - ia + 1, in.buf.data(), in.row);
            inp = in.buf.data(), in_row = in.row;
        }
        st.rows_read += ib - ia + 1;
        if constexpr (std::is_same_v<T, float>)
            if (g.prefilter)
                tiled::check_finite(kOp, inp, g.sw, g.c, ia, ib - ia + 1, in_row, ctx.threads);
        T* outp = static_cast<T*>(dst.rows_in_memory(y0, y1 - y0, &out_row));
        if (!outp) {
            out.reset(band, std::ptrdiff_t{g.ow} * g.c);
            outp = out.buf.data(), out_row = out.row;
        }
        const Span2D<T> ob{outp, g.ow, y1 - y0, g.c, out_row};
        if (g.bspline) {
            stage.reset(b - a, std::ptrdiff_t{g.span_w} * g.c);
            for (int r = a; r < b; ++r) {
                const T* s = inp + (std::clamp(r - g.pad, 0, g.sh - 1) - ia) * in_row;
                float* d = stage.at(r - a);
                float* inner = d + std::ptrdiff_t{g.pad} * g.c;
                const std::ptrdiff_t n = std::ptrdiff_t{g.sw} * g.c;
                for (std::ptrdiff_t i = 0; i < n; ++i) inner[i] = static_cast<float>(s[i]);
                for (int x = 0; x < g.pad; ++x) {  // edge replication
                    std::memcpy(d + std::ptrdiff_t{x} * g.c, inner, g.c * sizeof(float));
                    std::memcpy(inner + n + std::ptrdiff_t{x} * g.c, inner + n - g.c,
                                g.c * sizeof(float));
                }
            }
            const Span2D<float> sb{stage.buf.data(), g.span_w, b - a, g.c, stage.row};
            const Span2D<const float> cb{sb.data, sb.width, sb.height, sb.channels, sb.stride};
            // Small bands on one thread, as upres::warp's staging: a parallel region costs more
            // than the work (tests/ops/warp_tiled_test.cpp's sweep of 1- to 37-row bands: 5.1 s
            // with 16 threads on a 16-core host, 0.4 s with 2 on a 2-core one).
            const int threads = std::int64_t{g.span_w} * (b - a) < (1 << 14) ? 1 : ctx.threads;
            if (g.prefilter)
                cpu::bspline_prefilter_band(cb, sb, po, threads,
                                            cpu::BandEnds{a > 0, b < g.span_h});
            cpu::warp_resize_band<float, T>(cb, ob, p, g.span_h, y0, a, ctx.threads);
        } else {
            const Span2D<const T> sb{inp, g.sw, ib - ia + 1, g.c, in_row};
            cpu::warp_resize_band<T, T>(sb, ob, p, g.span_h, y0, ia, ctx.threads);
        }
        st.buffer_bytes =
            std::max(st.buffer_bytes, (in.buf.capacity() + out.buf.capacity()) * sizeof(T) +
                                          stage.buf.capacity() * sizeof(float));
        dst.write_rows(y0, y1 - y0, outp, out_row);
        ++st.bands;
        if (to.progress) to.progress(y1, g.oh);
    }
    dst.commit();
    return st;
}

// Point maps (affine, perspective, remap, flow): bands of output rows cut into square tiles,
// each computed from its source box (warp_source_box, read with RowSource::read_box) by
// warp_box; the band goes to the sink whole.
template <class T>
TiledStats run_points(RowSource& src, RowSink& dst, int ow, int oh, const Transform& t,
                      const WarpOptions& o, const TiledOptions& to, const Context& ctx) {
    const int sw = src.width(), sh = src.height(), c = src.channels();
    const bool bspline = o.interp == Interp::BSpline;
    // The map's checks (a field of the output's size, finite: errors name the output pixel)
    // before its tiles are cut.
    check_warp_options(o, t);
    check_transform(t, ow, oh, Location::Host, true, ctx);
    // The tile of up to w x h outputs at (x0, y0), and its map (a field's tile for Remap, Flow).
    const auto tile_of = [&](int x0, int y0, int w, int h) {
        Transform tt = t;
        const Box ob{x0, y0, std::min(ow, x0 + w), std::min(oh, y0 + h)};
        if (t.kind == Transform::Kind::Remap || t.kind == Transform::Kind::Flow)
            tt.field = t.field.sub(ob.x0, ob.y0, ob.width(), ob.height());
        return std::pair{ob, tt};
    };
    // The tiles of a band run in parallel, one thread each (one parallel region per band: a
    // region per tile and per pass cost 23 ms per tile in barriers on a loaded 2-core machine,
    // 9x the work). Buffers of a band of `rows` output rows in tiles of rows x rows (at least
    // 32 wide): the band, and per thread the largest source box of a tile at the corners and
    // the centre of the output and warp_box's staging of it.
    const int threads = resolve_threads(ctx.threads);
    const auto tile_width = [](int rows) { return std::max(rows, 32); };
    const auto need = [&](int rows) {
        rows = std::min(oh, rows);
        const int side = tile_width(rows);
        std::size_t box = 0;
        for (int y0 : {0, (oh - rows) / 2, oh - rows})
            for (int x0 : {0, std::max(0, (ow - side) / 2), std::max(0, ow - side)}) {
                const auto [ob, tt] = tile_of(x0, y0, side, rows);
                const Box ib = warp_source_box(sw, sh, ow, oh, tt, o, ob);
                box = std::max(box, static_cast<std::size_t>(ib.width()) * ib.height());
            }
        const int busy = std::min(threads, (ow + side - 1) / side);
        return static_cast<std::size_t>(rows) * ow * c * sizeof(T) +
               busy * box * c * (sizeof(T) + (bspline ? sizeof(float) : sizeof(T)));
    };
    std::size_t budget = to.max_memory;
    if (budget == 0) budget = std::max(std::size_t{64} << 20, need(std::min(oh, 256)));
    const int band = tiled::band_rows(kOp, to, ow, oh, c, budget, need);
    const int tw = tile_width(band);
    const int across = (ow + tw - 1) / tw;
    const int team = std::min(threads, across);
    Context one = ctx;
    one.threads = 1;

    TiledStats st;
    st.band_rows = band;
    Rows<T> out;
    std::vector<Rows<T>> boxes(static_cast<std::size_t>(team));
    std::mutex reading;  // the source is read by one tile at a time
    const int end = tiled::end_row(to, oh);
    for (int y0 = to.first_row; y0 < end; y0 += band) {
        const int y1 = std::min(end, y0 + band);
        std::ptrdiff_t out_row = 0;
        T* outp = static_cast<T*>(dst.rows_in_memory(y0, y1 - y0, &out_row));
        if (!outp) {
            out.reset(band, std::ptrdiff_t{ow} * c);
            outp = out.buf.data(), out_row = out.row;
        }
        std::vector<std::int64_t> rows_read(static_cast<std::size_t>(across)),
            pixels_read(static_cast<std::size_t>(across));
        std::exception_ptr failed;
        std::mutex failing;
        parallel_for(0, across, team, [&](int k) {
            try {
                Rows<T>& box = boxes[static_cast<std::size_t>(omp_get_thread_num())];
                const auto [ob, tt] = tile_of(k * tw, y0, tw, y1 - y0);
                const Box ib = warp_source_box(sw, sh, ow, oh, tt, o, ob);
                ImageView<const T> sv;
                if (!ib.empty()) {
                    box.reset(ib.height(), std::ptrdiff_t{ib.width()} * c);
                    {
                        const std::lock_guard<std::mutex> lock(reading);
                        src.read_box(ib.x0, ib.y0, ib.width(), ib.height(), box.buf.data(),
                                     box.row);
                    }
                    sv = ImageView<const T>(box.buf.data(), ib.width(), ib.height(), c, box.row);
                    rows_read[static_cast<std::size_t>(k)] = ib.height();
                    pixels_read[static_cast<std::size_t>(k)] =
                        std::int64_t{ib.width()} * ib.height();
                }
                const ImageView<T> dv(outp + std::ptrdiff_t{ob.x0} * c, ob.width(), ob.height(), c,
                                      out_row);
                warp_box(sv, ib, sw, sh, dv, ob, ow, oh, tt, o, one);
            } catch (...) {  // no exception may leave an OpenMP region: the first is rethrown
                const std::lock_guard<std::mutex> lock(failing);
                if (!failed) failed = std::current_exception();
            }
        });
        if (failed) std::rethrow_exception(failed);
        for (int k = 0; k < across; ++k) {
            st.rows_read += rows_read[static_cast<std::size_t>(k)];
            st.pixels_read += pixels_read[static_cast<std::size_t>(k)];
        }
        std::size_t bytes = out.buf.capacity() * sizeof(T);
        for (const Rows<T>& b : boxes) bytes += b.buf.capacity() * sizeof(T);
        st.buffer_bytes = std::max(st.buffer_bytes, bytes);
        dst.write_rows(y0, y1 - y0, outp, out_row);
        ++st.bands;
        if (to.progress) to.progress(y1, oh);
    }
    dst.commit();
    return st;
}

// The checks that do not need the source's pixels, and the band geometry.
Geometry check_and_plan(int sw, int sh, int c, int ow, int oh, const Transform& t,
                        const WarpOptions& opts, WarpPlan& p) {
    if (t.kind != Transform::Kind::Resize)
        fail(
            "the rows of a band are those of zoom/resize transforms (Transform::make_resize); "
            "the other maps read source boxes (warp_source_box)");
    check_warp_options(opts, t);
    if (opts.border == Border::Wrap)
        fail(
            "border wrap is not tiled (its prefilter couples the first and the last rows); "
            "allowed: mirror, reflect, nearest, constant");
    if (opts.fast_texture)
        fail("fast_texture is not tiled (its texture reads take whole images); the exact path is");
    Geometry g{};
    g.sw = sw, g.sh = sh, g.c = c;
    g.ow = ow, g.oh = oh;
    p = make_warp_plan(t, opts, g.sw, g.sh, g.ow, g.oh);
    g.pad = p.pad;
    g.span_w = g.sw + 2 * g.pad, g.span_h = g.sh + 2 * g.pad;
    g.bspline = opts.interp == Interp::BSpline;
    g.prefilter = g.bspline && !opts.prefiltered;
    g.warm = g.prefilter ? cpu::kBandWarmup : 0;
    return g;
}

// The source's type against the options (every map, both backends).
void check_source_type(PixelType type, const WarpOptions& opts) {
    if (opts.prefiltered && opts.interp == Interp::BSpline && type != PixelType::F32)
        fail("prefiltered B-spline coefficients must be a float image");
    if (type != PixelType::F32 && !std::isfinite(opts.fill))
        fail("the fill value is not finite; integer images need a finite fill");
}

// The cuda backend on the devices of topts (warp_tiled_cuda.cu): zoom / resize in bands, the
// point maps in boxes.
TiledStats run_cuda(RowSource& src, RowSink& dst, int ow, int oh, const Transform& t,
                    const WarpOptions& opts, const TiledOptions& topts, const Context& ctx) {
    tiled::check_call(kOp, src, ow, oh, topts, ctx, true);
    if (t.kind != Transform::Kind::Resize) {
        // The map's checks (a field of the output's size, finite: errors name the output pixel)
        // before its boxes are cut; the boxes' own (borders, options) when they are planned.
        check_warp_options(opts, t);
        check_transform(t, ow, oh, Location::Host, true, ctx);
        check_source_type(src.type(), opts);
        if (opts.border == Border::Wrap && opts.interp == Interp::BSpline && !opts.prefiltered)
            fail(
                "border wrap with the B-spline prefilter is not tiled (its recursions couple "
                "opposite edges); allowed: mirror, reflect, nearest, constant, or prefiltered "
                "coefficients");
        if (opts.fast_texture)
            fail(
                "fast_texture is not tiled (its texture reads take whole images); the exact "
                "path is");
        if (topts.tile_columns < 0)
            fail("tile_columns " + std::to_string(topts.tile_columns) +
                 " is negative (0: automatic)");
        const std::vector<int> devices = tiled::cuda_devices(kOp, topts, ctx);
#if UPRES_HAVE_CUDA
        return cuda::warp_points_tiled(src, dst, ow, oh, t, opts, topts, ctx, devices);
#else
        (void)dst;
        throw Error(ErrorCode::Internal, "warp_tiled: a CUDA device without CUDA support");
#endif
    }
    WarpPlan p;
    const Geometry g =
        check_and_plan(src.width(), src.height(), src.channels(), ow, oh, t, opts, p);
    if (p.antialias)
        fail(
            "antialiased resizes are tiled on the cpu backend only (the cuda kernel for them "
            "takes whole images)");
    check_source_type(src.type(), opts);
    const std::vector<int> devices = tiled::cuda_devices(kOp, topts, ctx);
#if UPRES_HAVE_CUDA
    PrefilterOptions po;
    po.border = g.pad > 0 ? Border::Mirror : tap_border(opts.border);
    po.fir_length = opts.prefilter;
    return cuda::warp_resize_tiled(src, dst, ow, oh, p, g.prefilter, po, topts, devices);
#else
    (void)g, (void)src, (void)dst;
    throw Error(ErrorCode::Internal, "warp_tiled: a CUDA device without CUDA support");
#endif
}

}  // namespace

TiledStats warp_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                      const Transform& t, const WarpOptions& opts, const TiledOptions& topts,
                      const Context& ctx) {
    if (ctx.backend == Backend::Cuda)
        return run_cuda(src, dst, out_width, out_height, t, opts, topts, ctx);
    tiled::check_call(kOp, src, out_width, out_height, topts, ctx);
    if (t.kind != Transform::Kind::Resize) {
        switch (src.type()) {
            case PixelType::U8:
                return run_points<std::uint8_t>(src, dst, out_width, out_height, t, opts, topts,
                                                ctx);
            case PixelType::U16:
                return run_points<std::uint16_t>(src, dst, out_width, out_height, t, opts, topts,
                                                 ctx);
            case PixelType::F32:
                return run_points<float>(src, dst, out_width, out_height, t, opts, topts, ctx);
        }
        fail("unknown pixel type");
    }
    WarpPlan p;
    const Geometry g = check_and_plan(src.width(), src.height(), src.channels(), out_width,
                                      out_height, t, opts, p);
    check_source_type(src.type(), opts);
    switch (src.type()) {
        case PixelType::U8:
            return run<std::uint8_t>(src, dst, g, p, opts, topts, ctx);
        case PixelType::U16:
            return run<std::uint16_t>(src, dst, g, p, opts, topts, ctx);
        case PixelType::F32:
            return run<float>(src, dst, g, p, opts, topts, ctx);
    }
    fail("unknown pixel type");
}

RowRange warp_tiled_source_rows(int src_width, int src_height, int out_width, int out_height,
                                const Transform& t, const WarpOptions& opts, int y0, int y1,
                                Backend backend) {
    tiled::check_side(kOp, src_width, "the source width");
    tiled::check_side(kOp, src_height, "the source height");
    tiled::check_side(kOp, out_width, "the output width");
    tiled::check_side(kOp, out_height, "the output height");
    tiled::check_range(kOp, out_height, y0, y1);
    if (backend != Backend::Cpu && backend != Backend::Auto && backend != Backend::Cuda)
        fail(std::string("source rows are given for the cpu and cuda backends, not ") +
             to_string(backend));
    WarpPlan p;
    const Geometry g = check_and_plan(src_width, src_height, 1, out_width, out_height, t, opts, p);
    const cpu::ResizeRowReach reach(p, g.span_h, y0, y1);
    if (backend != Backend::Cuda || !g.prefilter) return image_rows(g, band_span(reach, g, y0, y1));
    // The cuda prefilter's units depend on the device (its SM count) and the caller may have
    // none: the rows of two units of the largest size beyond the taps at each cut end (or the
    // whole span where the prefilter does not cut, under 32 samples across) hold every band
    // the devices run.
    if (opts.prefilter == 0 && std::min(g.span_w, g.span_h) < 2 * bspline::kMaxFirRadius + 2)
        return image_rows(g, {0, g.span_h});
    auto [lo, hi] = reach.rows(y0, y1);
    if (lo > hi) lo = hi = 0;
    constexpr int kReach = 2 * cpu::kCudaMaxBandUnit;
    return image_rows(g, {std::max(0, lo - kReach), std::min(g.span_h, hi + 1 + kReach)});
}

}  // namespace upres
