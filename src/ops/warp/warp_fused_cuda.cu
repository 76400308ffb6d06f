// Fused FIR prefilter + cubic B-spline interpolation (see warp_cuda.hpp): one kernel, one pass
// over the image. A schedule of bspline_math.hpp (taps, border extension) and warp_math.hpp
// (coordinate map, border rule, weights); no formula of its own.
//
// Per block (32 x 8 threads, a 32 x 32 output tile; channels one after the other):
//  1. each thread maps its 4 outputs to the source (one double evaluation split into integer +
//     float fraction, SplitAffine), splits them into interior ones (taps inside, no mapping) and
//     border ones (map_coord + tap_index in float, as sample_point<float>, out of line), and the
//     block reduces the range [lo, hi] of coefficient indices that the taps touch (after
//     tap_index: inside the coefficient image);
//  2. the input rows/columns [lo - KB, hi + KB] are gathered into shared memory through the
//     prefilter's border extension (bspline::prefilter_index; for Border::Nearest the virtual
//     image padded by plan.pad edge samples, extended by Mirror, as warp.cpp's padded prefilter);
//  3. row FIR in shared memory (4 consecutive outputs per thread, 16-byte loads of a register
//     window), then column FIR (4 consecutive rows per thread), both with the renormalised taps
//     of bspline::fir_taps, zero-padded to the compile-time radius KB >= K (exact zeros change
//     nothing);
//  4. B-spline interpolation from the coefficients in shared memory, rows first then columns as
//     sample_point.
// A tile whose footprint does not fit the shared memory given at launch (never for the plans
// warp_fused_supported() accepts, kept for safety) computes its coefficients directly from
// global memory, slowly but with the same formula.
// Measured on an H200 (docs/ops/warp.md section 9): 2048^2 rotation 0.20 ms, 2x slower than
// prefilter + cuda::warp (ncu: ~570 instructions per output, 128 registers, 25% occupancy), so
// warp.cpp does not select it (warp_fused_preferred() is false).
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>

#include "core/convert_math.hpp"
#include "core/cuda_check.hpp"
#include "ops/bspline/bspline_math.hpp"
#include "ops/warp/warp_cuda.hpp"
#include "ops/warp/warp_cuda_util.cuh"

