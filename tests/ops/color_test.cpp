// upres colour conversion: golden (scikit-image), properties, Reference vs Cpu (and Cuda) on
// random data and a real photo, sub-image views, every error path.
#include <upres/color.hpp>
#include <upres/error.hpp>
#include <upres/io.hpp>

#include <cmath>
#include <cstdint>
#include <functional>
#include <iostream>
#include <string>

#include "ops/color/color_backends.hpp"
#include "test_util.hpp"

using namespace upres;
using test::images_near;

namespace {

// Tolerances (see color_backends.hpp). Golden YCbCr is float32 of scikit-image's float64.
constexpr double kGoldenYcc = 3.1e-5;  // 1 float ulp at 128..256 (8-bit scale)
constexpr double kFloatYcc = 1e-4;     // Cpu/Cuda (float compute) vs Reference, 8-bit scale
constexpr double kFloatRgb = 2e-6;     // Cpu/Cuda vs Reference, float RGB in [0, 1]
constexpr double kGoldenRgb = 1e-6;    // Reference vs golden float RGB

const Context kRef{Backend::Reference};
const Context kCpu{Backend::Cpu};

template <class T>
Image<T> load(const std::string& name) {
    AnyImage any = read_image(test::data_path("color/" + name + ".npy"));
    return std::move(any.as<T>());
}

template <class T>
Image<float> to_ycc(const ImageView<const T>& rgb, const Context& ctx) {
    Image<float> out(rgb.width(), rgb.height(), rgb.channels());
    rgb_to_ycbcr(rgb, out.view(), ctx);
    return out;
}

template <class T>
Image<T> to_rgb(const ImageView<const float>& ycc, const Context& ctx) {
    Image<T> out(ycc.width(), ycc.height(), ycc.channels());
    ycbcr_to_rgb(ycc, out.view(), ctx);
    return out;
}

// Integer images: at most `lsb` apart everywhere and at most `max_over` values differing at all.
template <class T>
::testing::AssertionResult ints_near(const ImageView<const T>& a, const ImageView<const T>& b,
                                     int lsb, double max_fraction) {
    auto r = images_near(a, b, lsb);
    if (!r) return r;
    std::int64_t diff = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width() * a.channels(); ++x) diff += a.row(y)[x] != b.row(y)[x];
    const double frac = double(diff) / double(a.pixel_count() * a.channels());
    if (frac > max_fraction)
        return ::testing::AssertionFailure() << diff << " values differ (fraction " << frac << ")";
    return ::testing::AssertionSuccess();
}

// images_near that also prints the measured max |diff| (for the record in test logs).
template <class A, class B>
::testing::AssertionResult near_logged(const ImageView<A>& a, const ImageView<B>& b, double atol,
                                       const std::string& what) {
    auto r = images_near(a, b, atol);
    std::cout << "[ measured ] " << what << ": " << r.message() << " (tolerance " << atol << ")\n";
    return r;
}

}  // namespace

// ------------------------------------------------------------------------------ golden

template <class T>
void golden_forward(const std::string& name) {
    const Image<T> rgb = load<T>(name);
    const Image<float> want = load<float>(name + "_ycbcr");
    ASSERT_EQ(rgb.channels(), 3);
    const Image<float> r = to_ycc<T>(rgb.view(), kRef);
    const Image<float> c = to_ycc<T>(rgb.view(), kCpu);
    EXPECT_TRUE(near_logged(r.view(), want.view(), kGoldenYcc, name + " reference vs golden"));
    EXPECT_TRUE(near_logged(c.view(), want.view(), kFloatYcc, name + " cpu vs golden"));
    // luma == the Y channel
    const Image<float> y = luma(rgb.view(), kRef);
    for (int yy = 0; yy < rgb.height(); ++yy)
        for (int x = 0; x < rgb.width(); ++x) ASSERT_EQ(y(x, yy), r(x, yy, 0));
}

TEST(ColorGolden, RgbToYcbcrU8) { golden_forward<std::uint8_t>("rgb_u8"); }
TEST(ColorGolden, RgbToYcbcrU16) { golden_forward<std::uint16_t>("rgb_u16"); }
TEST(ColorGolden, RgbToYcbcrF32) { golden_forward<float>("rgb_f32"); }

