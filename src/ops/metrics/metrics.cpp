// upres metrics: validation, extraction of the compared planes (Y or channels, after shaving,
// in double) and dispatch to the Reference / Cpu backends. Formulas: metrics_math.hpp.
#include <upres/metrics.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <upres/error.hpp>
#include "core/dispatch.hpp"
#include "core/format_number.hpp"
#include "core/parallel.hpp"
#include "ops/color/color_math.hpp"
#include "ops/metrics/metrics_backends.hpp"
#include "ops/metrics/metrics_math.hpp"

namespace upres {

namespace {

// The compared planes of one image: one per channel, or Y alone.
struct Planes {
    int width = 0, height = 0;
    std::vector<std::vector<double>> data;
    Plane plane(std::size_t i) const { return {data[i].data(), width, height, 1, width}; }
};

struct Prepared {
    Planes a, b;
    double data_range = 0.0;
    Backend backend = Backend::Cpu;
    int threads = 0;
};

template <class T>
Planes extract(ImageView<const T> v, bool y_only, const char* op, const char* name, Backend backend,
               int threads) {
    Planes p;
    p.width = v.width();
    p.height = v.height();
    const int nplanes = y_only ? 1 : v.channels();
    const int used = y_only ? std::min(v.channels(), 3) : v.channels();
    p.data.assign(static_cast<std::size_t>(nplanes),
                  std::vector<double>(static_cast<std::size_t>(p.width) * p.height));
    std::vector<int> bad(static_cast<std::size_t>(p.height), -1);  // first bad element per row
    auto row = [&](int y) {
        const T* s = v.row(y);
        const std::size_t o = static_cast<std::size_t>(y) * p.width;
        if constexpr (std::is_same_v<T, float>) {
            for (int x = 0; x < p.width; ++x)
                for (int c = 0; c < used; ++c)
                    if (!std::isfinite(s[x * v.channels() + c])) {
                        bad[static_cast<std::size_t>(y)] = x * v.channels() + c;
                        return;
                    }
        }
        for (int x = 0; x < p.width; ++x) {
            const T* px = s + x * v.channels();
            if (y_only)
                p.data[0][o + x] = color::pixel_luma<double>(px, v.channels());
            else
                for (int c = 0; c < nplanes; ++c) p.data[c][o + x] = static_cast<double>(px[c]);
        }
    };
    if (backend == Backend::Reference)
        for (int y = 0; y < p.height; ++y) row(y);
    else
        parallel_for(0, p.height, threads, row);
    for (int y = 0; y < p.height; ++y) {
        const int e = bad[static_cast<std::size_t>(y)];
        if (e >= 0)
            throw Error(ErrorCode::InvalidArgument,
                        std::string(op) + ": image " + name + " has a non-finite value (" +
                            format_number(static_cast<double>(v.row(y)[e])) + ") at (x " +
                            std::to_string(e / v.channels()) + ", y " + std::to_string(y) + ", c " +
                            std::to_string(e % v.channels()) + "); NaN and Inf are not allowed");
    }
    return p;
}

template <class T>
Prepared prepare(ImageView<const T> a, ImageView<const T> b, const MetricOptions& opts,
                 const Context& ctx, const char* op, int min_size) {
    if (a.empty()) throw Error(ErrorCode::InvalidArgument, std::string(op) + ": image a is empty");
    if (b.empty()) throw Error(ErrorCode::InvalidArgument, std::string(op) + ": image b is empty");
    if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels())
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + ": images differ in size: a is " +
                        shape_text(a.width(), a.height(), a.channels()) + " but b is " +
                        shape_text(b.width(), b.height(), b.channels()));
    if (a.location() != b.location())
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + ": image a is in " + to_string(a.location()) +
                        " memory but b is in " + to_string(b.location()) + " memory");
    if (opts.shave < 0)
        throw Error(ErrorCode::InvalidArgument, std::string(op) + ": shave must be >= 0 (got " +
                                                    std::to_string(opts.shave) + ")");
    if (!(opts.data_range >= 0.0) || !std::isfinite(opts.data_range))
        throw Error(ErrorCode::InvalidArgument,
                    std::string(op) + ": data_range must be a finite number > 0, or 0 for the " +
                        "pixel type's range (got " + format_number(opts.data_range) + ")");
    const int w = a.width() - 2 * std::min(opts.shave, a.width());
    const int h = a.height() - 2 * std::min(opts.shave, a.height());
    if (w < min_size || h < min_size) {
        std::string what = std::string(op) + ": the images are " + std::to_string(a.width()) +
                           " x " + std::to_string(a.height());
        if (opts.shave > 0)
            what += ", " + std::to_string(std::max(w, 0)) + " x " + std::to_string(std::max(h, 0)) +
                    " after shaving " + std::to_string(opts.shave) + " pixels per side";
        what += min_size > 1 ? "; SSIM needs at least 11 x 11 (its Gaussian window)"
                             : "; nothing is left to compare";
        throw Error(ErrorCode::InvalidArgument, what);
    }
    Prepared p;
    p.backend = resolve_backend(ctx, a.location(), op);
    if (p.backend == Backend::Cuda)
        throw Error(ErrorCode::BackendUnavailable,
                    std::string(op) + ": metrics have no cuda backend; they run on the host " +
                        "(copy device images with upres::clone, or use the cpu backend)");
    p.threads = ctx.threads;
    const bool y_only = opts.on_y && (a.channels() == 3 || a.channels() == 4);
    const auto sa = a.sub(opts.shave, opts.shave, w, h);
    const auto sb = b.sub(opts.shave, opts.shave, w, h);
    p.a = extract(sa, y_only, op, "a", p.backend, p.threads);
    p.b = extract(sb, y_only, op, "b", p.backend, p.threads);
    p.data_range = opts.data_range > 0.0 ? opts.data_range : y_only ? 255.0 : color::unit_max<T>();
    return p;
}

