// The CPU NLM fusion (upres/nlmsr.hpp): per band of rows, per frame and search offset, the
// squared differences' patch sums as box sums (column sums slid down the band, row sums of
// 2 pr + 1 column sums by doubling), so the cost per pixel barely grows with the patch area. The
// rows of the band are first copied with their clamped borders (the estimate's once per band, the
// frame's once per frame and vertical offset), so that every inner loop is a plain vector loop.
// Float sums: within 0.02 levels of the reference (tests).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/parallel.hpp"
#include "ops/nlmsr/nlmsr_backends.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"

namespace upres::cpu {

namespace {
// Rows per band: long enough that the band's start-up (2 pr + 1 rows summed) is a small share.
constexpr int kBandRows = 32;

// dst[i] = src(clamp(i - pad), y) for i in [0, w + 2 pad).
void padded_row(const Span2D<const float>& src, int y, int pad, float* dst) {
    const float* r = src.row(nlmsr::clamp_index(y, src.height));
    const int w = src.width;
    for (int i = 0; i < w + 2 * pad; ++i) dst[i] = r[nlmsr::clamp_index(i - pad, w)];
}
}  // namespace

void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan, int threads) {
    const int W = estimate.width, H = estimate.height, pr = plan.patch_r, sr = plan.search_r;
    const int bands = (H + kBandRows - 1) / kBandRows, k = 2 * pr + 1;
    const int xw = W + 2 * pr, uw = xw + 2 * sr;  // padded widths of the estimate / frame rows
    const float neg_inv = static_cast<float>(plan.neg_inv);
    parallel_for(0, bands, threads, [&](int b) {
        const int y0 = b * kBandRows, y1 = std::min(H, y0 + kBandRows), rows = y1 - y0;
        const int prow = rows + 2 * pr;  // padded rows y0 - pr .. y1 - 1 + pr
        std::vector<float> num(static_cast<std::size_t>(rows) * W, 0.0f);
        std::vector<float> den(num.size(), 0.0f);
        std::vector<float> ep(static_cast<std::size_t>(prow) * xw), up(std::size_t(prow) * uw);
        std::vector<float> col(xw), box(W), wgt(W);
        int top = 0;  // the highest binary digit of k
        while ((2 << top) <= k) ++top;
        std::vector<float> pow_buf(static_cast<std::size_t>(top + 1) * xw);
        const float* lev[8] = {};
        for (int j = 0; j < prow; ++j) padded_row(estimate, y0 - pr + j, pr, &ep[j * xw]);
        // col[i] += sign * (ep(row j) - up(row j) shifted by ox)^2
        auto add_row = [&](int j, int ox, float sign) {
            const float* e = &ep[static_cast<std::size_t>(j) * xw];
            const float* u = &up[static_cast<std::size_t>(j) * uw + sr + ox];
            float* c = col.data();
#pragma omp simd
            for (int i = 0; i < xw; ++i) {
                const float d = e[i] - u[i];
                c[i] += sign * (d * d);
            }
        };
        for (const Span2D<const float>& u : frames)
            for (int oy = -sr; oy <= sr; ++oy) {
                for (int j = 0; j < prow; ++j)
                    padded_row(u, y0 - pr + j + oy, pr + sr, &up[static_cast<std::size_t>(j) * uw]);
                for (int ox = -sr; ox <= sr; ++ox) {
                    std::fill(col.begin(), col.end(), 0.0f);
                    for (int j = 0; j < k - 1; ++j) add_row(j, ox, 1.0f);
                    const int xa = std::max(0, -ox), xb = std::min(W, W - ox);
                    for (int y = y0; y < y1; ++y) {
                        const int j = y - y0;  // padded rows j .. j + 2 pr are y's window
                        add_row(j + k - 1, ox, 1.0f);
                        const int yc = y + oy;
                        if (yc >= 0 && yc < H && xa < xb) {
                            // Box sums of k column sums by doubling: lev[l][x] sums 2^l of
                            // them from x; the box adds the levels of k's binary digits at
                            // growing offsets (13 = 8 + 4 + 1: 4 adds a pixel instead of 12).
                            lev[0] = col.data();
                            for (int l = 1; l <= top; ++l) {
                                const float* a = lev[l - 1];
                                float* d = &pow_buf[static_cast<std::size_t>(l) * xw];
                                const int half = 1 << (l - 1), n = xw - 2 * half + 1;
#pragma omp simd
                                for (int x = 0; x < n; ++x) d[x] = a[x] + a[x + half];
                                lev[l] = d;
                            }
                            float* bx = box.data();
                            std::fill(bx, bx + W, 0.0f);
                            for (int l = top, off = 0; l >= 0; --l) {
                                if (!(k & (1 << l))) continue;
                                const float* a = lev[l] + off;
#pragma omp simd
                                for (int x = 0; x < W; ++x) bx[x] += a[x];
                                off += 1 << l;
                            }
#pragma omp simd
                            for (int x = xa; x < xb; ++x) wgt[x] = nlmsr::weight(bx[x], neg_inv);
                            const float* ur = u.row(yc) + ox;
                            float* nr = num.data() + static_cast<std::size_t>(j) * W;
                            float* dr = den.data() + static_cast<std::size_t>(j) * W;
#pragma omp simd
                            for (int x = xa; x < xb; ++x) {
                                nr[x] += wgt[x] * ur[x];
                                dr[x] += wgt[x];
                            }
                        }
                        add_row(j, ox, -1.0f);
                    }
                }
            }
        for (int y = y0; y < y1; ++y) {
            const float* nr = num.data() + static_cast<std::size_t>(y - y0) * W;
            const float* dr = den.data() + static_cast<std::size_t>(y - y0) * W;
            float* o = out.row(y);
            const float* e = estimate.row(y);
            for (int x = 0; x < W; ++x) o[x] = dr[x] >= nlmsr::kMinWeightSum ? nr[x] / dr[x] : e[x];
        }
    });
}

}  // namespace upres::cpu
