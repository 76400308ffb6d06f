// SEABI x2 (upres/seabi.hpp): golden data from the NumPy model, properties from the paper,
// CPU (P stripes) == reference bit-exactly, every bad-input path.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <upres/io.hpp>
#include <upres/seabi.hpp>
#include <upres/warp.hpp>
#include "ops/seabi/seabi_math.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::images_near;
using test::random_image;
using U8 = std::uint8_t;

using test::ctx_of;

const Lattice kLattices[] = {Lattice::Centered, Lattice::CoSited};
const char* tag(Lattice l) { return l == Lattice::CoSited ? "" : "c_"; }

Image<U8> run(const Image<U8>& in, SeabiMethod m, Backend b, int max_it = 4, double max_err = 0.5,
              int stripes = 0, SeabiStats* stats = nullptr, Lattice lattice = Lattice::Centered) {
    SeabiOptions o;
    o.method = m;
    o.lattice = lattice;
    o.max_iterations = max_it;
    o.max_error = max_err;
    o.stripes = stripes;
    Image<U8> out(2 * in.width(), 2 * in.height(), 1);
    const SeabiStats s = seabi_upscale2(in.view(), out.view(), o, ctx_of(b));
    if (stats) *stats = s;
    return out;
}

const char* kGolden[] = {"rand", "smooth", "photo"};

// ---------------------------------------------------------------- golden

TEST(SeabiGolden, TapBaselinesMatchNumpy) {
    for (Lattice lat : kLattices)
        for (const char* name : kGolden) {
            const Image<U8> in = test::load_golden<U8>(std::string("seabi/") + name + "_in.npy");
            for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
                const Image<U8> want =
                    test::load_golden<U8>(std::string("seabi/") + name + "_" + tag(lat) +
                                          (f == TapFilter::Tap4 ? "tap4.npy" : "tap6.npy"));
                for (Backend b : {Backend::Reference, Backend::Cpu}) {
                    Image<U8> out(2 * in.width(), 2 * in.height(), 1);
                    tap_upscale2(in.view(), out.view(), f, lat, ctx_of(b));
                    EXPECT_TRUE(images_near(out.view(), want.view(), 0.0))
                        << name << " tap" << (f == TapFilter::Tap4 ? 4 : 6) << " " << to_string(b)
                        << " " << to_string(lat);
                }
            }
        }
}

TEST(SeabiGolden, SeabiMethodsMatchNumpyModel) {
    for (Lattice lat : kLattices)
        for (const char* name : kGolden) {
            const std::string stem = std::string("seabi/") + name + "_" + tag(lat);
            const Image<U8> in = test::load_golden<U8>(std::string("seabi/") + name + "_in.npy");
            const Image<U8> lseai = test::load_golden<U8>(stem + "lseai.npy");
            const Image<U8> sil = test::load_golden<U8>(stem + "silseabi.npy");
            const Image<U8> l3 = test::load_golden<U8>(stem + "lseabi3.npy");
            for (Backend b : {Backend::Reference, Backend::Cpu}) {
                const std::string what =
                    std::string(name) + " " + to_string(b) + " " + to_string(lat);
                EXPECT_TRUE(
                    images_near(run(in, SeabiMethod::LSeai, b, 4, 0.5, 0, nullptr, lat).view(),
                                lseai.view(), 0.0))
                    << what << " lseai";
                EXPECT_TRUE(
                    images_near(run(in, SeabiMethod::SilSeabi, b, 4, 0.5, 0, nullptr, lat).view(),
                                sil.view(), 0.0))
                    << what << " silseabi";
                EXPECT_TRUE(
                    images_near(run(in, SeabiMethod::LSeabi, b, 3, 0.0, 0, nullptr, lat).view(),
                                l3.view(), 0.0))
                    << what << " lseabi x3";
            }
        }
}

// ---------------------------------------------------------------- properties

