// upres::warp: golden (scipy.ndimage, OpenCV Keys cubic, MATLAB imresize re-implementation:
// tests/data/warp, tools/golden/gen_warp.py), properties (identity transforms, rotation by
// 0/360, zoom x1, the paper's 36 x 10 degree rotation test), differential (cpu vs reference on
// random data and a real photo, u8/u16/f32, 1-4 channels, awkward sizes, sub-image views) and
// every error path. Tolerances: docs/ops/warp.md.
#include <upres/io.hpp>
#include <upres/warp.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/warp/warp_math.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

using test::images_near;
using test::random_image;

const Border kBorders[] = {Border::Mirror, Border::Reflect, Border::Nearest, Border::Wrap,
                           Border::Constant};
const Interp kInterps[] = {Interp::Nearest, Interp::Linear, Interp::Cubic, Interp::BSpline};

// f(o) for the options of every interpolation and border, with the given fill value.
template <class F>
void for_each_interp_border(float fill, F&& f) {
    for (Interp i : kInterps)
        for (Border b : kBorders) {
            WarpOptions o;
            o.interp = i;
            o.border = b;
            o.fill = fill;
            f(o);
        }
}

// Reference vs outside oracles (values in [0, 1], float32 inputs and goldens): the reference
// computes in double from float32 B-spline coefficients.
constexpr double kGoldenTol = 2e-5;
// Cpu (float) vs reference (double), float images with values in [0, 1].
constexpr double kCpuTol = 2e-5;

Image<float> load_npy(const std::string& name) {
    AnyImage a = read_image(test::data_path("warp/" + name + ".npy"));
    return std::move(a.as<float>());
}

std::vector<double> parse_list(const std::string& s) {
    std::vector<double> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) v.push_back(std::stod(item));
    return v;
}

// threads 0: all cores (the differential tests); the property tests use one thread (many small
// calls: OpenMP barriers on busy CI cores cost more than the work).
template <class T>
Image<T> run(ImageView<const T> src, int w, int h, const Transform& t, const WarpOptions& o,
             Backend b, int threads = 0) {
    Image<T> out(w, h, src.channels());
    Context ctx;
    ctx.backend = b;
    ctx.threads = threads;
    warp(src, out.view(), t, o, ctx);
    return out;
}

// ---------------------------------------------------------------- golden
struct GoldenCase {
    std::string name, kind, interp, border, params, input;
    float fill = 0;
    double cubic_a = -0.5;
    bool antialias = false;
};

