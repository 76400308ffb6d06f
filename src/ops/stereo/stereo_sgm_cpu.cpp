// Cpu backend of the semi-global matcher (aggregation sgm4 / sgm8; stereo_math.hpp's rule).
// Two passes over the image, each advancing a row at a time: forward (rows top to bottom: the
// paths from the left, above, above-left and above-right) and backward (the opposite four). A
// pass computes its row's costs itself (16-bit, d fastest; the census cost four disparities to
// an AVX2 register), steps its paths over them (a loop over d on 16-bit lanes) and either
// stores the row's path sums or, where the other pass has already stored that row, adds them
// and searches the row's winners at once. The forward pass stores the upper half's rows, the
// backward pass the lower half's, so with two threads the passes run at once and meet in the
// middle without waiting: one W x H x D 16-bit cube, each value written and read once. With a
// pre-window (sgm_window > 1) the costs' window mean is computed first as a cube the passes
// read. Every function is compiled for baseline x86-64 and for AVX2 (chosen at run time). The
// cube is kept between calls (core/host_scratch.hpp). Bit-identical to the reference.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include <omp.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#endif

#include "core/cpu_features.hpp"
#include "core/parallel.hpp"
#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_cpu_rows.hpp"
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

// One path's step at a pixel: out[1 .. D] = L(p, .) from the costs c[0 .. D) and the path's
// previous vector p (D + 2 long: p[0] = p[D + 1] = kPad, p[1 .. D] its values) with its
// minimum pmin. A path that starts at the pixel reads a vector of zeros with pmin 0 (its step
// is then L = C, the rule's start).
struct PathStep {
    const u16* p;
    u16 pmin;
    u16* out;
};

// The steps of steps() below for candidates [k0, D); mins are updated (the caller sets them
// first).
template <int kP, bool kAdd>
UPRES_SGM_INLINE void steps_from(int k0, const u16* __restrict c, const PathStep* st, int D, u16 p1,
                                 u16 p2, u16* __restrict s, u16* mins) {
    for (int k = k0; k < D; ++k) {
        u16 acc = kAdd ? s[k] : u16{0};
        for (int i = 0; i < kP; ++i) {
            const u16* p = st[i].p;
            u16 v = p[k + 1];
            v = std::min(v, static_cast<u16>(p[k] + p1));
            v = std::min(v, static_cast<u16>(p[k + 2] + p1));
            v = std::min(v, static_cast<u16>(st[i].pmin + p2));
            const u16 l = static_cast<u16>(c[k] + v - st[i].pmin);
            st[i].out[k + 1] = l;
            acc = static_cast<u16>(acc + l);
            mins[i] = std::min(mins[i], l);
        }
        s[k] = acc;
    }
}
// kP paths' steps at one pixel together, so that the costs are read and the sum s[0 .. D)
// written once (the paths one after another read and wrote s once per path: 1.2x the time of
// the passes with 4 paths); mins: each path's minimum over d. kAdd: add to s instead of
// storing.
template <int kP, bool kAdd = false>
UPRES_SGM_INLINE void steps(const u16* __restrict c, const PathStep* st, int D, u16 p1, u16 p2,
                            u16* __restrict s, u16* mins) {
    for (int i = 0; i < kP; ++i) mins[i] = 0xffff;
    steps_from<kP, kAdd>(0, c, st, D, p1, p2, s, mins);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same on sixteen 16-bit lanes.
template <int kP, bool kAdd = false>
__attribute__((target("avx2,popcnt"))) inline void steps_avx2(const u16* __restrict c,
                                                              const PathStep* st, int D, u16 p1,
                                                              u16 p2, u16* __restrict s,
                                                              u16* mins) {
    const __m256i vp1 = _mm256_set1_epi16(static_cast<short>(p1));
    __m256i jump[kP], pm[kP], m[kP];
    for (int i = 0; i < kP; ++i) {
        pm[i] = _mm256_set1_epi16(static_cast<short>(st[i].pmin));
        jump[i] = _mm256_set1_epi16(static_cast<short>(static_cast<u16>(st[i].pmin + p2)));
        m[i] = _mm256_set1_epi16(-1);
    }
    int k = 0;
    for (; k + 16 <= D; k += 16) {
        const __m256i cv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(c + k));
        __m256i acc = kAdd ? _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s + k))
                           : _mm256_setzero_si256();
        for (int i = 0; i < kP; ++i) {
            const u16* p = st[i].p + k;
            __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 1));
            v = _mm256_min_epu16(
                v, _mm256_add_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)), vp1));
            v = _mm256_min_epu16(
                v,
                _mm256_add_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 2)), vp1));
            v = _mm256_min_epu16(v, jump[i]);
            const __m256i l = _mm256_add_epi16(cv, _mm256_sub_epi16(v, pm[i]));
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(st[i].out + k + 1), l);
            acc = _mm256_add_epi16(acc, l);
            m[i] = _mm256_min_epu16(m[i], l);
        }
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(s + k), acc);
    }
    for (int i = 0; i < kP; ++i) {
        const __m128i h = _mm_minpos_epu16(
            _mm_min_epu16(_mm256_castsi256_si128(m[i]), _mm256_extracti128_si256(m[i], 1)));
        mins[i] = static_cast<u16>(_mm_extract_epi16(h, 0));
    }
    steps_from<kP, kAdd>(k, c, st, D, p1, p2, s, mins);
}
#endif

