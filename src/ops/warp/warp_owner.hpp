// Input-aligned ("owner") tiles of an affine map: which outputs a tile of the SOURCE owns. A
// schedule, not a formula: it decides which block computes which output of the recursive fused
// B-spline kernel (warp_fused_cuda.cu, rec_owner_kernel); the value of each output still comes
// from warp_math.hpp. Host + device, so the partition is tested on the CPU
// (tests/ops/warp_owner_test.cpp) with the code the kernel runs.
//
// The source plane is cut into T x T tiles [U0, U0 + T) x [V0, V0 + T), U0 = ubase + I T,
// V0 = vbase + J T. Output (x, y) maps to u = m0 x + m1 y + m2, v = m3 x + m4 y + m5; the tile
// that contains (u, v) owns it. Along an output row, u and v are linear in x, so a tile owns an
// interval of each row: x in [ceil(X(U0)), ceil(X(U0 + T))) when m0 > 0, where X(E) = (E - m1 y -
// m2) / m0 is where u crosses the grid line E (mirrored for m0 < 0; the whole row or nothing
// for m0 = 0), intersected with the same for v and with [0, dst_w). X(E) is evaluated with
// explicit roundings (no contraction into FMAs), so the two tiles beside a grid line compute the
// same X and split every row without a gap or an overlap, whatever the rounding of X itself;
// an owned output lies in its tile up to that rounding (~1e-12 pixel).
//
// Why (docs/ops/warp.md 9.1, 9.3 round 8): a tile of the OUTPUT rotated by 30 degrees needs a
// source box of 1.87 times its area (plus the prefilter's halo), a tile of the source exactly
// its own area plus the halo: 2.2 instead of 3.3 box samples to gather and filter per output
// for 64-pixel tiles.
#pragma once

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/hd.hpp"

namespace upres::owner {

// Tile rows a grid may have (kernel parameter space: the table below travels with the launch).
constexpr int kMaxTileRows = 160;
// Output rows a tile may span (one thread per row in the kernel) and outputs a tile may own.
constexpr int kMaxRows = 256;
constexpr int kMaxOut = 16384;

struct Grid {
    double m[6];                  // u = m0 x + m1 y + m2, v = m3 x + m4 y + m5
    double r0, r3;                // 1 / m0 and 1 / m3 (0 where the coefficient is 0)
    double inv[4];                // (x, y) = inv (u - m2, v - m5): rows of the inverse matrix
    int tile;                     // T
    int ubase, vbase;             // origin of tile (0, 0)
    int dst_w, dst_h;             // output size
    int rows;                     // tile rows J in [0, rows)
    int count;                    // listed tiles (blocks)
    int max_span;                 // host bound of owner_rows' y1 - y0 + 1 over all tiles
    int first[kMaxTileRows + 1];  // index of row J's first listed tile; first[rows] = count
    int ilo[kMaxTileRows];        // I of row J's first listed tile (its tiles are I = ilo ...)
};

// Roundings as written (device: no FMA contraction; the host compilers do not contract).
#if defined(__CUDA_ARCH__)
UPRES_HD double rn_mul(double a, double b) { return __dmul_rn(a, b); }
UPRES_HD double rn_add(double a, double b) { return __dadd_rn(a, b); }
UPRES_HD double rn_sub(double a, double b) { return __dsub_rn(a, b); }
#else
UPRES_HD double rn_mul(double a, double b) { return a * b; }
UPRES_HD double rn_add(double a, double b) { return a + b; }
UPRES_HD double rn_sub(double a, double b) { return a - b; }
#endif

// An integer crossing position clamped to +-2^30 (huge for a near-zero m0 or m3).
UPRES_HD int clamp_pos(double x) {
    constexpr double kLim = 1073741824.0;
    return static_cast<int>(x < -kLim ? -kLim : (x > kLim ? kLim : x));
}

// Listed tile b (0 <= b < count): its indices (I, J).
UPRES_HD void owner_tile(const Grid& g, int b, int& I, int& J) {
    int lo = 0, hi = g.rows - 1;  // the last row whose first listed tile is at or before b
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (g.first[mid] <= b)
            lo = mid;
        else
            hi = mid - 1;
    }
    J = lo;
    I = g.ilo[lo] + (b - g.first[lo]);
}

