// upres::warp: validation, plan building, B-spline prefilter staging and backend dispatch (the
// only #if UPRES_HAVE_CUDA of the op).
#include <upres/warp.hpp>

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "core/border_math.hpp"
#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/finite_scan.hpp"
#include "core/format_number.hpp"
#include "core/overlap.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_schedule.hpp"
#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#include "core/device_temp.hpp"
#include "core/finite_scan_cuda.hpp"
#include "ops/warp/warp_cuda.hpp"
#endif

namespace upres {

namespace {

constexpr const char* kOp = "warp";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

void check_matrix_finite(const double* m, int n, const char* what) {
    for (int i = 0; i < n; ++i)
        if (!std::isfinite(m[i]))
            fail(std::string(what) + " coefficient " + std::to_string(i) + " is " +
                 (std::isnan(m[i]) ? "NaN" : "infinite"));
}

// |det| relative to the size of the entries: singular (or numerically so) matrices are refused.
void check_affine(const Affine& a) {
    check_matrix_finite(a.m, 6, "affine");
    const double* m = a.m;
    const double det = m[0] * m[4] - m[1] * m[3];
    double s = 0.0;
    for (int i : {0, 1, 3, 4}) s = std::max(s, std::abs(m[i]));
    const std::string mat = "[[" + format_number(m[0]) + ", " + format_number(m[1]) + "], [" +
                            format_number(m[3]) + ", " + format_number(m[4]) + "]]";
    if (!std::isfinite(det)) fail("the affine matrix " + mat + " overflows (its determinant)");
    if (!(std::abs(det) > 1e-12 * s * s))
        fail("the affine matrix " + mat + " is singular (determinant " + format_number(det) + ")");
}

void check_homography(const Homography& hm) {
    check_matrix_finite(hm.h, 9, "homography");
    const double* h = hm.h;
    const double det = h[0] * (h[4] * h[8] - h[5] * h[7]) - h[1] * (h[3] * h[8] - h[5] * h[6]) +
                       h[2] * (h[3] * h[7] - h[4] * h[6]);
    double s = 0.0;
    for (int i = 0; i < 9; ++i) s = std::max(s, std::abs(h[i]));
    if (!std::isfinite(det)) fail("the homography overflows (its determinant)");
    if (!(std::abs(det) > 1e-12 * s * s * s))
        fail("the homography is singular (determinant " + format_number(det) + ")");
}

// The field's first non-finite value, at row-major index i of its (dx, dy) / (u, v) samples
// (w pixels per row), is NaN or infinite: the error.
[[noreturn]] void fail_nonfinite(const char* what, int w, std::int64_t i, bool nan) {
    const std::int64_t y = i / (2 * std::int64_t{w}), r = i % (2 * std::int64_t{w});
    fail(std::string("the ") + what + " field value at (x " + std::to_string(r / 2) + ", y " +
         std::to_string(y) + ", channel " + std::to_string(r % 2) + ") is " +
         (nan ? "NaN" : "infinite") + "; the field must be finite");
}

// The field's checks: not empty, 2 channels, dst's size, the images' memory and, for a host
// field with `values`, every value finite (find_nonfinite_host on ctx.threads). A device field's
// values are checked by the warp kernels themselves (warp_impl).
void check_field(const ImageView<const float>& f, int w, int h, Location loc, const char* what,
                 bool values, const Context& ctx) {
    if (f.empty() || f.data() == nullptr) fail(std::string("the ") + what + " field is empty");
    if (f.channels() != 2)
        fail(std::string("the ") + what + " field has " + std::to_string(f.channels()) +
             " channels (2 needed: " + (std::string(what) == "remap" ? "u, v" : "dx, dy") + ")");
    if (f.width() != w || f.height() != h)
        fail(std::string("the ") + what + " field is " + std::to_string(f.width()) + "x" +
             std::to_string(f.height()) + " but the output is " + std::to_string(w) + "x" +
             std::to_string(h) + " (they must match)");
    if (f.location() != loc)
        fail(std::string("the ") + what + " field is in " + to_string(f.location()) +
             " memory but the images are in " + to_string(loc) + " memory");
    if (!values || loc != Location::Host) return;
    const std::int64_t bad =
        find_nonfinite_host(f.data(), std::ptrdiff_t{w} * 2, h, f.stride(), ctx.threads);
    if (bad >= 0) {
        const std::int64_t y = bad / (2 * std::int64_t{w}), i = bad % (2 * std::int64_t{w});
        fail_nonfinite(what, w, bad, std::isnan(f.row(static_cast<int>(y))[i]));
    }
}

}  // namespace

void check_warp_options(const WarpOptions& o, const Transform& t) {
    switch (o.interp) {
        case Interp::Nearest:
        case Interp::Linear:
        case Interp::Cubic:
        case Interp::BSpline:
            break;
        default:
            fail("unknown interpolation value " + std::to_string(static_cast<int>(o.interp)));
    }
    if (!is_known_border(o.border))
        fail("unknown border value " + std::to_string(static_cast<int>(o.border)));
    if (o.prefilter != 0 && (o.prefilter < 3 || o.prefilter > 31 || o.prefilter % 2 == 0))
        fail("B-spline prefilter FIR length " + std::to_string(o.prefilter) +
             " is not allowed (0: exact IIR, or an odd length 3..31)");
    if (!std::isfinite(o.cubic_a) || o.cubic_a < -3.0 || o.cubic_a > 0.0)
        fail("cubic_a " + format_number(o.cubic_a) +
             " is outside [-3, 0] (Keys: -0.5, OpenCV: -0.75)");
    if (o.antialias) {
        if (t.kind != Transform::Kind::Resize)
            fail("antialias applies to zoom/resize only, not to this transform");
        if (o.interp != Interp::Linear && o.interp != Interp::Cubic)
            fail(std::string("antialias needs interp linear or cubic (MATLAB imresize "
                             "kernels), not ") +
                 to_string(o.interp));
    }
}

void check_transform(const Transform& t, int dw, int dh, Location loc, bool field_values,
                     const Context& ctx) {
    const char* field_name = t.kind == Transform::Kind::Flow ? "flow" : "remap";
    switch (t.kind) {
        case Transform::Kind::Affine:
            check_affine(t.affine);
            break;
        case Transform::Kind::Perspective:
            check_homography(t.homography);
            break;
        case Transform::Kind::Resize:
            break;
        case Transform::Kind::Remap:
        case Transform::Kind::Flow:
            check_field(t.field, dw, dh, loc, field_name, field_values, ctx);
            break;
        default:
            fail("unknown transform kind " + std::to_string(static_cast<int>(t.kind)));
    }
}

WarpPlan make_warp_plan(const Transform& t, const WarpOptions& o, int sw, int sh, int dw, int dh) {
    WarpPlan p;
    p.kind = t.kind;
    p.interp = o.interp;
    p.border = o.border;
    p.fill = o.fill;
    p.cubic_a = static_cast<float>(o.cubic_a);
    p.antialias = o.antialias;
    p.fast_texture = o.fast_texture;
    switch (t.kind) {
        case Transform::Kind::Affine:
            for (int i = 0; i < 6; ++i) p.m[i] = t.affine.m[i];
            p.m[6] = 0, p.m[7] = 0, p.m[8] = 1;
            break;
        case Transform::Kind::Perspective:
            for (int i = 0; i < 9; ++i) p.m[i] = t.homography.h[i];
            break;
        case Transform::Kind::Resize:
            resize_matrix(sw, sh, dw, dh, p.m);
            break;
        case Transform::Kind::Remap:
        case Transform::Kind::Flow:
            p.field = span_of(t.field);
            break;
    }
    if (o.interp == Interp::BSpline && o.border == Border::Nearest)
        p.pad = o.prefiltered ? kPrefilteredNearestPad : kBSplineNearestPad;
    return p;
}

namespace {

// Backend calls, one place for the pixel types.
template <class S, class D>
void run_backend(Backend b, Span2D<const S> src, Span2D<D> dst, const WarpPlan& p,
                 const Context& ctx) {
    switch (b) {
        case Backend::Reference:
            return ref::warp(src, dst, p);
        case Backend::Cpu:
            return cpu::warp(src, dst, p, ctx.threads);
        case Backend::Cuda:
#if UPRES_HAVE_CUDA
            return cuda::warp(src, dst, p, ctx.cuda_stream);
#endif
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, "warp: unresolved backend");
}

void prefilter_backend(Backend b, ImageView<const float> src, ImageView<float> c,
                       const PrefilterOptions& po, const Context& ctx) {
    const Span2D<const float> s = span_of(src);
    switch (b) {
        case Backend::Reference:
            return ref::bspline_prefilter(s, span_of(c), po);
        case Backend::Cpu:
            return cpu::bspline_prefilter(s, span_of(c), po, ctx.threads);
        case Backend::Cuda:
#if UPRES_HAVE_CUDA
            return cuda::bspline_prefilter(s, span_of(c), po, ctx.cuda_stream);
#endif
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, "warp: unresolved backend");
}

// A w x h x c float image in host memory (an Image) or on the device, where it is a
// stream-ordered temporary of upres's pool (core/device_temp.hpp), ordered on ctx.cuda_stream:
// once the pool holds enough memory, no allocation.
struct FloatImage {
    Image<float> host;
#if UPRES_HAVE_CUDA
    cuda::DeviceTemp dev;
#endif
    ImageView<float> view;
};

FloatImage float_image(Location loc, int w, int h, int c, const Context& ctx,
                       [[maybe_unused]] const char* what) {
    FloatImage f;
    if (loc == Location::Host) {
        f.host = Image<float>(w, h, c, Location::Host);
        f.view = f.host.view();
        return f;
    }
#if UPRES_HAVE_CUDA
    f.dev = cuda::DeviceTemp(sizeof(float) * static_cast<std::size_t>(w) * h * c,
                             static_cast<cudaStream_t>(ctx.cuda_stream), what);
    f.view = ImageView<float>(f.dev.as<float>(), w, h, c, 0, Location::Device);
    return f;
#else
    (void)ctx;
    throw Error(ErrorCode::BackendUnavailable, "warp: built without CUDA");
#endif
}

// src converted to float in a (w + 2 pad) x (h + 2 pad) image of src's memory, the borders
// filled by edge replication (rows first, then whole columns).
template <class T>
FloatImage edge_padded(ImageView<const T> src, int pad, const Context& ctx, const char* what) {
    const int w = src.width(), h = src.height(), W = w + 2 * pad, H = h + 2 * pad;
    FloatImage out = float_image(src.location(), W, H, src.channels(), ctx, what);
    const ImageView<float> sv = out.view;
    ImageView<float> inner = sv.sub(pad, pad, w, h);
    if constexpr (std::is_same_v<T, float>)
        copy(src, inner, ctx.cuda_stream);
    else
        convert(src, inner, /*normalize=*/false, ctx.cuda_stream, ctx.threads);
    for (int k = 0; k < pad; ++k) {
        copy(ImageView<const float>(sv.sub(pad, pad, w, 1)), sv.sub(pad, k, w, 1), ctx.cuda_stream);
        copy(ImageView<const float>(sv.sub(pad, pad + h - 1, w, 1)), sv.sub(pad, pad + h + k, w, 1),
             ctx.cuda_stream);
    }
    for (int k = 0; k < pad; ++k) {
        copy(ImageView<const float>(sv.sub(pad, 0, 1, H)), sv.sub(k, 0, 1, H), ctx.cuda_stream);
        copy(ImageView<const float>(sv.sub(pad + w - 1, 0, 1, H)), sv.sub(pad + w + k, 0, 1, H),
             ctx.cuda_stream);
    }
    return out;
}

// B-spline coefficients of src (in src's memory), padded by `pad` edge samples per side.
// Float sources without padding are prefiltered straight into the coefficients; otherwise the
// source is converted (and padded) into a staging image first, which the prefilter then reads:
// in place on the host, into a second temporary on the device (an in-place device prefilter
// copies its input first).
template <class T>
FloatImage bspline_coefficients(ImageView<const T> src, int pad, Border border, int fir, Backend b,
                                const Context& ctx) {
    PrefilterOptions po;
    po.border = pad > 0 ? Border::Mirror : tap_border(border);
    po.fir_length = fir;
    if constexpr (std::is_same_v<T, float>) {
        if (pad == 0) {  // prefilter straight from the image: no staging copy
            FloatImage out = float_image(src.location(), src.width(), src.height(), src.channels(),
                                         ctx, "warp (B-spline coefficients)");
            prefilter_backend(b, src, out.view, po, ctx);
            return out;
        }
    }
    FloatImage stage = edge_padded(src, pad, ctx, "warp (B-spline staging)");
    if (!src.on_device()) {
        prefilter_backend(b, stage.view, stage.view, po, ctx);
        return stage;
    }
    FloatImage out = float_image(src.location(), stage.view.width(), stage.view.height(),
                                 src.channels(), ctx, "warp (B-spline coefficients)");
    prefilter_backend(b, stage.view, out.view, po, ctx);
    return out;  // the device staging is freed in stream order after the prefilter
}

template <class T>
void warp_run(ImageView<const T> src, ImageView<T> dst, const Transform& t, const WarpOptions& opts,
              const Context& ctx, unsigned long long* field_bad);

// Validation (every check before any work), then warp_run.
template <class T>
void warp_impl(ImageView<const T> src, ImageView<T> dst, const Transform& t,
               const WarpOptions& opts, const Context& ctx) {
    if (src.empty() || src.data() == nullptr) fail("the source image is empty");
    if (dst.empty() || dst.data() == nullptr) fail("the destination image is empty");
    if (src.channels() != dst.channels())
        fail("source has " + std::to_string(src.channels()) + " channels but destination has " +
             std::to_string(dst.channels()) + " (they must match)");
    if (src.location() != dst.location())
        fail(std::string("source in ") + to_string(src.location()) + " memory but destination in " +
             to_string(dst.location()) + " memory (both must live in the same place)");
    if (views_overlap(src, dst)) fail("source and destination overlap (no in-place warps)");
    check_warp_options(opts, t);
    if constexpr (!std::is_floating_point_v<T>)
        if (opts.prefiltered && opts.interp == Interp::BSpline)
            fail(
                "prefiltered B-spline coefficients must be a float image (they are real numbers "
                "outside the pixel range), not " +
                std::string(to_string(PixelTraits<T>::type)));
    // Integer outputs are rounded and saturated, so any finite fill has a meaning (e.g. -5 gives
    // 0 on u8); a NaN or infinite one has none.
    if constexpr (!std::is_floating_point_v<T>)
        if (!std::isfinite(opts.fill))
            fail(std::string("the fill value is ") + (std::isnan(opts.fill) ? "NaN" : "infinite") +
                 "; " + (std::is_same_v<T, std::uint8_t> ? "u8" : "u16") +
                 " images need a finite fill (rounded and saturated to the pixel range; NaN or "
                 "infinite fills are for float images)");
    check_transform(t, dst.width(), dst.height(), src.location(), opts.check_field, ctx);
#if UPRES_HAVE_CUDA
    const char* field_name = t.kind == Transform::Kind::Flow ? "flow" : "remap";
    // A device field's values: every kernel reports the outputs whose entry is not finite into
    // one device word (WarpPlan::field_bad), read back after the warp (one synchronization, no
    // separate pass over the field; a scan before the warp cost a read of the field and a round
    // trip to the host before the warp made the public flow warp on device images 2.3x slower).
    const bool has_field = t.kind == Transform::Kind::Remap || t.kind == Transform::Kind::Flow;
    if (has_field && opts.check_field && src.on_device()) {
        const cuda::NonfiniteReport report(ctx.cuda_stream, "warp (field check)");
        warp_run<T>(src, dst, t, opts, ctx, report.device());
        const std::int64_t code = report.read();
        if (code >= 0) fail_nonfinite(field_name, dst.width(), code >> 1, (code & 1) != 0);
        return;
    }
#endif
    warp_run<T>(src, dst, t, opts, ctx, nullptr);
}

// The warp itself, on arguments warp_impl has validated (the staged call below reuses that
// validation: its device copies have the same shapes and values, so the field is scanned once).
// field_bad: WarpPlan::field_bad (device fields; nullptr: not checked here).
template <class T>
void warp_run(ImageView<const T> src, ImageView<T> dst, const Transform& t, const WarpOptions& opts,
              const Context& ctx, unsigned long long* field_bad) {
    const Backend b = resolve_backend(ctx, src.location(), kOp);
    const DeviceScope device_scope(ctx, b, kOp);
    if (opts.fast_texture && b != Backend::Cuda)
        fail(std::string("fast_texture (hardware texture filtering) needs the cuda backend, not ") +
             to_string(b));
    if (b == Backend::Cuda && !src.on_device()) {
#if UPRES_HAVE_CUDA
        // Host data on the CUDA backend: stage through device memory and back.
        constexpr const char* kWhat = "warp (staging)";
        const auto ds = cuda::upload(src, ctx.cuda_stream, kWhat);
        const cuda::PooledImage<T> dd(dst.width(), dst.height(), dst.channels(), ctx.cuda_stream,
                                      kWhat);
        std::optional<cuda::PooledImage<float>> df;
        Transform td = t;
        if (t.kind == Transform::Kind::Remap || t.kind == Transform::Kind::Flow) {
            df.emplace(cuda::upload(t.field, ctx.cuda_stream, kWhat));
            td.field = df->cview();
        }
        Context dctx = ctx;
        dctx.backend = Backend::Cuda;
        warp_run<T>(ds.cview(), dd.view(), td, opts, dctx, nullptr);
        copy(dd.cview(), dst, ctx.cuda_stream);
        synchronize(ctx);
        return;
#else
        throw Error(ErrorCode::BackendUnavailable, "warp: built without CUDA");
#endif
    }

    WarpPlan p = make_warp_plan(t, opts, src.width(), src.height(), dst.width(), dst.height());
    p.field_bad = field_bad;
#if UPRES_HAVE_CUDA
    // CUDA: the recursive fused kernel (exact prefilter recursions in shared memory +
    // interpolation, warp_cuda.hpp) where the schedule policy lists it first and the plan's boxes
    // fit; same function up to float rounding.
    if constexpr (std::is_same_v<T, float>) {
        if (b == Backend::Cuda && !(opts.prefiltered && opts.interp == Interp::BSpline) &&
            warp_schedule::candidates(warp_schedule::case_of(p, PixelType::F32, PixelType::F32,
                                                             src.channels(), opts.prefilter))[0] ==
                warp_schedule::Kernel::RecFused &&
            cuda::warp_rec_preferred(p, src.width(), src.height(), dst.width(), dst.height(),
                                     src.channels(), opts.prefilter)) {
            cuda::warp_bspline_rec(span_of(src), span_of(dst), p, opts.prefilter, ctx.cuda_stream);
            return;
        }
    }
#endif
    if (opts.interp == Interp::BSpline && opts.prefiltered) {
        if constexpr (std::is_same_v<T, float>) {
            if (p.pad == 0) return run_backend<float, T>(b, span_of(src), span_of(dst), p, ctx);
            const FloatImage c = edge_padded(src, p.pad, ctx, "warp (padded coefficients)");
            run_backend<float, T>(b, span_of(ImageView<const float>(c.view)), span_of(dst), p, ctx);
        }
    } else if (opts.interp == Interp::BSpline) {
        // Small images: one thread for the staging (a parallel region costs more than the work).
        Context pctx = ctx;
        if (src.pixel_count() < (1 << 14)) pctx.threads = 1;
        const FloatImage c = bspline_coefficients(src, p.pad, opts.border, opts.prefilter, b, pctx);
        run_backend<float, T>(b, span_of(ImageView<const float>(c.view)), span_of(dst), p, ctx);
    } else {
        run_backend<T, T>(b, span_of(src), span_of(dst), p, ctx);
    }
}

double snap(double v) { return std::abs(v) < 1e-15 ? 0.0 : v; }

}  // namespace

Affine rotation(double degrees, int width, int height) {
    if (!std::isfinite(degrees))
        throw Error(ErrorCode::InvalidArgument, "rotation: the angle is not finite");
    // Exact values at multiples of 90 degrees (as scipy.special.cosdg/sindg).
    double r = std::fmod(degrees, 360.0);
    if (r < 0) r += 360.0;
    double c, s;
    if (r == 0.0) {
        c = 1, s = 0;
    } else if (r == 90.0) {
        c = 0, s = 1;
    } else if (r == 180.0) {
        c = -1, s = 0;
    } else if (r == 270.0) {
        c = 0, s = -1;
    } else {
        const double rad = r * 3.14159265358979323846 / 180.0;
        c = snap(std::cos(rad));
        s = snap(std::sin(rad));
    }
    // scipy.ndimage.rotate(reshape=False): (row, col)_in = [[c, s], [-s, c]] ((row, col)_out -
    // centre) + centre, centre = ((h - 1) / 2, (w - 1) / 2).
    const double xc = 0.5 * (width - 1), yc = 0.5 * (height - 1);
    Affine a;
    a.m[0] = c;
    a.m[1] = -s;
    a.m[2] = xc - c * xc + s * yc;
    a.m[3] = s;
    a.m[4] = c;
    a.m[5] = yc - s * xc - c * yc;
    return a;
}

Transform Transform::make_affine(const Affine& a) {
    Transform t;
    t.kind = Kind::Affine;
    t.affine = a;
    return t;
}
Transform Transform::make_rotation(double degrees, int width, int height) {
    return make_affine(rotation(degrees, width, height));
}
Transform Transform::make_perspective(const Homography& h) {
    Transform t;
    t.kind = Kind::Perspective;
    t.homography = h;
    return t;
}
Transform Transform::make_resize() {
    Transform t;
    t.kind = Kind::Resize;
    return t;
}
Transform Transform::make_remap(ImageView<const float> map) {
    Transform t;
    t.kind = Kind::Remap;
    t.field = map;
    return t;
}
Transform Transform::make_flow(ImageView<const float> flow) {
    Transform t;
    t.kind = Kind::Flow;
    t.field = flow;
    return t;
}

void warp(ImageView<const std::uint8_t> src, ImageView<std::uint8_t> dst, const Transform& t,
          const WarpOptions& opts, const Context& ctx) {
    warp_impl<std::uint8_t>(src, dst, t, opts, ctx);
}
void warp(ImageView<const std::uint16_t> src, ImageView<std::uint16_t> dst, const Transform& t,
          const WarpOptions& opts, const Context& ctx) {
    warp_impl<std::uint16_t>(src, dst, t, opts, ctx);
}
void warp(ImageView<const float> src, ImageView<float> dst, const Transform& t,
          const WarpOptions& opts, const Context& ctx) {
    warp_impl<float>(src, dst, t, opts, ctx);
}

}  // namespace upres