std::vector<GoldenCase> load_cases() {
    std::ifstream f(test::data_path("warp/cases.tsv"));
    std::vector<GoldenCase> cases;
    std::string line;
    while (std::getline(f, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::stringstream ss(line);
        GoldenCase c;
        std::string fill, a, aa;
        std::getline(ss, c.name, '\t');
        std::getline(ss, c.kind, '\t');
        std::getline(ss, c.interp, '\t');
        std::getline(ss, c.border, '\t');
        std::getline(ss, fill, '\t');
        std::getline(ss, a, '\t');
        std::getline(ss, aa, '\t');
        std::getline(ss, c.params, '\t');
        std::getline(ss, c.input, '\t');
        c.fill = std::stof(fill);
        c.cubic_a = std::stod(a);
        c.antialias = aa == "1";
        cases.push_back(c);
    }
    return cases;
}

void check_golden(Backend backend, double tol) {
    const std::vector<GoldenCase> cases = load_cases();
    ASSERT_EQ(cases.size(), 100u) << "tests/data/warp/cases.tsv: regenerate with gen_warp.py";
    std::map<std::string, Image<float>> inputs;
    int checked = 0;
    for (const GoldenCase& c : cases) {
        SCOPED_TRACE(c.name);
        if (!inputs.count(c.input)) inputs[c.input] = load_npy(c.input);
        const Image<float>& in = inputs[c.input];
        const Image<float> want = load_npy(c.name);
        WarpOptions o;
        o.interp = parse_interp(c.interp);
        o.border = parse_border(c.border);
        o.fill = c.fill;
        o.cubic_a = c.cubic_a;
        o.antialias = c.antialias;
        Image<float> field;
        Transform t;
        if (c.kind == "rotate") {
            t = Transform::make_rotation(parse_list(c.params).at(0), in.width(), in.height());
        } else if (c.kind == "zoom") {
            t = Transform::make_resize();
        } else if (c.kind == "affine") {
            const auto p = parse_list(c.params);
            Affine a;
            for (int i = 0; i < 6; ++i) a.m[i] = p.at(i);
            t = Transform::make_affine(a);
        } else if (c.kind == "homography") {
            const auto p = parse_list(c.params);
            Homography hm;
            for (int i = 0; i < 9; ++i) hm.h[i] = p.at(i);
            t = Transform::make_perspective(hm);
        } else if (c.kind == "remap" || c.kind == "flow") {
            field = load_npy(c.params);
            t = c.kind == "remap" ? Transform::make_remap(field.view())
                                  : Transform::make_flow(field.view());
        } else {
            FAIL() << "unknown kind " << c.kind;
        }
        const Image<float> got = run<float>(in.view(), want.width(), want.height(), t, o, backend);
        EXPECT_TRUE(images_near(got.view(), want.view(), tol));
        ++checked;
    }
    EXPECT_EQ(checked, 100);
}

TEST(WarpGolden, ReferenceMatchesScipyOpenCvMatlab) {
    check_golden(Backend::Reference, kGoldenTol);
}
TEST(WarpGolden, CpuMatchesScipyOpenCvMatlab) { check_golden(Backend::Cpu, kGoldenTol + kCpuTol); }

// ---------------------------------------------------------------- properties
template <class T>
void expect_identity(const Transform& t, Interp interp, Border border, double tol) {
    const Image<T> src = random_image<T>(37, 23, 3, 11);
    for (Backend b : {Backend::Reference, Backend::Cpu}) {
        WarpOptions o;
        o.interp = interp;
        o.border = border;
        const Image<T> out = run<T>(src.view(), 37, 23, t, o, b, 1);
        EXPECT_TRUE(images_near(out.view(), src.view(), tol))
            << to_string(interp) << " " << to_string(border) << " " << to_string(b);
    }
}

TEST(WarpProperties, IdentityTransformsReproduceTheImage) {
    Image<float> zero_flow(37, 23, 2), id_map(37, 23, 2);
    for (int y = 0; y < 23; ++y)
        for (int x = 0; x < 37; ++x) {
            zero_flow(x, y, 0) = zero_flow(x, y, 1) = 0.0f;
            id_map(x, y, 0) = static_cast<float>(x);
            id_map(x, y, 1) = static_cast<float>(y);
        }
    const Transform ts[] = {Transform::make_affine(Affine{}),
                            Transform::make_rotation(0, 37, 23),
                            Transform::make_rotation(360, 37, 23),
                            Transform::make_rotation(-720, 37, 23),
                            Transform::make_resize(),
                            Transform::make_perspective(Homography{}),
                            Transform::make_flow(zero_flow.view()),
                            Transform::make_remap(id_map.view())};
    for (const Transform& t : ts)
        for (Interp i : kInterps)
            for (Border b : kBorders) {
                // Exact except the B-spline on floats (prefilter + interpolation round trip).
                expect_identity<float>(t, i, b, i == Interp::BSpline ? 2e-6 : 0.0);
                expect_identity<std::uint8_t>(t, i, b, 0.0);
                expect_identity<std::uint16_t>(t, i, b, 0.0);
            }
}

TEST(WarpProperties, RotationHelperMatchesScipyConvention) {
    // rotate(img, 90, reshape=False) on a square image: output (x, y) samples input
    // (x_c - (y - y_c), y_c + (x - x_c)).
    const Affine a = rotation(90, 5, 5);
    EXPECT_EQ(a.m[0], 0.0);
    EXPECT_EQ(a.m[1], -1.0);
    EXPECT_EQ(a.m[2], 4.0);
    EXPECT_EQ(a.m[3], 1.0);
    EXPECT_EQ(a.m[4], 0.0);
    EXPECT_EQ(a.m[5], 0.0);
    const Affine r = rotation(360 + 30, 8, 6), q = rotation(30, 8, 6);
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(r.m[i], q.m[i], 1e-12);
}

TEST(WarpProperties, FourQuarterTurnsAreExact) {
    const Image<float> src = random_image<float>(15, 15, 1, 3);
    Image<float> a = clone(src.view());
    for (int k = 0; k < 4; ++k) {
        WarpOptions o;
        o.interp = Interp::Linear;
        Image<float> b =
            run<float>(a.view(), 15, 15, Transform::make_rotation(90, 15, 15), o, Backend::Cpu);
        a = std::move(b);
    }
    EXPECT_TRUE(images_near(a.view(), src.view(), 0.0));
}

// The paper's accuracy experiment (Champagnat & Le Sant, Fig. 2): 36 rotations by 10 degrees,
// RMS error against the original on the centre disc. Cubic B-spline (IIR) beats Keys and
// linear; FIR15 is within 0.1 grey level of the IIR; FIR7 is visibly worse than FIR15.
TEST(WarpProperties, ThirtySixRotationsAccuracy) {
    const AnyImage photo = read_image(test::sample_path("baboon.jpg"));
    Image<float> gray(128, 128, 1);
    {
        const Image<float> f = photo.to<float>();
        for (int y = 0; y < 128; ++y)
            for (int x = 0; x < 128; ++x) {
                double s = 0;
                for (int c = 0; c < f.channels(); ++c) s += f(x + 200, y + 200, c);
                gray(x, y) = static_cast<float>(255.0 * s / f.channels());
            }
    }
    auto rms_after = [&](Interp interp, int fir) {
        WarpOptions o;
        o.interp = interp;
        o.prefilter = fir;
        Image<float> a = clone(gray.view());
        const Transform t = Transform::make_rotation(10, 128, 128);
        for (int k = 0; k < 36; ++k) a = run<float>(a.view(), 128, 128, t, o, Backend::Cpu, 1);
        double se = 0;
        int n = 0;
        for (int y = 0; y < 128; ++y)
            for (int x = 0; x < 128; ++x)
                if ((x - 63.5) * (x - 63.5) + (y - 63.5) * (y - 63.5) < 40 * 40) {
                    const double d = a(x, y) - gray(x, y);
                    se += d * d;
                    ++n;
                }
        return std::sqrt(se / n);
    };
    const double iir = rms_after(Interp::BSpline, 0), fir15 = rms_after(Interp::BSpline, 15);
    const double fir7 = rms_after(Interp::BSpline, 7), keys = rms_after(Interp::Cubic, 0);
    const double lin = rms_after(Interp::Linear, 0);
    RecordProperty("rms_iir", std::to_string(iir));
    EXPECT_LT(iir, keys);
    EXPECT_LT(keys, lin);
    EXPECT_NEAR(fir15, iir, 0.1);
    EXPECT_GT(std::abs(fir7 - iir), std::abs(fir15 - iir));
    std::printf(
        "36 x 10 deg RMS (grey levels): bspline iir %.3f fir15 %.3f fir7 %.3f keys %.3f "
        "linear %.3f\n",
        iir, fir15, fir7, keys, lin);
}

// ---------------------------------------------------------------- differential
struct Shape {
    int w, h, ow, oh;
};

template <class T>
double type_tol() {
    return std::is_same_v<T, float> ? kCpuTol : 1.0;  // integers: one rounding step
}

template <class T>
void cpu_vs_ref(ImageView<const T> src, int ow, int oh, const Transform& t, const WarpOptions& o,
                const std::string& what) {
    const Image<T> r = run<T>(src, ow, oh, t, o, Backend::Reference);
    const Image<T> c = run<T>(src, ow, oh, t, o, Backend::Cpu);
    EXPECT_TRUE(images_near(c.view(), r.view(), type_tol<T>()))
        << what << " " << to_string(o.interp) << " " << to_string(o.border);
}

// Every transform kind for one source, output ow x oh.
template <class T>
void all_transforms(ImageView<const T> src, int ow, int oh, std::uint32_t seed) {
    Image<float> flow = random_image<float>(ow, oh, 2, seed, -2.5, 2.5);
    Image<float> map =
        random_image<float>(ow, oh, 2, seed + 1, -3.0, std::max(src.width(), src.height()) + 3.0);
    Affine af;
    const double m[6] = {0.83, 0.31, -1.4, -0.27, 1.12, 0.6};
    for (int i = 0; i < 6; ++i) af.m[i] = m[i];
    Homography hm;
    const double h[9] = {1.02, 0.1, -0.8, -0.05, 0.97, 1.1, 0.003, -0.002, 1.0};
    for (int i = 0; i < 9; ++i) hm.h[i] = h[i];
    const std::pair<Transform, const char*> ts[] = {
        {Transform::make_rotation(23.5, ow, oh), "rotate"},
        {Transform::make_affine(af), "affine"},
        {Transform::make_perspective(hm), "perspective"},
        {Transform::make_resize(), "resize"},
        {Transform::make_remap(map.view()), "remap"},
        {Transform::make_flow(flow.view()), "flow"}};
    for (const auto& [t, name] : ts)
        for_each_interp_border(
            std::is_same_v<T, float> ? 0.75f : 100.0f,
            [&](const WarpOptions& o) { cpu_vs_ref<T>(src, ow, oh, t, o, name); });
}

// bspline_weights6 (the CUDA fused kernel's form: weights times 6, w2 by symmetry) against
// interp_weights' B-spline weights, in float, on a fine grid of fractions including 0 and 1.
TEST(WarpProperties, ScaledBsplineWeightsMatchTheReferenceForm) {
    double worst = 0;
    for (int i = 0; i <= 4096; ++i) {
        const float t = static_cast<float>(i) / 4096.0f;
        float w[4], w6[4];
        interp_weights<float>(t, Interp::BSpline, 0.0f, w);
        bspline_weights6<float>(t, w6);
        for (int k = 0; k < 4; ++k) worst = std::max(worst, std::abs(w6[k] / 6.0 - w[k]));
    }
    EXPECT_LT(worst, 5e-7);
}

// interp_weights' Keys weights (cubic_weight_poly's polynomials, one piece per tap for t in
// [0, 1]) are Keys' two-piece kernel at 1 + t, t, 1 - t, 2 - t: in double on a fine grid of
// fractions including 0 and 1, for the allowed range of a; they also sum to 1.
TEST(WarpProperties, KeysWeightsAreTheKernelAtTheTaps) {
    double worst = 0, worst_sum = 0;
    for (double a : {-0.5, -0.75, -1.0, -3.0, 0.0, -0.1234})
        for (int i = 0; i <= 4096; ++i) {
            const double t = i / 4096.0;
            double w[4];
            interp_weights<double>(t, Interp::Cubic, a, w);
            const double k[4] = {keys_kernel(1.0 + t, a), keys_kernel(t, a),
                                 keys_kernel(1.0 - t, a), keys_kernel(2.0 - t, a)};
            for (int j = 0; j < 4; ++j) worst = std::max(worst, std::abs(w[j] - k[j]));
            worst_sum = std::max(worst_sum, std::abs(w[0] + w[1] + w[2] + w[3] - 1.0));
        }
    EXPECT_LT(worst, 1e-14);
    EXPECT_LT(worst_sum, 1e-14);
}

TEST(WarpDifferential, CpuMatchesReferenceOnRandomData) {
    const Shape shapes[] = {{1, 1, 3, 2}, {7, 3, 5, 9}, {23, 17, 31, 12}, {257, 131, 64, 45}};
    std::uint32_t seed = 100;
    for (const Shape& s : shapes)
        for (int ch = 1; ch <= 4; ++ch) {
            const bool big = s.w > 100;
            SCOPED_TRACE(std::to_string(s.w) + "x" + std::to_string(s.h) + "x" +
                         std::to_string(ch));
            if (!big || ch == 1) {
                const Image<float> f = random_image<float>(s.w, s.h, ch, ++seed);
                all_transforms<float>(f.view(), s.ow, s.oh, seed);
            }
            if (ch == 1 || ch == 3) {
                const Image<std::uint8_t> u8 = random_image<std::uint8_t>(s.w, s.h, ch, ++seed);
                all_transforms<std::uint8_t>(u8.view(), s.ow, s.oh, seed);
            }
            if (ch == 1 || (!big && (ch == 2 || ch == 4))) {
                const Image<std::uint16_t> u16 = random_image<std::uint16_t>(s.w, s.h, ch, ++seed);
                all_transforms<std::uint16_t>(u16.view(), s.ow, s.oh, seed);
            }
        }
}

TEST(WarpDifferential, SubImageViews) {
    Image<float> big = random_image<float>(60, 40, 3, 7);
    Image<float> out_big(50, 30, 3);
    for (int y = 0; y < 30; ++y)
        for (int x = 0; x < 150; ++x) out_big.view().row(y)[x] = -1.0f;
    const ImageView<const float> src = ImageView<const float>(big.view()).sub(5, 3, 41, 29);
    for (Interp i : kInterps) {
        WarpOptions o;
        o.interp = i;
        Context ctx;
        ctx.backend = Backend::Cpu;
        ImageView<float> dst = out_big.view().sub(4, 2, 33, 21);
        warp(src, dst, Transform::make_rotation(17, 33, 21), o, ctx);
        const Image<float> want = run<float>(
            clone(src).view(), 33, 21, Transform::make_rotation(17, 33, 21), o, Backend::Reference);
        EXPECT_TRUE(images_near(ImageView<const float>(dst), want.view(), kCpuTol));
        // Nothing outside the destination view was written.
        EXPECT_EQ(out_big(3, 2, 0), -1.0f);
        EXPECT_EQ(out_big(37, 22, 2), -1.0f);
        EXPECT_EQ(out_big(10, 1, 1), -1.0f);
        EXPECT_EQ(out_big(10, 23, 1), -1.0f);
    }
}

TEST(WarpDifferential, CpuMatchesReferenceOnPhoto) {
    const AnyImage photo = read_image(test::sample_path("baboon.jpg"));
    const Image<std::uint8_t>& rgb = photo.as<std::uint8_t>();
    const ImageView<const std::uint8_t> crop = rgb.view().sub(100, 120, 160, 120);
    const Image<float> f = [&] {
        Image<float> o(160, 120, 3);
        convert(crop, o.view());
        return o;
    }();
    for (Interp i : kInterps)
        for (Border b : {Border::Mirror, Border::Constant}) {
            WarpOptions o;
            o.interp = i;
            o.border = b;
            cpu_vs_ref<std::uint8_t>(crop, 150, 110, Transform::make_rotation(33, 150, 110), o,
                                     "photo rotate");
            cpu_vs_ref<float>(f.view(), 211, 173, Transform::make_resize(), o, "photo zoom");
            if (i == Interp::Linear || i == Interp::Cubic) {
                o.antialias = true;
                cpu_vs_ref<float>(f.view(), 61, 47, Transform::make_resize(), o,
                                  "photo antialiased down");
                cpu_vs_ref<std::uint8_t>(crop, 37, 90, Transform::make_resize(), o,
                                         "photo antialiased down");
            }
        }
}

// Remap and displacement-field warps (PIV window deformation, optical flow) of a real photo:
// the Cpu backend's 8-wide row kernels (warp_cpu_avx2.cpp, on AVX2 CPUs; the portable path
// under UPRES_CPU_BASELINE=1, CTest's *_baseline run) against the reference, on a smooth flow
// of a few pixels (most outputs interior, edges outside) and a remap field that also leaves the
// image; source and destination are sub-views, the output width 203 is not a multiple of 8;
// float and 8-bit images.
TEST(WarpDifferential, FieldWarpsOfAPhotoInSubViews) {
    const AnyImage photo = read_image(test::sample_path("baboon.jpg"));
    const Image<std::uint8_t>& rgb = photo.as<std::uint8_t>();
    Image<float> big(240, 200, 1);  // luma of a 240 x 200 crop, in [0, 1]
    for (int y = 0; y < 200; ++y)
        for (int x = 0; x < 240; ++x) {
            const std::uint8_t* px = rgb.view().row(y + 150) + 3 * (x + 130);
            big(x, y) = (0.299f * px[0] + 0.587f * px[1] + 0.114f * px[2]) / 255.0f;
        }
    const ImageView<const float> src = ImageView<const float>(big.view()).sub(9, 7, 221, 181);
    const int ow = 203, oh = 157;
    Image<float> flow(ow, oh, 2), map(ow, oh, 2);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
            flow(x, y, 0) =
                static_cast<float>(2.5 * std::sin(y / 9.0) + 1.5 * std::cos(x / 13.0) + 0.3);
            flow(x, y, 1) = static_cast<float>(2.0 * std::cos(x / 11.0) - 1.2 * std::sin(y / 7.0));
            map(x, y, 0) = static_cast<float>(1.12 * x - 0.2 * y + 3.0 * std::sin(y / 5.0) - 6.5);
            map(x, y, 1) = static_cast<float>(0.15 * x + 1.1 * y - 4.25);
        }
    const std::pair<Transform, const char*> ts[] = {{Transform::make_flow(flow.view()), "flow"},
                                                    {Transform::make_remap(map.view()), "remap"}};
    Image<float> out_big(ow + 11, oh + 6, 1);
    Image<std::uint8_t> out8_big(ow + 11, oh + 6, 1);
    for (const auto& [t, name] : ts)
        for (Interp i : kInterps)
            for (Border b : kBorders) {
                SCOPED_TRACE(std::string(name) + " " + to_string(i) + " " + to_string(b));
                WarpOptions o;
                o.interp = i;
                o.border = b;
                o.fill = 0.25f;
                Context ctx;
                ctx.backend = Backend::Cpu;
                for (int y = 0; y < oh + 6; ++y)
                    for (int x = 0; x < ow + 11; ++x) out_big(x, y) = -1.0f;
                const ImageView<float> dst = out_big.view().sub(5, 3, ow, oh);
                warp(src, dst, t, o, ctx);
                const Image<float> want = run<float>(src, ow, oh, t, o, Backend::Reference);
                EXPECT_TRUE(images_near(ImageView<const float>(dst), want.view(), kCpuTol));
                EXPECT_EQ(out_big(4, 3), -1.0f);
                EXPECT_EQ(out_big(5 + ow, 3 + oh - 1), -1.0f);
                EXPECT_EQ(out_big(5, 2), -1.0f);
                if (i != Interp::Nearest) {  // 8-bit images (B-spline: float coefficients)
                    Image<std::uint8_t> src8(221, 181, 1);
                    convert(src, src8.view());
                    const ImageView<std::uint8_t> dst8 = out8_big.view().sub(5, 3, ow, oh);
                    o.fill = 100.0f;
                    warp(ImageView<const std::uint8_t>(src8.view()), dst8, t, o, ctx);
                    const Image<std::uint8_t> want8 =
                        run<std::uint8_t>(src8.view(), ow, oh, t, o, Backend::Reference);
                    EXPECT_TRUE(
                        images_near(ImageView<const std::uint8_t>(dst8), want8.view(), 1.0));
                }
            }
}

