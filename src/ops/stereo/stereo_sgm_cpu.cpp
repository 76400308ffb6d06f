// Cpu backend of the semi-global matcher (aggregation sgm4 / sgm8; stereo_math.hpp's rule).
// The costs C(x, y, d) as a W x H x D cube of 16-bit values (d fastest), then two passes over
// the image: forward (rows top to bottom, the paths from the left, above, above-left and
// above-right) and backward (the opposite four), run at once on two threads, each into its own
// 16-bit cube of path sums; every path step is a loop over d on 16-bit lanes (AVX2: 16 at a
// time; a copy compiled for the baseline x86-64). The winner search then reads the two cubes'
// sum per pixel. Memory: three W x H x D 16-bit cubes, kept between calls
// (core/host_scratch.hpp). Bit-identical to the reference.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "core/cpu_features.hpp"
#include "core/host_scratch.hpp"
#include "core/parallel.hpp"
#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_math.hpp"

namespace upres::cpu {

namespace {

using u16 = std::uint16_t;

#if defined(__GNUC__) || defined(__clang__)
#define UPRES_SGM_INLINE inline __attribute__((always_inline))
#else
#define UPRES_SGM_INLINE inline
#endif

// A neighbour beyond the range: larger than any path cost (at most 16383, see the plan's
// check), and + P1 still fits 16 bits.
constexpr u16 kPad = 0x7fff;

// One path step: out[1 .. D] from the costs c[0 .. D) and the previous vector p (D + 2 long:
// p[0] and p[D + 1] hold kPad, p[1 .. D] the costs; nullptr: the path starts here) with its
// minimum pmin. Adds out to s; returns out's minimum.
// kAdd false: the pass's first path, which stores into s instead of adding (s is not
// initialised).
template <bool kAdd>
UPRES_SGM_INLINE u16 step(const u16* __restrict c, const u16* __restrict p, u16 pmin, int D, u16 p1,
                          u16 p2, u16* __restrict out, u16* __restrict s) {
    u16 m = 0xffff;
    if (!p) {
        for (int k = 0; k < D; ++k) {
            out[k + 1] = c[k];
            s[k] = kAdd ? static_cast<u16>(s[k] + c[k]) : c[k];
            m = std::min(m, c[k]);
        }
        return m;
    }
    const u16 jump = static_cast<u16>(pmin + p2);
#pragma omp simd reduction(min : m)
    for (int k = 0; k < D; ++k) {
        u16 v = p[k + 1];
        v = std::min(v, static_cast<u16>(p[k] + p1));
        v = std::min(v, static_cast<u16>(p[k + 2] + p1));
        v = std::min(v, jump);
        const u16 l = static_cast<u16>(c[k] + v - pmin);
        out[k + 1] = l;
        s[k] = kAdd ? static_cast<u16>(s[k] + l) : l;
        m = std::min(m, l);
    }
    return m;
}

struct Job {
    int W, H, D, paths;
    u16 p1, p2;
    const u16* cost;  // W x H x D
};

// One pass (forward: dir +1, backward: dir -1) writing the sum of its paths into sums
// (W x H x D).
UPRES_SGM_INLINE void pass(const Job& j, int dir, u16* sums) {
    const int W = j.W, H = j.H, D = j.D, V = j.paths == 8 ? 3 : 1;  // vertical-ish paths
    const std::size_t vl = static_cast<std::size_t>(D) + 2;
    // Previous and current rows' vectors of the vertical (0), diagonal a (1), diagonal b (2)
    // paths, W each; their minima; the horizontal path's last vector.
    std::vector<u16> prev(V * W * vl, kPad), cur(V * W * vl, kPad), ha(vl, kPad), hb(vl, kPad);
    std::vector<u16> prev_min(static_cast<std::size_t>(V) * W, 0), cur_min(prev_min.size(), 0);
    auto vec = [&](std::vector<u16>& v, int path, int x) {
        return v.data() + (static_cast<std::size_t>(path) * W + x) * vl;
    };
    for (int yi = 0; yi < H; ++yi) {
        const int y = dir > 0 ? yi : H - 1 - yi;
        const bool first_row = yi == 0;
        u16 hmin = 0;
        for (int xi = 0; xi < W; ++xi) {
            const int x = dir > 0 ? xi : W - 1 - xi;
            const std::size_t at = (static_cast<std::size_t>(y) * W + x) * D;
            const u16* c = j.cost + at;
            u16* s = sums + at;
            // Horizontal: from (x - dir, y).
            hmin = step<false>(c, xi == 0 ? nullptr : ha.data(), hmin, D, j.p1, j.p2, hb.data(), s);
            std::swap(ha, hb);
            // Vertical: from (x, y - dir).
            cur_min[x] = step<true>(c, first_row ? nullptr : vec(prev, 0, x), prev_min[x], D, j.p1,
                                    j.p2, vec(cur, 0, x), s);
            if (V == 3) {
                // Diagonal a: from (x - dir, y - dir); diagonal b: from (x + dir, y - dir).
                const int xa = x - dir, xb = x + dir;
                const bool sa = first_row || xa < 0 || xa >= W;
                const bool sb = first_row || xb < 0 || xb >= W;
                cur_min[W + x] =
                    step<true>(c, sa ? nullptr : vec(prev, 1, xa), sa ? u16{0} : prev_min[W + xa],
                               D, j.p1, j.p2, vec(cur, 1, x), s);
                cur_min[2 * W + x] = step<true>(c, sb ? nullptr : vec(prev, 2, xb),
                                                sb ? u16{0} : prev_min[2 * W + xb], D, j.p1, j.p2,
                                                vec(cur, 2, x), s);
            }
        }
        std::swap(prev, cur);
        std::swap(prev_min, cur_min);
    }
}

// The costs of row y, W x D (d fastest): the census or absolute-difference cost of left pixel
// x against right pixel clamp(x - d).
template <class T>
struct CostJob {
    Span2D<const T> left, right;
    const std::uint64_t* census_left;  // W x H codes, or null (ad)
    const std::uint64_t* census_right;
    int min_d, D, max_q;
};

template <class T>
UPRES_SGM_INLINE void cost_row(const CostJob<T>& j, int y, u16* __restrict out) {
    const int W = j.left.width, C = j.left.channels, D = j.D;
    const std::size_t row = static_cast<std::size_t>(y) * W;
    for (int x = 0; x < W; ++x) {
        u16* __restrict c = out + static_cast<std::size_t>(x) * D;
        // Candidates k in [klo, khi] read right pixels x - min_d - k inside the image; the
        // others the clamped columns 0 (k > khi) or W - 1 (k < klo).
        const int khi = std::min(D - 1, x - j.min_d), klo = std::max(0, x - j.min_d - (W - 1));
        if (j.census_left) {
            const std::uint64_t a = j.census_left[row + x];
            const std::uint64_t* cr = j.census_right + row;
            for (int k = 0; k < D; ++k) {
                const int xr = k < klo ? W - 1 : (k > khi ? 0 : x - j.min_d - k);
                c[k] = static_cast<u16>(stereo::census_cost(a, cr[xr], j.max_q));
            }
        } else {
            const T* l = j.left.row(y) + static_cast<std::ptrdiff_t>(x) * C;
            const T* r = j.right.row(y);
            for (int k = 0; k < D; ++k) {
                const int xr = k < klo ? W - 1 : (k > khi ? 0 : x - j.min_d - k);
                c[k] = static_cast<u16>(
                    stereo::pixel_cost(l, r + static_cast<std::ptrdiff_t>(xr) * C, C, j.max_q));
            }
        }
    }
}

// The winners of row y from the two passes' sums (W x D each; their sum fits 16 bits). A
// candidate's key is (S << 16) | k: the smallest key is the smallest sum with the smallest d,
// so each search is one vectorised minimum.
struct WinJob {
    int W, D, min_d;
    const u16* fwd;
    const u16* bwd;
};
struct RowWinners {
    std::vector<std::uint32_t> left, right;  // keys; 0xffffffff: no candidate
};

UPRES_SGM_INLINE void winners_row(const WinJob& j, int y, RowWinners& out) {
    const int W = j.W, D = j.D;
    out.left.assign(W, 0xffffffffu);
    out.right.assign(W, 0xffffffffu);
    std::uint32_t* __restrict rk = out.right.data();
    for (int x = 0; x < W; ++x) {
        const std::size_t at = (static_cast<std::size_t>(y) * W + x) * D;
        const u16* __restrict f = j.fwd + at;
        const u16* __restrict b = j.bwd + at;
        const int khi = std::min(D - 1, x - j.min_d), klo = std::max(0, x - j.min_d - (W - 1));
        std::uint32_t m = 0xffffffffu;
#pragma omp simd reduction(min : m)
        for (int k = klo; k <= khi; ++k) {
            const std::uint32_t key =
                (static_cast<std::uint32_t>(static_cast<u16>(f[k] + b[k])) << 16) |
                static_cast<std::uint32_t>(k);
            m = std::min(m, key);
            // Right pixel x - min_d - k sees this pair; x ascending gives its candidates in
            // increasing d, and the key keeps the smaller d on ties anyway.
            std::uint32_t& r = rk[x - j.min_d - k];
            r = std::min(r, key);
        }
        out.left[x] = m;
    }
}

void cost_row_baseline(const CostJob<std::uint8_t>& j, int y, u16* o) { cost_row(j, y, o); }
void cost_row_baseline(const CostJob<std::uint16_t>& j, int y, u16* o) { cost_row(j, y, o); }
void cost_row_baseline(const CostJob<float>& j, int y, u16* o) { cost_row(j, y, o); }
void pass_baseline(const Job& j, int dir, u16* sums) { pass(j, dir, sums); }
void winners_row_baseline(const WinJob& j, int y, RowWinners& o) { winners_row(j, y, o); }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same functions compiled for AVX2 (16 lanes of 16 bits, 8 of 32) and POPCNT, chosen by
// cpu_avx2_fma() (every AVX2 processor has POPCNT).
#define UPRES_SGM_AVX2 __attribute__((target("avx2,fma,popcnt")))
UPRES_SGM_AVX2 void cost_row_avx2(const CostJob<std::uint8_t>& j, int y, u16* o) {
    cost_row(j, y, o);
}
UPRES_SGM_AVX2 void cost_row_avx2(const CostJob<std::uint16_t>& j, int y, u16* o) {
    cost_row(j, y, o);
}
UPRES_SGM_AVX2 void cost_row_avx2(const CostJob<float>& j, int y, u16* o) { cost_row(j, y, o); }
UPRES_SGM_AVX2 void pass_avx2(const Job& j, int dir, u16* sums) { pass(j, dir, sums); }
UPRES_SGM_AVX2 void winners_row_avx2(const WinJob& j, int y, RowWinners& o) {
    winners_row(j, y, o);
}
constexpr bool kAvx2Compiled = true;
#else
template <class T>
void cost_row_avx2(const CostJob<T>& j, int y, u16* o) {
    cost_row(j, y, o);
}
void pass_avx2(const Job& j, int dir, u16* sums) { pass(j, dir, sums); }
void winners_row_avx2(const WinJob& j, int y, RowWinners& o) { winners_row(j, y, o); }
constexpr bool kAvx2Compiled = false;
#endif

}  // namespace

template <class T>
void stereo_sgm(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
                Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
                const std::uint64_t* census_left, const std::uint64_t* census_right, int threads) {
    const int W = left.width, H = left.height, D = plan.num_d, s = plan.sgm_radius;
    const std::size_t n = static_cast<std::size_t>(W) * H * D;
    const bool avx2 = kAvx2Compiled && cpu_avx2_fma();
    // The costs, then their pre-window mean.
    // Scratch kept between calls (core/host_scratch.hpp): the costs (and their window mean)
    // and the two passes' sums.
    const HostScratch scratch((s > 0 ? 4 : 3) * n * sizeof(u16), "stereo (sgm cubes)");
    u16* cost = scratch.as<u16>();
    u16* fwd = cost + n;
    u16* bwd = fwd + n;
    const CostJob<T> cj{left, right, census_left, census_right, plan.min_d, D, plan.max_q};
    parallel_for(0, H, threads, [&](int y) {
        u16* out = cost + static_cast<std::size_t>(y) * W * D;
        if (avx2)
            cost_row_avx2(cj, y, out);
        else
            cost_row_baseline(cj, y, out);
    });
    if (s > 0) {
        u16* mean = bwd + n;
        const int cnt = (2 * s + 1) * (2 * s + 1);
        parallel_for(0, H, threads, [&](int y) {
            std::vector<std::int64_t> acc(static_cast<std::size_t>(W) * D);
            for (int i = -s; i <= s; ++i) {
                const u16* row =
                    cost + static_cast<std::size_t>(stereo::clamp_index(y + i, H)) * W * D;
                for (int x = 0; x < W; ++x)
                    for (int jx = -s; jx <= s; ++jx) {
                        const u16* c =
                            row + static_cast<std::size_t>(stereo::clamp_index(x + jx, W)) * D;
                        std::int64_t* a = acc.data() + static_cast<std::size_t>(x) * D;
                        for (int k = 0; k < D; ++k) a[k] += c[k];
                    }
            }
            u16* out = mean + static_cast<std::size_t>(y) * W * D;
            for (std::size_t e = 0; e < acc.size(); ++e)
                out[e] = static_cast<u16>(stereo::window_mean(acc[e], cnt));
        });
        cost = mean;
    }
    // The two passes, at once where two threads may run.
    const Job job{W,   H, D, plan.sgm_paths, static_cast<u16>(plan.p1), static_cast<u16>(plan.p2),
                  cost};
    parallel_for(0, 2, threads, [&](int i) {
        u16* out = i == 0 ? fwd : bwd;
        if (avx2)
            pass_avx2(job, i == 0 ? 1 : -1, out);
        else
            pass_baseline(job, i == 0 ? 1 : -1, out);
    });
    // The winners and the maps.
    auto S = [&](int x, int y, int k) {
        const std::size_t i = (static_cast<std::size_t>(y) * W + x) * D + k;
        return static_cast<std::int32_t>(fwd[i]) + bwd[i];
    };
    const WinJob wj{W, D, plan.min_d, fwd, bwd};
    parallel_for(0, H, threads, [&](int y) {
        thread_local RowWinners rw;
        if (avx2)
            winners_row_avx2(wj, y, rw);
        else
            winners_row_baseline(wj, y, rw);
        auto right_d = [&](int xr) { return plan.min_d + static_cast<int>(rw.right[xr] & 0xffff); };
        for (int x = 0; x < W; ++x) {
            const int khi = std::min(D - 1, x - plan.min_d),
                      klo = std::max(0, x - plan.min_d - (W - 1));
            stereo::Winner w;
            if (klo <= khi) {
                const int kb = static_cast<int>(rw.left[x] & 0xffff);
                w.best = static_cast<std::int32_t>(rw.left[x] >> 16);
                w.best_d = plan.min_d + kb;
                if (kb > klo) w.before = S(x, y, kb - 1);
                if (kb < khi) w.after = S(x, y, kb + 1);
                if (plan.uniqueness > 0)
                    for (int k = klo; k <= khi; ++k)
                        if (k < kb - 1 || k > kb + 1) w.far = stereo::min_or(w.far, S(x, y, k));
            }
            bool ok = w.best >= 0 && stereo::unique_enough(w, plan.uniqueness);
            if (ok && plan.lr_check >= 0) {
                const int xr = x - w.best_d;
                const int diff = w.best_d - right_d(xr);
                ok = rw.right[xr] != 0xffffffffu && (diff < 0 ? -diff : diff) <= plan.lr_check;
            }
            disparity.row(y)[x] = ok ? stereo::refined(w, plan.subpixel) : plan.invalid;
            if (valid.data) valid.row(y)[x] = ok ? 255 : 0;
            if (right_disparity.data) {
                stereo::Winner o;
                if (rw.right[x] != 0xffffffffu) {
                    const int k = static_cast<int>(rw.right[x] & 0xffff), xl = x + plan.min_d + k;
                    o.best = static_cast<std::int32_t>(rw.right[x] >> 16);
                    o.best_d = plan.min_d + k;
                    if (k > 0 && xl - 1 >= 0) o.before = S(xl - 1, y, k - 1);
                    if (k + 1 < D && xl + 1 < W) o.after = S(xl + 1, y, k + 1);
                }
                right_disparity.row(y)[x] =
                    o.best >= 0 ? stereo::refined(o, plan.subpixel) : plan.invalid;
            }
        }
    });
}

template void stereo_sgm(Span2D<const std::uint8_t>, Span2D<const std::uint8_t>, Span2D<float>,
                         Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&,
                         const std::uint64_t*, const std::uint64_t*, int);
template void stereo_sgm(Span2D<const std::uint16_t>, Span2D<const std::uint16_t>, Span2D<float>,
                         Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&,
                         const std::uint64_t*, const std::uint64_t*, int);
template void stereo_sgm(Span2D<const float>, Span2D<const float>, Span2D<float>, Span2D<float>,
                         Span2D<std::uint8_t>, const StereoPlan&, const std::uint64_t*,
                         const std::uint64_t*, int);

}  // namespace upres::cpu
