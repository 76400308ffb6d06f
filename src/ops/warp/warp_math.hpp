// The math of upres::warp, written once for every backend (host + device inline functions):
// interpolation kernels and weights, the output -> input coordinate mapping of each transform
// kind, and the per-sample border rule (scipy.ndimage's, see below).
//
// Border rule (scipy.ndimage.map_coordinates / affine_transform / zoom, scipy 1.10, checked
// against it on golden data, tests/data/warp):
//   1. the continuous input coordinate u of each axis is first mapped into the image by
//      map_coord() (scipy's map_coordinate): Mirror reflects about 0 and n-1, Reflect about -0.5
//      and n-0.5, Wrap is periodic with period n (scipy 'grid-wrap'), Nearest clamps to
//      [0, n-1]. Border::Constant is scipy's mode='constant': a coordinate strictly outside
//      [0, n-1] on any axis gives the fill value (no blending with the fill near the edge);
//   2. the taps of the kernel around the mapped coordinate that fall outside [0, n) are mapped
//      by border_index() with tap_border(): the same border, except Constant which uses Mirror
//      (scipy's _get_spline_boundary_mode), so interior samples next to the edge are
//      interpolated from mirrored neighbours;
//   3. nearest neighbour takes index floor(u + 0.5) of the mapped coordinate (ties round up,
//      as scipy order=0).
// Cubic B-spline with Border::Nearest follows scipy's prefilter=True path: the image is padded
// by kBSplineNearestPad edge samples on each side, prefiltered with Mirror, and interpolated in
// the padded image (WarpPlan::pad) with coordinates clamped to the padded extent. With
// WarpOptions::prefiltered (scipy's prefilter=False) the coefficients are padded by
// kPrefilteredNearestPad edge copies instead: scipy then clamps the taps, not the coordinate,
// and a cubic's taps reach 2 samples out, beyond which every tap is the edge coefficient.
//
// Coordinates with |u| > kMaxCoord or non-finite (a homography's w' = 0, a wild remap field)
// give the fill value for every border.
#pragma once

#include <upres/warp.hpp>

#include <cmath>

#include "core/border_math.hpp"
#include "core/hd.hpp"
#include "core/span2d.hpp"

namespace upres {

inline constexpr int kBSplineNearestPad = 12;  // scipy's npad in _prepad_for_spline_filter
inline constexpr int kPrefilteredNearestPad = 2;
inline constexpr double kMaxCoord = 1e9;

// ---------------------------------------------------------------- 1-D kernels
// Keys (1981) cubic convolution kernel with parameter a (-0.5: Keys; -0.75: OpenCV, MATLAB
// imresize uses -0.5). Support [-2, 2].
template <class R>
UPRES_HD R keys_kernel(R x, R a) {
    x = x < R(0) ? -x : x;
    if (x <= R(1)) return ((a + R(2)) * x - (a + R(3))) * x * x + R(1);
    if (x < R(2)) return ((a * x - R(5) * a) * x + R(8) * a) * x - R(4) * a;
    return R(0);
}

// Cubic B-spline beta^3. Support [-2, 2].
template <class R>
UPRES_HD R bspline3_kernel(R x) {
    x = x < R(0) ? -x : x;
    if (x < R(1)) return (R(4) + x * x * (R(3) * x - R(6))) / R(6);
    if (x < R(2)) {
        const R t = R(2) - x;
        return t * t * t / R(6);
    }
    return R(0);
}

// Triangle (linear interpolation). Support [-1, 1].
template <class R>
UPRES_HD R linear_kernel(R x) {
    x = x < R(0) ? -x : x;
    return x < R(1) ? R(1) - x : R(0);
}

// Number of taps of the interpolation kernel (no antialias): 1, 2, 4, 4.
UPRES_HD int interp_taps(Interp i) {
    return i == Interp::Nearest ? 1 : (i == Interp::Linear ? 2 : 4);
}

// Index of the first tap for a (mapped) coordinate u: nearest floor(u + 0.5), linear floor(u),
// cubic floor(u) - 1 (scipy's `start`).
template <class R>
UPRES_HD long long first_tap(R u, Interp i) {
    if (i == Interp::Nearest) return static_cast<long long>(std::floor(u + R(0.5)));
    const long long f = static_cast<long long>(std::floor(u));
    return i == Interp::Linear ? f : f - 1;
}

// The 4-tap weights as cubic polynomials in t: w[k] = ((c[0][k] t + c[1][k]) t + c[2][k]) t +
// c[3][k] (expanded from the kernels above; used by vectorised backends). Keys with parameter a:
//   w0 = a t^3 - 2a t^2 + a t,  w1 = (a+2) t^3 - (a+3) t^2 + 1,
//   w2 = -(a+2) t^3 + (2a+3) t^2 - a t,  w3 = -a t^3 + a t^2.
// B-spline: w = (1/6) [(1-t)^3, 3t^3 - 6t^2 + 4, -3t^3 + 3t^2 + 3t + 1, t^3].
template <class R>
UPRES_HD void cubic_weight_poly(Interp i, R a, R c[4][4]) {
    if (i == Interp::BSpline) {
        const R s = R(1) / R(6);
        const R v[4][4] = {{-s, 3 * s, -3 * s, s},
                           {3 * s, -6 * s, 3 * s, R(0)},
                           {-3 * s, R(0), 3 * s, R(0)},
                           {s, 4 * s, s, R(0)}};
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 4; ++k) c[j][k] = v[j][k];
    } else {
        const R v[4][4] = {{a, a + 2, -(a + 2), -a},
                           {-2 * a, -(a + 3), 2 * a + 3, a},
                           {a, R(0), -a, R(0)},
                           {R(0), R(1), R(0), R(0)}};
        for (int j = 0; j < 4; ++j)
            for (int k = 0; k < 4; ++k) c[j][k] = v[j][k];
    }
}

