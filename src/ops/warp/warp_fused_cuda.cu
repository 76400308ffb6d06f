// Fused FIR prefilter + cubic B-spline interpolation (see warp_cuda.hpp): one kernel, one pass
// over the image. A schedule of bspline_math.hpp (taps, border extension) and warp_math.hpp
// (coordinate map, border rule, weights); no formula of its own.
//
// Per block (32 x 8 threads, a 32 x 32 output tile; channels one after the other), the tiled
// affine schedule of warp_cuda_util.cuh:
//  1. the box of coefficients the tile's taps touch follows from the tile origin (one double
//     evaluation) and the matrix (tile_box); the input box is that box plus the FIR radius KB on
//     each side, gathered into shared memory through the prefilter's extension
//     (bspline::prefilter_index; for Border::Nearest the virtual image padded by plan.pad edge
//     samples, extended by Mirror, as warp.cpp's padded prefilter), with cp.async for float
//     sources. For Mirror, Reflect and Constant the FIR of the extended image IS the extended
//     coefficient image (symmetric taps, symmetric extension), so the box needs no mapping;
//  2. row FIR in shared memory (4 consecutive outputs per thread, 16-byte loads of a register
//     window), then column FIR (4 consecutive rows per thread), both with the renormalised taps
//     of bspline::fir_taps, zero-padded to the compile-time radius KB >= K (exact zeros change
//     nothing);
//  3. B-spline interpolation from the coefficients in shared memory (tile_interp, float
//     coordinates stepped from the tile origin, no border logic; Border::Nearest clamps the
//     coordinate and each tap to the padded coefficient domain, Constant tests each output).
// A block whose box does not fit the shared memory given at launch (non-finite coordinates;
// never for the plans warp_fused_supported() accepts otherwise) computes each output's
// coefficients directly from global memory, slowly but with the same formula.
// Measured on an H200: docs/ops/warp.md section 9.3.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "core/convert_math.hpp"
#include "core/cuda_check.hpp"
#include "ops/bspline/bspline_math.hpp"
#include "ops/warp/warp_cuda.hpp"
#include "ops/warp/warp_cuda_util.cuh"

