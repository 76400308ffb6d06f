// Device helpers shared by the CUDA warp kernels (warp_cuda_kernels.cuh, warp_fused_cuda.cu):
// schedule decisions only; every formula comes from warp_math.hpp.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>

#include "core/cuda_check.hpp"
#include "ops/warp/warp_backends.hpp"
#include "ops/warp/warp_schedule.hpp"

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

// An Affine / Resize map with m1 = m3 = 0 (every resize; scales, shifts, flips): u depends on x
// only and v on y only. warp_cuda_kernels.cuh runs such maps on the separable kernel, and
// warp_fused_cuda.cu leaves them to it (warp_rec_preferred).
inline bool axis_aligned(const WarpPlan& p) { return warp_schedule::axis_aligned(p); }

// A non-finite field entry (a, b) of output (x, y): reports it into p.field_bad (if set) as
// (2 (y w + x) + c) * 2 + nan, c the first non-finite channel and nan whether that value is a
// NaN; the smallest code wins, i.e. the first non-finite value in row-major order (decoded by
// warp.cpp). Every kernel that reads a field reads each output's entry through input_point (the
// split kernels send non-finite entries to warp_one), so every such output reports.
static __device__ __noinline__ void report_nonfinite(const WarpPlan& p, int x, int y, float a,
                                                     float b) {
    if (p.field_bad == nullptr) return;
    const int c = isfinite(a) ? 1 : 0;
    const unsigned long long i = (static_cast<unsigned long long>(y) * p.field.width + x) * 2 + c;
    atomicMin(p.field_bad, i * 2 + (isnan(c == 0 ? a : b) ? 1 : 0));
}

// Input coordinate of output (x, y) in the source span (pad included), as ref/cpu.
__device__ __forceinline__ void input_point(const WarpPlan& p, const double m[9], int x, int y,
                                            double& u, double& v) {
    if (p.kind == Transform::Kind::Remap || p.kind == Transform::Kind::Flow) {
        const float* f = p.field.row(y) + 2 * x;
        const float a = __ldg(f), b = __ldg(f + 1);
        if (!(isfinite(a) && isfinite(b))) report_nonfinite(p, x, y, a, b);
        const bool flow = p.kind == Transform::Kind::Flow;
        u = (flow ? x : 0) + static_cast<double>(a);
        v = (flow ? y : 0) + static_cast<double>(b);
    } else {
        map_matrix_host_rounding(m, p.kind, x, y, u, v);
    }
    u += p.pad;
    v += p.pad;
}

// Affine / Resize coordinates of one thread's outputs (x, y + dy): u = m0 x + m1 y + m2 (+ pad)
// evaluated once in double and split into an integer and a float fraction; the outputs below
// add m1 dy, m4 dy in float (|dy| < 32: error ~1e-6 pixel), so weights keep float precision
// whatever the image size, with no double arithmetic per output (warp_affine_kernel).
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
};

// ---------------------------------------------------------------- tiled affine schedule
// Shared by warp_tile_lean_kernel (warp_cuda_kernels.cuh) and the fused FIR + B-spline kernel
// (warp_fused_cuda.cu). A block computes a kTileOut x kTileOut output tile of an Affine / Resize
// map. Its input footprint is the bounding box of the tile's coordinates (an affine map sends the
// tile to a parallelogram, so the box follows from the origin and the matrix), widened by the
// interpolation taps and a margin of one sample on each side for the float rounding below. The
// block stages that box in shared memory and every output interpolates from there with no
// border logic: for Mirror, Reflect and Wrap, interpolating the border-extended samples at the
// unmapped coordinate is the border rule of warp_math.hpp (map_coord reflects / wraps the
// coordinate about the same centres the tap extension is symmetric about, and the kernels are
// even), and Constant differs only by its fill test, done per output; Nearest clamps the
// coordinate first (map_coord), then the taps use the clamped extension.
// Coordinates: the tile origin in double with the host's roundings, then per output in float
// relative to the box (|value| < ~300 in the accepted boxes: error ~1e-5 pixel).
constexpr int kTileOut = 32;   // output tile side (blocks of 32 x 8 threads, 4 outputs each)
constexpr int kMaxSpan = 256;  // largest box side (samples) a tiled block accepts