// The owned x-range [xs, xe) of one axis (coefficient a, reciprocal r, b = a y + c) for the
// grid lines e0 < e1; [lo, hi) when a = 0 and b lies between them.
UPRES_HD void owner_axis(double a, double r, double b, double e0, double e1, int lo, int hi,
                         int& xs, int& xe) {
    if (a > 0.0) {
        xs = clamp_pos(std::ceil(rn_mul(rn_sub(e0, b), r)));
        xe = clamp_pos(std::ceil(rn_mul(rn_sub(e1, b), r)));
    } else if (a < 0.0) {
        xs = clamp_pos(std::floor(rn_mul(rn_sub(e1, b), r))) + 1;
        xe = clamp_pos(std::floor(rn_mul(rn_sub(e0, b), r))) + 1;
    } else {
        const bool in = e0 <= b && b < e1;
        xs = in ? lo : 0;
        xe = in ? hi : 0;
    }
}

// The outputs of row y that tile (I, J) owns: x in [xs, xe) (empty when xe <= xs).
UPRES_HD void owner_row(const Grid& g, int I, int J, int y, int& xs, int& xe) {
    const double e0u = static_cast<double>(g.ubase + I * g.tile);
    const double e1u = static_cast<double>(g.ubase + (I + 1) * g.tile);
    const double e0v = static_cast<double>(g.vbase + J * g.tile);
    const double e1v = static_cast<double>(g.vbase + (J + 1) * g.tile);
    const double yd = static_cast<double>(y);
    const double bu = rn_add(rn_mul(g.m[1], yd), g.m[2]);
    const double bv = rn_add(rn_mul(g.m[4], yd), g.m[5]);
    int us, ue, vs, ve;
    owner_axis(g.m[0], g.r0, bu, e0u, e1u, 0, g.dst_w, us, ue);
    owner_axis(g.m[3], g.r3, bv, e0v, e1v, 0, g.dst_w, vs, ve);
    xs = us > vs ? us : vs;
    xe = ue < ve ? ue : ve;
    xs = xs > 0 ? xs : 0;
    xe = xe < g.dst_w ? xe : g.dst_w;
}

// Output rows [y0, y1] that may hold outputs of tile (I, J) (its preimage, one row of margin,
// clipped to the image; empty when y1 < y0). Rows outside own nothing.
UPRES_HD void owner_rows(const Grid& g, int I, int J, int& y0, int& y1) {
    const double du0 = g.ubase + I * g.tile - g.m[2], dv0 = g.vbase + J * g.tile - g.m[5];
    const double t = g.tile;
    double lo = 1e300, hi = -1e300;
    for (int k = 0; k < 4; ++k) {
        const double du = du0 + ((k & 1) ? t : 0.0), dv = dv0 + ((k & 2) ? t : 0.0);
        const double yk = g.inv[2] * du + g.inv[3] * dv;
        lo = yk < lo ? yk : lo;
        hi = yk > hi ? yk : hi;
    }
    lo = lo < -1e9 ? -1e9 : lo;
    hi = hi > 1e9 ? 1e9 : hi;
    y0 = static_cast<int>(std::floor(lo)) - 1;
    y1 = static_cast<int>(std::ceil(hi)) + 1;
    y0 = y0 > 0 ? y0 : 0;
    y1 = y1 < g.dst_h - 1 ? y1 : g.dst_h - 1;
}

