// upres metrics: golden (scikit-image), properties, Reference vs Cpu on random data and a real
// photo, sub-image views, shave, every error path.
#include <upres/error.hpp>
#include <upres/io.hpp>
#include <upres/metrics.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iostream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "ops/metrics/metrics_backends.hpp"
#include "ops/metrics/metrics_math.hpp"
#include "test_util.hpp"

using namespace upres;

namespace {

constexpr double kGoldenSsim = 1e-6;  // absolute
constexpr double kGoldenPsnr = 1e-6;  // dB
constexpr double kCpuVsRef = 1e-10;   // both metrics (PSNR in dB)

const Context kRef{Backend::Reference};
const Context kCpu{Backend::Cpu};

template <class T>
Image<T> load(const std::string& name) {
    AnyImage any = read_image(test::data_path("metrics/" + name + ".npy"));
    return std::move(any.as<T>());
}

struct GoldenCase {
    std::string name, pair;
    int shave = 0;
    bool on_y = true;
    double data_range = 0.0, psnr = 0.0, ssim = 0.0;
};

std::vector<GoldenCase> read_cases() {
    std::ifstream f(test::data_path("metrics/expected.csv"));
    EXPECT_TRUE(f.good()) << "cannot open metrics/expected.csv";
    std::vector<GoldenCase> out;
    std::string line;
    std::getline(f, line);  // header
    while (std::getline(f, line)) {
        if (line.empty()) continue;
        std::stringstream ss(line);
        std::string cell[7];
        for (auto& c : cell) std::getline(ss, c, ',');
        GoldenCase g;
        g.name = cell[0];
        g.pair = cell[1];
        g.shave = std::stoi(cell[2]);
        g.on_y = std::stoi(cell[3]) != 0;
        g.data_range = std::stod(cell[4]);
        g.psnr = std::stod(cell[5]);
        g.ssim = std::stod(cell[6]);
        out.push_back(g);
    }
    return out;
}

struct Both {
    double psnr, ssim;
};

template <class T>
Both run_pair(const std::string& pair, const MetricOptions& o, const Context& ctx) {
    const Image<T> a = load<T>(pair + "_a");
    const Image<T> b = load<T>(pair + "_b");
    return {psnr(a.view(), b.view(), o, ctx), ssim(a.view(), b.view(), o, ctx)};
}

Both run_case(const GoldenCase& g, const Context& ctx) {
    MetricOptions o;
    o.shave = g.shave;
    o.on_y = g.on_y;
    o.data_range = g.data_range;
    AnyImage probe = read_image(test::data_path("metrics/" + g.pair + "_a.npy"));
    switch (probe.pixel_type()) {
        case PixelType::U8:
            return run_pair<std::uint8_t>(g.pair, o, ctx);
        case PixelType::U16:
            return run_pair<std::uint16_t>(g.pair, o, ctx);
        case PixelType::F32:
            return run_pair<float>(g.pair, o, ctx);
    }
    return {0, 0};
}

}  // namespace

// ------------------------------------------------------------------------------ golden

TEST(MetricsGolden, MatchesScikitImage) {
    const auto cases = read_cases();
    ASSERT_GE(cases.size(), 10u);
    for (const Context& ctx : {kRef, kCpu}) {
        double worst_psnr = 0.0, worst_ssim = 0.0;
        for (const auto& g : cases) {
            SCOPED_TRACE(g.name + " " + to_string(ctx.backend));
            const Both r = run_case(g, ctx);
            EXPECT_NEAR(r.psnr, g.psnr, kGoldenPsnr);
            EXPECT_NEAR(r.ssim, g.ssim, kGoldenSsim);
            worst_psnr = std::max(worst_psnr, std::abs(r.psnr - g.psnr));
            worst_ssim = std::max(worst_ssim, std::abs(r.ssim - g.ssim));
        }
        std::cout << "[ measured ] " << to_string(ctx.backend) << " vs scikit-image over "
                  << cases.size() << " cases: max |psnr diff| " << worst_psnr
                  << " dB, max |ssim diff| " << worst_ssim << "\n";
    }
}