struct TileBox {
    int xa, ya;      // first sample of the box (may be negative or beyond the image)
    int rw, rh;      // box size in samples
    float lu0, lv0;  // coordinate of the tile origin relative to (xa, ya)
};

// The box of samples that coordinates u in [u_lo, u_hi], v in [v_lo, v_hi] read: from `before`
// samples before floor(u_lo) to `after` samples after floor(u_hi) (the taps' margins), v
// likewise. clamp: the coordinates are first clamped to [0, n_w - 1] x [0, n_h - 1] (Nearest,
// as map_coord does). Sets b.xa, b.ya, b.rw and b.rh. The one box rule of the tiled kernels.
__device__ __forceinline__ void coord_box(double u_lo, double u_hi, double v_lo, double v_hi,
                                          bool clamp, int n_w, int n_h, int before, int after,
                                          TileBox& b) {
    if (clamp) {
        u_lo = fmin(fmax(u_lo, 0.0), n_w - 1.0), u_hi = fmin(fmax(u_hi, 0.0), n_w - 1.0);
        v_lo = fmin(fmax(v_lo, 0.0), n_h - 1.0), v_hi = fmin(fmax(v_hi, 0.0), n_h - 1.0);
    }
    b.xa = static_cast<int>(floor(u_lo)) - before;
    b.ya = static_cast<int>(floor(v_lo)) - before;
    b.rw = static_cast<int>(floor(u_hi)) + after - b.xa + 1;
    b.rh = static_cast<int>(floor(v_hi)) + after - b.ya + 1;
}

// Box of the tile at output (x0, y0) for interpolation taps `taps` (2 or 4) and `halo` extra
// samples on each side (the fused kernel's FIR radius). n_w x n_h: the sample domain the
// coordinates refer to (pad included). False for non-finite or huge coordinates.
__device__ __forceinline__ bool tile_box(const WarpPlan& p, int x0, int y0, int taps, int halo,
                                         int n_w, int n_h, TileBox& b) {
    double ub, vb;
    map_matrix_host_rounding(p.m, p.kind, x0, y0, ub, vb);
    ub += p.pad;
    vb += p.pad;
    const double e = kTileOut - 1;
    const double u_lo = ub + fmin(0.0, p.m[0] * e) + fmin(0.0, p.m[1] * e);
    const double u_hi = ub + fmax(0.0, p.m[0] * e) + fmax(0.0, p.m[1] * e);
    const double v_lo = vb + fmin(0.0, p.m[3] * e) + fmin(0.0, p.m[4] * e);
    const double v_hi = vb + fmax(0.0, p.m[3] * e) + fmax(0.0, p.m[4] * e);
    if (!(fabs(u_lo) < 1e7 && fabs(u_hi) < 1e7 && fabs(v_lo) < 1e7 && fabs(v_hi) < 1e7))
        return false;  // also NaN
    const int before = (taps == 4 ? 1 : 0) + 1 + halo, after = taps / 2 + 1 + halo;
    coord_box(u_lo, u_hi, v_lo, v_hi, p.border == Border::Nearest, n_w, n_h, before, after, b);
    b.lu0 = static_cast<float>(ub - b.xa);
    b.lv0 = static_cast<float>(vb - b.ya);
    return true;
}

