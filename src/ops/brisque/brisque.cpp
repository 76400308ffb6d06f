// upres::brisque: validation, gray, the two scales, the fits, dispatch (upres/brisque.hpp).
#include <upres/brisque.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <upres/error.hpp>

#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/finite_scan.hpp"
#include "core/format_number.hpp"
#include "ops/brisque/brisque_backends.hpp"

namespace upres {

namespace {

constexpr const char* kOp = "brisque";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

// The channels times 1 / max (multiplied, as scikit-image does: u8 * (1 / 255) bit for bit).
template <class T>
constexpr double kScale = 1.0 / PixelTraits<T>::max_value;

// Gray on [0, 1] in scikit-image's arithmetic (rgb2gray: the channels times 1 / 255 (u8),
// then R 0.2125 + G 0.7154 + B 0.0721 left to right, bit for bit); gray: the value.
template <class T>
std::vector<double> gray_of(ImageView<const T> img) {
    const int w = img.width(), h = img.height(), c = img.channels();
    const double k = kScale<T>;
    std::vector<double> g(static_cast<std::size_t>(w) * h);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            const T* p = img.row(y) + static_cast<std::ptrdiff_t>(x) * c;
            const double r = p[0] * k;
            g[static_cast<std::size_t>(y) * w + x] =
                c == 1 ? r : r * 0.2125 + (p[1] * k) * 0.7154 + (p[2] * k) * 0.0721;
        }
    return g;
}

// OpenCV's INTER_CUBIC halving: rows first, then columns, replicated borders.
std::vector<double> halve(const std::vector<double>& g, int w, int h, int& hw, int& hh) {
    hw = brisque_math::half_length(w);
    hh = brisque_math::half_length(h);
    std::vector<double> t(static_cast<std::size_t>(hw) * h), o(static_cast<std::size_t>(hw) * hh);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < hw; ++x) {
            double s = 0.0;
            for (int k = 0; k < 4; ++k) {
                const int xx = std::clamp(2 * x + k - 1, 0, w - 1);
                s += brisque_math::kHalfWeights[k] * g[static_cast<std::size_t>(y) * w + xx];
            }
            t[static_cast<std::size_t>(y) * hw + x] = s;
        }
    for (int y = 0; y < hh; ++y)
        for (int x = 0; x < hw; ++x) {
            double s = 0.0;
            for (int k = 0; k < 4; ++k) {
                const int yy = std::clamp(2 * y + k - 1, 0, h - 1);
                s += brisque_math::kHalfWeights[k] * t[static_cast<std::size_t>(yy) * hw + x];
            }
            o[static_cast<std::size_t>(y) * hw + x] = s;
        }
    return o;
}

// The 18 features of one scale, written at f.
void scale_features(const std::vector<double>& g, int w, int h, Backend b, int threads, double* f,
                    const char* scale) {
    const Span2D<const double> s{g.data(), w, h, 1, w};
    const brisque_math::SetMoments m =
        b == Backend::Reference ? ref::brisque_moments(s) : cpu::brisque_moments(s, threads);
    for (int k = 0; k < 5; ++k) {
        const brisque_math::Fit fit = brisque_math::fit(m[k]);
        if (!fit.ok)
            fail(std::string("the image has no texture to fit at the ") + scale +
                 " scale (its normalised coefficients lack values on one side of 0: a flat or "
                 "nearly flat image)");
        if (k == 0) {
            *f++ = fit.alpha;
            *f++ = (fit.var_l + fit.var_r) / 2;
        } else {
            *f++ = fit.alpha;
            *f++ = fit.mean;
            *f++ = fit.var_l;
            *f++ = fit.var_r;
        }
    }
}

template <class T>
BrisqueFeatures features(ImageView<const T> img, const Context& ctx) {
    if (img.empty() || img.data() == nullptr) fail("the image is empty");
    const int w = img.width(), h = img.height(), c = img.channels();
    if (c != 1 && c != 3 && c != 4)
        fail("the image has " + std::to_string(c) +
             " channels (allowed: 1 gray, 3 RGB, 4 RGBA with alpha ignored)");
    if (w < brisque_math::kMinSide || h < brisque_math::kMinSide)
        fail("the " + std::to_string(w) + " x " + std::to_string(h) + " image is smaller than " +
             std::to_string(brisque_math::kMinSide) + " x " +
             std::to_string(brisque_math::kMinSide) +
             " (the half-size scale needs a 7 x 7 window)");
    if (img.on_device())
        throw Error(ErrorCode::BackendUnavailable,
                    "brisque: the image is in device memory; brisque runs on the host backends "
                    "(allowed: reference, cpu)");
    const Backend b = resolve_backend(ctx, img.location(), kOp);
    const DeviceScope device_scope(ctx, b, kOp);
    if (b == Backend::Cuda)
        throw Error(ErrorCode::BackendUnavailable,
                    "brisque: no cuda backend; brisque runs on the host backends (allowed: "
                    "reference, cpu)");
    if constexpr (std::is_same_v<T, float>) {
        const std::int64_t at =
            find_nonfinite_host(img.data(), std::ptrdiff_t{w} * c, h, img.stride(), ctx.threads);
        if (at >= 0)
            fail("the image has a non-finite value at x " +
                 std::to_string(at % (std::int64_t{w} * c) / c) + ", y " +
                 std::to_string(at / (std::int64_t{w} * c)) + " (allowed: finite values)");
    }
    BrisqueFeatures f{};
    const std::vector<double> g = gray_of(img);
    scale_features(g, w, h, b, ctx.threads, f.data(), "full");
    int hw = 0, hh = 0;
    const std::vector<double> half = halve(g, w, h, hw, hh);
    scale_features(half, hw, hh, b, ctx.threads, f.data() + 18, "half");
    return f;
}

}  // namespace

BrisqueFeatures brisque_features(ImageView<const std::uint8_t> img, const Context& ctx) {
    return features(img, ctx);
}
BrisqueFeatures brisque_features(ImageView<const std::uint16_t> img, const Context& ctx) {
    return features(img, ctx);
}
BrisqueFeatures brisque_features(ImageView<const float> img, const Context& ctx) {
    return features(img, ctx);
}

double brisque(ImageView<const std::uint8_t> img, const BrisqueOptions& opts, const Context& ctx) {
    return brisque_score(features(img, ctx), opts);
}
double brisque(ImageView<const std::uint16_t> img, const BrisqueOptions& opts, const Context& ctx) {
    return brisque_score(features(img, ctx), opts);
}
double brisque(ImageView<const float> img, const BrisqueOptions& opts, const Context& ctx) {
    return brisque_score(features(img, ctx), opts);
}
double brisque(const AnyImage& img, const BrisqueOptions& opts, const Context& ctx) {
    if (img.empty()) fail("the image is empty");
    return std::visit(
        [&](const auto& im) {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            return brisque_score(features(ImageView<const T>(im.view()), ctx), opts);
        },
        img.variant());
}

}  // namespace upres
