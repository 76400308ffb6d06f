// Cpu backend of upres::stereo_disparity: the streaming form of the paper's FPGA matcher
// (section 6.2). The image is cut into horizontal stripes processed independently (OpenMP,
// static); a stripe runs the disparities one after another, computing each DSI layer only for
// its rows plus the window's radius, filtering it with the separable weights (a column pass,
// then a row pass: the same integer sums as the 2-D filter) and updating each pixel's winner
// state (stereo_math.hpp's winner_step: best, its two neighbours, the uniqueness competitor)
// for the left-based map at x and the right-based map at x - d. The states are rows of int32
// arrays updated branch-free, so every loop over x vectorises; a stripe is compiled twice, for
// the baseline x86-64 and for AVX2 (chosen at run time, UPRES_CPU_BASELINE=1 forces the
// baseline). Memory per thread O(stripe x W), never the W x H x D cube. Bit-identical to the
// reference on both paths.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "core/cpu_features.hpp"
#include "core/host_scratch.hpp"
#include "core/parallel.hpp"
#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_cpu_rows.hpp"
#include "ops/stereo/stereo_math.hpp"

namespace upres::cpu {

namespace {

// Rows per stripe: the stripe's winner states (2 maps x 7 int32 per pixel) stay near the
// per-core L2 for widths up to ~1300 pixels; the 2r halo rows of costs cost little.
constexpr int kStripe = 16;

using stereo::kNone;

// Costs of row y for layer d: q[x] = cost(L(x), R(clamp(x - d))), the clamp only outside
// [a, b) (where x - d is inside the image), C a compile-time channel count.
#if defined(__GNUC__) || defined(__clang__)
#define UPRES_STEREO_INLINE inline __attribute__((always_inline))
#else
#define UPRES_STEREO_INLINE inline
#endif

template <class T, int C>
UPRES_STEREO_INLINE void cost_row(const T* __restrict l, const T* __restrict r, int w, int d,
                                  int max_q, int* __restrict q) {
    const int a = std::clamp(d, 0, w), b = std::clamp(w + d, 0, w);
    for (int x = 0; x < a; ++x) q[x] = stereo::pixel_cost(l + x * C, r, C, max_q);
    const T* rs = r - static_cast<std::ptrdiff_t>(d) * C;
    for (int x = a; x < b; ++x) q[x] = stereo::pixel_cost(l + x * C, rs + x * C, C, max_q);
    for (int x = b; x < w; ++x) q[x] = stereo::pixel_cost(l + x * C, r + (w - 1) * C, C, max_q);
}

// Census costs of a row: q[x] = census_cost(cl[x], cr[clamp(x - d)]).
UPRES_STEREO_INLINE void census_row(const std::uint64_t* __restrict cl,
                                    const std::uint64_t* __restrict cr, int w, int d, int max_q,
                                    int* __restrict q) {
    const int a = std::clamp(d, 0, w), b = std::clamp(w + d, 0, w);
    for (int x = 0; x < a; ++x) q[x] = stereo::census_cost(cl[x], cr[0], max_q);
    for (int x = a; x < b; ++x) q[x] = stereo::census_cost(cl[x], cr[x - d], max_q);
    for (int x = b; x < w; ++x) q[x] = stereo::census_cost(cl[x], cr[w - 1], max_q);
}

// Winner states of a stripe's rows (one int32 array per field, rows of w).
struct States {
    std::vector<std::int32_t> best, best_d, before, after, far, prev, below2;
    explicit States(std::size_t n)
        : best(n, kNone),
          best_d(n, 0),
          before(n, kNone),
          after(n, kNone),
          far(n, kNone),
          prev(n, kNone),
          below2(n, kNone) {}
};

// winner_step over n consecutive states from index i, with the sums c[0 .. n).
UPRES_STEREO_INLINE void step_run(States& s, std::size_t i, int n, int d,
                                  const std::int32_t* __restrict c) {
    std::int32_t* __restrict best = s.best.data() + i;
    std::int32_t* __restrict best_d = s.best_d.data() + i;
    std::int32_t* __restrict before = s.before.data() + i;
    std::int32_t* __restrict after = s.after.data() + i;
    std::int32_t* __restrict far = s.far.data() + i;
    std::int32_t* __restrict prev = s.prev.data() + i;
    std::int32_t* __restrict below2 = s.below2.data() + i;
#pragma omp simd
    for (int k = 0; k < n; ++k)
        stereo::winner_step(best[k], best_d[k], before[k], after[k], far[k], prev[k], below2[k], d,
                            c[k]);
}

stereo::Winner winner_at(const States& s, std::size_t i) {
    return stereo::finished(s.best[i], s.best_d[i], s.before[i], s.after[i], s.far[i]);
}

// The arguments of a stripe.
template <class T>
struct Job {
    Span2D<const T> left, right;
    Span2D<float> disparity, right_disparity;
    Span2D<std::uint8_t> valid;
    const StereoPlan* plan;
    const std::uint64_t* census_left = nullptr;  // W x H codes (census cost), else null
    const std::uint64_t* census_right = nullptr;
};

// One stripe of rows, start to finish. Inlined into the two entry points below, compiled for
// the baseline x86-64 and for AVX2 (8 int32 lanes and a native 32-bit multiply: the filter and
// the winner updates run 8 pixels at a time; same integer results).
template <class T, int C>
UPRES_STEREO_INLINE void stripe(int s, const Job<T>& job) {
    const StereoPlan& plan = *job.plan;
    const int W = job.left.width, H = job.left.height, r = plan.radius, min_d = plan.min_d,
              num_d = plan.num_d, max_q = plan.max_q;
    const int y0 = s * kStripe, y1 = std::min(H, y0 + kStripe), rows = y1 - y0;
    const int ylo = std::max(0, y0 - r), yhi = std::min(H, y1 + r);
    std::vector<int> q(static_cast<std::size_t>(yhi - ylo) * W);
    std::vector<std::int32_t> v(static_cast<std::size_t>(W) + 2 * r), h(W);
    States wl(static_cast<std::size_t>(rows) * W), wr(static_cast<std::size_t>(rows) * W);
    int g[16];
    for (int j = 0; j <= r; ++j) g[j] = plan.weights[j];
    for (int k = 0; k < num_d; ++k) {
        const int d = min_d + k;
        // Pixels x with x - d inside the image: the layer's candidates.
        const int lo = std::max(0, d), hi = std::min(W, W + d);
        if (lo >= hi) continue;
        for (int y = ylo; y < yhi; ++y) {
            int* qr = q.data() + static_cast<std::size_t>(y - ylo) * W;
            if (job.census_left)
                census_row(job.census_left + static_cast<std::size_t>(y) * W,
                           job.census_right + static_cast<std::size_t>(y) * W, W, d, max_q, qr);
            else
                cost_row<T, C>(job.left.row(y), job.right.row(y), W, d, max_q, qr);
        }
        for (int y = y0; y < y1; ++y) {
            // Column pass into v (with r clamped columns on each side), then the row pass.
            std::int32_t* __restrict vc = v.data() + r;
            {
                const int* q0 = q.data() + static_cast<std::size_t>(y - ylo) * W;
                for (int x = 0; x < W; ++x) vc[x] = g[0] * q0[x];
            }
            for (int i = 1; i <= r; ++i) {
                const int* __restrict qa =
                    q.data() + static_cast<std::size_t>(stereo::clamp_index(y - i, H) - ylo) * W;
                const int* __restrict qb =
                    q.data() + static_cast<std::size_t>(stereo::clamp_index(y + i, H) - ylo) * W;
                const int gi = g[i];
                for (int x = 0; x < W; ++x) vc[x] += gi * (qa[x] + qb[x]);
            }
            for (int j = 1; j <= r; ++j) {
                vc[-j] = vc[0];
                vc[W - 1 + j] = vc[W - 1];
            }
            std::int32_t* __restrict hh = h.data();
            for (int x = lo; x < hi; ++x) hh[x] = g[0] * vc[x];
            for (int j = 1; j <= r; ++j) {
                const int gj = g[j];
                for (int x = lo; x < hi; ++x) hh[x] += gj * (vc[x - j] + vc[x + j]);
            }
            const std::size_t row = static_cast<std::size_t>(y - y0) * W;
            step_run(wl, row + lo, hi - lo, d, hh + lo);
            step_run(wr, row + lo - d, hi - lo, d, hh + lo);
        }
    }
    for (int y = y0; y < y1; ++y) {
        const std::size_t row = static_cast<std::size_t>(y - y0) * W;
        for (int x = 0; x < W; ++x) {
            const stereo::Winner w = winner_at(wl, row + x);
            bool ok = w.best >= 0 && stereo::unique_enough(w, plan.uniqueness);
            if (ok && plan.lr_check >= 0) {
                const stereo::Winner o = winner_at(wr, row + (x - w.best_d));
                const int diff = w.best_d - o.best_d;
                ok = o.best >= 0 && (diff < 0 ? -diff : diff) <= plan.lr_check;
            }
            job.disparity.row(y)[x] = ok ? stereo::refined(w, plan.subpixel) : plan.invalid;
            if (job.valid.data) job.valid.row(y)[x] = ok ? 255 : 0;
            if (job.right_disparity.data) {
                const stereo::Winner o = winner_at(wr, row + x);
                job.right_disparity.row(y)[x] =
                    o.best >= 0 ? stereo::refined(o, plan.subpixel) : plan.invalid;
            }
        }
    }
}

template <class T, int C>
void stripe_baseline(int s, const Job<T>& job) {
    stripe<T, C>(s, job);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same stripe compiled for AVX2 through the function's target attribute (the inline
// functions it calls are inlined here; their out-of-line copies stay baseline, so nothing
// compiled for AVX2 can leak into the baseline paths). Chosen by cpu_avx2_fma().
// Aloe (1282 x 1110), 64 disparities, Gauss 7 x 7, one thread, the 2-core AMD EPYC machine:
// 0.19 s of CPU against 0.33 s for the baseline path.
template <class T, int C>
__attribute__((target("avx2,fma"))) void stripe_avx2(int s, const Job<T>& job) {
    stripe<T, C>(s, job);
}
constexpr bool kAvx2Compiled = true;
#else
template <class T, int C>
void stripe_avx2(int s, const Job<T>& job) {
    stripe<T, C>(s, job);
}
constexpr bool kAvx2Compiled = false;
#endif

// The census codes of row y (stereo_math.hpp's census_code): inside the image as one pass
// over the row per neighbour, so that the comparisons vectorise over x (the code's shift
// chain per pixel was a quarter of the semi-global matcher's time); the border pixels one by
// one. A float plane builds the code in two 31-bit halves of 32-bit lanes (eight comparisons
// to an AVX2 register instead of four: the codes of a 1282 x 1110 pair 2x faster).
template <class P>
UPRES_STEREO_INLINE void census_row_body(const P* plane, int W, int H, int y,
                                         std::uint64_t* __restrict out,
                                         std::uint32_t* __restrict hi,
                                         std::uint32_t* __restrict lo) {
    constexpr int rx = stereo::kCensusRx, ry = stereo::kCensusRy;
    if (y < ry || y >= H - ry || W <= 2 * rx) {
        for (int x = 0; x < W; ++x) out[x] = stereo::census_code(plane, W, H, x, y);
        return;
    }
    for (int x = 0; x < rx; ++x) out[x] = stereo::census_code(plane, W, H, x, y);
    for (int x = W - rx; x < W; ++x) out[x] = stereo::census_code(plane, W, H, x, y);
    const P* __restrict c = plane + static_cast<std::size_t>(y) * W;
    if constexpr (std::is_same_v<P, double>) {
        for (int x = rx; x < W - rx; ++x) out[x] = 0;
        for (int dy = -ry; dy <= ry; ++dy)
            for (int dx = -rx; dx <= rx; ++dx) {
                if (dx == 0 && dy == 0) continue;
                const P* __restrict r = plane + static_cast<std::ptrdiff_t>(y + dy) * W + dx;
                for (int x = rx; x < W - rx; ++x)
                    out[x] = (out[x] << 1) | static_cast<std::uint64_t>(r[x] < c[x]);
            }
    } else {
        constexpr int kHalf = ((2 * rx + 1) * (2 * ry + 1) - 1) / 2;
        for (int x = rx; x < W - rx; ++x) hi[x] = lo[x] = 0;
        int n = 0;
        for (int dy = -ry; dy <= ry; ++dy)
            for (int dx = -rx; dx <= rx; ++dx) {
                if (dx == 0 && dy == 0) continue;
                const P* __restrict r = plane + static_cast<std::ptrdiff_t>(y + dy) * W + dx;
                std::uint32_t* __restrict h = n++ < kHalf ? hi : lo;
                for (int x = rx; x < W - rx; ++x)
                    h[x] = (h[x] << 1) | static_cast<std::uint32_t>(r[x] < c[x]);
            }
        for (int x = rx; x < W - rx; ++x)
            out[x] = (static_cast<std::uint64_t>(hi[x]) << kHalf) | lo[x];
    }
}
template <class P>
void census_codes_row(const P* plane, int W, int H, int y, std::uint64_t* out, std::uint32_t* hi,
                      std::uint32_t* lo) {
    census_row_body(plane, W, H, y, out, hi, lo);
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
template <class P>
__attribute__((target("avx2,fma"))) void census_codes_row_avx2(const P* plane, int W, int H, int y,
                                                               std::uint64_t* out,
                                                               std::uint32_t* hi,
                                                               std::uint32_t* lo) {
    census_row_body(plane, W, H, y, out, hi, lo);
}
// Float planes with AVX2: eight pixels at a time through all 62 neighbours in registers (the
// row-at-a-time loop above loaded and stored the halves once per neighbour: 1.8x slower).
template <>
__attribute__((target("avx2,fma"))) void census_codes_row_avx2<float>(const float* plane, int W,
                                                                      int H, int y,
                                                                      std::uint64_t* out,
                                                                      std::uint32_t* hi,
                                                                      std::uint32_t* lo) {
    constexpr int rx = stereo::kCensusRx, ry = stereo::kCensusRy;
    constexpr int kN = (2 * rx + 1) * (2 * ry + 1) - 1, kHalf = kN / 2;
    if (y < ry || y >= H - ry || W < 2 * rx + 8) {
        census_row_body(plane, W, H, y, out, hi, lo);
        return;
    }
    std::ptrdiff_t off[kN];
    for (int dy = -ry, i = 0; dy <= ry; ++dy)
        for (int dx = -rx; dx <= rx; ++dx)
            if (dx != 0 || dy != 0) off[i++] = static_cast<std::ptrdiff_t>(dy) * W + dx;
    const float* c = plane + static_cast<std::size_t>(y) * W;
    for (int x = 0; x < rx; ++x) out[x] = stereo::census_code(plane, W, H, x, y);
    int x = rx;
    for (; x + 8 <= W - rx; x += 8) {
        const __m256i one = _mm256_set1_epi32(1);
        const __m256 cv = _mm256_loadu_ps(c + x);
        __m256i h = _mm256_setzero_si256(), l = _mm256_setzero_si256();
        for (int i = 0; i < kHalf; ++i) {
            const __m256 m = _mm256_cmp_ps(_mm256_loadu_ps(c + x + off[i]), cv, _CMP_LT_OQ);
            h = _mm256_or_si256(_mm256_slli_epi32(h, 1),
                                _mm256_and_si256(_mm256_castps_si256(m), one));
        }
        for (int i = kHalf; i < kN; ++i) {
            const __m256 m = _mm256_cmp_ps(_mm256_loadu_ps(c + x + off[i]), cv, _CMP_LT_OQ);
            l = _mm256_or_si256(_mm256_slli_epi32(l, 1),
                                _mm256_and_si256(_mm256_castps_si256(m), one));
        }
        for (int half = 0; half < 2; ++half) {
            const __m256i hq = _mm256_cvtepu32_epi64(half ? _mm256_extracti128_si256(h, 1)
                                                          : _mm256_castsi256_si128(h));
            const __m256i lq = _mm256_cvtepu32_epi64(half ? _mm256_extracti128_si256(l, 1)
                                                          : _mm256_castsi256_si128(l));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + x + 4 * half),
                                _mm256_or_si256(_mm256_slli_epi64(hq, kN - kHalf), lq));
        }
    }
    for (; x < W; ++x) out[x] = stereo::census_code(plane, W, H, x, y);
}
#else
template <class P>
void census_codes_row_avx2(const P* plane, int W, int H, int y, std::uint64_t* out,
                           std::uint32_t* hi, std::uint32_t* lo) {
    census_row_body(plane, W, H, y, out, hi, lo);
}
#endif

// Both images' census codes (W x H each, into cl and cr) through intensity planes of type P
// (planes: 2 x W x H of them).
template <class P, class T>
void census_codes(Span2D<const T> left, Span2D<const T> right, int threads, P* planes,
                  std::uint64_t* cl, std::uint64_t* cr) {
    const int W = left.width, H = left.height, C = left.channels;
    P* il = planes;
    P* ir = planes + static_cast<std::size_t>(W) * H;
    const bool avx2 = kAvx2Compiled && cpu_avx2_fma();
    parallel_for(0, H, threads, [&](int y) {
        if (C == 1) {  // the sum is the value: a loop that vectorises
            P* __restrict a = il + static_cast<std::size_t>(y) * W;
            P* __restrict b = ir + static_cast<std::size_t>(y) * W;
            const T* __restrict l = left.row(y);
            const T* __restrict r = right.row(y);
            for (int x = 0; x < W; ++x) a[x] = static_cast<P>(l[x]), b[x] = static_cast<P>(r[x]);
            return;
        }
        for (int x = 0; x < W; ++x) {
            il[static_cast<std::size_t>(y) * W + x] = static_cast<P>(
                stereo::intensity(left.row(y) + static_cast<std::ptrdiff_t>(x) * C, C));
            ir[static_cast<std::size_t>(y) * W + x] = static_cast<P>(
                stereo::intensity(right.row(y) + static_cast<std::ptrdiff_t>(x) * C, C));
        }
    });
    parallel_for(0, H, threads, [&](int y) {
        thread_local std::vector<std::uint32_t> hi, lo;
        hi.resize(W);
        lo.resize(W);
        const std::size_t row = static_cast<std::size_t>(y) * W;
        for (auto [plane, out] : {std::pair{il, cl}, std::pair{ir, cr}}) {
            if (avx2)
                census_codes_row_avx2(plane, W, H, y, out + row, hi.data(), lo.data());
            else
                census_codes_row(plane, W, H, y, out + row, hi.data(), lo.data());
        }
    });
}

// The row schedule of the window matcher, for plans whose costs are all multiples of 16 (gray
// u8 absolute differences or census, a truncation that is a multiple of 16) with at most 256
// candidates and no right-based map asked for: the rows of a part one after another, each
// row's sums for every pixel and candidate at once (d fastest), then the row's search with the
// semi-global matcher's keys. In units of 16 the costs are at most 255, the column sums (weights'
// sum x 255) fit 16 bits and the row sums (sum^2 x 255) are below 2^24, exact in float; the
// sums are the streaming schedule's / 16, and every decision (the smallest sum, ties, the
// uniqueness ratio, the parabola) is the same on sums scaled by 16. Per row: the new cost row
// into a ring of the window's 2r + 1 rows, the column pass on 16-bit lanes, the row pass and
// the search per pixel on its D sums.
// Its ring holds (2r + 1) x W x D bytes per thread: above 64 MiB (a 30000-pixel-wide pair with
// 13 x 13 and 256 disparities would take 100 MB per thread) the streaming schedule runs instead.
template <class T>
bool row_schedule(const StereoPlan& plan, int width, int channels, bool right_map) {
    if (right_map || plan.num_d > 256 || plan.max_q % stereo::kCostScale != 0) return false;
    if (static_cast<std::size_t>(2 * plan.radius + 1) * width * plan.num_d >
        (std::size_t{64} << 20))
        return false;
    if (!plan.census && !(std::is_same_v<T, std::uint8_t> && channels == 1)) return false;
    long sum = plan.weights[0];
    for (int i = 1; i <= plan.radius; ++i) sum += 2L * plan.weights[i];
    return sum * 255 <= 65535 && sum * sum * 255 < (1L << 24);
}

// The row schedule's column pass: out[e] = g0 rows[0][e] + sum_i g_i (rows[2i - 1][e] +
// rows[2i][e]) for e < n, from 8-bit costs on 16-bit integers (exact: below 2^16), stored as
// float.
inline void column_pass(const std::uint8_t* const* rows, int r, const int* g, std::size_t n,
                        float* __restrict out) {
    for (std::size_t e = 0; e < n; ++e) {
        int v = g[0] * rows[0][e];
        for (int i = 1; i <= r; ++i) v += g[i] * (rows[2 * i - 1][e] + rows[2 * i][e]);
        out[e] = static_cast<float>(v);
    }
}
// The column pass by byte pairs: the window's rows y - r .. y + r taken two at a time,
// interleaved byte by byte and multiplied by their two weights with one vpmaddubsw (16-bit
// results, each pair's at most 255 x 128 < 2^15), 32 outputs per iteration (1.9 instructions an
// output with 16-bit multiplies, 1.3 here). Needs every pair's weights to sum to at most 128
// (pairable_weights: so do gauss7, gauss13 and every box).
inline bool pairable_weights(int r, const int* g) {
    // Rows in order y - r .. y + r, weight g[|i|]; pairs (0, 1), (2, 3), ..., the last alone.
    for (int i = 0; i < 2 * r + 1; i += 2) {
        const int a = g[std::abs(i - r)], b = i + 1 < 2 * r + 1 ? g[std::abs(i + 1 - r)] : 0;
        if (a + b > 128) return false;
    }
    return true;
}
#if UPRES_STEREO_X86
// rows: as for column_pass (rows[0] = y, rows[2i - 1] = y - i, rows[2i] = y + i).
__attribute__((target("avx2,fma"))) inline void column_pass_pairs_avx2(
    const std::uint8_t* const* rows, int r, const int* g, std::size_t n, float* out) {
    const int m = 2 * r + 1, pairs = r + 1;
    const std::uint8_t* in_order[32];
    for (int i = 0; i < m; ++i) {
        const int o = i - r;  // row offset
        in_order[i] = o == 0 ? rows[0] : o < 0 ? rows[2 * -o - 1] : rows[2 * o];
    }
    __m256i w[16];
    for (int p = 0; p < pairs; ++p) {
        const int a = g[std::abs(2 * p - r)], b = 2 * p + 1 < m ? g[std::abs(2 * p + 1 - r)] : 0;
        w[p] = _mm256_set1_epi16(static_cast<short>(a | (b << 8)));
    }
    const __m256i zero = _mm256_setzero_si256();
    std::size_t e = 0;
    for (; e + 32 <= n; e += 32) {
        __m256i lo = zero, hi = zero;
        for (int p = 0; p < pairs; ++p) {
            const __m256i a =
                _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in_order[2 * p] + e));
            const __m256i b =
                2 * p + 1 < m
                    ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(in_order[2 * p + 1] + e))
                    : zero;
            lo = _mm256_add_epi16(lo, _mm256_maddubs_epi16(_mm256_unpacklo_epi8(a, b), w[p]));
            hi = _mm256_add_epi16(hi, _mm256_maddubs_epi16(_mm256_unpackhi_epi8(a, b), w[p]));
        }
        // lo holds outputs 0..7 | 16..23, hi 8..15 | 24..31 (unpacks work within 128-bit lanes).
        _mm256_storeu_ps(out + e,
                         _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(lo))));
        _mm256_storeu_ps(out + e + 8,
                         _mm256_cvtepi32_ps(_mm256_cvtepu16_epi32(_mm256_castsi256_si128(hi))));
        _mm256_storeu_ps(out + e + 16, _mm256_cvtepi32_ps(
                                           _mm256_cvtepu16_epi32(_mm256_extracti128_si256(lo, 1))));
        _mm256_storeu_ps(out + e + 24, _mm256_cvtepi32_ps(
                                           _mm256_cvtepu16_epi32(_mm256_extracti128_si256(hi, 1))));
    }
    if (e < n) {
        const std::uint8_t* rest[16];
        for (int i = 0; i < m; ++i) rest[i] = rows[i] + e;
        column_pass(rest, r, g, n - e, out + e);
    }
}
#endif

