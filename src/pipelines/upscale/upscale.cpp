// upres::upscale: every up-scaling method behind one call. Picks the method and the lattice,
// then composes the operations: SRCNN's pipeline, MATLAB bicubic, centre-aligned bilinear, and
// on the co-sited lattice the colour handling, factor cascading and baselines around SEABI x2
// (docs/ops/seabi.md, "Colour, other factors, bad input").
#include <upres/upscale.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <upres/color.hpp>
#include <upres/error.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/warp.hpp>

#include "core/format_number.hpp"

namespace upres {

namespace {

constexpr const char* kOp = "upscale";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

// Co-sited resampling of a plane to (w, h): output x samples input x * sx (sx = in / out
// scale), border nearest.
template <class T>
Image<T> resample(ImageView<const T> src, int w, int h, double step_x, double step_y, Interp interp,
                  const Context& ctx) {
    Image<T> out(w, h, src.channels());
    Affine a;
    a.m[0] = step_x;
    a.m[1] = 0;
    a.m[2] = 0;
    a.m[3] = 0;
    a.m[4] = step_y;
    a.m[5] = 0;
    WarpOptions o;
    o.interp = interp;
    o.border = Border::Nearest;
    warp(src, out.view(), Transform::make_affine(a), o, ctx);
    return out;
}

// One luma / gray plane through the method up to the power-of-two factor n2.
Image<std::uint8_t> upscale_plane(ImageView<const std::uint8_t> plane, int n2,
                                  const UpscaleOptions& opts, const Context& ctx) {
    const int w = plane.width(), h = plane.height();
    if (opts.method == UpscaleMethod::Bilinear || opts.method == UpscaleMethod::Bicubic)
        return resample(plane, w * n2, h * n2, 1.0 / n2, 1.0 / n2,
                        opts.method == UpscaleMethod::Bilinear ? Interp::Linear : Interp::Cubic,
                        ctx);
    Image<std::uint8_t> cur = clone(plane);
    for (int f = 1; f < n2; f *= 2) {
        Image<std::uint8_t> next(2 * cur.width(), 2 * cur.height(), cur.channels());
        switch (opts.method) {
            case UpscaleMethod::Tap4:
            case UpscaleMethod::Tap6:
                tap_upscale2(cur.view(), next.view(),
                             opts.method == UpscaleMethod::Tap4 ? TapFilter::Tap4 : TapFilter::Tap6,
                             ctx);
                break;
            default: {
                SeabiOptions so;
                so.method = opts.method == UpscaleMethod::LSeai      ? SeabiMethod::LSeai
                            : opts.method == UpscaleMethod::SilSeabi ? SeabiMethod::SilSeabi
                                                                     : SeabiMethod::LSeabi;
                so.max_iterations = opts.max_iterations;
                so.max_error = opts.max_error;
                seabi_upscale2(cur.view(), next.view(), so, ctx);
            }
        }
        cur = std::move(next);
    }
    return cur;
}

int round_size(double s, int n) { return static_cast<int>(std::lround(s * n)); }

bool cosited_only(UpscaleMethod m) {
    return m == UpscaleMethod::LSeai || m == UpscaleMethod::SilSeabi ||
           m == UpscaleMethod::LSeabi || m == UpscaleMethod::Tap4 || m == UpscaleMethod::Tap6;
}

Image<std::uint8_t> cosited_upscale(ImageView<const std::uint8_t> img, const UpscaleOptions& opts,
                                    const Context& ctx) {
    const int ch = img.channels();
    if (ch == 2) fail("the input has 2 channels (allowed: 1 gray, 3 RGB, 4 RGBA)");
    const int w = img.width(), h = img.height();
    const int ow = round_size(opts.scale, w), oh = round_size(opts.scale, h);
    if (ow > kMaxDimension || oh > kMaxDimension || static_cast<std::int64_t>(ow) * oh > kMaxPixels)
        fail("the output " + std::to_string(ow) + " x " + std::to_string(oh) +
             " would exceed the image size limits");
    int n2 = 1;
    while (n2 < opts.scale) n2 *= 2;
    if (n2 == 1) return clone(img);
    const bool exact = std::abs(opts.scale - n2) < 1e-12;
    if (!exact && (static_cast<std::int64_t>(w) * n2 * h * n2 > kMaxPixels ||
                   w * n2 > kMaxDimension || h * n2 > kMaxDimension))
        fail("the intermediate x" + std::to_string(n2) + " image would exceed the size limits");

    // Luma (or gray) plane and, for colour, the float YCbCr planes.
    Image<std::uint8_t> luma_u8(w, h, 1);
    Image<float> ycc;
    if (ch == 1) {
        copy(img, luma_u8.view());
    } else {
        ycc = Image<float>(w, h, ch);
        rgb_to_ycbcr(img, ycc.view(), ctx);
        for (int y = 0; y < h; ++y)
            for (int x = 0; x < w; ++x) {
                const float v = std::nearbyint(ycc(x, y, 0));
                luma_u8(x, y) = static_cast<std::uint8_t>(v < 0.f ? 0.f : (v > 255.f ? 255.f : v));
            }
    }
    Image<std::uint8_t> up = upscale_plane(luma_u8.view(), n2, opts, ctx);
    if (!exact) {
        const double step = static_cast<double>(n2) / opts.scale;
        up = resample(ImageView<const std::uint8_t>(up.view()), ow, oh, step * w * opts.scale / ow,
                      step * h * opts.scale / oh, Interp::BSpline, ctx);
    }
    if (ch == 1) return up;

    // Chroma (and alpha): bicubic straight from the input to the output grid.
    Image<float> chroma(w, h, ch - 1);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int c = 1; c < ch; ++c) chroma(x, y, c - 1) = ycc(x, y, c);
    const Image<float> chroma_up =
        resample(ImageView<const float>(chroma.view()), ow, oh, static_cast<double>(w) / ow,
                 static_cast<double>(h) / oh, Interp::Cubic, ctx);
    Image<float> out_ycc(ow, oh, ch);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
            out_ycc(x, y, 0) = up(x, y);
            for (int c = 1; c < ch; ++c) out_ycc(x, y, c) = chroma_up(x, y, c - 1);
        }
    Image<std::uint8_t> out(ow, oh, ch);
    ycbcr_to_rgb(ImageView<const float>(out_ycc.view()), out.view(), ctx);
    return out;
}

