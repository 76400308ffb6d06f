// Device helpers shared by the CUDA warp kernels (warp_cuda.cu, warp_fused_cuda.cu): schedule
// decisions only; every formula comes from warp_math.hpp.
#pragma once

#include "ops/warp/warp_backends.hpp"

namespace upres::cuda::detail {

template <Interp I>
constexpr int kTaps = I == Interp::Nearest ? 1 : (I == Interp::Linear ? 2 : 4);

// True when every tap at u lies in [0, n) and map_coord would leave u unchanged (as cpu).
template <Interp I>
__device__ __forceinline__ bool interior(double u, int n) {
    if constexpr (I == Interp::Nearest)
        return u >= 0.0 && u <= n - 1.0;
    else if constexpr (I == Interp::Linear)
        return u >= 0.0 && u < n - 1.0;
    else
        return u >= 1.0 && u < n - 2.0;
}

// map_matrix<double> (warp_math.hpp) evaluated with the host's roundings: every product and sum
// rounded separately, in the order the C++ expression has, with no fused multiply-add (nvcc
// contracts a * b + c into one FMA by default; the host compilers do not). Coordinates are then
// bit-identical to the reference's and the CPU backend's, so nearest-neighbour ties
// (floor(u + 0.5) at u = k + 0.5, frequent in resizes) and the Constant border's edge test
// resolve the same way on every backend.
__device__ __forceinline__ void map_matrix_host_rounding(const double* m, Transform::Kind kind,
                                                         int xi, int yi, double& u, double& v) {
    const double x = xi, y = yi;
    const double uu = __dadd_rn(__dadd_rn(__dmul_rn(m[0], x), __dmul_rn(m[1], y)), m[2]);
    const double vv = __dadd_rn(__dadd_rn(__dmul_rn(m[3], x), __dmul_rn(m[4], y)), m[5]);
    if (kind == Transform::Kind::Perspective) {
        const double w = __dadd_rn(__dadd_rn(__dmul_rn(m[6], x), __dmul_rn(m[7], y)), m[8]);
        if (w == 0.0) {
            u = v = NAN;
            return;
        }
        u = __ddiv_rn(uu, w);
        v = __ddiv_rn(vv, w);
    } else {
        u = uu;
        v = vv;
    }
}

// Input coordinate of output (x, y) in the source span (pad included), as ref/cpu.
__device__ __forceinline__ void input_point(const WarpPlan& p, const double m[9], int x, int y,
                                            double& u, double& v) {
    if (p.kind == Transform::Kind::Remap) {
        const float* f = p.field.row(y) + 2 * x;
        u = __ldg(f);
        v = __ldg(f + 1);
    } else if (p.kind == Transform::Kind::Flow) {
        const float* f = p.field.row(y) + 2 * x;
        u = x + static_cast<double>(__ldg(f));
        v = y + static_cast<double>(__ldg(f + 1));
    } else {
        map_matrix_host_rounding(m, p.kind, x, y, u, v);
    }
    u += p.pad;
    v += p.pad;
}

// interior<I> for a split coordinate u = i + t (t in [0, 1)): every tap inside, map_coord would
// not move u (Nearest: conservatively u < n - 1; u = n - 1 takes the border rule, same result).
template <Interp I>
__device__ __forceinline__ bool interior_split(int i, int n) {
    if constexpr (I == Interp::Nearest || I == Interp::Linear)
        return i >= 0 && i < n - 1;
    else
        return i >= 1 && i < n - 2;
}

// Affine / Resize coordinates of one thread's outputs (x, y + dy): u = m0 x + m1 y + m2 (+ pad)
// evaluated once in double and split into an integer and a float fraction; the outputs below
// add m1 dy, m4 dy in float (|dy| < 32: error ~1e-6 pixel), so weights keep float precision
// whatever the image size, with no double arithmetic per output.
struct SplitAffine {
    double ub, vb, m1, m4;
    int iu0, iv0;
    float fu0, fv0, su, sv;

    __device__ __forceinline__ bool init(const WarpPlan& p, const double m[9], int x, int y) {
        map_matrix_host_rounding(m, p.kind, x, y, ub, vb);
        ub += p.pad;
        vb += p.pad;
        if (!(fabs(ub) < 1e9 && fabs(vb) < 1e9)) return false;  // huge or NaN: double path
        const double fu = floor(ub), fv = floor(vb);
        iu0 = static_cast<int>(fu);
        iv0 = static_cast<int>(fv);
        fu0 = static_cast<float>(ub - fu);
        fv0 = static_cast<float>(vb - fv);
        m1 = m[1];
        m4 = m[4];
        su = static_cast<float>(m1);
        sv = static_cast<float>(m4);
        return true;
    }
    __device__ __forceinline__ void at(int dy, int& iu, float& tu, int& iv, float& tv) const {
        const float a = fmaf(su, static_cast<float>(dy), fu0);
        const float b = fmaf(sv, static_cast<float>(dy), fv0);
        const float fa = floorf(a), fb = floorf(b);
        iu = iu0 + static_cast<int>(fa);
        iv = iv0 + static_cast<int>(fb);
        tu = a - fa;
        tv = b - fb;
    }
    __device__ __forceinline__ double u(int dy) const { return ub + m1 * dy; }
    __device__ __forceinline__ double v(int dy) const { return vb + m4 * dy; }
};

}  // namespace upres::cuda::detail
