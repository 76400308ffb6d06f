// upres::upscale (upres/upscale.hpp): methods, cascading, colour, bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include <upres/io.hpp>
#include <upres/nlmsr.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/upscale.hpp>
#include <upres/warp.hpp>
#include "test_util.hpp"

#include "core/transfer_count.hpp"

namespace upres {
namespace {

using test::images_near;
using test::random_image;
using U8 = std::uint8_t;

UpscaleOptions opts_of(UpscaleMethod m, double s = 2.0, Lattice l = Lattice::Auto) {
    UpscaleOptions o;
    o.method = m;
    o.scale = s;
    o.lattice = l;
    return o;
}

// Same pixel type, size and bytes.
::testing::AssertionResult identical(const AnyImage& a, const AnyImage& b) {
    if (a.pixel_type() != b.pixel_type())
        return ::testing::AssertionFailure() << "pixel types differ";
    return std::visit(
        [&](const auto& ia) {
            using I = std::decay_t<decltype(ia)>;
            return images_near(ia.view(), std::get<I>(b.variant()).view(), 0.0);
        },
        a.variant());
}

TEST(Upscale, GrayX2AndX4CascadeSeabi) {
    const Image<U8> in = random_image<U8>(21, 14, 1, 8);
    const Image<U8> x2 = upscale(in.view(), opts_of(UpscaleMethod::SilSeabi));
    const Image<U8> ref2 = seabi_upscale2(in.view());
    EXPECT_TRUE(images_near(x2.view(), ref2.view(), 0.0));
    const Image<U8> x4 = upscale(in.view(), opts_of(UpscaleMethod::SilSeabi, 4));
    const Image<U8> ref4 = seabi_upscale2(ref2.view());
    EXPECT_TRUE(images_near(x4.view(), ref4.view(), 0.0));
    const Image<U8> x8 = upscale(in.view(), opts_of(UpscaleMethod::Tap4, 8));
    EXPECT_EQ(x8.width(), 168);
    EXPECT_EQ(x8.height(), 112);
}

// The SEABI family runs on both lattices; upscale's gray x2 is seabi_upscale2 on that lattice,
// and a colour image's chroma is interpolated on the same lattice: a constant-chroma ramp keeps
// its colour, and the luma of a gray-coloured RGB image equals the gray result.
TEST(Upscale, SeabiOnBothLattices) {
    const Image<U8> in = random_image<U8>(21, 14, 1, 8);
    for (Lattice lat : {Lattice::Centered, Lattice::CoSited}) {
        SeabiOptions so;
        so.lattice = lat;
        const Image<U8> ref = seabi_upscale2(in.view(), so);
        EXPECT_TRUE(images_near(
            upscale(in.view(), opts_of(UpscaleMethod::SilSeabi, 2.0, lat)).view(), ref.view(), 0.0))
            << to_string(lat);
    }
    const Image<U8> a =
        upscale(in.view(), opts_of(UpscaleMethod::SilSeabi, 2.0, Lattice::Centered));
    const Image<U8> b = upscale(in.view(), opts_of(UpscaleMethod::SilSeabi, 2.0, Lattice::CoSited));
    EXPECT_FALSE(images_near(a.view(), b.view(), 0.0));
    // x3 on the centred lattice: x4, then centred B-spline resampling to ceil(3 W).
    const Image<U8> x3 = upscale(in.view(), opts_of(UpscaleMethod::SilSeabi, 3.0));
    EXPECT_EQ(x3.width(), 63);
    EXPECT_EQ(x3.height(), 42);
}

TEST(Upscale, BilinearMatchesNumpyGoldenAndTapsMatchTapUpscale) {
    for (const char* name : {"rand", "smooth", "photo"}) {
        const Image<U8> in = test::load_golden<U8>(std::string("seabi/") + name + "_in.npy");
        const Image<U8> want =
            test::load_golden<U8>(std::string("seabi/") + name + "_bilinear.npy");
        EXPECT_TRUE(images_near(
            upscale(in.view(), opts_of(UpscaleMethod::Bilinear, 2.0, Lattice::CoSited)).view(),
            want.view(), 0.0))
            << name;
        const Image<U8> t6 = test::load_golden<U8>(std::string("seabi/") + name + "_tap6.npy");
        EXPECT_TRUE(images_near(
            upscale(in.view(), opts_of(UpscaleMethod::Tap6, 2.0, Lattice::CoSited)).view(),
            t6.view(), 0.0));
        // The default lattice is centre-aligned.
        const Image<U8> c6 = test::load_golden<U8>(std::string("seabi/") + name + "_c_tap6.npy");
        EXPECT_TRUE(
            images_near(upscale(in.view(), opts_of(UpscaleMethod::Tap6)).view(), c6.view(), 0.0));
    }
}

TEST(Upscale, CoSitedBicubicIsTheSeabiPapersBaseline) {
    const Image<U8> in = random_image<U8>(17, 12, 1, 4);
    const Image<U8> out =
        upscale(in.view(), opts_of(UpscaleMethod::Bicubic, 2.0, Lattice::CoSited));
    for (int y = 0; y < 12; ++y)
        for (int x = 0; x < 17; ++x) ASSERT_EQ(out(2 * x, 2 * y), in(x, y));
    // On the even rows, inside the image, the new samples are the Keys cubic at t = 0.5: the
    // 4-tap filter (-1, 9, 9, -1) / 16 (float vs integer rounding: at most 1 apart).
    for (int y = 0; y < 12; ++y)
        for (int x = 1; x + 2 < 17; ++x) {
            const double v = (-in(x - 1, y) + 9.0 * (in(x, y) + in(x + 1, y)) - in(x + 2, y)) / 16;
            ASSERT_NEAR(out(2 * x + 1, 2 * y), std::clamp(v, 0.0, 255.0), 1.0) << x << "," << y;
        }
}

TEST(Upscale, CentreAlignedBicubicIsMatlabImresize) {
    // The default lattice of bicubic is the centre-aligned one of bicubic_resize (MATLAB), on
    // every pixel type.
    const AnyImage u8(random_image<U8>(17, 12, 3, 5));
    const AnyImage u16(random_image<std::uint16_t>(9, 11, 1, 6));
    const AnyImage f32(random_image<float>(10, 7, 3, 7));
    for (const AnyImage* in : {&u8, &u16, &f32})
        for (double s : {2.0, 3.0}) {
            EXPECT_TRUE(
                identical(upscale(*in, opts_of(UpscaleMethod::Bicubic, s)), bicubic_resize(*in, s)))
                << s;
        }
}

TEST(Upscale, AutoPicksSrcnnWhereAModelExistsElseBicubic) {
    const std::vector<int> have = available_srcnn_scales();
    for (double s : {2.0, 3.0, 4.0, 5.0, 2.5}) {
        UpscaleOptions o;
        o.scale = s;
        const bool model = s == std::floor(s) &&
                           std::find(have.begin(), have.end(), static_cast<int>(s)) != have.end();
        EXPECT_EQ(resolved_method(o), model ? UpscaleMethod::Srcnn : UpscaleMethod::Bicubic) << s;
        EXPECT_EQ(resolved_lattice(o), Lattice::Centered) << s;
    }
    // The bundled models are x2, x3, x4 (models/): auto is SRCNN there.
    for (int s : {2, 3, 4}) EXPECT_NE(std::find(have.begin(), have.end(), s), have.end()) << s;
    UpscaleOptions seabi;
    seabi.method = UpscaleMethod::LSeai;
    EXPECT_EQ(resolved_lattice(seabi), Lattice::Centered);
    // The default call is SRCNN x2 on the centre-aligned lattice, identical to srcnn_upscale.
    const AnyImage in(random_image<U8>(20, 16, 3, 9));
    const AnyImage got = upscale(in);
    ASSERT_EQ(got.width(), 40);
    EXPECT_TRUE(identical(got, srcnn_upscale(in, load_default_srcnn_model(2))));
}

TEST(Upscale, LatticesAMethodIsNotDefinedOnAreRefused) {
    const Image<U8> in = random_image<U8>(8, 6, 1, 1);
    test::expect_error(
        [&] { upscale(in.view(), opts_of(UpscaleMethod::Nlm, 2.0, Lattice::CoSited)); },
        ErrorCode::InvalidArgument, "centre-aligned lattice of its bicubic estimate");
    test::expect_error(
        [&] { upscale(in.view(), opts_of(UpscaleMethod::Srcnn, 2.0, Lattice::CoSited)); },
        ErrorCode::InvalidArgument, "centre-aligned lattice of its training");
    UpscaleOptions bad = opts_of(UpscaleMethod::Bicubic);
    bad.lattice = static_cast<Lattice>(7);
    test::expect_error([&] { upscale(in.view(), bad); }, ErrorCode::InvalidArgument,
                       "unknown lattice");
    test::expect_error([&] { upscale(in.view(), opts_of(UpscaleMethod::Srcnn, 2.5)); },
                       ErrorCode::InvalidArgument, "integer scale");
}

TEST(Upscale, NonPowerOfTwoFactorsAndOddSizes) {
    const Image<U8> in = random_image<U8>(13, 7, 3, 21);
    for (double s : {1.5, 3.0, 5.0}) {
        const Image<U8> out = upscale(in.view(), opts_of(UpscaleMethod::SilSeabi, s));
        EXPECT_EQ(out.width(), std::lround(13 * s));
        EXPECT_EQ(out.height(), std::lround(7 * s));
        EXPECT_EQ(out.channels(), 3);
    }
    const Image<U8> same = upscale(in.view(), opts_of(UpscaleMethod::LSeabi, 1.0));
    EXPECT_TRUE(images_near(same.view(), in.view(), 0.0));
}

TEST(Upscale, ColourConstantStaysConstantAndAlphaIsKept) {
    Image<U8> in(9, 6, 4);
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 9; ++x) {
            in(x, y, 0) = 200;
            in(x, y, 1) = 120;
            in(x, y, 2) = 40;
            in(x, y, 3) = 255;
        }
    for (UpscaleMethod m : {UpscaleMethod::LSeai, UpscaleMethod::SilSeabi, UpscaleMethod::LSeabi,
                            UpscaleMethod::Tap6, UpscaleMethod::Bicubic, UpscaleMethod::Bilinear}) {
        const Image<U8> out = upscale(in.view(), opts_of(m, 2));
        ASSERT_EQ(out.channels(), 4);
        for (int y = 0; y < 12; ++y)
            for (int x = 0; x < 18; ++x) {
                ASSERT_NEAR(out(x, y, 0), 200, 1) << to_string(m);
                ASSERT_NEAR(out(x, y, 1), 120, 1);
                ASSERT_NEAR(out(x, y, 2), 40, 1);
                ASSERT_EQ(out(x, y, 3), 255);
            }
    }
}

TEST(Upscale, LumaGoesThroughSeabi) {
    // A gray RGB image: its Y plane is 16 + 219 v / 255; the output's Y equals SEABI of it
    // within the colour conversion's rounding.
    const Image<U8> g = random_image<U8>(16, 10, 1, 6);
    Image<U8> rgb(16, 10, 3);
    Image<U8> y(16, 10, 1);
    for (int r = 0; r < 10; ++r)
        for (int c = 0; c < 16; ++c) {
            for (int k = 0; k < 3; ++k) rgb(c, r, k) = g(c, r);
            y(c, r) = static_cast<U8>(std::nearbyint(16.0 + 219.0 * g(c, r) / 255.0));
        }
    const Image<U8> out = upscale(rgb.view(), opts_of(UpscaleMethod::SilSeabi));
    const Image<U8> ys = seabi_upscale2(y.view());
    int bad = 0;
    for (int r = 0; r < 20; ++r)
        for (int c = 0; c < 32; ++c) {
            const double yo = 16.0 + 219.0 * out(c, r, 1) / 255.0;  // gray: G carries Y
            // Y outside the studio range [16, 235] is clipped by the RGB conversion.
            const double want = std::clamp(static_cast<double>(ys(c, r)), 16.0, 235.0);
            if (std::abs(yo - want) > 1.0) ++bad;
        }
    EXPECT_EQ(bad, 0);
}

TEST(UpscaleErrors, BadInputIsRefused) {
    const Image<U8> in = random_image<U8>(8, 6, 1, 1);
    for (double s : {0.5, 0.0, 17.0, std::nan(""), std::numeric_limits<double>::infinity()})
        test::expect_error([&] { upscale(in.view(), opts_of(UpscaleMethod::SilSeabi, s)); },
                           ErrorCode::InvalidArgument, "scale");
    UpscaleOptions o;
    o.method = UpscaleMethod::LSeabi;
    o.max_iterations = 0;
    test::expect_error([&] { upscale(in.view(), o); }, ErrorCode::InvalidArgument,
                       "max_iterations");
    o.max_iterations = 4;
    o.max_error = -1;
    test::expect_error([&] { upscale(in.view(), o); }, ErrorCode::InvalidArgument, "max_error");
    const Image<U8> two = random_image<U8>(8, 6, 2, 1);
    test::expect_error([&] { upscale(two.view(), opts_of(UpscaleMethod::SilSeabi)); },
                       ErrorCode::InvalidArgument, "2 channels");
    test::expect_error([&] { upscale(ImageView<const U8>()); }, ErrorCode::InvalidArgument,
                       "empty");
    test::expect_error([] { parse_upscale_method("nearest"); }, ErrorCode::InvalidArgument,
                       "allowed: auto, srcnn, lseai");
    UpscaleOptions bad;
    bad.method = static_cast<UpscaleMethod>(99);
    test::expect_error([&] { upscale(in.view(), bad); }, ErrorCode::InvalidArgument,
                       "unknown upscale method");
    // 16-bit and float images on the co-sited lattice: refused, naming the type and the
    // conversion.
    const AnyImage u16(random_image<std::uint16_t>(8, 6, 1, 2));
    const UpscaleOptions sil = opts_of(UpscaleMethod::SilSeabi);
    test::expect_error([&] { upscale(u16, sil); }, ErrorCode::UnsupportedFormat, "u16");
    const AnyImage f32(random_image<float>(8, 6, 3, 2));
    test::expect_error([&] { upscale(f32, sil); }, ErrorCode::UnsupportedFormat, "convert");
    const AnyImage u8(random_image<U8>(8, 6, 3, 2));
    EXPECT_EQ(upscale(u8, sil).width(), 16);
}

// The into form writes the caller's image with the allocating form's bytes, for every method
// and lattice, and refuses an output of the wrong size naming the size it needs.
TEST(Upscale, IntoTheCallersImage) {
    const Image<U8> rgb = random_image<U8>(19, 13, 3, 21);
    struct Case {
        UpscaleMethod m;
        double s;
        Lattice l;
    };
    for (const Case& c : {Case{UpscaleMethod::SilSeabi, 2, Lattice::Auto},
                          Case{UpscaleMethod::LSeabi, 3, Lattice::Auto},
                          Case{UpscaleMethod::Tap6, 4, Lattice::Auto},
                          Case{UpscaleMethod::Bicubic, 2, Lattice::CoSited},
                          Case{UpscaleMethod::Bicubic, 2.5, Lattice::Centered},
                          Case{UpscaleMethod::Bilinear, 3, Lattice::Centered},
                          Case{UpscaleMethod::Srcnn, 2, Lattice::Auto}}) {
        const UpscaleOptions o = opts_of(c.m, c.s, c.l);
        const Image<U8> want = upscale(rgb.view(), o);
        Image<U8> got(want.width(), want.height(), 3);
        upscale(rgb.view(), got.view(), o);
        EXPECT_TRUE(images_near(got.view(), want.view(), 0.0)) << to_string(c.m) << " x" << c.s;
        Image<U8> wrong(want.width() + 1, want.height(), 3);
        test::expect_error([&] { upscale(rgb.view(), wrong.view(), o); },
                           ErrorCode::InvalidArgument, "must be");
    }
}

#if UPRES_HAVE_CUDA
// Device data stays on the device: upscale() of a device image with the cuda backend copies no
// image between host and device (every intermediate lives in upres's device pool), and a host
// image with the cuda backend is uploaded once and downloaded once. The device results equal
// the cpu backend's bit for bit where the whole pipeline is integer (gray SEABI and tap filters
// at powers of two). Where float steps round to 8 bits (colour conversion, Keys and B-spline
// resampling, whose cuda and cpu forms differ by float rounding) a rounding flip moves a value
// by one level, and the B-spline resampling of other factors carries a flipped luma level into
// up to 2 levels (its interpolating prefilter's gain on a one-level step is up to 1.7): at most
// 2 levels, and at most 0.1 % of the values more than 1 apart (measured: 2 of 33210, H200).
// Methods x factors x 1, 3, 4 channels, odd sizes and a device sub-view.
::testing::AssertionResult within_rounding(const ImageView<const U8>& a,
                                           const ImageView<const U8>& b) {
    std::int64_t over1 = 0, n = 0;
    int worst = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width() * a.channels(); ++x) {
            const int d = std::abs(int(a.row(y)[x]) - int(b.row(y)[x]));
            worst = std::max(worst, d);
            over1 += d > 1;
            ++n;
        }
    if (worst <= 2 && over1 * 1000 <= n) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "worst |diff| " << worst << ", " << over1 << " of " << n
                                         << " values more than 1 level apart";
}