// The field warps' float split (warp_cpu_avx2.cpp FieldMap::split: u = x + floor(dx) + pad and
// the fraction dx - floor(dx), for 8 pixels at a time) at its edge values: fractions that round
// to 1 (tiny negative displacements), signed zeros, integers, the largest float below 1,
// displacements near and beyond the int range, and runs of 8 pixels that straddle the source's
// edges; every interpolation and border, 1 and 3 channels, Remap and Flow, against the
// reference (the portable path under CTest's *.baseline run).
TEST(WarpDifferential, FieldSplitEdgeValues) {
    const int sw = 45, sh = 37, ow = 48, oh = 40;
    const Image<float> src1 = random_image<float>(sw, sh, 1, 91, 0.1, 1.0);
    const Image<float> src3 = random_image<float>(sw, sh, 3, 92, 0.1, 1.0);
    const float odd[] = {
        -1e-30f,         -0.0f,  0.0f,    1e-30f, -1.0f,   2.0f,        0.99999994f, -0.99999994f,
        -5.9604645e-08f, 3.0e9f, -3.0e9f, 2.1e9f, -2.1e9f, 16777216.5f, -2.5f,       40.75f};
    Image<float> flow(ow, oh, 2), map(ow, oh, 2);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
            // rows alternate: all 8 lanes one odd value (y % 3 == 0), mixed lanes, smooth
            const float a = odd[(x + 3 * y) % 16], b = odd[(2 * x + y) % 16];
            const bool rigid = y % 3 == 0, mixed = y % 3 == 1;
            const float dx = rigid ? odd[(x / 8 + y) % 16] : mixed ? a : 0.37f * (x % 5) - 0.7f;
            const float dy = rigid ? odd[(x / 8 + 2 * y) % 16] : mixed ? b : -0.21f * (y % 4);
            flow(x, y, 0) = std::fabs(dx) > 1e3f ? dx : dx * (y % 2 ? 1.0f : -1.0f);
            flow(x, y, 1) = dy;
            map(x, y, 0) = std::fabs(dx) > 1e3f ? dx : x + dx;
            map(x, y, 1) = std::fabs(dy) > 1e3f ? dy : y + dy;
        }
    const std::pair<Transform, const char*> ts[] = {{Transform::make_flow(flow.view()), "flow"},
                                                    {Transform::make_remap(map.view()), "remap"}};
    for (const auto& [t, name] : ts)
        for_each_interp_border(0.5f, [&](const WarpOptions& o) {
            cpu_vs_ref<float>(src1.view(), ow, oh, t, o, std::string(name) + " 1 channel");
            cpu_vs_ref<float>(src3.view(), ow, oh, t, o, std::string(name) + " 3 channels");
        });
}

