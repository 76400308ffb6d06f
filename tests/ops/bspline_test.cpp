// Cubic B-spline prefilter: golden (scipy.ndimage.spline_filter), properties (FIR taps, FIR ->
// IIR with the documented bound), differential (cpu and every CUDA variant vs the reference on
// random data and a real photo), in place, and every error path.
#include <upres/bspline.hpp>
#include <upres/io.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ops/bspline/bspline_math.hpp"
#include "test_util.hpp"

#if UPRES_HAVE_CUDA
#include "core/span2d.hpp"
#include "ops/bspline/bspline_backends.hpp"
#endif

namespace upres {
namespace {

using test::expect_error;
using test::images_near;
using test::random_image;

const Border kBorders[] = {Border::Mirror, Border::Reflect, Border::Nearest, Border::Wrap,
                           Border::Constant};

// Tolerance of the float backends (cpu, cuda) vs the double reference: |diff| <= kFloatTol *
// (value range of the input), docs/ops/bspline.md.
constexpr double kFloatTol = 2e-6;

double value_range(ImageView<const float> v) {
    double lo = 1e300, hi = -1e300;
    for (int y = 0; y < v.height(); ++y)
        for (int i = 0; i < v.width() * v.channels(); ++i) {
            lo = std::min(lo, double(v.row(y)[i]));
            hi = std::max(hi, double(v.row(y)[i]));
        }
    return std::max(hi - lo, std::max(std::abs(hi), std::abs(lo)));
}

double max_diff(ImageView<const float> a, ImageView<const float> b) {
    double m = 0;
    for (int y = 0; y < a.height(); ++y)
        for (int i = 0; i < a.width() * a.channels(); ++i)
            m = std::max(m, std::abs(double(a.row(y)[i]) - double(b.row(y)[i])));
    return m;
}

// Runs the prefilter on `b`; for Cuda the data goes through device images (device views).
Image<float> run(ImageView<const float> src, const PrefilterOptions& o, Backend b) {
    Context ctx;
    ctx.backend = b;
    Image<float> out(src.width(), src.height(), src.channels());
    if (b == Backend::Cuda) {
        Image<float> ds = clone(src, Location::Device);
        Image<float> dd(src.width(), src.height(), src.channels(), Location::Device);
        bspline_prefilter(ds.view(), dd.view(), o, ctx);
        copy(ImageView<const float>(dd.view()), out.view());
        return out;
    }
    bspline_prefilter(src, out.view(), o, ctx);
    return out;
}

Image<float> load_npy(const std::string& name) {
    AnyImage a = read_image(test::data_path("bspline/" + name + ".npy"));
    return std::move(a.as<float>());
}

PrefilterOptions opts(Border b, int fir = 0, PrefilterVariant v = PrefilterVariant::Auto) {
    PrefilterOptions o;
    o.border = b;
    o.fir_length = fir;
    o.variant = v;
    return o;
}

// ---------------------------------------------------------------- golden (scipy)

const char* const kGoldenInputs[] = {"rand37x23c1", "rand37x23c3", "photo64x48c1", "photo64x48c3",
                                     "tiny1x1c1",   "tiny2x1c1",   "tiny1x3c2",    "tiny3x2c1",
                                     "tiny2x3c4",   "tiny3x3c1"};

TEST(BsplineGolden, ReferenceMatchesScipyEveryBorder) {
    double worst = 0;
    for (const char* name : kGoldenInputs) {
        Image<float> in = load_npy(name);
        for (Border b : kBorders) {
            Image<float> want = load_npy(std::string(name) + "_" + to_string(b));
            Image<float> got = run(in.view(), opts(b), Backend::Reference);
            const double scale = std::max(value_range(want.view()), 1e-30);
            worst = std::max(worst, max_diff(got.view(), want.view()) / scale);
            EXPECT_TRUE(images_near(got.view(), want.view(), 1e-6 * scale, 1e-6))
                << name << " border " << to_string(b);
        }
    }
    std::printf("[   info   ] reference vs scipy: worst |diff| / range = %.3g\n", worst);
}

TEST(BsplineGolden, CpuMatchesScipyEveryBorder) {
    for (const char* name : kGoldenInputs) {
        Image<float> in = load_npy(name);
        for (Border b : kBorders) {
            Image<float> want = load_npy(std::string(name) + "_" + to_string(b));
            Image<float> got = run(in.view(), opts(b), Backend::Cpu);
            EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol * value_range(in.view())))
                << name << " border " << to_string(b);
        }
    }
}