TEST(UpscaleCuda, DeviceDataStaysOnTheDevice) {
    UPRES_REQUIRE_GPU();
    Context gpu;
    gpu.backend = Backend::Cuda;
    const Context cpu;
    for (int ch : {1, 3, 4}) {
        const Image<U8> big = random_image<U8>(41, 30, ch, 40 + ch);
        const Image<U8> dbig = clone(big.view(), Location::Device);
        for (bool sub : {false, true}) {
            const ImageView<const U8> host = sub ? ImageView<const U8>(big.view()).sub(3, 2, 33, 25)
                                                 : ImageView<const U8>(big.view());
            const ImageView<const U8> dev = sub ? ImageView<const U8>(dbig.view()).sub(3, 2, 33, 25)
                                                : ImageView<const U8>(dbig.view());
            for (UpscaleMethod m : {UpscaleMethod::LSeai, UpscaleMethod::SilSeabi,
                                    UpscaleMethod::LSeabi, UpscaleMethod::Tap4, UpscaleMethod::Tap6,
                                    UpscaleMethod::Bilinear, UpscaleMethod::Bicubic})
                for (double s : {2.0, 4.0, 3.0}) {
                    const UpscaleOptions o = opts_of(m, s, Lattice::CoSited);
                    const Image<U8> want = upscale(host, o, cpu);
                    Image<U8> dout(want.width(), want.height(), ch, Location::Device);
                    const std::uint64_t before = detail::host_device_copies();
                    upscale(dev, dout.view(), o, gpu);
                    EXPECT_EQ(detail::host_device_copies(), before)
                        << to_string(m) << " x" << s << " channels " << ch;
                    const Image<U8> got = clone(ImageView<const U8>(dout.view()));
                    const bool integer = ch == 1 && s != 3.0 && m != UpscaleMethod::Bilinear &&
                                         m != UpscaleMethod::Bicubic;
                    EXPECT_TRUE(integer ? images_near(got.view(), want.view(), 0.0)
                                        : within_rounding(got.view(), want.view()))
                        << to_string(m) << " x" << s << " channels " << ch
                        << (sub ? " sub-view" : "");
                    // Host image, cuda backend: one upload, one download, the same bytes.
                    Image<U8> hout(want.width(), want.height(), ch);
                    const std::uint64_t staged = detail::host_device_copies();
                    upscale(host, hout.view(), o, gpu);
                    EXPECT_EQ(detail::host_device_copies(), staged + 2) << to_string(m);
                    EXPECT_TRUE(images_near(hout.view(), got.view(), 0.0)) << to_string(m);
                }
        }
    }
    // The allocating forms return device images for device input; Auto follows the data.
    const Image<U8> d = clone(random_image<U8>(16, 9, 3, 7).view(), Location::Device);
    const AnyImage a = upscale(AnyImage(clone(d.view(), Location::Device)),
                               opts_of(UpscaleMethod::SilSeabi), Context{});
    EXPECT_TRUE(a.as<U8>().view().on_device());
    EXPECT_TRUE(upscale(ImageView<const U8>(d.view()), opts_of(UpscaleMethod::Tap4)).on_device());
    // Device data on a host backend, or host and device images mixed: refused.
    Image<U8> dout(32, 18, 3, Location::Device);
    Context c;
    c.backend = Backend::Cpu;
    test::expect_error(
        [&] {
            upscale(ImageView<const U8>(d.view()), dout.view(), opts_of(UpscaleMethod::Tap4), c);
        },
        ErrorCode::InvalidArgument, "device");
    Image<U8> hout(32, 18, 3);
    test::expect_error(
        [&] {
            upscale(ImageView<const U8>(d.view()), hout.view(), opts_of(UpscaleMethod::Tap4), gpu);
        },
        ErrorCode::InvalidArgument, "memory");
}
#endif

}  // namespace
}  // namespace upres

