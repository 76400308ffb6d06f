// upres::nlm_fuse: validation, luma and colour, the frames on the output grid, the fusion
// passes, the post-step, dispatch (upres/nlmsr.hpp).
#include <upres/nlmsr.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <upres/color.hpp>
#include <upres/error.hpp>
#include <upres/srcnn.hpp>
#include <upres/tiled.hpp>

#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/finite_scan.hpp"
#include "core/format_number.hpp"
#include "core/span2d.hpp"
#include "core/tiled_bands.hpp"
#include "core/tiled_devices.hpp"
#include "ops/nlmsr/nlmsr_backends.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"
#include "ops/srcnn/matlab_bicubic.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#include "core/finite_scan_cuda.hpp"
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
    if (!(o.noise < 0.0 || o.noise <= 255.0))
        fail("noise " + format_number(o.noise) +
             " is not allowed (allowed: < 0 to estimate it, or 0 to 255)");
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
    if (!std::isfinite(o.psf_sigma) || o.psf_sigma < 0.0 || o.psf_sigma > 2.0)
        fail("psf_sigma " + format_number(o.psf_sigma) + " is outside [0, 2]");
    if (o.reconstructions < 1 || o.reconstructions > 50)
        fail("reconstructions " + std::to_string(o.reconstructions) + " is outside [1, 50]");
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

// A float image of the pipeline: host memory for the host backends, upres's device pool for
// the cuda backend (every step then runs on the device; host frames are uploaded once and the
// result downloaded once).
class Plane {
  public:
    Plane() = default;
    Plane(int w, int h, int c, Location loc, [[maybe_unused]] void* stream) {
        if (loc == Location::Host) {
            host_ = Image<float>(w, h, c);
            return;
        }
#if UPRES_HAVE_CUDA
        dev_.emplace(w, h, c, stream, "nlm_fuse");
#else
        throw Error(ErrorCode::Internal, "nlm_fuse: a device plane in a build without CUDA");
#endif
    }
    ImageView<float> view() const {
#if UPRES_HAVE_CUDA
        if (dev_) return dev_->view();
#endif
        return host_.view();
    }
    ImageView<const float> cview() const { return view(); }
    Span2D<float> span() const { return span_of(view()); }
    Span2D<const float> cspan() const { return span_of(cview()); }

  private:
    mutable Image<float> host_;  // a handle: view() writes through it
#if UPRES_HAVE_CUDA
    std::optional<cuda::PooledImage<float>> dev_;
#endif
};

// Runs host(), or on the device the cuda pipeline step dev() (CUDA builds only).
template <class Host, class Dev>
void step(Location loc, Host&& host, [[maybe_unused]] Dev&& dev) {
    if (loc == Location::Host) return host();
#if UPRES_HAVE_CUDA
    dev();
#else
    throw Error(ErrorCode::Internal, "nlm_fuse: a device step in a build without CUDA");
#endif
}

// Luma on the 8-bit scale (gray: the value; colour: BT.601 Y), and for the reference frame of a
// colour sequence its Cb and Cr.
template <class T>
Plane luma_plane(ImageView<const T> f, const Context& ctx, Plane* cbcr) {
    const int w = f.width(), h = f.height();
    const Location loc = f.location();
    void* st = ctx.cuda_stream;
    Plane y(w, h, 1, loc, st);
    if (f.channels() == 1) {
        step(
            loc,
            [&] {
                const ImageView<float> yv = y.view();
                for (int r = 0; r < h; ++r)
                    for (int x = 0; x < w; ++x) yv.row(r)[x] = kToLevels<T> * f.row(r)[x];
            },
            [&] { cuda::nlm_scale(span_of(f), y.span(), kToLevels<T>, st); });
        return y;
    }
    const Plane ycc(w, h, 3, loc, st);
    rgb_to_ycbcr(f, ycc.view(), ctx);
    if (cbcr) *cbcr = Plane(w, h, 2, loc, st);
    step(
        loc,
        [&] {
            const ImageView<float> yv = y.view(), cv = cbcr ? cbcr->view() : ImageView<float>();
            for (int r = 0; r < h; ++r)
                for (int x = 0; x < w; ++x) {
                    const float* p = ycc.view().row(r) + 3 * x;
                    yv.row(r)[x] = p[0];
                    if (cbcr) {
                        cv.row(r)[2 * x] = p[1];
                        cv.row(r)[2 * x + 1] = p[2];
                    }
                }
        },
        [&] {
            cuda::nlm_get_channels(ycc.cspan(), 0, y.span(), st);
            if (cbcr) cuda::nlm_get_channels(ycc.cspan(), 1, cbcr->span(), st);
        });
    return y;
}

// p resized to w x h (MATLAB's bicubic), in p's memory.
Plane resized(const Plane& p, int w, int h, const Context& ctx) {
    const ImageView<const float> v = p.cview();
    Plane r(w, h, v.channels(), v.location(), ctx.cuda_stream);
    matlab_bicubic(v, r.view(), ctx);
    return r;
}