TEST(MetricsGolden, SsimMapWithReflectBorder) {
    const auto a8 = load<std::uint8_t>("gray_u8_a");
    const auto b8 = load<std::uint8_t>("gray_u8_b");
    const auto want = load<float>("gray_u8_ssim_map");
    std::vector<double> a(a8.pixel_count()), b(a8.pixel_count());
    for (std::size_t i = 0; i < a.size(); ++i) a[i] = a8.data()[i], b[i] = b8.data()[i];
    const int w = a8.width(), h = a8.height();
    const Plane pa{a.data(), w, h, 1, w}, pb{b.data(), w, h, 1, w};
    std::vector<double> mr(a.size()), mc(a.size());
    ref::ssim_map(pa, pb, 255.0, {mr.data(), w, h, 1, w});
    cpu::ssim_map(pa, pb, 255.0, {mc.data(), w, h, 1, w}, 0);
    double worst_golden = 0.0, worst_cpu = 0.0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        worst_golden = std::max(worst_golden, std::abs(mr[i] - double(want.data()[i])));
        worst_cpu = std::max(worst_cpu, std::abs(mr[i] - mc[i]));
    }
    // The golden map is stored as float32: 1e-6 covers its rounding.
    EXPECT_LE(worst_golden, 1e-6);
    EXPECT_LE(worst_cpu, kCpuVsRef);
    std::cout << "[ measured ] SSIM map (borders included): reference vs scikit-image "
              << worst_golden << ", cpu vs reference " << worst_cpu << "\n";
}

// ------------------------------------------------------------------------------ properties

TEST(MetricsProperties, IdenticalImages) {
    const auto a = test::random_image<std::uint8_t>(40, 30, 3, 101);
    for (const Context& ctx : {kRef, kCpu}) {
        EXPECT_EQ(psnr(a.view(), a.view(), {}, ctx), std::numeric_limits<double>::infinity());
        EXPECT_EQ(ssim(a.view(), a.view(), {}, ctx), 1.0);
        EXPECT_EQ(ssim(a.view(), a.view(), {.on_y = false}, ctx), 1.0);
    }
}

TEST(MetricsProperties, KnownPsnrAndSymmetry) {
    Image<std::uint8_t> a(16, 16, 1), b(16, 16, 1);
    for (int i = 0; i < 256; ++i) a.data()[i] = 100, b.data()[i] = 110;  // MSE 100
    EXPECT_DOUBLE_EQ(psnr(a.view(), b.view()), 10.0 * std::log10(255.0 * 255.0 / 100.0));
    const auto x = test::random_image<float>(33, 21, 1, 111);
    const auto y = test::random_image<float>(33, 21, 1, 112);
    EXPECT_DOUBLE_EQ(ssim(x.view(), y.view(), {}, kRef), ssim(y.view(), x.view(), {}, kRef));
    EXPECT_DOUBLE_EQ(psnr(x.view(), y.view(), {}, kCpu), psnr(y.view(), x.view(), {}, kCpu));
}

TEST(MetricsProperties, DataRangeDefaults) {
    const auto a = test::random_image<float>(20, 20, 1, 121);
    const auto b = test::random_image<float>(20, 20, 1, 122);
    EXPECT_EQ(psnr(a.view(), b.view()), psnr(a.view(), b.view(), {.data_range = 1.0}));
    EXPECT_EQ(ssim(a.view(), b.view()), ssim(a.view(), b.view(), {.data_range = 1.0}));
    const auto c = test::random_image<std::uint16_t>(20, 20, 1, 123);
    const auto d = test::random_image<std::uint16_t>(20, 20, 1, 124);
    EXPECT_EQ(psnr(c.view(), d.view()), psnr(c.view(), d.view(), {.data_range = 65535.0}));
    // On Y the range is 255 whatever the type.
    const auto e = test::random_image<std::uint16_t>(20, 20, 3, 125);
    const auto f = test::random_image<std::uint16_t>(20, 20, 3, 126);
    EXPECT_EQ(ssim(e.view(), f.view()), ssim(e.view(), f.view(), {.data_range = 255.0}));
    // 1-channel images ignore on_y.
    EXPECT_EQ(psnr(c.view(), d.view(), {.on_y = false}), psnr(c.view(), d.view()));
}

TEST(MetricsProperties, ShaveEqualsSubImage) {
    const auto a = test::random_image<std::uint8_t>(57, 41, 3, 131);
    const auto b = test::random_image<std::uint8_t>(57, 41, 3, 132);
    for (const Context& ctx : {kRef, kCpu})
        for (bool on_y : {true, false}) {
            const MetricOptions o{.shave = 4, .on_y = on_y};
            const MetricOptions plain{.on_y = on_y};
            const auto sa = a.view().sub(4, 4, 49, 33), sb = b.view().sub(4, 4, 49, 33);
            EXPECT_EQ(psnr(a.view(), b.view(), o, ctx), psnr(sa, sb, plain, ctx));
            EXPECT_EQ(ssim(a.view(), b.view(), o, ctx), ssim(sa, sb, plain, ctx));
            EXPECT_EQ(ssim(sa, sb, plain, ctx),
                      ssim(clone(sa).view(), clone(sb).view(), plain, ctx));
        }
}

