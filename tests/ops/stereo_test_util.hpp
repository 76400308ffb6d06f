// Shared pieces of the stereo tests: comparisons of disparity maps, the option cases of the
// backend-equality tests, random sub-view pairs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>

#include <upres/image.hpp>
#include <upres/stereo.hpp>

#include "test_util.hpp"

namespace upres::test {

// Equal bit for bit, NaN equal to NaN.
inline ::testing::AssertionResult same(const ImageView<const float>& a,
                                       const ImageView<const float>& b) {
    if (a.width() != b.width() || a.height() != b.height())
        return ::testing::AssertionFailure() << "sizes differ";
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const float u = a.row(y)[x], v = b.row(y)[x];
            if (std::isnan(u) && std::isnan(v)) continue;
            if (std::memcmp(&u, &v, sizeof u) != 0)
                return ::testing::AssertionFailure()
                       << "at x " << x << ", y " << y << ": " << u << " vs " << v;
        }
    return ::testing::AssertionSuccess();
}

// Within tol, NaN where the other is NaN.
inline ::testing::AssertionResult near(const ImageView<const float>& a,
                                       const ImageView<const float>& b, double tol) {
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x) {
            const float u = a.row(y)[x], v = b.row(y)[x];
            if (std::isnan(u) != std::isnan(v))
                return ::testing::AssertionFailure()
                       << "validity differs at x " << x << ", y " << y << ": " << u << " vs " << v;
            if (!std::isnan(u) && std::abs(double(u) - double(v)) > tol)
                return ::testing::AssertionFailure()
                       << "at x " << x << ", y " << y << ": " << u << " vs " << v;
        }
    return ::testing::AssertionSuccess();
}

// Case k (0..4) of the window matcher's backend-equality tests on a w-pixel-wide pair: ranges
// from -3, 0 and 4 and the full width, every window, both costs, checks off and on (tolerances
// 0 to 2), uniqueness, no sub-pixel, truncations that keep whole levels and one (20.3) that
// does not.
inline StereoOptions window_case(int k, int w) {
    StereoOptions o;
    o.min_disparity = k == 1 ? -3 : k == 2 ? 4 : 0;
    o.num_disparities = k == 3 ? w : 11;
    o.aggregation = k == 1   ? StereoAggregation::Gauss13
                    : k == 2 ? StereoAggregation::Box
                             : StereoAggregation::Gauss7;
    o.box_size = 3;
    o.lr_check = k % 4 - 1;  // -1 (none), 0, 1, 2, -1
    o.uniqueness = k == 2 ? 10 : 0;
    o.subpixel = k != 3;
    o.max_cost = k == 1 ? 30.0 : k == 4 ? 20.3 : 255.0;
    o.cost = k % 2 ? StereoCost::Census : StereoCost::AbsDiff;
    return o;
}

// Case k (0..4) of the semi-global matcher's backend-equality tests on a w-pixel-wide pair: 4
// and 8 paths, both costs, ranges, the pre-window, penalties, checks, uniqueness, truncation,
// up to 100 disparities, the median.
inline StereoOptions sgm_case(int k, int w) {
    StereoOptions o;
    o.aggregation = k % 2 ? StereoAggregation::Sgm8 : StereoAggregation::Sgm4;
    o.cost = k < 2 || k == 4 ? StereoCost::Census : StereoCost::AbsDiff;
    o.min_disparity = k == 1 ? -3 : k == 2 ? 2 : 0;
    o.num_disparities = k == 3 ? w : k == 4 ? (w < 100 ? w : 100) : 7;
    o.sgm_window = k == 2 ? 3 : 1;
    o.p1 = k == 3 ? 3.5 : 10.0;
    o.p2 = k == 3 ? 90.0 : 120.0;
    o.lr_check = k % 4 - 1;
    o.uniqueness = k == 2 ? 10 : 0;
    o.subpixel = k != 1;
    o.max_cost = k == 3 ? 60.0 : 255.0;
    o.median = k == 4;
    return o;
}

// A random w x h pair of c channels as sub-views of larger images (strides differ from the
// widths, the two offsets differ), from seeds seed and seed + 1 (seed advances by 2).
template <class T>
struct SubviewPair {
    Image<T> big_l, big_r;
    ImageView<const T> l, r;
};
template <class T>
SubviewPair<T> subview_pair(int w, int h, int c, std::uint32_t& seed) {
    SubviewPair<T> p;
    p.big_l = random_image<T>(w + 4, h + 3, c, seed++);
    p.big_r = random_image<T>(w + 4, h + 3, c, seed++);
    p.l = ImageView<const T>(p.big_l.view()).sub(3, 2, w, h);
    p.r = ImageView<const T>(p.big_r.view()).sub(1, 1, w, h);
    return p;
}

// A run's three outputs on the host: the left map, the right map, the validity mask.
struct Maps {
    Image<float> d, dr;
    Image<std::uint8_t> m;
};
// The maps of a run on host data with context ctx.
template <class T>
Maps host_maps(ImageView<const T> l, ImageView<const T> r, const StereoOptions& o,
               const Context& ctx) {
    const int w = l.width(), h = l.height();
    Maps out{Image<float>(w, h, 1), Image<float>(w, h, 1), Image<std::uint8_t>(w, h, 1)};
    stereo_disparity(l, r, out.d.view(), o, ctx, out.dr.view(), out.m.view());
    return out;
}
// Two runs agree bit for bit on all three outputs.
inline void expect_same_maps(const Maps& got, const Maps& want, const std::string& what) {
    EXPECT_TRUE(same(got.d.view(), want.d.view())) << what;
    EXPECT_TRUE(same(got.dr.view(), want.dr.view())) << what << " right map";
    EXPECT_TRUE(images_near(got.m.view(), want.m.view(), 0.0)) << what << " mask";
}
// "u8 37x23x1 case 2": a backend-equality case in failure messages.
inline std::string case_name(const char* type, int w, int h, int c, int k) {
    return std::string(type) + " " + std::to_string(w) + "x" + std::to_string(h) + "x" +
           std::to_string(c) + " case " + std::to_string(k);
}

// f(T{}, "name") for the pixel types u8, u16, f32.
template <class F>
void for_each_pixel_type(F&& f) {
    f(std::uint8_t{}, "u8");
    f(std::uint16_t{}, "u16");
    f(float{}, "f32");
}

}  // namespace upres::test