TEST(ColorGolden, YcbcrToRgb) {
    const Image<float> ycc = load<float>("ycbcr_f32");
    const auto want_f = load<float>("ycbcr_f32_rgb_f32");
    const auto want_8 = load<std::uint8_t>("ycbcr_f32_rgb_u8");
    const auto want_16 = load<std::uint16_t>("ycbcr_f32_rgb_u16");
    EXPECT_TRUE(near_logged(to_rgb<float>(ycc.view(), kRef).view(), want_f.view(), kGoldenRgb,
                            "ycbcr->rgb f32 reference vs golden"));
    EXPECT_TRUE(near_logged(to_rgb<float>(ycc.view(), kCpu).view(), want_f.view(), kFloatRgb,
                            "ycbcr->rgb f32 cpu vs golden"));
    EXPECT_TRUE(images_near(to_rgb<std::uint8_t>(ycc.view(), kRef).view(), want_8.view(), 0));
    EXPECT_TRUE(images_near(to_rgb<std::uint16_t>(ycc.view(), kRef).view(), want_16.view(), 0));
    EXPECT_TRUE(ints_near<std::uint8_t>(to_rgb<std::uint8_t>(ycc.view(), kCpu).view(),
                                        want_8.view(), 1, 0.01));
    EXPECT_TRUE(ints_near<std::uint16_t>(to_rgb<std::uint16_t>(ycc.view(), kCpu).view(),
                                         want_16.view(), 1, 0.01));
}

// ------------------------------------------------------------------------------ properties

TEST(ColorProperties, KnownValues) {
    Image<std::uint8_t> rgb(3, 1, 3);
    const std::uint8_t px[9] = {0, 0, 0, 255, 255, 255, 255, 0, 0};
    for (int i = 0; i < 9; ++i) rgb.data()[i] = px[i];
    const Image<float> y = to_ycc<std::uint8_t>(rgb.view(), kRef);
    EXPECT_NEAR(y(0, 0, 0), 16.0, 1e-5);
    EXPECT_NEAR(y(0, 0, 1), 128.0, 1e-5);
    EXPECT_NEAR(y(1, 0, 0), 235.0, 1e-4);
    EXPECT_NEAR(y(1, 0, 1), 128.0, 1e-4);
    EXPECT_NEAR(y(2, 0, 0), 16.0 + 65.481, 1e-4);
    EXPECT_NEAR(y(2, 0, 2), 240.0, 1e-4);
    Image<float> g(2, 1, 1);
    g(0, 0) = 0.0f;
    g(1, 0) = 1.0f;
    const Image<float> gy = luma(g.view());
    EXPECT_EQ(gy.channels(), 1);
    EXPECT_NEAR(gy(0, 0), 16.0, 1e-6);
    EXPECT_NEAR(gy(1, 0), 235.0, 1e-4);
}

template <class T>
void round_trip(int w, int h, int c, std::uint32_t seed, const Context& ctx) {
    const Image<T> rgb = test::random_image<T>(w, h, c, seed);
    const Image<float> ycc = to_ycc<T>(rgb.view(), ctx);
    const Image<T> back = to_rgb<T>(ycc.view(), ctx);
    // Integers come back exactly, alpha included; floats within float rounding.
    EXPECT_TRUE(images_near(back.view(), rgb.view(), std::is_integral_v<T> ? 0.0 : 2e-6))
        << w << "x" << h << "x" << c << " " << to_string(ctx.backend);
}

TEST(ColorProperties, RoundTripU8AndU16AlphaKept) {
    for (const Context& ctx : {kRef, kCpu}) {
        round_trip<std::uint8_t>(257, 131, 4, 11, ctx);
        round_trip<std::uint8_t>(7, 3, 3, 12, ctx);
        round_trip<std::uint16_t>(64, 33, 4, 13, ctx);
        round_trip<float>(31, 17, 4, 14, ctx);
    }
}

