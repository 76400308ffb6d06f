// CUDA backend of upres::warp against the double-precision reference (Backend::Reference):
// every transform kind, interpolation and border, u8/u16/f32, 1-4 channels, awkward sizes,
// device sub-views, host images on the CUDA backend (staging), the recursive fused kernel against
// the two-pass path, and the fast texture mode within its own tolerance.
// Tolerances: docs/ops/warp.md, "CUDA backend" section. Every suite needs a GPU (visible skip).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/io.hpp>
#include <upres/warp.hpp>

#include "test_util.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "ops/bspline/bspline_backends.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_cuda.hpp"
#endif

namespace upres {
namespace {

using test::expect_error;
using test::random_image;

// Tolerance of the exact CUDA path against the reference, on the pixel type's scale
// (docs/ops/warp.md). Float math (weights, sums; float coordinates near the border) vs double.
template <class T>
double exact_tol(Interp interp) {
    if constexpr (std::is_same_v<T, float>) return interp == Interp::BSpline ? 1e-3 : 5e-4;
    if constexpr (std::is_same_v<T, std::uint8_t>) return 1.0;
    return interp == Interp::BSpline ? 24.0 : 16.0;  // u16: 2.5e-4 of the range
}
// Nearest neighbour may pick the other neighbour where the coordinate lies within float rounding
// of a half-integer: a few such values are allowed, each anywhere in the range.
constexpr double kNearestOutlierFraction = 0.01;

struct Stats {
    double max_abs = 0.0;
    std::int64_t over = 0, total = 0;
    int wx = -1, wy = -1, wc = -1;
    double wa = 0, wb = 0;
};

template <class T>
Stats compare(const ImageView<const T>& a, const ImageView<const T>& b, double atol) {
    Stats s;
    for (int y = 0; y < a.height(); ++y)
        for (int x = 0; x < a.width(); ++x)
            for (int c = 0; c < a.channels(); ++c) {
                const double va = static_cast<double>(a(x, y, c));
                const double vb = static_cast<double>(b(x, y, c));
                const double d = std::isfinite(va) && std::isfinite(vb) ? std::abs(va - vb) : 1e30;
                ++s.total;
                if (d > atol) ++s.over;
                if (d > s.max_abs) {
                    s.max_abs = d;
                    s.wx = x, s.wy = y, s.wc = c, s.wa = va, s.wb = vb;
                }
            }
    return s;
}

std::string describe(const Stats& s) {
    return std::to_string(s.over) + " of " + std::to_string(s.total) +
           " values over tolerance; worst |diff| " + std::to_string(s.max_abs) + " at (x " +
           std::to_string(s.wx) + ", y " + std::to_string(s.wy) + ", c " + std::to_string(s.wc) +
           "): " + std::to_string(s.wa) + " vs " + std::to_string(s.wb);
}

// Largest |diff| seen per interpolation and type, printed at the end (for docs/ops/warp.md).
struct Worst {
    double v[3][4] = {};
    ~Worst() {
        const char* tn[3] = {"u8", "u16", "f32"};
        for (int t = 0; t < 3; ++t)
            std::cout << "[warp_cuda] worst |cuda - reference| " << tn[t] << ": nearest " << v[t][0]
                      << ", linear " << v[t][1] << ", cubic " << v[t][2] << ", bspline " << v[t][3]
                      << "\n";
    }
};
Worst g_worst;
template <class T>
constexpr int type_index() {
    return std::is_same_v<T, std::uint8_t> ? 0 : (std::is_same_v<T, std::uint16_t> ? 1 : 2);
}

template <class T>
::testing::AssertionResult check_close(const ImageView<const T>& got, const ImageView<const T>& ref,
                                       Interp interp, double atol) {
    const Stats s = compare(got, ref, atol);
    double& w = g_worst.v[type_index<T>()][static_cast<int>(interp)];
    if (interp != Interp::Nearest && s.max_abs > w) w = s.max_abs;
    // Counted in pixels: a flipped neighbour changes every channel of the pixel.
    const std::int64_t allowed =
        interp == Interp::Nearest
            ? (static_cast<std::int64_t>(kNearestOutlierFraction * static_cast<double>(s.total) /
                                         got.channels()) +
               1) *
                  got.channels()
            : 0;
    if (s.over <= allowed) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << describe(s);
}

const char* kind_name(Transform::Kind k) {
    switch (k) {
        case Transform::Kind::Affine:
            return "affine";
        case Transform::Kind::Perspective:
            return "perspective";
        case Transform::Kind::Resize:
            return "resize";
        case Transform::Kind::Remap:
            return "remap";
        case Transform::Kind::Flow:
            return "flow";
    }
    return "?";
}

// A transform of each kind for a w x h source and a dw x dh output; fields live in `field`
// (host) and are copied to `dfield` (device).
struct Case {
    Transform host, device;
    Image<float> field, dfield;
};

Case make_case(Transform::Kind kind, int w, int h, int dw, int dh, std::uint32_t seed) {
    Case c;
    switch (kind) {
        case Transform::Kind::Affine:
            c.host = Transform::make_rotation(30.0 + seed % 7, w, h);
            c.host.affine.m[0] *= 1.1;  // a little shear and scale on top
            c.host.affine.m[1] += 0.05;
            break;
        case Transform::Kind::Perspective: {
            Homography H;
            // Coefficients chosen so that no output lands exactly on the image edge (there a
            // one-ulp difference decides between the fill value and a sample, Border::Constant).
            const double hh[9] = {0.9,  0.12,           0.0437 * w,      -0.0813, 1.05,
                                  1.37, 4e-3 / (w + 1), -3e-3 / (h + 1), 1.0};
            std::memcpy(H.h, hh, sizeof hh);
            c.host = Transform::make_perspective(H);
            break;
        }
        case Transform::Kind::Resize:
            c.host = Transform::make_resize();
            break;
        case Transform::Kind::Remap:
        case Transform::Kind::Flow: {
            c.field = random_image<float>(dw, dh, 2, seed + 17, -3.0, 3.0);
            if (kind == Transform::Kind::Remap)
                for (int y = 0; y < dh; ++y)
                    for (int x = 0; x < dw; ++x) {
                        c.field(x, y, 0) = x * float(w) / dw + 0.7f * c.field(x, y, 0) - 1.0f;
                        c.field(x, y, 1) = y * float(h) / dh + 0.7f * c.field(x, y, 1) + 0.5f;
                    }
            c.host = kind == Transform::Kind::Remap ? Transform::make_remap(c.field.view())
                                                    : Transform::make_flow(c.field.view());
            break;
        }
    }
    c.device = c.host;
    if (kind == Transform::Kind::Remap || kind == Transform::Kind::Flow) {
        c.dfield = clone(c.field.view(), Location::Device);
        c.device.field = c.dfield.view();
    }
    return c;
}

Context cuda_ctx() {
    Context ctx;
    ctx.backend = Backend::Cuda;
    return ctx;
}
Context ref_ctx() {
    Context ctx;
    ctx.backend = Backend::Reference;
    return ctx;
}

// Warps src (host) with the reference and with CUDA (device copies) and compares.
template <class T>
::testing::AssertionResult cuda_vs_reference(const ImageView<const T>& src, int dw, int dh,
                                             Transform::Kind kind, const WarpOptions& o,
                                             std::uint32_t seed, double atol) {
    Case c = make_case(kind, src.width(), src.height(), dw, dh, seed);
    Image<T> ref(dw, dh, src.channels());
    WarpOptions oref = o;
    oref.fast_texture = false;  // the reference is exact; texture mode is compared against it
    warp(src, ref.view(), c.host, oref, ref_ctx());
    Image<T> dsrc = clone(src, Location::Device);
    Image<T> ddst(dw, dh, src.channels(), Location::Device);
    warp(ImageView<const T>(dsrc.view()), ddst.view(), c.device, o, cuda_ctx());
    Image<T> got = clone(ImageView<const T>(ddst.view()), Location::Host);
    auto r = check_close<T>(got.view(), ref.view(), o.interp, atol);
    if (!r)
        r << " [" << kind_name(kind) << ", " << to_string(o.interp) << ", " << to_string(o.border)
          << ", prefilter " << o.prefilter << ", " << src.width() << "x" << src.height() << "x"
          << src.channels() << " -> " << dw << "x" << dh << "]";
    return r;
}

constexpr Interp kInterps[] = {Interp::Nearest, Interp::Linear, Interp::Cubic, Interp::BSpline};
constexpr Border kBorders[] = {Border::Mirror, Border::Reflect, Border::Nearest, Border::Wrap,
                               Border::Constant};
constexpr Transform::Kind kKinds[] = {Transform::Kind::Affine, Transform::Kind::Perspective,
                                      Transform::Kind::Resize, Transform::Kind::Remap,
                                      Transform::Kind::Flow};

template <class T>
void sweep_random(int w, int h, int dw, int dh, std::uint32_t seed) {
    for (int ch = 1; ch <= 4; ++ch) {
        const Image<T> src = random_image<T>(w, h, ch, seed + ch);
        for (Transform::Kind kind : kKinds)
            for (Interp interp : kInterps)
                for (Border border : kBorders) {
                    WarpOptions o;
                    o.interp = interp;
                    o.border = border;
                    o.fill = static_cast<float>(0.25 * PixelTraits<T>::max_value);
                    o.prefilter = (seed + ch + static_cast<int>(border)) % 2 ? 0 : 15;
                    EXPECT_TRUE(cuda_vs_reference<T>(src.view(), dw, dh, kind, o, seed,
                                                     exact_tol<T>(interp)));
                }
    }
}

TEST(CudaWarp, EveryKindInterpBorderF32) {
    UPRES_REQUIRE_GPU();
    sweep_random<float>(37, 29, 41, 23, 100);
}
TEST(CudaWarp, EveryKindInterpBorderU8) {
    UPRES_REQUIRE_GPU();
    sweep_random<std::uint8_t>(29, 37, 23, 41, 200);
}
TEST(CudaWarp, EveryKindInterpBorderU16) {
    UPRES_REQUIRE_GPU();
    sweep_random<std::uint16_t>(31, 31, 33, 19, 300);
}

TEST(CudaWarp, AwkwardSizes) {
    UPRES_REQUIRE_GPU();
    const int sizes[][4] = {{1, 1, 1, 1},  {1, 1, 5, 3},         {7, 3, 7, 3},      {7, 3, 3, 7},
                            {3, 7, 16, 2}, {257, 131, 257, 131}, {257, 131, 64, 40}};
    std::uint32_t seed = 400;
    for (const auto& s : sizes) {
        const Image<float> f = random_image<float>(s[0], s[1], 1, ++seed);
        const Image<std::uint8_t> b = random_image<std::uint8_t>(s[0], s[1], 3, ++seed);
        for (Transform::Kind kind : kKinds)
            for (Interp interp : kInterps)
                for (Border border : {Border::Mirror, Border::Nearest, Border::Constant,
                                      Border::Wrap, Border::Reflect}) {
                    WarpOptions o;
                    o.interp = interp;
                    o.border = border;
                    o.fill = 0.5f;
                    o.prefilter = border == Border::Mirror ? 15 : 0;
                    EXPECT_TRUE(cuda_vs_reference<float>(f.view(), s[2], s[3], kind, o, seed,
                                                         exact_tol<float>(interp)));
                    if (s[0] * s[1] < 1000 || border == Border::Mirror) {
                        EXPECT_TRUE(cuda_vs_reference<std::uint8_t>(
                            b.view(), s[2], s[3], kind, o, seed, exact_tol<std::uint8_t>(interp)));
                    }
                }
    }
}

TEST(CudaWarp, AntialiasedResize) {
    UPRES_REQUIRE_GPU();
    const Image<float> f = random_image<float>(97, 61, 2, 500);
    const Image<std::uint16_t> u = random_image<std::uint16_t>(97, 61, 3, 501);
    for (Interp interp : {Interp::Linear, Interp::Cubic})
        for (Border border : kBorders)
            for (const auto& d : {std::pair{31, 17}, std::pair{45, 70}, std::pair{13, 5}}) {
                WarpOptions o;
                o.interp = interp;
                o.border = border;
                o.antialias = true;
                EXPECT_TRUE(cuda_vs_reference<float>(f.view(), d.first, d.second,
                                                     Transform::Kind::Resize, o, 1, 5e-5));
                EXPECT_TRUE(cuda_vs_reference<std::uint16_t>(u.view(), d.first, d.second,
                                                             Transform::Kind::Resize, o, 1, 1.0));
            }
}

// A real photo: a 120 x 96 crop of baboon.jpg as u8 RGB, as u16, and as gray float 0..255.
TEST(CudaWarp, RealPhotoEveryInterpAndBorder) {
    UPRES_REQUIRE_GPU();
    AnyImage any = read_image(test::sample_path("baboon.jpg"));
    const Image<std::uint8_t>& full = any.as<std::uint8_t>();
    const ImageView<const std::uint8_t> crop = full.view().sub(200, 150, 120, 96);
    const Image<std::uint8_t> rgb = clone(crop);
    Image<std::uint16_t> rgb16(rgb.width(), rgb.height(), rgb.channels());
    convert(rgb.view(), rgb16.view());
    Image<float> gray(rgb.width(), rgb.height(), 1);
    for (int y = 0; y < gray.height(); ++y)
        for (int x = 0; x < gray.width(); ++x)
            gray(x, y) = 0.299f * rgb(x, y, 0) + 0.587f * rgb(x, y, 1) + 0.114f * rgb(x, y, 2);
    for (Transform::Kind kind : kKinds)
        for (Interp interp : kInterps)
            for (Border border : kBorders) {
                WarpOptions o;
                o.interp = interp;
                o.border = border;
                o.fill = 10.0f;
                o.prefilter = border == Border::Wrap ? 0 : 11;
                EXPECT_TRUE(cuda_vs_reference<std::uint8_t>(rgb.view(), 100, 90, kind, o, 7,
                                                            exact_tol<std::uint8_t>(interp)));
                EXPECT_TRUE(cuda_vs_reference<std::uint16_t>(rgb16.view(), 90, 100, kind, o, 8,
                                                             exact_tol<std::uint16_t>(interp)));
                EXPECT_TRUE(cuda_vs_reference<float>(gray.view(), 100, 90, kind, o, 9,
                                                     exact_tol<float>(interp) * 255.0));
            }
}

#if UPRES_HAVE_CUDA
// Device sub-views in and out: only the destination rectangle is written.
TEST(CudaWarp, DeviceSubViews) {
    UPRES_REQUIRE_GPU();
    const Image<float> big = random_image<float>(90, 70, 3, 600);
    const ImageView<const float> hsub = big.view().sub(13, 9, 51, 43);
    const Image<float> sub_copy = clone(hsub);
    Image<float> dbig = clone(big.view(), Location::Device);
    const ImageView<const float> dsub = ImageView<const float>(dbig.view()).sub(13, 9, 51, 43);
    Image<float> out_big = random_image<float>(80, 60, 3, 601);
    Image<float> dout = clone(out_big.view(), Location::Device);
    for (Interp interp : kInterps) {
        WarpOptions o;
        o.interp = interp;
        o.border = Border::Reflect;
        o.prefilter = 0;
        const Transform t = Transform::make_rotation(25.0, 51, 43);
        warp(dsub, dout.view().sub(7, 5, 47, 41), t, o, cuda_ctx());
        Image<float> ref(47, 41, 3);
        warp(sub_copy.view(), ref.view(), t, o, ref_ctx());
        Image<float> got = clone(ImageView<const float>(dout.view()), Location::Host);
        EXPECT_TRUE(check_close<float>(ImageView<const float>(got.view()).sub(7, 5, 47, 41),
                                       ref.view(), interp, exact_tol<float>(interp)));
        // Outside the destination rectangle nothing changed.
        for (int y = 0; y < 60; ++y)
            for (int x = 0; x < 80; ++x)
                if (x < 7 || x >= 54 || y < 5 || y >= 46) {
                    for (int c = 0; c < 3; ++c) ASSERT_EQ(got(x, y, c), out_big(x, y, c));
                }
    }
}
#endif

// 4-channel pixels are read and written as one vector where the data pointer and row stride keep
// every pixel aligned (every upres image), sample by sample otherwise: images 1 sample off
// alignment with a row stride of 4 w + 1 samples take the per-sample path with the same results
// (u8, u16, float; the split kernel, the tiled kernel and the per-output kernel).
TEST(CudaWarp, UnalignedFourChannelPixels) {
    UPRES_REQUIRE_GPU();
    auto run_type = [](auto zero) {
        using T = decltype(zero);
        const int w = 61, h = 47, ow = 53, oh = 44;
        const Image<T> src = random_image<T>(w, h, 4, 670);
        const std::ptrdiff_t ss = 4 * w + 1, ds = 4 * ow + 1;
        // One row of raw storage each, 1 sample of offset, rows ss / ds samples apart.
        Image<T> sraw(static_cast<int>(ss * h + 1), 1, 1),
            draw(static_cast<int>(ds * oh + 1), 1, 1);
        for (int y = 0; y < h; ++y)
            for (int i = 0; i < 4 * w; ++i)
                sraw.view().row(0)[1 + y * ss + i] = src.view().row(y)[i];
        const Image<T> dsraw = clone(sraw.view(), Location::Device);
        Image<T> ddraw = clone(draw.view(), Location::Device);
        const ImageView<const T> dsrc(dsraw.data() + 1, w, h, 4, ss, Location::Device);
        const ImageView<T> ddst(ddraw.data() + 1, ow, oh, 4, ds, Location::Device);
        for (Interp interp : {Interp::Linear, Interp::Cubic, Interp::Nearest}) {
            SCOPED_TRACE(to_string(interp));
            WarpOptions o;
            o.interp = interp;
            const Transform t = Transform::make_rotation(-28.0, w, h);
            warp(dsrc, ddst, t, o, cuda_ctx());
            const Image<T> back = clone(ImageView<const T>(ddraw.view()));
            Image<T> got(ow, oh, 4), want(ow, oh, 4);
            for (int y = 0; y < oh; ++y)
                for (int i = 0; i < 4 * ow; ++i)
                    got.view().row(y)[i] = back.view().row(0)[1 + y * ds + i];
            warp(src.view(), want.view(), t, o, ref_ctx());
            EXPECT_TRUE(check_close<T>(got.view(), want.view(), interp, exact_tol<T>(interp)));
        }
    };
    run_type(std::uint8_t{});
    run_type(std::uint16_t{});
    run_type(float{});
}

// A device field's non-finite values are found by the warp kernels themselves: every kernel
// that reads a field (the per-output one for Nearest, the split field kernel for Linear, Keys and
// B-spline, the texture one for fast_texture) reports the first one in row-major order, NaN or
// infinite, as a host field's scan does; values outside the field's sub-view are never read.
TEST(CudaWarp, NonFiniteDeviceFieldsRejected) {
    UPRES_REQUIRE_GPU();
    const Image<float> src = random_image<float>(40, 30, 1, 650);
    const Image<float> dsrc = clone(src.view(), Location::Device);
    const Image<std::uint8_t> src8 = random_image<std::uint8_t>(40, 30, 3, 651);
    const Image<std::uint8_t> dsrc8 = clone(src8.view(), Location::Device);
    Image<float> dst(33, 21, 1, Location::Device);
    Image<std::uint8_t> dst8(33, 21, 3, Location::Device);
    Image<float> hf(45, 27, 2);  // a 33 x 21 sub-view at (4, 3) is the field
    for (int y = 0; y < 27; ++y)
        for (int x = 0; x < 90; ++x)
            hf.view().row(y)[x] = 0.25f + 0.01f * static_cast<float>(x % 7);
    struct FieldCase {
        Interp interp;
        bool texture, u8;
    };
    const FieldCase cases[] = {{Interp::Nearest, false, false}, {Interp::Linear, false, false},
                               {Interp::Cubic, false, false},   {Interp::BSpline, false, false},
                               {Interp::Linear, true, false},   {Interp::BSpline, true, false},
                               {Interp::Cubic, false, true},    {Interp::BSpline, false, true}};
    auto warp_with = [&](const Image<float>& field, bool flow, const FieldCase& k) {
        const ImageView<const float> f = ImageView<const float>(field.view()).sub(4, 3, 33, 21);
        WarpOptions o;
        o.interp = k.interp;
        o.fast_texture = k.texture;
        const Transform t = flow ? Transform::make_flow(f) : Transform::make_remap(f);
        if (k.u8)
            warp(ImageView<const std::uint8_t>(dsrc8.view()), dst8.view(), t, o, cuda_ctx());
        else
            warp(ImageView<const float>(dsrc.view()), dst.view(), t, o, cuda_ctx());
    };
    auto each = [&](auto&& f) {
        for (const FieldCase& k : cases)
            for (bool flow : {true, false}) {
                SCOPED_TRACE(std::string(flow ? "flow " : "remap ") + to_string(k.interp) +
                             (k.texture ? " texture" : "") + (k.u8 ? " u8 RGB" : ""));
                f(k, flow);
            }
    };
    {
        const Image<float> df = clone(hf.view(), Location::Device);
        each([&](const FieldCase& k, bool flow) { EXPECT_NO_THROW(warp_with(df, flow, k)); });
    }
    // (x 7, y 5, channel 1) of the field; a later NaN must not win.
    hf(4 + 7, 3 + 5, 1) = std::numeric_limits<float>::infinity();
    hf(4 + 20, 3 + 12, 0) = std::nanf("");
    // Outside the sub-view: never read, never reported.
    hf(1, 1, 0) = std::nanf("");
    hf(44, 26, 1) = -std::numeric_limits<float>::infinity();
    {
        const Image<float> df = clone(hf.view(), Location::Device);
        each([&](const FieldCase& k, bool flow) {
            test::expect_error([&] { warp_with(df, flow, k); }, ErrorCode::InvalidArgument,
                               std::string(flow ? "flow" : "remap") +
                                   " field value at (x 7, y 5, channel 1) is infinite");
        });
    }
    // An earlier NaN in channel 0 wins, and is named a NaN.
    hf(4 + 30, 3 + 2, 0) = std::nanf("");
    {
        const Image<float> df = clone(hf.view(), Location::Device);
        each([&](const FieldCase& k, bool flow) {
            test::expect_error([&] { warp_with(df, flow, k); }, ErrorCode::InvalidArgument,
                               "field value at (x 30, y 2, channel 0) is NaN");
        });
    }
}

// check_field = false on device images: no check, no error; the outputs of non-finite entries
// get the fill value and the others match the reference (host, same option).
TEST(CudaWarp, UncheckedDeviceFieldsGiveFill) {
    UPRES_REQUIRE_GPU();
    const Image<float> src = random_image<float>(52, 38, 1, 660);
    const Image<float> dsrc = clone(src.view(), Location::Device);
    const int w = 45, h = 31;
    Image<float> hf(w, h, 2);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            hf(x, y, 0) = 0.8f * std::sin(0.25f * static_cast<float>(y)) + 0.3f;
            hf(x, y, 1) = 0.6f * std::cos(0.35f * static_cast<float>(x)) - 0.45f;
        }
    const int bad[][3] = {{0, 0, 1}, {17, 9, 0}, {44, 30, 1}, {31, 12, 0}};
    for (const auto& b : bad)
        hf(b[0], b[1], b[2]) = b[1] % 2 ? std::nanf("") : std::numeric_limits<float>::infinity();
    const Image<float> df = clone(hf.view(), Location::Device);
    Image<float> dst(w, h, 1, Location::Device);
    for (Interp i : kInterps)
        for (bool flow : {true, false}) {
            SCOPED_TRACE(std::string(flow ? "flow " : "remap ") + to_string(i));
            WarpOptions o;
            o.interp = i;
            o.fill = 0.625f;
            o.check_field = false;
            auto t = [&](const Image<float>& f) {
                return flow ? Transform::make_flow(ImageView<const float>(f.view()))
                            : Transform::make_remap(ImageView<const float>(f.view()));
            };
            ASSERT_NO_THROW(
                warp(ImageView<const float>(dsrc.view()), dst.view(), t(df), o, cuda_ctx()));
            const Image<float> got = clone(ImageView<const float>(dst.view()));
            Image<float> want(w, h, 1);
            warp(src.view(), want.view(), t(hf), o, ref_ctx());
            for (const auto& b : bad) EXPECT_EQ(got(b[0], b[1]), 0.625f);
            EXPECT_TRUE(check_close<float>(got.view(), want.view(), i, exact_tol<float>(i)));
        }
}

// Host images on the CUDA backend: staged through device memory, same result.
TEST(CudaWarp, HostImagesStaged) {
    UPRES_REQUIRE_GPU();
    const Image<std::uint8_t> src = random_image<std::uint8_t>(64, 48, 4, 700);
    for (Interp interp : kInterps) {
        WarpOptions o;
        o.interp = interp;
        const Transform t = Transform::make_rotation(-40.0, 64, 48);
        Image<std::uint8_t> a(50, 60, 4), b(50, 60, 4);
        warp(src.view(), a.view(), t, o, cuda_ctx());
        warp(src.view(), b.view(), t, o, ref_ctx());
        EXPECT_TRUE(check_close<std::uint8_t>(a.view(), b.view(), interp, 1.0));
    }
}

// Same inputs, same bits (no atomics, fixed order).
TEST(CudaWarp, RunToRunDeterministic) {
    UPRES_REQUIRE_GPU();
    const Image<float> src = random_image<float>(200, 150, 1, 800);
    Image<float> d = clone(src.view(), Location::Device);
    Image<float> o1(190, 170, 1, Location::Device), o2(190, 170, 1, Location::Device);
    WarpOptions o;
    o.prefilter = 15;
    const Transform t = Transform::make_rotation(33.0, 200, 150);
    warp(ImageView<const float>(d.view()), o1.view(), t, o, cuda_ctx());
    warp(ImageView<const float>(d.view()), o2.view(), t, o, cuda_ctx());
    const Image<float> a = clone(ImageView<const float>(o1.view())),
                       b = clone(ImageView<const float>(o2.view()));
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(float) * 190 * 170));
}