// What every row of the call shares.
template <class T>
struct Call {
    int W, H, D, mid;  // the forward pass stores rows [0, mid), the backward pass [mid, H)
    const StereoPlan* plan;
    Span2D<const T> left, right;
    const std::uint64_t* census_left;  // W x H codes, or null (ad)
    const std::uint64_t* census_right;
    const u16* costs;  // W x H x D precomputed costs (the pre-window's mean), or null
    u16* half;         // W x H x D: the stored rows' path sums
    Span2D<float> disparity, right_disparity;
    Span2D<std::uint8_t> valid;
    bool avx512 = false;  // the census costs with AVX-512 (cpu_avx512_popcnt())
};

// The steps of a row sweep's V paths at column x (the vertical one, from (x, y - dir), and with
// V = 3 the diagonals from (x - dir, y - dir) and (x + dir, y - dir)) into st[0 .. V): their
// previous vectors and minima from the previous row's prev and pmin (V x W, vl values a
// vector; a path that starts here reads zero), their new vectors into cur. V a template
// argument: with the loop unrolled 8 paths take 94-101 ms, 112-114 ms with V at run time.
template <int V>
UPRES_SGM_INLINE void sweep_steps(PathStep* st, int x, int dir, bool first, int W, std::size_t vl,
                                  const u16* prev, const u16* pmin, u16* cur, const u16* zero) {
    for (int v = 0; v < V; ++v) {
        const int from = x + (v == 0 ? 0 : v == 1 ? -dir : dir);
        const bool start = first || (v > 0 && (from < 0 || from >= W));
        const std::size_t at = static_cast<std::size_t>(v) * W;
        st[v] = {start ? zero : prev + (at + from) * vl, start ? u16{0} : pmin[at + from],
                 cur + (at + x) * vl};
    }
}

// One pass's state: its paths' previous vectors, its row buffers.
struct Pass {
    int dir;     // +1 forward, -1 backward
    int V;       // vertical-ish paths: 1 (sgm4) or 3 (sgm8)
    int yi = 0;  // rows done
    std::size_t vl;
    // Previous and current rows' vectors of the vertical (0), diagonal a (1), diagonal b (2)
    // paths, W each; their minima; the horizontal path's last vector.
    std::vector<u16> prev, cur, ha, hb, prev_min, cur_min;
    std::vector<u16> zero;         // a path's start: zeros between the pads
    std::vector<u16> cost, sums;   // the row's costs and path sums, W x D
    std::vector<std::uint64_t> q;  // the right row's census codes, reversed, W + D - 1
    std::vector<std::uint32_t> left, right, rev;  // the row's winner keys
    Pass(int dir_, int W, int D, int paths)
        : dir(dir_),
          V(paths == 8 ? 3 : 1),
          vl(static_cast<std::size_t>(D) + 2),
          prev(V * W * vl, kPad),
          cur(prev.size(), kPad),
          ha(vl, kPad),
          hb(vl, kPad),
          prev_min(static_cast<std::size_t>(V) * W, 0),
          cur_min(prev_min.size(), 0),
          zero(vl, 0),
          cost(static_cast<std::size_t>(W) * D),
          sums(cost.size()),
          q(static_cast<std::size_t>(W) + D - 1),
          left(W),
          right(W),
          rev(q.size()) {
        zero.front() = zero.back() = kPad;
    }
};