namespace upres {
namespace {

// Method nlm: single-image NLM-SR (nlm_fuse of one frame), centre-aligned, integer scales only.
TEST(Upscale, NlmIsSingleFrameFusion) {
    const Image<U8> in = random_image<U8>(23, 17, 1, 31);
    const AnyImage up = upscale(AnyImage(clone(in.view())), opts_of(UpscaleMethod::Nlm, 3));
    NlmsrOptions n;
    n.scale = 3;
    const AnyImage one[] = {AnyImage(clone(in.view()))};
    const AnyImage ref = nlm_fuse(one, n);
    EXPECT_TRUE(identical(up, ref));
    Image<U8> out(46, 34, 1);
    upscale(in.view(), out.view(), opts_of(UpscaleMethod::Nlm));
    n.scale = 2;
    const AnyImage ref2 = nlm_fuse(one, n);
    EXPECT_TRUE(images_near(out.view(), ref2.as<U8>().view(), 0.0));
    test::expect_error([&] { upscale(in.view(), opts_of(UpscaleMethod::Nlm, 2.5)); },
                       ErrorCode::InvalidArgument, "nlm needs the scale 2, 3 or 4");
    test::expect_error(
        [&] { upscale(in.view(), opts_of(UpscaleMethod::Nlm, 2, Lattice::CoSited)); },
        ErrorCode::InvalidArgument, "lattice cosited: nlm");
}

}  // namespace
}  // namespace upres