// Nearest neighbour on the Cpu backend (warp_cpu_avx2.cpp nearest_row_avx2: coordinates, borders
// and offsets 8 at a time; the portable path under CTest's *.baseline run) is the reference's
// exactly, ties at half-integer coordinates included (they round up, as floor(u + 0.5)): every
// map kind, border and sample type, 1 to 4 channels, a source sub-view, an output 51 pixels
// wide (not a multiple of 8).
TEST(WarpDifferential, NearestMatchesReferenceExactly) {
    const int ow = 51, oh = 43;
    const Image<float> big = random_image<float>(52, 41, 1, 71, 0.1, 1.0);
    const ImageView<const float> f1 = ImageView<const float>(big.view()).sub(3, 2, 45, 37);
    const Image<std::uint8_t> u3 = random_image<std::uint8_t>(45, 37, 3, 72, 1.0, 255.0);
    const Image<std::uint16_t> s1 = random_image<std::uint16_t>(45, 37, 1, 73, 1.0, 65535.0);
    const Image<float> f4 = random_image<float>(45, 37, 4, 74, 0.1, 1.0);
    const Image<std::uint8_t> u2 = random_image<std::uint8_t>(45, 37, 2, 75, 1.0, 255.0);
    Affine half;  // u = x / 2 + 1, v = y / 2 - 2: half-integers on odd x, y
    const double hm[6] = {0.5, 0.0, 1.0, 0.0, 0.5, -2.0};
    for (int i = 0; i < 6; ++i) half.m[i] = hm[i];
    Homography hg;
    const double h[9] = {1.02, 0.1, -0.8, -0.05, 0.97, 1.1, 0.003, -0.002, 1.0};
    for (int i = 0; i < 9; ++i) hg.h[i] = h[i];
    Image<float> flow(ow, oh, 2), map(ow, oh, 2);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {  // displacements and coordinates in steps of 1/2
            flow(x, y, 0) = 0.5f * static_cast<float>((x * 3 + y) % 9 - 4);
            flow(x, y, 1) = 0.5f * static_cast<float>((x + 2 * y) % 7 - 3);
            map(x, y, 0) = 0.5f * static_cast<float>((x * 5 + y * 3) % 101) - 3.0f;
            map(x, y, 1) = 0.5f * static_cast<float>((x * 2 + y * 7) % 83) - 2.5f;
        }
    const std::pair<Transform, const char*> ts[] = {
        {Transform::make_affine(half), "half-pixel affine"},
        {Transform::make_rotation(30, ow, oh), "rotate 30"},
        {Transform::make_rotation(90, ow, oh), "rotate 90"},
        {Transform::make_perspective(hg), "perspective"},
        {Transform::make_flow(flow.view()), "flow"},
        {Transform::make_remap(map.view()), "remap"}};
    for (const auto& [t, name] : ts)
        for (Border b : kBorders) {
            SCOPED_TRACE(std::string(name) + " " + to_string(b));
            WarpOptions o;
            o.interp = Interp::Nearest;
            o.border = b;
            o.fill = 0.75f;
            auto same = [&](auto src) {
                using T = typename decltype(src)::value_type;
                const Image<T> r = run<T>(src, ow, oh, t, o, Backend::Reference);
                const Image<T> c = run<T>(src, ow, oh, t, o, Backend::Cpu);
                EXPECT_TRUE(images_near(c.view(), r.view(), 0.0)) << src.channels() << " channels";
            };
            same(f1);
            same(ImageView<const std::uint8_t>(u3.view()));
            same(ImageView<const std::uint16_t>(s1.view()));
            same(ImageView<const float>(f4.view()));
            same(ImageView<const std::uint8_t>(u2.view()));
        }
}