// kP paths' steps at a pixel, on the build's widest lanes.
template <int kP, bool kAvx2, bool kAdd = false>
UPRES_SGM_INLINE void run_steps(const u16* c, const PathStep* st, int D, u16 p1, u16 p2, u16* s,
                                u16* mins) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if constexpr (kAvx2) return steps_avx2<kP, kAdd>(c, st, D, p1, p2, s, mins);
#endif
    steps<kP, kAdd>(c, st, D, p1, p2, s, mins);
}

// The pass's paths over row y (its yi-th row) with costs c (W x D) into s (W x D): the
// horizontal path (from (x - dir, y)), the vertical one (from (x, y - dir)) and with 8 paths
// the diagonals a (from (x - dir, y - dir)) and b (from (x + dir, y - dir)).
template <bool kAvx2, int V>
UPRES_SGM_INLINE void paths_row(Pass& ps, int W, int D, u16 p1, u16 p2, const u16* c, u16* s) {
    const int dir = ps.dir;
    const bool first_row = ps.yi == 0;
    const u16* zero = ps.zero.data();
    const u16* prev = ps.prev.data();
    const u16* prev_min = ps.prev_min.data();
    u16* cur = ps.cur.data();
    u16* cur_min = ps.cur_min.data();
    u16* ha = ps.ha.data();
    u16* hb = ps.hb.data();
    u16 hmin = 0;
    for (int xi = 0; xi < W; ++xi) {
        const int x = dir > 0 ? xi : W - 1 - xi;
        const std::size_t at = static_cast<std::size_t>(x) * D;
        PathStep st[V + 1];
        st[0] = {xi == 0 ? zero : ha, xi == 0 ? u16{0} : hmin, hb};
        sweep_steps<V>(st + 1, x, dir, first_row, W, ps.vl, prev, prev_min, cur, zero);
        u16 mins[V + 1];
        run_steps<V + 1, kAvx2>(c + at, st, D, p1, p2, s + at, mins);
        for (int v = 0; v < V; ++v) cur_min[static_cast<std::size_t>(v) * W + x] = mins[1 + v];
        hmin = mins[0];
        std::swap(ha, hb);
    }
    std::swap(ps.prev, ps.cur);
    std::swap(ps.prev_min, ps.cur_min);
}

// The absolute-difference costs of row y, W x D (d fastest): left pixel x against right pixel
// clamp(x - min_d - k).
template <class T>
UPRES_SGM_INLINE void ad_costs(const Call<T>& j, int y, u16* __restrict out) {
    const int W = j.W, C = j.left.channels, D = j.D, min_d = j.plan->min_d, max_q = j.plan->max_q;
    const T* r = j.right.row(y);
    for (int x = 0; x < W; ++x) {
        u16* __restrict c = out + static_cast<std::size_t>(x) * D;
        const T* l = j.left.row(y) + static_cast<std::ptrdiff_t>(x) * C;
        for (int k = 0; k < D; ++k) {
            const int xr = stereo::clamp_index(x - min_d - k, W);
            c[k] = static_cast<u16>(
                stereo::pixel_cost(l, r + static_cast<std::ptrdiff_t>(xr) * C, C, max_q));
        }
    }
}