TEST(ColorProperties, AlphaOnEightBitScaleAndLumaIgnoresIt) {
    Image<std::uint16_t> rgba = test::random_image<std::uint16_t>(9, 5, 4, 21);
    const Image<float> ycc = to_ycc<std::uint16_t>(rgba.view(), kCpu);
    const Image<float> y4 = luma(rgba.view(), kRef);
    Image<std::uint16_t> rgb(9, 5, 3);
    for (int y = 0; y < 5; ++y)
        for (int x = 0; x < 9; ++x) {
            EXPECT_NEAR(ycc(x, y, 3), rgba(x, y, 3) / 65535.0 * 255.0, 1e-4);
            for (int c = 0; c < 3; ++c) rgb(x, y, c) = rgba(x, y, c);
        }
    EXPECT_TRUE(images_near(y4.view(), luma(rgb.view(), kRef).view(), 0.0));
}

TEST(ColorProperties, Deterministic) {
    const auto rgb = test::random_image<float>(301, 97, 3, 31);
    const auto a = to_ycc<float>(rgb.view(), kCpu);
    const auto b = to_ycc<float>(rgb.view(), kCpu);
    EXPECT_TRUE(images_near(a.view(), b.view(), 0.0));
}

// ------------------------------------------------------------------------------ differential

template <class T>
void ref_vs(const Image<T>& rgb, const Context& ctx, const std::string& what) {
    SCOPED_TRACE(what + " " + to_string(ctx.backend));
    const auto r = to_ycc<T>(rgb.view(), kRef);
    const auto o = to_ycc<T>(rgb.view(), ctx);
    EXPECT_TRUE(images_near(o.view(), r.view(), kFloatYcc));
    EXPECT_TRUE(
        images_near(luma(rgb.view(), ctx).view(), luma(rgb.view(), kRef).view(), kFloatYcc));
    const auto br = to_rgb<T>(r.view(), kRef);
    const auto bo = to_rgb<T>(r.view(), ctx);
    if constexpr (std::is_integral_v<T>)
        EXPECT_TRUE(ints_near<T>(bo.view(), br.view(), 1, 0.001));
    else
        EXPECT_TRUE(images_near(bo.view(), br.view(), kFloatRgb));
}

void differential(const Context& ctx) {
    for (int c : {3, 4}) {
        ref_vs(test::random_image<std::uint8_t>(1, 1, c, 41), ctx, "1x1 u8");
        ref_vs(test::random_image<std::uint8_t>(7, 3, c, 42), ctx, "7x3 u8");
        ref_vs(test::random_image<std::uint16_t>(257, 131, c, 43), ctx, "257x131 u16");
        ref_vs(test::random_image<float>(257, 131, c, 44, -0.2, 1.2), ctx, "257x131 f32");
    }
    const auto gray = test::random_image<std::uint16_t>(19, 23, 1, 45);
    EXPECT_TRUE(
        images_near(luma(gray.view(), ctx).view(), luma(gray.view(), kRef).view(), kFloatYcc));
    AnyImage photo = read_image(test::sample_path("chelsea.png"));
    ASSERT_TRUE(photo.holds<std::uint8_t>());
    ref_vs(photo.as<std::uint8_t>(), ctx, "chelsea.png");
    ref_vs(photo.to<float>(), ctx, "chelsea.png as float");
}

TEST(ColorDifferential, CpuVsReference) { differential(kCpu); }

TEST(ColorViews, SubImagesInAndOut) {
    const auto big = test::random_image<std::uint8_t>(50, 40, 3, 51);
    const auto in = big.view().sub(3, 5, 31, 17);
    Image<float> out_big(60, 30, 3);
    for (int i = 0; i < 60 * 30 * 3; ++i) out_big.data()[i] = -7.0f;
    const auto out = out_big.view().sub(10, 4, 31, 17);
    for (const Context& ctx : {kRef, kCpu}) {
        rgb_to_ycbcr(in, out, ctx);
        const auto want = to_ycc<std::uint8_t>(clone(in).view(), kRef);
        EXPECT_TRUE(images_near(ImageView<const float>(out), want.view(), kFloatYcc));
        int untouched = 0;
        for (int y = 0; y < 30; ++y)
            for (int x = 0; x < 60; ++x)
                if (x < 10 || x >= 41 || y < 4 || y >= 21) untouched += out_big(x, y, 1) == -7.0f;
        EXPECT_EQ(untouched, 60 * 30 - 31 * 17);
        // inverse on views, and luma into a view
        Image<std::uint8_t> rgb_big(40, 20, 3);
        const auto rgb = rgb_big.view().sub(2, 1, 31, 17);
        ycbcr_to_rgb(ImageView<const float>(out), rgb, ctx);
        EXPECT_TRUE(images_near(ImageView<const std::uint8_t>(rgb), in, 0));
        Image<float> y_big(33, 19, 1);
        const auto yv = y_big.view().sub(1, 1, 31, 17);
        luma(in, yv, ctx);
        EXPECT_TRUE(images_near(ImageView<const float>(yv), luma(clone(in).view(), kRef).view(),
                                kFloatYcc));
    }
}