TEST(SeabiProperties, GaussianTapsSumTo2Pow23AndBackProjectionHasUnitGain) {
    EXPECT_EQ(2 * (seabi::kBlurH0 + seabi::kBlurH1) + seabi::kBlurH2, 1 << 23);
    // The paper's integer taps, kept except for the centre one.
    EXPECT_EQ(seabi::kBlurH0, 21559);
    EXPECT_EQ(seabi::kBlurH1, 1390789);
    EXPECT_EQ(std::lround(0.00257 * (1 << 23)), 21559);
    EXPECT_EQ(std::lround(0.165795 * (1 << 23)), 1390789);
    int sum = 0;
    for (int k = 0; k < 5; ++k)
        for (int l = 0; l < 5; ++l) sum += seabi::bp_coefficient(k, l);
    EXPECT_EQ(sum, 1 << 16);
    EXPECT_EQ(seabi::bp_coefficient(0, 4), seabi::bp_coefficient(4, 0));
    // The blur of a constant is the constant (no DC drift).
    for (int v : {0, 1, 127, 254, 255}) EXPECT_EQ(seabi::blur5(v, v, v, v, v), v);
    // The half-sample cubic is the Keys cubic (a = -0.5) at t = 0.5: weights -1/16, 9/16.
    EXPECT_EQ(seabi::c4(0, 16, 16, 0), 18);
    EXPECT_EQ(seabi::c4(16, 16, 16, 16), 16);
}

TEST(SeabiProperties, CoSitedCopiesOriginalPixelsToEvenPositions) {
    const Image<U8> in = random_image<U8>(41, 29, 1, 11);
    for (SeabiMethod m : {SeabiMethod::LSeai}) {
        const Image<U8> out = run(in, m, Backend::Reference, 4, 0.5, 0, nullptr, Lattice::CoSited);
        for (int y = 0; y < in.height(); ++y)
            for (int x = 0; x < in.width(); ++x) ASSERT_EQ(out(2 * x, 2 * y), in(x, y));
    }
    for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
        Image<U8> out(82, 58, 1);
        tap_upscale2(in.view(), out.view(), f, Lattice::CoSited, ctx_of(Backend::Cpu));
        for (int y = 0; y < in.height(); ++y)
            for (int x = 0; x < in.width(); ++x) ASSERT_EQ(out(2 * x, 2 * y), in(x, y));
    }
}

// The centre-aligned lattice's defining property: output X samples input X / 2 - 1/4. A linear
// ramp (away from the clamped borders) comes out as the ramp at those positions, exactly, from
// every method (the cubic and bilinear rules reproduce linear functions, the blur of C5 is
// symmetric about the decimated sample, so the back-projected error is zero).
TEST(SeabiProperties, CenteredLatticeSamplesQuarterPositions) {
    Image<U8> in(30, 24, 1);
    for (int y = 0; y < 24; ++y)
        for (int x = 0; x < 30; ++x) in(x, y) = static_cast<U8>(20 + 4 * x + 4 * y);
    auto expect_ramp = [&](const Image<U8>& out, const std::string& what) {
        for (int y = 16; y < 32; ++y)
            for (int x = 16; x < 44; ++x) {
                // 20 + 4 (x / 2 - 1/4) + 4 (y / 2 - 1/4) = 18 + 2 x + 2 y
                ASSERT_EQ(out(x, y), 18 + 2 * x + 2 * y) << what << " at " << x << "," << y;
            }
    };
    for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi})
        for (Backend b : {Backend::Reference, Backend::Cpu})
            expect_ramp(run(in, m, b, 3, 0.0), std::string(to_string(m)) + " " + to_string(b));
    for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
        Image<U8> out(60, 48, 1);
        tap_upscale2(in.view(), out.view(), f, Lattice::Centered, ctx_of(Backend::Cpu));
        expect_ramp(out, f == TapFilter::Tap4 ? "tap4" : "tap6");
    }
}

// Centred tap4 is the Keys cubic (a = -0.5) of upres warp's resize at the same positions, in
// integers rounded twice: within one grey level of the float resize with the same border.
TEST(SeabiProperties, CenteredTap4IsKeysResize) {
    const Image<U8> in = random_image<U8>(37, 29, 1, 21, 60, 190);  // no clamped overshoot
    Image<U8> out(74, 58, 1);
    tap_upscale2(in.view(), out.view(), TapFilter::Tap4, Lattice::Centered, ctx_of(Backend::Cpu));
    Image<float> f(37, 29, 1);
    convert(in.view(), f.view(), false);
    Image<float> want(74, 58, 1);
    WarpOptions wo;
    wo.interp = Interp::Cubic;
    wo.border = Border::Nearest;
    warp(ImageView<const float>(f.view()), want.view(), Transform::make_resize(), wo,
         ctx_of(Backend::Reference));
    // Interior: warp's Border::Nearest extends the image differently from clamped taps at the
    // first and last output pixel of each axis.
    int worst = 0;
    for (int y = 1; y < 57; ++y)
        for (int x = 1; x < 73; ++x) {
            const int w = static_cast<int>(std::lround(std::clamp(want(x, y), 0.f, 255.f)));
            worst = std::max(worst, std::abs(out(x, y) - w));
        }
    EXPECT_LE(worst, 1);
}

