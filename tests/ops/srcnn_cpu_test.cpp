// SRCNN CPU backend (srcnn_cpu.cpp) vs the double-precision reference (srcnn_ref.cpp): real
// photos and random planes with fixed seeds, random models (weights N(0, 1e-3 .. 1e-1) like
// trained SRCNN layers), 9-1-5 64/32, 9-5-5, small-channel and large-kernel models, awkward
// sizes (the receptive-field minimum, tile boundaries in x and y), sub-image views with a
// stride, thread counts 1, 2 and 3 (bit-identical results); the shipped trained x3 model on a
// photo; the PyTorch float64 golden data of tests/data/srcnn (the outside oracle).
//
// SrcnnCpuKernel tests both ISA versions of the hot loop directly in every run; the whole
// network takes the portable loop when UPRES_CPU_BASELINE=1 is set in the environment:
//   UPRES_CPU_BASELINE=1 ./tests/srcnn_cpu_test
//
// Tolerance: |cpu - ref| <= 1e-5 * max(range, max |ref|) (range: max - min of the reference
// output). The CPU backend accumulates in fp32 over at most k^2 * n_in taps per layer (81, 64
// and 32 + 25 for 9-1-5 64/32) and rounds every intermediate to fp32; the reference keeps
// everything in double. Rounding errors of an fp32 sum of n terms grow like sqrt(n) * 2^-24 *
// (sum of |terms|) for random-signed terms, i.e. relative to the magnitude of the values, not
// only to their spread (hence max |ref| too: a model with tiny weights gives outputs near the
// bias with a small range). Measured worst case over these tests: 9e-7 of that scale (AVX2 and
// portable paths). 1e-5 leaves a 10x margin and still catches any indexing error (a wrong tap or
// border moves outputs by ~1e-2 of the range or more). SRCNN_TEST_VERBOSE=1 prints each error.
#include <upres/io.hpp>
#include <upres/srcnn.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_cpu_simd.hpp"
#include "random_srcnn.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

struct Shape {
    int k1, k2, k3, n1, n2;
};

SrcnnModel random_model(const Shape& s, std::uint32_t seed, double scale1 = 0.1) {
    std::mt19937 rng(seed);
    SrcnnModel m = test::random_srcnn_model(rng, {s.k1, s.k2, s.k3}, s.n1, s.n2, scale1, 3);
    validate(m);  // a model the public API accepts
    return m;
}

Image<float> run_cpu(ImageView<const float> in, const SrcnnModel& m, int threads) {
    Image<float> out(in.width(), in.height(), 1);
    cpu::srcnn_forward(span_of(in), span_of(out.view()), m, threads);
    return out;
}

Image<float> run_ref(ImageView<const float> in, const SrcnnModel& m) {
    Image<float> out(in.width(), in.height(), 1);
    ref::srcnn_forward(span_of(in), span_of(out.view()), m);
    return out;
}

double max_abs(const ImageView<const float>& v) {
    double m = 0.0;
    for (int y = 0; y < v.height(); ++y)
        for (int x = 0; x < v.width(); ++x) m = std::max(m, std::abs(double(v(x, y))));
    return m;
}

double range_of(const ImageView<const float>& v) {
    float lo = v(0, 0), hi = v(0, 0);
    for (int y = 0; y < v.height(); ++y)
        for (int x = 0; x < v.width(); ++x) lo = std::min(lo, v(x, y)), hi = std::max(hi, v(x, y));
    return double(hi) - double(lo);
}

::testing::AssertionResult near_reference(const Image<float>& cpu, const Image<float>& ref) {
    const double range = range_of(ref.view());
    if (!(range > 0)) return ::testing::AssertionFailure() << "constant reference output";
    const double scale = std::max(range, max_abs(ref.view()));
    auto r = test::images_near(cpu.view(), ref.view(), 1e-5 * scale);
    if (std::getenv("SRCNN_TEST_VERBOSE"))
        std::printf("range %g, max |ref| %g: %s\n", range, max_abs(ref.view()), r.message());
    return r;
}