// Host: the grid of `tile` x `tile` source tiles for an affine map (m[0..5]) and a dst_w x dst_h
// output, listing per tile row the tiles that the mapped output rectangle meets (conservatively:
// a listed tile may own nothing). False when the map is singular or not finite, its coordinates
// exceed 1e7, the grid needs more than kMaxTileRows rows, a tile's preimage spans more than
// kMaxRows output rows or may hold more than kMaxOut outputs.
inline bool owner_grid(const double (&m)[6], int dst_w, int dst_h, int tile, Grid& g) {
    if (dst_w <= 0 || dst_h <= 0 || tile < 8) return false;
    for (double c : m)
        if (!std::isfinite(c)) return false;
    const double det = m[0] * m[4] - m[1] * m[3];
    if (!(std::abs(det) > 1e-6)) return false;
    for (int i = 0; i < 6; ++i) g.m[i] = m[i];
    g.r0 = m[0] != 0.0 ? 1.0 / m[0] : 0.0;
    g.r3 = m[3] != 0.0 ? 1.0 / m[3] : 0.0;
    g.inv[0] = m[4] / det, g.inv[1] = -m[1] / det, g.inv[2] = -m[3] / det, g.inv[3] = m[0] / det;
    g.tile = tile;
    g.dst_w = dst_w;
    g.dst_h = dst_h;
    // Preimage of a tile: its y-extent and its area bound the rows and the outputs of a block.
    // (owner_rows: floor and ceil of the extent, one row of margin on each side, both ends.)
    const double span = std::ceil(tile * (std::abs(g.inv[2]) + std::abs(g.inv[3]))) + 5.0;
    if (!(span <= kMaxRows)) return false;
    g.max_span = static_cast<int>(span);
    const double out_bound = (tile + 2.0) * (tile + 2.0) / std::abs(det) + 4.0 * span;
    if (!(out_bound <= kMaxOut)) return false;
    // The mapped output rectangle, one pixel wider on each side: a parallelogram (px, py).
    double px[4], py[4];
    const double cx[4] = {-1.0, dst_w + 0.0, dst_w + 0.0, -1.0};
    const double cy[4] = {-1.0, -1.0, dst_h + 0.0, dst_h + 0.0};
    double umin = 1e300, umax = -1e300, vmin = 1e300, vmax = -1e300;
    for (int k = 0; k < 4; ++k) {
        px[k] = m[0] * cx[k] + m[1] * cy[k] + m[2];
        py[k] = m[3] * cx[k] + m[4] * cy[k] + m[5];
        umin = std::min(umin, px[k]), umax = std::max(umax, px[k]);
        vmin = std::min(vmin, py[k]), vmax = std::max(vmax, py[k]);
    }
    if (!(std::abs(umin) < 1e7 && std::abs(umax) < 1e7 && std::abs(vmin) < 1e7 &&
          std::abs(vmax) < 1e7))
        return false;
    g.ubase = static_cast<int>(std::floor(umin)) - 1;
    g.vbase = static_cast<int>(std::floor(vmin)) - 1;
    const int cols = static_cast<int>(std::floor((umax - g.ubase) / tile)) + 1;
    g.rows = static_cast<int>(std::floor((vmax - g.vbase) / tile)) + 1;
    if (g.rows > kMaxTileRows) return false;
    g.count = 0;
    for (int J = 0; J < g.rows; ++J) {
        // u-extent of the parallelogram inside the strip [V0 - 1, V0 + T + 1]: its edges
        // clipped to the strip (the extreme points of a convex polygon cut by a strip lie on
        // them).
        const double s0 = g.vbase + J * tile - 1.0, s1 = s0 + tile + 2.0;
        double lo = 1e300, hi = -1e300;
        for (int k = 0; k < 4; ++k) {
            const double ax = px[k], ay = py[k], bx = px[(k + 1) % 4], by = py[(k + 1) % 4];
            double t0 = 0.0, t1 = 1.0;
            const double dy = by - ay;
            if (dy == 0.0) {
                if (ay < s0 || ay > s1) continue;
            } else {
                double ta = (s0 - ay) / dy, tb = (s1 - ay) / dy;
                if (ta > tb) std::swap(ta, tb);
                t0 = std::max(t0, ta), t1 = std::min(t1, tb);
                if (t0 > t1) continue;
            }
            for (double t : {t0, t1}) {
                const double u = ax + t * (bx - ax);
                lo = std::min(lo, u), hi = std::max(hi, u);
            }
        }
        g.first[J] = g.count;
        g.ilo[J] = 0;
        if (lo > hi) continue;
        const int i0 = std::max(0, static_cast<int>(std::floor((lo - 1.0 - g.ubase) / tile)));
        const int i1 =
            std::min(cols - 1, static_cast<int>(std::floor((hi + 1.0 - g.ubase) / tile)));
        if (i1 < i0) continue;
        g.ilo[J] = i0;
        g.count += i1 - i0 + 1;
    }
    g.first[g.rows] = g.count;
    return g.count > 0;
}

}  // namespace upres::owner
