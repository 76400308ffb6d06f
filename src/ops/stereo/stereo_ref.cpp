// Reference backend of upres::stereo_disparity: the paper's matcher literally. The whole DSI
// cube (one W x H layer per disparity), each layer filtered with the non-separable 2-D window
// (weights g_i g_j, 64-bit sums), or the semi-global paths summed over the cube; then for every
// pixel the winner, its neighbours and the uniqueness competitor read from the cube's depth ray.
// Slow on purpose.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_math.hpp"

namespace upres::ref {

namespace {

// The winner of one pixel from its whole depth ray: cost(k) the sum at disparity min_d + k,
// is(k) whether it is a candidate.
template <class Cost, class Is>
stereo::Winner ray_winner(int num_d, int min_d, Cost cost, Is is) {
    stereo::Winner w;
    int k0 = -1;
    for (int k = 0; k < num_d; ++k)
        if (is(k) && (k0 < 0 || cost(k) < cost(k0))) k0 = k;
    if (k0 < 0) return w;
    w.best = static_cast<std::int32_t>(cost(k0));
    w.best_d = min_d + k0;
    w.before = k0 > 0 && is(k0 - 1) ? static_cast<std::int32_t>(cost(k0 - 1)) : -1;
    w.after = k0 + 1 < num_d && is(k0 + 1) ? static_cast<std::int32_t>(cost(k0 + 1)) : -1;
    for (int k = 0; k < num_d; ++k)
        if (is(k) && (k < k0 - 1 || k > k0 + 1))
            w.far = stereo::min_or(w.far, static_cast<std::int32_t>(cost(k)));
    return w;
}

// The maps from a whole cube of sums, at(k, y, x) the sum of layer k at left pixel (x, y).
template <class At>
void finish(int W, int H, const StereoPlan& plan, At at, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid) {
    const int D = plan.num_d;
    std::vector<stereo::Winner> wr(static_cast<std::size_t>(W) * H);
    for (int y = 0; y < H; ++y)
        for (int xr = 0; xr < W; ++xr) {
            auto is = [&](int k) {
                const int x = xr + plan.min_d + k;
                return x >= 0 && x < W;
            };
            wr[static_cast<std::size_t>(y) * W + xr] = ray_winner(
                D, plan.min_d, [&](int k) { return at(k, y, xr + plan.min_d + k); }, is);
        }
    for (int y = 0; y < H; ++y)
        for (int x = 0; x < W; ++x) {
            auto is = [&](int k) {
                const int xr = x - plan.min_d - k;
                return xr >= 0 && xr < W;
            };
            const stereo::Winner w = ray_winner(
                D, plan.min_d, [&](int k) { return at(k, y, x); }, is);
            bool ok = w.best >= 0 && stereo::unique_enough(w, plan.uniqueness);
            if (ok && plan.lr_check >= 0) {
                const stereo::Winner& o = wr[static_cast<std::size_t>(y) * W + (x - w.best_d)];
                const int diff = w.best_d - o.best_d;
                ok = o.best >= 0 && (diff < 0 ? -diff : diff) <= plan.lr_check;
            }
            disparity.row(y)[x] = ok ? stereo::refined(w, plan.subpixel) : plan.invalid;
            if (valid.data) valid.row(y)[x] = ok ? 255 : 0;
        }
    if (right_disparity.data)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                const stereo::Winner& w = wr[static_cast<std::size_t>(y) * W + x];
                right_disparity.row(y)[x] =
                    w.best >= 0 ? stereo::refined(w, plan.subpixel) : plan.invalid;
            }
}

// Semi-global matching on the cube of costs q (layer-major), literally: the pre-window mean,
// then each path direction in an order that visits p - r before p, 64-bit sums.
std::vector<std::int64_t> sgm_sums(const std::vector<int>& q, int W, int H,
                                   const StereoPlan& plan) {
    const int D = plan.num_d, s = plan.sgm_radius;
    const std::size_t layer = static_cast<std::size_t>(W) * H;
    std::vector<int> c(layer * D);
    for (int k = 0; k < D; ++k)
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                std::int64_t sum = 0;
                for (int i = -s; i <= s; ++i)
                    for (int j = -s; j <= s; ++j)
                        sum += q[layer * k +
                                 static_cast<std::size_t>(stereo::clamp_index(y + i, H)) * W +
                                 stereo::clamp_index(x + j, W)];
                c[layer * k + static_cast<std::size_t>(y) * W + x] =
                    stereo::window_mean(sum, (2 * s + 1) * (2 * s + 1));
            }
    static const int kDirs[8][2] = {{1, 0}, {-1, 0}, {0, 1},  {0, -1},
                                    {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
    std::vector<std::int64_t> S(layer * D, 0);
    std::vector<int> L(layer * D);
    for (int r = 0; r < plan.sgm_paths; ++r) {
        const int dx = kDirs[r][0], dy = kDirs[r][1];
        for (int yi = 0; yi < H; ++yi) {
            const int y = dy >= 0 ? yi : H - 1 - yi;
            for (int xi = 0; xi < W; ++xi) {
                const int x = dx >= 0 ? xi : W - 1 - xi;
                const int px = x - dx, py = y - dy;
                const bool start = px < 0 || px >= W || py < 0 || py >= H;
                auto at = [&](const std::vector<int>& v, int k, int xx, int yy) {
                    return v[layer * k + static_cast<std::size_t>(yy) * W + xx];
                };
                int prev_min = 0;
                if (!start) {
                    prev_min = at(L, 0, px, py);
                    for (int k = 1; k < D; ++k) prev_min = std::min(prev_min, at(L, k, px, py));
                }
                for (int k = 0; k < D; ++k) {
                    const int cost = at(c, k, x, y);
                    const int v =
                        start ? cost
                              : stereo::sgm_step(cost, at(L, k, px, py),
                                                 k > 0 ? at(L, k - 1, px, py) : stereo::kSgmBig,
                                                 k + 1 < D ? at(L, k + 1, px, py) : stereo::kSgmBig,
                                                 prev_min, plan.p1, plan.p2);
                    L[layer * k + static_cast<std::size_t>(y) * W + x] = v;
                    S[layer * k + static_cast<std::size_t>(y) * W + x] += v;
                }
            }
        }
    }
    return S;
}

}  // namespace

template <class T>
void stereo(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan) {
    const int W = left.width, H = left.height, C = left.channels, D = plan.num_d, r = plan.radius;
    const std::size_t layer = static_cast<std::size_t>(W) * H;
    // Census: each image's codes, once.
    std::vector<std::uint64_t> cl, cr;
    if (plan.census) {
        std::vector<double> il(layer), ir(layer);
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                il[static_cast<std::size_t>(y) * W + x] =
                    stereo::intensity(left.row(y) + static_cast<std::ptrdiff_t>(x) * C, C);
                ir[static_cast<std::size_t>(y) * W + x] =
                    stereo::intensity(right.row(y) + static_cast<std::ptrdiff_t>(x) * C, C);
            }
        cl.resize(layer);
        cr.resize(layer);
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                const std::size_t i = static_cast<std::size_t>(y) * W + x;
                cl[i] = stereo::census_code(il.data(), W, H, x, y);
                cr[i] = stereo::census_code(ir.data(), W, H, x, y);
            }
    }
    // The DSI: layer k holds the cost of left pixel x against right pixel clamp(x - d).
    std::vector<int> q(layer * D);
    for (int k = 0; k < D; ++k) {
        const int d = plan.min_d + k;
        for (int y = 0; y < H; ++y)
            for (int x = 0; x < W; ++x) {
                const int xr = stereo::clamp_index(x - d, W);
                const std::size_t i = static_cast<std::size_t>(y) * W;
                q[layer * k + i + x] =
                    plan.census
                        ? stereo::census_cost(cl[i + x], cr[i + xr], plan.max_q)
                        : stereo::pixel_cost(left.row(y) + static_cast<std::ptrdiff_t>(x) * C,
                                             right.row(y) + static_cast<std::ptrdiff_t>(xr) * C, C,
                                             plan.max_q);
            }
    }
    std::vector<std::int64_t> cube;
    if (plan.sgm_paths > 0) {
        cube = sgm_sums(q, W, H, plan);
    } else {
        cube.resize(layer * D);
        for (int k = 0; k < D; ++k)
            for (int y = 0; y < H; ++y)
                for (int x = 0; x < W; ++x) {
                    std::int64_t s = 0;
                    for (int i = -r; i <= r; ++i)
                        for (int j = -r; j <= r; ++j)
                            s += static_cast<std::int64_t>(plan.weights[i < 0 ? -i : i]) *
                                 plan.weights[j < 0 ? -j : j] *
                                 q[layer * k +
                                   static_cast<std::size_t>(stereo::clamp_index(y + i, H)) * W +
                                   stereo::clamp_index(x + j, W)];
                    cube[layer * k + static_cast<std::size_t>(y) * W + x] = s;
                }
    }
    finish(
        W, H, plan,
        [&](int k, int y, int x) { return cube[layer * k + static_cast<std::size_t>(y) * W + x]; },
        disparity, right_disparity, valid);
}

template void stereo(Span2D<const std::uint8_t>, Span2D<const std::uint8_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&);
template void stereo(Span2D<const std::uint16_t>, Span2D<const std::uint16_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&);
template void stereo(Span2D<const float>, Span2D<const float>, Span2D<float>, Span2D<float>,
                     Span2D<std::uint8_t>, const StereoPlan&);

}  // namespace upres::ref
