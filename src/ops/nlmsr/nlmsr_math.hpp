// The NLM fusion's formulas, written once for every backend (upres/nlmsr.hpp;
// docs/ops/nlmsr.md): the border rule of patch reads, the candidate rule of the search window,
// the weight of a mean squared patch distance.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <utility>

#include "core/hd.hpp"

namespace upres::nlmsr {

// Largest sides (odd) and frame count the backends take.
inline constexpr int kMaxPatch = 31, kMaxSearch = 41, kMaxFrames = 64;

// Patch pixels outside the image are read at the nearest edge pixel.
UPRES_HD int clamp_index(int v, int n) { return v < 0 ? 0 : (v >= n ? n - 1 : v); }

// A search offset is a candidate when the pixel it points at is inside the image.
UPRES_HD bool candidate(int x, int y, int w, int h) { return x >= 0 && x < w && y >= 0 && y < h; }

// e^x for x <= 0 in float, branch-free so that CPU loops vectorise: 2^(x log2 e) as a power of
// two times a degree-5 polynomial of the fraction (a Chebyshev fit; relative error below
// 2e-7, 1.5 ulp, on the whole range), 0 below -87.
UPRES_HD float exp_nonpos(float x) {
    x = x > -87.0f ? x : -87.0f;
    const float t = x * 1.44269504089f;
#if defined(__CUDA_ARCH__)
    float fi = static_cast<float>(static_cast<int>(t));  // truncation, then floor
#else
    // t rounded to an integer by adding and removing 1.5 * 2^23 (exact for |t| < 2^22), then
    // floored: the same value as the truncation above, but where SSE4.1 or AVX2 are enabled GCC
    // turns float -> int -> float into a truncation whose loop it no longer vectorises
    // ("control flow in loop"); adds and compares vectorise at every width.
    float fi = (t + 12582912.0f) - 12582912.0f;
#endif
    fi -= static_cast<float>(fi > t);
    const float f = t - fi;
    float p = 1.8951072916e-3f;
    p = p * f + 8.946214665e-3f;
    p = p * f + 5.586328266e-2f;
    p = p * f + 2.4014077009e-1f;
    p = p * f + 6.9315462e-1f;
    p = p * f + 9.9999989576e-1f;
    const int e = (static_cast<int>(fi) + 127) << 23;
#if defined(__CUDA_ARCH__)
    return p * __int_as_float(e);
#else
    return p * std::bit_cast<float>(e);
#endif
}

// w = exp(-D / (2 sigma^2)) with D the mean squared patch difference; `neg_inv` is
// -1 / (2 sigma^2 patch^2), applied to the patch's sum of squares. The reference in double
// (std::exp), the fast backends in float (exp_nonpos).
UPRES_HD double weight(double sum_sq, double neg_inv) { return exp(sum_sq * neg_inv); }
UPRES_HD float weight(float sum_sq, float neg_inv) { return exp_nonpos(sum_sq * neg_inv); }

// One interior row of Immerkaer's noise estimate (nlmsr.cpp): the sum over x in [1, w - 2] of
// |I * N| at row b (a above it, c below), N the 3 x 3 difference of two Laplacians
// (1 -2 1 / -2 4 -2 / 1 -2 1), in double. The estimate adds the rows in order.
UPRES_HD double immerkaer_row(const float* a, const float* b, const float* c, int w) {
    double s = 0.0;
    for (int x = 1; x + 1 < w; ++x) {
        const double v = (a[x - 1] + a[x + 1] + c[x - 1] + c[x + 1]) -
                         2.0 * (a[x] + c[x] + b[x - 1] + b[x + 1]) + 4.0 * b[x];
        s += v < 0.0 ? -v : v;
    }
    return s;
}

// Where every weight underflows (all patches more than ~9 sigma apart, RMS) the pixel keeps the
// estimate: the result of num / den with den below this.
inline constexpr float kMinWeightSum = 1e-30f;

// The camera model of post Reconstruct along one axis: each input pixel the mean of its
// `scale` output pixels after a Gaussian blur of sigma input pixels, applied densely (output m
// gets the input pixel whose scale output pixels start at m): out(m) = sum_j k[j] in(m - origin
// + j), reads outside the plane reflected about its edge (half-sample symmetric). The transpose
// (P^T of the Landweber step) is the reversed kernel with origin len - 1 - origin.
inline constexpr int kMaxPsfTaps = 64;
struct PsfTaps {
    float k[kMaxPsfTaps];
    int len = 0, origin = 0;
};

// The Gaussian (sigma x scale output pixels, cut at 3 sigma, normalised) convolved with the box
// of `scale` taps 1 / scale; scale <= 4 and sigma <= 2 give at most 52 taps.
inline PsfTaps psf_taps(int scale, double sigma, bool transpose) {
    const double sh = sigma * scale;
    const int r = sh > 0.0 ? static_cast<int>(std::ceil(3.0 * sh)) : 0;
    double g[kMaxPsfTaps] = {}, gs = 0.0;
    for (int i = -r; i <= r; ++i)
        gs += g[i + r] = sh > 0.0 ? std::exp(-0.5 * i * i / (sh * sh)) : 1.0;
    PsfTaps t;
    t.len = 2 * r + scale;
    t.origin = r;
    for (int j = 0; j < t.len; ++j) {
        double v = 0.0;
        for (int b = 0; b < scale; ++b)
            if (j - b >= 0 && j - b <= 2 * r) v += g[j - b];
        t.k[j] = static_cast<float>(v / (gs * scale));
    }
    if (transpose) {
        for (int j = 0; j < t.len / 2; ++j) std::swap(t.k[j], t.k[t.len - 1 - j]);
        t.origin = t.len - 1 - t.origin;
    }
    return t;
}

// i folded into [0, n) by reflection about the edges (-1 -> 0, n -> n - 1).
UPRES_HD int reflect_index(int i, int n) {
    while (i < 0 || i >= n) i = i < 0 ? -i - 1 : 2 * n - 1 - i;
    return i;
}

// One sample of the filter along an axis: p the first element of the line, `step` elements
// between its samples, n samples; accumulated in Acc (double: the reference; float: the fast
// backends), taps in order.
template <class Acc>
UPRES_HD float psf_sample(const float* p, std::ptrdiff_t step, int n, int m, const PsfTaps& t) {
    Acc s = 0;
    const int j0 = m - t.origin;
    if (j0 >= 0 && j0 + t.len <= n) {  // inside: no reflection (the same sum)
        const float* q = p + j0 * step;
        for (int j = 0; j < t.len; ++j)
            s += static_cast<Acc>(t.k[j]) * static_cast<Acc>(q[j * step]);
    } else {
        for (int j = 0; j < t.len; ++j)
            s += static_cast<Acc>(t.k[j]) * static_cast<Acc>(p[reflect_index(j0 + j, n) * step]);
    }
    return static_cast<float>(s);
}

// The filter's epilogue: v, or with a plane to add, add + k v (the Landweber step's residual
// Z - P X with k = -1, its update X + P^T r with k = 1), rounded as two operations everywhere
// (no fused multiply-add on the device either), as the host computes it.
UPRES_HD float psf_epilogue(float v, const float* add, float k) {
    if (!add) return v;
#if defined(__CUDA_ARCH__)
    return __fadd_rn(*add, __fmul_rn(k, v));
#else
    return *add + k * v;
#endif
}

}  // namespace upres::nlmsr