// The row schedule's row pass at one pixel: s[k] = g0 c[k] + sum_j g_j (c[k - jD] + c[k + jD])
// (exact in float: below 2^24); rv[k] = min(rv[k], key k); returns the smallest key; k from
// k0 to D - 1.
inline std::uint32_t row_sums(const float* c, int D, int r, const float* g, float* __restrict s,
                              std::uint32_t* __restrict rv, int k0 = 0) {
    std::uint32_t m = 0xffffffffu;
    for (int k = k0; k < D; ++k) {
        float v = g[0] * c[k];
        for (int j = 1; j <= r; ++j)
            v += g[j] * (c[k - static_cast<std::ptrdiff_t>(j) * D] +
                         c[k + static_cast<std::ptrdiff_t>(j) * D]);
        s[k] = v;
        const std::uint32_t key =
            (static_cast<std::uint32_t>(v) << 8) | static_cast<std::uint32_t>(k);
        rv[k] = std::min(rv[k], key);
        m = std::min(m, key);
    }
    return m;
}
#if UPRES_STEREO_X86
// The same on eight float lanes, the sum kept in a register through the window. R: the radius
// when known at compile time (the loop over the window then unrolls), else 0.
template <int R>
__attribute__((target("avx2,fma"))) inline std::uint32_t row_sums_avx2(const float* c, int D,
                                                                       int r_, const float* g,
                                                                       float* s,
                                                                       std::uint32_t* rv) {
    const int r = R > 0 ? R : r_;
    __m256 gv[8];
    for (int j = 0; j <= r; ++j) gv[j] = _mm256_set1_ps(g[j]);
    __m256i m = _mm256_set1_epi32(-1);
    __m256i kv = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const __m256i eight = _mm256_set1_epi32(8);
    int k = 0;
    for (; k + 8 <= D; k += 8) {
        __m256 v = _mm256_mul_ps(gv[0], _mm256_loadu_ps(c + k));
        for (int j = 1; j <= r; ++j) {
            const std::ptrdiff_t o = static_cast<std::ptrdiff_t>(j) * D;
            v = _mm256_fmadd_ps(
                gv[j], _mm256_add_ps(_mm256_loadu_ps(c + k - o), _mm256_loadu_ps(c + k + o)), v);
        }
        _mm256_storeu_ps(s + k, v);
        const __m256i key = _mm256_or_si256(_mm256_slli_epi32(_mm256_cvttps_epi32(v), 8), kv);
        __m256i* at = reinterpret_cast<__m256i*>(rv + k);
        _mm256_storeu_si256(at, _mm256_min_epu32(_mm256_loadu_si256(at), key));
        m = _mm256_min_epu32(m, key);
        kv = _mm256_add_epi32(kv, eight);
    }
    __m128i h = _mm_min_epu32(_mm256_castsi256_si128(m), _mm256_extracti128_si256(m, 1));
    h = _mm_min_epu32(h, _mm_shuffle_epi32(h, 0x4e));
    h = _mm_min_epu32(h, _mm_shuffle_epi32(h, 0xb1));
    std::uint32_t mm = static_cast<std::uint32_t>(_mm_cvtsi128_si32(h));
    if (k < D) mm = std::min(mm, row_sums(c, D, r, g, s, rv, k));
    return mm;
}
#endif

