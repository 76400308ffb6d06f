// SRCNN fused tensor-core kernel (src/ops/srcnn/srcnn_fused_cuda.cu) against the double
// reference (ref::srcnn_forward), every precision, random fixed-seed 9-1-5 64/32 models, random
// images and real-photo crops, awkward sizes (the 13 x 13 receptive-field minimum, sizes that are
// no multiple of the 28 x 28 tile, one row of tiles), sub-image views with a row stride.
// Error: max |fused - reference| over the reference's output range (max - min). Tolerances
// (docs/ops/srcnn.md, "Fused tensor-core network"): measured worst case on these cases, with
// margin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <upres/image.hpp>
#include <upres/io.hpp>
#include <upres/srcnn.hpp>
#include "test_util.hpp"

#if UPRES_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "ops/srcnn/srcnn_backends.hpp"

namespace upres {
namespace {

using srcnn::cuda::FusedWeights;

// Trained-SRCNN-like random weights: N(0, 0.05) for layer 1, N(0, 0.1) for layers 2-3, small
// biases.
SrcnnModel random_model(std::uint32_t seed, int k1 = 9, int k2 = 1, int k3 = 5, int n1 = 64,
                        int n2 = 32) {
    std::mt19937 rng(seed);
    SrcnnModel m;
    m.scale = 3;
    const int outs[3] = {n1, n2, 1}, ins[3] = {1, n1, n2}, ks[3] = {k1, k2, k3};
    const double sd[3] = {0.05, 0.1, 0.1};
    for (int l = 0; l < 3; ++l) {
        SrcnnLayer& L = m.layers[l];
        L.out_channels = outs[l], L.in_channels = ins[l], L.kernel = ks[l];
        std::normal_distribution<float> wd(0.0f, static_cast<float>(sd[l]));
        std::normal_distribution<float> bd(0.0f, 0.02f);
        L.weights.resize(static_cast<std::size_t>(outs[l]) * ins[l] * ks[l] * ks[l]);
        for (float& v : L.weights) v = wd(rng);
        L.bias.resize(outs[l]);
        for (float& v : L.bias) v = bd(rng);
    }
    validate(m);
    return m;
}

constexpr SrcnnPrecision kPrecisions[] = {SrcnnPrecision::Fp32, SrcnnPrecision::Tf32,
                                          SrcnnPrecision::Fp16, SrcnnPrecision::Bf16};

// Max abs error over the output range (docs/ops/srcnn.md).
double tolerance(SrcnnPrecision p) {
    switch (p) {
        case SrcnnPrecision::Fp32:
            return 1e-5;  // measured <= 1.9e-6 (H200)
        case SrcnnPrecision::Tf32:
            return 2e-3;  // measured <= 8.1e-4
        case SrcnnPrecision::Fp16:
            return 2e-3;  // measured <= 8.1e-4
        default:
            return 1.5e-2;  // Bf16: measured <= 6.0e-3
    }
}

struct DevPlane {
    float* p = nullptr;
    ~DevPlane() {
        if (p) cudaFree(p);
    }
};

// Runs the fused kernel on `in` placed at (ox, oy) of a device buffer of pitch `pitch` floats
// (>= ox + width) whose other elements are NaN (a read outside the view shows), the output
// likewise in a second buffer. Returns the output view's contents.
Image<float> run_fused(const FusedWeights* fw, ImageView<const float> in, int ox = 0, int oy = 0,
                       int pitch = 0) {
    const int w = in.width(), h = in.height();
    if (pitch == 0) pitch = w + ox;
    const int rows = h + oy + 1;
    const std::size_t n = static_cast<std::size_t>(pitch) * rows;
    std::vector<float> host(n, std::nanf(""));
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            host[static_cast<std::size_t>(y + oy) * pitch + x + ox] = in(x, y);
    DevPlane din, dout;
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&din.p), n * 4), cudaSuccess);
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&dout.p), n * 4), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(din.p, host.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dout.p, host.data(), n * 4, cudaMemcpyHostToDevice), cudaSuccess);  // NaN
    const std::ptrdiff_t off = static_cast<std::ptrdiff_t>(oy) * pitch + ox;
    Span2D<const float> si{din.p + off, w, h, 1, pitch};
    Span2D<float> so{dout.p + off, w, h, 1, pitch};
    srcnn::cuda::fused_forward(fw, si, so, nullptr);
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<float> back(n);
    EXPECT_EQ(cudaMemcpy(back.data(), dout.p, n * 4, cudaMemcpyDeviceToHost), cudaSuccess);
    // Nothing outside the view was written.
    std::int64_t outside = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const int y = static_cast<int>(i / pitch) - oy, x = static_cast<int>(i % pitch) - ox;
        if ((x < 0 || x >= w || y < 0 || y >= h) && !std::isnan(back[i])) ++outside;
    }
    EXPECT_EQ(outside, 0) << "writes outside the output view";
    Image<float> out(w, h, 1);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            out.view()(x, y) = back[static_cast<std::size_t>(y + oy) * pitch + x + ox];
    return out;
}