namespace upres {
namespace {

// Method bspline: upres warp --zoom (resize with the default WarpOptions), any depth; co-sited:
// B-spline resampling of the co-sited grid.
TEST(Upscale, BSplineIsTheExactResize) {
    const Image<std::uint16_t> in = random_image<std::uint16_t>(19, 13, 3, 41);
    const AnyImage up = upscale(AnyImage(clone(in.view())), opts_of(UpscaleMethod::BSpline, 3));
    Image<std::uint16_t> ref(57, 39, 3);
    warp(in.view(), ref.view(), Transform::make_resize(), WarpOptions{});
    EXPECT_TRUE(images_near(up.as<std::uint16_t>().view(), ref.view(), 0.0));
    const Image<U8> g = random_image<U8>(19, 13, 1, 42);
    const Image<U8> co = upscale(g.view(), opts_of(UpscaleMethod::BSpline, 2, Lattice::CoSited));
    Image<U8> ref2(38, 26, 1);
    Affine a;
    a.m[0] = a.m[4] = 0.5;
    a.m[1] = a.m[2] = a.m[3] = a.m[5] = 0.0;
    WarpOptions wo;
    wo.border = Border::Nearest;
    warp(g.view(), ref2.view(), Transform::make_affine(a), wo);
    EXPECT_TRUE(images_near(co.view(), ref2.view(), 0.0));
}

}  // namespace
}  // namespace upres