// Immerkaer's estimate of the noise's standard deviation ("Fast noise variance estimation",
// CVIU 1996): sqrt(pi / 2) / (6 (W - 2) (H - 2)) sum |I * N|, N the 3 x 3 difference of two
// Laplacians (1 -2 1 / -2 4 -2 / 1 -2 1).
double immerkaer_sigma(const Plane& y, const Context& ctx) {
    const ImageView<const float> v = y.cview();
    const int w = v.width(), h = v.height();
    if (w < 3 || h < 3) return 0.0;
    double s = 0.0;
    step(
        v.location(),
        [&] {
            for (int r = 1; r + 1 < h; ++r)
                s += nlmsr::immerkaer_row(v.row(r - 1), v.row(r), v.row(r + 1), w);
        },
        [&] { s = cuda::nlm_immerkaer_sum(span_of(v), ctx.cuda_stream); });
    return std::sqrt(std::acos(-1.0) / 2.0) * s / (6.0 * (w - 2.0) * (h - 2.0));
}

// The fusion's weight scale: the option, or the reference frame's noise (at least the floor).
double sigma_of(double noise, const NlmsrOptions& o) {
    return o.sigma > 0.0 ? o.sigma : std::max(kSigmaFloor, noise);
}

NlmsrPlan plan_of(int patch, int search, double sigma, const NlmsrOptions& o, int layout_rows) {
    NlmsrPlan p;
    p.layout_rows = layout_rows;
    p.patch_r = patch / 2;
    p.search_r = search / 2;
    p.neg_inv = -1.0 / (2.0 * sigma * sigma * patch * patch);
    p.block_x = o.block_x;
    p.block_y = o.block_y;
    p.block_z = o.block_z;
    return p;
}

// The fusion of `frames` around `estimate` into a new plane, on backend b (the planes' memory:
// the host's for Reference / Cpu, the device's for Cuda).
Plane fuse_planes(const std::vector<Plane>& frames, const Plane& estimate, const NlmsrPlan& plan,
                  Backend b, [[maybe_unused]] const NlmsrOptions& o, const Context& ctx) {
    const ImageView<const float> e = estimate.cview();
    Plane out(e.width(), e.height(), 1, e.location(), ctx.cuda_stream);
    std::vector<Span2D<const float>> spans;
    for (const Plane& f : frames) spans.push_back(f.cspan());
    switch (b) {
        case Backend::Reference:
            ref::nlm_fuse(spans, span_of(e), out.span(), plan);
            return out;
        case Backend::Cpu:
            cpu::nlm_fuse(spans, span_of(e), out.span(), plan, ctx.threads);
            return out;
        case Backend::Cuda:
#if UPRES_HAVE_CUDA
            cuda::nlm_fuse(spans, span_of(e), out.span(), plan, o.variant, ctx.cuda_stream);
            return out;
#else
            break;
#endif
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, "nlm_fuse: unresolved backend");
}

// out = the camera model of post Reconstruct (its transpose with the transposed taps) applied
// to x, or with `add`, out = add + k (that): the rows' pass into tmp, the columns' pass with the
// epilogue into out (which may be add, not x). Planes of one size and memory.
void psf_apply(const Plane& x, const Plane& tmp, const Plane& out, const nlmsr::PsfTaps& taps,
               const Plane* add, float k, Backend b, const Context& ctx) {
    const Span2D<const float> a = add ? add->cspan() : Span2D<const float>{};
    for (int axis = 0; axis < 2; ++axis) {
        const Span2D<const float> in = axis == 0 ? x.cspan() : tmp.cspan();
        const Span2D<float> o = axis == 0 ? tmp.span() : out.span();
        const Span2D<const float> ad = axis == 0 ? Span2D<const float>{} : a;
        switch (b) {
            case Backend::Reference:
                ref::nlm_psf(in, o, taps, axis, ad, k);
                break;
            case Backend::Cpu:
                cpu::nlm_psf(in, o, taps, axis, ctx.threads, ad, k);
                break;
            case Backend::Cuda:
#if UPRES_HAVE_CUDA
                cuda::nlm_psf(in, o, taps, axis, ctx.cuda_stream, ad, k);
                break;
#endif
            case Backend::Auto:
                throw Error(ErrorCode::Internal, "nlm_fuse: unresolved backend");
        }
    }
}

// Phase (a, b) of the output-grid plane hr as a plane on the input grid (gather), or lr written
// into that phase of hr (scatter).
void phase_copy(const Plane& hr, const Plane& lr, int s, int a, int b, bool gather,
                const Context& ctx) {
    const ImageView<const float> l = lr.cview();
    step(
        l.location(),
        [&] {
            for (int q = 0; q < l.height(); ++q)
                for (int p = 0; p < l.width(); ++p) {
                    float& hv = hr.view().row(s * q + b)[s * p + a];
                    float& lv = lr.view().row(q)[p];
                    if (gather)
                        lv = hv;
                    else
                        hv = lv;
                }
        },
        [&] {
            if (gather)
                cuda::nlm_phase(hr.cspan(), lr.span(), s, a, b, true, ctx.cuda_stream);
            else
                cuda::nlm_phase(lr.cspan(), hr.span(), s, a, b, false, ctx.cuda_stream);
        });
}

