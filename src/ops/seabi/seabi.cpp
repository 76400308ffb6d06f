// SEABI: argument checks and backend dispatch (the only place that knows about CUDA).
#include <upres/seabi.hpp>

#include <cmath>
#include <string>

#include <upres/error.hpp>
#include <upres/options.hpp>
#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/format_number.hpp"
#include "core/span2d.hpp"
#include "ops/seabi/seabi_backends.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#endif

namespace upres {

namespace {

void check_views(const char* op, ImageView<const std::uint8_t> in, ImageView<std::uint8_t> out,
                 bool single_channel) {
    const std::string o(op);
    if (in.empty() || in.data() == nullptr)
        throw Error(ErrorCode::InvalidArgument, o + ": the input image is empty");
    if (single_channel && in.channels() != 1)
        throw Error(ErrorCode::InvalidArgument,
                    o + ": the input has " + std::to_string(in.channels()) +
                        " channels; SEABI works on one channel (luma): use upres::upscale for "
                        "colour images");
    if (out.width() != 2 * in.width() || out.height() != 2 * in.height() ||
        out.channels() != in.channels() || out.data() == nullptr)
        throw Error(
            ErrorCode::InvalidArgument,
            o + ": the output is " + shape_text(out.width(), out.height(), out.channels()) +
                " but must be " + shape_text(2 * in.width(), 2 * in.height(), in.channels()) +
                " (twice the input " + shape_text(in.width(), in.height(), in.channels()) + ")");
    if (in.location() != out.location())
        throw Error(ErrorCode::InvalidArgument,
                    o + ": the input is in " + to_string(in.location()) +
                        " memory but the output in " + to_string(out.location()) +
                        " memory (both must live in the same place)");
    if (static_cast<std::int64_t>(out.width()) * out.height() > kMaxPixels)
        throw Error(ErrorCode::InvalidArgument,
                    o + ": the output would have more than kMaxPixels pixels");
    // Overlap of input and output would make the result depend on the order of writes.
    const auto* ib = reinterpret_cast<const unsigned char*>(in.data());
    const auto* ie = reinterpret_cast<const unsigned char*>(in.row(in.height() - 1) +
                                                            in.width() * in.channels());
    const auto* ob = reinterpret_cast<const unsigned char*>(out.data());
    const auto* oe = reinterpret_cast<const unsigned char*>(out.row(out.height() - 1) +
                                                            out.width() * out.channels());
    if (ib < oe && ob < ie)
        throw Error(ErrorCode::InvalidArgument, o + ": the input and output views overlap");
}

void check_options(const SeabiOptions& opts) {
    if (opts.method != SeabiMethod::LSeai && opts.method != SeabiMethod::SilSeabi &&
        opts.method != SeabiMethod::LSeabi)
        throw Error(ErrorCode::InvalidArgument, "seabi_upscale2: unknown SeabiOptions::method");
    if (opts.max_iterations < 1 || opts.max_iterations > 1000)
        throw Error(ErrorCode::InvalidArgument, "seabi_upscale2: max_iterations is " +
                                                    std::to_string(opts.max_iterations) +
                                                    " (allowed: 1 to 1000)");
    if (!std::isfinite(opts.max_error) || opts.max_error < 0.0)
        throw Error(ErrorCode::InvalidArgument,
                    "seabi_upscale2: max_error must be finite and >= 0 (mean absolute error in "
                    "grey levels), got " +
                        std::to_string(opts.max_error));
    if (!enum_desc<Lattice>().contains(static_cast<int>(opts.lattice)))
        throw Error(ErrorCode::InvalidArgument, "seabi_upscale2: unknown lattice " +
                                                    std::to_string(static_cast<int>(opts.lattice)) +
                                                    " (allowed: " + enum_desc<Lattice>().allowed() +
                                                    ")");
    if (opts.stripes < 0 || opts.stripes > 65536)
        throw Error(ErrorCode::InvalidArgument,
                    "seabi_upscale2: stripes is " + std::to_string(opts.stripes) +
                        " (allowed: 0 = one per thread, or 1 to 65536)");
}

}  // namespace

SeabiStats seabi_upscale2(ImageView<const std::uint8_t> y, ImageView<std::uint8_t> out,
                          const SeabiOptions& options, const Context& ctx) {
    check_views("seabi_upscale2", y, out, true);
    check_options(options);
    SeabiOptions opts = options;  // the backends see CoSited or Centered
    if (opts.lattice == Lattice::Auto) opts.lattice = Lattice::Centered;
    const Backend b = resolve_backend(ctx, y.location(), "seabi_upscale2");
    const DeviceScope device_scope(ctx, b, "seabi_upscale2");
    switch (b) {
        case Backend::Reference:
            return ref::seabi_upscale2(span_of(y), span_of(out), opts);
        case Backend::Cpu:
            return cpu::seabi_upscale2(span_of(y), span_of(out), opts, ctx.threads);
        case Backend::Cuda:
#if UPRES_HAVE_CUDA
            if (!y.on_device()) {  // stage host data through the device
                const auto din = cuda::upload(y, ctx.cuda_stream, "seabi_upscale2 (staging)");
                const cuda::PooledImage<std::uint8_t> dout(
                    out.width(), out.height(), 1, ctx.cuda_stream, "seabi_upscale2 (staging)");
                const SeabiStats s = cuda::seabi_upscale2(
                    span_of(din.cview()), span_of(dout.view()), opts, ctx.cuda_stream);
                copy(dout.cview(), out, ctx.cuda_stream);
                return s;
            }
            return cuda::seabi_upscale2(span_of(y), span_of(out), opts, ctx.cuda_stream);
#else
            break;
#endif
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, "seabi_upscale2: unresolved backend");
}

Image<std::uint8_t> seabi_upscale2(ImageView<const std::uint8_t> y, const SeabiOptions& opts,
                                   const Context& ctx) {
    if (y.empty())
        throw Error(ErrorCode::InvalidArgument, "seabi_upscale2: the input image is empty");
    if (y.width() > kMaxDimension / 2 || y.height() > kMaxDimension / 2)
        throw Error(ErrorCode::InvalidArgument, "seabi_upscale2: a " + std::to_string(y.width()) +
                                                    " x " + std::to_string(y.height()) +
                                                    " input gives an output over kMaxDimension");
    Image<std::uint8_t> out(2 * y.width(), 2 * y.height(), y.channels(), y.location());
    seabi_upscale2(y, out.view(), opts, ctx);
    return out;
}

void tap_upscale2(ImageView<const std::uint8_t> y, ImageView<std::uint8_t> out, TapFilter filter,
                  Lattice lattice, const Context& ctx) {
    check_views("tap_upscale2", y, out, false);
    if (filter != TapFilter::Tap4 && filter != TapFilter::Tap6)
        throw Error(ErrorCode::InvalidArgument, "tap_upscale2: unknown TapFilter");
    if (!enum_desc<Lattice>().contains(static_cast<int>(lattice)))
        throw Error(ErrorCode::InvalidArgument,
                    "tap_upscale2: unknown lattice " + std::to_string(static_cast<int>(lattice)) +
                        " (allowed: " + enum_desc<Lattice>().allowed() + ")");
    const bool centered = lattice != Lattice::CoSited;
    const Backend b = resolve_backend(ctx, y.location(), "tap_upscale2");
    const DeviceScope device_scope(ctx, b, "tap_upscale2");
    switch (b) {
        case Backend::Reference:
            return ref::tap_upscale2(span_of(y), span_of(out), filter, centered);
        case Backend::Cpu:
            return cpu::tap_upscale2(span_of(y), span_of(out), filter, centered, ctx.threads);
        case Backend::Cuda:
#if UPRES_HAVE_CUDA
            if (!y.on_device()) {
                const auto din = cuda::upload(y, ctx.cuda_stream, "tap_upscale2 (staging)");
                const cuda::PooledImage<std::uint8_t> dout(out.width(), out.height(),
                                                           out.channels(), ctx.cuda_stream,
                                                           "tap_upscale2 (staging)");
                cuda::tap_upscale2(span_of(din.cview()), span_of(dout.view()), filter, centered,
                                   ctx.cuda_stream);
                copy(dout.cview(), out, ctx.cuda_stream);
                return;
            }
            return cuda::tap_upscale2(span_of(y), span_of(out), filter, centered, ctx.cuda_stream);
#else
            break;
#endif
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, "tap_upscale2: unresolved backend");
}

}  // namespace upres