TEST(MetricsProperties, Deterministic) {
    const auto a = test::random_image<float>(203, 77, 1, 141);
    const auto b = test::random_image<float>(203, 77, 1, 142);
    const double s = ssim(a.view(), b.view(), {}, kCpu);
    for (int threads : {1, 2, 3}) {
        const Context ctx{Backend::Cpu, threads};
        EXPECT_EQ(ssim(a.view(), b.view(), {}, ctx), s) << threads << " threads";
    }
}

// ------------------------------------------------------------------------------ differential

template <class T>
double check_ref_vs_cpu(const ImageView<const T>& a, const ImageView<const T>& b,
                        const MetricOptions& o, const std::string& what) {
    SCOPED_TRACE(what);
    const double pr = psnr(a, b, o, kRef), pc = psnr(a, b, o, kCpu);
    const double sr = ssim(a, b, o, kRef), sc = ssim(a, b, o, kCpu);
    EXPECT_NEAR(pc, pr, kCpuVsRef);
    EXPECT_NEAR(sc, sr, kCpuVsRef);
    EXPECT_TRUE(std::isfinite(pr) && sr > -1.0 && sr < 1.0) << pr << " " << sr;
    return std::max(std::abs(pc - pr), std::abs(sc - sr));
}

TEST(MetricsDifferential, CpuVsReferenceRandom) {
    double worst = 0.0;
    auto pair = [&](auto tag, int w, int h, int c, std::uint32_t seed, MetricOptions o) {
        using T = decltype(tag);
        const auto a = test::random_image<T>(w, h, c, seed);
        const auto b = test::random_image<T>(w, h, c, seed + 1);
        worst = std::max(worst, check_ref_vs_cpu<T>(a.view(), b.view(), o,
                                                    std::to_string(w) + "x" + std::to_string(h) +
                                                        "x" + std::to_string(c)));
    };
    pair(std::uint8_t{}, 11, 11, 1, 201, {});
    pair(std::uint8_t{}, 12, 40, 3, 203, {});
    pair(std::uint16_t{}, 257, 131, 3, 205, {.on_y = false});
    pair(std::uint16_t{}, 37, 19, 4, 207, {.shave = 2});
    pair(float{}, 131, 57, 1, 209, {.data_range = 2.5});
    pair(float{}, 23, 29, 3, 211, {.on_y = false});
    std::cout << "[ measured ] cpu vs reference, random data: max |diff| " << worst << "\n";
}

TEST(MetricsDifferential, CpuVsReferencePhoto) {
    AnyImage photo = read_image(test::sample_path("chelsea.png"));
    ASSERT_TRUE(photo.holds<std::uint8_t>());
    const auto& a = photo.as<std::uint8_t>();
    // b: a shifted by one pixel and darkened a little (a realistic, non-trivial degradation)
    Image<std::uint8_t> b(a.width(), a.height(), a.channels());
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            for (int c = 0; c < a.channels(); ++c)
                b(x, y, c) =
                    static_cast<std::uint8_t>(a(std::min(x + 1, a.width() - 1), y, c) * 0.95);
    double worst = check_ref_vs_cpu<std::uint8_t>(a.view(), b.view(), {.shave = 4}, "photo y");
    const ImageView<const std::uint8_t> sa = a.view().sub(50, 40, 200, 150);
    const ImageView<const std::uint8_t> sb = b.view().sub(50, 40, 200, 150);
    worst =
        std::max(worst, check_ref_vs_cpu<std::uint8_t>(sa, sb, {.on_y = false}, "photo rgb view"));
    std::cout << "[ measured ] cpu vs reference, chelsea.png: max |diff| " << worst << "\n";
}

// ------------------------------------------------------------------------------ errors

