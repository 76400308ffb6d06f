// Cpu backend of upres::stereo_disparity: the streaming form of the paper's FPGA matcher
// (section 6.2). The image is cut into horizontal stripes processed independently (OpenMP,
// static); a stripe runs the disparities one after another, computing each DSI layer only for
// its rows plus the window's radius, filtering it with the separable weights (a column pass,
// then a row pass: the same integer sums as the 2-D filter) and updating each pixel's winner
// state (stereo_math.hpp: best, its two neighbours, the uniqueness competitor) for the
// left-based map at x and the right-based map at x - d. Memory per thread O(stripe x W), never
// the W x H x D cube. Bit-identical to the reference.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/parallel.hpp"
#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_math.hpp"

namespace upres::cpu {

namespace {

// Rows per stripe: small enough that the stripe's cost rows and winner states stay in the
// per-core caches for the usual widths, large enough that the 2r halo rows cost little.
constexpr int kStripe = 32;

}  // namespace

template <class T>
void stereo(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
            int threads) {
    const int W = left.width, H = left.height, C = left.channels, r = plan.radius;
    const int stripes = (H + kStripe - 1) / kStripe;
    parallel_for(0, stripes, threads, [&](int s) {
        const int y0 = s * kStripe, y1 = std::min(H, y0 + kStripe), rows = y1 - y0;
        const int ylo = std::max(0, y0 - r), yhi = std::min(H, y1 + r);
        std::vector<int> q(static_cast<std::size_t>(yhi - ylo) * W);
        std::vector<std::int32_t> v(static_cast<std::size_t>(W) + 2 * r), h(W);
        std::vector<stereo::Winner> wl(static_cast<std::size_t>(rows) * W),
            wr(static_cast<std::size_t>(rows) * W);
        for (int k = 0; k < plan.num_d; ++k) {
            const int d = plan.min_d + k;
            // Pixels x with x - d inside the image: the layer's candidates.
            const int lo = std::max(0, d), hi = std::min(W, W + d);
            if (lo >= hi) continue;
            for (int y = ylo; y < yhi; ++y) {
                const T* l = left.row(y);
                const T* rr = right.row(y);
                int* qr = q.data() + static_cast<std::size_t>(y - ylo) * W;
                for (int x = 0; x < W; ++x)
                    qr[x] = stereo::pixel_cost(
                        l + static_cast<std::ptrdiff_t>(x) * C,
                        rr + static_cast<std::ptrdiff_t>(stereo::clamp_index(x - d, W)) * C, C,
                        plan.max_q);
            }
            for (int y = y0; y < y1; ++y) {
                // Column pass into v (with r clamped columns on each side), then the row pass.
                std::int32_t* vc = v.data() + r;
                for (int x = 0; x < W; ++x) vc[x] = 0;
                for (int i = -r; i <= r; ++i) {
                    const int g = plan.weights[i < 0 ? -i : i];
                    const int* qr =
                        q.data() +
                        static_cast<std::size_t>(stereo::clamp_index(y + i, H) - ylo) * W;
                    for (int x = 0; x < W; ++x) vc[x] += g * qr[x];
                }
                for (int j = 1; j <= r; ++j) {
                    vc[-j] = vc[0];
                    vc[W - 1 + j] = vc[W - 1];
                }
                for (int x = lo; x < hi; ++x) {
                    std::int32_t acc = plan.weights[0] * vc[x];
                    for (int j = 1; j <= r; ++j) acc += plan.weights[j] * (vc[x - j] + vc[x + j]);
                    h[x] = acc;
                }
                stereo::Winner* wlr = wl.data() + static_cast<std::size_t>(y - y0) * W;
                stereo::Winner* wrr = wr.data() + static_cast<std::size_t>(y - y0) * W;
                for (int x = lo; x < hi; ++x) {
                    stereo::winner_update(wlr[x], d, h[x]);
                    stereo::winner_update(wrr[x - d], d, h[x]);
                }
            }
        }
        for (int y = y0; y < y1; ++y) {
            const stereo::Winner* wlr = wl.data() + static_cast<std::size_t>(y - y0) * W;
            const stereo::Winner* wrr = wr.data() + static_cast<std::size_t>(y - y0) * W;
            for (int x = 0; x < W; ++x) {
                const stereo::Winner& w = wlr[x];
                bool ok = w.best >= 0 && stereo::unique_enough(w, plan.uniqueness);
                if (ok && plan.lr_check >= 0) {
                    const stereo::Winner& o = wrr[x - w.best_d];
                    const int diff = w.best_d - o.best_d;
                    ok = o.best >= 0 && (diff < 0 ? -diff : diff) <= plan.lr_check;
                }
                disparity.row(y)[x] = ok ? stereo::refined(w, plan.subpixel) : plan.invalid;
                if (valid.data) valid.row(y)[x] = ok ? 255 : 0;
                if (right_disparity.data)
                    right_disparity.row(y)[x] =
                        wrr[x].best >= 0 ? stereo::refined(wrr[x], plan.subpixel) : plan.invalid;
            }
        }
    });
}

template void stereo(Span2D<const std::uint8_t>, Span2D<const std::uint8_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&, int);
template void stereo(Span2D<const std::uint16_t>, Span2D<const std::uint16_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&, int);
template void stereo(Span2D<const float>, Span2D<const float>, Span2D<float>, Span2D<float>,
                     Span2D<std::uint8_t>, const StereoPlan&, int);

}  // namespace upres::cpu