// ---------------------------------------------------------------- FIR properties

TEST(BsplineFir, TapsSumToOneSymmetricAndFollowEq6) {
    for (int n = 3; n <= 31; n += 2) {
        std::vector<double> t = fir_prefilter_taps(n);
        ASSERT_EQ(int(t.size()), n);
        double s = 0;
        for (double v : t) s += v;
        EXPECT_NEAR(s, 1.0, 1e-14) << n;
        const int K = n / 2;
        for (int k = 0; k <= K; ++k) EXPECT_DOUBLE_EQ(t[K - k], t[K + k]) << n << " k " << k;
        // ratio of neighbours is the pole sqrt(3) - 2 (eq. 6)
        for (int k = 0; k < K; ++k)
            EXPECT_NEAR(t[K + k + 1] / t[K + k], std::sqrt(3.0) - 2.0, 1e-12) << n;
    }
    // 31 taps: the renormalisation is below 1e-8, centre tap ~ sqrt(3)
    EXPECT_NEAR(fir_prefilter_taps(31)[15], std::sqrt(3.0), 1e-8);
}

// The closed-form segment starts of the CUDA box kernels (bspline::iir_segment_starts) against
// the recursions they replace, run step by step in double: p = 0 before x(s - H), q = 0 after
// p(e + H - 1), on random lines, for many segments (empty ones included).
TEST(BsplineMath, SegmentStartsEqualTheTruncatedRecursions) {
    constexpr int H = 12, n = 90;
    constexpr bspline::IirSegmentStarts<H> c = bspline::iir_segment_starts<H>();
    const double z = bspline::kPole;
    std::mt19937 rng(2026);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(n), p(n), q(n);
    int checked = 0;
    for (int s = H; s <= n - H; s += 5) {
        for (int e = s; e <= n - H; e += 7) {
            for (double& v : x) v = u(rng);
            double pc = 0.0, qc = 0.0;
            for (int i = s - H; i < e + H; ++i) p[i] = pc = x[i] + z * pc;
            for (int i = e + H - 1; i >= s; --i) q[i] = qc = z * qc - p[i];
            double p0 = 0.0, d = 0.0;
            for (int k = H - 1; k >= 0; --k) p0 += c.zk[k] * x[s - 1 - k];
            for (int l = H - 1; l >= 0; --l) d += c.beta[l] * x[e + l];
            ASSERT_NEAR(p0, p[s - 1], 1e-13) << "s " << s;
            double r = p0;
            std::vector<double> ps(n);
            for (int i = s; i < e; ++i) ps[i] = r = x[i] + z * r;
            double t = -(c.alpha * r + d);
            for (int i = e - 1; i >= s; --i) {
                t = z * t - ps[i];
                ASSERT_NEAR(t, q[i], 1e-12) << "segment [" << s << ", " << e << ") at " << i;
                ++checked;
            }
        }
    }
    EXPECT_GT(checked, 1000);
}

TEST(BsplineFir, ConvergesToIirWithinTheBound) {
    Image<float> img = random_image<float>(61, 47, 2, 11);
    double prev = 1e9;
    for (Border b : kBorders) {
        Image<float> exact = run(img.view(), opts(b), Backend::Reference);
        prev = 1e9;
        for (int n = 3; n <= 31; n += 2) {
            Image<float> fir = run(img.view(), opts(b, n), Backend::Reference);
            const double bound = fir_prefilter_error_bound(n);
            // + float32 storage of both results
            EXPECT_TRUE(images_near(fir.view(), exact.view(), bound + 1e-6))
                << "length " << n << " border " << to_string(b) << " bound " << bound;
            double m = 0;
            for (int y = 0; y < img.height(); ++y)
                for (int i = 0; i < img.width() * 2; ++i)
                    m = std::max(m,
                                 double(std::abs(fir.view().row(y)[i] - exact.view().row(y)[i])));
            if (n <= 15) {
                EXPECT_LT(m, prev) << "no convergence at length " << n;
            }
            prev = m;
        }
        EXPECT_LT(prev, 1e-6) << to_string(b);
    }
    // the bound itself: decreasing, ~1e-3 at 15 taps, below float resolution at 31 taps
    for (int n = 5; n <= 31; n += 2)
        EXPECT_LT(fir_prefilter_error_bound(n), fir_prefilter_error_bound(n - 2));
    EXPECT_LT(fir_prefilter_error_bound(15), 2e-3);
    EXPECT_LT(fir_prefilter_error_bound(31), 1e-7);
}

