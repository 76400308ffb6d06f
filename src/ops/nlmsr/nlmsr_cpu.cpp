// The CPU NLM fusion (upres/nlmsr.hpp): per band of rows, per frame and search offset, the
// squared differences' patch sums as box sums (column sums slid down the band, row sums of
// 2 pr + 1 column sums by doubling), so the cost per pixel barely grows with the patch area. The
// rows of the band are first copied with their clamped borders (the estimate's once per band, the
// frame's once per frame and vertical offset), so that every inner loop is a plain vector loop.
// Float sums: within 0.02 levels of the reference (tests).
// The band is compiled twice, for the baseline x86-64 (SSE2) and for AVX2 without FMA (chosen at
// run time by cpu_avx2_fma(); UPRES_CPU_BASELINE=1 forces the baseline): every loop is
// element-wise, so the 8-lane copy does the same float operations as the 4-lane one and the
// two give the same bits.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "core/cpu_features.hpp"
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

#if defined(__GNUC__) || defined(__clang__)
#define UPRES_NLM_INLINE inline __attribute__((always_inline))
#else
#define UPRES_NLM_INLINE inline
#endif

// c[i] += sign * (e[i] - u[i])^2 for i in [0, n).
UPRES_NLM_INLINE void add_sq_diff(const float* __restrict e, const float* __restrict u,
                                  float* __restrict c, int n, float sign) {
#pragma omp simd
    for (int i = 0; i < n; ++i) {
        const float d = e[i] - u[i];
        c[i] += sign * (d * d);
    }
}

struct FuseJob {
    std::span<const Span2D<const float>> frames;
    Span2D<const float> estimate;
    Span2D<float> out;
    int pr, sr;
    float neg_inv;
};

// The fusion of the band of rows [b kBandRows, (b + 1) kBandRows).
UPRES_NLM_INLINE void fuse_band(int b, const FuseJob& job) {
    const Span2D<const float>& estimate = job.estimate;
    const int W = estimate.width, H = estimate.height, pr = job.pr, sr = job.sr;
    const int k = 2 * pr + 1;
    const int xw = W + 2 * pr, uw = xw + 2 * sr;  // padded widths of the estimate / frame rows
    const float neg_inv = job.neg_inv;
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
    const auto add_row = [&](int j, int ox, float sign) {
        add_sq_diff(&ep[static_cast<std::size_t>(j) * xw],
                    &up[static_cast<std::size_t>(j) * uw + sr + ox], col.data(), xw, sign);
    };
    for (const Span2D<const float>& u : job.frames)
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
                        float* wg = wgt.data();
#pragma omp simd
                        for (int x = xa; x < xb; ++x) wg[x] = nlmsr::weight(bx[x], neg_inv);
                        const float* ur = u.row(yc) + ox;
                        float* nr = num.data() + static_cast<std::size_t>(j) * W;
                        float* dr = den.data() + static_cast<std::size_t>(j) * W;
#pragma omp simd
                        for (int x = xa; x < xb; ++x) {
                            nr[x] += wg[x] * ur[x];
                            dr[x] += wg[x];
                        }
                    }
                    add_row(j, ox, -1.0f);
                }
            }
        }
    for (int y = y0; y < y1; ++y) {
        const float* nr = num.data() + static_cast<std::size_t>(y - y0) * W;
        const float* dr = den.data() + static_cast<std::size_t>(y - y0) * W;
        float* o = job.out.row(y);
        const float* e = estimate.row(y);
        for (int x = 0; x < W; ++x) o[x] = dr[x] >= nlmsr::kMinWeightSum ? nr[x] / dr[x] : e[x];
    }
}

void fuse_band_baseline(int b, const FuseJob& job) { fuse_band(b, job); }

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// AVX2 without FMA: a contracted multiply-add would round differently from the baseline path.
__attribute__((target("avx2"))) void fuse_band_avx2(int b, const FuseJob& job) {
    fuse_band(b, job);
}
constexpr bool kAvx2Compiled = true;
#else
void fuse_band_avx2(int b, const FuseJob& job) { fuse_band(b, job); }
constexpr bool kAvx2Compiled = false;
#endif

}  // namespace

void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan, int threads) {
    const FuseJob job{frames,       estimate,      out,
                      plan.patch_r, plan.search_r, static_cast<float>(plan.neg_inv)};
    const int bands = (estimate.height + kBandRows - 1) / kBandRows;
    if (kAvx2Compiled && cpu_avx2_fma())
        parallel_for(0, bands, threads, [&](int b) { fuse_band_avx2(b, job); });
    else
        parallel_for(0, bands, threads, [&](int b) { fuse_band_baseline(b, job); });
}

void nlm_psf(Span2D<const float> in, Span2D<float> out, const nlmsr::PsfTaps& taps, int axis,
             int threads, Span2D<const float> add, float k) {
    parallel_for(0, in.height, threads, [&](int y) {
        float* o = out.row(y);
        for (int x = 0; x < in.width; ++x) {
            const float v =
                axis == 0 ? nlmsr::psf_sample<float>(in.row(y), 1, in.width, x, taps)
                          : nlmsr::psf_sample<float>(in.data + x, in.stride, in.height, y, taps);
            o[x] = nlmsr::psf_epilogue(v, add.data ? &add(x, y) : nullptr, k);
        }
    });
}

}  // namespace upres::cpu