// The coordinates of a Perspective plan inside one tile, relative to its box (b.xa, b.ya):
// for the output at (x0 + dx, y0 + dy), lu = (n0u + au dx + bu dy) / (w0 + aw dx + bw dy) and
// lv likewise: the homography's numerators and denominator about the tile origin, with the box
// offset folded in (u + pad - xa = (U + (pad - xa) W) / W). In float: the terms are at most the
// box size and the tile size, so lu is within ~5e-6 sample of the double value (as tile_coord's
// float steps of the affine tiles).
struct PerspTile {
    float n0u, au, bu, n0v, av, bv, w0, aw, bw;
    __device__ __forceinline__ void at(int dx, int dy, float& lu, float& lv) const {
        const float fx = static_cast<float>(dx), fy = static_cast<float>(dy);
        const float r = __frcp_rn(fmaf(aw, fx, fmaf(bw, fy, w0)));
        lu = fmaf(au, fx, fmaf(bu, fy, n0u)) * r;
        lv = fmaf(av, fx, fmaf(bv, fy, n0v)) * r;
    }
};

// Box of the tile at output (x0, y0) of a Perspective plan whose w' has one sign on the whole
// dst_w x dst_h output (launch_lean checks it on the host): the bounding box of the coordinates
// of the tile's 4 corners (clipped to the output), the image of the tile being the convex
// quadrilateral they span; before / after: the taps' margins (lean_grid's), which also cover the
// roundings of the reciprocal. Lanes l, l ^ 1, l ^ 2, l ^ 3 of every warp compute one corner
// each and exchange them (call with all 32 lanes). Also the tile's PerspTile. False for
// non-finite or huge coordinates (the same in every thread of the block).
__device__ __forceinline__ bool persp_tile_box(const WarpPlan& p, int x0, int y0, int dst_w,
                                               int dst_h, int before, int after, bool clamp,
                                               int n_w, int n_h, TileBox& b, PerspTile& t) {
    const int c = threadIdx.x & 3;
    const double xd = c & 1 ? min(x0 + kTileOut - 1, dst_w - 1) : x0;
    const double yd = c & 2 ? min(y0 + kTileOut - 1, dst_h - 1) : y0;
    const double rw = 1.0 / fma(p.m[6], xd, fma(p.m[7], yd, p.m[8]));
    const double u = fma(fma(p.m[0], xd, fma(p.m[1], yd, p.m[2])), rw, p.pad);
    const double v = fma(fma(p.m[3], xd, fma(p.m[4], yd, p.m[5])), rw, p.pad);
    int ok = fabs(u) < 1e7 && fabs(v) < 1e7;  // 0 for NaN
    double u_lo = u, u_hi = u, v_lo = v, v_hi = v;
#pragma unroll
    for (int o = 1; o <= 2; o <<= 1) {
        u_lo = fmin(u_lo, __shfl_xor_sync(0xffffffffu, u_lo, o));
        u_hi = fmax(u_hi, __shfl_xor_sync(0xffffffffu, u_hi, o));
        v_lo = fmin(v_lo, __shfl_xor_sync(0xffffffffu, v_lo, o));
        v_hi = fmax(v_hi, __shfl_xor_sync(0xffffffffu, v_hi, o));
        ok &= __shfl_xor_sync(0xffffffffu, ok, o);
    }
    if (!ok) return false;
    coord_box(u_lo, u_hi, v_lo, v_hi, clamp, n_w, n_h, before, after, b);
    b.lu0 = b.lv0 = 0.0f;  // PerspTile gives lu relative to this xa; lu0: a later shift of xa
    const double X = x0, Y = y0, su = p.pad - b.xa, sv = p.pad - b.ya;
    const double w0 = fma(p.m[6], X, fma(p.m[7], Y, p.m[8]));
    t.n0u = static_cast<float>(fma(su, w0, fma(p.m[0], X, fma(p.m[1], Y, p.m[2]))));
    t.n0v = static_cast<float>(fma(sv, w0, fma(p.m[3], X, fma(p.m[4], Y, p.m[5]))));
    t.au = static_cast<float>(fma(su, p.m[6], p.m[0]));
    t.bu = static_cast<float>(fma(su, p.m[7], p.m[1]));
    t.av = static_cast<float>(fma(sv, p.m[6], p.m[3]));
    t.bv = static_cast<float>(fma(sv, p.m[7], p.m[4]));
    t.w0 = static_cast<float>(w0);
    t.aw = static_cast<float>(p.m[6]);
    t.bw = static_cast<float>(p.m[7]);
    return true;
}

