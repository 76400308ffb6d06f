// SEABI x2 (upres/seabi.hpp): golden data from the NumPy model, properties from the paper,
// CPU (P stripes) == reference bit-exactly, every bad-input path.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <upres/io.hpp>
#include <upres/seabi.hpp>
#include "ops/seabi/seabi_math.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::images_near;
using test::random_image;
using U8 = std::uint8_t;

using test::ctx_of;

Image<U8> run(const Image<U8>& in, SeabiMethod m, Backend b, int max_it = 4, double max_err = 0.5,
              int stripes = 0, SeabiStats* stats = nullptr) {
    SeabiOptions o;
    o.method = m;
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
    for (const char* name : kGolden) {
        const Image<U8> in = test::load_golden<U8>(std::string("seabi/") + name + "_in.npy");
        for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
            const Image<U8> want = test::load_golden<U8>(
                std::string("seabi/") + name + (f == TapFilter::Tap4 ? "_tap4.npy" : "_tap6.npy"));
            for (Backend b : {Backend::Reference, Backend::Cpu}) {
                Image<U8> out(2 * in.width(), 2 * in.height(), 1);
                tap_upscale2(in.view(), out.view(), f, ctx_of(b));
                EXPECT_TRUE(images_near(out.view(), want.view(), 0.0))
                    << name << " tap" << (f == TapFilter::Tap4 ? 4 : 6) << " " << to_string(b);
            }
        }
    }
}