template <class T, bool kAvx2>
UPRES_STEREO_INLINE void rows_part(const Job<T>& job, int ya, int yb, bool avx512) {
    using u16 = std::uint16_t;
    const StereoPlan& plan = *job.plan;
    const int W = job.left.width, H = job.left.height, D = plan.num_d, r = plan.radius,
              M = 2 * r + 1, min_d = plan.min_d, cap = plan.max_q / stereo::kCostScale;
    const std::size_t n = static_cast<std::size_t>(W) * D;
    int g[16];
    for (int j = 0; j <= r; ++j) g[j] = plan.weights[j];
    // Costs in units of 16 are at most 255: the ring holds bytes.
    std::vector<std::uint8_t> ring(M * n);
    std::vector<u16> wide(plan.census ? n : 0);
    std::vector<std::uint64_t> qc(plan.census ? W + D - 1 : 0);
    std::vector<std::uint8_t> qa(plan.census ? 0 : W + D - 1);
    constexpr int kChunk = 128;
    const bool pairs = pairable_weights(r, g);
    std::vector<float> col(static_cast<std::size_t>(kChunk + 2 * r) * D),
        sum(static_cast<std::size_t>(kChunk) * D);
    std::uint32_t all[kChunk];
    std::vector<std::uint32_t> rev(static_cast<std::size_t>(W) + D - 1), right(W);
    std::vector<stereo::Winner> left(W);
    // Source row t (clamped) in the ring's slot t mod M.
    auto slot = [&](int t) { return ring.data() + static_cast<std::size_t>((t % M + M) % M) * n; };
    auto costs = [&](int t) {
        const int y = stereo::clamp_index(t, H);
        std::uint8_t* out = slot(t);
        if (plan.census) {
            const std::uint64_t* cl = job.census_left + static_cast<std::size_t>(y) * W;
            stereo_rows::reversed_row(job.census_right + static_cast<std::size_t>(y) * W, W, min_d,
                                      D, qc.data());
            u16* c = wide.data();
#if UPRES_STEREO_X86
            if constexpr (kAvx2) {
                if (avx512)
                    stereo_rows::census_costs_avx512(cl, qc.data(), W, D, 0, cap, c);
                else
                    stereo_rows::census_costs_avx2(cl, qc.data(), W, D, 0, cap, c);
            } else
#endif
                stereo_rows::census_costs(cl, qc.data(), W, D, 0, cap, c);
            for (std::size_t e = 0; e < n; ++e) out[e] = static_cast<std::uint8_t>(c[e]);
            return;
        }
        if constexpr (std::is_same_v<T, std::uint8_t>) {
            stereo_rows::reversed_row(job.right.row(y), W, min_d, D, qa.data());
#if UPRES_STEREO_X86
            if constexpr (kAvx2)
                return stereo_rows::ad_costs_u8_avx2(job.left.row(y), qa.data(), W, D, cap, out);
#endif
            stereo_rows::ad_costs_u8(job.left.row(y), qa.data(), W, D, cap, out);
        }
    };
    for (int t = ya - r; t < ya + r; ++t) costs(t);
    for (int y = ya; y < yb; ++y) {
        costs(y + r);
        std::fill(rev.begin(), rev.end(), 0xffffffffu);
        float gf[16];
        for (int j = 0; j <= r; ++j) gf[j] = static_cast<float>(g[j]);
        const std::uint8_t* rows[16];
        rows[0] = slot(y);
        for (int i = 1; i <= r; ++i) rows[2 * i - 1] = slot(y - i), rows[2 * i] = slot(y + i);
        // Chunks of kChunk pixels: the column pass over the chunk and r columns on each side
        // (clamped columns repeated at the image's sides) into col, then the chunk's row pass
        // while col is in the L1 cache (whole rows of col: 1.3x the time on two threads).
        for (int x0 = 0; x0 < W; x0 += kChunk) {
            const int x1 = std::min(W, x0 + kChunk), ca = std::max(0, x0 - r),
                      cb = std::min(W, x1 + r);
            // col slot i holds column x0 - r + i.
            float* out = col.data() + static_cast<std::size_t>(ca - (x0 - r)) * D;
            const std::uint8_t* at[16];
            for (int i = 0; i < 2 * r + 1; ++i) at[i] = rows[i] + static_cast<std::size_t>(ca) * D;
            const std::size_t cols = static_cast<std::size_t>(cb - ca) * D;
#if UPRES_STEREO_X86
            if constexpr (kAvx2) {
                if (pairs)
                    column_pass_pairs_avx2(at, r, g, cols, out);
                else
                    column_pass(at, r, g, cols, out);
            } else
#endif
                column_pass(at, r, g, cols, out);
            for (int x = x0 - r; x < ca; ++x)
                std::copy(out, out + D, col.data() + static_cast<std::size_t>(x - (x0 - r)) * D);
            for (int x = cb; x < x1 + r; ++x)
                std::copy(out + cols - D, out + cols,
                          col.data() + static_cast<std::size_t>(x - (x0 - r)) * D);
            // The row pass, the D sums of each pixel x of the chunk, and their keys (sum << 8)
            // | k: the right pixels' minima over all candidates (those outside the image land
            // in slots of no right pixel) and the smallest key over all of them (the left
            // pixel's when all are its candidates).
            for (int x = x0; x < x1; ++x) {
                const float* c = col.data() + static_cast<std::size_t>(x - x0 + r) * D;
                float* sx = sum.data() + static_cast<std::size_t>(x - x0) * D;
                std::uint32_t* rv = rev.data() + (W - 1 - x);
#if UPRES_STEREO_X86
                if constexpr (kAvx2)
                    all[x - x0] = r == 3   ? row_sums_avx2<3>(c, D, r, gf, sx, rv)
                                  : r == 6 ? row_sums_avx2<6>(c, D, r, gf, sx, rv)
                                           : row_sums_avx2<0>(c, D, r, gf, sx, rv);
                else
#endif
                    all[x - x0] = row_sums(c, D, r, gf, sx, rv);
            }
            // The chunk's left winners, once its sums are all there (read back per pixel
            // right after its own row pass, the winner's neighbours waited on the key's
            // reduction: 1.1x the time).
            for (int x = x0; x < x1; ++x) {
                const float* sx = sum.data() + static_cast<std::size_t>(x - x0) * D;
                const int khi = std::min(D - 1, x - min_d), klo = std::max(0, x - min_d - (W - 1));
                stereo::Winner w;
                if (klo <= khi) {
                    std::uint32_t m = all[x - x0];
                    if (klo > 0 || khi < D - 1) {
                        m = 0xffffffffu;
                        for (int k = klo; k <= khi; ++k)
                            m = std::min(m, (static_cast<std::uint32_t>(sx[k]) << 8) |
                                                static_cast<std::uint32_t>(k));
                    }
                    const int kb = static_cast<int>(m & 0xff);
                    w.best = static_cast<std::int32_t>(m >> 8);
                    w.best_d = min_d + kb;
                    if (kb > klo) w.before = static_cast<std::int32_t>(sx[kb - 1]);
                    if (kb < khi) w.after = static_cast<std::int32_t>(sx[kb + 1]);
                    if (plan.uniqueness > 0)
                        for (int k = klo; k <= khi; ++k)
                            if (k < kb - 1 || k > kb + 1)
                                w.far = stereo::min_or(w.far, static_cast<std::int32_t>(sx[k]));
                }
                left[x] = w;
            }
        }
        stereo_rows::right_keys(rev.data(), W, D, min_d, right.data());
        float* disp = job.disparity.row(y);
        for (int x = 0; x < W; ++x) {
            const stereo::Winner& w = left[x];
            bool ok = w.best >= 0 && stereo::unique_enough(w, plan.uniqueness);
            if (ok && plan.lr_check >= 0) {
                const std::uint32_t o = right[x - w.best_d];
                const int diff = w.best_d - (min_d + static_cast<int>(o & 0xff));
                ok = o != 0xffffffffu && (diff < 0 ? -diff : diff) <= plan.lr_check;
            }
            disp[x] = ok ? stereo::refined(w, plan.subpixel) : plan.invalid;
            if (job.valid.data) job.valid.row(y)[x] = ok ? 255 : 0;
        }
    }
}

