// upres::brisque (upres/brisque.hpp): features and scores against the reference package on
// the eval photos (tools/golden/gen_brisque.py), the backends against each other, properties
// (gray equals an RGB of equal channels, pixel types agree, the score orders a photo and its
// degraded copies), bad input and a corrupt model.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <upres/brisque.hpp>
#include <upres/io.hpp>
#include "test_util.hpp"

namespace upres {
namespace {

using test::ctx_of;
using test::expect_error;
using U8 = std::uint8_t;

const char* kEval[] = {"baboon.jpg",       "butterfly.jpg", "fruits.jpg",  "smarties.png",
                       "rubberwhale1.png", "astronaut.png", "chelsea.png", "coffee.png"};

Image<U8> photo(const std::string& name) {
    return std::move(read_image(test::sample_path(name)).as<U8>());
}

// Relative agreement the issue asks for (1e-3); features within 1e-6 of 0 compared absolutely.
bool close(double a, double b) { return std::fabs(a - b) <= 1e-3 * std::max(std::fabs(b), 1e-3); }

TEST(Brisque, FeaturesAndScoresMatchTheReferencePackage) {
    const Image<float> want_f = test::load_golden<float>("brisque/eval_features.npy");
    const Image<float> want_s = test::load_golden<float>("brisque/eval_scores.npy");
    ASSERT_EQ(want_f.height(), 8);
    for (int i = 0; i < 8; ++i) {
        const Image<U8> img = photo(kEval[i]);
        for (Backend b : {Backend::Reference, Backend::Cpu}) {
            const BrisqueFeatures f = brisque_features(img.view(), ctx_of(b));
            for (int k = 0; k < kBrisqueFeatures; ++k)
                EXPECT_TRUE(close(f[k], want_f.view()(k, i)))
                    << kEval[i] << " " << to_string(b) << " feature " << k << ": " << f[k] << " vs "
                    << want_f.view()(k, i);
            const double s = brisque_score(f);
            EXPECT_TRUE(close(s, want_s.view()(i, 0)))
                << kEval[i] << " " << to_string(b) << " score " << s << " vs "
                << want_s.view()(i, 0);
        }
    }
}

// A textured image (no flat patch: the fit is well conditioned there): a ramp under seeded
// noise.
Image<U8> texture(int w, int h, int c, std::uint32_t seed) {
    Image<U8> img(w, h, c);
    std::mt19937 rng(seed);
    std::uniform_int_distribution<int> u(20, 235);
    for (int y = 0; y < h; ++y) {
        U8* row = img.view().row(y);
        for (int i = 0; i < w * c; ++i) row[i] = static_cast<U8>((u(rng) + 2 * (i / c + y)) / 3);
    }
    return img;
}

template <std::size_t N>
::testing::AssertionResult features_near(const std::array<double, N>& a,
                                         const std::array<double, N>& b, double rel) {
    for (std::size_t k = 0; k < N; ++k)
        if (std::fabs(a[k] - b[k]) > rel * std::max(std::fabs(b[k]), 1e-3))
            return ::testing::AssertionFailure()
                   << "feature " << k << ": " << a[k] << " vs " << b[k];
    return ::testing::AssertionSuccess();
}

TEST(Brisque, BackendsAgree) {
    // Photos (flat regions included), a random texture, a sub-view, 1 and 3 threads.
    const Image<U8> p = photo("smarties.png");
    const Image<U8> t = texture(61, 47, 3, 5);
    const ImageView<const U8> sub = ImageView<const U8>(p.view()).sub(17, 9, 200, 150);
    for (const ImageView<const U8> v :
         {ImageView<const U8>(p.view()), ImageView<const U8>(t.view()), sub}) {
        const BrisqueFeatures r = brisque_features(v, ctx_of(Backend::Reference));
        for (int threads : {1, 3})
            EXPECT_TRUE(features_near(brisque_features(v, ctx_of(Backend::Cpu, threads)), r, 1e-9));
    }
}

TEST(Brisque, PixelTypesAndGrayAgree) {
    const Image<U8> g = texture(64, 50, 1, 9);
    Image<U8> rgb(64, 50, 3);
    Image<std::uint16_t> g16(64, 50, 1);
    Image<float> g32(64, 50, 1);
    for (int y = 0; y < 50; ++y)
        for (int x = 0; x < 64; ++x) {
            const U8 v = g.view()(x, y);
            for (int k = 0; k < 3; ++k) rgb.view()(x, y, k) = v;
            g16.view()(x, y) = static_cast<std::uint16_t>(257 * v);
            g32.view()(x, y) = v / 255.0f;
        }
    const BrisqueFeatures f = brisque_features(g.view());
    EXPECT_TRUE(features_near(brisque_features(rgb.view()), f, 1e-6));
    EXPECT_TRUE(features_near(brisque_features(g16.view()), f, 1e-6));
    EXPECT_TRUE(features_near(brisque_features(g32.view()), f, 1e-5));
    EXPECT_NEAR(brisque(AnyImage(clone(g.view()))), brisque_score(f), 1e-12);
}

// The score's direction on a real photo: noise and blur both make it worse (larger).
TEST(Brisque, DegradationRaisesTheScore) {
    const Image<U8> p = photo("chelsea.png");
    const int w = p.width(), h = p.height();
    Image<U8> noisy = clone(p.view()), blurred(w, h, 3);
    std::mt19937 rng(3);
    std::normal_distribution<double> n(0.0, 20.0);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < 3 * w; ++x) {
            U8& v = noisy.view().row(y)[x];
            v = static_cast<U8>(std::clamp(v + n(rng), 0.0, 255.0));
        }
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            for (int k = 0; k < 3; ++k) {
                int s = 0, c = 0;
                for (int j = -3; j <= 3; ++j)
                    for (int i = -3; i <= 3; ++i) {
                        const int yy = std::clamp(y + j, 0, h - 1),
                                  xx = std::clamp(x + i, 0, w - 1);
                        s += p.view()(xx, yy, k);
                        ++c;
                    }
                blurred.view()(x, y, k) = static_cast<U8>(s / c);
            }
    const double s0 = brisque(p.view()), sn = brisque(noisy.view()), sb = brisque(blurred.view());
    EXPECT_GT(sn, s0 + 10) << "original " << s0 << ", noisy " << sn;
    EXPECT_GT(sb, s0 + 10) << "original " << s0 << ", blurred " << sb;
}

TEST(Brisque, BadInputAndModelsAreRefused) {
    const auto inv = ErrorCode::InvalidArgument;
    expect_error([] { brisque(texture(13, 40, 1, 1).view()); }, inv, "smaller than 14 x 14");
    expect_error([] { brisque(texture(20, 20, 2, 1).view()); }, inv, "allowed: 1 gray, 3 RGB");
    Image<U8> flat(32, 32, 1);
    for (int y = 0; y < 32; ++y)
        for (int x = 0; x < 32; ++x) flat.view()(x, y) = 90;
    expect_error([&] { brisque(flat.view()); }, inv, "no texture");
    Image<float> nan(20, 20, 1);
    for (int y = 0; y < 20; ++y)
        for (int x = 0; x < 20; ++x) nan.view()(x, y) = 0.1f * ((x + y) % 5);
    nan.view()(4, 7) = std::numeric_limits<float>::infinity();
    expect_error([&] { brisque(nan.view()); }, inv, "non-finite value at x 4, y 7");
    expect_error([] { brisque(texture(20, 20, 1, 1).view(), {}, ctx_of(Backend::Cuda)); },
                 ErrorCode::BackendUnavailable, "cuda");
    // Models: a missing folder, a corrupt support vector, a short range file.
    const std::string dir = ::testing::TempDir() + "upres_brisque_model";
    std::filesystem::create_directories(dir);
    BrisqueOptions o;
    o.model_dir = dir + "/none";
    const Image<U8> t = texture(30, 30, 1, 2);
    expect_error([&] { brisque(t.view(), o); }, ErrorCode::IoError,
                 "cannot open the brisque model");
    {
        std::ofstream f(dir + "/brisque_svm.txt");
        f << "svm_type epsilon_svr\nkernel_type rbf\ngamma 0.05\nrho 1\nSV\n0.5 1:0.1 x:2\n";
        std::ofstream r(dir + "/brisque_range.txt");
        for (int k = 0; k < 35; ++k) r << "0 1\n";
    }
    o.model_dir = dir;
    expect_error([&] { brisque(t.view(), o); }, ErrorCode::CorruptData, "'x:2' is not index:value");
    {
        std::ofstream f(dir + "/brisque_svm.txt");
        f << "svm_type epsilon_svr\nkernel_type rbf\ngamma 0.05\nrho 1\nSV\n0.5 1:0.1\n";
    }
    o.model_dir = dir + "/";  // another cache entry for the same folder
    expect_error([&] { brisque(t.view(), o); }, ErrorCode::CorruptData, "35 ranges (expected 36)");
}

}  // namespace
}  // namespace upres
