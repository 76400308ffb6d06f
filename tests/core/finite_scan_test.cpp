// find_nonfinite_host (src/core/finite_scan.hpp), the scan behind the NaN / infinity errors of
// the warp's fields and the prefilter's input: against a plain std::isfinite loop, on a large
// random image (the multi-threaded path) and a small one, with strides, every kind of
// non-finite value, at the first and last element, and several bad values at once.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/finite_scan.hpp"

namespace upres {
namespace {

std::int64_t oracle(const std::vector<float>& v, std::ptrdiff_t n, int rows,
                    std::ptrdiff_t stride) {
    for (int y = 0; y < rows; ++y)
        for (std::ptrdiff_t i = 0; i < n; ++i)
            if (!std::isfinite(v[y * stride + i])) return std::int64_t{y} * n + i;
    return -1;
}

TEST(FiniteScan, FindsTheFirstNonFiniteValue) {
    const float kBad[] = {
        std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::quiet_NaN(),
        std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
        std::numeric_limits<float>::signaling_NaN()};
    struct Geometry {
        std::ptrdiff_t n, stride;
        int rows;
    };
    // 1001 x 317 (2 channels): above the one-thread threshold; 37 x 5: below it.
    for (const Geometry g : {Geometry{2002, 2010, 317}, Geometry{37, 37, 5}, Geometry{1, 3, 1}}) {
        std::mt19937 rng(17);
        std::uniform_real_distribution<float> value(-1e38f, 1e38f);
        std::vector<float> v(static_cast<std::size_t>(g.stride) * g.rows);
        for (float& x : v) x = value(rng);
        // Padding between rows (outside the view) is never looked at.
        for (int y = 0; y < g.rows; ++y)
            for (std::ptrdiff_t i = g.n; i < g.stride; ++i) v[y * g.stride + i] = kBad[0];
        // Largest finite values and denormals are finite.
        v[0] = std::numeric_limits<float>::max();
        v[g.stride * (g.rows - 1)] = -std::numeric_limits<float>::max();
        if (g.n > 1) v[1] = std::numeric_limits<float>::denorm_min();
        ASSERT_EQ(find_nonfinite_host(v.data(), g.n, g.rows, g.stride, 0), -1);
        std::uniform_int_distribution<int> row(0, g.rows - 1);
        std::uniform_int_distribution<std::ptrdiff_t> col(0, g.n - 1);
        for (int trial = 0; trial < 40; ++trial) {
            std::vector<float> w = v;
            const int nbad = 1 + trial % 3;
            for (int k = 0; k < nbad; ++k) {
                int y = row(rng);
                std::ptrdiff_t i = col(rng);
                if (trial == 0) y = 0, i = 0;                 // the first element
                if (trial == 1) y = g.rows - 1, i = g.n - 1;  // the last
                w[y * g.stride + i] = kBad[(trial + k) % 5];
            }
            const std::int64_t want = oracle(w, g.n, g.rows, g.stride);
            ASSERT_GE(want, 0);
            for (int threads : {1, 2, 0})
                EXPECT_EQ(find_nonfinite_host(w.data(), g.n, g.rows, g.stride, threads), want)
                    << "trial " << trial << ", threads " << threads << ", n " << g.n;
        }
    }
    EXPECT_EQ(find_nonfinite_host(nullptr, 0, 0, 0, 0), -1);
}

}  // namespace
}  // namespace upres