template <class T>
void rows_part_baseline(const Job<T>& job, int ya, int yb, bool avx512) {
    rows_part<T, false>(job, ya, yb, avx512);
}
#if UPRES_STEREO_X86
template <class T>
__attribute__((target("avx2,fma"))) void rows_part_avx2(const Job<T>& job, int ya, int yb,
                                                        bool avx512) {
    rows_part<T, true>(job, ya, yb, avx512);
}
#else
template <class T>
void rows_part_avx2(const Job<T>& job, int ya, int yb, bool avx512) {
    rows_part<T, false>(job, ya, yb, avx512);
}
#endif

// The row schedule over all rows: one part of consecutive rows per thread (each part warms its
// ring up with the window's 2r rows above it).
template <class T>
void run_rows(const Job<T>& job, int threads) {
    const int H = job.left.height, parts = std::min(H, resolve_threads(threads));
    const bool avx2 = kAvx2Compiled && cpu_avx2_fma(), avx512 = avx2 && cpu_avx512_popcnt();
    parallel_for(0, parts, threads, [&](int i) {
        const int ya = static_cast<int>(static_cast<long>(H) * i / parts),
                  yb = static_cast<int>(static_cast<long>(H) * (i + 1) / parts);
        if (avx2)
            rows_part_avx2(job, ya, yb, avx512);
        else
            rows_part_baseline(job, ya, yb, avx512);
    });
}