// x = a + k x, in the planes' memory.
void axpy(const Plane& a, const Plane& x, float k, const Context& ctx) {
    const ImageView<const float> v = a.cview();
    step(
        v.location(),
        [&] {
            for (int r = 0; r < v.height(); ++r)
                for (int i = 0; i < v.width(); ++i)
                    x.view().row(r)[i] = v.row(r)[i] + k * x.view().row(r)[i];
        },
        [&] { cuda::nlm_axpy(a.cspan(), x.span(), k, ctx.cuda_stream); });
}

// post Reconstruct (upres/nlmsr.hpp): the start, SRCNN of the scale on the denoised reference
// `target`; per iteration the dense target Z (every phase of the output grid fused on the input
// grid from all frames against that phase of P(X)), then Landweber rounds X += P^T (Z - P X).
Plane reconstruct(const std::vector<Plane>& luma, const Plane& target, const NlmsrPlan& plan,
                  Backend b, const NlmsrOptions& o, const Context& ctx,
                  std::optional<SrcnnOptions>* fixed) {
    const ImageView<const float> t = target.cview();
    const int w = t.width(), h = t.height(), s = o.scale;
    const Location loc = t.location();
    void* st = ctx.cuda_stream;
    const SrcnnModel model =
        o.model.empty() ? load_default_srcnn_model(s) : load_srcnn_model(o.model);
    if (model.scale != s)
        fail("the model " + o.model + " is for x" + std::to_string(model.scale) + ", not scale " +
             std::to_string(s));
    if (s * w < model.receptive_field() || s * h < model.receptive_field())
        fail("post reconstruct starts from SRCNN, whose receptive field (" +
             std::to_string(model.receptive_field()) + " pixels) is larger than the " +
             std::to_string(s * w) + " x " + std::to_string(s * h) +
             " output (allowed: post none or backproject)");
    const Plane up = resized(target, s * w, s * h, ctx);
    const Plane in(s * w, s * h, 1, loc, st), net(s * w, s * h, 1, loc, st);
    Plane x(s * w, s * h, 1, loc, st);
    step(
        loc,
        [&] {
            for (int r = 0; r < s * h; ++r)
                for (int i = 0; i < s * w; ++i) in.view().row(r)[i] = up.cview().row(r)[i] / 255.0f;
        },
        [&] { cuda::nlm_divide(up.cspan(), in.span(), 255.0f, st); });
    Context nctx = ctx;
    nctx.backend = b;
    SrcnnOptions so;
    so.precision = o.precision;
    if (fixed && *fixed) so = **fixed;
    const SrcnnPlan sp = srcnn_forward(in.cview(), net.view(), model, so, nctx);
    if (fixed && !*fixed) {  // the kernels this band ran, for the bands after it
        so.precision = sp.precision;
        so.variant = sp.fused ? SrcnnVariant::FusedNetwork : SrcnnVariant::Auto;
        if (!sp.fused) so.layer_variants = sp.layers;
        *fixed = so;
    }
    step(
        loc,
        [&] {
            for (int r = 0; r < s * h; ++r)
                for (int i = 0; i < s * w; ++i) x.view().row(r)[i] = 255.0f * net.cview().row(r)[i];
        },
        [&] { cuda::nlm_scale(net.cspan(), x.span(), 255.0f, st); });
    const Plane z(s * w, s * h, 1, loc, st), phase(w, h, 1, loc, st);
    const Plane tmp(s * w, s * h, 1, loc, st), r(s * w, s * h, 1, loc, st);
    const nlmsr::PsfTaps p = nlmsr::psf_taps(s, o.psf_sigma, false),
                         pt = nlmsr::psf_taps(s, o.psf_sigma, true);
    for (int it = 0; it < o.iterations; ++it) {
        psf_apply(x, tmp, r, p, nullptr, 1.0f, b, ctx);  // P X, whose phases the frames match
        for (int pb = 0; pb < s; ++pb)
            for (int pa = 0; pa < s; ++pa) {
                phase_copy(r, phase, s, pa, pb, true, ctx);
                const Plane zp = fuse_planes(luma, phase, plan, b, o, ctx);
                phase_copy(z, zp, s, pa, pb, false, ctx);
            }
        for (int k = 0; k < o.reconstructions; ++k) {
            psf_apply(x, tmp, r, p, &z, -1.0f, b, ctx);  // r = Z - P X
            psf_apply(r, tmp, x, pt, &x, 1.0f, b, ctx);  // X += P^T r
        }
    }
    return x;
}