// The winners of a row from its path sums S (W x D; each fits 16 bits). A candidate's key is
// (S << 16) | k: the smallest key is the smallest sum with the smallest d, so each search is
// one vectorised minimum. left[x]: left pixel x's; right[xr]: right pixel xr's, over the left
// pixels x = xr + min_d + k that see it. 0xffffffff: no candidate.
// The right minima gather in rev (W + D - 1), right pixel xr at W - 1 - min_d - xr: left
// pixel x's candidates are then rev[W - 1 - x + k], contiguous in k (a scatter into right
// pixels x - min_d - k took a fifth of the call). Candidates outside the image land only in
// slots of no right pixel, so every x runs all D.
UPRES_SGM_INLINE void winners_row(const u16* S, int W, int D, int min_d, std::uint32_t* left,
                                  std::uint32_t* __restrict rev, std::uint32_t* right) {
    std::fill(rev, rev + (W + D - 1), 0xffffffffu);
    for (int x = 0; x < W; ++x) {
        const u16* __restrict s = S + static_cast<std::size_t>(x) * D;
        std::uint32_t* __restrict r = rev + (W - 1 - x);
#pragma omp simd
        for (int k = 0; k < D; ++k)
            r[k] = std::min(
                r[k], (static_cast<std::uint32_t>(s[k]) << 16) | static_cast<std::uint32_t>(k));
        const int khi = std::min(D - 1, x - min_d), klo = std::max(0, x - min_d - (W - 1));
        std::uint32_t m = 0xffffffffu;
#pragma omp simd reduction(min : m)
        for (int k = klo; k <= khi; ++k)
            m = std::min(m,
                         (static_cast<std::uint32_t>(s[k]) << 16) | static_cast<std::uint32_t>(k));
        left[x] = m;
    }
    stereo_rows::right_keys(rev, W, D, min_d, right);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// Eight keys, candidates k .. k + 7.
__attribute__((target("avx2,popcnt"))) inline __m256i keys8(const u16* s, int k) {
    const __m256i v =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s + k)));
    return _mm256_or_si256(
        _mm256_slli_epi32(v, 16),
        _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(k)));
}
// The same with AVX2 (GCC left both loops scalar).
__attribute__((target("avx2,popcnt"))) inline void winners_row_avx2(const u16* S, int W, int D,
                                                                    int min_d, std::uint32_t* left,
                                                                    std::uint32_t* __restrict rev,
                                                                    std::uint32_t* right) {
    std::fill(rev, rev + (W + D - 1), 0xffffffffu);
    auto key = [](const u16* s, int k) {
        return (static_cast<std::uint32_t>(s[k]) << 16) | static_cast<std::uint32_t>(k);
    };
    for (int x = 0; x < W; ++x) {
        const u16* s = S + static_cast<std::size_t>(x) * D;
        std::uint32_t* r = rev + (W - 1 - x);
        int k = 0;
        for (; k + 8 <= D; k += 8) {
            __m256i* at = reinterpret_cast<__m256i*>(r + k);
            _mm256_storeu_si256(at, _mm256_min_epu32(_mm256_loadu_si256(at), keys8(s, k)));
        }
        for (; k < D; ++k) r[k] = std::min(r[k], key(s, k));
        const int khi = std::min(D - 1, x - min_d), klo = std::max(0, x - min_d - (W - 1));
        std::uint32_t m = 0xffffffffu;
        k = klo;
        if (k + 8 <= khi + 1) {
            __m256i mv = keys8(s, k);
            for (k += 8; k + 8 <= khi + 1; k += 8) mv = _mm256_min_epu32(mv, keys8(s, k));
            __m128i h = _mm_min_epu32(_mm256_castsi256_si128(mv), _mm256_extracti128_si256(mv, 1));
            h = _mm_min_epu32(h, _mm_shuffle_epi32(h, 0x4e));
            h = _mm_min_epu32(h, _mm_shuffle_epi32(h, 0xb1));
            m = static_cast<std::uint32_t>(_mm_cvtsi128_si32(h));
        }
        for (; k <= khi; ++k) m = std::min(m, key(s, k));
        left[x] = m;
    }
    stereo_rows::right_keys(rev, W, D, min_d, right);
}
#endif