#if UPRES_HAVE_CUDA
// ---------------------------------------------------------------- fused FIR + B-spline
WarpPlan rotation_plan(double deg, int w, int h, Border border) {
    WarpPlan p;
    const Affine a = rotation(deg, w, h);
    for (int i = 0; i < 6; ++i) p.m[i] = a.m[i];
    p.m[6] = 0, p.m[7] = 0, p.m[8] = 1;
    p.kind = Transform::Kind::Affine;
    p.interp = Interp::BSpline;
    p.border = border;
    p.fill = 0.3f;
    p.pad = border == Border::Nearest ? kBSplineNearestPad : 0;
    return p;
}
WarpPlan resize_plan(int sw, int sh, int dw, int dh, Border border) {
    WarpPlan p = rotation_plan(0.0, sw, sh, border);
    p.kind = Transform::Kind::Resize;
    resize_matrix(sw, sh, dw, dh, p.m);
    return p;
}

// The recursive fused kernel (exact IIR prefilter and interpolation in one pass, what upres::warp
// runs for float 1-channel B-spline plans with prefilter 0) against the two-pass CUDA path
// (bspline_prefilter IIR + cuda::warp): every border it takes, rotations whose tiles cross the
// border or lie wholly outside, an up- and a down-scale, the smallest accepted size, awkward
// sizes, whole images and unaligned device sub-views, random data and a real photo. Outputs are
// poisoned with NaN first, so an output that no block writes fails.
Image<float> nan_device_image(int w, int h) {
    Image<float> b(w, h, 1, Location::Device);
    EXPECT_EQ(cudaMemset2D(b.view().data(), b.view().stride() * sizeof(float), 0xFF,
                           w * sizeof(float), h),
              cudaSuccess);
    return b;
}