// ------------------------------------------------------------------------------ errors

TEST(ColorErrors, WrongChannels) {
    Image<std::uint8_t> two(4, 4, 2), three(4, 4, 3);
    Image<float> f2(4, 4, 2), f3(4, 4, 3), f1(4, 4, 1);
    test::expect_error([&] { rgb_to_ycbcr(two.view(), f2.view()); }, ErrorCode::InvalidArgument,
                       "rgb must have 3 or 4 channels (got 2)");
    test::expect_error([&] { ycbcr_to_rgb(f2.view(), two.view()); }, ErrorCode::InvalidArgument,
                       "ycbcr must have 3 or 4 channels (got 2)");
    test::expect_error([&] { ycbcr_to_rgb(f1.view(), f1.view()); }, ErrorCode::InvalidArgument,
                       "ycbcr must have 3 or 4 channels (got 1)");
    test::expect_error([&] { rgb_to_ycbcr(three.view(), f1.view()); }, ErrorCode::InvalidArgument,
                       "ycbcr is 4 x 4 x 1 but must be 4 x 4 x 3");
    test::expect_error([&] { (void)luma(two.view()); }, ErrorCode::InvalidArgument,
                       "image must have 1, 3 or 4 channels (got 2)");
    test::expect_error([&] { luma(three.view(), f3.view()); }, ErrorCode::InvalidArgument,
                       "y is 4 x 4 x 3 but must be 4 x 4 x 1");
}

TEST(ColorErrors, SizeMismatchAndEmpty) {
    Image<std::uint16_t> rgb(5, 4, 3);
    Image<float> ycc(4, 5, 3);
    Image<float> y(5, 3, 1);
    test::expect_error([&] { rgb_to_ycbcr(rgb.view(), ycc.view()); }, ErrorCode::InvalidArgument,
                       "ycbcr is 4 x 5 x 3 but must be 5 x 4 x 3");
    test::expect_error([&] { ycbcr_to_rgb(ycc.view(), rgb.view()); }, ErrorCode::InvalidArgument,
                       "rgb is 5 x 4 x 3 but must be 4 x 5 x 3");
    test::expect_error([&] { luma(rgb.view(), y.view()); }, ErrorCode::InvalidArgument,
                       "y is 5 x 3 x 1 but must be 5 x 4 x 1");
    Image<std::uint16_t> empty;
    Image<float> fempty;
    test::expect_error([&] { rgb_to_ycbcr(empty.view(), fempty.view()); },
                       ErrorCode::InvalidArgument, "rgb is empty");
    test::expect_error([&] { ycbcr_to_rgb(fempty.view(), empty.view()); },
                       ErrorCode::InvalidArgument, "ycbcr is empty");
    test::expect_error([&] { (void)luma(empty.view()); }, ErrorCode::InvalidArgument, "is empty");
}

TEST(ColorErrors, ForcedCudaNeedsADevice) {
    Image<std::uint8_t> rgb(4, 4, 3);
    for (int i = 0; i < 48; ++i) rgb.data()[i] = static_cast<std::uint8_t>(5 * i);
    Image<float> ycc(4, 4, 3);
    if (cuda_available()) {  // no error: staged through the device (checked in ColorCuda)
        rgb_to_ycbcr(rgb.view(), ycc.view(), Context{Backend::Cuda});
        EXPECT_NEAR(ycc(0, 0, 0), to_ycc<std::uint8_t>(rgb.view(), kRef)(0, 0, 0), kFloatYcc);
        return;
    }
    test::expect_error([&] { rgb_to_ycbcr(rgb.view(), ycc.view(), Context{Backend::Cuda}); },
                       ErrorCode::BackendUnavailable, "rgb_to_ycbcr: the cuda backend");
}

