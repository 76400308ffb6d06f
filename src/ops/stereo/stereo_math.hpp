// The window matcher's formulas, written once for every backend (upres/stereo.hpp;
// docs/ops/stereo.md): the quantised per-pixel cost, the integer aggregation weights, the
// candidate range of a pixel, the winner's update rule (ties to the smaller disparity, OpenCV's
// uniqueness rule) and the parabola. Integer costs and sums make the backends agree exactly.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "core/hd.hpp"

namespace upres::stereo {

// Cost unit: 1/16 of an 8-bit level; the largest cost 255 levels.
inline constexpr int kCostScale = 16;
inline constexpr int kMaxCostQ = 255 * kCostScale;

// Integer 1-D weights g_k, k = 0 .. r (symmetric window of 2r + 1): round(256 e^(-k^2 / (2
// sigma^2)) / sum_j e^(-j^2 / (2 sigma^2))), sigma = (M - 1) / 4 = r / 2 (the window's corners
// keep e^-4 of the centre's weight: the whole window counts). The 2-D weight is g_i g_j; sums
// reach at most 4080 x 255^2 < 2^31. stereo_test checks the tables against the formula.
inline constexpr int kGauss7[4] = {69, 55, 28, 9};
inline constexpr int kGauss13[7] = {35, 33, 28, 21, 14, 9, 5};

// Per-pixel absolute difference of a channels-long pixel pair, on the 8-bit scale, channel
// mean, truncated at max_q (1/16 levels) and quantised to 1/16 level, rounded half up. Integer
// arithmetic for u8 and u16 (u16 levels are 1/257 of u8's); f32 (the [0, 1] scale) in double.
template <class T>
UPRES_HD int pixel_cost(const T* a, const T* b, int channels, int max_q) {
    int q;
    if constexpr (std::is_same_v<T, float>) {
        double s = 0.0;
        for (int c = 0; c < channels; ++c)
            s += fabs(static_cast<double>(a[c]) - static_cast<double>(b[c]));
        const double v = s * (255.0 * kCostScale) / channels;
        q = v >= max_q ? max_q : static_cast<int>(floor(v + 0.5));
    } else {
        int s = 0;  // at most 3 x 65535: 32 s fits in 32 bits
        for (int c = 0; c < channels; ++c) {
            const int d = static_cast<int>(a[c]) - static_cast<int>(b[c]);
            s += d < 0 ? -d : d;
        }
        // round(s * 16 / (unit * channels)), unit 1 (u8) or 257 (u16), half up.
        const int den = (std::is_same_v<T, std::uint8_t> ? 1 : 257) * channels;
        q = den == 1 ? kCostScale * s : (2 * kCostScale * s + den) / (2 * den);
    }
    return q < max_q ? q : max_q;
}

// Census: the 9 x 7 window around (x, y) (rows and columns clamped), bit k set where the
// neighbour's intensity (the channel sum, exact in double) is below the centre's; the centre
// itself has no bit: 62 bits, row-major.
inline constexpr int kCensusRx = 4, kCensusRy = 3;
template <class T>
UPRES_HD double intensity(const T* p, int channels) {
    double s = 0.0;
    for (int c = 0; c < channels; ++c) s += static_cast<double>(p[c]);
    return s;
}
// The code of (x, y) from the image's intensity plane (w x h, rows packed; each backend fills
// it once with intensity()). P: double, or float where the channel sums are exact in it (the
// cpu backend's u8 and u16 pairs: sums below 2^24).
template <class P>
UPRES_HD std::uint64_t census_code(const P* plane, int w, int h, int x, int y) {
    if (x >= kCensusRx && x < w - kCensusRx && y >= kCensusRy && y < h - kCensusRy) {
        // Inside: no clamping (the same bits, a third of the time on the cpu backend).
        // A row's bits in 32 bits, then into the code (64-bit shifts once a row).
        const P* p = plane + static_cast<std::ptrdiff_t>(y) * w + x;
        const P c = p[0];
        std::uint64_t code = 0;
        for (int dy = -kCensusRy; dy <= kCensusRy; ++dy) {
            const P* r = p + static_cast<std::ptrdiff_t>(dy) * w;
            std::uint32_t bits = 0;
            for (int dx = -kCensusRx; dx <= kCensusRx; ++dx) {
                if (dx == 0 && dy == 0) continue;
                bits = (bits << 1) | (r[dx] < c ? 1u : 0u);
            }
            code = (code << (dy == 0 ? 2 * kCensusRx : 2 * kCensusRx + 1)) | bits;
        }
        return code;
    }
    auto at = [&](int xx, int yy) {
        xx = xx < 0 ? 0 : (xx >= w ? w - 1 : xx);
        yy = yy < 0 ? 0 : (yy >= h ? h - 1 : yy);
        return plane[static_cast<std::ptrdiff_t>(yy) * w + xx];
    };
    const P c = at(x, y);
    std::uint64_t code = 0;
    for (int dy = -kCensusRy; dy <= kCensusRy; ++dy)
        for (int dx = -kCensusRx; dx <= kCensusRx; ++dx) {
            if (dx == 0 && dy == 0) continue;
            code = (code << 1) | (at(x + dx, y + dy) < c ? 1u : 0u);
        }
    return code;
}
// The census cost: the Hamming distance x 16, truncated at max_q.
UPRES_HD int census_cost(std::uint64_t a, std::uint64_t b, int max_q) {
#if defined(__CUDA_ARCH__)
    const int n = __popcll(a ^ b);
#elif defined(__GNUC__) || defined(__clang__)
    const int n = __builtin_popcountll(a ^ b);
#else
    std::uint64_t v = a ^ b;
    int n = 0;
    for (; v; v &= v - 1) ++n;
#endif
    const int q = n * kCostScale;
    return q < max_q ? q : max_q;
}

// The truncation in cost units: round(max_cost x 16), at least 1.
inline int max_cost_q(double max_cost) {
    const int q = static_cast<int>(std::lround(max_cost * kCostScale));
    return q < 1 ? 1 : (q > kMaxCostQ ? kMaxCostQ : q);
}

UPRES_HD int clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

// A pixel's winner: the smallest sum (ties keep the smaller d), the sums at best_d - 1 and
// best_d + 1 (-1: not a candidate) and the smallest sum over candidates two or more steps away
// (far, for uniqueness; -1: none). best -1: the pixel has no candidate.
struct Winner {
    std::int32_t best = -1, best_d = 0, before = -1, after = -1, far = -1;
};

UPRES_HD std::int32_t min_or(std::int32_t a, std::int32_t b) {  // -1: none
    return a < 0 ? b : (b < 0 ? a : (a < b ? a : b));
}

// The streaming form of the winner search: a pixel's candidates d arrive one at a time in
// increasing order (they are contiguous: [max(min_d, x - W + 1), min(max_d, x)] for left pixel
// x), each with its sum c, and update the state below, branch-free (the cpu backend runs it on
// rows of states, vectorised). kNone marks "none". prev: the previous candidate's sum; below2:
// the smallest sum over the candidates before the previous one. When c is a new best, the
// candidates two or more below it are exactly those of below2.
inline constexpr std::int32_t kNone = 0x7fffffff;
// m ? a : b as arithmetic (no branch for the compiler to keep).
UPRES_HD std::int32_t select(bool m, std::int32_t a, std::int32_t b) {
    return b ^ ((a ^ b) & -static_cast<std::int32_t>(m));
}
UPRES_HD void winner_step(std::int32_t& best, std::int32_t& best_d, std::int32_t& before,
                          std::int32_t& after, std::int32_t& far, std::int32_t& prev,
                          std::int32_t& below2, int d, std::int32_t c) {
    // Loads first, then arithmetic selects only: the cpu backend's loop over a row vectorises.
    const std::int32_t b = best, bd = best_d, bf = before, af = after, f = far, p = prev,
                       b2 = below2;
    const bool nb = c < b;
    const bool to_far = (d >= bd + 2) & (c < f);
    const bool to_after = d == bd + 1;
    far = select(nb, b2, select(to_far, c, f));
    after = select(nb, kNone, select(to_after, c, af));
    before = select(nb, p, bf);
    best_d = select(nb, d, bd);
    best = select(nb, c, b);
    below2 = select(p < b2, p, b2);
    prev = c;
}
// The Winner of a streamed state.
UPRES_HD Winner finished(std::int32_t best, std::int32_t best_d, std::int32_t before,
                         std::int32_t after, std::int32_t far) {
    Winner w;
    if (best == kNone) return w;
    w.best = best;
    w.best_d = best_d;
    w.before = before == kNone ? -1 : before;
    w.after = after == kNone ? -1 : after;
    w.far = far == kNone ? -1 : far;
    return w;
}

// The winner passes the uniqueness test (OpenCV: invalid if some candidate two or more steps
// away has sum * (100 - u) < best * 100).
UPRES_HD bool unique_enough(const Winner& w, int uniqueness) {
    if (uniqueness <= 0 || w.far < 0) return true;
    return static_cast<std::int64_t>(w.far) * (100 - uniqueness) >=
           static_cast<std::int64_t>(w.best) * 100;
}

// The winner's disparity with the parabola through (before, best, after) when both neighbours
// are candidates (the denominator is then positive: before > best, after >= best).
UPRES_HD float refined(const Winner& w, bool subpixel) {
    if (!subpixel || w.before < 0 || w.after < 0) return static_cast<float>(w.best_d);
    const double cm = w.before, c0 = w.best, cp = w.after;
    return static_cast<float>(w.best_d + (cm - cp) / (2.0 * (cm - 2.0 * c0 + cp)));
}

// Semi-global matching (Hirschmueller 2008), beyond the paper. Along a path direction r, in
// cost units (1/16 level or 1/16 bit):
//   L_r(p, d) = C(p, d) + min(L_r(p - r, d), L_r(p - r, d -+ 1) + P1, min_k L_r(p - r, k) + P2)
//               - min_k L_r(p - r, k),
// L_r(p, d) = C(p, d) where p - r is outside the image; neighbours d -+ 1 outside the range
// do not take part. S(p, d) = the sum over the paths. Every d of the range runs (the cost of a
// d with x - d outside the image reads the clamped column, as the window matcher's); the winner
// search is over the candidates as for the window matcher. L_r <= max C + P2, so with
// (max C + P2) x paths <= 65535 every value fits 16 bits.
inline constexpr int kSgmBig = 1 << 20;  // "no neighbour" in sgm_step
UPRES_HD int sgm_step(int c, int same, int below, int above, int prev_min, int p1, int p2) {
    int m = same;
    m = below + p1 < m ? below + p1 : m;
    m = above + p1 < m ? above + p1 : m;
    m = prev_min + p2 < m ? prev_min + p2 : m;
    return c + m - prev_min;
}

// The SGM cost: the per-pixel cost averaged over a (2s + 1)^2 window of the layer (rows and
// columns clamped), rounded half up; s = 0: the per-pixel cost.
UPRES_HD int window_mean(std::int64_t sum, int n) {
    return static_cast<int>((2 * sum + n) / (2 * n));
}

// The left-right check after the median (the `median` option with a check): left disparity d
// and the filtered right map's value o at x - rint(d) agree when their nearest integers differ
// by at most t (the medians are sub-pixel values of the maps).
UPRES_HD bool filtered_agree(float d, float o, int t) {
    const float a = rintf(d), b = rintf(o);
    return (a > b ? a - b : b - a) <= static_cast<float>(t);
}

}  // namespace upres::stereo
