// upres::nlm_fuse: validation, luma and colour, the frames on the output grid, the fusion
// passes, the post-step, dispatch (upres/nlmsr.hpp).
#include <upres/nlmsr.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <upres/color.hpp>
#include <upres/error.hpp>
#include <upres/srcnn.hpp>

#include "core/dispatch.hpp"
#include "core/finite_scan.hpp"
#include "core/format_number.hpp"
#include "ops/nlmsr/nlmsr_backends.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#endif

namespace upres {

namespace {

constexpr const char* kOp = "nlm_fuse";

// The noise-adaptive weight scale of the fusion: the reference frame's noise (Immerkaer), at
// least this many 8-bit levels (noise-free frames still differ by their interpolation and
// aliasing). The back-projection's denoising of the reference on the input grid takes the noise
// itself, at least kLowSigmaFloor (clean frames stay nearly as they are). Both chosen on the
// training manifest (docs/ops/nlmsr.md).
constexpr double kSigmaFloor = 3.0, kLowSigmaFloor = 0.5;

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

void check_side(const char* name, int v, int max) {
    if (v < 1 || v > max || v % 2 == 0)
        fail(std::string(name) + " " + std::to_string(v) + " must be odd, 1 to " +
             std::to_string(max));
}

void check_options(const NlmsrOptions& o) {
    if (o.scale < 2 || o.scale > 4)
        fail("scale " + std::to_string(o.scale) + " is not allowed (allowed: 2, 3, 4)");
    check_side("patch", o.patch, nlmsr::kMaxPatch);
    check_side("search", o.search, nlmsr::kMaxSearch);
    if (!std::isfinite(o.sigma) || (o.sigma != 0.0 && (o.sigma < 0.5 || o.sigma > 255.0)))
        fail("sigma " + format_number(o.sigma) +
             " is not allowed (allowed: 0 for the noise-adaptive value, or 0.5 to 255)");
    if (o.iterations < 1 || o.iterations > 8)
        fail("iterations " + std::to_string(o.iterations) + " is outside [1, 8]");
    if (!enum_desc<NlmsrPost>().contains(static_cast<int>(o.post)))
        fail("unknown post-step " + std::to_string(static_cast<int>(o.post)) +
             " (allowed: " + enum_desc<NlmsrPost>().allowed() + ")");
    if (o.back_projections < 1 || o.back_projections > 20)
        fail("back_projections " + std::to_string(o.back_projections) + " is outside [1, 20]");
    if (!enum_desc<NlmsrVariant>().contains(static_cast<int>(o.variant)))
        fail("unknown variant " + std::to_string(static_cast<int>(o.variant)) +
             " (allowed: " + enum_desc<NlmsrVariant>().allowed() + ")");
    for (const auto& [name, v] : {std::pair{"block_x", o.block_x}, std::pair{"block_y", o.block_y},
                                  std::pair{"block_z", o.block_z}})
        if (v < 1 || v > 64)
            fail(std::string(name) + " " + std::to_string(v) + " is outside [1, 64]");
}

// One level of T on the 8-bit scale (u8 1, u16 1/257, f32 255).
template <class T>
constexpr float kToLevels = static_cast<float>(255.0 / PixelTraits<T>::max_value);

// Luma on the 8-bit scale (gray: the value; colour: BT.601 Y), and for the reference frame of a
// colour sequence its Cb and Cr.
template <class T>
Image<float> luma_plane(ImageView<const T> f, const Context& ctx, Image<float>* cbcr) {
    const int w = f.width(), h = f.height();
    Image<float> y(w, h, 1);
    if (f.channels() == 1) {
        for (int r = 0; r < h; ++r) {
            float* yr = y.data() + static_cast<std::size_t>(r) * w;
            for (int x = 0; x < w; ++x) yr[x] = kToLevels<T> * f.row(r)[x];
        }
        return y;
    }
    Image<float> ycc(w, h, 3);
    rgb_to_ycbcr(f, ycc.view(), ctx);
    if (cbcr) *cbcr = Image<float>(w, h, 2);
    for (int r = 0; r < h; ++r)
        for (int x = 0; x < w; ++x) {
            const float* p = ycc.data() + (static_cast<std::size_t>(r) * w + x) * 3;
            y.data()[static_cast<std::size_t>(r) * w + x] = p[0];
            if (cbcr) {
                cbcr->data()[(static_cast<std::size_t>(r) * w + x) * 2] = p[1];
                cbcr->data()[(static_cast<std::size_t>(r) * w + x) * 2 + 1] = p[2];
            }
        }
    return y;
}

Image<float> resize(const Image<float>& p, double s, const Context& ctx) {
    AnyImage r = bicubic_resize(AnyImage(clone(p.view())), s, ctx);
    return std::move(std::get<Image<float>>(r.variant()));
}

// Immerkaer's estimate of the noise's standard deviation ("Fast noise variance estimation",
// CVIU 1996): sqrt(pi / 2) / (6 (W - 2) (H - 2)) sum |I * N|, N the 3 x 3 difference of two
// Laplacians (1 -2 1 / -2 4 -2 / 1 -2 1).
double immerkaer_sigma(const Image<float>& y) {
    const int w = y.width(), h = y.height();
    if (w < 3 || h < 3) return 0.0;
    double s = 0.0;
    for (int r = 1; r + 1 < h; ++r) {
        const float *a = y.view().row(r - 1), *b = y.view().row(r), *c = y.view().row(r + 1);
        for (int x = 1; x + 1 < w; ++x) {
            const double v = (a[x - 1] + a[x + 1] + c[x - 1] + c[x + 1]) -
                             2.0 * (a[x] + c[x] + b[x - 1] + b[x + 1]) + 4.0 * b[x];
            s += std::fabs(v);
        }
    }
    return std::sqrt(std::acos(-1.0) / 2.0) * s / (6.0 * (w - 2.0) * (h - 2.0));
}

// The fusion's weight scale: the option, or the reference frame's noise (at least the floor).
double sigma_of(double noise, const NlmsrOptions& o) {
    return o.sigma > 0.0 ? o.sigma : std::max(kSigmaFloor, noise);
}

NlmsrPlan plan_of(int patch, int search, double sigma, const NlmsrOptions& o) {
    NlmsrPlan p;
    p.patch_r = patch / 2;
    p.search_r = search / 2;
    p.neg_inv = -1.0 / (2.0 * sigma * sigma * patch * patch);
    p.block_x = o.block_x;
    p.block_y = o.block_y;
    p.block_z = o.block_z;
    return p;
}

void fuse_planes(const std::vector<Image<float>>& up, const Image<float>& estimate,
                 Image<float>& out, const NlmsrPlan& plan, Backend b,
                 [[maybe_unused]] const NlmsrOptions& o, const Context& ctx) {
    std::vector<Span2D<const float>> spans;
    for (const Image<float>& u : up) spans.push_back(span_of(u.view()));
    switch (b) {
        case Backend::Reference:
            return ref::nlm_fuse(spans, span_of(estimate.view()), span_of(out.view()), plan);
        case Backend::Cpu:
            return cpu::nlm_fuse(spans, span_of(estimate.view()), span_of(out.view()), plan,
                                 ctx.threads);
        case Backend::Cuda: {
#if UPRES_HAVE_CUDA
            const char* what = "nlm_fuse (staging)";
            std::vector<cuda::PooledImage<float>> d;
            std::vector<Span2D<const float>> ds;
            d.reserve(up.size());
            for (const Image<float>& u : up) {
                d.push_back(cuda::upload(u.view(), ctx.cuda_stream, what));
                ds.push_back(span_of(d.back().cview()));
            }
            const auto de = cuda::upload(estimate.view(), ctx.cuda_stream, what);
            const cuda::PooledImage<float> dz(out.width(), out.height(), 1, ctx.cuda_stream, what);
            cuda::nlm_fuse(ds, span_of(de.cview()), span_of(dz.view()), plan, o.variant,
                           ctx.cuda_stream);
            copy(dz.cview(), out.view(), ctx.cuda_stream);
            return;
#else
            break;
#endif
        }
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, "nlm_fuse: unresolved backend");
}

template <class T>
void run(std::span<const ImageView<const T>> frames, ImageView<T> out, const NlmsrOptions& o,
         const Context& ctx) {
    const int n = static_cast<int>(frames.size());
    if (n < 1 || n > nlmsr::kMaxFrames)
        fail(std::to_string(n) + " frames given (allowed: 1 to " +
             std::to_string(nlmsr::kMaxFrames) + ")");
    check_options(o);
    const ImageView<const T>& f0 = frames[0];
    if (f0.empty() || f0.data() == nullptr) fail("frame 0 is empty");
    const int w = f0.width(), h = f0.height(), c = f0.channels(), s = o.scale;
    if (c != 1 && c != 3)
        fail("the frames have " + std::to_string(c) + " channels (allowed: 1 gray, 3 RGB)");
    for (int i = 0; i < n; ++i) {
        const ImageView<const T>& f = frames[i];
        if (f.empty() || f.data() == nullptr) fail("frame " + std::to_string(i) + " is empty");
        if (f.width() != w || f.height() != h || f.channels() != c)
            fail("frame " + std::to_string(i) + " is " +
                 shape_text(f.width(), f.height(), f.channels()) + " but frame 0 is " +
                 shape_text(w, h, c) + " (all frames have one size and channel count)");
        if (f.on_device())
            fail("frame " + std::to_string(i) +
                 " is in device memory (allowed: host frames; the cuda backend stages them)");
        if constexpr (std::is_same_v<T, float>) {
            const std::int64_t at =
                find_nonfinite_host(f.data(), std::ptrdiff_t{w} * c, h, f.stride(), ctx.threads);
            if (at >= 0)
                fail("frame " + std::to_string(i) + " has a non-finite value at x " +
                     std::to_string(at % (std::int64_t{w} * c) / c) + ", y " +
                     std::to_string(at / (std::int64_t{w} * c)) + " (allowed: finite values)");
        }
    }
    const int ref = o.reference < 0 ? (n - 1) / 2 : o.reference;
    if (ref >= n)
        fail("reference " + std::to_string(o.reference) +
             " is out of range (allowed: -1 for the "
             "middle frame, or 0 to " +
             std::to_string(n - 1) + ")");
    if (out.data() == nullptr) fail("the output image is empty");
    if (out.width() != s * w || out.height() != s * h || out.channels() != c)
        fail("the output is " + shape_text(out.width(), out.height(), out.channels()) +
             " but must be " + shape_text(s * w, s * h, c) + " (scale x the frames' size)");
    if (out.on_device()) fail("the output is in device memory (allowed: host memory)");
    if (o.patch > s * w || o.patch > s * h || o.search > s * w || o.search > s * h)
        fail("the patch (" + std::to_string(o.patch) + ") or search window (" +
             std::to_string(o.search) + ") is larger than the " + std::to_string(s * w) + " x " +
             std::to_string(s * h) + " output");
    const Backend b = resolve_backend(ctx, Location::Host, kOp);
    if (b != Backend::Cuda && o.variant != NlmsrVariant::Fast)
        fail(std::string("variant ") + to_string(o.variant) + " is a cuda variant; the " +
             to_string(b) + " backend runs its own form (allowed: fast)");

    // Luma of every frame on the output grid; the reference's luma is the initial estimate.
    Image<float> cbcr;
    std::vector<Image<float>> luma, up;
    luma.reserve(n);
    up.reserve(n);
    for (int i = 0; i < n; ++i) {
        luma.push_back(luma_plane(frames[i], ctx, i == ref ? &cbcr : nullptr));
        up.push_back(resize(luma.back(), s, ctx));
    }
    const double noise = immerkaer_sigma(luma[ref]);
    const double sigma = sigma_of(noise, o);
    const NlmsrPlan plan = plan_of(o.patch, o.search, sigma, o);
    Image<float> x = clone(up[ref].view()), z(s * w, s * h, 1);
    for (int it = 0; it < o.iterations; ++it) {
        fuse_planes(up, x, z, plan, b, o, ctx);
        std::swap(x, z);
    }
    if (o.post == NlmsrPost::BackProject) {
        // The target: the reference denoised by the same fusion on the input grid (the patch
        // side divided by the scale, made odd; the weight scale the estimated noise).
        Image<float> target(w, h, 1);
        const NlmsrPlan lr_plan =
            plan_of((o.patch / s) | 1, o.search, std::max(kLowSigmaFloor, noise), o);
        fuse_planes(luma, luma[ref], target, lr_plan, b, o, ctx);
        for (int k = 0; k < o.back_projections; ++k) {
            Image<float> down = resize(x, 1.0 / s, ctx);
            for (int r = 0; r < h; ++r)
                for (int i = 0; i < w; ++i)
                    down.data()[r * w + i] = target.data()[r * w + i] - down.data()[r * w + i];
            const Image<float> corr = resize(down, s, ctx);
            for (int r = 0; r < s * h; ++r)
                for (int i = 0; i < s * w; ++i)
                    x.data()[r * s * w + i] += corr.data()[r * s * w + i];
        }
    }

    if (c == 1) {
        Image<float> v(s * w, s * h, 1);
        for (int r = 0; r < s * h; ++r)
            for (int i = 0; i < s * w; ++i)
                v.data()[r * s * w + i] = x.data()[r * s * w + i] / 255.0f;
        convert(ImageView<const float>(v.view()), out, true, nullptr, ctx.threads);
        return;
    }
    const Image<float> cbcr_up = resize(cbcr, s, ctx);
    Image<float> ycc(s * w, s * h, 3);
    for (int r = 0; r < s * h; ++r)
        for (int i = 0; i < s * w; ++i) {
            const std::size_t k = static_cast<std::size_t>(r) * s * w + i;
            float* p = ycc.data() + 3 * k;
            p[0] = x.data()[k];
            p[1] = cbcr_up.data()[2 * k];
            p[2] = cbcr_up.data()[2 * k + 1];
        }
    ycbcr_to_rgb(ImageView<const float>(ycc.view()), out, ctx);
}

}  // namespace

double nlmsr_sigma(const AnyImage& reference_frame, const NlmsrOptions& opts) {
    check_options(opts);
    if (reference_frame.empty()) fail("the reference frame is empty");
    return std::visit(
        [&](const auto& im) {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            if (im.on_device()) fail("the reference frame is in device memory (allowed: host)");
            if (im.channels() != 1 && im.channels() != 3)
                fail("the frame has " + std::to_string(im.channels()) +
                     " channels (allowed: 1 gray, 3 RGB)");
            return sigma_of(
                immerkaer_sigma(luma_plane(ImageView<const T>(im.view()), Context{}, nullptr)),
                opts);
        },
        reference_frame.variant());
}

void nlm_fuse(std::span<const ImageView<const std::uint8_t>> frames, ImageView<std::uint8_t> out,
              const NlmsrOptions& opts, const Context& ctx) {
    run(frames, out, opts, ctx);
}
void nlm_fuse(std::span<const ImageView<const std::uint16_t>> frames, ImageView<std::uint16_t> out,
              const NlmsrOptions& opts, const Context& ctx) {
    run(frames, out, opts, ctx);
}
void nlm_fuse(std::span<const ImageView<const float>> frames, ImageView<float> out,
              const NlmsrOptions& opts, const Context& ctx) {
    run(frames, out, opts, ctx);
}

AnyImage nlm_fuse(std::span<const AnyImage> frames, const NlmsrOptions& opts, const Context& ctx) {
    if (frames.empty()) fail("no frames given (allowed: 1 to 64)");
    check_options(opts);
    const PixelType t = frames[0].pixel_type();
    for (std::size_t i = 0; i < frames.size(); ++i) {
        if (frames[i].empty()) fail("frame " + std::to_string(i) + " is empty");
        if (frames[i].pixel_type() != t)
            fail("frame " + std::to_string(i) + " is " + to_string(frames[i].pixel_type()) +
                 " but frame 0 is " + to_string(t) + " (all frames have one pixel type)");
    }
    return std::visit(
        [&](const auto& f0) -> AnyImage {
            using I = std::remove_cvref_t<decltype(f0)>;
            using T = std::remove_cvref_t<decltype(*f0.data())>;
            std::vector<ImageView<const T>> views;
            for (const AnyImage& f : frames) views.push_back(std::get<I>(f.variant()).view());
            Image<T> out(opts.scale * f0.width(), opts.scale * f0.height(), f0.channels());
            run<T>(views, out.view(), opts, ctx);
            return AnyImage(std::move(out));
        },
        frames[0].variant());
}

}  // namespace upres