// Point warps of colour and 2-channel images (the 2- to 4-channel AVX2 rows of
// warp_cpu_avx2.cpp on AVX2 CPUs; the portable path under CTest's *.baseline run) against the
// reference: a crop of an RGB photo as a sub-view, an RGBA sub-view of it, whole 16-bit and
// float RGB and 16-bit 2-channel images (their last pixel ends the allocation: the 2- and
// 3-channel rows read 4 samples per pixel and must not read past it) and a float 2-channel
// sub-view; a rotation, a keystone homography and a displacement field; every
// interpolation and border; a destination sub-view 203 pixels wide (not a multiple of 8) whose
// surroundings stay untouched.
TEST(WarpDifferential, MultiChannelPointWarpsOfAPhotoInSubViews) {
    const AnyImage photo = read_image(test::sample_path("baboon.jpg"));
    const Image<std::uint8_t>& rgb = photo.as<std::uint8_t>();
    const int sw = 221, sh = 181, ow = 203, oh = 157;
    const ImageView<const std::uint8_t> src3 = rgb.view().sub(130, 150, sw, sh);
    Image<std::uint8_t> rgba(sw + 4, sh + 2, 4);
    Image<std::uint16_t> rgb16(sw, sh, 3);
    Image<float> rgbf(sw, sh, 3);
    Image<float> two(sw + 3, sh, 2);  // 2 channels (a displacement field's layout), a sub-view
    Image<std::uint16_t> two16(sw, sh, 2);  // and a whole image
    for (int y = 0; y < sh + 2; ++y)
        for (int x = 0; x < sw + 4; ++x)
            for (int c = 0; c < 4; ++c)
                rgba(x, y, c) = static_cast<std::uint8_t>(31 * c + 7 * x + 3 * y);
    for (int y = 0; y < sh; ++y)
        for (int x = 0; x < sw; ++x)
            for (int c = 0; c < 3; ++c) {
                const int v = src3.row(y)[3 * x + c];
                rgba(x + 2, y + 1, c) = static_cast<std::uint8_t>(v);
                rgb16(x, y, c) = static_cast<std::uint16_t>(257 * v + (x + y) % 7);
                rgbf(x, y, c) = static_cast<float>(v) / 255.0f;
                if (c < 2) {
                    two(x + 3, y, c) = rgbf(x, y, c);
                    two16(x, y, c) = rgb16(x, y, c);
                }
            }
    const ImageView<const std::uint8_t> src4 =
        ImageView<const std::uint8_t>(rgba.view()).sub(2, 1, sw, sh);
    Image<float> flow(ow, oh, 2);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x) {
            flow(x, y, 0) = static_cast<float>(2.5 * std::sin(y / 8.0) + 1.5 * std::cos(x / 12.0));
            flow(x, y, 1) = static_cast<float>(2.0 * std::cos(x / 10.0) - 1.2 * std::sin(y / 6.0));
        }
    const Affine r = rotation(17, ow, oh);
    Homography keystone;
    const double h[9] = {r.m[0], r.m[1], r.m[2], r.m[3], r.m[4], r.m[5], 4e-4, -3e-4, 1.0};
    for (int i = 0; i < 9; ++i) keystone.h[i] = h[i];
    keystone.h[8] = 1.0 - 4e-4 * 0.5 * (ow - 1) + 3e-4 * 0.5 * (oh - 1);  // w' = 1 at the centre
    const std::pair<Transform, const char*> ts[] = {
        {Transform::make_rotation(17, ow, oh), "rotate"},
        {Transform::make_perspective(keystone), "perspective"},
        {Transform::make_flow(flow.view()), "flow"}};
    auto check = [&](auto src, const WarpOptions& o) {
        using T = typename decltype(src)::value_type;
        const int ch = src.channels();
        const T sentinel = static_cast<T>(7);
        Image<T> big(ow + 11, oh + 6, ch);
        for (int y = 0; y < oh + 6; ++y)
            for (int x = 0; x < (ow + 11) * ch; ++x) big.view().row(y)[x] = sentinel;
        const ImageView<T> dst = big.view().sub(5, 3, ow, oh);
        for (const auto& [t, name] : ts) {
            SCOPED_TRACE(std::string(name) + " " + std::to_string(ch) + " channels " +
                         to_string(o.interp) + " " + to_string(o.border));
            Context ctx;
            ctx.backend = Backend::Cpu;
            warp(src, dst, t, o, ctx);
            const Image<T> want = run<T>(src, ow, oh, t, o, Backend::Reference);
            EXPECT_TRUE(images_near(ImageView<const T>(dst), want.view(), type_tol<T>()));
            EXPECT_EQ(big(4, 3, 0), sentinel);
            EXPECT_EQ(big(5 + ow, 3 + oh - 1, ch - 1), sentinel);
            EXPECT_EQ(big(5, 2, 0), sentinel);
            EXPECT_EQ(big(5 + ow - 1, 3 + oh, 0), sentinel);
        }
    };
    for (Interp i : kInterps)
        for (Border b : kBorders) {
            WarpOptions o;
            o.interp = i;
            o.border = b;
            o.fill = 100.0f;
            check(src3, o);
            check(src4, o);
            check(ImageView<const std::uint16_t>(rgb16.view()), o);
            check(ImageView<const std::uint16_t>(two16.view()), o);
            o.fill = 0.25f;
            check(ImageView<const float>(rgbf.view()), o);
            check(ImageView<const float>(two.view()).sub(3, 0, sw, sh), o);
        }
}