namespace upres::cuda {

namespace {

using namespace detail;

constexpr int kTile = 32;  // output tile: kTile x kTile, blocks of kTile x kRows threads
constexpr int kRows = 8;
constexpr int kPer = kTile / kRows;        // outputs per thread
constexpr int kP = 4;                      // FIR outputs per thread (shared-memory passes)
constexpr int kMaxSmemBytes = 112 * 1024;  // 2 blocks per SM at the largest accepted footprint

struct FusedParams {
    WarpPlan p;
    int n_w, n_h;  // coefficient domain (source + 2 pad)
    int src_w, src_h;
    int cap_floats;                              // dynamic shared memory given at launch
    float taps[2 * bspline::kMaxFirRadius + 1];  // taps[KB + k], k in [-KB, KB], zero beyond K
};

constexpr int round4(int v) { return (v + 3) & ~3; }

// Shared-memory layout of a region of rw x rh coefficients for radius KB.
struct Layout {
    int rwq, rwp, rhq, rhp, iwp, ihp;
    __host__ __device__ static Layout make(int rw, int rh, int kb) {
        Layout l;
        l.rwq = (rw + kP - 1) / kP;
        l.rwp = kP * l.rwq;
        l.rhq = (rh + kP - 1) / kP;
        l.rhp = kP * l.rhq;
        l.iwp = l.rwp - kP + round4(kP + 2 * kb);
        l.ihp = l.rhp + 2 * kb;
        return l;
    }
    __host__ __device__ int floats() const { return ihp * iwp + ihp * rwp; }
};

// Source index (into the original image) of coefficient-domain sample i (any integer), through
// the prefilter's extension.
__device__ __forceinline__ int fetch_index(int i, int n, int n_src, int pad, Border border) {
    if (pad == 0) return bspline::prefilter_index(i, n, tap_border(border));
    const int j = border_index(i, n, Border::Mirror) - pad;  // padded image, Mirror
    return j < 0 ? 0 : (j >= n_src ? n_src - 1 : j);         // edge replication
}

struct OutPoint {
    int bx, by;    // first tap (before tap_index when mapped)
    float tx, ty;  // fractional parts
    bool valid, mapped;
};

__device__ __forceinline__ int tap_at(const OutPoint& o, int k, bool xaxis, int n, Border b) {
    const int t = (xaxis ? o.bx : o.by) + k;
    return o.mapped ? tap_index(t, n, b) : t;
}

// Cold paths (outputs whose taps cross the border, oversized tiles) are kept out of line so that
// the compiler cannot merge them into the hot path (if-conversion would make every output pay
// for tap_index's integer divisions).

// (min, max) of tap_index(b + k), k = 0..3.
__device__ __noinline__ int2 mapped_range(int b, int n, Border border) {
    int lo = INT_MAX, hi = INT_MIN;
    for (int k = 0; k < 4; ++k) {
        const int t = tap_index(b + k, n, border);
        lo = min(lo, t), hi = max(hi, t);
    }
    return make_int2(lo, hi);
}

// B-spline interpolation of a border output from the coefficient tile (same order as
// sample_point: rows first, then columns).
__device__ __noinline__ float interp_mapped(const float* coef, int pitch, int bx, int by, float tx,
                                            float ty, int n_w, int n_h, Border border, int lox,
                                            int loy) {
    float wx[4], wy[4];
    interp_weights<float>(tx, Interp::BSpline, 0.0f, wx);
    interp_weights<float>(ty, Interp::BSpline, 0.0f, wy);
    int ix[4];
    for (int k = 0; k < 4; ++k) ix[k] = tap_index(bx + k, n_w, border) - lox;
    float acc = 0.0f;
    for (int j = 0; j < 4; ++j) {
        const float* crow = coef + (tap_index(by + j, n_h, border) - loy) * pitch;
        float racc = 0.0f;
        for (int k = 0; k < 4; ++k) racc += wx[k] * crow[ix[k]];
        acc += wy[j] * racc;
    }
    return acc;
}

__device__ __forceinline__ int warp_min(int v) { return __reduce_min_sync(0xffffffffu, v); }
__device__ __forceinline__ int warp_max(int v) { return __reduce_max_sync(0xffffffffu, v); }

// Coefficient (mx, my) of channel c straight from global memory (fallback of oversized tiles).
template <class S, int KB>
__device__ __noinline__ float direct_coeff(Span2D<const S> src, const FusedParams& fp, int mx,
                                           int my, int c) {
    float col = 0.0f;
    for (int ky = -KB; ky <= KB; ++ky) {
        const int ry = fetch_index(my + ky, fp.n_h, fp.src_h, fp.p.pad, fp.p.border);
        const S* row = src.row(ry);
        float acc = 0.0f;
        for (int kx = -KB; kx <= KB; ++kx) {
            const int rx = fetch_index(mx + kx, fp.n_w, fp.src_w, fp.p.pad, fp.p.border);
            acc += fp.taps[KB + kx] * static_cast<float>(__ldg(row + rx * src.channels + c));
        }
        col += fp.taps[KB + ky] * acc;
    }
    return col;
}

template <class S, class D, int KB>
__global__ void __launch_bounds__(kTile* kRows)
    fused_kernel(Span2D<const S> src, Span2D<D> dst, FusedParams fp) {
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);
    __shared__ int red[4][kRows];

    const WarpPlan& p = fp.p;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
    const int x = blockIdx.x * kTile + tx;
    const int C = src.channels;
    double m[9];
#pragma unroll
    for (int i = 0; i < 9; ++i) m[i] = p.m[i];

