// upres::stereo_disparity: validation, the plan, dispatch (upres/stereo.hpp).
#include <upres/stereo.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>
#include <variant>

#include <upres/error.hpp>

#include "core/device_scope.hpp"
#include "core/dispatch.hpp"
#include "core/finite_scan.hpp"
#include "core/format_number.hpp"
#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_math.hpp"

#if UPRES_HAVE_CUDA
#include "core/device_image.hpp"
#include "core/finite_scan_cuda.hpp"
#endif

namespace upres {

namespace {

constexpr const char* kOp = "stereo";

[[noreturn]] void fail(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, std::string(kOp) + ": " + msg);
}

int window_side(const StereoOptions& o) {
    switch (o.aggregation) {
        case StereoAggregation::Gauss7:
            return 7;
        case StereoAggregation::Gauss13:
            return 13;
        case StereoAggregation::Box:
            return o.box_size;
        case StereoAggregation::Sgm4:
        case StereoAggregation::Sgm8:
            return o.sgm_window;
    }
    return 0;
}

bool is_sgm(StereoAggregation a) {
    return a == StereoAggregation::Sgm4 || a == StereoAggregation::Sgm8;
}

template <class V>
void check_output(const char* name, const V& out, int w, int h, Location where) {
    if (out.data() == nullptr) return;
    if (out.width() != w || out.height() != h || out.channels() != 1)
        fail(std::string(name) + " is " + shape_text(out.width(), out.height(), out.channels()) +
             " but must be " + shape_text(w, h, 1) + " (the input's size, 1 channel)");
    if (out.location() != where)
        fail(std::string(name) + " is in " + to_string(out.location()) +
             " memory but the input is in " + to_string(where) + " memory");
}

StereoPlan make_plan(const StereoOptions& o, int w) {
    if (!enum_desc<StereoCost>().contains(static_cast<int>(o.cost)))
        fail("unknown cost " + std::to_string(static_cast<int>(o.cost)) +
             " (allowed: " + enum_desc<StereoCost>().allowed() + ")");
    if (!enum_desc<StereoAggregation>().contains(static_cast<int>(o.aggregation)))
        fail("unknown aggregation " + std::to_string(static_cast<int>(o.aggregation)) +
             " (allowed: " + enum_desc<StereoAggregation>().allowed() + ")");
    if (o.num_disparities < 1 || o.num_disparities > 1024)
        fail("num_disparities " + std::to_string(o.num_disparities) + " is outside [1, 1024]");
    if (o.num_disparities > w)
        fail("num_disparities " + std::to_string(o.num_disparities) + " is wider than the image (" +
             std::to_string(w) + " pixels)");
    if (o.min_disparity <= -w || o.min_disparity >= w)
        fail("min_disparity " + std::to_string(o.min_disparity) + " leaves no pixel of the " +
             std::to_string(w) + "-pixel-wide image a candidate (allowed: " +
             std::to_string(1 - w) + " to " + std::to_string(w - 1) + ")");
    if (o.aggregation == StereoAggregation::Box &&
        (o.box_size < 1 || o.box_size > 31 || o.box_size % 2 == 0))
        fail("box_size " + std::to_string(o.box_size) + " must be odd, 1 to 31");
    if (!std::isfinite(o.max_cost) || o.max_cost < 1.0 / stereo::kCostScale || o.max_cost > 255)
        fail("max_cost " + format_number(o.max_cost) + " is outside [0.0625, 255]");
    if (o.lr_check < -1 || o.lr_check > 1024)
        fail("lr_check " + std::to_string(o.lr_check) + " is outside [-1, 1024] (-1: no check)");
    if (o.uniqueness < 0 || o.uniqueness > 99)
        fail("uniqueness " + std::to_string(o.uniqueness) + " is outside [0, 99]");
    if (is_sgm(o.aggregation)) {
        if (o.sgm_window < 1 || o.sgm_window > 15 || o.sgm_window % 2 == 0)
            fail("sgm_window " + std::to_string(o.sgm_window) + " must be odd, 1 to 15");
        if (!(o.p1 >= 0) || !(o.p2 > o.p1) || !std::isfinite(o.p2))
            fail("the penalties p1 " + format_number(o.p1) + " and p2 " + format_number(o.p2) +
                 " must satisfy 0 <= p1 < p2");
        const int paths = o.aggregation == StereoAggregation::Sgm8 ? 8 : 4;
        const double top = (o.max_cost + o.p2) * paths;
        if (std::lround(top * stereo::kCostScale) > 65535)
            fail("(max_cost " + format_number(o.max_cost) + " + p2 " + format_number(o.p2) +
                 ") x " + std::to_string(paths) + " paths is " + format_number(top) +
                 ": the path sums must stay within 4095 levels (16 bits); lower max_cost or p2");
    }
    if (o.speckle_size < 0)
        fail("speckle_size " + std::to_string(o.speckle_size) + " is negative (0: off)");
    if (!std::isfinite(o.speckle_range) || o.speckle_range < 0)
        fail("speckle_range " + format_number(o.speckle_range) + " must be finite and >= 0");
    if (!enum_desc<StereoVariant>().contains(static_cast<int>(o.variant)))
        fail("unknown variant " + std::to_string(static_cast<int>(o.variant)) +
             " (allowed: " + enum_desc<StereoVariant>().allowed() + ")");
    StereoPlan p;
    p.min_d = o.min_disparity;
    p.num_d = o.num_disparities;
    p.census = o.cost == StereoCost::Census;
    p.max_q = stereo::max_cost_q(o.max_cost);
    p.radius = window_side(o) / 2;
    p.weights = stereo_weights(o.aggregation);
    p.lr_check = o.lr_check;
    p.subpixel = o.subpixel;
    p.uniqueness = o.uniqueness;
    p.invalid = o.invalid;
    p.median = o.median;
    if (is_sgm(o.aggregation)) {
        p.sgm_paths = o.aggregation == StereoAggregation::Sgm8 ? 8 : 4;
        p.p1 = static_cast<int>(std::lround(o.p1 * stereo::kCostScale));
        p.p2 = static_cast<int>(std::lround(o.p2 * stereo::kCostScale));
        p.sgm_radius = o.sgm_window / 2;
        p.radius = 0;
    }
    return p;
}

template <class T>
void run(ImageView<const T> left, ImageView<const T> right, ImageView<float> disparity,
         const StereoOptions& opts, const Context& ctx, ImageView<float> right_disparity,
         ImageView<std::uint8_t> valid) {
    if (left.empty() || left.data() == nullptr) fail("the left image is empty");
    if (right.empty() || right.data() == nullptr) fail("the right image is empty");
    const int w = left.width(), h = left.height(), c = left.channels();
    if (right.width() != w || right.height() != h || right.channels() != c)
        fail("the right image is " + shape_text(right.width(), right.height(), right.channels()) +
             " but the left one is " + shape_text(w, h, c) + " (a rectified pair has one size)");
    if (c != 1 && c != 3)
        fail("the images have " + std::to_string(c) + " channels (allowed: 1 gray, 3 RGB)");
    if (right.location() != left.location())
        fail("the left and right images are in different memory");
    check_output("the disparity image", disparity, w, h, left.location());
    if (disparity.data() == nullptr) fail("the disparity image is empty");
    check_output("the right disparity image", right_disparity, w, h, left.location());
    check_output("the validity mask", valid, w, h, left.location());
    const int side = window_side(opts);
    if (side > w || side > h)
        fail("the " + std::to_string(side) + " x " + std::to_string(side) +
             " window is larger than the " + std::to_string(w) + " x " + std::to_string(h) +
             " image");
    const StereoPlan plan = make_plan(opts, w);
    const Backend b = resolve_backend(ctx, left.location(), kOp);
    const DeviceScope device_scope(ctx, b, kOp);
    const bool post = plan.median || opts.speckle_size > 0;
    if (b == Backend::Cuda && opts.speckle_size > 0)
        throw Error(ErrorCode::BackendUnavailable,
                    "stereo: speckle removal runs on the host backends only (allowed: reference, "
                    "cpu; on cuda: speckle_size 0)");
    if (b == Backend::Cuda && plan.sgm_paths > 0 && w > kSgmCudaMaxWidth)
        fail("semi-global matching on the cuda backend takes images up to " +
             std::to_string(kSgmCudaMaxWidth) + " pixels wide; this one is " + std::to_string(w) +
             " (the cpu backend takes any width)");
    if (b == Backend::Cuda && plan.sgm_paths > 0 && opts.variant != StereoVariant::Stream)
        fail(std::string("variant ") + to_string(opts.variant) +
             " is the window matcher's cube layout; semi-global matching has one form (allowed: "
             "stream)");
    if (b != Backend::Cuda && opts.variant != StereoVariant::Stream)
        fail(std::string("variant ") + to_string(opts.variant) + " is a cuda variant; the " +
             to_string(b) + " backend runs its own form (allowed: stream)");
    if constexpr (std::is_same_v<T, float>) {
        for (const auto& [name, v] : {std::pair{"left", left}, std::pair{"right", right}}) {
            std::int64_t i = -1;
            if (!v.on_device())
                i = find_nonfinite_host(v.data(), std::ptrdiff_t{w} * c, h, v.stride(),
                                        ctx.threads);
#if UPRES_HAVE_CUDA
            else
                i = cuda::find_nonfinite_device(span_of(v), ctx.cuda_stream);
#endif
            if (i >= 0)
                fail(std::string("the ") + name + " image has a non-finite value at x " +
                     std::to_string(i % (std::int64_t{w} * c) / c) + ", y " +
                     std::to_string(i / (std::int64_t{w} * c)) + " (allowed: finite values)");
        }
    }
    if (b == Backend::Reference || b == Backend::Cpu) {
        // The post-filters need the validity mask: the caller's, or a temporary one. The median
        // with a check filters both maps first (the matcher runs without the check, NaN for
        // invalid pixels) and needs the right map: the caller's, or a temporary one.
        const bool median_check = median_before_check(plan);
        Image<std::uint8_t> own_mask;
        ImageView<std::uint8_t> mask = valid;
        if (post && mask.data() == nullptr) {
            own_mask = Image<std::uint8_t>(w, h, 1);
            mask = own_mask.view();
        }
        Image<float> own_right;
        ImageView<float> rmap = right_disparity;
        if (median_check && rmap.data() == nullptr) {
            own_right = Image<float>(w, h, 1);
            rmap = own_right.view();
        }
        const StereoPlan bp = matcher_plan(plan);
        if (b == Backend::Reference)
            ref::stereo(span_of(left), span_of(right), span_of(disparity), span_of(rmap),
                        span_of(mask), bp);
        else
            cpu::stereo(span_of(left), span_of(right), span_of(disparity), span_of(rmap),
                        span_of(mask), bp, ctx.threads);
        if (median_check)
            stereo_median_check(span_of(disparity), span_of(mask), span_of(rmap), plan.lr_check,
                                plan.invalid);
        if (post)
            stereo_post_filter(span_of(disparity), span_of(mask), plan.median && !median_check,
                               opts.speckle_size, opts.speckle_range, plan.invalid);
        return;
    }
    switch (b) {
        case Backend::Reference:
        case Backend::Cpu:
            break;
        case Backend::Cuda:
#if UPRES_HAVE_CUDA
            if (!left.on_device()) {  // stage host data through the device
                const char* what = "stereo (staging)";
                const auto dl = cuda::upload(left, ctx.cuda_stream, what);
                const auto dr = cuda::upload(right, ctx.cuda_stream, what);
                const cuda::PooledImage<float> dd(w, h, 1, ctx.cuda_stream, what);
                const bool want_r = right_disparity.data() != nullptr,
                           want_m = valid.data() != nullptr;
                const cuda::PooledImage<float> drd(want_r ? w : 1, want_r ? h : 1, 1,
                                                   ctx.cuda_stream, what);
                const cuda::PooledImage<std::uint8_t> dm(want_m ? w : 1, want_m ? h : 1, 1,
                                                         ctx.cuda_stream, what);
                cuda::stereo(span_of(dl.cview()), span_of(dr.cview()), span_of(dd.view()),
                             want_r ? span_of(drd.view()) : Span2D<float>{},
                             want_m ? span_of(dm.view()) : Span2D<std::uint8_t>{}, plan,
                             opts.variant, ctx.cuda_stream);
                copy(dd.cview(), disparity, ctx.cuda_stream);
                if (want_r) copy(drd.cview(), right_disparity, ctx.cuda_stream);
                if (want_m) copy(dm.cview(), valid, ctx.cuda_stream);
                return;
            }
            return cuda::stereo(span_of(left), span_of(right), span_of(disparity),
                                span_of(right_disparity), span_of(valid), plan, opts.variant,
                                ctx.cuda_stream);
#else
            break;
#endif
        case Backend::Auto:
            break;
    }
    throw Error(ErrorCode::Internal, "stereo: unresolved backend");
}

}  // namespace

