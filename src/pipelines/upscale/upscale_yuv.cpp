// upres::upscale_yuv (upres/yuv.hpp): a planar Y'CbCr frame upscaled plane by plane, luma
// through upscale(), chroma through Keys bicubic on the exact chroma sample positions.
#include <upres/yuv.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <upres/error.hpp>
#include <upres/warp.hpp>

#include "core/device_scope.hpp"
#include "core/format_number.hpp"
#include "core/span2d.hpp"
#include "pipelines/upscale/upscale_planes.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#endif

namespace upres {

namespace {

constexpr const char* kOp = "upscale_yuv";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

bool cosited_method(const UpscaleOptions& o) { return resolved_lattice(o) == Lattice::CoSited; }

int ceil_shift(int n, int shift) { return (n + (1 << shift) - 1) >> shift; }

// The chroma sample's offset from its first luma sample, in luma samples, along one axis with
// subsampling 2^shift: 0 (co-sited with it), half-way, or (vertically) on the next row.
double siting_offset(ChromaSiting s, int shift, bool vertical) {
    if (shift == 0) return 0.0;
    const double sub = 1 << shift;
    if (!vertical) {
        const bool left =
            s == ChromaSiting::Left || s == ChromaSiting::TopLeft || s == ChromaSiting::BottomLeft;
        return left ? 0.0 : 0.5 * (sub - 1);
    }
    if (s == ChromaSiting::Top || s == ChromaSiting::TopLeft) return 0.0;
    if (s == ChromaSiting::Bottom || s == ChromaSiting::BottomLeft) return sub - 1;
    return 0.5 * (sub - 1);
}

// The input chroma coordinate of output chroma sample j along one axis, i = a j + b: output
// chroma j sits at output luma sub j + off, which the lattice maps to input luma L(.), which is
// input chroma (L(.) - off) / sub.
std::pair<double, double> chroma_map(bool cosited, double scale, int in_len, int out_len, int shift,
                                     double off) {
    const double sub = 1 << shift;
    if (cosited) {  // L(x) = r x, r = in / out (the co-sited pipeline's step)
        const double r = static_cast<double>(in_len) / out_len;
        return {r, off * (r - 1.0) / sub};
    }
    // L(x) = (x + 0.5) / s - 0.5
    return {1.0 / scale, ((off + 0.5) / scale - 0.5 - off) / sub};
}

template <class T>
void check_plane(const ImageView<T>& v, int w, int h, const char* name, const char* which) {
    if (v.data() == nullptr || v.empty())
        fail(std::string("the ") + which + " " + name + " plane is empty");
    if (v.channels() != 1)
        fail(std::string("the ") + which + " " + name + " plane has " +
             std::to_string(v.channels()) + " channels (allowed: 1)");
    if (v.width() != w || v.height() != h)
        fail(std::string("the ") + which + " " + name + " plane is " + std::to_string(v.width()) +
             " x " + std::to_string(v.height()) + " but must be " + std::to_string(w) + " x " +
             std::to_string(h));
}

template <class T>
void check_layout(const YuvPlanes<const T>& in, const YuvPlanes<T>& out, const YuvLayout& l,
                  const UpscaleOptions& opts) {
    constexpr bool wide = sizeof(T) == 2;
    if (wide ? (l.bits < 9 || l.bits > 16) : l.bits != 8)
        fail("bits is " + std::to_string(l.bits) +
             " (allowed: " + (wide ? "9 to 16 for 16-bit planes" : "8 for 8-bit planes") + ")");
    if (l.shift_x < 0 || l.shift_x > 1 || l.shift_y < 0 || l.shift_y > 1)
        fail("chroma shifts " + std::to_string(l.shift_x) + ", " + std::to_string(l.shift_y) +
             " (allowed: 0 or 1 each: 4:4:4, 4:2:2, 4:2:0)");
    const bool gray = in.cb.data() == nullptr && in.cr.data() == nullptr;
    if (gray != (out.cb.data() == nullptr && out.cr.data() == nullptr))
        fail("the input and the output must both have chroma planes or both have none");
    const int w = in.y.width(), h = in.y.height();
    check_plane(in.y, in.y.width(), in.y.height(), "luma", "input");
    const auto [ow, oh] = upscale_yuv_size(w, h, opts);
    check_plane(out.y, ow, oh, "luma", "output");
    const Location loc = in.y.location();
    bool same_memory = out.y.location() == loc;
    if (!gray) {
        check_plane(in.cb, ceil_shift(w, l.shift_x), ceil_shift(h, l.shift_y), "cb", "input");
        check_plane(in.cr, ceil_shift(w, l.shift_x), ceil_shift(h, l.shift_y), "cr", "input");
        check_plane(out.cb, ceil_shift(ow, l.shift_x), ceil_shift(oh, l.shift_y), "cb", "output");
        check_plane(out.cr, ceil_shift(ow, l.shift_x), ceil_shift(oh, l.shift_y), "cr", "output");
        same_memory = same_memory && in.cb.location() == loc && in.cr.location() == loc &&
                      out.cb.location() == loc && out.cr.location() == loc;
    }
    if (!same_memory)
        fail("the planes are in different memory (all host or all device, not mixed)");
}

template <class T>
void upscale_chroma(ImageView<const T> in, ImageView<T> out, const YuvLayout& l, bool cosited,
                    const UpscaleOptions& opts, int luma_w, int luma_h, int out_w, int out_h,
                    const Context& ctx) {
    const double ox = siting_offset(l.siting, l.shift_x, false);
    const double oy = siting_offset(l.siting, l.shift_y, true);
    const auto [ax, bx] = chroma_map(cosited, opts.scale, luma_w, out_w, l.shift_x, ox);
    const auto [ay, by] = chroma_map(cosited, opts.scale, luma_h, out_h, l.shift_y, oy);
    Affine a;
    a.m[0] = ax;
    a.m[1] = 0;
    a.m[2] = bx;
    a.m[3] = 0;
    a.m[4] = ay;
    a.m[5] = by;
    // Keys bicubic; the bspline method's chroma is B-spline too, with its luma's border.
    const bool bspline = resolved_method(opts) == UpscaleMethod::BSpline;
    WarpOptions wo;
    wo.interp = bspline ? Interp::BSpline : Interp::Cubic;
    wo.border = cosited ? Border::Nearest : (bspline ? Border::Mirror : Border::Reflect);
    warp(in, out, Transform::make_affine(a), wo, ctx);
}

// Plane steps of deeper frames, where the planes live (upscale_planes.hpp: the arithmetic once).
void clamp_plane(ImageView<std::uint16_t> p, std::uint16_t maxv, const Context& ctx) {
#if UPRES_HAVE_CUDA
    if (p.on_device()) return cuda::clamp_depth(span_of(p), maxv, ctx.cuda_stream);
#endif
    (void)ctx;
    for (int y = 0; y < p.height(); ++y) {
        std::uint16_t* r = p.row(y);
        for (int x = 0; x < p.width(); ++x) r[x] = std::min(r[x], maxv);
    }
}

void check_method(const UpscaleOptions& opts, int bits) {
    if (bits == 8 || !upscale_needs_8bit(opts)) return;
    throw Error(ErrorCode::UnsupportedFormat,
                std::string(kOp) + ": " + to_string(resolved_method(opts)) + " works on 8-bit " +
                    "frames (the SEABI paper's integer arithmetic), this one has " +
                    std::to_string(bits) + " bits (allowed for it: srcnn, bicubic, bilinear)");
}

// A luma plane of `bits` bits -> the 16-bit scale (to16), into `out` in the same memory.
void widen(ImageView<const std::uint16_t> p, ImageView<std::uint16_t> out, std::uint32_t maxv,
           const Context& ctx) {
#if UPRES_HAVE_CUDA
    if (p.on_device()) return cuda::widen_depth(span_of(p), span_of(out), maxv, ctx.cuda_stream);
#endif
    (void)ctx;
    for (int y = 0; y < p.height(); ++y) {
        const std::uint16_t* s = p.row(y);
        std::uint16_t* d = out.row(y);
        for (int x = 0; x < p.width(); ++x) d[x] = upscale_planes::to16(s[x], maxv);
    }
}

void narrow(ImageView<const std::uint16_t> wide, ImageView<std::uint16_t> out, std::uint32_t maxv,
            const Context& ctx) {
#if UPRES_HAVE_CUDA
    if (wide.on_device())
        return cuda::narrow_depth(span_of(wide), span_of(out), maxv, ctx.cuda_stream);
#endif
    (void)ctx;
    for (int y = 0; y < out.height(); ++y) {
        const std::uint16_t* s = wide.row(y);
        std::uint16_t* d = out.row(y);
        for (int x = 0; x < out.width(); ++x) d[x] = upscale_planes::from16(s[x], maxv);
    }
}

// A plane of w x h in `where`: pooled on the device (stream-ordered), else a host image.
class Plane16 {
  public:
    Plane16(int w, int h, Location where, const Context& ctx) {
#if UPRES_HAVE_CUDA
        if (where == Location::Device) {
            dev_.emplace(w, h, 1, ctx.cuda_stream, "upscale_yuv 16-bit plane");
            return;
        }
#endif
        (void)where;
        (void)ctx;
        host_ = Image<std::uint16_t>(w, h, 1);
    }
    ImageView<std::uint16_t> view() {
#if UPRES_HAVE_CUDA
        if (dev_) return dev_->view();
#endif
        return host_.view();
    }