TEST(WarpDifferential, FirPrefilterAndKeysParameter) {
    const Image<float> f = random_image<float>(45, 33, 2, 77);
    for (int fir : {3, 7, 15, 31}) {
        WarpOptions o;
        o.prefilter = fir;
        cpu_vs_ref<float>(f.view(), 40, 30, Transform::make_rotation(12, 40, 30), o, "fir");
    }
    for (double a : {-0.75, -0.5, -1.0}) {
        WarpOptions o;
        o.interp = Interp::Cubic;
        o.cubic_a = a;
        cpu_vs_ref<float>(f.view(), 40, 30, Transform::make_rotation(12, 40, 30), o, "keys");
    }
}

// prefiltered (scipy prefilter=False): warping the prefilter's coefficients with prefiltered
// set is the ordinary B-spline warp of the image (every border but Nearest, which pads the
// image before its prefilter where prefiltered clamps the coefficients, as scipy does), on
// every host backend; integer sources are refused.
TEST(WarpDifferential, PrefilteredCoefficientsGiveTheSameWarp) {
    const Image<float> f = random_image<float>(45, 33, 2, 79);
    const Transform t = Transform::make_rotation(17, 45, 33);
    for (Border b : kBorders) {
        if (b == Border::Nearest) continue;
        for (Backend be : {Backend::Reference, Backend::Cpu}) {
            Context ctx;
            ctx.backend = be;
            PrefilterOptions po;
            po.border = tap_border(b);
            Image<float> c(45, 33, 2);
            bspline_prefilter(f.view(), c.view(), po, ctx);
            WarpOptions o;
            o.border = b;
            Image<float> want(40, 30, 2), got(40, 30, 2);
            warp(f.view(), want.view(), t, o, ctx);
            o.prefiltered = true;
            warp(c.view(), got.view(), t, o, ctx);
            EXPECT_TRUE(images_near(got.view(), want.view(), kCpuTol))
                << to_string(b) << " " << to_string(be);
        }
    }
    // Nearest: scipy clamps the taps, not the coordinate (scipy 1.10 map_coordinates of the
    // coefficients 1 2 4 8 16: 1.0 at x = -3, 49/48 at x = -0.5, 16 at x = 7).
    Image<float> c(5, 1, 1);
    for (int x = 0; x < 5; ++x) c(x, 0) = static_cast<float>(1 << x);
    WarpOptions on;
    on.border = Border::Nearest;
    on.prefiltered = true;
    for (auto [u, want] : {std::pair{-3.0, 1.0}, {-0.5, 49.0 / 48}, {0.5, 1.5416667}, {7.0, 16.0}})
        for (Backend be : {Backend::Reference, Backend::Cpu}) {
            Affine a;
            a.m[2] = u - 1;  // output x = 1 samples u
            Image<float> out(3, 1, 1);
            Context ctx;
            ctx.backend = be;
            warp(c.view(), out.view(), Transform::make_affine(a), on, ctx);
            EXPECT_NEAR(out(1, 0), want, 1e-5) << "x " << u << " " << to_string(be);
        }
    WarpOptions o;
    o.prefiltered = true;
    const Image<std::uint8_t> u8 = random_image<std::uint8_t>(20, 20, 1, 3);
    Image<std::uint8_t> out(20, 20, 1);
    test::expect_error([&] { warp(u8.view(), out.view(), t, o); }, ErrorCode::InvalidArgument,
                       "must be a float image");
}