// The luma result x (8-bit scale) and, for colour, the reference's Cb / Cr on the input grid,
// written to `out` (same memory as the planes).
template <class T>
void write_output(const Plane& x, const Plane& cbcr, ImageView<T> out, const Context& ctx) {
    const ImageView<const float> xv = x.cview();
    const int W = xv.width(), H = xv.height();
    const Location loc = xv.location();
    void* st = ctx.cuda_stream;
    if (out.channels() == 1) {
        const Plane v(W, H, 1, loc, st);
        step(
            loc,
            [&] {
                for (int r = 0; r < H; ++r)
                    for (int i = 0; i < W; ++i) v.view().row(r)[i] = xv.row(r)[i] / 255.0f;
            },
            [&] { cuda::nlm_divide(span_of(xv), v.span(), 255.0f, st); });
        convert(v.cview(), out, true, st, ctx.threads);
        return;
    }
    const Plane cbcr_up = resized(cbcr, W, H, ctx);
    const Plane ycc(W, H, 3, loc, st);
    step(
        loc,
        [&] {
            for (int r = 0; r < H; ++r)
                for (int i = 0; i < W; ++i) {
                    float* p = ycc.view().row(r) + 3 * i;
                    p[0] = xv.row(r)[i];
                    p[1] = cbcr_up.cview().row(r)[2 * i];
                    p[2] = cbcr_up.cview().row(r)[2 * i + 1];
                }
        },
        [&] {
            cuda::nlm_set_channels(span_of(xv), ycc.span(), 0, st);
            cuda::nlm_set_channels(cbcr_up.cspan(), ycc.span(), 1, st);
        });
    ycbcr_to_rgb(ycc.cview(), out, ctx);
}

// A band of a larger image (nlm_fuse_tiled): the whole frames' rows, which the kernels' choices
// follow, and post Reconstruct's SRCNN kernels on the cuda backend (its Auto choice depends on
// the plane's shape): those given, else those the band ran are stored (the first band's then
// serve every band).
struct BandOf {
    int whole_rows = 0;
    std::optional<SrcnnOptions>* srcnn = nullptr;
};

template <class T>
void run(std::span<const ImageView<const T>> frames, ImageView<T> out, const NlmsrOptions& o,
         const Context& ctx, const BandOf* band = nullptr) {
    const int n = static_cast<int>(frames.size());
    if (n < 1 || n > nlmsr::kMaxFrames)
        fail(std::to_string(n) + " frames given (allowed: 1 to " +
             std::to_string(nlmsr::kMaxFrames) + ")");
    check_options(o);
    const ImageView<const T>& f0 = frames[0];
    if (f0.empty() || f0.data() == nullptr) fail("frame 0 is empty");
    const int w = f0.width(), h = f0.height(), c = f0.channels(), s = o.scale;
    const Location in_loc = f0.location();
    if (c != 1 && c != 3)
        fail("the frames have " + std::to_string(c) + " channels (allowed: 1 gray, 3 RGB)");
    for (int i = 0; i < n; ++i) {
        const ImageView<const T>& f = frames[i];
        if (f.empty() || f.data() == nullptr) fail("frame " + std::to_string(i) + " is empty");
        if (f.width() != w || f.height() != h || f.channels() != c)
            fail("frame " + std::to_string(i) + " is " +
                 shape_text(f.width(), f.height(), f.channels()) + " but frame 0 is " +
                 shape_text(w, h, c) + " (all frames have one size and channel count)");
        if (f.location() != in_loc)
            fail("frame " + std::to_string(i) + " is in " + to_string(f.location()) +
                 " memory but frame 0 in " + to_string(in_loc) +
                 " memory (all frames in one place)");
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
    if (o.patch > s * w || o.patch > s * h || o.search > s * w || o.search > s * h)
        fail("the patch (" + std::to_string(o.patch) + ") or search window (" +
             std::to_string(o.search) + ") is larger than the " + std::to_string(s * w) + " x " +
             std::to_string(s * h) + " output");
    const Backend b = resolve_backend(ctx, in_loc, kOp);
    const DeviceScope device_scope(ctx, b, kOp);
    if (out.on_device() && b != Backend::Cuda)
        fail(std::string("the output is in device memory (allowed with the cuda backend; the ") +
             to_string(b) + " backend writes host memory)");
    if (b != Backend::Cuda && o.variant != NlmsrVariant::Fast)
        fail(std::string("variant ") + to_string(o.variant) + " is a cuda variant; the " +
             to_string(b) + " backend runs its own form (allowed: fast)");
    if (b != Backend::Cuda && o.post == NlmsrPost::Reconstruct &&
        o.precision != SrcnnPrecision::Fp32)
        fail(std::string("precision ") + to_string(o.precision) + " needs the cuda backend (the " +
             to_string(b) + " backend runs fp32)");
    const Location loc = b == Backend::Cuda ? Location::Device : Location::Host;
    [[maybe_unused]] void* st = ctx.cuda_stream;
    if constexpr (std::is_same_v<T, float>)
        for (int i = 0; i < n; ++i) {
            const ImageView<const float>& f = frames[i];
            std::int64_t at = -1;
            step(
                in_loc,
                [&] {
                    at = find_nonfinite_host(f.data(), std::ptrdiff_t{w} * c, h, f.stride(),
                                             ctx.threads);
                },
                [&] {
#if UPRES_HAVE_CUDA
                    at = cuda::find_nonfinite_device(span_of(f), st);
#endif
                });
            if (at >= 0)
                fail("frame " + std::to_string(i) + " has a non-finite value at x " +
                     std::to_string(at % (std::int64_t{w} * c) / c) + ", y " +
                     std::to_string(at / (std::int64_t{w} * c)) + " (allowed: finite values)");
        }

        // The frames where the pipeline runs: host frames uploaded once for the cuda backend.
#if UPRES_HAVE_CUDA
    std::vector<cuda::PooledImage<T>> staged;
#endif
    std::vector<ImageView<const T>> fv(frames.begin(), frames.end());
    if (loc != in_loc) {
#if UPRES_HAVE_CUDA
        staged.reserve(n);
        for (int i = 0; i < n; ++i) {
            staged.push_back(cuda::upload(frames[i], st, "nlm_fuse (staging)"));
            fv[i] = staged.back().cview();
        }
#endif
    }

    // Luma of every frame, and on the output grid (not for post Reconstruct, which fuses on the
    // input grid); the reference's luma there is the initial estimate.
    Plane cbcr;
    std::vector<Plane> luma, up;
    luma.reserve(n);
    up.reserve(n);
    for (int i = 0; i < n; ++i) {
        luma.push_back(luma_plane(fv[i], ctx, i == ref ? &cbcr : nullptr));
        if (o.post != NlmsrPost::Reconstruct) up.push_back(resized(luma.back(), s * w, s * h, ctx));
    }
    const double noise = o.noise >= 0.0 ? o.noise : immerkaer_sigma(luma[ref], ctx);
    const double sigma = sigma_of(noise, o);
    const int lr_rows = band ? band->whole_rows : 0, hr_rows = s * lr_rows;
    const NlmsrPlan plan = plan_of(o.patch, o.search, sigma, o, hr_rows);
    // The back-projection's and the reconstruction's target: the reference denoised by the same
    // fusion on the input grid (the patch side divided by the scale, made odd; the weight scale
    // the estimated noise).
    const int lr_patch = (o.patch / s) | 1;
    std::optional<Plane> target;
    if (o.post != NlmsrPost::None)
        target = fuse_planes(
            luma, luma[ref],
            plan_of(lr_patch, o.search, std::max(kLowSigmaFloor, noise), o, lr_rows), b, o, ctx);
    Plane x;
    if (o.post == NlmsrPost::Reconstruct) {
        x = reconstruct(luma, *target, plan_of(lr_patch, o.search, sigma, o, lr_rows), b, o, ctx,
                        band ? band->srcnn : nullptr);
    } else {
        x = fuse_planes(up, up[ref], plan, b, o, ctx);
        for (int it = 1; it < o.iterations; ++it) x = fuse_planes(up, x, plan, b, o, ctx);
    }
    if (o.post == NlmsrPost::BackProject) {
        for (int k = 0; k < o.back_projections; ++k) {
            const Plane down = resized(x, w, h, ctx);
            axpy(*target, down, -1.0f, ctx);  // the residual T - D(X)
            const Plane corr = resized(down, s * w, s * h, ctx);
            axpy(corr, x, 1.0f, ctx);
        }
    }

    if (loc == out.location()) return write_output(x, cbcr, out, ctx);
#if UPRES_HAVE_CUDA
    // A host output of the cuda backend: written on the device, downloaded once.
    const cuda::PooledImage<T> d(out.width(), out.height(), c, st, "nlm_fuse (staging)");
    write_output(x, cbcr, d.view(), ctx);
    copy(d.cview(), out, st);
#endif
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
                immerkaer_sigma(luma_plane(ImageView<const T>(im.view()), Context{}, nullptr),
                                Context{}),
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
            Image<T> out(opts.scale * f0.width(), opts.scale * f0.height(), f0.channels(),
                         f0.location());
            run<T>(views, out.view(), opts, ctx);
            return AnyImage(std::move(out));
        },
        frames[0].variant());
}

