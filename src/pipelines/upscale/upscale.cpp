// upres::upscale: every up-scaling method behind one call. Picks the method and the lattice,
// then composes the operations: SRCNN's pipeline, MATLAB bicubic, centre-aligned bilinear, and
// on the co-sited lattice the colour handling, factor cascading and baselines around SEABI x2
// (docs/ops/seabi.md, "Colour, other factors, bad input").
#include <upres/upscale.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <upres/color.hpp>
#include <upres/error.hpp>
#include <upres/nlmsr.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/warp.hpp>

#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/format_number.hpp"
#include "pipelines/upscale/upscale_planes.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#endif

namespace upres {

namespace {

constexpr const char* kOp = "upscale";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

// Resampling of src into dst, border nearest: co-sited, output x samples input x * step_x;
// centred, input (x + 0.5) * step_x - 0.5.
template <class T>
void resample(ImageView<const T> src, ImageView<T> dst, double step_x, double step_y, Interp interp,
              const Context& ctx, bool centered = false) {
    Affine a;
    a.m[0] = step_x;
    a.m[1] = 0;
    a.m[2] = centered ? 0.5 * step_x - 0.5 : 0.0;
    a.m[3] = 0;
    a.m[4] = step_y;
    a.m[5] = centered ? 0.5 * step_y - 0.5 : 0.0;
    WarpOptions o;
    o.interp = interp;
    o.border = Border::Nearest;
    warp(src, dst, Transform::make_affine(a), o, ctx);
}

// Where the co-sited pipeline keeps its intermediates: host images, or device images from
// upres's memory pool (no cudaMalloc per call; every step on the device, ctx.backend Cuda).
struct HostSpace {
    template <class T>
    static Image<T> make(int w, int h, int c, const Context&) {
        return Image<T>(w, h, c);
    }
    static void split(ImageView<const float> ycc, ImageView<std::uint8_t> luma,
                      ImageView<float> chroma, const Context&) {
        cpu::split_ycc(span_of(ycc), span_of(luma), span_of(chroma));
    }
    static void merge(ImageView<const std::uint8_t> luma, ImageView<const float> chroma,
                      ImageView<float> ycc, const Context&) {
        cpu::merge_ycc(span_of(luma), span_of(chroma), span_of(ycc));
    }
};

#if UPRES_HAVE_CUDA
struct DeviceSpace {
    template <class T>
    static cuda::PooledImage<T> make(int w, int h, int c, const Context& ctx) {
        return cuda::PooledImage<T>(w, h, c, ctx.cuda_stream, "upscale (intermediate image)");
    }
    static void split(ImageView<const float> ycc, ImageView<std::uint8_t> luma,
                      ImageView<float> chroma, const Context& ctx) {
        cuda::split_ycc(span_of(ycc), span_of(luma), span_of(chroma), ctx.cuda_stream);
    }
    static void merge(ImageView<const std::uint8_t> luma, ImageView<const float> chroma,
                      ImageView<float> ycc, const Context& ctx) {
        cuda::merge_ycc(span_of(luma), span_of(chroma), span_of(ycc), ctx.cuda_stream);
    }
};
#endif

// One luma / gray plane through the method up to the power-of-two factor n2 (> 1), into out
// (n2 W x n2 H), on opts.lattice (x2 steps compose: centred x2 twice is centred x4).
template <class Space>
void upscale_plane(ImageView<const std::uint8_t> plane, ImageView<std::uint8_t> out, int n2,
                   const UpscaleOptions& opts, const Context& ctx) {
    if (opts.method == UpscaleMethod::Bilinear || opts.method == UpscaleMethod::Bicubic ||
        opts.method == UpscaleMethod::BSpline)
        return resample(plane, out, 1.0 / n2, 1.0 / n2,
                        opts.method == UpscaleMethod::Bilinear  ? Interp::Linear
                        : opts.method == UpscaleMethod::Bicubic ? Interp::Cubic
                                                                : Interp::BSpline,
                        ctx);
    using Owned = decltype(Space::template make<std::uint8_t>(1, 1, 1, ctx));
    std::optional<Owned> cur;
    ImageView<const std::uint8_t> in = plane;
    for (int f = 2; f <= n2; f *= 2) {
        std::optional<Owned> next;
        // The last step writes the caller's image.
        const ImageView<std::uint8_t> dst =
            f == n2 ? out
                    : next.emplace(Space::template make<std::uint8_t>(2 * in.width(),
                                                                      2 * in.height(), 1, ctx))
                          .view();
        switch (opts.method) {
            case UpscaleMethod::Tap4:
            case UpscaleMethod::Tap6:
                tap_upscale2(in, dst,
                             opts.method == UpscaleMethod::Tap4 ? TapFilter::Tap4 : TapFilter::Tap6,
                             opts.lattice, ctx);
                break;
            default: {
                SeabiOptions so;
                so.method = opts.method == UpscaleMethod::LSeai      ? SeabiMethod::LSeai
                            : opts.method == UpscaleMethod::SilSeabi ? SeabiMethod::SilSeabi
                                                                     : SeabiMethod::LSeabi;
                so.max_iterations = opts.max_iterations;
                so.max_error = opts.max_error;
                so.lattice = opts.lattice;
                seabi_upscale2(in, dst, so, ctx);
            }
        }
        if (next) {
            cur = std::move(next);
            in = cur->view();
        }
    }
}

int round_size(double s, int n) { return static_cast<int>(std::lround(s * n)); }

// The SEABI family and the tap filters: 8-bit integer arithmetic, x2 steps, on either lattice.
bool seabi_family(UpscaleMethod m) {
    return m == UpscaleMethod::LSeai || m == UpscaleMethod::SilSeabi ||
           m == UpscaleMethod::LSeabi || m == UpscaleMethod::Tap4 || m == UpscaleMethod::Tap6;
}

// The cascade for a scale: x2 steps up to n2, the next power of two, then (not exact) B-spline
// resampling to the output size.
struct Cascade {
    int n2 = 1;
    bool exact = true;
};
Cascade cascade_of(double scale) {
    Cascade c;
    while (c.n2 < scale) c.n2 *= 2;
    c.exact = std::abs(scale - c.n2) < 1e-12;
    return c;
}

// Centre-aligned output length: ceil(s n), as bicubic_resize.
int centered_length(double s, int n) { return static_cast<int>(std::ceil(s * n - 1e-9)); }

// The output size of the YCbCr pipeline for a W x H image with ch channels (co-sited
// round(s W), centred ceil(s W)), after the checks of the pipeline.
std::pair<int, int> ycc_size(int w, int h, int ch, double scale, Lattice lattice) {
    if (ch == 2) fail("the input has 2 channels (allowed: 1 gray, 3 RGB, 4 RGBA)");
    const bool c = lattice == Lattice::Centered;
    const int ow = c ? centered_length(scale, w) : round_size(scale, w);
    const int oh = c ? centered_length(scale, h) : round_size(scale, h);
    if (ow > kMaxDimension || oh > kMaxDimension || static_cast<std::int64_t>(ow) * oh > kMaxPixels)
        fail("the output " + std::to_string(ow) + " x " + std::to_string(oh) +
             " would exceed the image size limits");
    const auto [n2, exact] = cascade_of(scale);
    if (!exact && (static_cast<std::int64_t>(w) * n2 * h * n2 > kMaxPixels ||
                   w * n2 > kMaxDimension || h * n2 > kMaxDimension))
        fail("the intermediate x" + std::to_string(n2) + " image would exceed the size limits");
    return {ow, oh};
}

// The YCbCr pipeline (8-bit; the SEABI family on either lattice, co-sited bilinear / bicubic /
// bspline) into out (ycc_size, img's channels, img's memory), intermediates in Space. Colour:
// BT.601 YCbCr, Y rounded to u8 through the method, chroma (and alpha) bicubic from the input
// straight to the output grid, on the method's lattice.
template <class Space>
void ycc_upscale(ImageView<const std::uint8_t> img, ImageView<std::uint8_t> out,
                 const UpscaleOptions& opts, const Context& ctx) {
    const int ch = img.channels(), w = img.width(), h = img.height();
    const int ow = out.width(), oh = out.height();
    const auto [n2, exact] = cascade_of(opts.scale);
    const bool centered = opts.lattice == Lattice::Centered;
    if (n2 == 1) return copy(img, out, ctx.cuda_stream);
    using U8 = decltype(Space::template make<std::uint8_t>(1, 1, 1, ctx));
    using F32 = decltype(Space::template make<float>(1, 1, 1, ctx));

    // Luma (or gray) plane and, for colour, the chroma planes.
    std::optional<U8> luma_own;
    std::optional<F32> chroma;
    ImageView<const std::uint8_t> luma = img;
    if (ch > 1) {
        F32 ycc = Space::template make<float>(w, h, ch, ctx);
        rgb_to_ycbcr(img, ycc.view(), ctx);
        luma_own.emplace(Space::template make<std::uint8_t>(w, h, 1, ctx));
        chroma.emplace(Space::template make<float>(w, h, ch - 1, ctx));
        Space::split(ycc.view(), luma_own->view(), chroma->view(), ctx);
        luma = luma_own->view();
    }
    // The plane at n2 W x n2 H, then (other factors) B-spline resampled to the output size; a
    // gray image's last step writes out.
    std::optional<U8> up_own, resampled_own;
    const ImageView<std::uint8_t> up =
        ch == 1 && exact
            ? out
            : up_own.emplace(Space::template make<std::uint8_t>(w * n2, h * n2, 1, ctx)).view();
    upscale_plane<Space>(luma, up, n2, opts, ctx);
    ImageView<const std::uint8_t> plane = up;
    if (!exact) {
        const ImageView<std::uint8_t> dst =
            ch == 1
                ? out
                : resampled_own.emplace(Space::template make<std::uint8_t>(ow, oh, 1, ctx)).view();
        resample(plane, dst, static_cast<double>(n2) * w / ow, static_cast<double>(n2) * h / oh,
                 Interp::BSpline, ctx, centered);
        plane = dst;
    }
    if (ch == 1) return;

    F32 chroma_up = Space::template make<float>(ow, oh, ch - 1, ctx);
    resample(ImageView<const float>(chroma->view()), chroma_up.view(), static_cast<double>(w) / ow,
             static_cast<double>(h) / oh, Interp::Cubic, ctx, centered);
    F32 out_ycc = Space::template make<float>(ow, oh, ch, ctx);
    Space::merge(plane, chroma_up.view(), out_ycc.view(), ctx);
    ycbcr_to_rgb(ImageView<const float>(out_ycc.view()), out, ctx);
}

// The YCbCr pipeline on the memory img lives in (device views: every step on the device) or, for
// host images with ctx.backend Cuda, uploaded once, run on the device and downloaded once.
void ycc_into(ImageView<const std::uint8_t> img, ImageView<std::uint8_t> out,
              const UpscaleOptions& opts, const Context& ctx) {
    if (img.on_device() != out.on_device())
        fail(std::string("the input is in ") + (img.on_device() ? "device" : "host") +
             " memory but the output is in " + (out.on_device() ? "device" : "host") + " memory");
    const Backend b =
        resolve_backend(ctx, img.on_device() ? Location::Device : Location::Host, kOp);
    if (b != Backend::Cuda) return ycc_upscale<HostSpace>(img, out, opts, ctx);
    const DeviceScope device_scope(ctx, b, kOp);
#if UPRES_HAVE_CUDA
    Context dctx = ctx;
    dctx.backend = Backend::Cuda;
    if (img.on_device()) return ycc_upscale<DeviceSpace>(img, out, opts, dctx);
    const cuda::PooledImage<std::uint8_t> din = cuda::upload(img, ctx.cuda_stream, "upscale input");
    const cuda::PooledImage<std::uint8_t> dout(out.width(), out.height(), out.channels(),
                                               ctx.cuda_stream, "upscale output");
    ycc_upscale<DeviceSpace>(din.cview(), dout.view(), opts, dctx);
    copy(dout.cview(), out, ctx.cuda_stream);
#else
    throw Error(ErrorCode::BackendUnavailable, std::string(kOp) + ": built without CUDA");
#endif
}

// Centre-aligned bilinear: upres resize (u = (x + 0.5) W / W' - 0.5), Border::Reflect; with
// other warp options (the default WarpOptions: method bspline), the same resize.
WarpOptions centered_bilinear_options() {
    WarpOptions wo;
    wo.interp = Interp::Linear;
    wo.border = Border::Reflect;
    return wo;
}

AnyImage centered_bilinear(const AnyImage& img, double s, const Context& ctx,
                           const WarpOptions& wo = centered_bilinear_options()) {
    const int w = centered_length(s, img.width()), h = centered_length(s, img.height());
    return std::visit(
        [&](const auto& im) -> AnyImage {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            Image<T> out(w, h, im.channels(), im.location());
            warp(im.view(), out.view(), Transform::make_resize(), wo, ctx);
            return AnyImage(std::move(out));
        },
        img.variant());
}

// The options every method checks, before any work.
void validate(const UpscaleOptions& opts) {
    if (!enum_desc<UpscaleMethod>().contains(static_cast<int>(opts.method)))
        fail("unknown upscale method " + std::to_string(static_cast<int>(opts.method)) +
             " (allowed: " + enum_desc<UpscaleMethod>().allowed() + ")");
    if (!enum_desc<Lattice>().contains(static_cast<int>(opts.lattice)))
        fail("unknown lattice " + std::to_string(static_cast<int>(opts.lattice)) +
             " (allowed: " + enum_desc<Lattice>().allowed() + ")");
    // SRCNN with a model file: scale 0 stands for the model's factor.
    const bool model_scale =
        opts.method == UpscaleMethod::Srcnn && !opts.model.empty() && opts.scale == 0.0;
    if (!model_scale && (!std::isfinite(opts.scale) || opts.scale < 1.0 || opts.scale > 16.0))
        fail("scale " + format_number(opts.scale) + " is outside [1, 16]");
    if (opts.max_iterations < 1 || opts.max_iterations > 1000)
        fail("max_iterations is " + std::to_string(opts.max_iterations) + " (allowed: 1 to 1000)");
    if (!std::isfinite(opts.max_error) || opts.max_error < 0.0)
        fail("max_error must be finite and >= 0, got " + std::to_string(opts.max_error));
}

// NLM-SR's options for upscale: its defaults at the (integer, 2 to 4) scale.
NlmsrOptions nlm_options_for(const UpscaleOptions& opts) {
    if (opts.scale != std::floor(opts.scale) || opts.scale < 2 || opts.scale > 4)
        fail("nlm needs the scale 2, 3 or 4, not " + format_number(opts.scale));
    NlmsrOptions n;
    n.scale = static_cast<int>(opts.scale);
    return n;
}

SrcnnModel srcnn_model_for(const UpscaleOptions& opts) {
    if (opts.scale != 0.0 && opts.scale != std::floor(opts.scale))
        fail("srcnn needs an integer scale, not " + format_number(opts.scale));
    if (!opts.model.empty()) {
        SrcnnModel m = load_srcnn_model(opts.model);
        if (opts.scale != 0.0 && opts.scale != m.scale)
            fail("the model " + opts.model + " is for x" + std::to_string(m.scale) +
                 ", not scale " + format_number(opts.scale));
        return m;
    }
    return load_default_srcnn_model(static_cast<int>(opts.scale));
}

}  // namespace

UpscaleMethod resolved_method(const UpscaleOptions& opts) {
    if (opts.method != UpscaleMethod::Auto) return opts.method;
    if (!opts.model.empty()) return UpscaleMethod::Srcnn;
    if (std::isfinite(opts.scale) && opts.scale == std::floor(opts.scale) && opts.scale >= 2 &&
        opts.scale <= 16) {
        const std::vector<int> s = available_srcnn_scales();
        if (std::find(s.begin(), s.end(), static_cast<int>(opts.scale)) != s.end())
            return UpscaleMethod::Srcnn;
    }
    return UpscaleMethod::Bicubic;
}

Lattice resolved_lattice(const UpscaleOptions& opts) {
    const UpscaleMethod m = resolved_method(opts);
    if (opts.lattice == Lattice::Auto) return Lattice::Centered;
    if (opts.lattice == Lattice::CoSited && m == UpscaleMethod::Srcnn)
        fail(
            "lattice cosited: srcnn runs on the centre-aligned lattice of its training "
            "(allowed: auto, centered)");
    if (opts.lattice == Lattice::CoSited && m == UpscaleMethod::Nlm)
        fail(
            "lattice cosited: nlm fuses on the centre-aligned lattice of its bicubic estimate "
            "(allowed: auto, centered)");
    return opts.lattice;
}

// The 8-bit methods are exactly those that run the YCbCr pipeline (ycc_upscale): the SEABI
// family on either lattice and the co-sited baselines; the other centre-aligned methods run as
// floats.
bool upscale_needs_8bit(const UpscaleOptions& opts) {
    return seabi_family(resolved_method(opts)) || resolved_lattice(opts) == Lattice::CoSited;
}

namespace {

// The options with Auto resolved, checked.
UpscaleOptions resolved(const UpscaleOptions& opts) {
    UpscaleOptions o = opts;
    o.method = resolved_method(opts);
    validate(o);
    o.lattice = resolved_lattice(o);
    return o;
}

}  // namespace

AnyImage upscale(const AnyImage& img, const UpscaleOptions& opts, const Context& ctx,
                 SrcnnPlan* plan) {
    const UpscaleOptions o = resolved(opts);
    if (img.empty()) fail("the input image is empty");
    if (o.method == UpscaleMethod::Srcnn)
        return srcnn_upscale(img, srcnn_model_for(o), o.srcnn, ctx, plan);
    if (o.method == UpscaleMethod::Nlm) {
        const NlmsrOptions n = nlm_options_for(o);
        if (std::visit([](const auto& im) { return im.on_device(); }, img.variant()))
            fail("nlm takes host images (NLM-SR stages device work itself)");
        return nlm_fuse(std::span<const AnyImage>(&img, 1), n, ctx);
    }
    if (!upscale_needs_8bit(o)) {
        if (o.method == UpscaleMethod::Bicubic) return bicubic_resize(img, o.scale, ctx);
        if (o.method == UpscaleMethod::BSpline)
            return centered_bilinear(img, o.scale, ctx, WarpOptions{});
        return centered_bilinear(img, o.scale, ctx);
    }
    if (!img.holds<std::uint8_t>())
        throw Error(
            ErrorCode::UnsupportedFormat,
            std::string(kOp) + ": the image is " + to_string(img.pixel_type()) + "; " +
                to_string(o.method) +
                (seabi_family(o.method) ? " works on 8-bit images (the paper's integer "
                                          "arithmetic)"
                                        : " on the co-sited lattice works on 8-bit images") +
                ": convert it first (upres convert --depth u8)");
    const ImageView<const std::uint8_t> v = img.as<std::uint8_t>().view();
    const auto [ow, oh] = ycc_size(v.width(), v.height(), v.channels(), o.scale, o.lattice);
    Image<std::uint8_t> out(ow, oh, v.channels(), v.location());
    ycc_into(v, out.view(), o, ctx);
    return AnyImage(std::move(out));
}

AnyImage upscale(const AnyImage& img, const UpscaleOptions& opts, const Context& ctx) {
    return upscale(img, opts, ctx, nullptr);
}

Image<std::uint8_t> upscale(ImageView<const std::uint8_t> img, const UpscaleOptions& opts,
                            const Context& ctx) {
    if (img.empty() || img.data() == nullptr) fail("the input image is empty");
    const UpscaleOptions o = resolved(opts);
    if (upscale_needs_8bit(o)) {  // no copy of img
        const auto [ow, oh] =
            ycc_size(img.width(), img.height(), img.channels(), o.scale, o.lattice);
        Image<std::uint8_t> out(ow, oh, img.channels(), img.location());
        ycc_into(img, out.view(), o, ctx);
        return out;
    }
    AnyImage out = upscale(AnyImage(clone(img, img.location())), o, ctx, nullptr);
    return std::move(out.as<std::uint8_t>());
}

void upscale(ImageView<const std::uint8_t> img, ImageView<std::uint8_t> out,
             const UpscaleOptions& opts, const Context& ctx) {
    if (img.empty() || img.data() == nullptr) fail("the input image is empty");
    const UpscaleOptions o = resolved(opts);
    if (o.method == UpscaleMethod::Srcnn) {  // srcnn_upscale checks out's geometry
        srcnn_upscale(img, out, srcnn_model_for(o), o.srcnn, ctx);
        return;
    }
    if (o.method == UpscaleMethod::Nlm) {  // nlm_fuse checks out's geometry
        if (img.on_device() || out.on_device())
            fail("nlm takes host images (NLM-SR stages device work itself)");
        nlm_fuse(std::span<const ImageView<const std::uint8_t>>(&img, 1), out, nlm_options_for(o),
                 ctx);
        return;
    }
    const bool ycc = upscale_needs_8bit(o);
    const std::pair<int, int> size =
        ycc ? ycc_size(img.width(), img.height(), img.channels(), o.scale, o.lattice)
            : std::pair<int, int>{centered_length(o.scale, img.width()),
                                  centered_length(o.scale, img.height())};
    if (out.width() != size.first || out.height() != size.second ||
        out.channels() != img.channels())
        fail("the output is " + std::to_string(out.width()) + " x " + std::to_string(out.height()) +
             " x " + std::to_string(out.channels()) + " but must be " + std::to_string(size.first) +
             " x " + std::to_string(size.second) + " x " + std::to_string(img.channels()) +
             " (this input and scale)");
    if (ycc) return ycc_into(img, out, o, ctx);
    if (img.on_device() != out.on_device())
        fail("the input and the output are in different memory (host and device)");
    if (o.method == UpscaleMethod::Bilinear || o.method == UpscaleMethod::BSpline) {
        warp(img, out, Transform::make_resize(),
             o.method == UpscaleMethod::BSpline ? WarpOptions{} : centered_bilinear_options(), ctx);
        return;
    }
    // MATLAB bicubic (bicubic_resize) through its own result.
    const AnyImage r = bicubic_resize(AnyImage(clone(img, img.location())), o.scale, ctx);
    copy(ImageView<const std::uint8_t>(r.as<std::uint8_t>().view()), out, ctx.cuda_stream);
}

}  // namespace upres