TEST(WarpDifferential, ExtremeCoordinatesGiveFill) {
    const Image<float> src = random_image<float>(9, 7, 1, 5);
    Image<float> map(4, 1, 2);
    const float vals[8] = {1e12f, 2.0f, 3.0f, -1e20f, 1e9f, 1e9f, 4.0f, 3.0f};
    for (int i = 0; i < 8; ++i) map.view().row(0)[i] = vals[i];
    for (Backend be : {Backend::Reference, Backend::Cpu})
        for (Border b : kBorders) {
            WarpOptions o;
            o.interp = Interp::Linear;
            o.border = b;
            o.fill = 0.5f;
            const Image<float> out =
                run<float>(src.view(), 4, 1, Transform::make_remap(map.view()), o, be);
            EXPECT_EQ(out(0, 0), 0.5f);
            EXPECT_EQ(out(1, 0), 0.5f);
            EXPECT_EQ(out(2, 0), 0.5f);
            EXPECT_EQ(out(3, 0), src(4, 3));
        }
    // A homography whose denominator vanishes on the output grid.
    Homography hm;
    hm.h[6] = -1.0;  // w' = 1 - x: zero at x = 1
    WarpOptions o;
    o.fill = 0.125f;
    for (Backend be : {Backend::Reference, Backend::Cpu}) {
        const Image<float> out =
            run<float>(src.view(), 3, 2, Transform::make_perspective(hm), o, be);
        EXPECT_EQ(out(1, 0), 0.125f);
        EXPECT_NEAR(out(0, 0), src(0, 0), 2e-6);
    }
}

// check_field = false: a field with NaN / infinite entries is warped, not refused; those outputs
// get the fill value (as a homography's w' = 0) on both backends, every interpolation and
// border, and the others match the reference. A 37-wide field: the CPU's 8-pixel field lanes
// meet the bad entries and a ragged tail.
TEST(WarpDifferential, UncheckedNonFiniteFieldEntriesGiveFill) {
    const Image<float> src = random_image<float>(41, 29, 1, 61);
    const int w = 37, h = 23;
    const float inf = std::numeric_limits<float>::infinity(), nan = std::nanf("");
    Image<float> flow(w, h, 2), map(w, h, 2);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            flow(x, y, 0) = 0.7f * std::sin(0.3f * static_cast<float>(y)) + 0.4f;
            flow(x, y, 1) = 0.9f * std::cos(0.2f * static_cast<float>(x)) - 0.3f;
            map(x, y, 0) = 1.05f * static_cast<float>(x) + 0.37f;
            map(x, y, 1) = 0.93f * static_cast<float>(y) + 0.61f;
        }
    // (x, y, channel, value): NaN and infinities of both signs, in lane 0, mid-lane and the tail
    const struct {
        int x, y, c;
        float v;
    } bad[] = {{0, 0, 0, nan}, {5, 3, 1, inf}, {12, 7, 0, -inf}, {36, 9, 1, nan}, {33, 22, 0, inf}};
    for (const auto& b : bad) flow(b.x, b.y, b.c) = map(b.x, b.y, b.c) = b.v;
    for (const Transform& t :
         {Transform::make_flow(flow.view()), Transform::make_remap(map.view())}) {
        for_each_interp_border(0.75f, [&](WarpOptions o) {
            SCOPED_TRACE(std::string(to_string(o.interp)) + " " + to_string(o.border));
            test::expect_error([&] { run<float>(src.view(), w, h, t, o, Backend::Cpu, 1); },
                               ErrorCode::InvalidArgument, "(x 0, y 0, channel 0) is NaN");
            o.check_field = false;
            const Image<float> want = run<float>(src.view(), w, h, t, o, Backend::Reference, 1);
            const Image<float> got = run<float>(src.view(), w, h, t, o, Backend::Cpu, 1);
            for (const auto& b : bad) {
                EXPECT_EQ(want(b.x, b.y), 0.75f);
                EXPECT_EQ(got(b.x, b.y), 0.75f);
            }
            EXPECT_TRUE(images_near(got.view(), want.view(), kCpuTol));
        });
    }
}