// Centre-aligned bilinear: upres resize (u = (x + 0.5) W / W' - 0.5), Border::Reflect, output
// ceil(s W) x ceil(s H) as bicubic_resize.
AnyImage centered_bilinear(const AnyImage& img, double s, const Context& ctx) {
    const int w = static_cast<int>(std::ceil(s * img.width() - 1e-9));
    const int h = static_cast<int>(std::ceil(s * img.height() - 1e-9));
    WarpOptions wo;
    wo.interp = Interp::Linear;
    wo.border = Border::Reflect;
    return std::visit(
        [&](const auto& im) -> AnyImage {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            Image<T> out(w, h, im.channels());
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
    if (opts.lattice == Lattice::Auto)
        return cosited_only(m) ? Lattice::CoSited : Lattice::Centered;
    if (opts.lattice == Lattice::Centered && cosited_only(m))
        fail(std::string("lattice centered: ") + to_string(m) +
             " is defined on the co-sited lattice only (allowed: auto, cosited)");
    if (opts.lattice == Lattice::CoSited && m == UpscaleMethod::Srcnn)
        fail(
            "lattice cosited: srcnn runs on the centre-aligned lattice of its training "
            "(allowed: auto, centered)");
    return opts.lattice;
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
    if (o.lattice == Lattice::Centered) {
        if (o.method == UpscaleMethod::Bicubic) return bicubic_resize(img, o.scale, ctx);
        return centered_bilinear(img, o.scale, ctx);
    }
    if (!img.holds<std::uint8_t>())
        throw Error(ErrorCode::UnsupportedFormat,
                    std::string(kOp) + ": the image is " + to_string(img.pixel_type()) + "; " +
                        to_string(o.method) +
                        " on the co-sited lattice works on 8-bit images (the paper's integer "
                        "arithmetic): convert it first (upres convert --depth u8)");
    const ImageView<const std::uint8_t> v = img.as<std::uint8_t>().view();
    if (v.on_device())
        fail(
            "the input is in device memory; upscale takes host images (use seabi_upscale2 "
            "for device data)");
    return AnyImage(cosited_upscale(v, o, ctx));
}

AnyImage upscale(const AnyImage& img, const UpscaleOptions& opts, const Context& ctx) {
    return upscale(img, opts, ctx, nullptr);
}

Image<std::uint8_t> upscale(ImageView<const std::uint8_t> img, const UpscaleOptions& opts,
                            const Context& ctx) {
    if (img.empty() || img.data() == nullptr) fail("the input image is empty");
    if (img.on_device())
        fail(
            "the input is in device memory; upscale takes host images (use seabi_upscale2 "
            "for device data)");
    const UpscaleOptions o = resolved(opts);
    if (o.lattice == Lattice::CoSited) return cosited_upscale(img, o, ctx);  // no copy of img
    AnyImage out = upscale(AnyImage(clone(img)), o, ctx, nullptr);
    return std::move(out.as<std::uint8_t>());
}

}  // namespace upres