    // 1. coordinates and the coefficient range of the tile
    OutPoint o[kPer];
    int lox = INT_MAX, hix = INT_MIN, loy = INT_MAX, hiy = INT_MIN;
    SplitAffine sa;
    const bool split = x < dst.width && sa.init(p, m, x, blockIdx.y * kTile + ty);
#pragma unroll
    for (int r = 0; r < kPer; ++r) {
        const int y = blockIdx.y * kTile + ty + r * kRows;
        o[r].valid = false;
        o[r].mapped = false;
        o[r].bx = o[r].by = 0;
        o[r].tx = o[r].ty = 0.0f;
        if (x >= dst.width || y >= dst.height) continue;
        double u, v;
        int iu = 0, iv = 0;
        float tu = 0.0f, tv = 0.0f;
        if (split) {
            sa.at(r * kRows, iu, tu, iv, tv);
            u = sa.u(r * kRows);
            v = sa.v(r * kRows);
        } else {
            input_point(p, m, x, y, u, v);
        }
        if (split && interior_split<Interp::BSpline>(iu, fp.n_w) &&
            interior_split<Interp::BSpline>(iv, fp.n_h)) {
            o[r].bx = iu - 1;
            o[r].by = iv - 1;
            o[r].tx = tu;
            o[r].ty = tv;
            o[r].valid = true;
        } else if (!split && interior<Interp::BSpline>(u, fp.n_w) &&
                   interior<Interp::BSpline>(v, fp.n_h)) {
            const double fx = floor(u), fy = floor(v);
            o[r].bx = static_cast<int>(fx) - 1;
            o[r].by = static_cast<int>(fy) - 1;
            o[r].tx = static_cast<float>(u - fx);
            o[r].ty = static_cast<float>(v - fy);
            o[r].valid = true;
        } else {
            float uf = static_cast<float>(u), vf = static_cast<float>(v);
            if (map_coord(uf, fp.n_w, p.border) && map_coord(vf, fp.n_h, p.border)) {
                o[r].bx = static_cast<int>(first_tap(uf, Interp::BSpline));
                o[r].by = static_cast<int>(first_tap(vf, Interp::BSpline));
                o[r].tx = uf - floorf(uf);
                o[r].ty = vf - floorf(vf);
                o[r].valid = true;
                o[r].mapped = true;
            }
        }
        if (!o[r].valid) continue;
        if (o[r].mapped) {
            const int2 rx = mapped_range(o[r].bx, fp.n_w, p.border);
            const int2 ry = mapped_range(o[r].by, fp.n_h, p.border);
            lox = min(lox, rx.x), hix = max(hix, rx.y);
            loy = min(loy, ry.x), hiy = max(hiy, ry.y);
        } else {
            lox = min(lox, o[r].bx), hix = max(hix, o[r].bx + 3);
            loy = min(loy, o[r].by), hiy = max(hiy, o[r].by + 3);
        }
    }
    lox = warp_min(lox), hix = warp_max(hix), loy = warp_min(loy), hiy = warp_max(hiy);
    if (tx == 0) red[0][ty] = lox, red[1][ty] = hix, red[2][ty] = loy, red[3][ty] = hiy;
    __syncthreads();
    lox = red[0][0], hix = red[1][0], loy = red[2][0], hiy = red[3][0];
#pragma unroll
    for (int w = 1; w < kRows; ++w) {
        lox = min(lox, red[0][w]), hix = max(hix, red[1][w]);
        loy = min(loy, red[2][w]), hiy = max(hiy, red[3][w]);
    }
    const D fill = saturate_from_float<D>(p.fill);
    auto store_fill = [&](int r) {
        const int y = blockIdx.y * kTile + ty + r * kRows;
        if (x < dst.width && y < dst.height)
            for (int c = 0; c < C; ++c) dst.row(y)[x * C + c] = fill;
    };
    if (lox > hix) {  // every output of the tile is the fill value
#pragma unroll
        for (int r = 0; r < kPer; ++r) store_fill(r);
        return;
    }
    const Layout L = Layout::make(hix - lox + 1, hiy - loy + 1, KB);
    if (L.floats() > fp.cap_floats) {  // safety net: direct coefficients
#pragma unroll
        for (int r = 0; r < kPer; ++r) {
            const int y = blockIdx.y * kTile + ty + r * kRows;
            if (!o[r].valid) {
                store_fill(r);
                continue;
            }
            float wx[4], wy[4];
            interp_weights<float>(o[r].tx, Interp::BSpline, 0.0f, wx);
            interp_weights<float>(o[r].ty, Interp::BSpline, 0.0f, wy);
            for (int c = 0; c < C; ++c) {
                float acc = 0.0f;
                for (int j = 0; j < 4; ++j) {
                    const int iy = tap_at(o[r], j, false, fp.n_h, p.border);
                    float racc = 0.0f;
                    for (int k = 0; k < 4; ++k)
                        racc +=
                            wx[k] * direct_coeff<S, KB>(
                                        src, fp, tap_at(o[r], k, true, fp.n_w, p.border), iy, c);
                    acc += wy[j] * racc;
                }
                dst.row(y)[x * C + c] = saturate_from_float<D>(acc);
            }
        }
        return;
    }

    float* in = smem;                    // ihp x iwp input, then rhp x rwp coefficients
    float* rows = smem + L.ihp * L.iwp;  // ihp x rwp row-filtered
    const int x0 = lox - KB, y0 = loy - KB;