// ---------------------------------------------------------------- tiled (upres/tiled.hpp)

namespace {

constexpr const char* kTiledOp = "nlm_fuse_tiled";

// The cpu fusion sums patch distances in runs of 32 rows from its plane's first row
// (nlmsr_cpu.cpp): a band's planes start at a multiple of 32 input rows (and so of 32 output
// rows), where the whole image's runs start too.
constexpr int kRowAlign = 32;

// Input rows beyond a band that its outputs read, through every step (each step's reach on the
// input grid, summed as the steps compound): the bicubic up-scaling 2 (+1 for the rounding of
// its taps' span); a fusion: the cpu backend slides its patch distances down runs of 32 rows
// (nlmsr_cpu.cpp), whose rounding carries the rows its run started from, so a fusion's output
// reads back to its run's start plus the patch and search radii (32 + patch / 2 + search / 2
// rows of its grid; on the output grid per iteration, on the input grid for the target and the
// reconstruction's dense target); each back-projection round (the antialiased down-scaling's
// 2 s output pixels and the up-scaling, 3 + 3); for the reconstruction SRCNN's start (its
// bicubic step and the largest network's 21 output pixels) and the camera model P and P^T per
// round (its Gaussian's 3 psf_sigma s output pixels and the box of s). A few rows more for
// safety; the tests cut bands at every alignment and compare the bytes of float outputs.
int reach_rows(const NlmsrOptions& o) {
    const int s = o.scale;
    const int up = 3;
    const int fuse_hr = (kRowAlign + o.patch / 2 + o.search / 2 + s - 1) / s + 1;
    const int lr_patch = (o.patch / s) | 1;
    const int fuse_lr = kRowAlign + lr_patch / 2 + o.search / 2;
    int reach = 0;
    if (o.post == NlmsrPost::Reconstruct) {
        const int psf = static_cast<int>(std::ceil(3.0 * o.psf_sigma * s)) + s;
        const int p = (psf + s - 1) / s + 1;
        const int start = fuse_lr + up + (21 + s - 1) / s + 1;
        reach = o.iterations * (start + p + fuse_lr + 2 * p * o.reconstructions);
    } else {
        reach = up + o.iterations * fuse_hr;
        if (o.post == NlmsrPost::BackProject)
            reach = std::max(reach, fuse_lr) + 6 * o.back_projections;
    }
    return reach + up + 4;  // the colour planes' bicubic step, and the safety rows
}

// Input rows per band from TiledOptions::band_rows (output rows): a multiple of kRowAlign.
int band_input_rows(int band_rows, int scale) {
    return std::max(kRowAlign, (band_rows / scale + kRowAlign - 1) / kRowAlign * kRowAlign);
}

// The first input row of the band holding output row y (bands start at multiples of kRowAlign).
int first_band_row(int y, int scale) { return y / scale / kRowAlign * kRowAlign; }

// The input rows [lo, hi) a band of input rows [a, b) reads: the halo above (its first row at a
// multiple of kRowAlign) and below.
std::pair<int, int> band_read_rows(int a, int b, int halo, int h) {
    return {std::max(0, a - halo) / kRowAlign * kRowAlign, std::min(h, b + halo)};
}

// Immerkaer's noise of a frame read row by row (NlmsrNoise: immerkaer_sigma's sum, in its order).
template <class T>
double stream_noise(RowSource& src, std::int64_t& rows_read) {
    const int w = src.width(), h = src.height(), c = src.channels();
    constexpr int kChunk = 256;
    tiled::Rows<T> buf;
    buf.reset(kChunk, std::ptrdiff_t{w} * c);
    NlmsrNoise noise(w, h);
    for (int y = 0; y < h; y += kChunk) {
        const int n = std::min(kChunk, h - y);
        src.read_rows(y, n, buf.at(0), buf.row);
        rows_read += n;
        noise.push(ImageView<const T>(buf.at(0), w, n, c, buf.row));
    }
    return noise.value();
}

template <class T>
TiledStats fuse_tiled(std::span<RowSource* const> frames, RowSink& dst, const NlmsrOptions& o,
                      const TiledOptions& to, const Context& ctx, const std::vector<int>& devices) {
    const int n = static_cast<int>(frames.size());
    const int w = frames[0]->width(), h = frames[0]->height(), c = frames[0]->channels();
    const int s = o.scale, ow = s * w, oh = s * h;
    const int ref = o.reference < 0 ? (n - 1) / 2 : o.reference;
    const bool cuda = ctx.backend == Backend::Cuda;
    std::int64_t noise_rows = 0;
    NlmsrOptions bo = o;
    if (bo.noise < 0.0) bo.noise = stream_noise<T>(*frames[ref], noise_rows);
    const int halo = reach_rows(o);
    // Bytes of a band of `in_rows` input rows and its halo on one device: the frames (their
    // pixels, luma and up-scaled luma), the fusion's planes on the output grid and the output (on
    // the cuda backend the planes are device memory, counted as on the host).
    const auto band_bytes = [&](int in_rows) {
        const double rows = std::min(h, in_rows + 2 * halo + kRowAlign);
        const double per_row =
            static_cast<double>(w) * (n * (sizeof(T) * c + 4.0 + 4.0 * s * s) + 24.0 * s * s +
                                      static_cast<double>(sizeof(T)) * c * s * s);
        return static_cast<std::size_t>(rows * per_row);
    };
    // Every device holds a band at once.
    const auto need = [&](int in_rows) { return devices.size() * band_bytes(in_rows); };
    const std::size_t budget =
        to.max_memory > 0 ? to.max_memory : (std::size_t{256} << 20) * devices.size();
    int band_in;  // input rows per band: a multiple of kRowAlign (or the whole height)
    if (to.band_rows > 0) {
        band_in = band_input_rows(to.band_rows, s);
    } else {
        band_in = kRowAlign;
        while (band_in < h && need(band_in + kRowAlign) <= budget) band_in += kRowAlign;
        if (need(kRowAlign) > budget)
            tiled::fail(kTiledOp, "max_memory " + std::to_string(budget) +
                                      " bytes is too small: a band of " +
                                      std::to_string(kRowAlign) + " input rows and its " +
                                      std::to_string(halo) + " rows of halo need " +
                                      std::to_string(need(kRowAlign)));
        if (to.max_band_rows > 0)
            band_in = std::max(kRowAlign,
                               std::min(band_in, to.max_band_rows / s / kRowAlign * kRowAlign));
    }
    band_in = std::max(kRowAlign, band_in);
    const int end = tiled::end_row(to, oh);
    const int a0 = first_band_row(to.first_row, s), a_end = (end + s - 1) / s;
    const int bands = a_end > a0 ? (a_end - a0 + band_in - 1) / band_in : 0;
    std::mutex reading;  // the frames, read by one device's thread at a time
    // cuda, post Reconstruct: the SRCNN kernels band 0 ran, for every band (first_alone).
    std::optional<SrcnnOptions> srcnn;
    const BandOf layout{h, cuda ? &srcnn : nullptr};
    struct Bufs {
        std::vector<Image<T>> held;  // every frame's rows of the band, reused
        Image<T> out;
        int lo = 0;
    };
    using Worker = tiled::StateWorker<Bufs>;
    const auto rows_of = [&](int b) {
        const int a = a0 + b * band_in;
        return std::pair{a, std::min(h, a + band_in)};
    };
    const auto compute = [&](int b, Worker& wk) {
        const auto [a, z] = rows_of(b);
        const auto [lo, hi] = band_read_rows(a, z, halo, h);
        Bufs& st = wk.state;
        st.held.resize(static_cast<std::size_t>(n));
        std::vector<ImageView<const T>> views(static_cast<std::size_t>(n));
        for (int i = 0; i < n; ++i) {
            if (st.held[i].height() != hi - lo) st.held[i] = Image<T>(w, hi - lo, c);
            {
                const std::lock_guard<std::mutex> l(reading);
                frames[i]->read_rows(lo, hi - lo, st.held[i].data(), st.held[i].stride());
            }
            wk.stats.rows_read += hi - lo;
            views[i] = st.held[i].view();
        }
        if (st.out.height() != s * (hi - lo)) st.out = Image<T>(ow, s * (hi - lo), c);
        st.lo = lo;
        run<T>(std::span<const ImageView<const T>>(views), st.out.view(), bo, wk.ctx, &layout);
        wk.stats.buffer_bytes = band_bytes(band_in);
    };
    const auto write = [&](int b, Worker& wk) {
        const auto [a, z] = rows_of(b);
        const int y0 = std::max(s * a, to.first_row), y1 = std::min(s * z, end);
        dst.write_rows(y0, y1 - y0, wk.state.out.view().row(y0 - s * wk.state.lo),
                       wk.state.out.stride());
        ++wk.stats.bands;
        if (to.progress) to.progress(y1, oh);
    };
    TiledStats st =
        tiled::run_state_bands<Bufs>(bands, devices, ctx, compute, write,
                                     /*first_alone=*/cuda && o.post == NlmsrPost::Reconstruct);
    st.rows_read += noise_rows;
    st.band_rows = s * band_in;
    dst.commit();
    return st;
}

}  // namespace