// Weights of the taps first_tap(u) + k, k < interp_taps(i); t = u - floor(u) in [0, 1).
template <class R>
UPRES_HD void interp_weights(R t, Interp i, R a, R w[4]) {
    switch (i) {
        case Interp::Nearest:
            w[0] = R(1);
            return;
        case Interp::Linear:
            w[0] = R(1) - t;
            w[1] = t;
            return;
        case Interp::Cubic: {
            // keys_kernel at 1 + t, t, 1 - t and 2 - t: for t in [0, 1] (every caller passes a
            // fractional part) each argument stays on one piece of the kernel, so the weights are
            // cubic_weight_poly's polynomials, evaluated in Horner form (~12 operations per axis
            // once the coefficients, which depend on a only, are hoisted, instead of four
            // two-piece kernel evaluations; they differ by float rounding only).
            R c[4][4];
            cubic_weight_poly(Interp::Cubic, a, c);
            for (int k = 0; k < 4; ++k)
                w[k] = ((c[0][k] * t + c[1][k]) * t + c[2][k]) * t + c[3][k];
            return;
        }
        case Interp::BSpline: {
            // Multiplication by the constant 1/6 (not a division: an IEEE float division costs
            // ~8 instructions on a GPU; the results differ by at most one rounding).
            const R s = R(1) - t, t2 = t * t, sixth = R(1) / R(6);
            w[0] = s * s * s * sixth;
            w[1] = (R(4) + t2 * (R(3) * t - R(6))) * sixth;
            w[3] = t2 * t * sixth;
            w[2] = R(1) - w[0] - w[1] - w[3];
            return;
        }
    }
}

// Cubic B-spline weights times 6 (the caller applies the 1/6, e.g. in one scale per output):
// (1-t)^3, 3t^3 - 6t^2 + 4, 3(1-t)^3 - 6(1-t)^2 + 4, t^3 -- interp_weights' polynomials, with
// w2 by the kernel's symmetry w2(t) = w1(1 - t) instead of 1 - w0 - w1 - w3 (9 operations per
// axis instead of 13; the two forms differ by float rounding only). Used by the recursive fused
// CUDA kernel (warp_fused_cuda.cu).
template <class R>
UPRES_HD void bspline_weights6(R t, R w[4]) {
    const R s = R(1) - t, t2 = t * t, s2 = s * s;
    const R t3 = t2 * t, s3 = s2 * s;
    w[0] = s3;
    w[1] = R(3) * t3 + (R(4) - R(6) * t2);
    w[2] = R(3) * s3 + (R(4) - R(6) * s2);
    w[3] = t3;
}