// Per-plan constants of `tile` x `tile` output tiles (computed on the host): the tile of block
// (bx, by) has its origin at u = u0 + bx dux + by duy (v likewise) and its outputs' coordinates
// span [u + ulo, u + uhi] (the box of the tiled kernels adds the taps' margins to that).
struct TileGrid {
    double u0, dux, duy, v0, dvx, dvy;
    double ulo, uhi, vlo, vhi;
};

// False when some tile's coordinates are non-finite or beyond 1e7 (the tiled kernels then do
// not run; the per-output or two-pass paths handle such plans).
inline bool tile_grid(const WarpPlan& p, int tile, int dst_w, int dst_h, TileGrid& g) {
    const double e = tile - 1;
    g.u0 = p.m[2] + p.pad, g.dux = tile * p.m[0], g.duy = tile * p.m[1];
    g.v0 = p.m[5] + p.pad, g.dvx = tile * p.m[3], g.dvy = tile * p.m[4];
    g.ulo = std::min(0.0, p.m[0] * e) + std::min(0.0, p.m[1] * e);
    g.uhi = std::max(0.0, p.m[0] * e) + std::max(0.0, p.m[1] * e);
    g.vlo = std::min(0.0, p.m[3] * e) + std::min(0.0, p.m[4] * e);
    g.vhi = std::max(0.0, p.m[3] * e) + std::max(0.0, p.m[4] * e);
    const double bx = (dst_w - 1) / tile, by = (dst_h - 1) / tile;
    for (double cx : {0.0, bx})
        for (double cy : {0.0, by}) {
            const double u = g.u0 + cx * g.dux + cy * g.duy, v = g.v0 + cx * g.dvx + cy * g.dvy;
            for (double c : {u + g.ulo, u + g.uhi, v + g.vlo, v + g.vhi})
                if (!(std::abs(c) < 1e7)) return false;
        }
    return true;
}

// Host side of the tiled perspective schedule. False unless w' has one sign at the 4 corners of
// the dst_w x dst_h output (so on all of it) and their coordinates are finite and below 1e7.
// Otherwise estimates the largest tile box (rw x rh samples, with the taps' margins) from the
// map's Jacobian sampled on a 9 x 9 grid of the output, with 10% and 2 samples to spare; a tile
// whose box is larger takes the kernel's per-output fallback (correct, slower). model[0..5]: the
// Jacobian at the output's centre, as an affine map for the bank-conflict model (bank_pitch).
inline bool persp_box_estimate(const WarpPlan& p, int taps, int dst_w, int dst_h, int& rw, int& rh,
                               double model[9]) {
    const double* m = p.m;
    int pos = 0, neg = 0;
    for (double x : {0.0, dst_w - 1.0})
        for (double y : {0.0, dst_h - 1.0}) {
            const double w = m[6] * x + m[7] * y + m[8];
            pos += w > 0.0;
            neg += w < 0.0;
            const double u = (m[0] * x + m[1] * y + m[2]) / w, v = (m[3] * x + m[4] * y + m[5]) / w;
            if (!(std::abs(u) < 1e7 && std::abs(v) < 1e7)) return false;
        }
    if (pos != 4 && neg != 4) return false;
    double ex = 0.0, ey = 0.0;
    for (int i = 0; i <= 8; ++i)
        for (int j = 0; j <= 8; ++j) {
            const double x = (dst_w - 1.0) * i / 8, y = (dst_h - 1.0) * j / 8;
            const double w = m[6] * x + m[7] * y + m[8];
            const double u = (m[0] * x + m[1] * y + m[2]) / w, v = (m[3] * x + m[4] * y + m[5]) / w;
            const double ux = (m[0] - u * m[6]) / w, uy = (m[1] - u * m[7]) / w;
            const double vx = (m[3] - v * m[6]) / w, vy = (m[4] - v * m[7]) / w;
            ex = std::max(ex, std::abs(ux) + std::abs(uy));
            ey = std::max(ey, std::abs(vx) + std::abs(vy));
            if (i == 4 && j == 4) model[0] = ux, model[1] = uy, model[3] = vx, model[4] = vy;
        }
    ex *= 1.1 * (kTileOut - 1);
    ey *= 1.1 * (kTileOut - 1);
    if (!(ex < 4.0 * kMaxSpan && ey < 4.0 * kMaxSpan)) return false;
    const int extra = 1 + taps + 2 + 2;  // floor slack, taps, margins, rounding
    rw = static_cast<int>(std::ceil(ex)) + extra;
    rh = static_cast<int>(std::ceil(ey)) + extra;
    return rw <= kMaxSpan && rh <= kMaxSpan;
}