Image<float> rec_run(const ImageView<const float>& src, int dw, int dh, const WarpPlan& p, int form,
                     int tile_order = -1) {
    Image<float> b = nan_device_image(dw, dh);
    cuda::warp_bspline_rec(span_of(src), span_of(b.view()), p, 0, nullptr,
                           static_cast<cuda::RecTapForm>(form),
                           static_cast<cuda::RecTileOrder>(tile_order));
    return clone(ImageView<const float>(b.view()));
}

void rec_vs_two_pass(const ImageView<const float>& src, int dw, int dh, const WarpPlan& p,
                     double atol, const std::string& what) {
    ASSERT_TRUE(cuda::warp_rec_supported(p, src.width(), src.height(), dw, dh, 1, 0)) << what;
    Image<float> coef(src.width(), src.height(), 1, Location::Device);
    PrefilterOptions po;
    po.border = tap_border(p.border);
    po.fir_length = 0;
    cuda::bspline_prefilter(span_of(src), span_of(coef.view()), po, nullptr);
    Image<float> a(dw, dh, 1, Location::Device);
    cuda::warp(span_of(ImageView<const float>(coef.view())), span_of(a.view()), p, nullptr);
    const Image<float> ha = clone(ImageView<const float>(a.view()));
    std::vector<Image<float>> out;
    for (int form : {-1, 0, 1, 2, 3, 4, 5}) {  // the chosen tap form, then each one explicitly
        out.push_back(rec_run(src, dw, dh, p, form));
        EXPECT_TRUE(check_close<float>(out.back().view(), ha.view(), Interp::BSpline, atol))
            << " [recursive fused (tap form " << form << ") vs two-pass IIR, " << what << ", "
            << to_string(p.border) << ", " << src.width() << "x" << src.height() << " -> " << dw
            << "x" << dh << "]";
    }
    // The row forms differ in which shared words they read, not in the arithmetic; the chosen
    // form is one of the six (layouts 32 x 1, 16 x 2, 8 x 4).
    for (int layout : {0, 1, 2})
        EXPECT_TRUE(test::images_near(out[2 + 2 * layout].view(), out[1 + 2 * layout].view(), 0.0))
            << " [row forms, layout " << layout << ", " << what << "]";
    EXPECT_TRUE(test::images_near(out[0].view(), out[1].view(), 0.0) ||
                test::images_near(out[0].view(), out[3].view(), 0.0) ||
                test::images_near(out[0].view(), out[5].view(), 0.0))
        << " [the chosen form vs the explicit ones, " << what << "]";
    // The order in which blocks take the tiles (tile_order: row-major, edges first along x, y or
    // both; the default is one of them) changes nothing: every tile is written (the output is
    // NaN-poisoned), each exactly as in row-major order.
    for (int order : {0, 1, 2, 3})
        EXPECT_TRUE(
            test::images_near(rec_run(src, dw, dh, p, -1, order).view(), out[0].view(), 0.0))
            << " [tile order " << order << " vs the default, " << what << "]";
}