Image<float> reference(ImageView<const float> in, const SrcnnModel& m) {
    Image<float> out(in.width(), in.height(), 1);
    ref::srcnn_forward(span_of(in), span_of(out.view()), m);
    return out;
}

// max |a - ref| / (max ref - min ref); non-finite values count as infinite error.
double rel_error(const Image<float>& a, const Image<float>& ref, int* wx = nullptr,
                 int* wy = nullptr) {
    double lo = 1e300, hi = -1e300, worst = 0.0;
    for (int y = 0; y < ref.height(); ++y)
        for (int x = 0; x < ref.width(); ++x) {
            lo = std::min(lo, double(ref.view()(x, y)));
            hi = std::max(hi, double(ref.view()(x, y)));
        }
    for (int y = 0; y < ref.height(); ++y)
        for (int x = 0; x < ref.width(); ++x) {
            const double d = std::abs(double(a.view()(x, y)) - double(ref.view()(x, y)));
            if (!(d <= worst)) {
                worst = std::isfinite(d) ? d : INFINITY;
                if (wx) *wx = x, *wy = y;
            }
        }
    return worst / std::max(hi - lo, 1e-30);
}

struct Prepared {
    FusedWeights* w = nullptr;
    Prepared(const SrcnnModel& m, SrcnnPrecision p)
        : w(srcnn::cuda::fused_prepare(m, p, nullptr)) {}
    ~Prepared() { srcnn::cuda::fused_release(w); }
};

// Checks every precision on one image (reference computed once); prints the measured errors.
void check_all(const SrcnnModel& m, const Image<float>& img, const std::string& what, int ox = 0,
               int oy = 0, int pitch = 0) {
    const Image<float> ref = reference(img.view(), m);
    for (SrcnnPrecision p : kPrecisions) {
        ASSERT_TRUE(srcnn::cuda::fused_supports(m, p));
        Prepared fw(m, p);
        const Image<float> got = run_fused(fw.w, img.view(), ox, oy, pitch);
        int wx = -1, wy = -1;
        const double e = rel_error(got, ref, &wx, &wy);
        std::cout << "[fused] " << what << " " << to_string(p) << " rel max err " << e << " at ("
                  << wx << ", " << wy << ")\n";
        EXPECT_LE(e, tolerance(p)) << what << " " << to_string(p) << " worst at (" << wx << ", "
                                   << wy << "): " << (wx >= 0 ? got.view()(wx, wy) : 0.0f) << " vs "
                                   << (wx >= 0 ? ref.view()(wx, wy) : 0.0f);
    }
}

TEST(SrcnnFusedCuda, MatchesReferenceOnRandomImagesAwkwardSizes) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(11);
    const int sizes[][2] = {{13, 13}, {13, 40}, {40, 13},   {28, 28},
                            {29, 57}, {56, 85}, {257, 131}, {1000, 37}};
    std::uint32_t seed = 100;
    for (const auto& s : sizes) {
        const Image<float> img = test::random_image<float>(s[0], s[1], 1, seed++, 0.0, 1.0);
        check_all(m, img, std::to_string(s[0]) + "x" + std::to_string(s[1]));
    }
}

TEST(SrcnnFusedCuda, MatchesReferenceOnPhotoCrops) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(12);
    const char* photos[] = {"camera.png", "baboon.jpg"};
    for (const char* name : photos) {
        const Image<float> photo = read_image(test::sample_path(name)).to<float>();
        ASSERT_GE(photo.width(), 300);
        ASSERT_GE(photo.height(), 200);
        // Channel 0 of a 300 x 200 crop at (17, 9), through a vector (GCC 12 misreads a direct
        // row copy as an over-read: -Wstringop-overread).
        const ImageView<const float> pv = photo.view();
        std::vector<float> vals;
        for (int y = 0; y < 200; ++y)
            for (int x = 0; x < 300; ++x) vals.push_back(pv(x + 17, y + 9, 0));
        Image<float> crop(300, 200, 1);
        for (int y = 0; y < 200; ++y)
            for (int x = 0; x < 300; ++x)
                crop.view()(x, y) = vals[static_cast<std::size_t>(y) * 300 + x];
        check_all(m, crop, name);
    }
}

TEST(SrcnnFusedCuda, SubImageViewWithStride) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(13);
    const Image<float> img = test::random_image<float>(61, 45, 1, 7, 0.0, 1.0);
    check_all(m, img, "view 61x45 at (5, 3) pitch 83", 5, 3, 83);
}

