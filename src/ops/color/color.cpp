// upres colour conversion: validation, dispatch (the only #if CUDA), and the Reference
// (double) and Cpu (float, OpenMP rows) backends. The formula lives in color_math.hpp.
#include <upres/color.hpp>

#include <string>

#include <upres/error.hpp>
#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/format_number.hpp"
#include "core/parallel.hpp"
#include "core/pixel_visit.hpp"
#include "core/span2d.hpp"
#include "ops/color/color_backends.hpp"
#include "ops/color/color_math.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#endif

namespace upres {

namespace {

template <class T>
Span2D<T> span_raw(const detail::RawView& v) {
    return {static_cast<T*>(v.data), v.width, v.height, v.channels, v.stride};
}

// Row loops shared by the reference (R = double, one thread) and the Cpu backend (R = float).
template <class R>
void rows_rgb_to_ycbcr(const detail::RawView& rgb, Span2D<float> ycc, int threads, bool serial) {
    visit_pixel_type(rgb.type, [&](auto tag) {
        using T = decltype(tag);
        const auto in = span_raw<const T>(rgb);
        const int c = in.channels;
        auto row = [&](int y) {
            const T* s = in.row(y);
            float* d = ycc.row(y);
            for (int x = 0; x < in.width; ++x)
                color::pixel_rgb_to_ycbcr<R>(s + x * c, d + x * c, c);
        };
        if (serial)
            for (int y = 0; y < in.height; ++y) row(y);
        else
            parallel_for(0, in.height, threads, row);
    });
}

template <class R>
void rows_ycbcr_to_rgb(Span2D<const float> ycc, const detail::RawView& rgb, int threads,
                       bool serial) {
    visit_pixel_type(rgb.type, [&](auto tag) {
        using T = decltype(tag);
        const auto out = span_raw<T>(rgb);
        const int c = out.channels;
        auto row = [&](int y) {
            const float* s = ycc.row(y);
            T* d = out.row(y);
            for (int x = 0; x < out.width; ++x)
                color::pixel_ycbcr_to_rgb<R>(s + x * c, d + x * c, c);
        };
        if (serial)
            for (int y = 0; y < out.height; ++y) row(y);
        else
            parallel_for(0, out.height, threads, row);
    });
}

template <class R>
void rows_luma(const detail::RawView& img, Span2D<float> ys, int threads, bool serial) {
    visit_pixel_type(img.type, [&](auto tag) {
        using T = decltype(tag);
        const auto in = span_raw<const T>(img);
        const int c = in.channels;
        auto row = [&](int y) {
            const T* s = in.row(y);
            float* d = ys.row(y);
            for (int x = 0; x < in.width; ++x)
                d[x] = static_cast<float>(color::pixel_luma<R>(s + x * c, c));
        };
        if (serial)
            for (int y = 0; y < in.height; ++y) row(y);
        else
            parallel_for(0, in.height, threads, row);
    });
}

std::string shape(const detail::RawView& v) { return shape_text(v.width, v.height, v.channels); }

// Checks a (source, destination) pair: non-empty, same place, same size; source channels in
// the allowed set; destination channels as given (0: same as source).
void check_pair(const char* op, const char* src_name, const detail::RawView& src,
                const char* dst_name, const detail::RawView& dst, bool allow_gray,
                int dst_channels) {
    if (src.width == 0 || src.height == 0)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + ": " + src_name + " is empty");
    const bool ok = src.channels == 3 || src.channels == 4 || (allow_gray && src.channels == 1);
    if (!ok)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + ": " + src_name + " must have " +
                                                    (allow_gray ? "1, 3 or 4" : "3 or 4") +
                                                    " channels (got " +
                                                    std::to_string(src.channels) + ")");
    const int want = dst_channels ? dst_channels : src.channels;
    if (dst.width != src.width || dst.height != src.height || dst.channels != want)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + ": " + dst_name + " is " + shape(dst) + " but must be " +
                        std::to_string(src.width) + " x " + std::to_string(src.height) + " x " +
                        std::to_string(want) + " (" + src_name + " is " + shape(src) + ")");
    if (src.location != dst.location)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + ": " + src_name + " is in " +
                                                    to_string(src.location) + " memory but " +
                                                    dst_name + " is in " + to_string(dst.location) +
                                                    " memory (both must be in the same place)");
}