// ---------------------------------------------------------------- border rule
// Border used for the kernel taps (scipy's _get_spline_boundary_mode): Constant -> Mirror.
UPRES_HD Border tap_border(Border b) { return b == Border::Constant ? Border::Mirror : b; }

// scipy.ndimage's map_coordinate: maps the continuous coordinate u into the image of n samples
// for the border. Returns false when the sample is "outside" (Constant beyond [0, n-1], or a
// non-finite / huge coordinate): the output is then the fill value.
template <class R>
UPRES_HD bool map_coord(R& u, int n, Border b) {
    if (!(u > R(-kMaxCoord) && u < R(kMaxCoord))) return false;  // also NaN
    const R last = R(n - 1);
    if (u >= R(0) && u <= last) return true;
    if (b == Border::Constant) return false;
    if (n <= 1) {
        u = R(0);
        return true;
    }
    if (u < R(0)) {
        switch (b) {
            case Border::Mirror: {
                const R p = R(2 * n - 2);
                u = p * static_cast<R>(static_cast<long long>(-u / p)) + u;
                u = u <= R(1 - n) ? u + p : -u;
                break;
            }
            case Border::Reflect: {
                const R p = R(2 * n);
                if (u < -p) u = p * static_cast<R>(static_cast<long long>(-u / p)) + u;
                u = u < R(-n) ? u + p : (u > R(-1e-15) ? R(1e-15) : -u) - R(1);
                break;
            }
            case Border::Wrap:
                u += R(n) * static_cast<R>(static_cast<long long>((R(-1) - u) / R(n)) + 1);
                break;
            case Border::Nearest:
                u = R(0);
                break;
            case Border::Constant:
                return false;
        }
    } else {
        switch (b) {
            case Border::Mirror: {
                const R p = R(2 * n - 2);
                u -= p * static_cast<R>(static_cast<long long>(u / p));
                if (u >= R(n)) u = p - u;
                break;
            }
            case Border::Reflect: {
                const R p = R(2 * n);
                u -= p * static_cast<R>(static_cast<long long>(u / p));
                if (u >= R(n)) u = p - u - R(1);
                break;
            }
            case Border::Wrap:
                u -= R(n) * static_cast<R>(static_cast<long long>(u / R(n)));
                break;
            case Border::Nearest:
                u = last;
                break;
            case Border::Constant:
                return false;
        }
    }
    return true;
}

// Index of tap i (any value, after map_coord its distance to the image is small) in [0, n).
UPRES_HD int tap_index(long long i, int n, Border b) {
    if (i >= 0 && i < n) return static_cast<int>(i);
    // map_coord keeps u within one period of the image: |i| < 3n + 4 fits in int.
    return border_index(static_cast<int>(i), n, tap_border(b));
}

// ---------------------------------------------------------------- transforms
// Output pixel (x, y) -> input coordinate (u, v) for every kind except Remap/Flow (which read
// the field): Affine and Resize use m[0..5] (u = m0 x + m1 y + m2, v = m3 x + m4 y + m5);
// Perspective uses h = m[0..8], u = (h0 x + h1 y + h2) / (h6 x + h7 y + h8), v likewise.
// A zero denominator gives NaN (outside).
template <class R>
UPRES_HD void map_matrix(const double* m, Transform::Kind kind, R x, R y, R& u, R& v) {
    if (kind == Transform::Kind::Perspective) {
        const R w = R(m[6]) * x + R(m[7]) * y + R(m[8]);
        const R uu = R(m[0]) * x + R(m[1]) * y + R(m[2]);
        const R vv = R(m[3]) * x + R(m[4]) * y + R(m[5]);
        if (w == R(0)) {
            u = v = R(NAN);
            return;
        }
        u = uu / w;
        v = vv / w;
    } else {
        u = R(m[0]) * x + R(m[1]) * y + R(m[2]);
        v = R(m[3]) * x + R(m[4]) * y + R(m[5]);
    }
}