TEST(MetricsErrors, EmptyAndMismatch) {
    Image<std::uint8_t> a(16, 16, 1), b(16, 15, 1), c3(16, 16, 3), empty;
    test::expect_error([&] { (void)psnr(empty.view(), a.view()); }, ErrorCode::InvalidArgument,
                       "psnr: image a is empty");
    test::expect_error([&] { (void)ssim(a.view(), empty.view()); }, ErrorCode::InvalidArgument,
                       "ssim: image b is empty");
    test::expect_error([&] { (void)psnr(a.view(), b.view()); }, ErrorCode::InvalidArgument,
                       "a is 16 x 16 x 1 but b is 16 x 15 x 1");
    test::expect_error([&] { (void)ssim(a.view(), c3.view()); }, ErrorCode::InvalidArgument,
                       "a is 16 x 16 x 1 but b is 16 x 16 x 3");
}

TEST(MetricsErrors, BadOptions) {
    const auto a = test::random_image<float>(16, 16, 1, 301);
    test::expect_error([&] { (void)psnr(a.view(), a.view(), {.shave = -1}); },
                       ErrorCode::InvalidArgument, "shave must be >= 0 (got -1)");
    test::expect_error([&] { (void)psnr(a.view(), a.view(), {.data_range = -2.0}); },
                       ErrorCode::InvalidArgument, "data_range must be a finite number > 0");
    test::expect_error(
        [&] {
            (void)ssim(a.view(), a.view(),
                       {.data_range = std::numeric_limits<double>::quiet_NaN()});
        },
        ErrorCode::InvalidArgument, "(got nan)");
    test::expect_error(
        [&] {
            (void)psnr(a.view(), a.view(), {.data_range = std::numeric_limits<double>::infinity()});
        },
        ErrorCode::InvalidArgument, "(got inf)");
}

TEST(MetricsErrors, TooSmall) {
    const auto a = test::random_image<std::uint8_t>(14, 20, 1, 311);
    test::expect_error([&] { (void)ssim(a.view(), a.view(), {.shave = 2}); },
                       ErrorCode::InvalidArgument, "10 x 16 after shaving 2 pixels per side");
    test::expect_error([&] { (void)ssim(a.view(), a.view(), {.shave = 2}); },
                       ErrorCode::InvalidArgument, "at least 11 x 11");
    const auto small = test::random_image<std::uint8_t>(10, 12, 3, 312);
    test::expect_error([&] { (void)ssim(small.view(), small.view()); }, ErrorCode::InvalidArgument,
                       "the images are 10 x 12");
    test::expect_error([&] { (void)psnr(a.view(), a.view(), {.shave = 7}); },
                       ErrorCode::InvalidArgument, "0 x 6 after shaving 7 pixels per side");
    test::expect_error([&] { (void)psnr(a.view(), a.view(), {.shave = 7}); },
                       ErrorCode::InvalidArgument, "nothing is left to compare");
    // PSNR works on tiny images
    EXPECT_TRUE(
        std::isfinite(psnr(small.view(), test::random_image<std::uint8_t>(10, 12, 3, 9).view())));
}

TEST(MetricsErrors, NonFinitePixels) {
    auto a = test::random_image<float>(16, 16, 3, 321);
    auto b = test::random_image<float>(16, 16, 3, 322);
    a(3, 2, 1) = std::numeric_limits<float>::quiet_NaN();
    test::expect_error([&] { (void)psnr(a.view(), b.view()); }, ErrorCode::InvalidArgument,
                       "image a has a non-finite value (nan) at (x 3, y 2, c 1)");
    a(3, 2, 1) = 0.5f;
    b(15, 14, 0) = -std::numeric_limits<float>::infinity();
    test::expect_error([&] { (void)ssim(a.view(), b.view(), {.on_y = false}, kRef); },
                       ErrorCode::InvalidArgument,
                       "image b has a non-finite value (-inf) at (x 15, y 14");
    // Values shaved away are not looked at.
    b(15, 14, 0) = 0.25f;
    b(0, 0, 2) = std::numeric_limits<float>::infinity();
    EXPECT_TRUE(std::isfinite(psnr(a.view(), b.view(), {.shave = 1})));
}

TEST(MetricsErrors, NoCudaBackend) {
    const auto a = test::random_image<std::uint8_t>(16, 16, 1, 331);
    test::expect_error([&] { (void)psnr(a.view(), a.view(), {}, Context{Backend::Cuda}); },
                       ErrorCode::BackendUnavailable, "psnr");
    test::expect_error([&] { (void)ssim(a.view(), a.view(), {}, Context{Backend::Cuda}); },
                       ErrorCode::BackendUnavailable, "cuda");
}