// The maps of row y from its path sums S and winner keys.
template <class T>
UPRES_SGM_INLINE void finish_row(const Call<T>& j, int y, const u16* S, const std::uint32_t* lk,
                                 const std::uint32_t* rk) {
    const StereoPlan& plan = *j.plan;
    const int W = j.W, D = j.D;
    auto sum = [&](int x, int k) {
        return static_cast<std::int32_t>(S[static_cast<std::size_t>(x) * D + k]);
    };
    float* disp = j.disparity.row(y);
    for (int x = 0; x < W; ++x) {
        const int khi = std::min(D - 1, x - plan.min_d),
                  klo = std::max(0, x - plan.min_d - (W - 1));
        stereo::Winner w;
        if (klo <= khi) {
            const int kb = static_cast<int>(lk[x] & 0xffff);
            w.best = static_cast<std::int32_t>(lk[x] >> 16);
            w.best_d = plan.min_d + kb;
            if (kb > klo) w.before = sum(x, kb - 1);
            if (kb < khi) w.after = sum(x, kb + 1);
            if (plan.uniqueness > 0)
                for (int k = klo; k <= khi; ++k)
                    if (k < kb - 1 || k > kb + 1) w.far = stereo::min_or(w.far, sum(x, k));
        }
        bool ok = w.best >= 0 && stereo::unique_enough(w, plan.uniqueness);
        if (ok && plan.lr_check >= 0) {
            const int xr = x - w.best_d;
            const int diff = w.best_d - (plan.min_d + static_cast<int>(rk[xr] & 0xffff));
            ok = rk[xr] != 0xffffffffu && (diff < 0 ? -diff : diff) <= plan.lr_check;
        }
        disp[x] = ok ? stereo::refined(w, plan.subpixel) : plan.invalid;
        if (j.valid.data) j.valid.row(y)[x] = ok ? 255 : 0;
    }
    if (!j.right_disparity.data) return;
    float* rd = j.right_disparity.row(y);
    for (int x = 0; x < W; ++x) {
        stereo::Winner o;
        if (rk[x] != 0xffffffffu) {
            const int k = static_cast<int>(rk[x] & 0xffff), xl = x + plan.min_d + k;
            o.best = static_cast<std::int32_t>(rk[x] >> 16);
            o.best_d = plan.min_d + k;
            if (k > 0 && xl - 1 >= 0) o.before = sum(xl - 1, k - 1);
            if (k + 1 < D && xl + 1 < W) o.after = sum(xl + 1, k + 1);
        }
        rd[x] = o.best >= 0 ? stereo::refined(o, plan.subpixel) : plan.invalid;
    }
}

// The pass's next row: its costs, its paths, then either the row's sums stored (the pass's
// half) or added to the other pass's stored sums and searched.
// The costs of row y into out (W x D); q: W + D - 1 codes of scratch.
template <class T, bool kAvx2>
UPRES_SGM_INLINE void costs_row(const Call<T>& j, int y, std::uint64_t* q, u16* out) {
    const int W = j.W, D = j.D;
    if (!j.census_left) return ad_costs(j, y, out);
    const std::size_t row = static_cast<std::size_t>(y) * W;
    stereo_rows::reversed_row(j.census_right + row, W, j.plan->min_d, D, q);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if constexpr (kAvx2) {
        if (j.avx512)
            return stereo_rows::census_costs_avx512(j.census_left + row, q, W, D, 4, j.plan->max_q,
                                                    out);
        return stereo_rows::census_costs_avx2(j.census_left + row, q, W, D, 4, j.plan->max_q, out);
    }
#endif
    stereo_rows::census_costs(j.census_left + row, q, W, D, 4, j.plan->max_q, out);
}

// Row y's winners and maps from its path sums S (W x D); left, right: W keys, rev: W + D - 1.
template <class T, bool kAvx2>
UPRES_SGM_INLINE void search_row(const Call<T>& j, int y, const u16* S, std::uint32_t* left,
                                 std::uint32_t* rev, std::uint32_t* right) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    if constexpr (kAvx2) {
        winners_row_avx2(S, j.W, j.D, j.plan->min_d, left, rev, right);
    } else
#endif
        winners_row(S, j.W, j.D, j.plan->min_d, left, rev, right);
    finish_row(j, y, S, left, right);
}

template <class T, bool kAvx2>
UPRES_SGM_INLINE void pass_row(const Call<T>& j, Pass& ps) {
    const int W = j.W, D = j.D, y = ps.dir > 0 ? ps.yi : j.H - 1 - ps.yi;
    const std::size_t n = static_cast<std::size_t>(W) * D, at = static_cast<std::size_t>(y) * n;
    const u16* c = ps.cost.data();
    if (j.costs)
        c = j.costs + at;
    else
        costs_row<T, kAvx2>(j, y, ps.q.data(), ps.cost.data());
    const bool store = ps.dir > 0 ? y < j.mid : y >= j.mid;
    u16* s = store ? j.half + at : ps.sums.data();
    const u16 p1 = static_cast<u16>(j.plan->p1), p2 = static_cast<u16>(j.plan->p2);
    if (ps.V == 3)
        paths_row<kAvx2, 3>(ps, W, D, p1, p2, c, s);
    else
        paths_row<kAvx2, 1>(ps, W, D, p1, p2, c, s);
    ++ps.yi;
    if (store) return;
    const u16* __restrict other = j.half + at;
#pragma omp simd
    for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<u16>(s[i] + other[i]);
    search_row<T, kAvx2>(j, y, s, ps.left.data(), ps.rev.data(), ps.right.data());
}