TEST(CudaWarpRec, MatchesTwoPassIir) {
    UPRES_REQUIRE_GPU();
    AnyImage any = read_image(test::sample_path("baboon.jpg"));
    const Image<std::uint8_t>& rgb = any.as<std::uint8_t>();
    Image<float> photo(rgb.width(), rgb.height(), 1);
    for (int y = 0; y < photo.height(); ++y)
        for (int x = 0; x < photo.width(); ++x)
            photo(x, y) = 0.299f * rgb(x, y, 0) + 0.587f * rgb(x, y, 1) + 0.114f * rgb(x, y, 2);
    const Image<float> dphoto = clone(photo.view(), Location::Device);
    std::uint32_t seed = 2100;
    for (const auto& sz : {std::pair{203, 141}, std::pair{16, 16}, std::pair{300, 37}}) {
        const Image<float> dev = clone(
            random_image<float>(sz.first + 5, sz.second + 3, 1, seed++).view(), Location::Device);
        for (bool sub : {false, true}) {
            const ImageView<const float> src =
                sub ? ImageView<const float>(dev.view()).sub(3, 2, sz.first, sz.second)
                    : ImageView<const float>(dev.view()).sub(0, 0, sz.first, sz.second);
            const int w = src.width(), h = src.height();
            for (Border border : {Border::Mirror, Border::Reflect, Border::Wrap, Border::Constant})
                for (int geo = 0; geo < 5; ++geo) {
                    WarpPlan p = geo == 0   ? rotation_plan(30.0, w, h, border)
                                 : geo == 1 ? rotation_plan(-117.0, w, h, border)
                                 : geo == 2 ? resize_plan(w, h, 2 * w + 3, 2 * h - 1, border)
                                 : geo == 3 ? resize_plan(w, h, w * 3 / 4, h * 3 / 4, border)
                                            : rotation_plan(17.0, w, h, border);
                    const int dw = geo == 2 ? 2 * w + 3 : geo == 3 ? w * 3 / 4 : w + 9;
                    const int dh = geo == 2 ? 2 * h - 1 : geo == 3 ? h * 3 / 4 : h - 5;
                    rec_vs_two_pass(src, dw, dh, p, 2e-5,
                                    "random geo " + std::to_string(geo) + (sub ? " sub-view" : ""));
                }
        }
    }
    const ImageView<const float> ph(dphoto.view());
    const int w = ph.width(), h = ph.height();
    for (Border border : {Border::Mirror, Border::Constant}) {
        rec_vs_two_pass(ph, w, h, rotation_plan(30.0, w, h, border), 2e-5 * 255, "photo rotate");
        rec_vs_two_pass(ph.sub(7, 5, w - 20, h - 11), 2 * w - 41, 2 * h - 22,
                        resize_plan(w - 20, h - 11, 2 * w - 41, 2 * h - 22, border), 2e-5 * 255,
                        "photo zoom sub-view");
    }
}

TEST(CudaWarpRec, SupportedPlans) {
    UPRES_REQUIRE_GPU();
    const WarpPlan rot = rotation_plan(30, 2048, 2048, Border::Mirror);
    EXPECT_TRUE(cuda::warp_rec_supported(rot, 2048, 2048, 2048, 2048, 1, 0));
    EXPECT_FALSE(cuda::warp_rec_supported(rot, 2048, 2048, 2048, 2048, 1, 15));  // FIR
    EXPECT_FALSE(cuda::warp_rec_supported(rot, 2048, 2048, 2048, 2048, 3, 0));   // channels
    EXPECT_FALSE(cuda::warp_rec_supported(rotation_plan(30, 64, 64, Border::Nearest), 64, 64, 64,
                                          64, 1, 0));  // padded prefilter
    EXPECT_FALSE(cuda::warp_rec_supported(rotation_plan(30, 15, 40, Border::Mirror), 15, 40, 15, 40,
                                          1, 0));  // below 16 pixels
    WarpPlan persp = rot;
    persp.kind = Transform::Kind::Perspective;
    EXPECT_FALSE(cuda::warp_rec_supported(persp, 2048, 2048, 2048, 2048, 1, 0));
    WarpPlan tex = rot;
    tex.fast_texture = true;
    EXPECT_FALSE(cuda::warp_rec_supported(tex, 2048, 2048, 2048, 2048, 1, 0));
    EXPECT_FALSE(cuda::warp_rec_supported(resize_plan(4096, 4096, 256, 256, Border::Mirror), 4096,
                                          4096, 256, 256, 1, 0));  // box beyond shared memory
    WarpPlan forced = rot;
    forced.schedule = WarpScheduleOverride::PerOutput;
    EXPECT_FALSE(cuda::warp_rec_preferred(forced, 2048, 2048, 2048, 2048, 1, 0));
    EXPECT_TRUE(cuda::warp_rec_preferred(rot, 2048, 2048, 2048, 2048, 1, 0));
    // Resizes: supported, but prefilter + the separable interpolation is the faster schedule.
    const WarpPlan zoom = resize_plan(1024, 1024, 2048, 2048, Border::Mirror);
    EXPECT_TRUE(cuda::warp_rec_supported(zoom, 1024, 1024, 2048, 2048, 1, 0));
    EXPECT_FALSE(cuda::warp_rec_preferred(zoom, 1024, 1024, 2048, 2048, 1, 0));
}

// The host's bound on the tiles' input boxes (it sets the shared memory per block, hence the
// blocks per SM) holds for every tile, so no tile takes the per-output fallback, and it is tight:
// every 2048^2 rotation keeps 4 blocks per SM (at 45 degrees the bound had one column and row of
// slack until 2026-11-26: boxes of at most 118 x 118 samples, a bound of 120 x 119, pitch 122 and
// 3 blocks per SM).
TEST(CudaWarpRec, BoxesWithinTheHostBound) {
    UPRES_REQUIRE_GPU();
    int plans = 0;
    auto check = [&](const WarpPlan& p, int sw, int sh, int dw, int dh, const std::string& what) {
        cuda::RecLayout l;
        if (!cuda::warp_rec_layout(p, sw, sh, dw, dh, l)) {
            ADD_FAILURE() << what << ": not a plan of the recursive fused kernel";
            return l;
        }
        ++plans;
        EXPECT_EQ(l.tiles_beyond_bound, 0) << what << ": " << l.widest << " x " << l.tallest
                                           << " against " << l.box_w << " x " << l.box_h;
        EXPECT_GT(l.tiles, 0) << what;
        EXPECT_LE(l.widest, l.box_w) << what;
        EXPECT_LE(l.tallest, l.box_h) << what;
        // Tight: the bound exceeds the widest box by at most the even rounding and the
        // tallest by at most one row (a tile whose span straddles one more integer).
        if (l.tiles >= 64) {
            EXPECT_LE(l.box_w - l.widest, 2) << what;
            EXPECT_LE(l.box_h - l.tallest, 1) << what;
        }
        return l;
    };
    for (int tenth = -1800; tenth <= 1800; tenth += 25) {
        const double deg = tenth / 10.0;
        const cuda::RecLayout l = check(rotation_plan(deg, 2048, 2048, Border::Mirror), 2048, 2048,
                                        2048, 2048, "2048^2 rotation " + std::to_string(deg));
        EXPECT_EQ(l.blocks_per_sm, 4)
            << deg << " deg: box bound " << l.box_w << " x " << l.box_h << ", pitch " << l.pitch;
    }
    for (double deg : {30.0, 45.0, -45.0, 10.0, -30.0, 60.0, 17.0, -117.0, 0.001, 89.999, 135.0})
        for (const auto& sz : {std::pair{1000, 700}, std::pair{211, 157}, std::pair{4096, 2160}})
            check(rotation_plan(deg, sz.first, sz.second, Border::Reflect), sz.first, sz.second,
                  sz.first + 37, sz.second - 11,
                  std::to_string(sz.first) + "x" + std::to_string(sz.second) + " rotation " +
                      std::to_string(deg));
    // Rotations with a scale (the source stepped by sc per output; no longer about the centre)
    // and resizes.
    for (double sc : {0.5, 0.7, 1.3}) {
        WarpPlan p = rotation_plan(45.0, 1024, 1024, Border::Mirror);
        for (int i : {0, 1, 3, 4}) p.m[i] *= sc;
        check(p, 1024, 1024, 1024, 1024, "rotation by 45 deg scaled by " + std::to_string(sc));
    }
    check(resize_plan(1024, 1024, 2048, 2048, Border::Mirror), 1024, 1024, 2048, 2048, "zoom x2");
    check(resize_plan(300, 200, 2047, 1333, Border::Mirror), 300, 200, 2047, 1333, "zoom x6.8");
    check(resize_plan(2048, 2048, 1500, 1500, Border::Mirror), 2048, 2048, 1500, 1500,
          "down-scale");
    EXPECT_GT(plans, 170);
}