TEST(BsplineFir, LengthForAccuracy) {
    for (double e : {0.5, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6}) {
        const int n = fir_length_for_accuracy(e);
        EXPECT_EQ(n % 2, 1);
        EXPECT_LE(fir_prefilter_error_bound(n), e);
        if (n > 3) {
            EXPECT_GT(fir_prefilter_error_bound(n - 2), e);
        }
    }
    EXPECT_EQ(fir_length_for_accuracy(4.0), 3);  // the 2-D bound for 3 taps is 3.12
    test::expect_error([] { fir_length_for_accuracy(1e-12); }, ErrorCode::InvalidArgument, "31");
    test::expect_error([] { fir_length_for_accuracy(0.0); }, ErrorCode::InvalidArgument,
                       "positive");
    test::expect_error([] { fir_length_for_accuracy(std::nan("")); }, ErrorCode::InvalidArgument,
                       "positive");
}

// ---------------------------------------------------------------- differential (cpu)

struct Size {
    int w, h, c;
};
const Size kSizes[] = {{1, 1, 1},     {2, 5, 1},   {7, 3, 2},  {257, 131, 1},
                       {1023, 17, 3}, {40, 33, 4}, {3, 64, 1}, {67, 19, 2}};

void expect_backend_matches_reference(Backend be, PrefilterVariant v, bool fir_only,
                                      bool iir_only) {
    std::uint32_t seed = 100;
    double worst = 0;
    for (const Size& s : kSizes) {
        Image<float> img = random_image<float>(s.w, s.h, s.c, seed++, -0.25, 1.0);
        const double range = value_range(img.view());
        for (Border b : kBorders)
            for (int fir : {0, 3, 15, 31}) {
                if ((fir_only && fir == 0) || (iir_only && fir != 0)) continue;
                // lengths 3 and 31 on the small sizes only (runtime)
                if ((fir == 3 || fir == 31) && s.w * s.h > 5000) continue;
                Image<float> want = run(img.view(), opts(b, fir), Backend::Reference);
                Image<float> got = run(img.view(), opts(b, fir, v), be);
                EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol * range))
                    << s.w << "x" << s.h << "x" << s.c << " border " << to_string(b) << " fir "
                    << fir << " variant " << to_string(v);
                worst = std::max(worst, max_diff(got.view(), want.view()) / range);
            }
    }
    std::printf("[   info   ] %s %s: worst |diff| / range vs reference = %.3g\n", to_string(be),
                to_string(v), worst);
}

TEST(BsplineCpu, MatchesReferenceOnRandomData) {
    expect_backend_matches_reference(Backend::Cpu, PrefilterVariant::Auto, false, false);
}

TEST(BsplineCpu, SubImageViewAndThreads) {
    Image<float> big = random_image<float>(90, 70, 3, 5);
    ImageView<const float> sub = ImageView<const float>(big.view()).sub(13, 9, 61, 43);
    Image<float> want = run(clone(sub).view(), opts(Border::Reflect), Backend::Reference);
    Image<float> out_big(90, 70, 3);
    ImageView<float> out = out_big.view().sub(5, 20, 61, 43);
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = 3;
    bspline_prefilter(sub, out, opts(Border::Reflect), ctx);
    EXPECT_TRUE(images_near(ImageView<const float>(out), want.view(), kFloatTol));
}

TEST(BsplineCpu, InPlaceEveryBackendOnHost) {
    Image<float> img = random_image<float>(45, 31, 2, 9);
    for (Backend be : {Backend::Reference, Backend::Cpu})
        for (int fir : {0, 15}) {
            Image<float> want = run(img.view(), opts(Border::Mirror, fir), Backend::Reference);
            Image<float> work = clone(img.view());
            Context ctx;
            ctx.backend = be;
            bspline_prefilter(work.view(), work.view(), opts(Border::Mirror, fir), ctx);
            EXPECT_TRUE(images_near(work.view(), want.view(), kFloatTol)) << to_string(be);
        }
}