    // Footprint inside the source on an axis: the extension is the identity there.
    const bool id_x = x0 - p.pad >= 0 && x0 - p.pad + L.iwp <= fp.src_w;
    const bool id_y = y0 - p.pad >= 0 && y0 - p.pad + L.ihp <= fp.src_h;
    for (int c = 0; c < C; ++c) {
        // 2. gather the input footprint (coalesced along x)
        for (int j = ty; j < L.ihp; j += kRows) {
            const S* srow = src.row(id_y ? y0 - p.pad + j
                                         : fetch_index(y0 + j, fp.n_h, fp.src_h, p.pad, p.border));
            if (id_x) {
                const S* s0 = srow + (x0 - p.pad) * C + c;
#pragma unroll 4
                for (int i = tx; i < L.iwp; i += kTile)
                    in[j * L.iwp + i] = static_cast<float>(__ldg(s0 + i * C));
            } else {
                for (int i = tx; i < L.iwp; i += kTile) {
                    const int sx = fetch_index(x0 + i, fp.n_w, fp.src_w, p.pad, p.border);
                    in[j * L.iwp + i] = static_cast<float>(__ldg(srow + sx * C + c));
                }
            }
        }
        __syncthreads();
        // 3a. row FIR: rows[j][i] = sum_k taps[k] in[j][i + k], i in [4q, 4q + 4)
        for (int it = tid; it < L.ihp * L.rwq; it += kTile * kRows) {
            const int j = it / L.rwq, q = it - j * L.rwq;
            constexpr int W = round4(kP + 2 * KB);
            float win[W];
            const float4* src4 = reinterpret_cast<const float4*>(in + j * L.iwp + kP * q);
#pragma unroll
            for (int e = 0; e < W / 4; ++e) {
                const float4 f = src4[e];
                win[4 * e] = f.x, win[4 * e + 1] = f.y, win[4 * e + 2] = f.z, win[4 * e + 3] = f.w;
            }
            float acc[kP];
#pragma unroll
            for (int pp = 0; pp < kP; ++pp) {
                acc[pp] = 0.0f;
#pragma unroll
                for (int k = 0; k <= 2 * KB; ++k) acc[pp] += fp.taps[k] * win[pp + k];
            }
            reinterpret_cast<float4*>(rows + j * L.rwp)[q] =
                make_float4(acc[0], acc[1], acc[2], acc[3]);
        }
        __syncthreads();
        // 3b. column FIR into `in` (pitch rwp): coef[j][i] = sum_k taps[k] rows[j + k][i]
        for (int it = tid; it < L.rhq * L.rwp; it += kTile * kRows) {
            const int s = it / L.rwp, i = it - s * L.rwp;
            constexpr int W = kP + 2 * KB;
            float win[W];
#pragma unroll
            for (int e = 0; e < W; ++e) win[e] = rows[(kP * s + e) * L.rwp + i];
#pragma unroll
            for (int pp = 0; pp < kP; ++pp) {
                float acc = 0.0f;
#pragma unroll
                for (int k = 0; k <= 2 * KB; ++k) acc += fp.taps[k] * win[pp + k];
                in[(kP * s + pp) * L.rwp + i] = acc;
            }
        }
        __syncthreads();
        // 4. interpolation from the coefficients in shared memory
#pragma unroll
        for (int r = 0; r < kPer; ++r) {
            const int y = blockIdx.y * kTile + ty + r * kRows;
            if (x >= dst.width || y >= dst.height) continue;
            if (!o[r].valid) {
                dst.row(y)[x * C + c] = fill;
                continue;
            }
            float acc;
            if (o[r].mapped) {
                acc = interp_mapped(in, L.rwp, o[r].bx, o[r].by, o[r].tx, o[r].ty, fp.n_w, fp.n_h,
                                    p.border, lox, loy);
            } else {  // taps bx .. bx + 3 inside: no index mapping
                float wx[4], wy[4];
                interp_weights<float>(o[r].tx, Interp::BSpline, 0.0f, wx);
                interp_weights<float>(o[r].ty, Interp::BSpline, 0.0f, wy);
                const float* c0 = in + (o[r].by - loy) * L.rwp + (o[r].bx - lox);
                acc = 0.0f;
#pragma unroll
                for (int j = 0; j < 4; ++j) {
                    const float* crow = c0 + j * L.rwp;
                    float racc = 0.0f;
#pragma unroll
                    for (int k = 0; k < 4; ++k) racc += wx[k] * crow[k];
                    acc += wy[j] * racc;
                }
            }
            dst.row(y)[x * C + c] = saturate_from_float<D>(acc);
        }
        __syncthreads();  // `in` is overwritten by the next channel
    }
}

int radius_bucket(int K) {
    if (K <= 3) return 3;
    if (K <= 5) return 5;
    if (K <= 7) return 7;
    if (K <= 11) return 11;
    return 15;
}

// Largest region (coefficients) a 32 x 32 tile of this plan can touch, per axis.
bool region_bound(const WarpPlan& p, int& rw, int& rh) {
    if (p.kind != Transform::Kind::Affine && p.kind != Transform::Kind::Resize) return false;
    const double ex = (std::abs(p.m[0]) + std::abs(p.m[1])) * (kTile - 1);
    const double ey = (std::abs(p.m[3]) + std::abs(p.m[4])) * (kTile - 1);
    if (!(ex < 4096.0 && ey < 4096.0)) return false;
    rw = static_cast<int>(std::ceil(ex)) + 6;  // 4 taps, floor and rounding slack
    rh = static_cast<int>(std::ceil(ey)) + 6;
    return true;
}

int needed_floats(const WarpPlan& p, int fir_length) {
    int rw = 0, rh = 0;
    if (!region_bound(p, rw, rh)) return INT_MAX;
    return Layout::make(rw, rh, radius_bucket((fir_length - 1) / 2)).floats();
}

template <class S, class D, int KB>
void launch_kb(Span2D<const S> src, Span2D<D> dst, FusedParams& fp, cudaStream_t st) {
    const int bytes = fp.cap_floats * static_cast<int>(sizeof(float));
    // The dynamic shared-memory limit is raised once per device (a per-launch call costs host
    // time and may serialize).
    static std::atomic<unsigned long long> configured{0};
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    const unsigned long long bit = 1ull << (dev & 63);
    if (!(configured.load() & bit)) {
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(
            fused_kernel<S, D, KB>, cudaFuncAttributeMaxDynamicSharedMemorySize, kMaxSmemBytes));
        configured.fetch_or(bit);
    }
    const dim3 grid((dst.width + kTile - 1) / kTile, (dst.height + kTile - 1) / kTile);
    fused_kernel<S, D, KB><<<grid, dim3(kTile, kRows), bytes, st>>>(src, dst, fp);
    UPRES_CUDA_CHECK_LAUNCH();
}