// Raises `kernel`'s dynamic shared-memory limit to `bytes` (and, with max_carveout, asks for
// the largest shared-memory carveout) once per device: a per-launch call costs host time and
// may serialize. `configured` is the caller's per-kernel set of devices already done.
template <class K>
void set_smem_limit_once(K* kernel, int bytes, bool max_carveout,
                         std::atomic<unsigned long long>& configured) {
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    const unsigned long long bit = 1ull << (dev & 63);
    if (configured.load() & bit) return;
    UPRES_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    if (max_carveout)
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(kernel,
                                              cudaFuncAttributePreferredSharedMemoryCarveout,
                                              cudaSharedmemCarveoutMaxShared));
    configured.fetch_or(bit);
}

// Blocks of `bytes` dynamic shared memory that fit on one SM of the current device (its shared
// memory per SM over bytes plus the driver's reserve per block), read once per device.
inline int smem_blocks_per_sm(std::size_t bytes) {
    struct Dev {
        int per_sm = 0, reserved = 0;
    };
    static Dev devs[64];
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    Dev& d = devs[dev & 63];
    if (d.per_sm == 0) {
        int reserved = 0, per_sm = 0;
        UPRES_CUDA_CHECK(
            cudaDeviceGetAttribute(&reserved, cudaDevAttrReservedSharedMemoryPerBlock, dev));
        UPRES_CUDA_CHECK(
            cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev));
        d.reserved = reserved;
        d.per_sm = per_sm;  // written last: a racing reader sees 0 and queries again
    }
    return static_cast<int>(static_cast<std::size_t>(d.per_sm) / (bytes + d.reserved));
}

// Host bound of TileBox::rw / rh over all tiles of an Affine / Resize plan (false otherwise).
inline bool tile_box_bound(const WarpPlan& p, int taps, int halo, int& rw, int& rh) {
    if (p.kind != Transform::Kind::Affine && p.kind != Transform::Kind::Resize) return false;
    const double ex = (std::abs(p.m[0]) + std::abs(p.m[1])) * (kTileOut - 1);
    const double ey = (std::abs(p.m[3]) + std::abs(p.m[4])) * (kTileOut - 1);
    if (!(ex < 4.0 * kMaxSpan && ey < 4.0 * kMaxSpan)) return false;
    const int extra = 1 + taps + 2 + 2 * halo + 2;  // floor slack, taps, margins, rounding
    rw = static_cast<int>(std::ceil(ex)) + extra;
    rh = static_cast<int>(std::ceil(ey)) + extra;
    return rw <= kMaxSpan && rh <= kMaxSpan;
}