TEST(BsplineCpu, RealPhotoMatchesReference) {
    Image<float> photo = read_image(test::sample_path("baboon.jpg")).to<float>();
    ASSERT_EQ(photo.channels(), 3);
    for (int fir : {0, 15}) {
        Image<float> want = run(photo.view(), opts(Border::Mirror, fir), Backend::Reference);
        Image<float> got = run(photo.view(), opts(Border::Mirror, fir), Backend::Cpu);
        EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol)) << "fir " << fir;
    }
}

// One axis (scipy spline_filter1d): X then Y is the 2-D filter (the reference), and the cpu
// backend matches the reference along each axis alone, on sub-views and in place.
PrefilterOptions axes_opts(Border b, int fir, PrefilterAxes a) {
    PrefilterOptions o = opts(b, fir);
    o.axes = a;
    return o;
}

TEST(BsplineAxes, XThenYIsTheTwoDimensionalFilter) {
    Image<float> img = random_image<float>(33, 21, 2, 41, -0.5, 1.0);
    for (Border b : kBorders)
        for (int fir : {0, 9}) {
            Image<float> x =
                run(img.view(), axes_opts(b, fir, PrefilterAxes::X), Backend::Reference);
            Image<float> xy =
                run(x.view(), axes_opts(b, fir, PrefilterAxes::Y), Backend::Reference);
            Image<float> both = run(img.view(), opts(b, fir), Backend::Reference);
            EXPECT_TRUE(images_near(xy.view(), both.view(), 1e-6)) << to_string(b) << " " << fir;
            // and X alone leaves the columns unfiltered: a one-row image is the same either way
            EXPECT_GT(max_diff(x.view(), both.view()), 1e-3);
        }
}

TEST(BsplineAxes, CpuMatchesReferenceOnEachAxis) {
    Image<float> big = random_image<float>(80, 61, 3, 43, -0.25, 1.0);
    ImageView<const float> sub = ImageView<const float>(big.view()).sub(7, 5, 59, 47);
    for (PrefilterAxes a : {PrefilterAxes::X, PrefilterAxes::Y})
        for (Border b : kBorders)
            for (int fir : {0, 15}) {
                const PrefilterOptions o = axes_opts(b, fir, a);
                Image<float> want = run(clone(sub).view(), o, Backend::Reference);
                Image<float> got = run(sub, o, Backend::Cpu);
                EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol * 1.25))
                    << to_string(a) << " " << to_string(b) << " fir " << fir;
                Image<float> work = clone(sub);  // in place
                Context ctx;
                ctx.backend = Backend::Cpu;
                bspline_prefilter(work.view(), work.view(), o, ctx);
                EXPECT_TRUE(images_near(work.view(), want.view(), kFloatTol * 1.25));
            }
    PrefilterOptions bad = axes_opts(Border::Mirror, 0, PrefilterAxes::X);
    bad.variant = PrefilterVariant::IirFused;
    Image<float> out(59, 47, 3);
    expect_error([&] { bspline_prefilter(sub, out.view(), bad); }, ErrorCode::InvalidArgument,
                 "filters both axes");
}

// Round trip: sampling the spline at the integers gives the image back ((1/6)[1 4 1] * c = x
// in the interior, for the exact filter).
TEST(BsplineReference, InterpolatesTheSamples) {
    Image<float> img = random_image<float>(50, 1, 1, 3);
    Image<float> c = run(img.view(), opts(Border::Mirror), Backend::Reference);
    for (int x = 1; x < 49; ++x)
        EXPECT_NEAR((c(x - 1, 0) + 4 * c(x, 0) + c(x + 1, 0)) / 6.0, img(x, 0), 1e-6);
    EXPECT_NEAR((4 * c(0, 0) + 2 * c(1, 0)) / 6.0, img(0, 0), 1e-6);  // mirror: c(-1) = c(1)
}

// ---------------------------------------------------------------- errors