template <class S, class D>
void fused(Span2D<const S> src, Span2D<D> dst, const WarpPlan& plan, int fir_length, void* stream) {
    if (dst.width <= 0 || dst.height <= 0) return;
    if (!warp_fused_supported(plan, src.width, src.height, fir_length))
        throw Error(ErrorCode::Internal, "cuda::warp_bspline_fused: plan not supported");
    FusedParams fp{};
    fp.p = plan;
    fp.src_w = src.width;
    fp.src_h = src.height;
    fp.n_w = src.width + 2 * plan.pad;
    fp.n_h = src.height + 2 * plan.pad;
    const int K = (fir_length - 1) / 2, KB = radius_bucket(K);
    double t[bspline::kMaxFirLength];
    bspline::fir_taps(fir_length, t);
    for (int k = -K; k <= K; ++k) fp.taps[KB + k] = static_cast<float>(t[K + k]);
    fp.cap_floats = needed_floats(plan, fir_length);
    const auto st = static_cast<cudaStream_t>(stream);
    switch (KB) {
        case 3:
            return launch_kb<S, D, 3>(src, dst, fp, st);
        case 5:
            return launch_kb<S, D, 5>(src, dst, fp, st);
        case 7:
            return launch_kb<S, D, 7>(src, dst, fp, st);
        case 11:
            return launch_kb<S, D, 11>(src, dst, fp, st);
        default:
            return launch_kb<S, D, 15>(src, dst, fp, st);
    }
}

}  // namespace

bool warp_fused_supported(const WarpPlan& plan, int src_w, int src_h, int fir_length) {
    if (plan.interp != Interp::BSpline || plan.fast_texture || plan.border == Border::Wrap)
        return false;
    if (fir_length < 3 || fir_length > bspline::kMaxFirLength || fir_length % 2 == 0) return false;
    if (src_w <= 0 || src_h <= 0) return false;
    const long long need = needed_floats(plan, fir_length);
    return need <= kMaxSmemBytes / static_cast<long long>(sizeof(float));
}

bool warp_fused_preferred(const WarpPlan& plan, int src_w, int src_h, int fir_length) {
    (void)plan, (void)src_w, (void)src_h, (void)fir_length;
    return false;  // slower than the two-pass schedule on the H200 (see warp_cuda.hpp)
}

void warp_bspline_fused(Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst,
                        const WarpPlan& plan, int fir_length, void* stream) {
    fused(src, dst, plan, fir_length, stream);
}
void warp_bspline_fused(Span2D<const std::uint16_t> src, Span2D<std::uint16_t> dst,
                        const WarpPlan& plan, int fir_length, void* stream) {
    fused(src, dst, plan, fir_length, stream);
}
void warp_bspline_fused(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan,
                        int fir_length, void* stream) {
    fused(src, dst, plan, fir_length, stream);
}

}  // namespace upres::cuda