TEST(SeabiProperties, ThresholdIsRootMeanSquaredGradient) {
    const Image<U8> in = test::random_image<U8>(33, 17, 1, 5, 40, 200);
    double tv = 0;
    for (int y = 0; y < 17; ++y)
        for (int x = 0; x < 33; ++x) {
            const double gx = x + 1 < 33 ? in(x + 1, y) - in(x, y) : 0;
            const double gy = y + 1 < 17 ? in(x, y + 1) - in(x, y) : 0;
            tv += gx * gx + gy * gy;
        }
    SeabiStats s;
    run(in, SeabiMethod::LSeai, Backend::Cpu, 4, 0.5, 0, &s);
    EXPECT_EQ(s.threshold, static_cast<int>(std::floor(std::sqrt(std::floor(tv / (33 * 17))))));
    EXPECT_EQ(s.iterations, 0);
    EXPECT_EQ(s.last_l1, -1);
}

TEST(SeabiProperties, HomogeneousAreasAreBilinear) {
    // Left half: noise (large total variation, so a large T); right half: a gentle ramp whose
    // cells are homogeneous (gradient below T / 2): their new samples are the bilinear means.
    Image<U8> in = random_image<U8>(40, 20, 1, 3);
    for (int y = 0; y < 20; ++y)
        for (int x = 20; x < 40; ++x) in(x, y) = static_cast<U8>(100 + x / 3 + y / 4);
    const Image<U8> out =
        run(in, SeabiMethod::LSeai, Backend::Reference, 4, 0.5, 0, nullptr, Lattice::CoSited);
    // Centred: the four quarter points of the square (x, y) .. (x + 1, y + 1) are bilinear.
    const Image<U8> cen = run(in, SeabiMethod::LSeai, Backend::Reference);
    int checked = 0;
    for (int y = 1; y < 18; ++y)
        for (int x = 22; x < 38; ++x) {
            const int a = in(x, y), b = in(x + 1, y), c = in(x, y + 1), d = in(x + 1, y + 1);
            ASSERT_EQ(out(2 * x + 1, 2 * y), (a + b + 1) / 2) << x << "," << y;
            ASSERT_EQ(out(2 * x, 2 * y + 1), (a + c + 1) / 2) << x << "," << y;
            ASSERT_EQ(out(2 * x + 1, 2 * y + 1), (a + b + c + d + 2) / 4) << x << "," << y;
            ASSERT_EQ(cen(2 * x + 1, 2 * y + 1), (9 * a + 3 * b + 3 * c + d + 8) / 16);
            ASSERT_EQ(cen(2 * x + 2, 2 * y + 1), (3 * a + 9 * b + c + 3 * d + 8) / 16);
            ASSERT_EQ(cen(2 * x + 1, 2 * y + 2), (3 * a + b + 9 * c + 3 * d + 8) / 16);
            ASSERT_EQ(cen(2 * x + 2, 2 * y + 2), (a + 3 * b + 3 * c + 9 * d + 8) / 16);
            ++checked;
        }
    EXPECT_GT(checked, 200);
}

TEST(SeabiProperties, ConstantImagesStayConstant) {
    for (int v : {0, 77, 255}) {
        Image<U8> in(13, 9, 1);
        std::memset(in.data(), v, 13 * 9);
        for (Lattice lat : kLattices)
            for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
                SeabiStats s;
                const Image<U8> out = run(in, m, Backend::Cpu, 4, 0.0, 0, &s, lat);
                for (int y = 0; y < 18; ++y)
                    for (int x = 0; x < 26; ++x) ASSERT_EQ(out(x, y), v);
                if (m != SeabiMethod::LSeai) {
                    EXPECT_EQ(s.last_l1, 0);
                }
            }
    }
}