  private:
    Image<std::uint16_t> host_;
#if UPRES_HAVE_CUDA
    std::optional<cuda::PooledImage<std::uint16_t>> dev_;
#endif
};

// The checks of nlm_fuse_yuv: the reference's layout against out, every frame like it.
template <class T>
UpscaleOptions check_frames(std::span<const YuvPlanes<const T>> frames, int reference,
                            const YuvPlanes<T>& out, const YuvLayout& l, const NlmsrOptions& nlm) {
    if (frames.empty()) fail("no frames");
    if (reference < 0 || reference >= static_cast<int>(frames.size()))
        fail("reference " + std::to_string(reference) + " is outside [0, " +
             std::to_string(frames.size() - 1) + "]");
    UpscaleOptions o;
    o.method = UpscaleMethod::Nlm;
    o.scale = nlm.scale;
    check_layout(frames[static_cast<std::size_t>(reference)], out, l, o);
    const YuvPlanes<const T>& r = frames[static_cast<std::size_t>(reference)];
    for (std::size_t k = 0; k < frames.size(); ++k) {
        const YuvPlanes<const T>& f = frames[k];
        const auto same = [](const auto& a, const auto& b) {
            return a.width() == b.width() && a.height() == b.height() &&
                   a.channels() == b.channels() && a.location() == b.location() &&
                   (a.data() == nullptr) == (b.data() == nullptr);
        };
        if (!same(f.y, r.y) || !same(f.cb, r.cb) || !same(f.cr, r.cr))
            fail("frame " + std::to_string(k) +
                 "'s planes differ from the reference's in size, "
                 "layout or memory");
    }
    return o;
}

}  // namespace

std::pair<int, int> upscale_yuv_size(int width, int height, const UpscaleOptions& opts) {
    const UpscaleMethod m = resolved_method(opts);
    double s = opts.scale;
    if (m == UpscaleMethod::Srcnn && s == 0.0) fail("give the scale of the model (not 0)");
    if (!std::isfinite(s) || s < 1.0 || s > 16.0)
        fail("scale " + format_number(s) + " is outside [1, 16]");
    if (m == UpscaleMethod::Nlm && (s != std::floor(s) || s < 2 || s > 4))
        throw Error(ErrorCode::InvalidArgument,
                    "upscale: nlm needs the scale 2, 3 or 4, not " + format_number(s));
    if (cosited_method(opts))
        return {static_cast<int>(std::lround(s * width)),
                static_cast<int>(std::lround(s * height))};
    return {static_cast<int>(std::ceil(s * width - 1e-9)),
            static_cast<int>(std::ceil(s * height - 1e-9))};
}

void upscale_yuv(const YuvPlanes<const std::uint8_t>& in, const YuvPlanes<std::uint8_t>& out,
                 const YuvLayout& layout, const UpscaleOptions& opts, const Context& ctx) {
    check_layout(in, out, layout, opts);
#if UPRES_HAVE_CUDA
    // Host planes on the cuda backend: every plane uploaded once, the frame upscaled on the
    // device, every plane downloaded once (rather than each step uploading and downloading its
    // own: 4.9x faster for bicubic, 1080p -> 4K from page-locked memory, H200).
    if (ctx.backend == Backend::Cuda && !in.y.on_device() &&
        resolved_method(opts) != UpscaleMethod::Nlm) {  // NLM-SR stages its own device work
        const DeviceScope device_scope(ctx, Backend::Cuda, kOp);
        const bool gray = in.cb.data() == nullptr;
        const auto up = [&](ImageView<const std::uint8_t> v) {
            return cuda::upload(v, ctx.cuda_stream, "upscale_yuv input");
        };
        const auto dev = [&](const ImageView<std::uint8_t>& v) {
            return cuda::PooledImage<std::uint8_t>(v.width(), v.height(), 1, ctx.cuda_stream,
                                                   "upscale_yuv output");
        };
        const cuda::PooledImage<std::uint8_t> dy = up(in.y), dyo = dev(out.y);
        if (gray) {
            upscale_yuv({dy.cview(), {}, {}}, {dyo.view(), {}, {}}, layout, opts, ctx);
            copy(dyo.cview(), out.y, ctx.cuda_stream);
        } else {
            const cuda::PooledImage<std::uint8_t> dcb = up(in.cb), dcr = up(in.cr),
                                                  dcbo = dev(out.cb), dcro = dev(out.cr);
            upscale_yuv({dy.cview(), dcb.cview(), dcr.cview()},
                        {dyo.view(), dcbo.view(), dcro.view()}, layout, opts, ctx);
            copy(dyo.cview(), out.y, ctx.cuda_stream);
            copy(dcbo.cview(), out.cb, ctx.cuda_stream);
            copy(dcro.cview(), out.cr, ctx.cuda_stream);
        }
        synchronize(ctx);
        return;
    }
#endif
    upscale(in.y, out.y, opts, ctx);
    if (in.cb.data() == nullptr) return;
    const bool cosited = cosited_method(opts);
    for (int k = 0; k < 2; ++k)
        upscale_chroma(k ? in.cr : in.cb, k ? out.cr : out.cb, layout, cosited, opts, in.y.width(),
                       in.y.height(), out.y.width(), out.y.height(), ctx);
}

void upscale_yuv(const YuvPlanes<const std::uint16_t>& in, const YuvPlanes<std::uint16_t>& out,
                 const YuvLayout& layout, const UpscaleOptions& opts, const Context& ctx) {
    check_layout(in, out, layout, opts);
    check_method(opts, layout.bits);
    if (in.y.on_device())
        fail(
            "16-bit planes in device memory (allowed: host memory; 8-bit planes may be on the "
            "device)");
    const std::uint32_t maxv = (1u << layout.bits) - 1u;
    const int w = in.y.width(), h = in.y.height();
    Image<std::uint16_t> wide(w, h, 1);
    widen(in.y, wide.view(), maxv, ctx);
    const AnyImage up = upscale(AnyImage(std::move(wide)), opts, ctx);
    narrow(up.as<std::uint16_t>().view(), out.y, maxv, ctx);
    if (in.cb.data() == nullptr) return;
    const bool cosited = cosited_method(opts);
    for (int k = 0; k < 2; ++k) {
        const ImageView<std::uint16_t> o = k ? out.cr : out.cb;
        upscale_chroma(k ? in.cr : in.cb, o, layout, cosited, opts, w, h, out.y.width(),
                       out.y.height(), ctx);
        clamp_plane(o, static_cast<std::uint16_t>(maxv), ctx);
    }
}

void nlm_fuse_yuv(std::span<const YuvPlanes<const std::uint8_t>> frames, int reference,
                  const YuvPlanes<std::uint8_t>& out, const YuvLayout& layout,
                  const NlmsrOptions& nlm, const Context& ctx) {
    const UpscaleOptions o = check_frames(frames, reference, out, layout, nlm);
    std::vector<ImageView<const std::uint8_t>> luma;
    for (const YuvPlanes<const std::uint8_t>& f : frames) luma.push_back(f.y);
    NlmsrOptions n = nlm;
    n.reference = reference;
    nlm_fuse(luma, out.y, n, ctx);
    const YuvPlanes<const std::uint8_t>& r = frames[static_cast<std::size_t>(reference)];
    if (r.cb.data() != nullptr)
        for (int k = 0; k < 2; ++k)
            upscale_chroma(k ? r.cr : r.cb, k ? out.cr : out.cb, layout, false, o, r.y.width(),
                           r.y.height(), out.y.width(), out.y.height(), ctx);
    if (out.y.on_device()) synchronize(ctx);
}

void nlm_fuse_yuv(std::span<const YuvPlanes<const std::uint16_t>> frames, int reference,
                  const YuvPlanes<std::uint16_t>& out, const YuvLayout& layout,
                  const NlmsrOptions& nlm, const Context& ctx) {
    const UpscaleOptions o = check_frames(frames, reference, out, layout, nlm);
    const std::uint32_t maxv = (1u << layout.bits) - 1u;
    const Location where = out.y.location();
    const DeviceScope device_scope(ctx, where == Location::Device ? Backend::Cuda : Backend::Cpu,
                                   "nlm_fuse_yuv");
    std::vector<Plane16> wide;
    std::vector<ImageView<const std::uint16_t>> views;
    wide.reserve(frames.size());
    for (const YuvPlanes<const std::uint16_t>& f : frames) {
        wide.emplace_back(f.y.width(), f.y.height(), where, ctx);
        widen(f.y, wide.back().view(), maxv, ctx);
        views.push_back(wide.back().view());
    }
    NlmsrOptions n = nlm;
    n.reference = reference;
    Plane16 fused(out.y.width(), out.y.height(), where, ctx);
    nlm_fuse(views, fused.view(), n, ctx);
    narrow(fused.view(), out.y, maxv, ctx);
    const YuvPlanes<const std::uint16_t>& r = frames[static_cast<std::size_t>(reference)];
    if (r.cb.data() != nullptr) {
        for (int k = 0; k < 2; ++k) {
            const ImageView<std::uint16_t> c = k ? out.cr : out.cb;
            upscale_chroma(k ? r.cr : r.cb, c, layout, false, o, r.y.width(), r.y.height(),
                           out.y.width(), out.y.height(), ctx);
            clamp_plane(c, static_cast<std::uint16_t>(maxv), ctx);
        }
    }
    if (where == Location::Device) synchronize(ctx);
}

}  // namespace upres