bool identical(const ImageView<const float>& a, const ImageView<const float>& b) {
    for (int y = 0; y < a.height(); ++y)
        if (std::memcmp(a.row(y), b.row(y), sizeof(float) * static_cast<std::size_t>(a.width())))
            return false;
    return true;
}

// The luma (BT.601) of a crop of a real photo, in [0, 1].
Image<float> photo_luma(const std::string& name, int x0, int y0, int w, int h) {
    const AnyImage any = read_image(test::sample_path(name));
    const Image<std::uint8_t>& rgb = any.as<std::uint8_t>();
    EXPECT_EQ(rgb.channels(), 3);
    Image<float> y(w, h, 1);
    for (int j = 0; j < h; ++j)
        for (int i = 0; i < w; ++i) {
            const auto p = [&](int c) { return double(rgb.view()(x0 + i, y0 + j, c)); };
            y.view()(i, j) =
                static_cast<float>((0.299 * p(0) + 0.587 * p(1) + 0.114 * p(2)) / 255.0);
        }
    return y;
}

TEST(SrcnnCpu, PhotoMatchesReference915) {
    const Image<float> in = photo_luma("baboon.jpg", 200, 150, 120, 72);
    const SrcnnModel m = random_model({9, 1, 5, 64, 32}, 11);
    const Image<float> ref = run_ref(in.view(), m);
    for (int threads : {1, 2}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        EXPECT_TRUE(near_reference(run_cpu(in.view(), m, threads), ref));
    }
}

// The shipped trained x3 model (models/srcnn_x3.srcnn) on a real photo: real weight statistics.
TEST(SrcnnCpu, TrainedModelOnPhoto) {
    const Image<float> in = photo_luma("baboon.jpg", 300, 100, 96, 64);
    // models/ next to tests/data (also where a carried build finds it via UPRES_TEST_DATA_DIR).
    const SrcnnModel m = load_srcnn_model(test::data_path("../../models/srcnn_x3.srcnn"));
    const Image<float> ref = run_ref(in.view(), m);
    EXPECT_TRUE(near_reference(run_cpu(in.view(), m, 2), ref));
}

// The outside oracle: PyTorch float64 golden data (tools/golden/gen_srcnn.py, tests/data/srcnn).
class SrcnnCpuGolden : public ::testing::TestWithParam<const char*> {};

TEST_P(SrcnnCpuGolden, MatchesPyTorch) {
    const std::string c = GetParam();
    const SrcnnModel m = load_srcnn_model(test::data_path("srcnn/" + c + ".srcnn"));
    const AnyImage in_any = read_image(test::data_path("srcnn/" + c + "_in.npy"));
    const AnyImage want_any = read_image(test::data_path("srcnn/" + c + "_out.npy"));
    const Image<float>& in = in_any.as<float>();
    const Image<float>& want = want_any.as<float>();
    EXPECT_TRUE(near_reference(run_cpu(in.view(), m, 2), want));
}

INSTANTIATE_TEST_SUITE_P(Cases, SrcnnCpuGolden,
                         ::testing::Values("s915", "s955", "t313", "full915"));

struct Case {
    Shape shape;
    int w, h;
    std::uint32_t seed;
    double scale1;
};

class SrcnnCpuRandom : public ::testing::TestWithParam<Case> {};

