// upres::warp_tiled: the zoom/resize warp band by band of output rows (upres/tiled.hpp).
//
// Each band of output rows [y0, y1) needs the source rows its vertical taps name, [lo, hi]
// (cpu::resize_band_rows, from the whole call's tap tables). With the B-spline, those rows'
// coefficients come from a band of the source extended by kBandWarmup rows at each cut end,
// aligned to kBandAlign rows, and prefiltered on its own (cpu::bspline_prefilter_band): the rows
// the taps read are then the whole image's coefficients bit for bit, and so is every output row
// (cpu::warp_resize_band runs the whole call's per-row arithmetic). Full rows keep the row pass
// and the horizontal taps exactly those of the whole call.
#include <upres/tiled.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "core/finite_scan.hpp"
#include "core/span2d.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/warp/warp_backends.hpp"

namespace upres {

namespace {

constexpr const char* kOp = "warp_tiled";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

void check_side(long long v, const char* what) {
    if (v < 1 || v > kMaxTiledDimension)
        fail(std::string(what) + " " + std::to_string(v) + " is outside [1, " +
             std::to_string(kMaxTiledDimension) + "]");
}

// Host buffer of `rows` rows of `row` elements (std::vector: no side limit, unlike Image).
template <class T>
struct Rows {
    std::vector<T> buf;
    std::ptrdiff_t row = 0;
    void reset(int rows, std::ptrdiff_t elems) {
        row = elems;
        const std::size_t n = static_cast<std::size_t>(rows) * static_cast<std::size_t>(elems);
        if (n > buf.capacity()) {  // exactly n (resize alone may double the capacity)
            buf = std::vector<T>();
            buf.reserve(n);
        }
        buf.resize(n);
    }
    T* at(int y) { return buf.data() + static_cast<std::ptrdiff_t>(y) * row; }
};

struct Geometry {
    int sw, sh, c, ow, oh;
    int pad, span_w, span_h;  // the span: the source padded by pad edge samples per side
    bool bspline;             // source rows staged as float (B-spline coefficients)
    bool prefilter;           // and prefiltered here
    int warm;                 // rows of warm-up at a cut end
};

// The span rows a band [y0, y1) reads, extended by the warm-up and aligned: [a, b).
std::pair<int, int> band_span(const WarpPlan& p, const Geometry& g, int y0, int y1) {
    auto [lo, hi] = cpu::resize_band_rows(p, g.span_h, y0, y1);
    if (lo > hi) lo = hi = 0;  // Constant: every row outside, nothing is read
    int a = std::max(0, lo - g.warm), b = std::min(g.span_h, hi + 1 + g.warm);
    if (g.prefilter) {
        a = a / cpu::kBandAlign * cpu::kBandAlign;
        b = std::min(g.span_h, (b + cpu::kBandAlign - 1) / cpu::kBandAlign * cpu::kBandAlign);
    }
    return {a, b};
}

std::size_t band_bytes(const Geometry& g, int out_rows, int span_rows, std::size_t px) {
    const std::size_t stage = g.bspline ? std::size_t{4} * g.span_w * g.c : 0;
    return static_cast<std::size_t>(out_rows) * g.ow * g.c * px +
           static_cast<std::size_t>(span_rows) * (stage + std::size_t{1} * g.sw * g.c * px);
}

// A NaN or an infinity reaches every row of its column through the whole image's IIR
// prefilter but only its band's rows here: refused, as bspline_prefilter refuses it.
void check_finite(Rows<float>& in, int first, int rows, const Geometry& g, const Context& ctx) {
    const std::ptrdiff_t n = std::ptrdiff_t{g.sw} * g.c;
    const std::int64_t bad = find_nonfinite_host(in.buf.data(), n, rows, in.row, ctx.threads);
    if (bad < 0) return;
    const std::int64_t y = bad / n, i = bad % n;
    fail("the source value at (x " + std::to_string(i / g.c) + ", y " + std::to_string(first + y) +
         ", channel " + std::to_string(i % g.c) + ") is " +
         (std::isnan(in.at(static_cast<int>(y))[i]) ? "NaN" : "infinite") +
         "; the B-spline prefilter needs finite values");
}

template <class T>
TiledStats run(RowSource& src, RowSink& dst, const Geometry& g, const WarpPlan& p,
               const WarpOptions& o, const TiledOptions& to, const Context& ctx) {
    // The band height: the largest whose buffers fit the budget. A band's span rows, measured
    // at the top, the middle and the bottom of the output (the middle one has warm-up at both
    // ends), stand for all; bands elsewhere differ by a row or an aligned group at most.
    const auto need = [&](int rows) {
        rows = std::min(g.oh, rows);
        int span = 0;
        for (int y0 : {0, (g.oh - rows) / 2, g.oh - rows}) {
            const auto [a, b] = band_span(p, g, y0, y0 + rows);
            span = std::max(span, b - a);
        }
        return band_bytes(g, rows, std::min(g.span_h, span + 2 * cpu::kBandAlign), sizeof(T));
    };
    int band = to.band_rows > 0 ? std::min(to.band_rows, g.oh) : g.oh;
    std::size_t budget = to.max_memory;
    if (budget == 0) {
        // Automatic: 64 MiB, or more where bands of that size would read fewer than 256 rows of
        // their own (the warm-up, 2 x 64 rows per band, would then cost more than half of the
        // prefilter's work: on a 40000^2 u16 zoom x2, 107-row bands took 53 s, 826-row bands
        // 37 s).
        const int own = std::max(1, static_cast<int>(256.0 * g.oh / g.sh));
        budget = std::max(std::size_t{64} << 20, need(own));
    }
    if (to.band_rows == 0) {
        int lo = 1, hi = g.oh;  // largest band within the budget (need() grows with rows)
        while (lo < hi) {
            const int mid = lo + (hi - lo + 1) / 2;
            if (need(mid) <= budget)
                lo = mid;
            else
                hi = mid - 1;
        }
        band = lo;
        if (to.max_band_rows > 0) band = std::min(band, std::max(1, to.max_band_rows));
        if (to.band_align > 1 && band >= to.band_align) band = band / to.band_align * to.band_align;
        if (need(band) > budget && band < std::min(8, g.oh))
            fail("max_memory " + std::to_string(budget) + " bytes is too small: 8 rows of " +
                 std::to_string(g.ow) + " x " + std::to_string(g.c) +
                 " outputs and their halo need " + std::to_string(need(std::min(8, g.oh))));
    }

    TiledStats st;
    st.band_rows = band;
    Rows<T> in, out;
    Rows<float> stage;
    out.reset(band, std::ptrdiff_t{g.ow} * g.c);
    PrefilterOptions po;
    po.border = g.pad > 0 ? Border::Mirror : tap_border(o.border);
    po.fir_length = o.prefilter;
    for (int y0 = to.first_row; y0 < g.oh; y0 += band) {
        const int y1 = std::min(g.oh, y0 + band);
        const auto [a, b] = band_span(p, g, y0, y1);
        // Image rows behind span rows [a, b): clamped (edge replication of the padded span).
        const int ia = std::clamp(a - g.pad, 0, g.sh - 1),
                  ib = std::clamp(b - 1 - g.pad, 0, g.sh - 1);
        in.reset(ib - ia + 1, std::ptrdiff_t{g.sw} * g.c);
        src.read_rows(ia, ib - ia + 1, in.buf.data(), in.row);
        st.rows_read += ib - ia + 1;
        if constexpr (std::is_same_v<T, float>)
            if (g.prefilter) check_finite(in, ia, ib - ia + 1, g, ctx);
        const Span2D<T> ob{out.buf.data(), g.ow, y1 - y0, g.c, out.row};
        if (g.bspline) {
            stage.reset(b - a, std::ptrdiff_t{g.span_w} * g.c);
            for (int r = a; r < b; ++r) {
                const T* s = in.at(std::clamp(r - g.pad, 0, g.sh - 1) - ia);
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
                                            cpu::ColumnEnds{a > 0, b < g.span_h});
            cpu::warp_resize_band<float, T>(cb, ob, p, g.span_h, y0, a, ctx.threads);
        } else {
            const Span2D<const T> sb{in.buf.data(), g.sw, ib - ia + 1, g.c, in.row};
            cpu::warp_resize_band<T, T>(sb, ob, p, g.span_h, y0, ia, ctx.threads);
        }
        st.buffer_bytes =
            std::max(st.buffer_bytes, (in.buf.capacity() + out.buf.capacity()) * sizeof(T) +
                                          stage.buf.capacity() * sizeof(float));
        dst.write_rows(y0, y1 - y0, out.buf.data(), out.row);
        ++st.bands;
        if (to.progress) to.progress(y1, g.oh);
    }
    dst.commit();
    return st;
}

}  // namespace

TiledStats warp_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                      const Transform& t, const WarpOptions& opts, const TiledOptions& topts,
                      const Context& ctx) {
    check_side(src.width(), "the source width");
    check_side(src.height(), "the source height");
    check_side(out_width, "the output width");
    check_side(out_height, "the output height");
    if (src.channels() < 1 || src.channels() > 4)
        fail("the source has " + std::to_string(src.channels()) + " channels (allowed: 1 to 4)");
    if (t.kind != Transform::Kind::Resize)
        fail(
            "tiled execution runs zoom/resize transforms (Transform::make_resize); the other "
            "transforms need the whole image (upres::warp)");
    check_warp_options(opts, t);
    if (opts.border == Border::Wrap)
        fail(
            "border wrap is not tiled (its prefilter couples the first and the last rows); "
            "allowed: mirror, reflect, nearest, constant");
    if (opts.fast_texture)
        fail("fast_texture is a CUDA mode; tiled execution runs the cpu backend");
    if (opts.prefiltered && opts.interp == Interp::BSpline && src.type() != PixelType::F32)
        fail("prefiltered B-spline coefficients must be a float image");
    if (src.type() != PixelType::F32 && !std::isfinite(opts.fill))
        fail("the fill value is not finite; integer images need a finite fill");
    if (topts.band_rows < 0 || topts.band_rows > out_height)
        fail("band_rows " + std::to_string(topts.band_rows) + " is outside [0, " +
             std::to_string(out_height) + "] (the output's rows; 0: automatic)");
    if (topts.max_band_rows < 0 || topts.band_align < 1)
        fail("max_band_rows must be >= 0 and band_align >= 1");
    if (topts.first_row < 0 || topts.first_row > out_height)
        fail("first_row " + std::to_string(topts.first_row) + " is outside [0, " +
             std::to_string(out_height) + "]");
    if (ctx.backend != Backend::Auto && ctx.backend != Backend::Cpu)
        fail(std::string("tiled execution runs the cpu backend, not ") + to_string(ctx.backend) +
             " (the whole-image call upres::warp runs every backend)");

    Geometry g{};
    g.sw = src.width(), g.sh = src.height(), g.c = src.channels();
    g.ow = out_width, g.oh = out_height;
    const WarpPlan p = make_warp_plan(t, opts, g.sw, g.sh, g.ow, g.oh);
    g.pad = p.pad;
    g.span_w = g.sw + 2 * g.pad, g.span_h = g.sh + 2 * g.pad;
    g.bspline = opts.interp == Interp::BSpline;
    g.prefilter = g.bspline && !opts.prefiltered;
    g.warm = g.prefilter ? cpu::kBandWarmup : 0;
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

}  // namespace upres