TEST(SrcnnFusedCuda, SecondModelAndDeterministic) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(14);
    const Image<float> img = test::random_image<float>(97, 70, 1, 8, 0.0, 1.0);
    check_all(m, img, "97x70 model 14");
    for (SrcnnPrecision p : kPrecisions) {
        Prepared fw(m, p);
        const Image<float> a = run_fused(fw.w, img.view());
        const Image<float> b = run_fused(fw.w, img.view());
        EXPECT_TRUE(test::images_near(a.view(), b.view(), 0.0)) << to_string(p);
    }
}

// More tiles than CTAs (the persistent loop, the prefetch of the next tile): a 600 x 600 plane
// is 22 x 22 = 484 tiles. The output at a pixel depends only on its 13 x 13 neighbourhood (clamped
// to the image), so the reference runs on windows: a window's reference equals the full one
// except within 6 pixels of a window edge that is not an image edge.
TEST(SrcnnFusedCuda, ManyTilesPerCtaWindows) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(19);
    const int W = 600, H = 600, S = 80, kMargin = 6;
    const Image<float> img = test::random_image<float>(W, H, 1, 21, 0.0, 1.0);
    const int wins[][2] = {{0, 0}, {W - S, H - S}, {250, 131}, {W - S, 300}};
    for (SrcnnPrecision p : kPrecisions) {
        Prepared fw(m, p);
        const Image<float> got = run_fused(fw.w, img.view());
        for (const auto& o : wins) {
            const Image<float> ref = reference(img.view().sub(o[0], o[1], S, S), m);
            // The compared region: the window less the margin at inner edges.
            const int x0 = o[0] == 0 ? 0 : kMargin, y0 = o[1] == 0 ? 0 : kMargin;
            const int x1 = o[0] + S == W ? S : S - kMargin, y1 = o[1] + S == H ? S : S - kMargin;
            Image<float> a(x1 - x0, y1 - y0, 1), r(x1 - x0, y1 - y0, 1);
            for (int y = y0; y < y1; ++y)
                for (int x = x0; x < x1; ++x) {
                    a.view()(x - x0, y - y0) = got.view()(o[0] + x, o[1] + y);
                    r.view()(x - x0, y - y0) = ref.view()(x, y);
                }
            int wx = -1, wy = -1;
            const double e = rel_error(a, r, &wx, &wy);
            std::cout << "[fused] 600x600 window (" << o[0] << ", " << o[1] << ") " << to_string(p)
                      << " rel max err " << e << "\n";
            EXPECT_LE(e, tolerance(p)) << "window (" << o[0] << ", " << o[1] << ") " << to_string(p)
                                       << " worst at (" << wx << ", " << wy << ")";
        }
    }
}

TEST(SrcnnFusedCuda, SupportsOnlyTheShippedShape) {
    UPRES_REQUIRE_GPU();
    const SrcnnModel m = random_model(15);
    for (SrcnnPrecision p : kPrecisions) EXPECT_TRUE(srcnn::cuda::fused_supports(m, p));
    EXPECT_FALSE(srcnn::cuda::fused_supports(m, SrcnnPrecision::Fastest));
    const SrcnnModel m955 = random_model(16, 9, 5, 5);
    const SrcnnModel m_n1 = random_model(17, 9, 1, 5, 32, 32);
    const SrcnnModel m_k3 = random_model(18, 9, 1, 3);
    for (SrcnnPrecision p : kPrecisions) {
        EXPECT_FALSE(srcnn::cuda::fused_supports(m955, p));
        EXPECT_FALSE(srcnn::cuda::fused_supports(m_n1, p));
        EXPECT_FALSE(srcnn::cuda::fused_supports(m_k3, p));
    }
    test::expect_error([&] { srcnn::cuda::fused_prepare(m955, SrcnnPrecision::Fp16, nullptr); },
                       ErrorCode::InvalidArgument, "unsupported model shape");
    // Bad planes: named in the message, nothing launched (the pointers are never read).
    Prepared fw(m, SrcnnPrecision::Fp16);
    float* dummy = nullptr;
    test::expect_error(
        [&] {
            srcnn::cuda::fused_forward(fw.w, Span2D<const float>{dummy, 20, 20, 1, 20},
                                       Span2D<float>{dummy, 20, 21, 1, 20}, nullptr);
        },
        ErrorCode::InvalidArgument, "sizes differ");
    test::expect_error(
        [&] {
            srcnn::cuda::fused_forward(fw.w, Span2D<const float>{dummy, 20, 20, 3, 60},
                                       Span2D<float>{dummy, 20, 20, 3, 60}, nullptr);
        },
        ErrorCode::InvalidArgument, "1 channel");
}

}  // namespace
}  // namespace upres
#endif
