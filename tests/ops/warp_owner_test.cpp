// The owner-tile partition of the recursive fused B-spline kernel (src/ops/warp/warp_owner.hpp),
// checked on the CPU with the code the kernel runs: for rotations, flips, shears and scaled
// rotations onto awkward output sizes, the listed tiles own every output exactly once, each owned
// output's source coordinate lies in its tile, a tile's rows and outputs stay within the bounds
// the kernel allocates for, and the rows outside a tile's row range own nothing.
#include <upres/warp.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "ops/warp/warp_owner.hpp"
#include "test_util.hpp"

namespace upres {
namespace {

struct Case {
    std::string name;
    double m[6];
    int w, h, tile;
};

// Rotation about the image centre (upres::rotation), optionally scaled by s.
Case rot(double deg, int w, int h, int tile, double s = 1.0) {
    const Affine a = rotation(deg, w, h);
    Case c{"rotation " + std::to_string(deg) + " scale " + std::to_string(s) + " " +
               std::to_string(w) + "x" + std::to_string(h) + " tile " + std::to_string(tile),
           {},
           w,
           h,
           tile};
    const double cx = 0.5 * (w - 1), cy = 0.5 * (h - 1);
    for (int i = 0; i < 6; ++i) c.m[i] = a.m[i];
    for (int i : {0, 1, 3, 4}) c.m[i] *= s;
    c.m[2] = cx - c.m[0] * cx - c.m[1] * cy;
    c.m[5] = cy - c.m[3] * cx - c.m[4] * cy;
    return c;
}

void check_partition(const Case& c) {
    SCOPED_TRACE(c.name);
    owner::Grid g{};
    ASSERT_TRUE(owner::owner_grid(c.m, c.w, c.h, c.tile, g));
    std::vector<int> owners(static_cast<std::size_t>(c.w) * c.h, 0);
    long long worst_out = 0;
    int worst_rows = 0;
    double worst_u = 0, worst_v = 0;  // how far an owned coordinate lies outside its tile
    for (int b = 0; b < g.count; ++b) {
        int I = -1, J = -1;
        owner::owner_tile(g, b, I, J);
        ASSERT_GE(J, 0);
        ASSERT_LT(J, g.rows);
        ASSERT_GE(b, g.first[J]);
        ASSERT_LT(b, g.first[J + 1]);
        int y0 = 0, y1 = -1;
        owner::owner_rows(g, I, J, y0, y1);
        if (y1 >= y0) {
            worst_rows = std::max(worst_rows, y1 - y0 + 1);
            ASSERT_LE(y1 - y0 + 1, g.max_span);
        }
        // Rows just outside the range own nothing.
        for (int y : {y0 - 3, y0 - 2, y0 - 1, y1 + 1, y1 + 2, y1 + 3}) {
            if (y < 0 || y >= c.h) continue;
            int xs = 0, xe = 0;
            owner::owner_row(g, I, J, y, xs, xe);
            EXPECT_LE(xe, xs) << "row " << y << " outside [" << y0 << ", " << y1 << "]";
        }
        const double U0 = g.ubase + I * g.tile, V0 = g.vbase + J * g.tile;
        long long n = 0;
        for (int y = y0; y <= y1; ++y) {
            int xs = 0, xe = 0;
            owner::owner_row(g, I, J, y, xs, xe);
            ASSERT_GE(xs, 0);
            ASSERT_LE(xe, c.w);
            for (int x = xs; x < xe; ++x) {
                ++owners[static_cast<std::size_t>(y) * c.w + x];
                ++n;
                const double u = c.m[0] * x + c.m[1] * y + c.m[2];
                const double v = c.m[3] * x + c.m[4] * y + c.m[5];
                worst_u = std::max({worst_u, U0 - u, u - (U0 + g.tile)});
                worst_v = std::max({worst_v, V0 - v, v - (V0 + g.tile)});
            }
        }
        worst_out = std::max(worst_out, n);
    }
    EXPECT_LE(worst_out, owner::kMaxOut);
    EXPECT_LE(worst_rows, owner::kMaxRows);
    EXPECT_LT(worst_u, 1e-6);
    EXPECT_LT(worst_v, 1e-6);
    long long missing = 0, twice = 0;
    int first_x = -1, first_y = -1;
    for (int y = 0; y < c.h; ++y)
        for (int x = 0; x < c.w; ++x) {
            const int k = owners[static_cast<std::size_t>(y) * c.w + x];
            if (k != 1 && first_x < 0) first_x = x, first_y = y;
            missing += k == 0;
            twice += k > 1;
        }
    EXPECT_EQ(missing, 0) << "first unowned or twice-owned output (" << first_x << ", " << first_y
                          << ")";
    EXPECT_EQ(twice, 0) << "first unowned or twice-owned output (" << first_x << ", " << first_y
                        << ")";
}

TEST(WarpOwner, PartitionsEveryOutputOnce) {
    std::vector<Case> cases;
    for (double deg :
         {30.0, -30.0, 10.0, 45.0, 60.0, 90.0, -90.0, 180.0, 17.0, -117.0, 1e-3, 0.0, 359.0})
        for (const auto& s : {std::pair{257, 131}, std::pair{300, 37}, std::pair{16, 16}})
            cases.push_back(rot(deg, s.first, s.second, 64));
    for (int tile : {32, 48, 56, 72, 80}) cases.push_back(rot(30.0, 203, 141, tile));
    cases.push_back(rot(30.0, 2048, 2048, 64));  // the benchmark's plan
    cases.push_back(rot(30.0, 1, 1, 64));
    cases.push_back(rot(-61.0, 7, 3, 64));
    cases.push_back(rot(23.0, 180, 120, 64, 0.55));  // rotation + x1.8 zoom
    cases.push_back(rot(23.0, 180, 120, 64, 1.4));   // rotation + down-scale
    Case shear{"shear and flip", {-0.9, 0.35, 150.0, 0.2, 1.1, -7.25}, 240, 170, 64};
    cases.push_back(shear);
    Case flip{"mirror image", {-1.0, 0.0, 99.0, 0.0, 1.0, 0.0}, 100, 64, 64};
    cases.push_back(flip);
    Case shift{"translation by exact integers", {1.0, 0.0, 5.0, 0.0, 1.0, -3.0}, 130, 70, 64};
    cases.push_back(shift);
    for (const Case& c : cases) check_partition(c);
}

TEST(WarpOwner, RejectsWhatTheKernelCannotTake) {
    owner::Grid g{};
    const double singular[6] = {1.0, 2.0, 0.0, 0.5, 1.0, 0.0};
    EXPECT_FALSE(owner::owner_grid(singular, 100, 100, 64, g));
    const double nan[6] = {1.0, 0.0, std::nan(""), 0.0, 1.0, 0.0};
    EXPECT_FALSE(owner::owner_grid(nan, 100, 100, 64, g));
    const double zoom8[6] = {0.125, 0.0, 0.0, 0.0, 0.125, 0.0};  // 64 x 64 tile -> 512 rows
    EXPECT_FALSE(owner::owner_grid(zoom8, 100, 100, 64, g));
    const double far[6] = {1.0, 0.0, 2e7, 0.0, 1.0, 0.0};
    EXPECT_FALSE(owner::owner_grid(far, 100, 100, 64, g));
    const double big[6] = {0.8660254, -0.5, 0.0, 0.5, 0.8660254, 0.0};  // > 160 tile rows
    EXPECT_FALSE(owner::owner_grid(big, 12000, 12000, 64, g));
    EXPECT_TRUE(owner::owner_grid(big, 4000, 4000, 64, g));
    EXPECT_FALSE(owner::owner_grid(big, 0, 10, 64, g));
}

}  // namespace
}  // namespace upres