// The recursive fused kernel on maps beyond plain rotations: angles where a coefficient of the map
// is zero or tiny (90, 180 degrees; 0.001 degrees), a flip, a shear, rotations with a zoom or a
// down-scale, onto outputs much wider than the source, and a destination sub-view (only the view
// written: the rest of the buffer keeps its NaN poison).
TEST(CudaWarpRec, OtherAffineMaps) {
    UPRES_REQUIRE_GPU();
    const Image<float> host = random_image<float>(211, 157, 1, 2300);
    const Image<float> dev = clone(host.view(), Location::Device);
    const ImageView<const float> src(dev.view());
    auto with = [](WarpPlan p, double a, double b, double c, double d, double e, double f) {
        const double m[6] = {a, b, c, d, e, f};
        for (int i = 0; i < 6; ++i) p.m[i] = m[i];
        return p;
    };
    for (Border border : {Border::Mirror, Border::Reflect, Border::Wrap, Border::Constant}) {
        const WarpPlan r30 = rotation_plan(30.0, 211, 157, border);
        const std::pair<std::string, WarpPlan> plans[] = {
            {"90 degrees", rotation_plan(90.0, 211, 157, border)},
            {"180 degrees", rotation_plan(180.0, 211, 157, border)},
            {"0.001 degrees", rotation_plan(0.001, 211, 157, border)},
            {"-135 degrees", rotation_plan(-135.0, 211, 157, border)},
            {"flip", with(r30, -1.0, 0.0, 210.0, 0.0, 1.0, 0.0)},
            {"shear", with(r30, 0.9, 0.35, -20.0, -0.2, 1.1, 7.25)},
            {"rotation, zoom 1.8", with(r30, 0.48, -0.28, 60.0, 0.28, 0.48, 20.0)},
            {"rotation, down-scale 1.4", with(r30, 1.21, -0.7, 30.0, 0.7, 1.21, -40.0)}};
        for (const auto& [name, p] : plans) {
            rec_vs_two_pass(src, 190, 170, p, 2e-5, name);
            rec_vs_two_pass(src.sub(5, 3, 64, 41), 301, 9, p, 2e-5, name + ", wide output");
        }
        Image<float> big = nan_device_image(260, 200);
        const ImageView<float> view = big.view().sub(17, 9, 203, 171);
        cuda::warp_bspline_rec(span_of(src), span_of(view), r30, 0, nullptr);
        const Image<float> whole = clone(ImageView<const float>(big.view()));
        const Image<float> ref = rec_run(src, 203, 171, r30, -1);
        std::int64_t wrong = 0, touched = 0;
        for (int y = 0; y < 200; ++y)
            for (int x = 0; x < 260; ++x) {
                const bool in = x >= 17 && x < 17 + 203 && y >= 9 && y < 9 + 171;
                if (in)
                    wrong += !(whole(x, y) == ref(x - 17, y - 9));
                else
                    touched += !std::isnan(whole(x, y));
            }
        EXPECT_EQ(wrong, 0) << to_string(border);
        EXPECT_EQ(touched, 0) << to_string(border);
    }
}

// The maps of the tiled-vs-per-output tests: geo 0 and 1 rotations by 30 and -117 degrees onto
// (w + 9) x (h - 5), 2 an up-scale to (2w + 3) x (2h - 1), 3 a down-scale to w/2 x h/3.
WarpPlan tiled_case(int geo, int w, int h, Border border, int& dw, int& dh) {
    dw = geo >= 2 ? (geo == 2 ? 2 * w + 3 : w / 2) : w + 9;
    dh = geo >= 2 ? (geo == 2 ? 2 * h - 1 : h / 3) : h - 5;
    WarpPlan p = geo == 0   ? rotation_plan(30.0, w, h, border)
                 : geo == 1 ? rotation_plan(-117.0, w, h, border)
                            : resize_plan(w, h, dw, dh, border);
    p.pad = 0;  // the source is read as given (coefficients or pixels)
    return p;
}

using Sched = WarpScheduleOverride;

// Plan p with WarpPlan::schedule `schedule` into a dw x dh device image, copied to the host.
// Where the forced kernel cannot run the plan (cuda::warp refuses it: the per-output kernel on
// bilinear affine maps, the tiled kernel on nearest or beyond its shared-memory cap), the plan
// runs on the kernel the policy takes without it (the split kernel, resp. the policy's choice),
// so that the sweeps below compare every kernel that exists for a plan.
template <class T>
Image<T> on_schedule(const ImageView<const T>& src, WarpPlan p, int dw, int dh, Sched schedule) {
    Image<T> d(dw, dh, src.channels(), Location::Device);
    p.schedule = schedule;
    try {
        cuda::warp(span_of(src), span_of(d.view()), p, nullptr);
    } catch (const Error& e) {
        if (e.code() != ErrorCode::InvalidArgument || schedule == Sched::Policy) throw;
        p.schedule = schedule == Sched::PerOutput ? Sched::NoTiled : Sched::Policy;
        cuda::warp(span_of(src), span_of(d.view()), p, nullptr);
    }
    return clone(ImageView<const T>(d.view()));
}

// Plan p on the per-output kernels (Sched::PerOutput) into *per_output and on the tiled kernel
// (Sched::Tiled) into *tiled, both copied to the host.
template <class T>
void both_schedules(const ImageView<const T>& src, const WarpPlan& p, int dw, int dh,
                    Image<T>* per_output, Image<T>* tiled) {
    *per_output = on_schedule(src, p, dw, dh, Sched::PerOutput);
    *tiled = on_schedule(src, p, dw, dh, Sched::Tiled);
}

// The tiled shared-memory kernel (the default for Linear, Keys cubic and B-spline on float samples)
// and the per-output kernels (Sched::PerOutput) compute the same function: every border,
// 1, 3 and 4 channels, rotations (tiles whose box crosses the border, boxes wholly outside), an
// upscale and a downscale, on whole images (rows of 204 pixels, aligned for every channel count:
// boxes inside the image staged 16 bytes per copy) and on device sub-views 3 pixels in (rows
// unaligned for 1 and 3 channels: staged sample by sample; aligned for 4).
TEST(CudaWarpTiled, MatchesPerOutputKernels) {
    UPRES_REQUIRE_GPU();
    std::uint32_t seed = 1500;
    for (int ch : {1, 3, 4}) {
        const Image<float> host = random_image<float>(204, 141, ch, seed++);
        const Image<float> dev = clone(host.view(), Location::Device);
        for (bool sub : {false, true}) {
            const ImageView<const float> src =
                sub ? ImageView<const float>(dev.view()).sub(3, 2, 197, 130)
                    : ImageView<const float>(dev.view());
            const int w = src.width(), h = src.height();
            for (Interp interp : {Interp::Linear, Interp::Cubic, Interp::BSpline})
                for (Border border : {Border::Mirror, Border::Reflect, Border::Wrap,
                                      Border::Nearest, Border::Constant})
                    for (int geo = 0; geo < 4; ++geo) {
                        int dw = 0, dh = 0;
                        WarpPlan p = tiled_case(geo, w, h, border, dw, dh);
                        p.interp = interp;
                        if (interp == Interp::Cubic && geo == 1) p.cubic_a = -0.75;  // settable a
                        Image<float> ha, hb;
                        both_schedules<float>(src, p, dw, dh, &ha, &hb);
                        EXPECT_TRUE(check_close<float>(hb.view(), ha.view(), interp, 2e-5))
                            << to_string(interp) << " " << to_string(border) << " geo " << geo
                            << " channels " << ch << (sub ? " sub-view" : "");
                    }
        }
    }
}
#endif