TEST(SeabiProperties, SilSeabiIsOneAlwaysAppliedIteration) {
    const Image<U8> in = test::load_golden<U8>("seabi/photo_in.npy");
    SeabiStats s1, s2;
    const Image<U8> sil = run(in, SeabiMethod::SilSeabi, Backend::Cpu, 4, 0.5, 0, &s1);
    const Image<U8> l1 = run(in, SeabiMethod::LSeabi, Backend::Cpu, 1, 0.0, 0, &s2);
    EXPECT_TRUE(images_near(sil.view(), l1.view(), 0.0));
    EXPECT_EQ(s1.iterations, 1);
    EXPECT_EQ(s2.iterations, 1);
    EXPECT_EQ(s1.last_l1, s2.last_l1);
    // A huge max_error stops L-SEABI before any refinement: the output is L-SEAI.
    SeabiStats s3;
    const Image<U8> none = run(in, SeabiMethod::LSeabi, Backend::Cpu, 4, 1e9, 0, &s3);
    EXPECT_EQ(s3.iterations, 0);
    EXPECT_TRUE(images_near(none.view(), run(in, SeabiMethod::LSeai, Backend::Cpu).view(), 0.0));
}

TEST(SeabiProperties, BackProjectionReducesTheError) {
    // The l1 norm of the re-degraded image against the input falls with each iteration.
    const Image<U8> in = test::load_golden<U8>("seabi/photo_in.npy");
    std::int64_t prev = std::numeric_limits<std::int64_t>::max();
    for (int it = 1; it <= 3; ++it) {
        SeabiStats s;
        run(in, SeabiMethod::LSeabi, Backend::Cpu, it, 0.0, 0, &s);
        EXPECT_EQ(s.iterations, it);
        EXPECT_LT(s.last_l1, prev) << "iteration " << it;
        prev = s.last_l1;
    }
    // And max_error stops the loop once the mean error is below it.
    SeabiStats s;
    run(in, SeabiMethod::LSeabi, Backend::Cpu, 50, 0.5, 0, &s);
    EXPECT_LT(s.iterations, 50);
    EXPECT_LT(static_cast<double>(s.last_l1), 0.5 * in.width() * in.height());
}

// ---------------------------------------------------------------- differential

struct Size {
    int w, h;
};
const Size kSizes[] = {{1, 1}, {2, 1},  {1, 5},   {3, 2},   {4, 4},
                       {7, 3}, {16, 9}, {37, 23}, {64, 61}, {257, 131}};

TEST(SeabiCpu, MatchesReferenceOnRandomDataAllSizesAndMethods) {
    std::uint32_t seed = 100;
    for (Lattice lat : kLattices)
        for (const Size& s : kSizes) {
            const Image<U8> in = random_image<U8>(s.w, s.h, 1, seed++);
            for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
                SeabiStats sr, sc;
                const Image<U8> ref = run(in, m, Backend::Reference, 3, 0.0, 0, &sr, lat);
                const Image<U8> cpu = run(in, m, Backend::Cpu, 3, 0.0, 0, &sc, lat);
                EXPECT_TRUE(images_near(cpu.view(), ref.view(), 0.0))
                    << s.w << "x" << s.h << " " << to_string(m) << " " << to_string(lat);
                EXPECT_EQ(sr.iterations, sc.iterations);
                EXPECT_EQ(sr.last_l1, sc.last_l1);
                EXPECT_EQ(sr.threshold, sc.threshold);
            }
        }
}

TEST(SeabiCpu, BitIdenticalForStripeCounts1To7) {
    const Image<U8> in = test::load_golden<U8>("seabi/photo_in.npy");
    const Image<U8> rnd = random_image<U8>(50, 44, 1, 77);
    for (Lattice lat : kLattices)
        for (const Image<U8>* im : {&in, &rnd})
            for (SeabiMethod m : {SeabiMethod::SilSeabi, SeabiMethod::LSeabi, SeabiMethod::LSeai}) {
                const Image<U8> ref = run(*im, m, Backend::Reference, 2, 0.0, 0, nullptr, lat);
                for (int p = 1; p <= 7; ++p)
                    EXPECT_TRUE(images_near(
                        run(*im, m, Backend::Cpu, 2, 0.0, p, nullptr, lat).view(), ref.view(), 0.0))
                        << "P = " << p << " " << to_string(m) << " " << to_string(lat);
                // More stripes than rows: empty stripes are skipped.
                EXPECT_TRUE(images_near(run(*im, m, Backend::Cpu, 2, 0.0, 500, nullptr, lat).view(),
                                        ref.view(), 0.0));
            }
}