template <class T>
void pass_row_baseline(const Call<T>& j, Pass& ps) {
    pass_row<T, false>(j, ps);
}
template <class T>
void costs_row_baseline(const Call<T>& j, int y, std::uint64_t* q, u16* out) {
    costs_row<T, false>(j, y, q, out);
}
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same compiled for AVX2 (16 lanes of 16 bits, 8 of 32) and POPCNT, chosen by
// cpu_avx2_fma() (every AVX2 processor has POPCNT). Without FMA: the parabola's double
// arithmetic stays that of the baseline build.
template <class T>
__attribute__((target("avx2,popcnt"))) void pass_row_avx2(const Call<T>& j, Pass& ps) {
    pass_row<T, true>(j, ps);
}
template <class T>
__attribute__((target("avx2,popcnt"))) void costs_row_avx2(const Call<T>& j, int y,
                                                           std::uint64_t* q, u16* out) {
    costs_row<T, true>(j, y, q, out);
}
constexpr bool kAvx2Compiled = true;
#else
template <class T>
void pass_row_avx2(const Call<T>& j, Pass& ps) {
    pass_row<T, false>(j, ps);
}
template <class T>
void costs_row_avx2(const Call<T>& j, int y, std::uint64_t* q, u16* out) {
    costs_row<T, false>(j, y, q, out);
}
constexpr bool kAvx2Compiled = false;
#endif

// The schedule for more than two threads: each direction's paths on all threads over the cost
// cube, adding into the sum cube S (the meet-in-the-middle passes keep two threads busy, and
// on 16 cores of the GPU host took 127 ms against OpenCV's 114 ms for StereoSGBM 3-way). The
// horizontal paths of a row are the row's alone: rows in parallel, left to right stored, right
// to left added. The vertical and diagonal paths sweep the rows from the top and then from the
// bottom with the columns split over the threads and a barrier per row (a diagonal step reads
// the neighbouring column's vector of the previous row). Then the rows' searches in parallel.
// The sums are those of the other schedule in another order: the same 16-bit values.
template <bool kAvx2>
UPRES_SGM_INLINE void horizontal_rows(int y, const u16* cost, u16* S, int W, int D, u16 p1, u16 p2,
                                      u16* va, u16* vb, const u16* zero) {
    const std::size_t at = static_cast<std::size_t>(y) * W * D;
    for (int dir : {1, -1}) {
        const u16* prev = zero;
        u16 pmin = 0;
        for (int xi = 0; xi < W; ++xi) {
            const int x = dir > 0 ? xi : W - 1 - xi;
            const std::size_t o = at + static_cast<std::size_t>(x) * D;
            const PathStep st{prev, pmin, va};
            if (dir > 0)
                run_steps<1, kAvx2, false>(cost + o, &st, D, p1, p2, S + o, &pmin);
            else
                run_steps<1, kAvx2, true>(cost + o, &st, D, p1, p2, S + o, &pmin);
            prev = va;
            std::swap(va, vb);
        }
    }
}

// One row of a vertical sweep (direction dir) for columns [xa, xb): V paths (the vertical one,
// and with 8 paths the diagonals from x - dir and x + dir), from the previous row's vectors
// prev (V x W of vl values) and minima pmin into cur and cmin, added into S.
template <bool kAvx2>
UPRES_SGM_INLINE void vertical_row(int y, bool first, int dir, int V, int xa, int xb,
                                   const u16* cost, u16* S, int W, int D, u16 p1, u16 p2,
                                   const u16* prev, const u16* pmin, u16* cur, u16* cmin,
                                   const u16* zero) {
    const std::size_t vl = static_cast<std::size_t>(D) + 2;
    const std::size_t at = static_cast<std::size_t>(y) * W * D;
    for (int x = xa; x < xb; ++x) {
        PathStep st[3];
        u16 mins[3];
        const std::size_t o = at + static_cast<std::size_t>(x) * D;
        if (V == 3) {
            sweep_steps<3>(st, x, dir, first, W, vl, prev, pmin, cur, zero);
            run_steps<3, kAvx2, true>(cost + o, st, D, p1, p2, S + o, mins);
        } else {
            sweep_steps<1>(st, x, dir, first, W, vl, prev, pmin, cur, zero);
            run_steps<1, kAvx2, true>(cost + o, st, D, p1, p2, S + o, mins);
        }
        for (int v = 0; v < V; ++v) cmin[static_cast<std::size_t>(v) * W + x] = mins[v];
    }
}

