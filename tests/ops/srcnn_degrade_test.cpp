// upres::srcnn_degrade and upres::bicubic_resize against the Python twin of the SRCNN protocol
// (tools/srcnn/degrade.py, float64, MATLAB imresize weights; golden data from
// tools/golden/gen_srcnn_degrade.py in tests/data/srcnn_degrade). The models in models/ were
// trained on that twin's degradation, so upres must produce the same low-resolution images.
//
// Tolerances: float outputs 1e-5 absolute (values in [0, 1]; upres resamples in float32).
// u8 outputs: upres rounds its float32 result, the golden rounds the float64 one, so a value
// within float32 error of a rounding tie may land one level apart: every u8 value must be at
// most 1 level from the golden and within 0.5 + 2e-3 of the unrounded float64 value
// (<name>_f64.npy), i.e. a correct rounding up to float32 error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <upres/io.hpp>
#include <upres/srcnn.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::images_near;
using U8 = std::uint8_t;

std::string golden(const std::string& name) {
    return test::data_path("srcnn_degrade/" + name + ".npy");
}

AnyImage load(const std::string& name) { return read_image(golden(name)); }

using test::ctx_of;

// u8 result vs the rounded golden and its unrounded float64 value.
void expect_u8_rounding(const AnyImage& got_any, const std::string& name, const char* what) {
    ASSERT_TRUE(got_any.holds<U8>()) << what << ": " << name << " is not u8";
    const Image<U8>& got = got_any.as<U8>();
    const AnyImage want_any = load(name);
    const AnyImage exact_any = load(name + "_f64");
    ASSERT_TRUE(want_any.holds<U8>());
    const Image<U8>& want = want_any.as<U8>();
    const Image<float>& exact = exact_any.as<float>();
    ASSERT_EQ(got.width(), want.width()) << what << ": " << name;
    ASSERT_EQ(got.height(), want.height()) << what << ": " << name;
    ASSERT_EQ(got.channels(), want.channels()) << what << ": " << name;
    int off_by_one = 0, bad = 0;
    for (int y = 0; y < got.height(); ++y)
        for (int x = 0; x < got.width(); ++x)
            for (int c = 0; c < got.channels(); ++c) {
                const int g = got(x, y, c), w = want(x, y, c);
                const double e = std::clamp(static_cast<double>(exact(x, y, c)), 0.0, 255.0);
                if (g != w) ++off_by_one;
                if (std::abs(g - w) > 1 || std::abs(g - e) > 0.5 + 2e-3) {
                    if (bad++ < 5)
                        ADD_FAILURE()
                            << what << ": " << name << " at (" << x << ", " << y << ", " << c
                            << "): " << g << " vs golden " << w << " (exact " << e << ")";
                }
            }
    EXPECT_EQ(bad, 0) << what << ": " << name;
    // Ties are rare: at most 1 % of the values may differ by one level.
    EXPECT_LE(off_by_one, got.width() * got.height() * got.channels() / 100 + 1)
        << what << ": " << name;
}

void check_backend(Backend b) {
    const Context ctx = ctx_of(b);
    const char* what = to_string(b);
    const AnyImage photo = load("photo_u8");
    ASSERT_EQ(photo.width(), 37);
    ASSERT_EQ(photo.height(), 41);
    for (int s : {2, 3, 4}) {
        const AnyImage got = srcnn_degrade(photo, s, ctx);
        EXPECT_EQ(got.width(), 37 / s);
        EXPECT_EQ(got.height(), 41 / s);
        expect_u8_rounding(got, "deg_photo_x" + std::to_string(s), what);
    }
    const AnyImage gray = load("gray_u8");
    const AnyImage deg_gray = srcnn_degrade(gray, 3, ctx);
    expect_u8_rounding(deg_gray, "deg_gray_x3", what);

    const AnyImage rgb = load("rgb_f32");
    const AnyImage deg_rgb = srcnn_degrade(rgb, 2, ctx);
    ASSERT_TRUE(deg_rgb.holds<float>());
    const AnyImage want_rgb = load("deg_rgb_x2");
    EXPECT_TRUE(images_near(deg_rgb.as<float>().view(), want_rgb.as<float>().view(), 1e-5))
        << what << ": deg_rgb_x2";

    // Up-scaling from the golden low-resolution images (not from upres's own, so that each
    // comparison tests one operation).
    for (int s : {2, 3}) {
        const AnyImage up = bicubic_resize(want_rgb, static_cast<double>(s), ctx);
        ASSERT_TRUE(up.holds<float>());
        const AnyImage want = load("up_rgb_x" + std::to_string(s));
        EXPECT_TRUE(images_near(up.as<float>().view(), want.as<float>().view(), 1e-5))
            << what << ": up_rgb_x" << s;
    }
    const AnyImage up_gray = bicubic_resize(load("deg_gray_x3"), 4.0, ctx);
    expect_u8_rounding(up_gray, "up_gray_x4", what);
}

TEST(SrcnnDegradeGolden, Reference) { check_backend(Backend::Reference); }

TEST(SrcnnDegradeGolden, Cpu) { check_backend(Backend::Cpu); }

TEST(SrcnnDegradeGoldenCuda, Cuda) {
    UPRES_REQUIRE_GPU();
    check_backend(Backend::Cuda);
}

// The crop keeps the top-left corner (MATLAB's modcrop): degrading the 37 x 41 photo equals
// degrading its explicit top-left 36 x 40 crop.
TEST(SrcnnDegradeGolden, CropIsTopLeft) {
    const AnyImage photo = load("photo_u8");
    const Image<U8>& p = photo.as<U8>();
    Image<U8> c(36, 40, 3);
    for (int y = 0; y < 40; ++y)
        for (int x = 0; x < 36; ++x)
            for (int k = 0; k < 3; ++k) c(x, y, k) = p(x, y, k);
    const AnyImage a = srcnn_degrade(photo, 4, ctx_of(Backend::Reference));
    const AnyImage b = srcnn_degrade(AnyImage(std::move(c)), 4, ctx_of(Backend::Reference));
    EXPECT_TRUE(images_near(a.as<U8>().view(), b.as<U8>().view(), 0.0));
}

}  // namespace
}  // namespace upres
