// SEABI: the integer rules, written once for every backend (reference, CPU stripes, CUDA).
// docs/ops/seabi.md numbers the rules; the comments below use the same numbers.
//
// Neighbourhoods are 4 x 4 blocks p[r][c] = image(x + c - 1, y + r - 1) around the 2 x 2
// output cell of input pixel (x, y) (clamp-to-edge addressing done by the caller), so
// a = p[1][1], b = p[1][2] (right), c = p[2][1] (below), d = p[2][2].
// All arithmetic is in int; right shifts of negative values are arithmetic (floor), which
// C++20 and CUDA guarantee.
#pragma once

#include <cstdint>

#include "core/hd.hpp"

namespace upres::seabi {

// --- R1: threshold. TV = sum over pixels of gx^2 + gy^2 with forward differences (zero on the
// last column / row). Tq = floor(TV / (W H)), T = floor(sqrt(Tq)) = floor(sqrt(TV / (W H))).
UPRES_HD int tv_term(int v, int right, int below) {
    const int gx = right - v, gy = below - v;
    return gx * gx + gy * gy;
}

struct Threshold {
    int tq = 0;  // floor(TV / (W H)), at most 2 * 255^2
    int t = 0;   // floor(sqrt(tq))
};

inline Threshold make_threshold(std::int64_t tv, std::int64_t pixels) {
    Threshold th;
    th.tq = static_cast<int>(tv / pixels);
    int t = 0;
    while ((t + 1) * (t + 1) <= th.tq) ++t;  // exact integer square root (tq <= 130050)
    th.t = t;
    return th;
}

// Construction thresholds for the directional tests (R3, R4): kDirScale * T.
inline constexpr int kDirScale = 4;

UPRES_HD int iabs(int v) { return v < 0 ? -v : v; }
UPRES_HD int clamp255(int v) { return v < 0 ? 0 : (v > 255 ? 255 : v); }

// Half-sample 4-tap cubic (-1, 9, 9, -1) / 16, rounded half up: the Keys cubic (a = -0.5)
// evaluated half-way between p1 and p2.
UPRES_HD int c4(int p0, int p1, int p2, int p3) { return (-p0 + 9 * (p1 + p2) - p3 + 8) >> 4; }
// Half-sample 6-tap (1, -5, 20, 20, -5, 1) / 32 (the paper's 6-tap baseline).
UPRES_HD int c6(int p0, int p1, int p2, int p3, int p4, int p5) {
    return (p0 + p5 - 5 * (p1 + p4) + 20 * (p2 + p3) + 16) >> 5;
}

// The three new samples of one 2 x 2 cell: h = (2x+1, 2y), v = (2x, 2y+1), d = (2x+1, 2y+1).
struct Cell {
    int h, v, d;
};

// R3 (Fig. 6 of the paper): the horizontal new sample between a and b. Returns the value for
// the three classes: A = 2|a-b| - (|p(0,-1)-c| + |p(1,-1)-d|) compares the variation across
// the sample (horizontal) with the variation along the columns. A < -t: horizontal edge ->
// cubic along the row; A > t: vertical edge -> the steep diagonal with the smaller difference
// (B = |p(0,-1)-d| - |p(1,-1)-c|: B > t -> NE line (p(1,-1), c), B < -t -> NW line (p(0,-1),
// d), else bilinear); |A| <= t: `mid` (construction: cubic; CxHD: bilinear, A == 0).
UPRES_HD int fig6_h(const int (&p)[4][4], int t, bool mid_cubic) {
    const int a = p[1][1], b = p[1][2], c = p[2][1], d = p[2][2];
    const int A = 2 * iabs(a - b) - (iabs(p[0][1] - c) + iabs(p[0][2] - d));
    const int B = iabs(p[0][1] - d) - iabs(p[0][2] - c);
    const int cub = c4(p[1][0], a, b, p[1][3]);
    const int bil = (a + b + 1) >> 1;
    const int ne = (p[0][2] + c + 1) >> 1;
    const int nw = (p[0][1] + d + 1) >> 1;
    const int across = B > t ? ne : (B < -t ? nw : bil);
    return A < -t ? cub : (A > t ? across : (mid_cubic ? cub : bil));
}

// R3 transposed: the vertical new sample between a and c.
UPRES_HD int fig6_v(const int (&p)[4][4], int t, bool mid_cubic) {
    const int a = p[1][1], b = p[1][2], c = p[2][1], d = p[2][2];
    const int A = 2 * iabs(a - c) - (iabs(p[1][0] - b) + iabs(p[2][0] - d));
    const int B = iabs(p[1][0] - d) - iabs(p[2][0] - b);
    const int cub = c4(p[0][1], a, c, p[3][1]);
    const int bil = (a + c + 1) >> 1;
    const int ne = (p[2][0] + b + 1) >> 1;
    const int nw = (p[1][0] + d + 1) >> 1;
    const int across = B > t ? ne : (B < -t ? nw : bil);
    return A < -t ? cub : (A > t ? across : (mid_cubic ? cub : bil));
}

// R2 + R3 + R4: L-SEAI construction of one cell (values clamped to [0, 255]).
//   R2 homogeneity: e = (b-a)^2 + (c-a)^2 + (d-c)^2 + (d-b)^2 (twice the mean squared gradient
//      at the cell's corners); homogeneous iff 2 e <= Tq (local gradient <= T / 2) -> bilinear.
//   R4 diagonal: D1 = 2|a-d| + |p(-1,-1)-a| + |d-p(2,2)| (variation along NW-SE), D2 likewise
//      along NE-SW. D2 - D1 > 4T: cubic along NW-SE; D1 - D2 > 4T: cubic along NE-SW; else the
//      separable 4x4 cubic.
UPRES_HD Cell lseai_cell(const int (&p)[4][4], int tq, int t) {
    const int a = p[1][1], b = p[1][2], c = p[2][1], d = p[2][2];
    const int e = (b - a) * (b - a) + (c - a) * (c - a) + (d - c) * (d - c) + (d - b) * (d - b);
    const bool hom = 2 * e <= tq;
    const int td = kDirScale * t;
    const int h = hom ? (a + b + 1) >> 1 : fig6_h(p, td, true);
    const int v = hom ? (a + c + 1) >> 1 : fig6_v(p, td, true);
    const int d1 = 2 * iabs(a - d) + iabs(p[0][0] - a) + iabs(d - p[3][3]);
    const int d2 = 2 * iabs(b - c) + iabs(p[0][3] - b) + iabs(c - p[3][0]);
    int col[4];
    for (int k = 0; k < 4; ++k) col[k] = -p[0][k] + 9 * (p[1][k] + p[2][k]) - p[3][k];
    const int sep = (-col[0] + 9 * (col[1] + col[2]) - col[3] + 128) >> 8;
    const int dd = d2 - d1 > td   ? c4(p[0][0], a, d, p[3][3])
                   : d1 - d2 > td ? c4(p[0][3], b, c, p[3][0])
                                  : sep;
    const int dv = hom ? (a + b + c + d + 2) >> 2 : dd;
    return {clamp255(h), clamp255(v), clamp255(dv)};
}

// R7: CxHD up-sampling of the (signed) error image: Fig. 6 with sign tests (t = 0, A == 0 ->
// bilinear) for h and v; the 4-neighbour diagonal rule for d: the mean of the diagonal pair
// with the smaller absolute difference, the mean of all four on a tie. Not clamped.
UPRES_HD Cell cxhd_cell(const int (&p)[4][4]) {
    const int a = p[1][1], b = p[1][2], c = p[2][1], d = p[2][2];
    const int d1 = iabs(a - d), d2 = iabs(b - c);
    const int dv =
        d1 < d2 ? (a + d + 1) >> 1 : (d1 > d2 ? (b + c + 1) >> 1 : (a + b + c + d + 2) >> 2);
    return {fig6_h(p, 0, false), fig6_v(p, 0, false), dv};
}

// R5: 5-tap Gaussian (h0, h1, h2, h1, h0) in units of 2^-23: the paper's integers with the
// centre tap renormalised (5577619 -> 5563912) so the taps sum to exactly 2^23.
inline constexpr int kBlurH0 = 21559, kBlurH1 = 1390789, kBlurH2 = 5563912;
inline constexpr int kBlurShift = 23;
// One blur tap sum of u8 values, rounded half up (fits: at most 2143289344 < 2^31).
UPRES_HD int blur5(int p0, int p1, int p2, int p3, int p4) {
    const unsigned s = 21559u * static_cast<unsigned>(p0 + p4) +
                       1390789u * static_cast<unsigned>(p1 + p3) +
                       5563912u * static_cast<unsigned>(p2) + (1u << 22);
    return static_cast<int>(s >> 23);
}

// R8: back-projection filter P = 2 delta - g (x) g with g = (1, 42, 170, 42, 1) / 256 (the
// blur quantised to 8 bits): a 5 x 5 sharpening ("Laplacian") kernel with unit DC gain, the
// first-order Neumann approximation of the inverse of the blur. In units of 2^-16:
//   r = (2^17 e(0,0) - sum_kl g_k g_l e(k,l) + 2^15) >> 16.
// The reference applies the 25 coefficients; the other backends use the exact separable split
// (integer sums are exact, so both give the same bits).
inline constexpr int kBpG0 = 1, kBpG1 = 42, kBpG2 = 170;
UPRES_HD int bp_g5(int e0, int e1, int e2, int e3, int e4) {
    return kBpG0 * (e0 + e4) + kBpG1 * (e1 + e3) + kBpG2 * e2;
}
UPRES_HD int bp_finish(int centre, int gg_sum) { return (centre * 131072 - gg_sum + 32768) >> 16; }
// The full 5 x 5 coefficient (k, l in 0..4) of P in units of 2^-16, for the reference.
UPRES_HD int bp_coefficient(int k, int l) {
    const int g[5] = {kBpG0, kBpG1, kBpG2, kBpG1, kBpG0};
    return (k == 2 && l == 2 ? 131072 : 0) - g[k] * g[l];
}

// R9: refined value.
UPRES_HD int add_clamp(int y, int r) { return clamp255(y + r); }

// --- The centre-aligned lattice (docs/ops/seabi.md, "Centre-aligned lattice", rules C2-C7).
// Output pixel X samples input X / 2 - 1/4, so no output pixel is an input pixel: the four
// output pixels inside the square of input pixels a = (x, y), b = (x+1, y), c = (x, y+1),
// d = (x+1, y+1) sit at the quarter points (1/4 or 3/4 along each axis). Blocks are indexed by
// k = x + 1 in 0 .. W (block k's a is input k - 1); block (kx, ky) writes output pixels
// (2 kx - 1 + i, 2 ky - 1 + j), i, j in {0, 1}: the co-sited cell's write pattern shifted by one
// output pixel, so neighbourhoods are p[r][c] = input(kx + c - 2, ky + r - 2).

// The four new samples of one block: q[j][i] at (x + 1/4 + i/2, y + 1/4 + j/2).
struct Quad {
    int q00, q10, q01, q11;  // (1/4, 1/4), (3/4, 1/4), (1/4, 3/4), (3/4, 3/4)
};

// The Keys cubic (a = -0.5) a quarter of the way from p1 to p2: (-9, 111, 29, -3) / 128.
UPRES_HD int k4q(int p0, int p1, int p2, int p3) {
    return (-9 * p0 + 111 * p1 + 29 * p2 - 3 * p3 + 64) >> 7;
}

// Bilinear at the quarter points: (9, 3, 3, 1) / 16 and its mirror images.
UPRES_HD Quad bilinear_quad(int a, int b, int c, int d) {
    return {(9 * a + 3 * b + 3 * c + d + 8) >> 4, (3 * a + 9 * b + c + 3 * d + 8) >> 4,
            (3 * a + b + 9 * c + 3 * d + 8) >> 4, (a + 3 * b + 3 * c + 9 * d + 8) >> 4};
}

// Separable Keys cubic at the quarter points: columns with (-9, 111, 29, -3) (phase 1/4) and
// its mirror (phase 3/4), unrounded, then the rows, (... + 2^13) >> 14. Not clamped.
UPRES_HD Quad cubic_quad(const int (&p)[4][4]) {
    int top[4], bot[4];
    for (int k = 0; k < 4; ++k) {
        top[k] = -9 * p[0][k] + 111 * p[1][k] + 29 * p[2][k] - 3 * p[3][k];
        bot[k] = -3 * p[0][k] + 29 * p[1][k] + 111 * p[2][k] - 9 * p[3][k];
    }
    auto left = [](const int(&v)[4]) { return -9 * v[0] + 111 * v[1] + 29 * v[2] - 3 * v[3]; };
    auto right = [](const int(&v)[4]) { return -3 * v[0] + 29 * v[1] + 111 * v[2] - 9 * v[3]; };
    return {(left(top) + 8192) >> 14, (right(top) + 8192) >> 14, (left(bot) + 8192) >> 14,
            (right(bot) + 8192) >> 14};
}

// C2-C4: L-SEAI construction of one block on the centre-aligned lattice (clamped to [0, 255]).
//   C2 homogeneity (R2's test): bilinear at the quarter points.
//   C4 diagonal (R4's tests D1, D2 against 4T): along NW-SE, q00 and q11 lie on the diagonal
//      a-d (Keys at 1/4 and 3/4 of it) and q10 / q01 half-way between its midpoint and b / c
//      (the lines of constant value through them); along NE-SW the same with b-c, a and d.
//   Otherwise the separable cubic (as R4's fallback).
UPRES_HD Quad lseai_quad(const int (&p)[4][4], int tq, int t) {
    const int a = p[1][1], b = p[1][2], c = p[2][1], d = p[2][2];
    const int e = (b - a) * (b - a) + (c - a) * (c - a) + (d - c) * (d - c) + (d - b) * (d - b);
    Quad q;
    if (2 * e <= tq) {
        q = bilinear_quad(a, b, c, d);
    } else {
        const int td = kDirScale * t;
        const int d1 = 2 * iabs(a - d) + iabs(p[0][0] - a) + iabs(d - p[3][3]);
        const int d2 = 2 * iabs(b - c) + iabs(p[0][3] - b) + iabs(c - p[3][0]);
        if (d2 - d1 > td) {
            const int m = c4(p[0][0], a, d, p[3][3]);
            q = {k4q(p[0][0], a, d, p[3][3]), (m + b + 1) >> 1, (m + c + 1) >> 1,
                 k4q(p[3][3], d, a, p[0][0])};
        } else if (d1 - d2 > td) {
            const int m = c4(p[0][3], b, c, p[3][0]);
            q = {(a + m + 1) >> 1, k4q(p[0][3], b, c, p[3][0]), k4q(p[3][0], c, b, p[0][3]),
                 (d + m + 1) >> 1};
        } else {
            q = cubic_quad(p);
        }
    }
    return {clamp255(q.q00), clamp255(q.q10), clamp255(q.q01), clamp255(q.q11)};
}

// C5: the blur of R5 (the same Gaussian, sigma^2 = 0.3607 output pixels^2) sampled half-way
// between output pixels, where a centre-aligned decimation puts its taps: low-resolution pixel
// i takes output pixels 2i - 2 .. 2i + 3 with (g0, g1, g2, g2, g1, g0) / 2^16,
// g = exp(-1.3863 (k + 1/2)^2) normalised (2.5, 1.5, 0.5 pixels away).
inline constexpr int kCBlurG0 = 8, kCBlurG1 = 1927, kCBlurG2 = 30833;
static_assert(2 * (kCBlurG0 + kCBlurG1 + kCBlurG2) == 65536, "centred blur taps sum to 2^16");
UPRES_HD int cblur6(int p0, int p1, int p2, int p3, int p4, int p5) {
    return (kCBlurG0 * (p0 + p5) + kCBlurG1 * (p1 + p4) + kCBlurG2 * (p2 + p3) + 32768) >> 16;
}

// The centre-aligned tap baselines, one axis: Tap4 is the Keys cubic at the quarter phases;
// Tap6 is H.264's quarter-sample rule, the mean of the nearer input sample and the 6-tap
// half-sample value (rounded up). Value a quarter of the way from p[2] to p[3] (Tap4 reads
// p[1..4]); `mirror` gives the value a quarter of the way from p[3] to p[2].
UPRES_HD int tap_quarter(const int (&p)[6], bool tap6, bool mirror) {
    if (!tap6) return clamp255(mirror ? k4q(p[4], p[3], p[2], p[1]) : k4q(p[1], p[2], p[3], p[4]));
    const int half = clamp255(c6(p[0], p[1], p[2], p[3], p[4], p[5]));
    return ((mirror ? p[3] : p[2]) + half + 1) >> 1;
}

// R6: L-SEABI stopping rule (host): stop when l1 / (W H) < max_error.
inline bool converged(std::int64_t l1, double max_error, std::int64_t pixels) {
    return static_cast<double>(l1) < max_error * static_cast<double>(pixels);
}

}  // namespace upres::seabi