template <class T, bool kAvx2>
UPRES_SGM_INLINE void directions(const Call<T>& j, const u16* cost, u16* S, int threads) {
    const int W = j.W, H = j.H, D = j.D, V = j.plan->sgm_paths == 8 ? 3 : 1;
    const u16 p1 = static_cast<u16>(j.plan->p1), p2 = static_cast<u16>(j.plan->p2);
    const std::size_t vl = static_cast<std::size_t>(D) + 2;
    std::vector<u16> zero(vl, 0);
    zero.front() = zero.back() = kPad;
    parallel_for(0, H, threads, [&](int y) {
        thread_local std::vector<u16> va, vb;
        va.assign(vl, kPad);
        vb.assign(vl, kPad);
        horizontal_rows<kAvx2>(y, cost, S, W, D, p1, p2, va.data(), vb.data(), zero.data());
    });
    std::vector<u16> bufs[2] = {std::vector<u16>(V * W * vl, kPad),
                                std::vector<u16>(V * W * vl, kPad)};
    std::vector<u16> mins[2] = {std::vector<u16>(static_cast<std::size_t>(V) * W),
                                std::vector<u16>(static_cast<std::size_t>(V) * W)};
    for (int dir : {1, -1}) {
#pragma omp parallel num_threads(resolve_threads(threads))
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const int xa = static_cast<int>(static_cast<long>(W) * t / nt),
                      xb = static_cast<int>(static_cast<long>(W) * (t + 1) / nt);
            for (int yi = 0; yi < H; ++yi) {
                const int y = dir > 0 ? yi : H - 1 - yi;
                const int a = yi & 1, b = a ^ 1;  // previous row's buffers a, this row's b
                vertical_row<kAvx2>(y, yi == 0, dir, V, xa, xb, cost, S, W, D, p1, p2,
                                    bufs[a].data(), mins[a].data(), bufs[b].data(), mins[b].data(),
                                    zero.data());
#pragma omp barrier
            }
        }
    }
    parallel_for(0, H, threads, [&](int y) {
        thread_local std::vector<std::uint32_t> left, rev, right;
        left.resize(W);
        right.resize(W);
        rev.resize(static_cast<std::size_t>(W) + D - 1);
        search_row<T, kAvx2>(j, y, S + static_cast<std::size_t>(y) * W * D, left.data(), rev.data(),
                             right.data());
    });
}

// The costs as a cube (raw, W x H x D) on all threads, and with a pre-window (s > 0) their
// window mean over a (2s + 1)^2 square (rows and columns clamped) into mean. Returns the cube
// the passes read.
template <class T>
const u16* cost_cube(const Call<T>& j, int s, bool avx2, u16* raw, u16* mean, int threads) {
    const int W = j.W, H = j.H, D = j.D;
    const std::size_t n = static_cast<std::size_t>(W) * D;
    parallel_for(0, H, threads, [&](int y) {
        thread_local std::vector<std::uint64_t> q;
        q.resize(static_cast<std::size_t>(W) + D - 1);
        if (avx2)
            costs_row_avx2(j, y, q.data(), raw + y * n);
        else
            costs_row_baseline(j, y, q.data(), raw + y * n);
    });
    if (s == 0) return raw;
    const int cnt = (2 * s + 1) * (2 * s + 1);
    parallel_for(0, H, threads, [&](int y) {
        std::vector<std::int64_t> acc(n);
        for (int i = -s; i <= s; ++i) {
            const u16* row = raw + static_cast<std::size_t>(stereo::clamp_index(y + i, H)) * n;
            for (int x = 0; x < W; ++x)
                for (int jx = -s; jx <= s; ++jx) {
                    const u16* c =
                        row + static_cast<std::size_t>(stereo::clamp_index(x + jx, W)) * D;
                    std::int64_t* a = acc.data() + static_cast<std::size_t>(x) * D;
                    for (int k = 0; k < D; ++k) a[k] += c[k];
                }
        }
        u16* out = mean + y * n;
        for (std::size_t e = 0; e < n; ++e)
            out[e] = static_cast<u16>(stereo::window_mean(acc[e], cnt));
    });
    return mean;
}

// Whether the costs are computed first as a cube on all threads (a pre-window, or more than two
// threads: the direction schedule) rather than row by row in the passes.
bool precomputed_costs(const StereoPlan& plan, int threads) {
    return plan.sgm_radius > 0 || resolve_threads(threads) > 2;
}

}  // namespace