// ------------------------------------------------------------------------------ CUDA

TEST(ColorCuda, DeviceMatchesReference) {
    UPRES_REQUIRE_GPU();
    const Context gpu{Backend::Auto};
    AnyImage photo = read_image(test::sample_path("chelsea.png"));
    const Image<std::uint8_t>& p8 = photo.as<std::uint8_t>();
    const Image<std::uint16_t> r16 = test::random_image<std::uint16_t>(257, 131, 4, 61);
    const Image<float> rf = test::random_image<float>(7, 3, 3, 62, -0.2, 1.2);
    auto check = [&](const auto& rgb, const std::string& what) {
        SCOPED_TRACE(what);
        using T = std::remove_cvref_t<decltype(rgb.data()[0])>;
        const auto d_rgb = clone(rgb.view(), Location::Device);
        Image<float> d_ycc(rgb.width(), rgb.height(), rgb.channels(), Location::Device);
        rgb_to_ycbcr(d_rgb.view(), d_ycc.view(), gpu);
        const auto ycc = clone(d_ycc.view());
        const auto want = to_ycc<T>(rgb.view(), kRef);
        EXPECT_TRUE(images_near(ycc.view(), want.view(), kFloatYcc));
        Image<T> d_back(rgb.width(), rgb.height(), rgb.channels(), Location::Device);
        ycbcr_to_rgb(d_ycc.view(), d_back.view(), gpu);
        const auto back = clone(d_back.view());
        const auto want_back = to_rgb<T>(ycc.view(), kRef);
        if constexpr (std::is_integral_v<T>)
            EXPECT_TRUE(ints_near<T>(back.view(), want_back.view(), 1, 0.001));
        else
            EXPECT_TRUE(images_near(back.view(), want_back.view(), kFloatRgb));
        const auto d_y = luma(d_rgb.view(), gpu);
        EXPECT_TRUE(d_y.on_device());
        EXPECT_TRUE(
            images_near(clone(d_y.view()).view(), luma(rgb.view(), kRef).view(), kFloatYcc));
    };
    check(p8, "chelsea u8");
    check(r16, "random u16 RGBA 257x131");
    check(rf, "random f32 7x3");
}

TEST(ColorCuda, HostDataStagedAndDeviceSubViews) {
    UPRES_REQUIRE_GPU();
    const auto rgb = test::random_image<std::uint8_t>(40, 30, 3, 71);
    const auto want = to_ycc<std::uint8_t>(rgb.view(), kRef);
    // Forced cuda on host views: staged through the device.
    const auto staged = to_ycc<std::uint8_t>(rgb.view(), Context{Backend::Cuda});
    EXPECT_TRUE(images_near(staged.view(), want.view(), kFloatYcc));
    // Sub-views of device images.
    const auto d_rgb = clone(rgb.view(), Location::Device);
    Image<float> d_out(50, 40, 3, Location::Device);
    const auto in = d_rgb.view().sub(4, 3, 20, 11);
    const auto out = d_out.view().sub(7, 9, 20, 11);
    rgb_to_ycbcr(in, out);
    const auto got = clone(ImageView<const float>(out));
    EXPECT_TRUE(images_near(got.view(), want.view().sub(4, 3, 20, 11), kFloatYcc));
    // Reference/Cpu refuse device data; mixed places are refused.
    test::expect_error([&] { rgb_to_ycbcr(in, out, kCpu); }, ErrorCode::InvalidArgument,
                       "needs host memory");
    Image<float> host_out(20, 11, 3);
    test::expect_error([&] { rgb_to_ycbcr(in, host_out.view()); }, ErrorCode::InvalidArgument,
                       "rgb is in device memory but ycbcr is in host memory");
}