#if !UPRES_HAVE_CUDA
[[noreturn]] void no_cuda_build(const char* op) {
    throw Error(ErrorCode::Internal, std::string(op) + ": cuda backend resolved without CUDA");
}
#endif

#if UPRES_HAVE_CUDA
// Runs a CUDA backend on views that may be host views (staged through device memory).
template <class S, class D, class F>
void run_cuda(const ImageView<const S>& src, const ImageView<D>& dst, const Context& ctx,
              F&& launch) {
    if (src.location() == Location::Device) {
        launch(src.raw(), dst.raw());
        return;
    }
    const auto d_src = cuda::upload(src, ctx.cuda_stream, "colour conversion (staging)");
    const cuda::PooledImage<D> d_dst(dst.width(), dst.height(), dst.channels(), ctx.cuda_stream,
                                     "colour conversion (staging)");
    launch(d_src.cview().raw(), d_dst.view().raw());
    copy(d_dst.cview(), dst, ctx.cuda_stream);
}
#endif

template <class T>
void rgb_to_ycbcr_impl(ImageView<const T> rgb, ImageView<float> ycc, const Context& ctx) {
    const char* op = "rgb_to_ycbcr";
    check_pair(op, "rgb", rgb.raw(), "ycbcr", ycc.raw(), false, 0);
    const Backend b = resolve_backend(ctx, rgb.location(), op);
    const DeviceScope device_scope(ctx, b, op);
    switch (b) {
        case Backend::Reference:
            return ref::rgb_to_ycbcr(rgb.raw(), span_of(ycc));
        case Backend::Cpu:
            return cpu::rgb_to_ycbcr(rgb.raw(), span_of(ycc), ctx.threads);
        default:
#if UPRES_HAVE_CUDA
            return run_cuda(rgb, ycc, ctx, [&](const detail::RawView& s, const detail::RawView& d) {
                cuda::rgb_to_ycbcr(s, span_raw<float>(d), ctx.cuda_stream);
            });
#else
            no_cuda_build(op);
#endif
    }
}

template <class T>
void ycbcr_to_rgb_impl(ImageView<const float> ycc, ImageView<T> rgb, const Context& ctx) {
    const char* op = "ycbcr_to_rgb";
    check_pair(op, "ycbcr", ycc.raw(), "rgb", rgb.raw(), false, 0);
    const Backend b = resolve_backend(ctx, ycc.location(), op);
    const DeviceScope device_scope(ctx, b, op);
    switch (b) {
        case Backend::Reference:
            return ref::ycbcr_to_rgb(span_of(ycc), rgb.raw());
        case Backend::Cpu:
            return cpu::ycbcr_to_rgb(span_of(ycc), rgb.raw(), ctx.threads);
        default:
#if UPRES_HAVE_CUDA
            return run_cuda(ycc, rgb, ctx, [&](const detail::RawView& s, const detail::RawView& d) {
                cuda::ycbcr_to_rgb(span_raw<const float>(s), d, ctx.cuda_stream);
            });
#else
            no_cuda_build(op);
#endif
    }
}

template <class T>
void luma_impl(ImageView<const T> img, ImageView<float> y, const Context& ctx) {
    const char* op = "luma";
    check_pair(op, "image", img.raw(), "y", y.raw(), true, 1);
    const Backend b = resolve_backend(ctx, img.location(), op);
    const DeviceScope device_scope(ctx, b, op);
    switch (b) {
        case Backend::Reference:
            return ref::luma(img.raw(), span_of(y));
        case Backend::Cpu:
            return cpu::luma(img.raw(), span_of(y), ctx.threads);
        default:
#if UPRES_HAVE_CUDA
            return run_cuda(img, y, ctx, [&](const detail::RawView& s, const detail::RawView& d) {
                cuda::luma(s, span_raw<float>(d), ctx.cuda_stream);
            });
#else
            no_cuda_build(op);
#endif
    }
}