template <class T>
void stereo_sgm(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
                Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
                const std::uint64_t* census_left, const std::uint64_t* census_right, void* scratch,
                int threads) {
    const int W = left.width, H = left.height, D = plan.num_d, s = plan.sgm_radius;
    const std::size_t n = static_cast<std::size_t>(W) * H * D;
    const bool avx2 = kAvx2Compiled && cpu_avx2_fma();
    // The scratch (kept between calls by the caller): the stored rows' sums, and with a
    // pre-window the costs and their mean.
    Call<T> j{W,
              H,
              D,
              H / 2,
              &plan,
              left,
              right,
              census_left,
              census_right,
              nullptr,
              static_cast<u16*>(scratch),
              disparity,
              right_disparity,
              valid};
    j.avx512 = avx2 && cpu_avx512_popcnt();
    if (precomputed_costs(plan, threads)) {
        u16* raw = j.half + n;
        j.costs = cost_cube(j, s, avx2, raw, raw + n, threads);
    }
    if (resolve_threads(threads) > 2) {
        // j.half holds the whole sum cube here.
        if (avx2)
            directions<T, true>(j, j.costs, j.half, threads);
        else
            directions<T, false>(j, j.costs, j.half, threads);
        return;
    }
    Pass fwd(1, W, D, plan.sgm_paths), bwd(-1, W, D, plan.sgm_paths);
    const auto advance = [&](Pass& ps) {
        if (avx2)
            pass_row_avx2(j, ps);
        else
            pass_row_baseline(j, ps);
    };
    // The forward pass's rows from mid on need the backward pass's stored rows and the other
    // way round: each has stored them before it needs them when the two run at the same speed.
    // fwd_done: rows [0, fwd_done) stored; bwd_from: rows [bwd_from, H) stored.
    std::atomic<int> fwd_done{0}, bwd_from{H};
    const auto wait = [](const auto& ready) {
        while (!ready()) std::this_thread::yield();
    };
    const auto run_fwd = [&](int rows) {
        for (int i = 0; i < rows; ++i) {
            const int y = fwd.yi;
            if (y >= j.mid) wait([&] { return bwd_from.load(std::memory_order_acquire) <= y; });
            advance(fwd);
            if (y < j.mid) fwd_done.store(y + 1, std::memory_order_release);
        }
    };
    const auto run_bwd = [&](int rows) {
        for (int i = 0; i < rows; ++i) {
            const int y = H - 1 - bwd.yi;
            if (y < j.mid) wait([&] { return fwd_done.load(std::memory_order_acquire) > y; });
            advance(bwd);
            if (y >= j.mid) bwd_from.store(y, std::memory_order_release);
        }
    };
    const int team = std::min(2, resolve_threads(threads));
#pragma omp parallel num_threads(team)
    {
        if (omp_get_num_threads() == 2) {
            if (omp_get_thread_num() == 0)
                run_fwd(H);
            else
                run_bwd(H);
        } else if (omp_get_thread_num() == 0) {
            // One thread: each pass's stored half first.
            run_fwd(j.mid);
            run_bwd(H - j.mid);
            run_fwd(H - j.mid);
            run_bwd(j.mid);
        }
    }
}

std::size_t sgm_scratch_bytes(const StereoPlan& plan, std::size_t pixels, int threads) {
    const std::size_t cubes = plan.sgm_radius > 0 ? 3 : (precomputed_costs(plan, threads) ? 2 : 1);
    return cubes * pixels * static_cast<std::size_t>(plan.num_d) * sizeof(u16);
}

template void stereo_sgm(Span2D<const std::uint8_t>, Span2D<const std::uint8_t>, Span2D<float>,
                         Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&,
                         const std::uint64_t*, const std::uint64_t*, void*, int);
template void stereo_sgm(Span2D<const std::uint16_t>, Span2D<const std::uint16_t>, Span2D<float>,
                         Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&,
                         const std::uint64_t*, const std::uint64_t*, void*, int);
template void stereo_sgm(Span2D<const float>, Span2D<const float>, Span2D<float>, Span2D<float>,
                         Span2D<std::uint8_t>, const StereoPlan&, const std::uint64_t*,
                         const std::uint64_t*, void*, int);

}  // namespace upres::cpu