RowRange nlm_fuse_tiled_source_rows(int width, int height, const NlmsrOptions& opts, int y0,
                                    int y1) {
    check_options(opts);
    const int s = opts.scale;
    tiled::check_side(kTiledOp, width, "the frames' width");
    tiled::check_side(kTiledOp, height, "the frames' height");
    tiled::check_range(kTiledOp, s * height, y0, y1);
    const int halo = reach_rows(opts), band_in = band_input_rows(y1 - y0, s);
    RowRange r{height, 0};
    for (int a = first_band_row(y0, s); s * a < y1; a += band_in) {
        const auto [lo, hi] = band_read_rows(a, std::min(height, a + band_in), halo, height);
        r.first = std::min(r.first, lo);
        r.last = std::max(r.last, hi);
    }
    return r;
}

NlmsrNoise::NlmsrNoise(int width, int height) : width_(width), height_(height) {
    if (width < 1 || height < 1)
        throw Error(ErrorCode::InvalidArgument, "NlmsrNoise: the frame is " +
                                                    std::to_string(width) + " x " +
                                                    std::to_string(height) + " (at least 1 x 1)");
}

template <class T>
void NlmsrNoise::push_rows(ImageView<const T> rows) {
    const int w = width_, n = rows.height();
    if (rows.width() != w || (rows.channels() != 1 && rows.channels() != 3) || rows.on_device() ||
        n > height_ - rows_)
        throw Error(ErrorCode::InvalidArgument,
                    "NlmsrNoise: rows of " + std::to_string(rows.width()) + " x " +
                        std::to_string(rows.channels()) + " (" + std::to_string(n) +
                        " of them) in host memory; the frame is " + std::to_string(w) +
                        " wide, 1 or 3 channels, with " + std::to_string(height_ - rows_) +
                        " rows left");
    if (n == 0) return;
    if constexpr (std::is_same_v<T, float>) {
        const std::int64_t at = find_nonfinite_host(
            rows.data(), std::ptrdiff_t{w} * rows.channels(), n, rows.stride(), 0);
        if (at >= 0)
            throw Error(ErrorCode::InvalidArgument,
                        "NlmsrNoise: a NaN or infinite value at row " +
                            std::to_string(rows_ + at / (std::int64_t{w} * rows.channels())) +
                            " (allowed: finite values)");
    }
    Context cpu;
    cpu.backend = Backend::Cpu;
    const Plane y = luma_plane(rows, cpu, nullptr);
    const ImageView<const float> l = y.cview();
    // The luma of the two rows before (last_) and of these, in one run of rows.
    const int kept = static_cast<int>(last_.size()) / w;
    std::vector<float> run(static_cast<std::size_t>(kept + n) * w);
    std::copy(last_.begin(), last_.end(), run.begin());
    for (int r = 0; r < n; ++r)
        std::copy(l.row(r), l.row(r) + w, run.begin() + std::ptrdiff_t{kept + r} * w);
    const auto row = [&](int image_row) {  // image_row in [rows_ - kept, rows_ + n)
        return run.data() + std::ptrdiff_t{image_row - (rows_ - kept)} * w;
    };
    // Row r's term needs rows r - 1 .. r + 1: the terms of r in [max(1, rows_ - kept + 1),
    // rows_ + n - 1) ∩ [1, height - 1), in order (immerkaer_sigma's loop).
    if (w >= 3 && height_ >= 3)
        for (int r = std::max(1, rows_ - kept + 1); r < std::min(height_ - 1, rows_ + n - 1); ++r)
            sum_ += nlmsr::immerkaer_row(row(r - 1), row(r), row(r + 1), w);
    rows_ += n;
    const int keep = std::min(2, kept + n);
    last_.assign(run.end() - std::ptrdiff_t{keep} * w, run.end());
}