const int* stereo_weights(StereoAggregation a) {
    static const int kOnes[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    switch (a) {
        case StereoAggregation::Gauss7:
            return stereo::kGauss7;
        case StereoAggregation::Gauss13:
            return stereo::kGauss13;
        case StereoAggregation::Box:
        case StereoAggregation::Sgm4:
        case StereoAggregation::Sgm8:
            break;
    }
    return kOnes;
}

void stereo_disparity(ImageView<const std::uint8_t> left, ImageView<const std::uint8_t> right,
                      ImageView<float> disparity, const StereoOptions& opts, const Context& ctx,
                      ImageView<float> right_disparity, ImageView<std::uint8_t> valid) {
    run(left, right, disparity, opts, ctx, right_disparity, valid);
}
void stereo_disparity(ImageView<const std::uint16_t> left, ImageView<const std::uint16_t> right,
                      ImageView<float> disparity, const StereoOptions& opts, const Context& ctx,
                      ImageView<float> right_disparity, ImageView<std::uint8_t> valid) {
    run(left, right, disparity, opts, ctx, right_disparity, valid);
}
void stereo_disparity(ImageView<const float> left, ImageView<const float> right,
                      ImageView<float> disparity, const StereoOptions& opts, const Context& ctx,
                      ImageView<float> right_disparity, ImageView<std::uint8_t> valid) {
    run(left, right, disparity, opts, ctx, right_disparity, valid);
}

Image<float> stereo_disparity(const AnyImage& left, const AnyImage& right,
                              const StereoOptions& opts, const Context& ctx) {
    if (left.empty()) fail("the left image is empty");
    if (right.empty()) fail("the right image is empty");
    if (left.pixel_type() != right.pixel_type())
        fail(std::string("the left image is ") + to_string(left.pixel_type()) +
             " but the right one is " + to_string(right.pixel_type()));
    return std::visit(
        [&](const auto& l) -> Image<float> {
            using I = std::remove_cvref_t<decltype(l)>;
            using T = std::remove_cvref_t<decltype(*l.data())>;
            const I& r = std::get<I>(right.variant());
            Image<float> out(l.width(), l.height(), 1, l.location());
            run<T>(l.view(), r.view(), out.view(), opts, ctx, {}, {});
            return out;
        },
        left.variant());
}

}  // namespace upres