template <class T>
Image<float> luma_image(ImageView<const T> img, const Context& ctx) {
    if (img.empty()) throw Error(ErrorCode::InvalidArgument, "luma: image is empty");
    Image<float> y(img.width(), img.height(), 1, img.location());
    luma_impl(img, y.view(), ctx);
    return y;
}

}  // namespace

namespace ref {
void rgb_to_ycbcr(const detail::RawView& rgb, Span2D<float> ycc) {
    rows_rgb_to_ycbcr<double>(rgb, ycc, 1, true);
}
void ycbcr_to_rgb(Span2D<const float> ycc, const detail::RawView& rgb) {
    rows_ycbcr_to_rgb<double>(ycc, rgb, 1, true);
}
void luma(const detail::RawView& img, Span2D<float> y) { rows_luma<double>(img, y, 1, true); }
}  // namespace ref

namespace cpu {
void rgb_to_ycbcr(const detail::RawView& rgb, Span2D<float> ycc, int threads) {
    rows_rgb_to_ycbcr<float>(rgb, ycc, threads, false);
}
void ycbcr_to_rgb(Span2D<const float> ycc, const detail::RawView& rgb, int threads) {
    rows_ycbcr_to_rgb<float>(ycc, rgb, threads, false);
}
void luma(const detail::RawView& img, Span2D<float> y, int threads) {
    rows_luma<float>(img, y, threads, false);
}
}  // namespace cpu

void rgb_to_ycbcr(ImageView<const std::uint8_t> rgb, ImageView<float> ycbcr, const Context& ctx) {
    rgb_to_ycbcr_impl(rgb, ycbcr, ctx);
}
void rgb_to_ycbcr(ImageView<const std::uint16_t> rgb, ImageView<float> ycbcr, const Context& ctx) {
    rgb_to_ycbcr_impl(rgb, ycbcr, ctx);
}
void rgb_to_ycbcr(ImageView<const float> rgb, ImageView<float> ycbcr, const Context& ctx) {
    rgb_to_ycbcr_impl(rgb, ycbcr, ctx);
}

void ycbcr_to_rgb(ImageView<const float> ycbcr, ImageView<std::uint8_t> rgb, const Context& ctx) {
    ycbcr_to_rgb_impl(ycbcr, rgb, ctx);
}
void ycbcr_to_rgb(ImageView<const float> ycbcr, ImageView<std::uint16_t> rgb, const Context& ctx) {
    ycbcr_to_rgb_impl(ycbcr, rgb, ctx);
}
void ycbcr_to_rgb(ImageView<const float> ycbcr, ImageView<float> rgb, const Context& ctx) {
    ycbcr_to_rgb_impl(ycbcr, rgb, ctx);
}

void luma(ImageView<const std::uint8_t> img, ImageView<float> y, const Context& ctx) {
    luma_impl(img, y, ctx);
}
void luma(ImageView<const std::uint16_t> img, ImageView<float> y, const Context& ctx) {
    luma_impl(img, y, ctx);
}
void luma(ImageView<const float> img, ImageView<float> y, const Context& ctx) {
    luma_impl(img, y, ctx);
}

Image<float> luma(ImageView<const std::uint8_t> img, const Context& ctx) {
    return luma_image(img, ctx);
}
Image<float> luma(ImageView<const std::uint16_t> img, const Context& ctx) {
    return luma_image(img, ctx);
}
Image<float> luma(ImageView<const float> img, const Context& ctx) { return luma_image(img, ctx); }

}  // namespace upres