#if UPRES_HAVE_CUDA
// u8 / u16 images with Linear and Keys cubic take the tiled kernel too (samples staged as float;
// boxes inside the image copied row by row, boxes across a side through the border maps). Its float
// coordinates (stepped from the tile origin, ~1e-5 pixel from the per-output kernel's double
// ones) move a value by up to ~0.005 of a level on random u8 data, so a few outputs round the
// other way: at most 1 level (u8, at most 0.5% of the samples; 0.05% measured on an H200) or
// 2 levels (u16, whose values are 257 times finer: 1 level, 5% of the samples measured).
// Every border, 1 / 3 / 4 channels, a = -0.5 and -0.75, rotations, up- and down-scales, sub-views.
template <class T>
void integer_tiled_vs_per_output(std::uint32_t seed, Interp interp) {
    constexpr bool kU8 = std::is_same_v<T, std::uint8_t>;
    constexpr double kTol = kU8 ? 1.0 : 2.0;
    double worst_frac = 0.0, worst_abs = 0.0;
    for (int ch : {1, 3, 4}) {
        // Rows of 188 pixels (188 C samples, a multiple of 4), so whole-image boxes take the
        // 4-sample staging; the sub-view below, 5 pixels in, the per-sample one for 1 and 3
        // channels (4 channels: aligned, the 4-sample staging again).
        const Image<T> host = random_image<T>(188, 133, ch, seed++);
        const Image<T> dev = clone(host.view(), Location::Device);
        for (bool sub : {false, true}) {
            const ImageView<const T> src = sub ? ImageView<const T>(dev.view()).sub(5, 3, 179, 127)
                                               : ImageView<const T>(dev.view());
            const int w = src.width(), h = src.height();
            for (Border border :
                 {Border::Mirror, Border::Reflect, Border::Wrap, Border::Nearest, Border::Constant})
                for (int geo = 0; geo < 4; ++geo) {
                    int dw = 0, dh = 0;
                    WarpPlan p = tiled_case(geo, w, h, border, dw, dh);
                    p.interp = interp;
                    if (geo != 0) p.cubic_a = -0.75;
                    p.fill = static_cast<float>(0.25 * PixelTraits<T>::max_value);
                    Image<T> ha, hb;
                    both_schedules<T>(src, p, dw, dh, &ha, &hb);
                    const std::string what = std::string(to_string(interp)) + " " +
                                             to_string(border) + " geo " + std::to_string(geo) +
                                             " channels " + std::to_string(ch) +
                                             (sub ? " sub-view" : "");
                    EXPECT_TRUE(check_close<T>(hb.view(), ha.view(), interp, kTol)) << what;
                    const Stats any = compare<T>(hb.view(), ha.view(), 0.0);
                    worst_abs = std::max(worst_abs, any.max_abs);
                    worst_frac = std::max(
                        worst_frac, static_cast<double>(any.over) / static_cast<double>(any.total));
                    if constexpr (kU8) {
                        EXPECT_LE(any.over, any.total / 200) << what << ": " << describe(any);
                    }
                    // The default (the tiled kernel for these maps, but the split one for
                    // Linear on 1 or 4 channels) and schedule 4 (no tiled kernel: the split one
                    // for Linear) compute the same function too.
                    if (geo < 2) {
                        const Image<T> hd = on_schedule<T>(src, p, dw, dh, Sched::Policy);
                        EXPECT_TRUE(check_close<T>(hd.view(), ha.view(), interp, kTol)) << what;
                        const Image<T> hs = on_schedule<T>(src, p, dw, dh, Sched::NoTiled);
                        EXPECT_TRUE(check_close<T>(hs.view(), ha.view(), interp, kTol)) << what;
                    }
                }
        }
    }
    std::printf(
        "[ info     ] %s, %s tiled vs per-output: largest difference %g, %.3f%% of "
        "the samples differ at most\n",
        kU8 ? "u8" : "u16", to_string(interp), worst_abs, 100.0 * worst_frac);
}

TEST(CudaWarpTiled, IntegerSourcesMatchPerOutputKernels) {
    UPRES_REQUIRE_GPU();
    for (Interp interp : {Interp::Cubic, Interp::Linear}) {
        integer_tiled_vs_per_output<std::uint8_t>(1600, interp);
        integer_tiled_vs_per_output<std::uint16_t>(1700, interp);
    }
}

// A Flow or Remap plan by the device field dfield on a w x h source, read as given (pad 0:
// coefficients or pixels), with a fill value of a quarter of T's range.
template <class T>
WarpPlan field_plan(int w, int h, Border border, Transform::Kind kind, const Image<float>& dfield,
                    Interp interp) {
    WarpPlan p = rotation_plan(0.0, w, h, border);
    p.pad = 0;
    p.kind = kind;
    p.field = span_of(ImageView<const float>(dfield.view()));
    p.interp = interp;
    p.fill = static_cast<float>(0.25 * PixelTraits<T>::max_value);
    return p;
}

// Remap and Flow take warp_field_kernel (the field's coordinate split in float, a fixed-tap path
// for interior outputs) by default; Perspective the tiled kernel with kPersp (float sources and
// u8 / u16 Keys cubic; homography 0) or warp_persp_kernel (1-channel Linear, the others, and
// homography 1, whose w' changes sign), and both are also forced (Sched::Tiled where it
// applies, Sched::NoTiled); Sched::PerOutput forces warp_kernel (double coordinates per
// output): the same function. A smooth field of up to ~7 pixels with a fractional offset,
// so that the outputs near the sides map outside (the exact per-output path inside the kernel);
// every border, 1 to 4 channels, whole images and sub-views, float, u8 and u16 sources (u8: at
// most one level apart, where the float fraction's last ulp rounds a value the other way; u16,
// whose levels are 257 times finer: 2, as in integer_tiled_vs_per_output).
template <class T>
void field_vs_per_output(std::uint32_t seed) {
    constexpr bool kInt = !std::is_same_v<T, float>;
    constexpr double kTol = std::is_same_v<T, std::uint8_t> ? 1.0 : kInt ? 2.0 : 2e-5;
    for (int ch : {1, 2, 3, 4}) {
        const Image<T> host = random_image<T>(173, 119, ch, seed++);
        const Image<T> dev = clone(host.view(), Location::Device);
        for (bool sub : {false, true}) {
            const ImageView<const T> src = sub ? ImageView<const T>(dev.view()).sub(4, 3, 161, 110)
                                               : ImageView<const T>(dev.view());
            const int w = src.width(), h = src.height(), dw = w + 7, dh = h - 4;
            // Perspective (warp_persp_kernel): a keystone about the centre whose corners map
            // outside, and a homography whose denominator is 0 on column 50 (NaN coordinates)
            // and tiny beside it (huge ones).
            for (int hk = 0; hk < 2; ++hk) {
                const double hs[2][9] = {{0.97, 0.12, -6.0, -0.1, 1.04, 5.5, 6e-4, -4e-4, 1.0},
                                         {0.5, 0.0, 1.25, 0.0, 0.5, 0.75, -1.0 / 50.0, 0.0, 1.0}};
                for (Interp interp : {Interp::Linear, Interp::Cubic, Interp::BSpline}) {
                    if (kInt && interp == Interp::BSpline) continue;
                    for (Border border : {Border::Mirror, Border::Reflect, Border::Wrap,
                                          Border::Nearest, Border::Constant}) {
                        WarpPlan p = rotation_plan(0.0, w, h, border);
                        p.pad = 0;
                        p.kind = Transform::Kind::Perspective;
                        std::copy(hs[hk], hs[hk] + 9, p.m);
                        p.interp = interp;
                        p.fill = static_cast<float>(0.25 * PixelTraits<T>::max_value);
                        const Image<T> a = on_schedule(src, p, dw, dh, Sched::PerOutput);
                        for (Sched schedule : {Sched::Policy, Sched::Tiled, Sched::NoTiled}) {
                            const Image<T> b = on_schedule(src, p, dw, dh, schedule);
                            EXPECT_TRUE(check_close<T>(b.view(), a.view(), interp, kTol))
                                << to_string(interp) << " " << to_string(border) << " homography "
                                << hk << " channels " << ch << (sub ? " sub-view" : "")
                                << " schedule " << static_cast<int>(schedule);
                        }
                    }
                }
            }
            for (Transform::Kind kind : {Transform::Kind::Flow, Transform::Kind::Remap}) {
                Image<float> field(dw, dh, 2);
                for (int y = 0; y < dh; ++y)
                    for (int x = 0; x < dw; ++x) {
                        const double dx = 6.0 * std::sin(0.05 * y + 0.3) + 0.37;
                        const double dy = 5.0 * std::cos(0.04 * x) - 0.21;
                        field(x, y, 0) =
                            static_cast<float>(kind == Transform::Kind::Flow ? dx : x * 0.9 + dx);
                        field(x, y, 1) =
                            static_cast<float>(kind == Transform::Kind::Flow ? dy : y * 1.1 + dy);
                    }
                const Image<float> dfield = clone(field.view(), Location::Device);
                for (Interp interp : {Interp::Linear, Interp::Cubic, Interp::BSpline}) {
                    if (kInt && interp == Interp::BSpline) continue;  // float coefficients only
                    for (Border border : {Border::Mirror, Border::Reflect, Border::Wrap,
                                          Border::Nearest, Border::Constant}) {
                        const WarpPlan p = field_plan<T>(w, h, border, kind, dfield, interp);
                        const Image<T> a = on_schedule(src, p, dw, dh, Sched::PerOutput);
                        const Image<T> b = on_schedule(src, p, dw, dh, Sched::Policy);
                        EXPECT_TRUE(check_close<T>(b.view(), a.view(), interp, kTol))
                            << to_string(interp) << " " << to_string(border)
                            << (kind == Transform::Kind::Flow ? " flow" : " remap") << " channels "
                            << ch << (sub ? " sub-view" : "");
                    }
                }
            }
        }
    }
}