void NlmsrNoise::push(ImageView<const std::uint8_t> rows) { push_rows(rows); }
void NlmsrNoise::push(ImageView<const std::uint16_t> rows) { push_rows(rows); }
void NlmsrNoise::push(ImageView<const float> rows) { push_rows(rows); }

double NlmsrNoise::value() const {
    if (rows_ < height_)
        throw Error(ErrorCode::InvalidArgument, "NlmsrNoise: the value needs all " +
                                                    std::to_string(height_) + " rows (" +
                                                    std::to_string(rows_) + " pushed)");
    const int w = width_, h = height_;
    if (w < 3 || h < 3) return 0.0;
    return std::sqrt(std::acos(-1.0) / 2.0) * sum_ / (6.0 * (w - 2.0) * (h - 2.0));
}

TiledStats nlm_fuse_tiled(std::span<RowSource* const> frames, RowSink& dst,
                          const NlmsrOptions& opts, const TiledOptions& topts, const Context& ctx) {
    check_options(opts);
    if (frames.empty() || frames.size() > 64)
        tiled::fail(kTiledOp, std::to_string(frames.size()) + " frames (allowed: 1 to 64)");
    for (std::size_t i = 0; i < frames.size(); ++i)
        if (!frames[i]) tiled::fail(kTiledOp, "frame " + std::to_string(i) + " is null");
    const RowSource& f0 = *frames[0];
    tiled::check_call(kTiledOp, f0, opts.scale * f0.width(), opts.scale * f0.height(), topts, ctx,
                      /*cuda=*/true);
    if (f0.channels() != 1 && f0.channels() != 3)
        tiled::fail(kTiledOp, "the frames have " + std::to_string(f0.channels()) +
                                  " channels (allowed: 1 gray, 3 RGB)");
    for (std::size_t i = 1; i < frames.size(); ++i) {
        const RowSource& f = *frames[i];
        if (f.width() != f0.width() || f.height() != f0.height() || f.channels() != f0.channels() ||
            f.type() != f0.type())
            tiled::fail(kTiledOp,
                        "frame " + std::to_string(i) + " is " + std::to_string(f.width()) + " x " +
                            std::to_string(f.height()) + " x " + std::to_string(f.channels()) +
                            " " + to_string(f.type()) + " but frame 0 is " +
                            std::to_string(f0.width()) + " x " + std::to_string(f0.height()) +
                            " x " + std::to_string(f0.channels()) + " " + to_string(f0.type()) +
                            " (all frames alike)");
    }
    if (opts.reference >= static_cast<int>(frames.size()))
        tiled::fail(kTiledOp, "reference " + std::to_string(opts.reference) +
                                  " is out of range (allowed: -1 for the middle frame, or 0 to " +
                                  std::to_string(frames.size() - 1) + ")");
    const bool cuda = ctx.backend == Backend::Cuda;
    if (!cuda && opts.variant != NlmsrVariant::Fast)
        tiled::fail(kTiledOp, std::string("variant ") + to_string(opts.variant) +
                                  " is a cuda variant (allowed on the cpu backend: fast)");
    if (!cuda && opts.post == NlmsrPost::Reconstruct && opts.precision != SrcnnPrecision::Fp32)
        tiled::fail(kTiledOp, std::string("precision ") + to_string(opts.precision) +
                                  " needs the cuda backend (the cpu backend runs fp32)");
    Context bc = ctx;
    if (!cuda) bc.backend = Backend::Cpu;  // Auto: the frames are host rows
    const std::vector<int> devices =
        cuda ? tiled::cuda_devices(kTiledOp, topts, ctx) : std::vector<int>{ctx.device};
    switch (f0.type()) {
        case PixelType::U8:
            return fuse_tiled<std::uint8_t>(frames, dst, opts, topts, bc, devices);
        case PixelType::U16:
            return fuse_tiled<std::uint16_t>(frames, dst, opts, topts, bc, devices);
        case PixelType::F32:
            return fuse_tiled<float>(frames, dst, opts, topts, bc, devices);
    }
    tiled::fail(kTiledOp, "unknown pixel type");
}

}  // namespace upres