TEST_P(SrcnnCpuRandom, MatchesReferenceForAnyThreadCount) {
    const Case c = GetParam();
    const Image<float> in = test::random_image<float>(c.w, c.h, 1, c.seed, 0.0, 1.0);
    const SrcnnModel m = random_model(c.shape, c.seed + 100, c.scale1);
    const Image<float> ref = run_ref(in.view(), m);
    const Image<float> one = run_cpu(in.view(), m, 1);
    EXPECT_TRUE(near_reference(one, ref));
    const Image<float> two = run_cpu(in.view(), m, 2);
    EXPECT_TRUE(identical(one.view(), two.view())) << "threads 1 vs 2 differ";
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, SrcnnCpuRandom,
    ::testing::Values(
        // 9-1-5 64/32 at its receptive-field minimum, and a tall strip (3 tile rows).
        Case{{9, 1, 5, 64, 32}, 13, 13, 1, 0.1}, Case{{9, 1, 5, 64, 32}, 17, 300, 2, 0.1},
        // Weights of an untrained layer 1 (N(0, 1e-3)).
        Case{{9, 1, 5, 64, 32}, 40, 23, 3, 1e-3},
        // 9-5-5 (layer 2 with a 5 x 5 kernel: replicated layer-1 columns and rows).
        Case{{9, 5, 5, 64, 32}, 17, 40, 4, 0.1},
        // Tile boundaries in x and y (2 x 2 tiles), smaller channel counts.
        Case{{9, 1, 5, 16, 8}, 257, 131, 5, 0.1}, Case{{9, 3, 5, 8, 6}, 600, 30, 6, 0.1},
        // Channel counts that are not multiples of the register block, 1-channel hidden layers.
        Case{{5, 3, 3, 9, 6}, 31, 29, 7, 0.1}, Case{{3, 1, 3, 5, 3}, 7, 9, 8, 0.1},
        Case{{1, 1, 1, 1, 1}, 7, 3, 13, 0.1}, Case{{3, 1, 1, 2, 1}, 9, 5, 10, 0.1},
        // The largest kernels and channel counts.
        Case{{15, 15, 15, 2, 3}, 50, 45, 11, 0.1}, Case{{3, 1, 3, 128, 128}, 20, 19, 12, 0.1}));

TEST(SrcnnCpu, SubImageViewsWithStride) {
    const Image<float> big_in = test::random_image<float>(90, 70, 1, 21, 0.0, 1.0);
    const ImageView<const float> in = big_in.view().sub(7, 5, 61, 43);
    const SrcnnModel m = random_model({9, 1, 5, 12, 7}, 22);
    // Reference on a compact copy, the CPU backend on the strided views.
    const Image<float> compact = clone(in);
    const Image<float> ref = run_ref(compact.view(), m);
    Image<float> big_out(80, 60, 1);
    std::fill(big_out.data(), big_out.data() + 80 * 60, -7.0f);
    const ImageView<float> out = big_out.view().sub(11, 9, 61, 43);
    cpu::srcnn_forward(span_of(in), span_of(out), m, 2);
    EXPECT_TRUE(near_reference(clone(ImageView<const float>(out)), ref));
    int touched = 0;  // pixels outside the output view must be left alone
    for (int y = 0; y < 60; ++y)
        for (int x = 0; x < 80; ++x) {
            const bool inside = x >= 11 && x < 72 && y >= 9 && y < 52;
            if (!inside && big_out.view()(x, y) != -7.0f) ++touched;
        }
    EXPECT_EQ(touched, 0);
}

// Whole tiles and thread counts: the result must not depend on the threads (static tile grid,
// same summation order everywhere).
TEST(SrcnnCpu, BitIdenticalForThreadCounts) {
    const Image<float> in = test::random_image<float>(530, 270, 1, 31, 0.0, 1.0);
    const SrcnnModel m = random_model({9, 1, 5, 8, 4}, 32);
    const Image<float> one = run_cpu(in.view(), m, 1);
    for (int threads : {2, 3, 0}) {
        SCOPED_TRACE("threads " + std::to_string(threads));
        EXPECT_TRUE(identical(one.view(), run_cpu(in.view(), m, threads).view()));
    }
    // Same again, and not trivially: the output varies.
    EXPECT_TRUE(identical(one.view(), run_cpu(in.view(), m, 2).view()));
    EXPECT_GT(range_of(one.view()), 1e-3);
}

// The public entry point with Backend::Cpu runs this backend (same bits).
TEST(SrcnnCpu, PublicApiRunsCpuBackend) {
    const Image<float> in = photo_luma("baboon.jpg", 20, 30, 64, 48);
    const SrcnnModel m = random_model({9, 1, 5, 64, 32}, 41);
    Image<float> out(64, 48, 1);
    Context ctx;
    ctx.backend = Backend::Cpu;
    ctx.threads = 2;
    srcnn_forward(in.view(), out.view(), m, {}, ctx);
    EXPECT_TRUE(identical(out.view(), run_cpu(in.view(), m, 1).view()));
    EXPECT_TRUE(near_reference(out, run_ref(in.view(), m)));
}