TEST(BsplineErrors, BadArguments) {
    Image<float> a(8, 6, 1), b(8, 5, 1), c3(8, 6, 3);
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 8; ++x) a(x, y) = 0.1f * float(x + y);
    Image<float> out(8, 6, 1);
    test::expect_error([&] { bspline_prefilter(ImageView<const float>(), out.view()); },
                       ErrorCode::InvalidArgument, "empty");
    test::expect_error([&] { bspline_prefilter(a.view(), ImageView<float>()); },
                       ErrorCode::InvalidArgument, "empty");
    test::expect_error([&] { bspline_prefilter(a.view(), b.view()); }, ErrorCode::InvalidArgument,
                       "differ");
    test::expect_error([&] { bspline_prefilter(a.view(), c3.view()); }, ErrorCode::InvalidArgument,
                       "differ");
    for (int n : {-1, 1, 2, 4, 14, 33, 35}) {
        test::expect_error(
            [&] { bspline_prefilter(a.view(), out.view(), opts(Border::Mirror, n)); },
            ErrorCode::InvalidArgument, "FIR length " + std::to_string(n));
        test::expect_error([&] { fir_prefilter_taps(n); }, ErrorCode::InvalidArgument,
                           "FIR length " + std::to_string(n));
    }
    test::expect_error([&] { fir_prefilter_taps(0); }, ErrorCode::InvalidArgument, "FIR length 0");
    test::expect_error(
        [&] {
            bspline_prefilter(a.view(), out.view(),
                              opts(Border::Mirror, 15, PrefilterVariant::Recursive));
        },
        ErrorCode::InvalidArgument, "recursive");
    test::expect_error(
        [&] {
            bspline_prefilter(a.view(), out.view(),
                              opts(Border::Mirror, 0, PrefilterVariant::FirShared));
        },
        ErrorCode::InvalidArgument, "fir-shared");
    test::expect_error(
        [&] { bspline_prefilter(a.view(), out.view(), opts(static_cast<Border>(42))); },
        ErrorCode::InvalidArgument, "border");
    // overlapping but different views
    Image<float> big(10, 10, 1);
    test::expect_error(
        [&] {
            bspline_prefilter(ImageView<const float>(big.view()).sub(0, 0, 8, 8),
                              big.view().sub(1, 1, 8, 8));
        },
        ErrorCode::InvalidArgument, "overlap");
    test::expect_error([] { parse_prefilter_variant("fast"); }, ErrorCode::InvalidArgument,
                       "iir-fused");
    EXPECT_EQ(parse_prefilter_variant("fir-fused"), PrefilterVariant::FirFused);
}

TEST(BsplineErrors, NonFinitePixelsNamed) {
    for (Backend be : {Backend::Reference, Backend::Cpu}) {
        Image<float> a = random_image<float>(8, 6, 2, 1);
        Image<float> out(8, 6, 2);
        Context ctx;
        ctx.backend = be;
        a(3, 2, 1) = std::numeric_limits<float>::quiet_NaN();
        a(5, 4, 0) = std::numeric_limits<float>::infinity();
        test::expect_error([&] { bspline_prefilter(a.view(), out.view(), {}, ctx); },
                           ErrorCode::InvalidArgument, "pixel (x 3, y 2, channel 1) is NaN");
        a(3, 2, 1) = 0.5f;
        test::expect_error([&] { bspline_prefilter(a.view(), out.view(), {}, ctx); },
                           ErrorCode::InvalidArgument, "pixel (x 5, y 4, channel 0) is infinite");
    }
}

// ---------------------------------------------------------------- CUDA

const PrefilterVariant kIirVariants[] = {PrefilterVariant::Auto, PrefilterVariant::Recursive,
                                         PrefilterVariant::IirFused};
const PrefilterVariant kFirVariants[] = {PrefilterVariant::Auto, PrefilterVariant::FirShared,
                                         PrefilterVariant::FirFused};

TEST(BsplineCuda, IirVariantsMatchReference) {
    UPRES_REQUIRE_GPU();
    for (PrefilterVariant v : kIirVariants)
        expect_backend_matches_reference(Backend::Cuda, v, false, true);
}

TEST(BsplineCuda, FirVariantsMatchReference) {
    UPRES_REQUIRE_GPU();
    for (PrefilterVariant v : kFirVariants)
        expect_backend_matches_reference(Backend::Cuda, v, true, false);
}

