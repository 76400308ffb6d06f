// upres::warp_box and warp_source_box: two-dimensional tiles of the point transforms
// (upres/tiled.hpp).
//
// The outputs of a box read the source around the image of the box under the map: its corners
// for affine maps and for homographies without a pole in the box (the denominator is affine, so
// its sign over the box is that of the corners), the field's values for remap and flow. Those
// coordinates (a pixel of margin for rounding) are folded into the image as map_coord folds
// them, widened by the kernel's taps and clamped: the span samples every output of the box can
// read. With the B-spline prefilter the box grows by kBandWarmup samples at each cut, aligned to
// kBoxAlignX columns and kBandAlign rows (bspline_backends.hpp): prefiltered on its own, its
// inner samples are the whole image's coefficients bit for bit. cpu::warp_box then runs the
// whole call's per-pixel code on the box (warp_cpu.cpp).
#include <upres/tiled.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "core/convert_math.hpp"
#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/span2d.hpp"
#include "core/tiled_bands.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/warp/warp_backends.hpp"

namespace upres {

namespace {

constexpr const char* kOp = "warp_box";

[[noreturn]] void fail(const std::string& msg) { tiled::fail(kOp, msg); }

std::string text(Box b) {
    // Appended piece by piece: GCC 12's -Wrestrict misfires on a chain of operator+.
    std::string s = "[";
    s += std::to_string(b.x0);
    s += ", ";
    s += std::to_string(b.x1);
    s += ") x [";
    s += std::to_string(b.y0);
    s += ", ";
    s += std::to_string(b.y1);
    s += ")";
    return s;
}

// The span samples [first, last] of an axis of n that coordinates in [lo, hi] (span
// coordinates) read, border included; first > last: none (Border::Constant, all outside).
std::pair<int, int> axis_reads(double lo, double hi, int n, Border b) {
    constexpr std::pair<int, int> kAll{0, std::numeric_limits<int>::max()};
    if (!(lo > -kMaxCoord && hi < kMaxCoord)) return kAll;  // also NaN: far or undefined
    lo -= 1.0, hi += 1.0;                                   // rounding of the corners
    const double last = n - 1.0;
    if (lo < 0.0 || hi > last) {  // map_coord folds these coordinates into [0, n - 1]
        switch (b) {
            case Border::Constant:  // outside: the fill, no read
                lo = std::max(lo, 0.0), hi = std::min(hi, last);
                if (lo > hi) return {1, 0};
                break;
            case Border::Nearest:
                lo = std::clamp(lo, 0.0, last), hi = std::clamp(hi, 0.0, last);
                break;
            case Border::Mirror:
            case Border::Reflect: {
                if (lo < -last - 1.0 || hi > 2.0 * last + 1.0) return kAll;
                double flo = std::max(lo, 0.0), fhi = std::min(hi, last);
                if (lo < 0.0) fhi = std::max(fhi, -lo + 1.0);               // u -> -u (- 1)
                if (hi > last) flo = std::min(flo, 2.0 * last - hi - 1.0);  // u -> 2 last - u
                lo = std::max(flo, 0.0), hi = std::min(fhi, last);
                break;
            }
            default:  // Wrap: anywhere
                return kAll;
        }
    }
    // Taps: floor(u) - 1 .. floor(u) + 2 (nearest: floor(u + 0.5)); the ones outside map to
    // within 2 samples of an edge (tap_index), inside [first, last] once clamped, except for
    // Wrap, whose taps there read the opposite edge.
    const long long first = static_cast<long long>(std::floor(lo)) - 2;
    const long long last_tap = static_cast<long long>(std::floor(hi)) + 3;
    if (b == Border::Wrap && (first < 0 || last_tap > n - 1)) return kAll;
    return {static_cast<int>(std::clamp<long long>(first, 0, n - 1)),
            static_cast<int>(std::clamp<long long>(last_tap, 0, n - 1))};
}

struct BoxPlan {
    WarpPlan p;
    int span_w = 0, span_h = 0;
    bool bspline = false, prefilter = false;
    Box span;   // the span samples staged (reads, warm-up, alignment); empty: none
    Box image;  // the source pixels behind them (edge replication of the padded span)
};

// `image`: "output" or "source".
void check_box(Box b, int w, int h, const char* image) {
    if (b.x0 < 0 || b.y0 < 0 || b.x1 > w || b.y1 > h || b.empty())
        fail(std::string("the ") + image + " box " + text(b) +
             " is not a non-empty box inside the " + std::to_string(w) + " x " + std::to_string(h) +
             " " + image);
}

// Every check that needs no pixels, and the boxes: the cpu backend's (cuda == nullptr), or the
// cuda backend's (CudaBoxUnits, warp_backends.hpp).
BoxPlan plan_box(int sw, int sh, int ow, int oh, const Transform& t, const WarpOptions& o, Box out,
                 const Context& ctx, const CudaBoxUnits* cuda = nullptr) {
    tiled::check_side(kOp, sw, "the source width");
    tiled::check_side(kOp, sh, "the source height");
    tiled::check_side(kOp, ow, "the output width");
    tiled::check_side(kOp, oh, "the output height");
    check_box(out, ow, oh, "output");
    if (t.kind == Transform::Kind::Resize)
        fail(
            "zoom/resize runs in bands of rows (warp_tiled, warp_tiled_source_rows); boxes are for "
            "affine, perspective, remap and flow maps");
    check_warp_options(o, t);
    const bool bspline = o.interp == Interp::BSpline;
    if (o.border == Border::Wrap && bspline && !o.prefiltered)
        fail(
            "border wrap with the B-spline prefilter is not tiled (its recursions couple opposite "
            "edges); allowed: mirror, reflect, nearest, constant, or prefiltered coefficients");
    if (o.fast_texture)
        fail("fast_texture is not tiled (its texture reads take whole images); the exact path is");
    check_transform(t, out.width(), out.height(), Location::Host, true, ctx);
    BoxPlan b;
    b.p = make_warp_plan(t, o, sw, sh, ow, oh);
    b.span_w = sw + 2 * b.p.pad, b.span_h = sh + 2 * b.p.pad;
    b.bspline = bspline;
    b.prefilter = bspline && !o.prefiltered;

    // The coordinates' range over the box, in span coordinates.
    double ulo = std::numeric_limits<double>::infinity(), uhi = -ulo, vlo = ulo, vhi = -ulo;
    const auto add = [&](double u, double v) {
        if (!std::isfinite(u) || !std::isfinite(v)) {  // far or undefined: every sample
            ulo = vlo = -std::numeric_limits<double>::infinity();
            uhi = vhi = std::numeric_limits<double>::infinity();
            return;
        }
        ulo = std::min(ulo, u), uhi = std::max(uhi, u);
        vlo = std::min(vlo, v), vhi = std::max(vhi, v);
    };
    const double pad = b.p.pad;
    if (t.kind == Transform::Kind::Affine || t.kind == Transform::Kind::Perspective) {
        const double* m = b.p.m;
        // The cuda kernels' whole tiles (CudaBoxUnits::tile).
        const int k = cuda && cuda->tile > 0 ? cuda->tile : 1;
        const int xe = (out.x1 + k - 1) / k * k, ye = (out.y1 + k - 1) / k * k;
        bool pole = false;
        if (t.kind == Transform::Kind::Perspective) {
            int pos = 0, neg = 0;
            for (int y : {out.y0, ye - 1})
                for (int x : {out.x0, xe - 1}) {
                    const double w = m[6] * x + m[7] * y + m[8];
                    pos += w > 0, neg += w < 0;
                }
            pole = pos != 4 && neg != 4;
        }
        if (pole) {
            add(std::numeric_limits<double>::infinity(), 0.0);
        } else {
            for (int y : {out.y0, ye - 1})
                for (int x : {out.x0, xe - 1}) {
                    double u, v;
                    map_matrix<double>(m, t.kind, x, y, u, v);
                    add(u + pad, v + pad);
                }
        }
    } else {  // Remap, Flow: the box's field (checked finite)
        const bool flow = t.kind == Transform::Kind::Flow;
        for (int y = 0; y < out.height(); ++y) {
            const float* f = t.field.row(y);
            for (int x = 0; x < out.width(); ++x) {
                const double u = flow ? out.x0 + x + static_cast<double>(f[2 * x]) : f[2 * x];
                const double v =
                    flow ? out.y0 + y + static_cast<double>(f[2 * x + 1]) : f[2 * x + 1];
                add(u + pad, v + pad);
            }
        }
    }
    if (cuda) {  // the kernels' boxes around the taps (infinite ranges stay infinite)
        ulo -= cuda->margin, uhi += cuda->margin;
        vlo -= cuda->margin, vhi += cuda->margin;
    }
    auto [x0, x1] = axis_reads(ulo, uhi, b.span_w, b.p.border);
    auto [y0, y1] = axis_reads(vlo, vhi, b.span_h, b.p.border);
    x1 = std::min(x1, b.span_w - 1), y1 = std::min(y1, b.span_h - 1);
    if (x0 > x1 || y0 > y1) return b;  // nothing read
    if (cuda && b.p.border == Border::Constant) {
        // The cuda kernels stage their tiles' boxes through the taps' mirror (tap_border) and the
        // recursive kernel through the prefilter's extension (mirror too), then decide the fill.
        std::tie(x0, x1) = axis_reads(ulo, uhi, b.span_w, Border::Mirror);
        std::tie(y0, y1) = axis_reads(vlo, vhi, b.span_h, Border::Mirror);
        x1 = std::min(x1, b.span_w - 1), y1 = std::min(y1, b.span_h - 1);
    }
    if (cuda && cuda->coefficients && cuda->unit_x == 0) {
        b.span = {0, 0, b.span_w, b.span_h};  // the prefilter does not cut this span
    } else if (cuda && cuda->coefficients) {
        // Whole units of the prefilter's kernel, two more at each end that is not the span's,
        // the first column a multiple of the unit and of 4.
        const int ux = cuda->unit_x, uy = cuda->unit_y, ax = std::lcm(ux, 4);
        b.span = {std::max(0, x0 / ux * ux - 2 * ux) / ax * ax, std::max(0, y0 / uy * uy - 2 * uy),
                  std::min(b.span_w, (x1 / ux + 3) * ux), std::min(b.span_h, (y1 / uy + 3) * uy)};
        // A bound of the unit: a unit u <= uy starts its box at y0 / u u - 2 u > y0 - 3 u and
        // ends it at (y1 / u + 3) u <= y1 + 3 u.
        if (cuda->unit_y_bound)
            b.span.y0 = std::max(0, y0 - 3 * uy), b.span.y1 = std::min(b.span_h, y1 + 1 + 3 * uy);
    } else if (cuda) {
        b.span = {x0 / 4 * 4, y0, x1 + 1, y1 + 1};
    } else if (b.prefilter) {
        const auto [ax, bx] = cpu::prefilter_box_columns(b.span_w, cpu::kBandWarmup, x0, x1 + 1);
        const auto [ay, by] = cpu::prefilter_band_span(b.span_h, cpu::kBandWarmup, y0, y1 + 1);
        b.span = {ax, ay, bx, by};
    } else {
        b.span = {x0, y0, x1 + 1, y1 + 1};
    }
    b.image = {std::clamp(b.span.x0 - b.p.pad, 0, sw - 1),
               std::clamp(b.span.y0 - b.p.pad, 0, sh - 1),
               std::clamp(b.span.x1 - 1 - b.p.pad, 0, sw - 1) + 1,
               std::clamp(b.span.y1 - 1 - b.p.pad, 0, sh - 1) + 1};
    return b;
}

// On the cuda backend each thread of the split field kernel takes one path for its group of four
// outputs (rows 8 apart) where all four are inside the image, another where not, and an output's
// bits may depend on that path: boxes whose field was padded beyond `out` (with samples inside)
// differed from the whole call in the last bit on 3-channel float outputs (H200). A remap's or
// flow's box therefore lies on the kernels' whole tiles, its field the whole call's there.
void check_cuda_field_box(const Transform& t, Box out, int ow, int oh) {
    if (t.kind != Transform::Kind::Remap && t.kind != Transform::Kind::Flow) return;
    const Box g = cuda_tile_box(out, ow, oh);
    if (g.x0 != out.x0 || g.y0 != out.y0 || g.x1 != out.x1 || g.y1 != out.y1)
        fail("on the cuda backend a remap's or flow's output box lies on the kernels' " +
             std::to_string(kCudaBoxAlign) + " x " + std::to_string(kCudaBoxAlign) +
             " tiles (its bits depend on the field around each output): " + text(out) +
             " is not; allowed: x0 and y0 multiples of " + std::to_string(kCudaBoxAlign) +
             ", x1 and y1 too or the output's side");
}

template <class T>
void run(ImageView<const T> src, Box in, int sw, int sh, ImageView<T> dst, Box out, int ow, int oh,
         const Transform& t, const WarpOptions& o, const Context& ctx) {
    if (ctx.backend != Backend::Auto && ctx.backend != Backend::Cpu && ctx.backend != Backend::Cuda)
        fail(std::string("boxes run the cpu and cuda backends, not ") + to_string(ctx.backend) +
             " (the whole-image call runs every backend)");
    const bool on_cuda = ctx.backend == Backend::Cuda;
    if (on_cuda) require_cuda(kOp);
    if (dst.empty() || dst.data() == nullptr) fail("the destination is empty");
    if (dst.on_device() || (!in.empty() && src.on_device()))
        fail("boxes are computed in host memory");
    if (dst.channels() < 1 || dst.channels() > 4 ||
        (!in.empty() && dst.channels() != src.channels()))
        fail("the source has " + std::to_string(src.channels()) + " channels and the destination " +
             std::to_string(dst.channels()) + " (allowed: 1 to 4, the same)");
    // An empty source box: no pixels (the outputs must then read none).
    if (!in.empty()) {
        check_box(in, sw, sh, "source");
        if (src.data() == nullptr || src.width() != in.width() || src.height() != in.height())
            fail("the source holds " + std::to_string(src.width()) + " x " +
                 std::to_string(src.height()) + " pixels but its box " + text(in) + " has " +
                 std::to_string(in.width()) + " x " + std::to_string(in.height()));
    }
    if (dst.width() != out.width() || dst.height() != out.height())
        fail("the destination is " + std::to_string(dst.width()) + " x " +
             std::to_string(dst.height()) + " but the output box " + text(out) + " is " +
             std::to_string(out.width()) + " x " + std::to_string(out.height()));
    if constexpr (!std::is_same_v<T, float>) {
        if (o.prefiltered && o.interp == Interp::BSpline)
            fail("prefiltered B-spline coefficients must be a float image");
        if (!std::isfinite(o.fill))
            fail(
                "the fill value is not finite; integer images need a "
                "finite fill");
    }
    const BoxPlan b = plan_box(sw, sh, ow, oh, t, o, out, ctx);
    const int c = dst.channels();
    if (on_cuda) {
        check_cuda_field_box(t, out, ow, oh);
        if constexpr (std::is_same_v<T, float>)
            if (b.prefilter && !in.empty())  // the whole call's check, on the pixels it has
                tiled::check_finite(kOp, src.data(), src.width(), c, in.y0, src.height(),
                                    src.stride(), ctx.threads, in.x0);
#if UPRES_HAVE_CUDA
        const DeviceScope on(ctx, Backend::Cuda, kOp);
        cuda::warp_box(src, in, sw, sh, dst, out, ow, oh, t, o, ctx);
        return;
#else
        throw Error(ErrorCode::Internal, "warp_box: a CUDA device without CUDA support");
#endif
    }
    const Span2D<T> d = span_of(dst);
    if (b.span.empty()) {  // every output is outside: the fill (as the whole call's border rule)
        const T fill = saturate_from_float<T>(o.fill);
        for (int y = 0; y < d.height; ++y) std::fill_n(d.row(y), std::ptrdiff_t{d.width} * c, fill);
        return;
    }
    const Box& need = b.image;
    if (in.empty() || need.x0 < in.x0 || need.y0 < in.y0 || need.x1 > in.x1 || need.y1 > in.y1)
        fail("the source box " + text(in) + " does not hold the pixels " + text(need) +
             " the output box " + text(out) + " reads (warp_source_box)");
    // The span box, staged: src's pixels (edge replication beyond the image for a padded
    // span), as floats for the B-spline; kBoxSlack readable elements after it.
    const int w = b.span.width(), h = b.span.height();
    const std::ptrdiff_t row = std::ptrdiff_t{w} * c;
    const int threads = std::int64_t{w} * h < (1 << 14) ? 1 : ctx.threads;
    // Span columns [xa, xb) map to image columns inside the image; the others (a padded span's
    // edges) replicate the first or the last column.
    const int ix0 = b.span.x0 - b.p.pad;
    const int xa = std::clamp(-ix0, 0, w), xb = std::clamp(sw - ix0, xa, w);
    auto stage = [&](auto* buf) {
        using S = std::remove_pointer_t<decltype(buf)>;
        for (int y = 0; y < h; ++y) {
            const T* s = src.row(std::clamp(b.span.y0 + y - b.p.pad, 0, sh - 1) - in.y0) -
                         std::ptrdiff_t{in.x0} * c;  // image column x at s + x c
            S* r = buf + y * row;
            const T* first = s;
            const T* last = s + std::ptrdiff_t{sw - 1} * c;
            for (int x = 0; x < xa; ++x)
                for (int k = 0; k < c; ++k) r[std::ptrdiff_t{x} * c + k] = static_cast<S>(first[k]);
            const T* mid = s + std::ptrdiff_t{ix0 + xa} * c;
            S* rm = r + std::ptrdiff_t{xa} * c;
            const std::ptrdiff_t n = std::ptrdiff_t{xb - xa} * c;
            for (std::ptrdiff_t i = 0; i < n; ++i) rm[i] = static_cast<S>(mid[i]);
            for (int x = xb; x < w; ++x)
                for (int k = 0; k < c; ++k) r[std::ptrdiff_t{x} * c + k] = static_cast<S>(last[k]);
        }
    };
    const std::size_t n = static_cast<std::size_t>(row) * h + cpu::kBoxSlack;
    WarpPlan p = b.p;
    if (t.kind == Transform::Kind::Remap || t.kind == Transform::Kind::Flow)
        p.field = span_of(t.field);
    if (b.bspline) {
        auto buf = std::make_unique_for_overwrite<float[]>(n);
        stage(buf.get());
        std::fill_n(buf.get() + row * h, cpu::kBoxSlack, 0.0f);
        const Span2D<float> sb{buf.get(), w, h, c, row};
        if (b.prefilter) {
            if constexpr (std::is_same_v<T, float>)  // the pixels the span is staged from
                tiled::check_finite(
                    kOp, src.row(need.y0 - in.y0) + std::ptrdiff_t{need.x0 - in.x0} * c,
                    need.width(), c, need.y0, need.height(), src.stride(), threads, need.x0);
            PrefilterOptions po;
            po.border = b.p.pad > 0 ? Border::Mirror : tap_border(o.border);
            po.fir_length = o.prefilter;
            const Span2D<const float> cb{sb.data, w, h, c, row};
            cpu::bspline_prefilter_band(
                cb, sb, po, threads,
                cpu::BandEnds{b.span.y0 > 0, b.span.y1<b.span_h, b.span.x0> 0,
                              b.span.x1 < b.span_w});
        }
        cpu::warp_box<float, T>(Span2D<const float>{sb.data, w, h, c, row}, b.span.x0, b.span.y0,
                                b.span_w, b.span_h, d, out.x0, out.y0, p, ctx.threads);
    } else {
        auto buf = std::make_unique_for_overwrite<T[]>(n);
        stage(buf.get());
        std::fill_n(buf.get() + row * h, cpu::kBoxSlack, T{});
        cpu::warp_box<T, T>(Span2D<const T>{buf.get(), w, h, c, row}, b.span.x0, b.span.y0,
                            b.span_w, b.span_h, d, out.x0, out.y0, p, ctx.threads);
    }
}

}  // namespace

Box warp_source_box(int src_width, int src_height, int out_width, int out_height,
                    const Transform& t, const WarpOptions& opts, Box out, Backend backend,
                    int channels) {
    if (backend == Backend::Auto || backend == Backend::Cpu)
        return plan_box(src_width, src_height, out_width, out_height, t, opts, out, Context{})
            .image;
    if (backend != Backend::Cuda)
        fail(std::string("source boxes are given for the cpu and cuda backends, not ") +
             to_string(backend));
    if (channels < 1 || channels > 4)
        fail("the source has " + std::to_string(channels) + " channels (allowed: 1 to 4)");
#if UPRES_HAVE_CUDA
    // The checks first (the units' planning assumes a valid call).
    (void)plan_box(src_width, src_height, out_width, out_height, t, opts, out, Context{});
    const CudaBoxUnits u = cuda::point_units_any(src_width, src_height, channels, t, opts);
    // The device computes the box grown to its kernels' whole tiles (a remap's or flow's box is
    // on them).
    check_cuda_field_box(t, out, out_width, out_height);
    const BoxPlan b = plan_box(src_width, src_height, out_width, out_height, t, opts,
                               cuda_tile_box(out, out_width, out_height), Context{}, &u);
    return b.span.empty() ? Box{} : b.image;
#else
    require_cuda("warp_source_box");  // throws: built without CUDA
    return {};
#endif
}

CudaPointBox cuda_point_box(int src_width, int src_height, int out_width, int out_height,
                            const Transform& t, const WarpOptions& opts, Box out,
                            const CudaBoxUnits& units) {
    const BoxPlan b =
        plan_box(src_width, src_height, out_width, out_height, t, opts, out, Context{}, &units);
    return {b.span, b.span.empty() ? Box{} : b.image};
}

void warp_box(ImageView<const std::uint8_t> src, Box in, int src_width, int src_height,
              ImageView<std::uint8_t> dst, Box out, int out_width, int out_height,
              const Transform& t, const WarpOptions& opts, const Context& ctx) {
    run(src, in, src_width, src_height, dst, out, out_width, out_height, t, opts, ctx);
}
void warp_box(ImageView<const std::uint16_t> src, Box in, int src_width, int src_height,
              ImageView<std::uint16_t> dst, Box out, int out_width, int out_height,
              const Transform& t, const WarpOptions& opts, const Context& ctx) {
    run(src, in, src_width, src_height, dst, out, out_width, out_height, t, opts, ctx);
}
void warp_box(ImageView<const float> src, Box in, int src_width, int src_height,
              ImageView<float> dst, Box out, int out_width, int out_height, const Transform& t,
              const WarpOptions& opts, const Context& ctx) {
    run(src, in, src_width, src_height, dst, out, out_width, out_height, t, opts, ctx);
}

}  // namespace upres