// The bank-conflict models' sample (bank_pitch, rec_pitch): the first-tap offsets, in floats
// for a row pitch and C channels, of a warp's 32 lanes on consecutive outputs (box steps m0, m3)
// from sub-pixel origin o of 16.
inline void model_first_taps(const WarpPlan& p, int o, int pitch, int C, long long (&a)[32],
                             int lanes_x = 32) {
    const double u0 = 100.0 + (o % 4) / 4.0 + 0.03, v0 = 100.0 + (o / 4) / 4.0 + 0.07;
    for (int l = 0; l < 32; ++l) {
        const int i = l % lanes_x, j = l / lanes_x;
        a[l] = static_cast<long long>(std::floor(v0 + p.m[3] * i + p.m[4] * j)) * pitch +
               static_cast<long long>(std::floor(u0 + p.m[0] * i + p.m[1] * j)) * C;
    }
}

// Row pitch (floats) of a box staged in shared memory: among the 8 pitches first + k step, the one
// with the fewest bank conflicts of a warp's tap loads (C channels interleaved): the warp's 32
// outputs step (m0, m3) in the source; averaged over 16 sub-pixel offsets, the largest number of
// distinct addresses that share a bank (C = 4: pixels read as one 16-byte load, counted per
// quarter-warp over groups of 4 banks, summed over the 4 quarters). ~20 us of host time, so the
// last results are kept per host thread. The lean kernel asks for multiples of 4 (float4 staging);
// the recursive fused kernel has its own search (rec_pitch: odd pitches, and 8-byte tap reads
// modelled too).
inline int bank_pitch(const WarpPlan& p, int first, int step, int C) {
    struct Entry {
        double m0, m3;
        int first, step, C, pitch;
    };
    thread_local Entry cache[8];
    thread_local int next = 0;
    for (const Entry& e : cache)
        if (e.pitch && e.m0 == p.m[0] && e.m3 == p.m[3] && e.first == first && e.step == step &&
            e.C == C)
            return e.pitch;
    int best = first;
    double best_cost = 1e30;
    for (int cand = first; cand < first + 8 * step; cand += step) {
        double cost = 0;
        for (int o = 0; o < 16; ++o) {
            long long addr[32];
            model_first_taps(p, o, cand, C, addr);
            if (C == 4) {
                // 16-byte loads: served a quarter-warp at a time, 8 lanes over 8 groups of 4 banks.
                for (int q = 0; q < 4; ++q) {
                    long long* a = addr + 8 * q;
                    std::sort(a, a + 8);
                    int count[8] = {};
                    for (int l = 0; l < 8; ++l)
                        if (l == 0 || a[l] != a[l - 1]) ++count[((a[l] / 4 % 8) + 8) % 8];
                    cost += *std::max_element(count, count + 8);
                }
                continue;
            }
            std::sort(addr, addr + 32);
            int count[32] = {};
            for (int l = 0; l < 32; ++l)
                if (l == 0 || addr[l] != addr[l - 1]) ++count[((addr[l] % 32) + 32) % 32];
            cost += *std::max_element(count, count + 32);
        }
        if (cost < best_cost) best_cost = cost, best = cand;
    }
    cache[next] = Entry{p.m[0], p.m[3], first, step, C, best};
    next = (next + 1) % 8;
    return best;
}

// Box-relative coordinate (lu, lv) of output (x0 + dx, y0 + dy).
__device__ __forceinline__ void tile_coord(const WarpPlan& p, const TileBox& b, int dx, int dy,
                                           float& lu, float& lv) {
    const float fx = static_cast<float>(dx), fy = static_cast<float>(dy);
    lu = fmaf(static_cast<float>(p.m[0]), fx, fmaf(static_cast<float>(p.m[1]), fy, b.lu0));
    lv = fmaf(static_cast<float>(p.m[3]), fx, fmaf(static_cast<float>(p.m[4]), fy, b.lv0));
}