TEST(SeabiCpu, MatchesReferenceOnRealPhotoCropsAndLSeabiStops) {
    for (Lattice lat : kLattices)
        for (const char* name : kGolden) {
            const Image<U8> in = test::load_golden<U8>(std::string("seabi/") + name + "_in.npy");
            SeabiStats sr, sc;
            const Image<U8> ref =
                run(in, SeabiMethod::LSeabi, Backend::Reference, 6, 0.3, 0, &sr, lat);
            const Image<U8> cpu = run(in, SeabiMethod::LSeabi, Backend::Cpu, 6, 0.3, 3, &sc, lat);
            EXPECT_TRUE(images_near(cpu.view(), ref.view(), 0.0)) << name;
            EXPECT_EQ(sr.iterations, sc.iterations) << name;
            EXPECT_EQ(sr.last_l1, sc.last_l1) << name;
        }
}

TEST(SeabiCpu, SubImageViewsInAndOut) {
    const Image<U8> big = random_image<U8>(60, 40, 1, 9);
    const ImageView<const U8> in = big.view().sub(7, 5, 31, 27);
    Image<U8> tight = clone(in);
    Image<U8> canvas(100, 70, 1);
    std::memset(canvas.data(), 3, 100 * 70);
    const ImageView<U8> out = canvas.view().sub(11, 9, 62, 54);
    for (Lattice lat : kLattices) {
        for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
            SeabiOptions o;
            o.method = m;
            o.lattice = lat;
            seabi_upscale2(in, out, o, ctx_of(Backend::Cpu));
            const Image<U8> ref = run(tight, m, Backend::Reference, 4, 0.5, 0, nullptr, lat);
            EXPECT_TRUE(images_near(ImageView<const U8>(out), ref.view(), 0.0))
                << to_string(m) << " " << to_string(lat);
        }
        EXPECT_EQ(canvas(10, 9), 3);  // outside the output view untouched
        EXPECT_EQ(canvas(73, 62), 3);
        EXPECT_EQ(canvas(11, 8), 3);
        EXPECT_EQ(canvas(72, 63), 3);
        Image<U8> tout(62, 54, 1);
        tap_upscale2(in, tout.view(), TapFilter::Tap6, lat, ctx_of(Backend::Cpu));
        Image<U8> tref(62, 54, 1);
        tap_upscale2(tight.view(), tref.view(), TapFilter::Tap6, lat, ctx_of(Backend::Reference));
        EXPECT_TRUE(images_near(tout.view(), tref.view(), 0.0));
    }
}

TEST(SeabiCpu, TapBaselinesMultiChannelMatchReference) {
    for (Lattice lat : kLattices)
        for (int ch = 1; ch <= 4; ++ch) {
            const Image<U8> in = random_image<U8>(19, 71, ch, 40 + ch);
            for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
                Image<U8> a(38, 142, ch), b(38, 142, ch);
                tap_upscale2(in.view(), a.view(), f, lat, ctx_of(Backend::Reference));
                tap_upscale2(in.view(), b.view(), f, lat, ctx_of(Backend::Cpu, 2));
                EXPECT_TRUE(images_near(b.view(), a.view(), 0.0)) << ch << " " << to_string(lat);
            }
        }
}

TEST(SeabiCpu, TinyImagesAreWellDefined) {
    // Smaller than the 4 x 4 neighbourhood: clamp-to-edge addressing.
    Image<U8> one(1, 1, 1);
    one(0, 0) = 200;
    for (Lattice lat : kLattices)
        for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
            const Image<U8> out = run(one, m, Backend::Cpu, 4, 0.5, 0, nullptr, lat);
            for (int y = 0; y < 2; ++y)
                for (int x = 0; x < 2; ++x) EXPECT_EQ(out(x, y), 200);
        }
    const Image<U8> conv = seabi_upscale2(random_image<U8>(3, 1, 1, 2).view());
    EXPECT_EQ(conv.width(), 6);
    EXPECT_EQ(conv.height(), 2);
}

// ---------------------------------------------------------------- bad input