namespace upres::cuda {

namespace {

using namespace detail;

constexpr int kTile = kTileOut;  // output tile: kTile x kTile, blocks of kTile x kRows threads
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

// Coefficient (mx, my) (inside the coefficient domain) of channel c straight from global memory
// (fallback of blocks whose box does not fit).
template <class S, int KB>
__device__ __noinline__ float direct_coeff(Span2D<const S> src, FusedParams fp, int mx, int my,
                                           int c) {
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

// One output by the border rule of sample_point<float>, coefficients from global memory.
template <class S, class D, int KB>
__device__ __noinline__ void fused_one_direct(Span2D<const S> src, Span2D<D> dst, FusedParams fp,
                                              int x, int y) {
    const WarpPlan& p = fp.p;
    double m[9];
    for (int i = 0; i < 9; ++i) m[i] = p.m[i];
    double u, v;
    input_point(p, m, x, y, u, v);
    float uf = static_cast<float>(u), vf = static_cast<float>(v);
    const int C = src.channels;
    if (!map_coord(uf, fp.n_w, p.border) || !map_coord(vf, fp.n_h, p.border)) {
        for (int c = 0; c < C; ++c) dst.row(y)[x * C + c] = saturate_from_float<D>(p.fill);
        return;
    }
    float wx[4], wy[4];
    interp_weights<float>(uf - floorf(uf), Interp::BSpline, 0.0f, wx);
    interp_weights<float>(vf - floorf(vf), Interp::BSpline, 0.0f, wy);
    const long long bx = first_tap(uf, Interp::BSpline), by = first_tap(vf, Interp::BSpline);
    for (int c = 0; c < C; ++c) {
        float acc = 0.0f;
        for (int j = 0; j < 4; ++j) {
            const int iy = tap_index(by + j, fp.n_h, p.border);
            float racc = 0.0f;
            for (int k = 0; k < 4; ++k)
                racc += wx[k] *
                        direct_coeff<S, KB>(src, fp, tap_index(bx + k, fp.n_w, p.border), iy, c);
            acc += wy[j] * racc;
        }
        dst.row(y)[x * C + c] = saturate_from_float<D>(acc);
    }
}

constexpr int kMaxIn = kMaxSpan + 2 * bspline::kMaxFirRadius + 8;  // input box side bound

template <class S, class D, int KB>
__global__ void __launch_bounds__(kTile* kRows, 3)
    fused_kernel(Span2D<const S> src, Span2D<D> dst, FusedParams fp) {
    extern __shared__ float4 smem4[];
    float* smem = reinterpret_cast<float*>(smem4);
    __shared__ int xmap[kMaxIn], ymap[kMaxIn];

    const WarpPlan& p = fp.p;
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kTile + tx;
    const int x0 = blockIdx.x * kTile, y0 = blockIdx.y * kTile;
    const int x = x0 + tx;
    const int C = src.channels;

    // 1. the tile's coefficient box (b) and input box (b + KB on each side)
    TileBox b;
    const bool ok = tile_box(p, x0, y0, 4, 0, fp.n_w, fp.n_h, b);
    const Layout L = Layout::make(ok ? b.rw : 0, ok ? b.rh : 0, KB);
    if (!ok || L.iwp > kMaxIn || L.ihp > kMaxIn || L.floats() > fp.cap_floats) {
        if (x < dst.width)  // uniform per block: the direct (slow) path
            for (int r = 0; r < kPer; ++r) {
                const int y = y0 + ty + r * kRows;
                if (y < dst.height) fused_one_direct<S, D, KB>(src, dst, fp, x, y);
            }
        return;
    }
    for (int i = tid; i < L.iwp; i += kTile * kRows)
        xmap[i] = fetch_index(b.xa - KB + i, fp.n_w, fp.src_w, p.pad, p.border);
    for (int j = tid; j < L.ihp; j += kTile * kRows)
        ymap[j] = fetch_index(b.ya - KB + j, fp.n_h, fp.src_h, p.pad, p.border);

    // Border::Nearest: coordinates and taps clamped to the padded coefficient domain.
    const bool nearest = p.border == Border::Nearest;
    const int cx_lo = -b.xa, cx_hi = fp.n_w - 1 - b.xa, cy_lo = -b.ya, cy_hi = fp.n_h - 1 - b.ya;
    const bool clamp_taps =
        nearest && (cx_lo > 0 || cy_lo > 0 || cx_hi < b.rw - 1 || cy_hi < b.rh - 1);
    const D fill = saturate_from_float<D>(p.fill);
    __syncthreads();

    float* in = smem;                    // ihp x iwp input, then rhp x rwp coefficients
    float* rows = smem + L.ihp * L.iwp;  // ihp x rwp row-filtered
    for (int c = 0; c < C; ++c) {
        // 2. gather the input box (coalesced along x)
        for (int j = ty; j < L.ihp; j += kRows) {
            const S* srow = src.row(ymap[j]) + c;
            float* drow = in + j * L.iwp;
            for (int i = tx; i < L.iwp; i += kTile) {
                if constexpr (std::is_same_v<S, float>)
                    __pipeline_memcpy_async(drow + i, srow + xmap[i] * C, sizeof(float));
                else
                    drow[i] = static_cast<float>(__ldg(srow + xmap[i] * C));
            }
        }
        if constexpr (std::is_same_v<S, float>) {
            __pipeline_commit();
            __pipeline_wait_prior(0);
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
        if (x < dst.width) {
#pragma unroll
            for (int r = 0; r < kPer; ++r) {
                const int y = y0 + ty + r * kRows;
                if (y >= dst.height) continue;
                float lu, lv;
                tile_coord(p, b, tx, ty + r * kRows, lu, lv);
                if (p.border == Border::Constant &&
                    constant_outside(p, b, lu, lv, x, y, fp.n_w, fp.n_h)) {
                    dst.row(y)[x * C + c] = fill;
                    continue;
                }
                float acc[1];
                if (nearest) {
                    lu = fminf(fmaxf(lu, static_cast<float>(cx_lo)), static_cast<float>(cx_hi));
                    lv = fminf(fmaxf(lv, static_cast<float>(cy_lo)), static_cast<float>(cy_hi));
                }
                if (clamp_taps)
                    tile_interp<1, Interp::BSpline, true>(in, L.rwp, b.rw, b.rh, lu, lv, 0.0f, acc,
                                                          cx_lo, cx_hi, cy_lo, cy_hi);
                else
                    tile_interp<1, Interp::BSpline>(in, L.rwp, b.rw, b.rh, lu, lv, 0.0f, acc);
                dst.row(y)[x * C + c] = saturate_from_float<D>(acc[0]);
            }
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

int needed_floats(const WarpPlan& p, int fir_length) {
    int rw = 0, rh = 0;
    if (!tile_box_bound(p, 4, 0, rw, rh)) return INT_MAX;
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