// The hot loop itself, both ISA versions (whatever the CPU and UPRES_CPU_BASELINE): every block
// shape (1..4 channels per block, the vector tails), shifts, offsets and ReLU, vs a double sum
// in the same tap order; columns outside [u0, u0 + count) must stay untouched.
TEST(SrcnnCpuKernel, BothIsaVersionsMatchDirectSum) {
    std::mt19937 rng(77);
    std::uniform_real_distribution<float> val(-1.0f, 1.0f);
    constexpr int kW = 256, kGuard = -5;
    int checked = 0;
    for (int n_out : {1, 2, 3, 4, 7, 64})
        for (int ntaps : {1, 9, 81})
            for (int count : {8, 24, 40, 64, 72, 136}) {
                // Reads at taps[t][u0 - shift ..) stay inside rows: offsets 8..14, shift <= 4.
                const int u0 = 8 * (count % 3), shift = count % 5, n_in_rows = 3;
                std::vector<float> rows(static_cast<std::size_t>(n_in_rows * kW));
                for (float& v : rows) v = val(rng);
                std::vector<const float*> taps;
                for (int t = 0; t < ntaps; ++t)
                    taps.push_back(rows.data() + (t % n_in_rows) * kW + 8 + (t % 7));
                std::vector<float> w(static_cast<std::size_t>(n_out * ntaps)), bias(n_out);
                for (float& v : w) v = 0.2f * val(rng);
                for (float& v : bias) v = 0.1f * val(rng);
                // Packed: blocks of kBlock output channels, each [t][j].
                std::vector<float> packed(w.size());
                for (int o = 0; o < n_out; o += srcnn::simd::kBlock) {
                    const int nb = std::min(srcnn::simd::kBlock, n_out - o);
                    for (int t = 0; t < ntaps; ++t)
                        for (int j = 0; j < nb; ++j)
                            packed[static_cast<std::size_t>(o * ntaps + t * nb + j)] =
                                w[static_cast<std::size_t>((o + j) * ntaps + t)];
                }
                const bool relu = (count / 8) % 2 == 1;
                std::vector<void (*)(const srcnn::simd::ConvRow&)> fns = {
                    srcnn::simd::conv_row_portable};
                if (srcnn::simd::avx2_fma_usable()) fns.push_back(srcnn::simd::conv_row_avx2);
                for (auto fn : fns) {
                    std::vector<float> out(static_cast<std::size_t>(n_out * kW), kGuard);
                    srcnn::simd::ConvRow a{};
                    a.taps = taps.data();
                    a.ntaps = ntaps;
                    a.weights = packed.data();
                    a.bias = bias.data();
                    a.n_out = n_out;
                    a.relu = relu;
                    a.out = out.data();
                    a.out_plane = kW;
                    a.u0 = u0;
                    a.count = count;
                    a.shift = shift;
                    fn(a);
                    for (int o = 0; o < n_out; ++o)
                        for (int u = 0; u < kW; ++u) {
                            const float got = out[static_cast<std::size_t>(o * kW + u)];
                            if (u < u0 || u >= u0 + count) {
                                ASSERT_EQ(got, float(kGuard)) << "column " << u << " written";
                                continue;
                            }
                            double want = bias[static_cast<std::size_t>(o)];
                            double mag = std::abs(want);
                            for (int t = 0; t < ntaps; ++t) {
                                const double p =
                                    double(w[static_cast<std::size_t>(o * ntaps + t)]) *
                                    taps[static_cast<std::size_t>(t)][u - shift];
                                want += p;
                                mag += std::abs(p);
                            }
                            if (relu) want = std::max(want, 0.0);
                            // fp32 accumulation of ntaps + 1 terms: (ntaps + 1) * 2^-24 * sum
                            // |terms|.
                            ASSERT_NEAR(got, want, (ntaps + 1) * 6e-8 * mag)
                                << "n_out " << n_out << " ntaps " << ntaps << " count " << count
                                << " o " << o << " u " << u;
                            ++checked;
                        }
                }
            }
    EXPECT_GT(checked, 10000);
}

}  // namespace
}  // namespace upres