// ---------------------------------------------------------------- errors
TEST(WarpErrors, EveryPathThrowsANamedError) {
    Image<float> src = random_image<float>(8, 6, 1, 1), dst(8, 6, 1), dst3(8, 6, 3);
    Image<float> empty;
    const Transform id = Transform::make_affine(Affine{});
    auto w = [&](const Transform& t, const WarpOptions& o = {}, Backend b = Backend::Cpu) {
        Context ctx;
        ctx.backend = b;
        warp(src.view(), dst.view(), t, o, ctx);
    };
    test::expect_error([&] { warp(empty.view(), dst.view(), id); }, ErrorCode::InvalidArgument,
                       "source image is empty");
    test::expect_error([&] { warp(src.view(), empty.view(), id); }, ErrorCode::InvalidArgument,
                       "destination image is empty");
    test::expect_error([&] { warp(src.view(), dst3.view(), id); }, ErrorCode::InvalidArgument,
                       "channels");
    test::expect_error([&] { warp(src.view(), src.view(), id); }, ErrorCode::InvalidArgument,
                       "overlap");
    for (double bad : {std::nan(""), std::numeric_limits<double>::infinity()}) {
        Affine a;
        a.m[2] = bad;
        test::expect_error([&] { w(Transform::make_affine(a)); }, ErrorCode::InvalidArgument,
                           "affine coefficient 2");
        Homography h;
        h.h[7] = bad;
        test::expect_error([&] { w(Transform::make_perspective(h)); }, ErrorCode::InvalidArgument,
                           "homography coefficient 7");
    }
    Affine sing;
    sing.m[0] = 1, sing.m[1] = 2, sing.m[3] = 2, sing.m[4] = 4;
    test::expect_error([&] { w(Transform::make_affine(sing)); }, ErrorCode::InvalidArgument,
                       "singular");
    Homography hs;
    for (double& v : hs.h) v = 1.0;
    test::expect_error([&] { w(Transform::make_perspective(hs)); }, ErrorCode::InvalidArgument,
                       "singular");
    // The message's numbers keep their magnitude (not 0.000000 or 300 digits).
    Affine tiny;
    tiny.m[0] = tiny.m[4] = 1e-300;
    test::expect_error([&] { w(Transform::make_affine(tiny)); }, ErrorCode::InvalidArgument,
                       "[[1e-300, 0], [0, 1e-300]] is singular (determinant 0)");
    Affine huge;
    huge.m[0] = huge.m[4] = 1e300;
    test::expect_error([&] { w(Transform::make_affine(huge)); }, ErrorCode::InvalidArgument,
                       "[[1e+300, 0], [0, 1e+300]] overflows");
    Homography hh;
    hh.h[0] = hh.h[4] = hh.h[8] = 1e200;
    test::expect_error([&] { w(Transform::make_perspective(hh)); }, ErrorCode::InvalidArgument,
                       "homography overflows");
    test::expect_error([&] { rotation(std::nan(""), 4, 4); }, ErrorCode::InvalidArgument, "angle");
    // Fields.
    Image<float> f1(8, 6, 1), f2small(7, 6, 2), f2(8, 6, 2), fe;
    for (int y = 0; y < 6; ++y)
        for (int x = 0; x < 16; ++x) f2.view().row(y)[x] = 0.5f;
    test::expect_error([&] { w(Transform::make_remap(fe.view())); }, ErrorCode::InvalidArgument,
                       "remap field is empty");
    test::expect_error([&] { w(Transform::make_flow(f1.view())); }, ErrorCode::InvalidArgument,
                       "1 channels");
    test::expect_error([&] { w(Transform::make_flow(f2small.view())); }, ErrorCode::InvalidArgument,
                       "7x6");
    f2(3, 2, 1) = std::numeric_limits<float>::infinity();
    test::expect_error([&] { w(Transform::make_remap(f2.view())); }, ErrorCode::InvalidArgument,
                       "(x 3, y 2, channel 1) is infinite");
    f2(3, 2, 1) = std::nanf("");
    test::expect_error([&] { w(Transform::make_flow(f2.view())); }, ErrorCode::InvalidArgument,
                       "is NaN");
    // Options.
    for (int fir : {2, 1, 33, -3, 16}) {
        WarpOptions o;
        o.prefilter = fir;
        test::expect_error([&] { w(id, o); }, ErrorCode::InvalidArgument,
                           "FIR length " + std::to_string(fir));
    }
    {
        WarpOptions o;
        o.cubic_a = std::nan("");
        test::expect_error([&] { w(id, o); }, ErrorCode::InvalidArgument, "cubic_a");
        o.cubic_a = 1.0;
        test::expect_error([&] { w(id, o); }, ErrorCode::InvalidArgument, "cubic_a");
    }
    {
        WarpOptions o;
        o.antialias = true;
        o.interp = Interp::Cubic;
        test::expect_error([&] { w(id, o); }, ErrorCode::InvalidArgument, "zoom/resize only");
        o.interp = Interp::BSpline;
        test::expect_error([&] { w(Transform::make_resize(), o); }, ErrorCode::InvalidArgument,
                           "linear or cubic");
    }
    {
        WarpOptions o;
        o.interp = static_cast<Interp>(17);
        test::expect_error([&] { w(id, o); }, ErrorCode::InvalidArgument, "interpolation");
        o.interp = Interp::Linear;
        o.border = static_cast<Border>(9);
        test::expect_error([&] { w(id, o); }, ErrorCode::InvalidArgument, "border");
    }
    {
        Transform t = id;
        t.kind = static_cast<Transform::Kind>(12);
        test::expect_error([&] { w(t); }, ErrorCode::InvalidArgument, "transform kind");
    }
    // A NaN or infinite fill: refused for u8 / u16 images on every backend, kept for float ones
    // (scipy's cval=nan marks the outside).
    for (float bad : {std::nanf(""), std::numeric_limits<float>::infinity(),
                      -std::numeric_limits<float>::infinity()}) {
        WarpOptions o;
        o.border = Border::Constant;
        o.fill = bad;
        const Image<std::uint8_t> s8 = random_image<std::uint8_t>(8, 6, 1, 5);
        Image<std::uint8_t> d8(8, 6, 1);
        const Image<std::uint16_t> s16 = random_image<std::uint16_t>(8, 6, 2, 6);
        Image<std::uint16_t> d16(8, 6, 2);
        for (Backend b : {Backend::Reference, Backend::Cpu, Backend::Cuda}) {
            Context ctx;
            ctx.backend = b;
            const std::string what =
                std::isnan(bad) ? "fill value is NaN" : "fill value is infinite";
            test::expect_error([&] { warp(s8.view(), d8.view(), id, o, ctx); },
                               ErrorCode::InvalidArgument, what + "; u8 images need a finite fill");
            test::expect_error([&] { warp(s16.view(), d16.view(), id, o, ctx); },
                               ErrorCode::InvalidArgument, what + "; u16 images");
        }
        Affine shift;  // the first column samples u = -1, outside: the fill; the rest inside
        shift.m[2] = -1.0;
        w(Transform::make_affine(shift), o);
        for (int y = 0; y < 6; ++y) {
            const float v = dst(0, y, 0);
            EXPECT_TRUE(std::isnan(bad) ? std::isnan(v) : v == bad) << "row " << y << ": " << v;
            EXPECT_TRUE(std::isfinite(dst(1, y, 0))) << "row " << y;
        }
    }
    for (Backend b : {Backend::Reference, Backend::Cpu, Backend::Auto}) {
        WarpOptions o;
        o.fast_texture = true;
        test::expect_error([&] { w(id, o, b); }, ErrorCode::InvalidArgument, "fast_texture");
    }
    if (!cuda_available())
        test::expect_error([&] { w(id, {}, Backend::Cuda); }, ErrorCode::BackendUnavailable, "");
    test::expect_error([] { parse_interp("bicubic"); }, ErrorCode::InvalidArgument,
                       "nearest, linear, cubic, bspline");
    test::expect_error([] { parse_border("clamp"); }, ErrorCode::InvalidArgument,
                       "mirror, reflect");
    EXPECT_EQ(parse_interp("bspline"), Interp::BSpline);
    EXPECT_STREQ(to_string(Interp::Cubic), "cubic");
}

}  // namespace
}  // namespace upres