template <class T>
double psnr_impl(ImageView<const T> a, ImageView<const T> b, const MetricOptions& opts,
                 const Context& ctx) {
    const Prepared p = prepare(a, b, opts, ctx, "psnr", 1);
    double sse = 0.0;
    for (std::size_t i = 0; i < p.a.data.size(); ++i)
        sse += p.backend == Backend::Reference
                   ? ref::sum_squared_error(p.a.plane(i), p.b.plane(i))
                   : cpu::sum_squared_error(p.a.plane(i), p.b.plane(i), p.threads);
    const double n = double(p.a.width) * double(p.a.height) * double(p.a.data.size());
    return metrics::psnr_from_mse(sse / n, p.data_range);
}

template <class T>
double ssim_impl(ImageView<const T> a, ImageView<const T> b, const MetricOptions& opts,
                 const Context& ctx) {
    const Prepared p = prepare(a, b, opts, ctx, "ssim", metrics::kSsimWindow);
    double sum = 0.0;
    for (std::size_t i = 0; i < p.a.data.size(); ++i)
        sum += p.backend == Backend::Reference
                   ? ref::ssim_mean(p.a.plane(i), p.b.plane(i), p.data_range)
                   : cpu::ssim_mean(p.a.plane(i), p.b.plane(i), p.data_range, p.threads);
    return sum / double(p.a.data.size());
}

}  // namespace

double psnr(ImageView<const std::uint8_t> a, ImageView<const std::uint8_t> b,
            const MetricOptions& opts, const Context& ctx) {
    return psnr_impl(a, b, opts, ctx);
}
double psnr(ImageView<const std::uint16_t> a, ImageView<const std::uint16_t> b,
            const MetricOptions& opts, const Context& ctx) {
    return psnr_impl(a, b, opts, ctx);
}
double psnr(ImageView<const float> a, ImageView<const float> b, const MetricOptions& opts,
            const Context& ctx) {
    return psnr_impl(a, b, opts, ctx);
}

double ssim(ImageView<const std::uint8_t> a, ImageView<const std::uint8_t> b,
            const MetricOptions& opts, const Context& ctx) {
    return ssim_impl(a, b, opts, ctx);
}
double ssim(ImageView<const std::uint16_t> a, ImageView<const std::uint16_t> b,
            const MetricOptions& opts, const Context& ctx) {
    return ssim_impl(a, b, opts, ctx);
}
double ssim(ImageView<const float> a, ImageView<const float> b, const MetricOptions& opts,
            const Context& ctx) {
    return ssim_impl(a, b, opts, ctx);
}

}  // namespace upres