TEST(SeabiGolden, SeabiMethodsMatchNumpyModel) {
    for (const char* name : kGolden) {
        const Image<U8> in = test::load_golden<U8>(std::string("seabi/") + name + "_in.npy");
        const Image<U8> lseai = test::load_golden<U8>(std::string("seabi/") + name + "_lseai.npy");
        const Image<U8> sil = test::load_golden<U8>(std::string("seabi/") + name + "_silseabi.npy");
        const Image<U8> l3 = test::load_golden<U8>(std::string("seabi/") + name + "_lseabi3.npy");
        for (Backend b : {Backend::Reference, Backend::Cpu}) {
            EXPECT_TRUE(images_near(run(in, SeabiMethod::LSeai, b).view(), lseai.view(), 0.0))
                << name << " lseai " << to_string(b);
            EXPECT_TRUE(images_near(run(in, SeabiMethod::SilSeabi, b).view(), sil.view(), 0.0))
                << name << " silseabi " << to_string(b);
            EXPECT_TRUE(images_near(run(in, SeabiMethod::LSeabi, b, 3, 0.0).view(), l3.view(), 0.0))
                << name << " lseabi x3 " << to_string(b);
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

TEST(SeabiProperties, OriginalPixelsAreCopiedToEvenPositions) {
    const Image<U8> in = random_image<U8>(41, 29, 1, 11);
    for (SeabiMethod m : {SeabiMethod::LSeai}) {
        const Image<U8> out = run(in, m, Backend::Reference);
        for (int y = 0; y < in.height(); ++y)
            for (int x = 0; x < in.width(); ++x) ASSERT_EQ(out(2 * x, 2 * y), in(x, y));
    }
    for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
        Image<U8> out(82, 58, 1);
        tap_upscale2(in.view(), out.view(), f, ctx_of(Backend::Cpu));
        for (int y = 0; y < in.height(); ++y)
            for (int x = 0; x < in.width(); ++x) ASSERT_EQ(out(2 * x, 2 * y), in(x, y));
    }
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
    const Image<U8> out = run(in, SeabiMethod::LSeai, Backend::Reference);
    int checked = 0;
    for (int y = 1; y < 18; ++y)
        for (int x = 22; x < 38; ++x) {
            const int a = in(x, y), b = in(x + 1, y), c = in(x, y + 1), d = in(x + 1, y + 1);
            ASSERT_EQ(out(2 * x + 1, 2 * y), (a + b + 1) / 2) << x << "," << y;
            ASSERT_EQ(out(2 * x, 2 * y + 1), (a + c + 1) / 2) << x << "," << y;
            ASSERT_EQ(out(2 * x + 1, 2 * y + 1), (a + b + c + d + 2) / 4) << x << "," << y;
            ++checked;
        }
    EXPECT_GT(checked, 200);
}

TEST(SeabiProperties, ConstantImagesStayConstant) {
    for (int v : {0, 77, 255}) {
        Image<U8> in(13, 9, 1);
        std::memset(in.data(), v, 13 * 9);
        for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
            SeabiStats s;
            const Image<U8> out = run(in, m, Backend::Cpu, 4, 0.0, 0, &s);
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
    for (const Size& s : kSizes) {
        const Image<U8> in = random_image<U8>(s.w, s.h, 1, seed++);
        for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
            SeabiStats sr, sc;
            const Image<U8> ref = run(in, m, Backend::Reference, 3, 0.0, 0, &sr);
            const Image<U8> cpu = run(in, m, Backend::Cpu, 3, 0.0, 0, &sc);
            EXPECT_TRUE(images_near(cpu.view(), ref.view(), 0.0))
                << s.w << "x" << s.h << " " << to_string(m);
            EXPECT_EQ(sr.iterations, sc.iterations);
            EXPECT_EQ(sr.last_l1, sc.last_l1);
            EXPECT_EQ(sr.threshold, sc.threshold);
        }
    }
}

TEST(SeabiCpu, BitIdenticalForStripeCounts1To7) {
    const Image<U8> in = test::load_golden<U8>("seabi/photo_in.npy");
    const Image<U8> rnd = random_image<U8>(50, 44, 1, 77);
    for (const Image<U8>* im : {&in, &rnd})
        for (SeabiMethod m : {SeabiMethod::SilSeabi, SeabiMethod::LSeabi, SeabiMethod::LSeai}) {
            const Image<U8> ref = run(*im, m, Backend::Reference, 2, 0.0);
            for (int p = 1; p <= 7; ++p)
                EXPECT_TRUE(
                    images_near(run(*im, m, Backend::Cpu, 2, 0.0, p).view(), ref.view(), 0.0))
                    << "P = " << p << " " << to_string(m);
            // More stripes than rows: empty stripes are skipped.
            EXPECT_TRUE(
                images_near(run(*im, m, Backend::Cpu, 2, 0.0, 500).view(), ref.view(), 0.0));
        }
}

TEST(SeabiCpu, MatchesReferenceOnRealPhotoCropsAndLSeabiStops) {
    for (const char* name : kGolden) {
        const Image<U8> in = test::load_golden<U8>(std::string("seabi/") + name + "_in.npy");
        SeabiStats sr, sc;
        const Image<U8> ref = run(in, SeabiMethod::LSeabi, Backend::Reference, 6, 0.3, 0, &sr);
        const Image<U8> cpu = run(in, SeabiMethod::LSeabi, Backend::Cpu, 6, 0.3, 3, &sc);
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
    for (SeabiMethod m : {SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
        SeabiOptions o;
        o.method = m;
        seabi_upscale2(in, out, o, ctx_of(Backend::Cpu));
        const Image<U8> ref = run(tight, m, Backend::Reference);
        EXPECT_TRUE(images_near(ImageView<const U8>(out), ref.view(), 0.0)) << to_string(m);
    }
    EXPECT_EQ(canvas(10, 9), 3);  // outside the output view untouched
    EXPECT_EQ(canvas(73, 62), 3);
    Image<U8> tout(62, 54, 1);
    tap_upscale2(in, tout.view(), TapFilter::Tap6, ctx_of(Backend::Cpu));
    Image<U8> tref(62, 54, 1);
    tap_upscale2(tight.view(), tref.view(), TapFilter::Tap6, ctx_of(Backend::Reference));
    EXPECT_TRUE(images_near(tout.view(), tref.view(), 0.0));
}

TEST(SeabiCpu, TapBaselinesMultiChannelMatchReference) {
    for (int ch = 1; ch <= 4; ++ch) {
        const Image<U8> in = random_image<U8>(19, 11, ch, 40 + ch);
        for (TapFilter f : {TapFilter::Tap4, TapFilter::Tap6}) {
            Image<U8> a(38, 22, ch), b(38, 22, ch);
            tap_upscale2(in.view(), a.view(), f, ctx_of(Backend::Reference));
            tap_upscale2(in.view(), b.view(), f, ctx_of(Backend::Cpu, 2));
            EXPECT_TRUE(images_near(b.view(), a.view(), 0.0)) << ch;
        }
    }
}

TEST(SeabiCpu, TinyImagesAreWellDefined) {
    // Smaller than the 4 x 4 neighbourhood: clamp-to-edge addressing.
    Image<U8> one(1, 1, 1);
    one(0, 0) = 200;
    for (SeabiMethod m : {SeabiMethod::LSeai, SeabiMethod::SilSeabi, SeabiMethod::LSeabi}) {
        const Image<U8> out = run(one, m, Backend::Cpu);
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