TEST(BsplineCuda, GoldenScipy) {
    UPRES_REQUIRE_GPU();
    for (const char* name : kGoldenInputs) {
        Image<float> in = load_npy(name);
        for (Border b : kBorders) {
            Image<float> want = load_npy(std::string(name) + "_" + to_string(b));
            for (PrefilterVariant v : kIirVariants) {
                Image<float> got = run(in.view(), opts(b, 0, v), Backend::Cuda);
                EXPECT_TRUE(
                    images_near(got.view(), want.view(), kFloatTol * value_range(in.view())))
                    << name << " border " << to_string(b) << " " << to_string(v);
            }
        }
    }
}

// Small, for compute-sanitizer (memcheck, racecheck): every variant, partial tiles, 1 and 3
// channels, in place.
TEST(BsplineCuda, SmallEveryVariant) {
    UPRES_REQUIRE_GPU();
    for (const Size& s : {Size{70, 40, 1}, Size{35, 33, 3}, Size{9, 50, 2}}) {
        Image<float> img = random_image<float>(s.w, s.h, s.c, 31);
        for (int fir : {0, 15}) {
            Image<float> want = run(img.view(), opts(Border::Reflect, fir), Backend::Reference);
            for (PrefilterVariant v : fir ? kFirVariants : kIirVariants) {
                Image<float> got = run(img.view(), opts(Border::Reflect, fir, v), Backend::Cuda);
                EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol))
                    << s.w << "x" << s.h << "x" << s.c << " fir " << fir << " " << to_string(v);
                Image<float> d = clone(img.view(), Location::Device);
                bspline_prefilter(d.view(), d.view(), opts(Border::Reflect, fir, v));
                Image<float> back = clone(d.view());
                EXPECT_TRUE(images_near(back.view(), want.view(), kFloatTol))
                    << "in place " << s.w << "x" << s.h << " fir " << fir << " " << to_string(v);
            }
        }
    }
}

TEST(BsplineCuda, LargerImagesEveryVariant) {
    UPRES_REQUIRE_GPU();
    // tiles of the fused kernels: several tiles in both directions, partial tiles
    Image<float> img = random_image<float>(301, 277, 1, 77);
    Image<float> img4 = random_image<float>(131, 70, 4, 78);
    for (const Image<float>* im : {&img, &img4})
        for (Border b : {Border::Mirror, Border::Wrap, Border::Nearest}) {
            for (int fir : {0, 15})
                for (PrefilterVariant v : fir ? kFirVariants : kIirVariants) {
                    Image<float> want = run(im->view(), opts(b, fir), Backend::Reference);
                    Image<float> got = run(im->view(), opts(b, fir, v), Backend::Cuda);
                    EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol))
                        << im->width() << "x" << im->height() << " " << to_string(b) << " fir "
                        << fir << " " << to_string(v);
                }
        }
}

TEST(BsplineCuda, RealPhotoSubViewsInPlaceAndStaging) {
    UPRES_REQUIRE_GPU();
    Image<float> photo = read_image(test::sample_path("baboon.jpg")).to<float>();
    for (int fir : {0, 15}) {
        Image<float> want = run(photo.view(), opts(Border::Mirror, fir), Backend::Reference);
        for (PrefilterVariant v : fir ? kFirVariants : kIirVariants) {
            // in place on the device
            Image<float> d = clone(photo.view(), Location::Device);
            Context ctx;
            bspline_prefilter(d.view(), d.view(), opts(Border::Mirror, fir, v), ctx);
            Image<float> got = clone(d.view());
            EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol))
                << "in place, fir " << fir << " " << to_string(v);
        }
        // host data forced onto the CUDA backend (staged)
        Image<float> got(photo.width(), photo.height(), 3);
        Context ctx;
        ctx.backend = Backend::Cuda;
        bspline_prefilter(photo.view(), got.view(), opts(Border::Mirror, fir), ctx);
        EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol)) << "staged, fir " << fir;
    }
    // device sub-image views (row stride larger than the width)
    Image<float> d = clone(photo.view(), Location::Device);
    Image<float> dout(photo.width(), photo.height(), 3, Location::Device);
    ImageView<const float> dsub = ImageView<const float>(d.view()).sub(33, 17, 301, 255);
    ImageView<float> osub = dout.view().sub(7, 100, 301, 255);
    Image<float> want = run(clone(photo.view().sub(33, 17, 301, 255)).view(),
                            opts(Border::Reflect, 0), Backend::Reference);
    for (int fir : {0, 9}) {
        if (fir)
            want = run(clone(photo.view().sub(33, 17, 301, 255)).view(), opts(Border::Reflect, 9),
                       Backend::Reference);
        for (PrefilterVariant v : fir ? kFirVariants : kIirVariants) {
            bspline_prefilter(dsub, osub, opts(Border::Reflect, fir, v));
            Image<float> got = clone(ImageView<const float>(osub));
            EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol))
                << "sub-view fir " << fir << " " << to_string(v);
        }
    }
}

