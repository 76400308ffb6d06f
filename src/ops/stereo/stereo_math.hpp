// The window matcher's formulas, written once for every backend (upres/stereo.hpp;
// docs/ops/stereo.md): the quantised per-pixel cost, the integer aggregation weights, the
// candidate range of a pixel, the winner's update rule (ties to the smaller disparity, OpenCV's
// uniqueness rule) and the parabola. Integer costs and sums make the backends agree exactly.
#pragma once

#include <cmath>
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
        std::int64_t s = 0;
        for (int c = 0; c < channels; ++c) {
            const int d = static_cast<int>(a[c]) - static_cast<int>(b[c]);
            s += d < 0 ? -d : d;
        }
        // round(s * 16 / (unit * channels)), unit 1 (u8) or 257 (u16), half up.
        const std::int64_t den = (std::is_same_v<T, std::uint8_t> ? 1 : 257) * channels;
        q = static_cast<int>((2 * kCostScale * s + den) / (2 * den));
    }
    return q < max_q ? q : max_q;
}

// The truncation in cost units: round(max_cost x 16), at least 1.
inline int max_cost_q(double max_cost) {
    const int q = static_cast<int>(std::lround(max_cost * kCostScale));
    return q < 1 ? 1 : (q > kMaxCostQ ? kMaxCostQ : q);
}

UPRES_HD int clamp_index(int i, int n) { return i < 0 ? 0 : (i >= n ? n - 1 : i); }

// Per-pixel state of the winner-takes-all search, updated one disparity at a time in increasing
// order (the streaming form; the reference feeds it from its whole cube). best: the smallest
// sum so far (ties keep the earlier, smaller d); before / after: the sums at best - 1 and best
// + 1 (-1: not a candidate); far: the smallest sum over candidates two or more steps below
// best (for uniqueness), and below2: the smallest over candidates up to the one before the
// previous (-1: none).
struct Winner {
    std::int32_t best = -1, best_d = 0, before = -1, after = -1, far = -1;
    std::int32_t prev = -1, below2 = -1, prev_d = 0;
};

UPRES_HD std::int32_t min_or(std::int32_t a, std::int32_t b) {  // -1: none
    return a < 0 ? b : (b < 0 ? a : (a < b ? a : b));
}

// Candidate d of the pixel with sum c. Candidates arrive in increasing d, possibly with gaps at
// the start and end of the pixel's range but contiguous inside it.
UPRES_HD void winner_update(Winner& w, int d, std::int32_t c) {
    const std::int32_t prev = w.prev_d == d - 1 ? w.prev : -1;  // the candidate at d - 1
    if (w.best < 0 || c < w.best) {
        // Candidates two or more below d: everything before d - 1.
        w.far = w.prev_d == d - 1 ? w.below2 : min_or(w.below2, w.prev);
        w.best = c;
        w.best_d = d;
        w.before = prev;
        w.after = -1;
    } else {
        if (d == w.best_d + 1) w.after = c;
        if (d >= w.best_d + 2) w.far = min_or(w.far, c);
    }
    // below2 becomes the minimum over candidates up to d - 1 for the next step (d + 1).
    w.below2 = min_or(w.below2, prev);
    w.prev = c;
    w.prev_d = d;
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

}  // namespace upres::stereo