// Resize: output x of n_out -> input (x + 0.5) * n_in / n_out - 0.5 (scipy zoom grid_mode=True;
// MATLAB imresize). scale = n_out / n_in.
inline double resize_coeff(int n_in, int n_out) { return double(n_in) / double(n_out); }
// The resize of a sw x sh image to dw x dh as a 3 x 3 map (row-major, last row 0 0 1).
inline void resize_matrix(int sw, int sh, int dw, int dh, double m[9]) {
    const double sx = resize_coeff(sw, dw), sy = resize_coeff(sh, dh);
    const double r[9] = {sx, 0, 0.5 * sx - 0.5, 0, sy, 0.5 * sy - 0.5, 0, 0, 1};
    for (int i = 0; i < 9; ++i) m[i] = r[i];
}

// ---------------------------------------------------------------- antialiased resize
// Down-scaling by scale < 1 with antialias: the kernel k (linear or Keys cubic) is stretched,
// k_s(d) = scale * k(scale * d), support radius r / scale, and the weights of the taps i with
// |u - i| < r / scale are renormalised to sum 1 (MATLAB imresize, antialiasing=true). Taps
// outside the image use tap_border(border) (MATLAB itself uses Reflect: aux = [1:n, n:-1:1]).
template <class R>
UPRES_HD R resize_kernel(R d, Interp i, R a) {
    return i == Interp::Linear ? linear_kernel(d) : keys_kernel(d, a);
}
template <class R>
UPRES_HD R resize_kernel_radius(Interp i) {
    return i == Interp::Linear ? R(1) : R(2);
}

// Lowest and highest tap of the antialiased kernel around u (weights are zero outside).
template <class R>
UPRES_HD void resize_aa_range(R u, R scale, Interp i, long long& lo, long long& hi) {
    const R r = resize_kernel_radius<R>(i) / scale;
    lo = static_cast<long long>(std::floor(u - r));
    hi = static_cast<long long>(std::ceil(u + r));
}
// Unnormalised weight of tap index k (any integer) for the antialiased kernel.
template <class R>
UPRES_HD R resize_aa_weight(R u, long long k, R scale, Interp i, R a) {
    return scale * resize_kernel((u - static_cast<R>(k)) * scale, i, a);
}

// ---------------------------------------------------------------- one output sample
// Interpolates all channels of src at (u, v) (already in src's coordinates, pad included) with
// the border rule above. Returns false when the output is the fill value. R: double in the
// reference, float elsewhere. src holds pixels (nearest, linear, cubic) or B-spline
// coefficients (bspline).
template <class R, class S>
UPRES_HD bool sample_point(Span2D<const S> src, R u, R v, Interp interp, Border border, R a,
                           R out[4]) {
    if (!map_coord(u, src.width, border) || !map_coord(v, src.height, border)) return false;
    const int taps = interp_taps(interp);
    const long long x0 = first_tap(u, interp), y0 = first_tap(v, interp);
    R wx[4], wy[4];
    interp_weights(u - std::floor(u), interp, a, wx);
    interp_weights(v - std::floor(v), interp, a, wy);
    int ix[4], iy[4];
    for (int k = 0; k < taps; ++k) {
        ix[k] = tap_index(x0 + k, src.width, border);
        iy[k] = tap_index(y0 + k, src.height, border);
    }
    for (int c = 0; c < src.channels; ++c) {
        R acc = R(0);
        for (int j = 0; j < taps; ++j) {
            const S* row = src.row(iy[j]);
            R racc = R(0);
            for (int k = 0; k < taps; ++k)
                racc += wx[k] * static_cast<R>(row[ix[k] * src.channels + c]);
            acc += wy[j] * racc;
        }
        out[c] = acc;
    }
    return true;
}

}  // namespace upres
