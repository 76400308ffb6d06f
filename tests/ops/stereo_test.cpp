// upres::stereo_disparity (upres/stereo.hpp): golden data from the NumPy / SciPy model
// (tools/golden/gen_stereo.py), properties (a shifted image's disparity, the weights' formula),
// the streaming cpu backend against the reference bit for bit, bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <upres/stereo.hpp>
#include "stereo_test_util.hpp"
#include "test_util.hpp"

#include "ops/stereo/stereo_math.hpp"

namespace upres {
namespace {

using test::expect_error;
using test::random_image;
using U8 = std::uint8_t;

using test::ctx_of;

using test::near;
using test::same;

TEST(Stereo, GaussWeightsFollowTheirFormula) {
    for (int side : {7, 13}) {
        const int r = side / 2;
        const double sigma = (side - 1) / 4.0;
        double total = 0;
        for (int k = -r; k <= r; ++k) total += std::exp(-k * k / (2 * sigma * sigma));
        const int* g = side == 7 ? stereo::kGauss7 : stereo::kGauss13;
        for (int k = 0; k <= r; ++k)
            EXPECT_EQ(g[k], static_cast<int>(std::floor(
                                256 * std::exp(-k * k / (2 * sigma * sigma)) / total + 0.5)))
                << side << " " << k;
    }
}

// Both backends against the NumPy / SciPy model: the sums are integers and the parabola is
// double arithmetic on them, so the maps agree to float rounding (1e-5 pixels); the validity of
// every pixel is the same.
TEST(Stereo, GoldenMatcher) {
    struct Case {
        const char* name;
        const char* input;
        StereoOptions o;
    };
    std::vector<Case> cases(6);
    cases[0] = {"rand_g7", "rand", {}};
    cases[0].o.num_disparities = 8;
    cases[1] = {"rand_g13", "rand", {}};
    cases[1].o.min_disparity = -2;
    cases[1].o.num_disparities = 9;
    cases[1].o.aggregation = StereoAggregation::Gauss13;
    cases[1].o.lr_check = 1;
    cases[1].o.uniqueness = 10;
    cases[2] = {"photo_g7", "photo", {}};
    cases[2].o.num_disparities = 24;
    cases[3] = {"gray_box5", "gray", {}};
    cases[3].o.min_disparity = 2;
    cases[3].o.num_disparities = 20;
    cases[3].o.aggregation = StereoAggregation::Box;
    cases[3].o.box_size = 5;
    cases[3].o.max_cost = 20.0;
    cases[3].o.lr_check = -1;
    cases[3].o.subpixel = false;
    cases[4] = {"photo_census", "photo", {}};
    cases[4].o.num_disparities = 24;
    cases[4].o.cost = StereoCost::Census;
    cases[5] = {"rand_census13", "rand", {}};
    cases[5].o.min_disparity = -1;
    cases[5].o.num_disparities = 10;
    cases[5].o.aggregation = StereoAggregation::Gauss13;
    cases[5].o.cost = StereoCost::Census;
    cases[5].o.lr_check = 1;
    cases[5].o.max_cost = 40.0;
    Case sgm[3] = {
        {"photo_sgm8", "photo", {}}, {"rand_sgm4", "rand", {}}, {"gray_sgm4", "gray", {}}};
    sgm[0].o.num_disparities = 24;
    sgm[0].o.aggregation = StereoAggregation::Sgm8;
    sgm[0].o.cost = StereoCost::Census;
    sgm[0].o.lr_check = 1;
    sgm[1].o.min_disparity = -2;
    sgm[1].o.num_disparities = 9;
    sgm[1].o.aggregation = StereoAggregation::Sgm4;
    sgm[1].o.p1 = 6.0;
    sgm[1].o.p2 = 40.0;
    sgm[1].o.sgm_window = 3;
    sgm[1].o.uniqueness = 5;
    sgm[2].o.num_disparities = 20;
    sgm[2].o.aggregation = StereoAggregation::Sgm4;
    sgm[2].o.cost = StereoCost::Census;
    sgm[2].o.lr_check = 1;
    sgm[2].o.subpixel = false;
    std::vector<Case> all(std::begin(cases), std::end(cases));
    all.insert(all.end(), std::begin(sgm), std::end(sgm));
    for (const Case& c : all) {
        const std::string in = std::string("stereo/") + c.input;
        const Image<U8> l = test::load_golden<U8>(in + "_left.npy");
        const Image<U8> r = test::load_golden<U8>(in + "_right.npy");
        const Image<float> want =
            test::load_golden<float>(std::string("stereo/") + c.name + "_disp.npy");
        const Image<float> want_r =
            test::load_golden<float>(std::string("stereo/") + c.name + "_right_disp.npy");
        for (Backend b : {Backend::Reference, Backend::Cpu}) {
            Image<float> got(l.width(), l.height(), 1), got_r(l.width(), l.height(), 1);
            stereo_disparity(l.view(), r.view(), got.view(), c.o, ctx_of(b), got_r.view());
            EXPECT_TRUE(near(got.view(), want.view(), 1e-5)) << c.name << " " << to_string(b);
            EXPECT_TRUE(near(got_r.view(), want_r.view(), 1e-5))
                << c.name << " right map, " << to_string(b);
        }
    }
}

// The post-filters against NumPy's medians of valid neighbours of both maps, the check on them,
// and OpenCV's filterSpeckles (tools/golden/gen_stereo.py) on the gray semi-global case's integer
// maps: exact.
TEST(Stereo, GoldenPostFilters) {
    const Image<U8> l = test::load_golden<U8>("stereo/gray_left.npy");
    const Image<U8> r = test::load_golden<U8>("stereo/gray_right.npy");
    const Image<float> want = test::load_golden<float>("stereo/gray_sgm4_post_disp.npy");
    StereoOptions o;
    o.num_disparities = 20;
    o.aggregation = StereoAggregation::Sgm4;
    o.cost = StereoCost::Census;
    o.lr_check = 1;
    o.subpixel = false;
    o.median = true;
    o.speckle_size = 20;
    o.speckle_range = 1.0;
    for (Backend b : {Backend::Reference, Backend::Cpu}) {
        Image<float> got(l.width(), l.height(), 1);
        Image<U8> mask(l.width(), l.height(), 1);
        stereo_disparity(l.view(), r.view(), got.view(), o, ctx_of(b), {}, mask.view());
        EXPECT_TRUE(same(got.view(), want.view())) << to_string(b);
        for (int y = 0; y < l.height(); ++y)
            for (int x = 0; x < l.width(); ++x)
                ASSERT_EQ(mask.view().row(y)[x] != 0, !std::isnan(want.view().row(y)[x]))
                    << x << " " << y;
    }
}

// A textured image and the same image shifted by k pixels: every pixel whose window lies inside
// both images gets disparity k (integer part exactly; the parabola stays within half a pixel).
TEST(Stereo, ShiftedImageGivesItsShift) {
    const int w = 80, h = 40, k = 5;
    const Image<U8> base = random_image<U8>(w + k, h, 1, 77);
    Image<U8> l(w, h, 1), r(w, h, 1);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            l.view().row(y)[x] = base.view().row(y)[x];
            r.view().row(y)[x] = base.view().row(y)[x + k];  // R(x - k) = L(x): disparity k
        }
    for (StereoAggregation a : {StereoAggregation::Gauss7, StereoAggregation::Gauss13}) {
        StereoOptions o;
        o.num_disparities = 16;
        o.aggregation = a;
        Image<float> d(w, h, 1);
        stereo_disparity(l.view(), r.view(), d.view(), o);
        const int rad = a == StereoAggregation::Gauss7 ? 3 : 6;
        for (int y = rad; y < h - rad; ++y)
            for (int x = 16 + rad; x < w - rad; ++x) {
                const float v = d.view().row(y)[x];
                ASSERT_LT(std::abs(v - float(k)), 0.5f) << x << " " << y;
            }
        o.subpixel = false;
        stereo_disparity(l.view(), r.view(), d.view(), o);
        for (int y = rad; y < h - rad; ++y)
            for (int x = 16 + rad; x < w - rad; ++x)
                ASSERT_EQ(d.view().row(y)[x], float(k)) << x << " " << y;
    }
}

// The streaming cpu backend equals the reference bit for bit: u8 / u16 / f32, 1 and 3 channels,
// odd sizes, sub-views, negative and positive ranges, every aggregation, the checks on and off,
// with the right map and the mask.
TEST(Stereo, CpuStreamingEqualsReference) {
    std::uint32_t seed = 500;
    struct Size {
        int w, h, c;
    };
    for (const Size s : {Size{37, 23, 1}, Size{50, 41, 3}, Size{13, 70, 1}}) {
        for (int k = 0; k < 5; ++k) {
            const StereoOptions o = test::window_case(k, s.w);
            if (o.aggregation == StereoAggregation::Gauss13 && (s.w < 13 || s.h < 13)) continue;
            test::for_each_pixel_type([&](auto tag, const char* type) {
                const auto p = test::subview_pair<decltype(tag)>(s.w, s.h, s.c, seed);
                test::expect_same_maps(test::host_maps(p.l, p.r, o, ctx_of(Backend::Cpu)),
                                       test::host_maps(p.l, p.r, o, ctx_of(Backend::Reference)),
                                       test::case_name(type, s.w, s.h, s.c, k));
            });
        }
    }
}

// The cpu backend's row schedule (costs all multiples of 16: gray u8 absolute differences or
// census with a truncation that is a multiple of 16; at most 256 candidates; no right-based map
// asked for) against the reference, bit for bit (left map and mask): the window cases on
// sub-views of every pixel type (the others take the streaming schedule), one to three threads
// (parts of rows with their own ring warm-up).
TEST(Stereo, CpuRowScheduleEqualsReference) {
    std::uint32_t seed = 900;
    struct Size {
        int w, h, c;
    };
    const auto left_maps = [](auto l, auto r, const StereoOptions& o, const Context& ctx) {
        test::Maps m{Image<float>(l.width(), l.height(), 1), Image<float>(),
                     Image<std::uint8_t>(l.width(), l.height(), 1)};
        stereo_disparity(l, r, m.d.view(), o, ctx, {}, m.m.view());
        return m;
    };
    for (const Size s : {Size{37, 23, 1}, Size{50, 41, 3}, Size{13, 70, 1}, Size{300, 9, 1}}) {
        for (int k = 0; k < 5; ++k) {
            StereoOptions o = test::window_case(k, s.w);
            if (s.w == 300) o.num_disparities = k == 3 ? 256 : 200;
            if (o.aggregation == StereoAggregation::Gauss13 && (s.w < 13 || s.h < 13)) continue;
            test::for_each_pixel_type([&](auto tag, const char* type) {
                const auto p = test::subview_pair<decltype(tag)>(s.w, s.h, s.c, seed);
                const test::Maps want = left_maps(p.l, p.r, o, ctx_of(Backend::Reference));
                for (int threads : {1, 2, 3}) {
                    const test::Maps got = left_maps(p.l, p.r, o, ctx_of(Backend::Cpu, threads));
                    const std::string what = test::case_name(type, s.w, s.h, s.c, k) + " threads " +
                                             std::to_string(threads);
                    EXPECT_TRUE(test::same(got.d.view(), want.d.view())) << what;
                    EXPECT_TRUE(test::images_near(got.m.view(), want.m.view(), 0.0)) << what;
                }
            });
        }
    }
}

// The row schedule on a real pair (scikit-image's Motorcycle, gray, 320 x 200 at (200, 150), 64
// disparities) equals the streaming schedule (taken when the right map is asked for): every
// aggregation, both costs, checks and uniqueness.
TEST(Stereo, CpuRowScheduleOnARealPair) {
    const auto crop = [](const char* file) {
        const Image<std::uint8_t> img =
            std::move(read_image(test::sample_path(file)).as<std::uint8_t>());
        Image<std::uint8_t> out(320, 200, 1);
        for (int y = 0; y < 200; ++y)
            for (int x = 0; x < 320; ++x) {
                const std::uint8_t* p = img.view().row(150 + y) + (200 + x) * img.channels();
                out.view().row(y)[x] = static_cast<std::uint8_t>((p[0] + p[1] + p[2]) / 3);
            }
        return out;
    };
    const Image<std::uint8_t> l = crop("motorcycle_left.png"), r = crop("motorcycle_right.png");
    const ImageView<const std::uint8_t> lv(l.view()), rv(r.view());
    for (int k = 0; k < 6; ++k) {
        StereoOptions o;
        o.num_disparities = 64;
        o.aggregation = k % 3 == 0   ? StereoAggregation::Gauss7
                        : k % 3 == 1 ? StereoAggregation::Gauss13
                                     : StereoAggregation::Box;
        o.box_size = 9;
        o.cost = k < 3 ? StereoCost::AbsDiff : StereoCost::Census;
        o.lr_check = k % 2;
        o.uniqueness = k == 2 || k == 5 ? 10 : 0;
        Image<float> d(320, 200, 1), d_stream(320, 200, 1), dr(320, 200, 1);
        Image<std::uint8_t> m(320, 200, 1), m_stream(320, 200, 1);
        stereo_disparity(lv, rv, d.view(), o, ctx_of(Backend::Cpu), {}, m.view());
        stereo_disparity(lv, rv, d_stream.view(), o, ctx_of(Backend::Cpu), dr.view(),
                         m_stream.view());
        EXPECT_TRUE(test::same(d.view(), d_stream.view())) << "case " << k;
        EXPECT_TRUE(test::images_near(m.view(), m_stream.view(), 0.0)) << "case " << k;
    }
}

// The semi-global cpu backend (and the median) equals the reference bit for bit: both costs,
// u8 / u16 / f32, 1 and 3 channels, sub-views, ranges, 4 and 8 paths, windows, checks, one,
// two and three threads (two: the passes meet in the middle; three: the costs as a cube
// first), the right map and mask.
TEST(Stereo, SgmCpuEqualsReference) {
    std::uint32_t seed = 700;
    struct Size {
        int w, h, c;
    };
    for (const Size s : {Size{37, 23, 1}, Size{30, 19, 3}, Size{9, 40, 1}}) {
        for (int k = 0; k < 5; ++k) {
            const StereoOptions o = test::sgm_case(k, s.w);
            test::for_each_pixel_type([&](auto tag, const char* type) {
                const auto p = test::subview_pair<decltype(tag)>(s.w, s.h, s.c, seed);
                const test::Maps want = test::host_maps(p.l, p.r, o, ctx_of(Backend::Reference));
                for (int threads : {1, 2, 3})
                    test::expect_same_maps(
                        test::host_maps(p.l, p.r, o, ctx_of(Backend::Cpu, threads)), want,
                        test::case_name(type, s.w, s.h, s.c, k) + " threads " +
                            std::to_string(threads));
            });
        }
    }
}

// The same on a crop of a real pair (scikit-image's Motorcycle, 200 x 120 at (300, 200)), RGB
// and gray, with 48 disparities: census with 8 paths and the check, absolute differences with
// 4 paths and uniqueness.
TEST(Stereo, SgmCpuEqualsReferenceOnARealPair) {
    const auto crop = [](const char* file, bool gray) {
        const Image<std::uint8_t> img =
            std::move(read_image(test::sample_path(file)).as<std::uint8_t>());
        Image<std::uint8_t> out(200, 120, gray ? 1 : 3);
        for (int y = 0; y < 120; ++y)
            for (int x = 0; x < 200; ++x)
                for (int c = 0; c < out.channels(); ++c) {
                    const std::uint8_t* p = img.view().row(200 + y) + (300 + x) * img.channels();
                    out.view().row(y)[x * out.channels() + c] =
                        gray ? static_cast<std::uint8_t>((p[0] + p[1] + p[2]) / 3) : p[c];
                }
        return out;
    };
    for (bool gray : {false, true}) {
        const Image<std::uint8_t> l = crop("motorcycle_left.png", gray);
        const Image<std::uint8_t> r = crop("motorcycle_right.png", gray);
        for (int k = 0; k < 2; ++k) {
            StereoOptions o;
            o.num_disparities = 48;
            o.cost = k == 0 ? StereoCost::Census : StereoCost::AbsDiff;
            o.aggregation = k == 0 ? StereoAggregation::Sgm8 : StereoAggregation::Sgm4;
            o.lr_check = k == 0 ? 1 : -1;
            o.uniqueness = k == 0 ? 0 : 10;
            const ImageView<const std::uint8_t> lv(l.view()), rv(r.view());
            const test::Maps want = test::host_maps(lv, rv, o, ctx_of(Backend::Reference));
            for (int threads : {1, 2, 3})
                test::expect_same_maps(
                    test::host_maps(lv, rv, o, ctx_of(Backend::Cpu, threads)), want,
                    std::string(gray ? "gray" : "rgb") + " case " + std::to_string(k) +
                        " threads " + std::to_string(threads));
        }
    }
}

TEST(StereoErrors, BadInputIsRefused) {
    const Image<U8> l = random_image<U8>(80, 20, 1, 1), r = random_image<U8>(80, 20, 1, 2);
    Image<float> d(80, 20, 1);
    const Image<U8> r2 = random_image<U8>(79, 20, 1, 3);
    expect_error([&] { stereo_disparity(l.view(), r2.view(), d.view()); },
                 ErrorCode::InvalidArgument, "a rectified pair has one size");
    const Image<U8> l2c = random_image<U8>(80, 20, 2, 3), r2c = random_image<U8>(80, 20, 2, 4);
    expect_error([&] { stereo_disparity(l2c.view(), r2c.view(), d.view()); },
                 ErrorCode::InvalidArgument, "allowed: 1 gray, 3 RGB");
    StereoOptions o;
    o.num_disparities = 81;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "wider than the image");
    o = {};
    o.aggregation = StereoAggregation::Gauss13;
    const Image<U8> small_l = random_image<U8>(32, 10, 1, 5),
                    small_r = random_image<U8>(32, 10, 1, 6);
    Image<float> ds(32, 10, 1);
    expect_error([&] { stereo_disparity(small_l.view(), small_r.view(), ds.view(), o); },
                 ErrorCode::InvalidArgument, "window is larger");
    o = {};
    o.box_size = 4;
    o.aggregation = StereoAggregation::Box;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "must be odd");
    o = {};
    o.aggregation = static_cast<StereoAggregation>(9);
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "allowed: gauss7, gauss13, box, sgm4, sgm8");
    o = {};
    o.min_disparity = 80;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "min_disparity");
    Image<float> wrong(79, 20, 1);
    expect_error([&] { stereo_disparity(l.view(), r.view(), wrong.view()); },
                 ErrorCode::InvalidArgument, "must be 80 x 20 x 1");
    Image<float> fl = random_image<float>(80, 20, 1, 7), fr = random_image<float>(80, 20, 1, 8);
    fl.view().row(4)[9] = std::numeric_limits<float>::quiet_NaN();
    expect_error(
        [&] {
            stereo_disparity(ImageView<const float>(fl.view()), ImageView<const float>(fr.view()),
                             d.view());
        },
        ErrorCode::InvalidArgument, "non-finite value at x 9, y 4");
    if (!cuda_available())
        expect_error(
            [&] { stereo_disparity(l.view(), r.view(), d.view(), {}, ctx_of(Backend::Cuda)); },
            ErrorCode::BackendUnavailable, "");
    o = {};
    o.aggregation = StereoAggregation::Sgm8;
    o.p1 = 50;
    o.p2 = 40;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "0 <= p1 < p2");
    o.p1 = 10;
    o.p2 = 400;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "within 4095 levels");
    o = {};
    o.aggregation = StereoAggregation::Sgm4;
    o.sgm_window = 4;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "must be odd, 1 to 15");
    o = {};
    o.speckle_size = 10;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o, ctx_of(Backend::Cuda)); },
                 ErrorCode::BackendUnavailable, "");
    o = {};
    o.speckle_range = -1;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "speckle_range");
    o = {};
    o.variant = StereoVariant::Cube2;
    expect_error([&] { stereo_disparity(l.view(), r.view(), d.view(), o); },
                 ErrorCode::InvalidArgument, "cube2 is a cuda variant");
    const AnyImage al(clone(l.view())), ar16(random_image<std::uint16_t>(80, 20, 1, 9));
    expect_error([&] { stereo_disparity(al, ar16); }, ErrorCode::InvalidArgument, "u16");
}

}  // namespace
}  // namespace upres