#if UPRES_HAVE_CUDA
// The fused variants' kernels (the policy's, the streaming kernels with forced segment lengths,
// the 2-D tile kernels, the recursive-sum and box tiles where they run) on sizes that cover
// partial strips and segments, the 16-byte and the mapped load paths, and 1-4 channels.
TEST(BsplineCuda, FusedImplementationsMatchReference) {
    UPRES_REQUIRE_GPU();
    double worst = 0;
    std::uint32_t seed = 300;
    for (const Size& s : {Size{301, 77, 1}, Size{290, 45, 2}, Size{257, 40, 3}, Size{131, 50, 4},
                          Size{33, 97, 1}}) {
        Image<float> img = random_image<float>(s.w, s.h, s.c, seed++, -0.25, 1.0);
        const double range = value_range(img.view());
        Image<float> din = clone(img.view(), Location::Device);
        Image<float> dout(s.w, s.h, s.c, Location::Device);
        for (Border b : {Border::Mirror, Border::Reflect, Border::Wrap})
            for (int fir : {0, 5, 15, 31}) {
                Image<float> want = run(img.view(), opts(b, fir), Backend::Reference);
                const PrefilterVariant v =
                    fir ? PrefilterVariant::FirFused : PrefilterVariant::IirFused;
                using K = cuda::FusedKernel;
                for (K k : {K::Auto, K::Tile, K::Stream, K::FirRec, K::Box})
                    for (int seg : {0, 8, 24}) {
                        if (k != K::Stream && seg) continue;
                        if (k == K::FirRec && s.c != 1) continue;
                        if (k == K::Box && (s.c != 1 || fir != 0)) continue;
                        cuda::bspline_prefilter_forced(span_of(ImageView<const float>(din.view())),
                                                       span_of(dout.view()), opts(b, fir, v), k,
                                                       seg, nullptr);
                        Image<float> got = clone(ImageView<const float>(dout.view()));
                        EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol * range))
                            << s.w << "x" << s.h << "x" << s.c << " " << to_string(b) << " fir "
                            << fir << " kernel " << static_cast<int>(k) << " seg " << seg;
                        worst = std::max(worst, max_diff(got.view(), want.view()) / range);
                    }
            }
    }
    std::printf("[   info   ] cuda fused implementations: worst |diff| / range = %.3g\n", worst);
}

// FirRec (the recursive-sum tile kernel, 1 channel): every FIR length and the exact filter, every
// border, sizes with partial tiles and images narrower than the halo, and device sub-views whose
// rows are not 16-byte aligned (the mapped load path) next to aligned ones (float4 loads). The
// same cases for the box tiles (the exact filter, 32 x 32 or more; smaller images are refused).
TEST(BsplineCuda, FirRecEveryLengthBorderAndView) {
    UPRES_REQUIRE_GPU();
    double worst = 0;
    Image<float> big = random_image<float>(333, 260, 1, 899, -0.25, 1.0);
    Image<float> dbig = clone(big.view(), Location::Device);
    Image<float> dout(333, 260, 1, Location::Device);
    struct Case {
        int x, y, w, h;
    };
    for (const Case& c : {Case{0, 0, 333, 260}, Case{4, 8, 200, 130}, Case{5, 3, 141, 77},
                          Case{0, 0, 9, 40}, Case{1, 2, 70, 5}}) {
        ImageView<const float> in = ImageView<const float>(dbig.view()).sub(c.x, c.y, c.w, c.h);
        ImageView<float> out = dout.view().sub(c.x, c.y, c.w, c.h);
        Image<float> host = clone(big.view().sub(c.x, c.y, c.w, c.h));
        const double range = value_range(host.view());
        for (Border b :
             {Border::Mirror, Border::Reflect, Border::Wrap, Border::Nearest, Border::Constant})
            for (int fir = 0; fir <= 31; fir += (fir == 0 ? 3 : 2)) {
                if (fir == 0 && std::min(c.w, c.h) < 2 * bspline::kMaxFirRadius + 2) continue;
                Image<float> want = run(host.view(), opts(b, fir), Backend::Reference);
                const PrefilterVariant v =
                    fir ? PrefilterVariant::FirFused : PrefilterVariant::IirFused;
                using K = cuda::FusedKernel;
                for (K k : {K::FirRec, K::Box}) {  // the box tiles: the exact filter only
                    if (k == K::Box && fir != 0) continue;
                    if (k == K::Box && std::min(c.w, c.h) < 32) {
                        expect_error(
                            [&] {
                                cuda::bspline_prefilter_forced(span_of(in), span_of(out),
                                                               opts(b, fir, v), k, 0, nullptr);
                            },
                            ErrorCode::InvalidArgument, "32 x 32 or more");
                        continue;
                    }
                    cuda::bspline_prefilter_forced(span_of(in), span_of(out), opts(b, fir, v), k, 0,
                                                   nullptr);
                    Image<float> got = clone(ImageView<const float>(out));
                    EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol * range))
                        << c.w << "x" << c.h << "+" << c.x << "+" << c.y << " " << to_string(b)
                        << " fir " << fir << " kernel " << static_cast<int>(k);
                    worst = std::max(worst, max_diff(got.view(), want.view()) / range);
                }
            }
    }
    std::printf("[   info   ] FirRec and box tiles: worst |diff| / range = %.3g\n", worst);
}
#endif

