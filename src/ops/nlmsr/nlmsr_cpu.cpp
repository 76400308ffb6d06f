// The CPU NLM fusion (upres/nlmsr.hpp): per band of rows, per frame and search offset, the
// squared differences' patch sums as running box sums (vertical sums slid down the band,
// horizontal sums from a prefix), so the cost per pixel no longer grows with the patch area.
// Running sums in double keep the distances within rounding of the reference's.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/parallel.hpp"
#include "ops/nlmsr/nlmsr_backends.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"

namespace upres::cpu {

namespace {
// Rows per band: long enough that the band's start-up (2r + 1 rows summed) is a small share.
constexpr int kBandRows = 32;
}  // namespace

void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan, int threads) {
    const int W = estimate.width, H = estimate.height, pr = plan.patch_r, sr = plan.search_r;
    const int bands = (H + kBandRows - 1) / kBandRows, xw = W + 2 * pr;
    const float neg_inv = static_cast<float>(plan.neg_inv);
    parallel_for(0, bands, threads, [&](int b) {
        const int y0 = b * kBandRows, y1 = std::min(H, y0 + kBandRows), rows = y1 - y0;
        std::vector<double> num(static_cast<std::size_t>(rows) * W, 0.0);
        std::vector<double> den(num.size(), 0.0);
        std::vector<double> col(xw), pre(xw + 1);
        std::vector<int> xc(xw);  // clamped column of x' = i - pr
        for (int i = 0; i < xw; ++i) xc[i] = nlmsr::clamp_index(i - pr, W);
        // The squared difference at (x' = i - pr, y') of the offset (ox, oy).
        auto sq_row = [&](const Span2D<const float>& u, int ox, int oy, int yy, double sign) {
            const float* e = estimate.row(nlmsr::clamp_index(yy, H));
            const float* r = u.row(nlmsr::clamp_index(yy + oy, H));
            for (int i = 0; i < xw; ++i) {
                const double d =
                    static_cast<double>(e[xc[i]]) - r[nlmsr::clamp_index(i - pr + ox, W)];
                col[i] += sign * d * d;
            }
        };
        for (const Span2D<const float>& u : frames)
            for (int oy = -sr; oy <= sr; ++oy)
                for (int ox = -sr; ox <= sr; ++ox) {
                    std::fill(col.begin(), col.end(), 0.0);
                    for (int yy = y0 - pr; yy <= y0 + pr; ++yy) sq_row(u, ox, oy, yy, 1.0);
                    for (int y = y0; y < y1; ++y) {
                        if (y > y0) {
                            sq_row(u, ox, oy, y + pr, 1.0);
                            sq_row(u, ox, oy, y - pr - 1, -1.0);
                        }
                        const int yc = y + oy;
                        if (yc < 0 || yc >= H) continue;
                        pre[0] = 0.0;
                        for (int i = 0; i < xw; ++i) pre[i + 1] = pre[i] + col[i];
                        const float* ur = u.row(yc);
                        double* nr = num.data() + static_cast<std::size_t>(y - y0) * W;
                        double* dr = den.data() + static_cast<std::size_t>(y - y0) * W;
                        const int xa = std::max(0, -ox), xb = std::min(W, W - ox);
                        for (int x = xa; x < xb; ++x) {
                            const float d = static_cast<float>(pre[x + 2 * pr + 1] - pre[x]);
                            const float w = nlmsr::weight(d, neg_inv);
                            nr[x] += static_cast<double>(w) * ur[x + ox];
                            dr[x] += w;
                        }
                    }
                }
        for (int y = y0; y < y1; ++y) {
            const double* nr = num.data() + static_cast<std::size_t>(y - y0) * W;
            const double* dr = den.data() + static_cast<std::size_t>(y - y0) * W;
            float* o = out.row(y);
            const float* e = estimate.row(y);
            for (int x = 0; x < W; ++x)
                o[x] = dr[x] >= nlmsr::kMinWeightSum ? static_cast<float>(nr[x] / dr[x]) : e[x];
        }
    });
}

}  // namespace upres::cpu