TEST(CudaWarpField, MatchesPerOutputKernel) {
    UPRES_REQUIRE_GPU();
    field_vs_per_output<float>(1800);
    field_vs_per_output<std::uint8_t>(1900);
    field_vs_per_output<std::uint16_t>(2000);
}

// The split kernels' border band (docs/ops/warp.md, "CUDA schedules"): outputs near or beyond the
// border whose taps stay within one period of the image ([-(n - 1), 2n - 2]) read border-extended
// taps at their float coordinate (sample_extended: Mirror, Reflect, Wrap, and Nearest for
// Linear); outputs farther out, and every output of the Constant border that is not interior,
// keep the exact per-output path, in the same warps. Against the per-output kernel (schedule 1):
// warp_affine_kernel (Linear, schedule 4) on a rotation whose corners map outside, the same
// rotation scaled by 3 (most outputs beyond one period, the band between them and the image) and
// a 6 x 5 image (tiny periods); warp_field_kernel (Linear, Keys cubic, B-spline) on a flow whose
// every 5th column and 3rd row jumps 1.3 to 2.6 image widths away (beyond one period, lanes
// beside band and interior lanes). Float, u8, u16; 1 to 4 channels; whole images and sub-views.
template <class T>
void split_border_band(std::uint32_t seed) {
    constexpr bool kInt = !std::is_same_v<T, float>;
    constexpr double kTol = std::is_same_v<T, std::uint8_t> ? 1.0 : kInt ? 2.0 : 2e-5;
    for (int ch : {1, 2, 3, 4}) {
        for (int size = 0; size < 2; ++size) {
            const int iw = size == 0 ? 157 : 6, ih = size == 0 ? 118 : 5;
            const Image<T> host = random_image<T>(iw, ih, ch, seed++);
            const Image<T> dev = clone(host.view(), Location::Device);
            for (bool sub : {false, true}) {
                if (sub && size == 1) continue;
                const ImageView<const T> src =
                    sub ? ImageView<const T>(dev.view()).sub(3, 2, iw - 7, ih - 5)
                        : ImageView<const T>(dev.view());
                const int w = src.width(), h = src.height();
                const int dw = size == 0 ? w + 9 : 23, dh = size == 0 ? h - 5 : 19;
                for (Border border : {Border::Mirror, Border::Reflect, Border::Wrap,
                                      Border::Nearest, Border::Constant}) {
                    const std::string what = std::string(to_string(border)) + " channels " +
                                             std::to_string(ch) + (sub ? " sub-view" : "") +
                                             (size == 1 ? " 6 x 5" : "");
                    for (double scale : {1.0, 3.0}) {
                        WarpPlan p = rotation_plan(30.0, w, h, border);
                        p.pad = 0;
                        p.interp = Interp::Linear;
                        p.fill = static_cast<float>(0.25 * PixelTraits<T>::max_value);
                        const double cx = 0.5 * (w - 1), cy = 0.5 * (h - 1);
                        for (int i : {0, 1, 3, 4}) p.m[i] *= scale;
                        p.m[2] = cx - p.m[0] * cx - p.m[1] * cy;
                        p.m[5] = cy - p.m[3] * cx - p.m[4] * cy;
                        const Image<T> a = on_schedule(src, p, dw, dh, Sched::PerOutput);
                        const Image<T> b = on_schedule(src, p, dw, dh, Sched::NoTiled);
                        EXPECT_TRUE(check_close<T>(b.view(), a.view(), p.interp, kTol))
                            << what << " affine scale " << scale;
                    }
                    Image<float> field(dw, dh, 2);
                    for (int y = 0; y < dh; ++y)
                        for (int x = 0; x < dw; ++x) {
                            const bool far = x % 5 == 2 || y % 3 == 1;
                            const double k = 1.3 + 0.1 * ((x + y) % 14);
                            field(x, y, 0) = static_cast<float>(
                                far ? (x % 2 ? k : -k) * w : 4.5 * std::sin(0.07 * y) + 0.31);
                            field(x, y, 1) = static_cast<float>(
                                far ? (y % 2 ? -k : k) * h : 3.5 * std::cos(0.05 * x) - 0.27);
                        }
                    const Image<float> dfield = clone(field.view(), Location::Device);
                    for (Interp interp : {Interp::Linear, Interp::Cubic, Interp::BSpline}) {
                        if (kInt && interp == Interp::BSpline) continue;  // float coefficients
                        const WarpPlan p =
                            field_plan<T>(w, h, border, Transform::Kind::Flow, dfield, interp);
                        const Image<T> a = on_schedule(src, p, dw, dh, Sched::PerOutput);
                        const Image<T> b = on_schedule(src, p, dw, dh, Sched::Policy);
                        EXPECT_TRUE(check_close<T>(b.view(), a.view(), interp, kTol))
                            << what << " flow " << to_string(interp);
                    }
                }
            }
        }
    }
}

TEST(CudaWarpSplit, BorderBandMatchesPerOutputKernel) {
    UPRES_REQUIRE_GPU();
    split_border_band<float>(2100);
    split_border_band<std::uint8_t>(2200);
    split_border_band<std::uint16_t>(2300);
}
#endif

#if UPRES_HAVE_CUDA
// ---------------------------------------------------------------- separable schedule
// Axis-aligned maps of the separable tests on a w x h source into *dw x *dh: geo 0 an up-scale
// to (2w + 3) x (2h - 1), 1 a down-scale to w/2 x h/3, 2 a non-integer up-scale, 3 an Affine
// flip along x with a vertical stretch (m0 < 0: the column taps run backwards), 4 an Affine
// flip along y (the row window moves up) with half-pixel shifts along x (Nearest's ties).
WarpPlan separable_case(int geo, int w, int h, Border border, int& dw, int& dh) {
    const int sizes[5][2] = {{2 * w + 3, 2 * h - 1},
                             {w / 2, h / 3},
                             {3 * w / 2 + 1, 5 * h / 4},
                             {w + 7, h - 3},
                             {w - 2, h + 5}};
    dw = sizes[geo][0], dh = sizes[geo][1];
    WarpPlan p = resize_plan(w, h, dw, dh, border);
    p.pad = 0;
    if (geo == 3) {
        p.kind = Transform::Kind::Affine;
        const double m[6] = {-0.8, 0.0, w - 1 + 0.3, 0.0, 1.3, -2.2};
        std::copy(m, m + 6, p.m);
    } else if (geo == 4) {
        p.kind = Transform::Kind::Affine;
        const double m[6] = {1.0, 0.0, 0.5, 0.0, -1.05, h + 1.5};
        std::copy(m, m + 6, p.m);
    }
    return p;
}

// Plan p on the separable kernel (Sched::Separable), the policy's and the per-output kernels,
// copied to the host.
template <class T>
void separable_schedules(const ImageView<const T>& src, const WarpPlan& p, int dw, int dh,
                         Image<T>* separable, Image<T>* by_default, Image<T>* per_output) {
    *separable = on_schedule(src, p, dw, dh, Sched::Separable);
    *by_default = on_schedule(src, p, dw, dh, Sched::Policy);
    *per_output = on_schedule(src, p, dw, dh, Sched::PerOutput);
}

// The separable kernel (the default for resizes) against the reference, and against the
// per-output kernels: every interpolation (B-spline on float samples, read as coefficients),
// every border, 1 to 4 channels, up- and down-scales, flips, whole images and device sub-views.
// Both CUDA schedules take the coordinates in double with the host's roundings; the per-output
// kernels step some of them in float (warp_affine_kernel) and take the border rule in float
// (sample_point<float>), so values differ by float rounding: f32 within 2e-5 of the unit range;
// integer outputs within 1 level (u8, at most 0.5% of the samples on the resizes) or 2 levels
// (u16). Nearest is
// compared with the reference only: where a mirrored coordinate lands on a half-integer, the
// per-output kernels' float border rule can round the tie the other way than the reference's
// double one (a whole column at once, in the flip of geo 3), while the separable kernel maps it
// in double as the reference does. The default must be the separable kernel itself (identical
// bytes).
template <class T>
void separable_vs_per_output(std::uint32_t seed) {
    constexpr bool kFloat = std::is_same_v<T, float>;
    constexpr bool kU8 = std::is_same_v<T, std::uint8_t>;
    constexpr double kTol = kFloat ? 2e-5 : (kU8 ? 1.0 : 2.0);
    double worst_abs = 0.0, worst_frac = 0.0;
    for (int ch = 1; ch <= 4; ++ch) {
        const Image<T> host = random_image<T>(173, 119, ch, seed++);
        const Image<T> dev = clone(host.view(), Location::Device);
        for (bool sub : {false, true}) {
            const ImageView<const T> src = sub ? ImageView<const T>(dev.view()).sub(5, 2, 161, 113)
                                               : ImageView<const T>(dev.view());
            const ImageView<const T> hsrc =
                sub ? ImageView<const T>(host.view()).sub(5, 2, 161, 113)
                    : ImageView<const T>(host.view());
            const int w = src.width(), h = src.height();
            for (Interp interp : kInterps) {
                if (interp == Interp::BSpline && !kFloat) continue;  // coefficients are float
                for (Border border : kBorders)
                    for (int geo = 0; geo < 5; ++geo) {
                        int dw = 0, dh = 0;
                        WarpPlan p = separable_case(geo, w, h, border, dw, dh);
                        p.interp = interp;
                        if (geo == 2) p.cubic_a = -0.75;
                        p.fill = static_cast<float>(0.25 * PixelTraits<T>::max_value);
                        Image<T> sep, def, per;
                        separable_schedules<T>(src, p, dw, dh, &sep, &def, &per);
                        const std::string what = std::string(to_string(interp)) + " " +
                                                 to_string(border) + " geo " + std::to_string(geo) +
                                                 " channels " + std::to_string(ch) +
                                                 (sub ? " sub-view" : "");
                        EXPECT_EQ(0,
                                  std::memcmp(sep.data(), def.data(),
                                              sizeof(T) * static_cast<std::size_t>(dw) * dh * ch))
                            << "the default is not the separable kernel: " << what;
                        Image<T> ref(dw, dh, ch);
                        ref::warp(span_of(hsrc), span_of(ref.view()), p);
                        EXPECT_TRUE(
                            check_close<T>(sep.view(), ref.view(), interp, exact_tol<T>(interp)))
                            << what << " (against the reference)";
                        if (interp == Interp::Nearest) continue;
                        EXPECT_TRUE(check_close<T>(sep.view(), per.view(), interp, kTol)) << what;
                        const Stats any = compare<T>(sep.view(), per.view(), 0.0);
                        worst_abs = std::max(worst_abs, any.max_abs);
                        worst_frac = std::max(worst_frac, static_cast<double>(any.over) /
                                                              static_cast<double>(any.total));
                        // geo 3 and 4 shift by half-pixels: many exact ties between two
                        // levels, which float-stepped coordinates round either way.
                        if (kU8 && geo < 3) {
                            EXPECT_LE(any.over, any.total / 200) << what << ": " << describe(any);
                        }
                    }
            }
        }
    }
    std::printf(
        "[ info     ] %s, separable vs per-output: largest difference %g, %.3f%% of "
        "the samples differ at most\n",
        kFloat ? "f32" : (kU8 ? "u8" : "u16"), worst_abs, 100.0 * worst_frac);
}