TEST(BsplineCuda, OneAxisMatchesReference) {
    UPRES_REQUIRE_GPU();
    Image<float> img = random_image<float>(131, 77, 2, 47, -0.25, 1.0);
    for (PrefilterAxes a : {PrefilterAxes::X, PrefilterAxes::Y})
        for (Border b : kBorders)
            for (int fir : {0, 15}) {
                const PrefilterOptions o = axes_opts(b, fir, a);
                Image<float> want = run(img.view(), o, Backend::Reference);
                Image<float> got = run(img.view(), o, Backend::Cuda);
                EXPECT_TRUE(images_near(got.view(), want.view(), kFloatTol * 1.25))
                    << to_string(a) << " " << to_string(b) << " fir " << fir;
                Image<float> d = clone(img.view(), Location::Device);  // in place on the device
                Context ctx;
                ctx.backend = Backend::Cuda;
                bspline_prefilter(d.view(), d.view(), o, ctx);
                Image<float> back = clone(d.view(), Location::Host);
                EXPECT_TRUE(images_near(back.view(), want.view(), kFloatTol * 1.25));
            }
}

TEST(BsplineCuda, DeviceErrors) {
    UPRES_REQUIRE_GPU();
    Image<float> a = random_image<float>(9, 7, 3, 4);
    a(6, 5, 2) = std::numeric_limits<float>::quiet_NaN();
    Image<float> d = clone(a.view(), Location::Device);
    Image<float> dout(9, 7, 3, Location::Device);
    test::expect_error([&] { bspline_prefilter(d.view(), dout.view()); },
                       ErrorCode::InvalidArgument, "pixel (x 6, y 5, channel 2)");
    Context ctx;
    ctx.backend = Backend::Cuda;
    test::expect_error([&] { bspline_prefilter(a.view(), a.view(), {}, ctx); },
                       ErrorCode::InvalidArgument, "pixel (x 6, y 5, channel 2) is NaN");
    Image<float> host(9, 7, 3);
    test::expect_error([&] { bspline_prefilter(d.view(), host.view()); },
                       ErrorCode::InvalidArgument, "same place");
    ctx.backend = Backend::Cpu;
    test::expect_error([&] { bspline_prefilter(d.view(), dout.view(), {}, ctx); },
                       ErrorCode::InvalidArgument, "device memory");
}

TEST(BsplineNoCuda, ForcedCudaIsUnavailableWithoutDevice) {
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present";
    Image<float> a = random_image<float>(4, 4, 1, 2), out(4, 4, 1);
    Context ctx;
    ctx.backend = Backend::Cuda;
    test::expect_error([&] { bspline_prefilter(a.view(), out.view(), {}, ctx); },
                       ErrorCode::BackendUnavailable, "bspline_prefilter");
}

}  // namespace
}  // namespace upres