// Border::Constant's fill test (map_coord: outside [0, n - 1]) for output (x, y): decided on the
// float coordinate where it is clearly inside or outside, else on the exact double coordinate
// (identity-like maps put coordinates exactly on the edge).
__device__ __forceinline__ bool constant_outside(const WarpPlan& p, const TileBox& b, float lu,
                                                 float lv, int x, int y, int n_w, int n_h) {
    const float u = lu + static_cast<float>(b.xa), v = lv + static_cast<float>(b.ya);
    const float lw = static_cast<float>(n_w - 1), lh = static_cast<float>(n_h - 1);
    constexpr float eps = 1e-2f;
    const bool clear_in = u > eps && u < lw - eps && v > eps && v < lh - eps;
    if (clear_in) return false;
    const bool clear_out = u < -eps || u > lw + eps || v < -eps || v > lh + eps;
    if (clear_out) return true;
    double ud, vd;
    map_matrix_host_rounding(p.m, p.kind, x, y, ud, vd);
    ud += p.pad;
    vd += p.pad;
    return !(ud >= 0.0 && ud <= n_w - 1.0 && vd >= 0.0 && vd <= n_h - 1.0);
}

// Interpolation of C channels at the box-relative coordinate (lu, lv) from samples staged in
// shared memory: sample (i, j) channel c at s[j * pitch + i * C + c] (4 channels: each tap one
// 16-byte load, so s must be 16-byte aligned and pitch a multiple of 4). Taps and weights of
// warp_math.hpp, rows summed first then columns (as sample_point). The first tap is clamped into
// the box (a no-op up to float rounding, guards the shared-memory bounds); with kClampTaps each
// tap is also clamped to [cx_lo, cx_hi] x [cy_lo, cy_hi] (Border::Nearest's tap extension when
// the staged samples are not already extended).
template <int C, Interp I, bool kClampTaps = false>
__device__ __forceinline__ void tile_interp(const float* s, int pitch, int rw, int rh, float lu,
                                            float lv, float a, float out[C], int cx_lo = 0,
                                            int cx_hi = 0, int cy_lo = 0, int cy_hi = 0) {
    constexpr int K = kTaps<I>;
    static_assert(K == 2 || K == 4, "tile_interp: linear or 4-tap kernels");
    const float fu = floorf(lu), fv = floorf(lv);
    float wx[4], wy[4];
    interp_weights<float>(lu - fu, I, a, wx);
    interp_weights<float>(lv - fv, I, a, wy);
    int ix = static_cast<int>(fu) - (K == 4 ? 1 : 0);
    int iy = static_cast<int>(fv) - (K == 4 ? 1 : 0);
    ix = min(max(ix, 0), rw - K);
    iy = min(max(iy, 0), rh - K);
    int cx[K], cy[K];
#pragma unroll
    for (int k = 0; k < K; ++k) {
        cx[k] = kClampTaps ? min(max(ix + k, cx_lo), cx_hi) : ix + k;
        cy[k] = kClampTaps ? min(max(iy + k, cy_lo), cy_hi) : iy + k;
    }
#pragma unroll
    for (int c = 0; c < C; ++c) out[c] = 0.0f;
#pragma unroll
    for (int j = 0; j < K; ++j) {
        const float* r = s + cy[j] * pitch;
        float racc[C];
#pragma unroll
        for (int c = 0; c < C; ++c) racc[c] = 0.0f;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            float v[C];
            if constexpr (C == 4) {
                const float4 q = *reinterpret_cast<const float4*>(r + cx[k] * 4);
                v[0] = q.x, v[1] = q.y, v[2] = q.z, v[3] = q.w;
            } else {
#pragma unroll
                for (int c = 0; c < C; ++c) v[c] = r[cx[k] * C + c];
            }
#pragma unroll
            for (int c = 0; c < C; ++c) racc[c] += wx[k] * v[c];
        }
#pragma unroll
        for (int c = 0; c < C; ++c) out[c] += wy[j] * racc[c];
    }
}

}  // namespace upres::cuda::detail