TEST(CudaWarpSeparable, MatchesPerOutputKernels) {
    UPRES_REQUIRE_GPU();
    separable_vs_per_output<float>(1800);
    separable_vs_per_output<std::uint8_t>(1810);
    separable_vs_per_output<std::uint16_t>(1820);
}

// A rotation by 0 degrees is axis-aligned too (m1 = m3 = 0) and takes the separable kernel; a
// rotation by 90 degrees does not (m0 = m4 = 0), and still matches the reference.
TEST(CudaWarpSeparable, OnlyAxisAlignedMaps) {
    UPRES_REQUIRE_GPU();
    const Image<float> host = random_image<float>(64, 48, 1, 1830);
    const Image<float> dev = clone(host.view(), Location::Device);
    for (double deg : {0.0, 90.0}) {
        WarpPlan p = rotation_plan(deg, 64, 48, Border::Mirror);
        p.interp = Interp::Linear;
        Image<float> sep, def, per;
        separable_schedules<float>(ImageView<const float>(dev.view()), p, 64, 48, &sep, &def, &per);
        EXPECT_TRUE(check_close<float>(sep.view(), per.view(), p.interp, 2e-5)) << deg;
        EXPECT_TRUE(check_close<float>(def.view(), per.view(), p.interp, 2e-5)) << deg;
        if (deg == 0.0) {
            EXPECT_EQ(0, std::memcmp(sep.data(), def.data(), sizeof(float) * 64 * 48));
            EXPECT_TRUE(check_close<float>(sep.view(), host.view(), p.interp, 1e-6));  // identity
        }
    }
}

// A forced kernel that cannot run a plan is refused, never replaced by another kernel (a
// benchmark measures what it names): the separable kernel on a rotation, the per-output kernel
// on a bilinear affine map (only the split kernel computes it), the tiled kernel on a flow field.
TEST(CudaWarpSchedule, ForcedKernelsRefusedWhereTheyCannotRun) {
    UPRES_REQUIRE_GPU();
    const Image<float> img = clone(random_image<float>(64, 48, 1, 1831).view(), Location::Device);
    const Span2D<const float> src = span_of(ImageView<const float>(img.view()));
    Image<float> out(64, 48, 1, Location::Device);
    WarpPlan rot = rotation_plan(30.0, 64, 48, Border::Mirror);
    rot.interp = Interp::Cubic;
    rot.pad = 0;
    rot.schedule = Sched::Separable;
    expect_error([&] { cuda::warp(src, span_of(out.view()), rot, nullptr); },
                 ErrorCode::InvalidArgument, "'separable' cannot run this plan");
    rot.interp = Interp::Linear;
    rot.schedule = Sched::PerOutput;
    expect_error([&] { cuda::warp(src, span_of(out.view()), rot, nullptr); },
                 ErrorCode::InvalidArgument, "its kernel is 'split'");
    rot.schedule = Sched::Tiled;  // runnable: no error
    EXPECT_NO_THROW(cuda::warp(src, span_of(out.view()), rot, nullptr));
}
#endif

#if UPRES_HAVE_CUDA
// Small cases for compute-sanitizer (memcheck, racecheck): every kernel family once or twice,
// on sizes where the whole suite runs in seconds under the tools.
TEST(CudaWarpSanitize, SmallEverything) {
    UPRES_REQUIRE_GPU();
    const Image<float> f = random_image<float>(19, 13, 3, 1200);
    const Image<std::uint8_t> u = random_image<std::uint8_t>(7, 3, 1, 1201);
    const Image<std::uint8_t> u3 = random_image<std::uint8_t>(11, 9, 3, 1204);  // RGB: tiled
    for (Transform::Kind kind : kKinds)
        for (Interp interp : kInterps)
            for (Border border : {Border::Mirror, Border::Nearest, Border::Wrap}) {
                WarpOptions o;
                o.interp = interp;
                o.border = border;
                o.prefilter = 7;
                EXPECT_TRUE(cuda_vs_reference<float>(f.view(), 17, 15, kind, o, 1,
                                                     exact_tol<float>(interp)));
                EXPECT_TRUE(cuda_vs_reference<std::uint8_t>(u.view(), 5, 9, kind, o, 2,
                                                            exact_tol<std::uint8_t>(interp)));
                EXPECT_TRUE(cuda_vs_reference<std::uint8_t>(u3.view(), 21, 17, kind, o, 2,
                                                            exact_tol<std::uint8_t>(interp)));
                o.fast_texture = interp == Interp::Linear || interp == Interp::BSpline;
                EXPECT_TRUE(cuda_vs_reference<float>(f.view(), 17, 15, kind, o, 1, 0.05));
            }
    WarpOptions aa;
    aa.interp = Interp::Cubic;
    aa.antialias = true;
    EXPECT_TRUE(cuda_vs_reference<float>(f.view(), 6, 5, Transform::Kind::Resize, aa, 1, 5e-5));
    const Image<float> r = random_image<float>(70, 45, 1, 1203);
    const Image<float> dr = clone(r.view(), Location::Device);
    for (Border border : {Border::Mirror, Border::Constant})
        rec_vs_two_pass(ImageView<const float>(dr.view()).sub(1, 2, 66, 40), 80, 50,
                        rotation_plan(30.0, 66, 40, border), 2e-5, "sanitizer");
}
#endif

// ---------------------------------------------------------------- fast texture mode
// Documented tolerance (docs/ops/warp.md): 8-bit fractional weights of the texture unit.
// Linear: |error| <= max neighbour difference / 256; B-spline: 4 fetches on the coefficients.
TEST(CudaWarpTexture, WithinTolerance) {
    UPRES_REQUIRE_GPU();
    const Image<float> f = random_image<float>(131, 97, 1, 1000);
    const Image<float> f2 = random_image<float>(64, 50, 2, 1001);
    const Image<std::uint8_t> u = random_image<std::uint8_t>(70, 60, 3, 1002);
    for (Interp interp : kInterps)
        for (Border border : kBorders)
            for (Transform::Kind kind :
                 {Transform::Kind::Affine, Transform::Kind::Resize, Transform::Kind::Remap}) {
                WarpOptions o;
                o.interp = interp;
                o.border = border;
                o.fast_texture = true;
                o.prefilter = 15;
                const double ft = interp == Interp::BSpline ? 0.03 : 5e-3;
                EXPECT_TRUE(cuda_vs_reference<float>(f.view(), 120, 100, kind, o, 3, ft));
                EXPECT_TRUE(cuda_vs_reference<float>(f2.view(), 40, 70, kind, o, 4, ft));
                EXPECT_TRUE(cuda_vs_reference<std::uint8_t>(u.view(), 80, 50, kind, o, 5,
                                                            1.0 + 255.0 * ft));
            }
}

TEST(CudaWarpTexture, NotUsedUnlessAsked) {
    UPRES_REQUIRE_GPU();
    // The exact path is bit-for-bit independent of whether texture mode was used before.
    const Image<float> f = random_image<float>(80, 80, 1, 1100);
    Image<float> d = clone(f.view(), Location::Device);
    Image<float> a(80, 80, 1, Location::Device), b(80, 80, 1, Location::Device);
    WarpOptions o;
    o.interp = Interp::Linear;
    const Transform t = Transform::make_rotation(12.0, 80, 80);
    warp(ImageView<const float>(d.view()), a.view(), t, o, cuda_ctx());
    WarpOptions ot = o;
    ot.fast_texture = true;
    warp(ImageView<const float>(d.view()), b.view(), t, ot, cuda_ctx());
    warp(ImageView<const float>(d.view()), b.view(), t, o, cuda_ctx());
    const Image<float> ha = clone(ImageView<const float>(a.view())),
                       hb = clone(ImageView<const float>(b.view()));
    EXPECT_EQ(0, std::memcmp(ha.data(), hb.data(), sizeof(float) * 80 * 80));
}

}  // namespace
}  // namespace upres