TEST(SeabiErrors, BadViewsAndOptionsAreRejected) {
    const Image<U8> in = random_image<U8>(8, 6, 1, 1);
    Image<U8> out(16, 12, 1);
    SeabiOptions o;
    test::expect_error([&] { seabi_upscale2(ImageView<const U8>(), out.view(), o); },
                       ErrorCode::InvalidArgument, "empty");
    Image<U8> wrong(15, 12, 1);
    test::expect_error([&] { seabi_upscale2(in.view(), wrong.view(), o); },
                       ErrorCode::InvalidArgument, "must be 16 x 12 x 1");
    const Image<U8> rgb = random_image<U8>(8, 6, 3, 1);
    Image<U8> rgb_out(16, 12, 3);
    test::expect_error([&] { seabi_upscale2(rgb.view(), rgb_out.view(), o); },
                       ErrorCode::InvalidArgument, "3 channels");
    for (int it : {0, -3, 1001}) {
        SeabiOptions b;
        b.method = SeabiMethod::LSeabi;
        b.max_iterations = it;
        test::expect_error([&] { seabi_upscale2(in.view(), out.view(), b); },
                           ErrorCode::InvalidArgument, "max_iterations is " + std::to_string(it));
    }
    for (double e : {-1.0, std::nan(""), std::numeric_limits<double>::infinity()}) {
        SeabiOptions b;
        b.max_error = e;
        test::expect_error([&] { seabi_upscale2(in.view(), out.view(), b); },
                           ErrorCode::InvalidArgument, "max_error");
    }
    SeabiOptions bs;
    bs.stripes = -2;
    test::expect_error([&] { seabi_upscale2(in.view(), out.view(), bs); },
                       ErrorCode::InvalidArgument, "stripes");
    SeabiOptions bm;
    bm.method = static_cast<SeabiMethod>(42);
    test::expect_error([&] { seabi_upscale2(in.view(), out.view(), bm); },
                       ErrorCode::InvalidArgument, "method");
    SeabiOptions bl;
    bl.lattice = static_cast<Lattice>(7);
    test::expect_error([&] { seabi_upscale2(in.view(), out.view(), bl); },
                       ErrorCode::InvalidArgument, "lattice 7 (allowed: auto, cosited, centered)");
    test::expect_error(
        [&] { tap_upscale2(in.view(), out.view(), TapFilter::Tap4, static_cast<Lattice>(7)); },
        ErrorCode::InvalidArgument, "lattice 7");
    // Overlapping input and output.
    Image<U8> buf(16, 12, 1);
    test::expect_error(
        [&] { seabi_upscale2(ImageView<const U8>(buf.view().sub(0, 0, 8, 6)), buf.view(), o); },
        ErrorCode::InvalidArgument, "overlap");
    test::expect_error(
        [&] {
            tap_upscale2(ImageView<const U8>(buf.view().sub(0, 0, 8, 6)), buf.view(),
                         TapFilter::Tap4);
        },
        ErrorCode::InvalidArgument, "overlap");
    test::expect_error([&] { tap_upscale2(in.view(), out.view(), static_cast<TapFilter>(9)); },
                       ErrorCode::InvalidArgument, "TapFilter");
    test::expect_error([] { parse_seabi_method("seabi"); }, ErrorCode::InvalidArgument,
                       "allowed: lseai, silseabi, lseabi");
    EXPECT_EQ(parse_seabi_method("lseabi"), SeabiMethod::LSeabi);
}

TEST(SeabiErrors, BackendAndMemoryMismatch) {
    const Image<U8> in = random_image<U8>(8, 6, 1, 1);
    Image<U8> out(16, 12, 1);
    // A view tagged as device memory next to a host output.
    const ImageView<const U8> dev(in.data(), 8, 6, 1, 0, Location::Device);
    test::expect_error([&] { seabi_upscale2(dev, out.view(), {}); }, ErrorCode::InvalidArgument,
                       "same place");
    if (!cuda_available()) {
        test::expect_error(
            [&] { seabi_upscale2(in.view(), out.view(), {}, ctx_of(Backend::Cuda)); },
            ErrorCode::BackendUnavailable, "seabi_upscale2");
    }
    const ImageView<U8> dev_out(out.data(), 16, 12, 1, 0, Location::Device);
    test::expect_error([&] { seabi_upscale2(dev, dev_out, {}, ctx_of(Backend::Cpu)); },
                       ErrorCode::InvalidArgument, "host memory");
}

}  // namespace
}  // namespace upres