template <class T, int C>
void run(const Job<T>& job, int threads) {
    const int stripes = (job.left.height + kStripe - 1) / kStripe;
    if (kAvx2Compiled && cpu_avx2_fma())
        parallel_for(0, stripes, threads, [&](int s) { stripe_avx2<T, C>(s, job); });
    else
        parallel_for(0, stripes, threads, [&](int s) { stripe_baseline<T, C>(s, job); });
}

}  // namespace

template <class T>
void stereo(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
            int threads) {
    Job<T> job{left, right, disparity, right_disparity, valid, &plan};
    // Scratch kept between calls (core/host_scratch.hpp; fresh memory zeroed and faulted in on
    // one thread was a tenth of the semi-global matcher's time): the census codes, then the
    // intensity planes, later overwritten by the semi-global matcher's cube.
    const std::size_t n = static_cast<std::size_t>(left.width) * left.height;
    using P = std::conditional_t<std::is_same_v<T, float>, double, float>;
    const std::size_t codes = plan.census ? 2 * n * sizeof(std::uint64_t) : 0;
    const std::size_t rest = std::max(plan.census ? 2 * n * sizeof(P) : 0,
                                      plan.sgm_paths > 0 ? sgm_scratch_bytes(plan, n, threads) : 0);
    std::optional<HostScratch> scratch;
    if (codes + rest > 0) scratch.emplace(codes + rest, "stereo (scratch)");
    std::uint8_t* after_codes = codes + rest > 0 ? scratch->as<std::uint8_t>() + codes : nullptr;
    if (plan.census) {
        // Integer pixels' channel sums (below 3 x 65535) are exact in float.
        std::uint64_t* cl = scratch->as<std::uint64_t>();
        census_codes<P>(left, right, threads, reinterpret_cast<P*>(after_codes), cl, cl + n);
        job.census_left = cl;
        job.census_right = cl + n;
    }
    if (plan.sgm_paths > 0)
        return stereo_sgm(left, right, disparity, right_disparity, valid, plan, job.census_left,
                          job.census_right, after_codes, threads);
    if (row_schedule<T>(plan, left.width, left.channels, right_disparity.data != nullptr))
        run_rows(job, threads);
    else if (left.channels == 1)
        run<T, 1>(job, threads);
    else
        run<T, 3>(job, threads);
}

template void stereo(Span2D<const std::uint8_t>, Span2D<const std::uint8_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&, int);
template void stereo(Span2D<const std::uint16_t>, Span2D<const std::uint16_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&, int);
template void stereo(Span2D<const float>, Span2D<const float>, Span2D<float>, Span2D<float>,
                     Span2D<std::uint8_t>, const StereoPlan&, int);

}  // namespace upres::cpu
