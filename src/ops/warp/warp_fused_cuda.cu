// The exact (IIR) B-spline prefilter fused with the interpolation (warp_bspline_rec, see
// warp_cuda.hpp and the kernel's description below), and the per-output fallback its blocks
// use when a box does not fit: the coefficients straight from global memory through the
// prefilter's extension (FIR31 taps of the exact filter), the border rule of
// sample_point<float>. A schedule of bspline_math.hpp and warp_math.hpp; no formula of its own.
// (An FIR prefilter fused the same way was measured slower than prefilter + interpolation and
// removed: docs/ops/warp.md, "Alternatives tried".)
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <type_traits>

#include "core/convert_math.hpp"
#include "core/cuda_check.hpp"
#include "ops/bspline/bspline_iir_box.cuh"
#include "ops/bspline/bspline_math.hpp"
#include "ops/warp/warp_cuda.hpp"
#include "ops/warp/warp_cuda_util.cuh"

namespace upres::cuda {

namespace {

using namespace detail;
using namespace iir_box;

struct FusedParams {
    WarpPlan p;
    int n_w, n_h;  // coefficient domain (source + 2 pad)
    int src_w, src_h;
    int cap_floats;                              // dynamic shared memory given at launch
    float taps[2 * bspline::kMaxFirRadius + 1];  // taps[KB + k], k in [-KB, KB], zero beyond K
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

// ---------------------------------------------------------------- recursive fused kernel
// The exact (IIR) prefilter and the interpolation in one pass, float images, 1 channel
// (warp_bspline_rec, warp_cuda.hpp). Per block of 256 threads, a kRT x kRT output tile:
//  1. the tile's coefficient box (the taps' footprint in double, without LeanGrid's rounding
//     margin: a float coordinate whose floor differs reads a halo sample at a weight below
//     1e-12) widened by kIirHalo samples on each side (and to an even width) is gathered
//     into shared memory with 4-byte cp.async (one warp per row, immediate offsets from one row
//     pointer), through the prefilter's extension (bspline::prefilter_extension: for Mirror,
//     Reflect, Wrap and Constant the prefiltered extended image is the tap extension of the
//     coefficients, so the box needs no border logic afterwards); rows a pitch of 2 mod 4 floats
//     apart, so the passes below (8-byte words; lanes on consecutive rows, then on consecutive
//     column pairs) are free of bank conflicts;
//  2. row pass, in place: the causal recursion p(i) = x(i) + z p(i - 1) from the box's first
//     sample (p = 0 before it), then q(i) = z q(i + 1) - p(i) from its last sample; q is stored
//     on the coefficient columns. The IIR's coefficient is 6 z q (scipy's c- = z (c-(i + 1) -
//     c+(i)) = z q, times the gain 6), so the constant (6 z)^2 of both passes is applied once per
//     output. Starting the recursions kIirHalo samples before the first and after the last
//     coefficient truncates the exact filter's tails there: the error is below
//     2 sqrt(3) |z|^(H+1) / (1 - |z|) = 1.7e-7 of the range per pass (H = 12), under float
//     rounding of the result. Each row is split between two threads (seg_row_*), so 234 of the
//     256 threads work; each takes its segment's two start values in closed form from the raw
//     samples on either side (bspline::iir_segment_starts), then runs the recursions over its
//     own samples only (3% faster than running them over the H samples on either side);
//  3. column pass, the same on the coefficient columns, two adjacent columns per thread
//     (seg_col_*);
//  4. B-spline interpolation from the coefficients in shared memory (float coordinates from the
//     tile origin as tile_coord, bspline_weights6), 16 outputs per thread, a warp's 32 outputs
//     as 32 x 1, 16 x 2 or 8 x 4. Each row of 4 taps is read either as four 4-byte loads or
//     (RecParams::wide) as two aligned 8-byte loads and one 4-byte load with the weights shifted
//     by the first tap's parity; the host picks the pitch, the form and the layout with the
//     fewest modelled wavefronts (rec_pitch).
// Blocks take the tiles edges first along both axes (RecParams::edges_first, warp_cuda.hpp).
// Measured on the H200: 2048^2 rotation by 30 degrees 47.5 us against 76 us for
// bspline_prefilter(IIR) + the lean interpolation kernel. ncu: ~174 instructions per output, issue
// slots ~50% busy, 43% achieved occupancy (4 blocks of 256 threads per SM, bound by registers and
// shared memory); the L1/shared pipe ~84% busy, 54% of its wavefronts in the interpolation, which
// at 30 degrees reads its taps 2-way bank-conflicted. The same 47.5 us on an H100, where ncu splits
// the instructions 17% gather, 14% row and 18% column recursions, 51% interpolation; tiles of the
// source instead of the output (smaller boxes) and batched column loads were measured slower there
// (docs/ops/warp.md, alternatives tried).
constexpr int kRT = 64;
static_assert(kCudaBoxAlign % kRT == 0, "boxes of the output start on a tile");
constexpr int kRecBlocks = 4;  // blocks per SM of the register bound (__launch_bounds__ below)
constexpr int kRecMaxSmemBytes = 100 * 1024;  // 2 blocks per SM at the largest accepted box

struct RecParams {
    FusedParams fp;    // plan, domains, FIR31 taps of the exact filter (out-of-box fallback)
    TileGrid g;        // 64 x 64 tiles
    int max_w, max_h;  // input box bound (host)
    int pitch;         // 2 mod 4, >= max_w
    int wide;          // 1: the interpolation reads each tap row as 2 x 8 + 4 bytes (rec_pitch)
    int lanes_x;       // 32, 16 or 8: a warp's interpolation outputs, lanes_x x (32 / lanes_x)
    int edges_first;   // bit 0 (x), bit 1 (y): tiles in the order 0, n - 1, 1, n - 2, ... along it
};

// Tile k of n in the edges-first order: 0, n - 1, 1, n - 2, ... (a permutation of 0..n-1).
__device__ __forceinline__ int edges_first_index(int k, int n) {
    return (k & 1) ? n - 1 - (k >> 1) : (k >> 1);
}

// The input box of tile (tbx, tby): the coefficient box [floor(u_lo) - 1, floor(u_hi) + 2] x
// [floor(v_lo) - 1, floor(v_hi) + 2] (the taps of the tile's coordinates in double, with no
// margin for the float coordinates of step 4: where their floor differs, the extra tap reads a
// halo sample at a weight below 1e-12), kIirHalo wider on each side, its width rounded up to an
// even count (box_width). The kernel and warp_rec_layout (the host's check of the bound) call it.
struct RecBox {
    double ub, vb;  // coordinate of the tile's first output
    int xa, ya;     // first sample of the input box
    int iw, ih;     // input box size (iw even)
};
__host__ __device__ inline RecBox rec_tile_box(const TileGrid& g, int tbx, int tby) {
    RecBox b;
    b.ub = fma(static_cast<double>(tby), g.duy, fma(static_cast<double>(tbx), g.dux, g.u0));
    b.vb = fma(static_cast<double>(tby), g.dvy, fma(static_cast<double>(tbx), g.dvx, g.v0));
    const int cxa = static_cast<int>(floor(b.ub + g.ulo)) - 1;
    const int cya = static_cast<int>(floor(b.vb + g.vlo)) - 1;
    b.xa = cxa - kIirHalo, b.ya = cya - kIirHalo;
    b.iw = box_width(static_cast<int>(floor(b.ub + g.uhi)) + 2 - cxa + 1);
    b.ih = static_cast<int>(floor(b.vb + g.vhi)) + 2 - cya + 1 + 2 * kIirHalo;
    return b;
}

// Whether the kernel runs box b: within the host's bound (which sized the shared memory) and the
// gather's chunks; otherwise the tile takes the per-output fallback. The kernel's test, and
// warp_rec_layout's.
__host__ __device__ inline bool rec_box_fits(const RecParams& rp, const RecBox& b) {
    return b.iw <= rp.max_w && b.ih <= rp.max_h && b.iw <= 32 * kRMaxChunks;
}

// Host constants of the 64 x 64 tiles (false: some tile's coordinates are non-finite or beyond
// 1e7, or its box is too large; the plan then takes the two-pass path).
bool rec_grid(const WarpPlan& p, int dst_w, int dst_h, RecParams& r) {
    if (p.kind != Transform::Kind::Affine && p.kind != Transform::Kind::Resize) return false;
    if (!tile_grid(p, kRT, dst_w, dst_h, r.g)) return false;
    // rec_tile_box's coefficient columns: floor(a) - floor(b) + 4 with a - b = dw up to the
    // rounding of the two sums (|a|, |b| < 1e7 by tile_grid: below 2.3e-9), and floor(a) -
    // floor(b) <= ceil(a - b) <= ceil(dw + 1e-7). (A bound with one column and row of slack
    // instead of 1e-7 rounded the even width up to 120 at 45 degrees, which needs pitch 122 and
    // left 3 blocks per SM for boxes that are all at most 118 wide: 46.3 against 42.3 us, H200.)
    const double dw = r.g.uhi - r.g.ulo, dh = r.g.vhi - r.g.vlo;
    if (!(dw < 32 * kRMaxChunks - 8 - 2 * kIirHalo && dh < 512)) return false;
    r.max_w = box_width(static_cast<int>(std::ceil(dw + 1e-7)) + 4);  // even, as iw
    r.max_h = static_cast<int>(std::ceil(dh + 1e-7)) + 4 + 2 * kIirHalo;
    return true;
}

// Shared memory of a block: the box (pitch x max_h floats) and one float.
std::size_t rec_smem_bytes(const RecParams& r) {
    return sizeof(float) * (static_cast<std::size_t>(r.pitch) * r.max_h + 1);
}

// Step 4 of the recursive fused kernel, one output: the B-spline weights times 6 at the
// box-relative coordinate (lu, lv) (bspline_weights6, whose 1/36 joins the recursions' (6 z)^2 in
// kScale) and the 16 coefficients from the box in shared memory (rows ps floats apart; the first
// tap's offset clamped to [0, last], a no-op up to float rounding). kWide: each row of 4 taps is
// read as two aligned 8-byte pairs and one float (RecParams::wide).
template <bool kWide>
__device__ __forceinline__ float rec_tap_sum(const float* s, int ps, int last, float lu, float lv) {
    constexpr float kScale = static_cast<float>(bspline::kPole * bspline::kPole);  // (6z)^2/36
    const float fu = floorf(lu), fv = floorf(lv);
    float wx[4], wy[4];
    bspline_weights6(lu - fu, wx);
    bspline_weights6(lv - fv, wy);
    const int o = min(max((static_cast<int>(fv) - 1) * ps + static_cast<int>(fu) - 1, 0), last);
    float h[4];  // the 4 rows' sums
    if constexpr (kWide) {
        // Row j's taps x[o_j .. o_j + 3], o_j = o + j ps, are read as the 8-byte pairs
        // at e_j = o_j - (o_j & 1) and e_j + 2 and the float at e_j + 4, weighted by
        // (w0, w1, w2, w3, 0) when o is even and (0, w0, w1, w2, w3) when it is odd (ps
        // is even: every row has o's parity). The zero-weighted reads (one sample before
        // or after the row's taps) land on the box, its zeroed pad columns or the zeroed
        // float after it.
        const int par = o & 1;
        const float* e0 = s + (o - par);
        float wa[5];
        wa[0] = par ? 0.0f : wx[0];
#pragma unroll
        for (int q = 1; q < 4; ++q) wa[q] = par ? wx[q - 1] : wx[q];
        wa[4] = par ? wx[3] : 0.0f;
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const float* e = e0 + j * ps;
            const float2 a = *reinterpret_cast<const float2*>(e);
            const float2 c = *reinterpret_cast<const float2*>(e + 2);
            h[j] = fmaf(wa[4], e[4],
                        fmaf(wa[3], c.y, fmaf(wa[2], c.x, fmaf(wa[1], a.y, wa[0] * a.x))));
        }
    } else {
        const float* t = s + o;
#pragma unroll
        for (int j = 0; j < 4; ++j, t += ps)
            h[j] = fmaf(wx[3], t[3], fmaf(wx[2], t[2], fmaf(wx[1], t[1], wx[0] * t[0])));
    }
    return fmaf(wy[3], h[3], fmaf(wy[2], h[2], fmaf(wy[1], h[1], wy[0] * h[0]))) * kScale;
}

// The 16 outputs of thread (x, y) (x + 32 i, y + 8 j) straight from global memory (FIR31 taps of
// the exact filter), out of line: the parameters stay in the kernel's constant bank.
__device__ __noinline__ void rec_fallback(Span2D<const float> src, Span2D<float> dst,
                                          const FusedParams* fp, int x, int y) {
    for (int k = 0; k < 2 * kRT / kRRows; ++k) {
        const int xo = x + 32 * (k & 1), yo = y + kRRows * (k >> 1);
        if (xo < dst.width && yo < dst.height)
            fused_one_direct<float, float, bspline::kMaxFirRadius>(src, dst, *fp, xo, yo);
    }
}

// kWide: RecParams::wide as a template parameter (one kernel per tap form: with a run-time branch
// the plain form, which zooms take, was ~3% slower than without the wide code).
template <bool kFill, bool kWide>
__global__ void __launch_bounds__(kRThreads, kRecBlocks)
    rec_fused_kernel(Span2D<const float> src, Span2D<float> dst,
                     const __grid_constant__ RecParams rp) {
    extern __shared__ float4 rec_smem4[];
    float* s = reinterpret_cast<float*>(rec_smem4);
    // the box, then one float (zeroed for the wide tap reads)
    const WarpPlan& p = rp.fp.p;
    const int tid = threadIdx.x, tx = tid & 31, ty = tid >> 5;
    // The tile of this block: blocks start in blockIdx order, so with RecParams::edges_first the
    // tiles go outside-in along each axis (0, n - 1, 1, n - 2, ...; edges_first_index).
    // A box of the output (WarpPlan::box_x0) takes its tiles in that order among themselves.
    const int tbx = (rp.edges_first & 1 ? edges_first_index(blockIdx.x, gridDim.x) : blockIdx.x) +
                    p.box_x0 / kRT;
    const int tby = (rp.edges_first & 2 ? edges_first_index(blockIdx.y, gridDim.y) : blockIdx.y) +
                    p.box_y0 / kRT;
    const int x0 = tbx * kRT, y0 = tby * kRT;
    const RecBox box = rec_tile_box(rp.g, tbx, tby);
    const double ub = box.ub, vb = box.vb;
    const int xa = box.xa, ya = box.ya, iw = box.iw, ih = box.ih;
    if (!rec_box_fits(rp, box)) {  // not with the host bound
        rec_fallback(src, dst, &rp.fp, x0 + tx, y0 + ty);
        return;
    }
    rec_box<kWide>(src, s, rp.pitch, p.border, xa, ya, iw, ih);
    // 4. Interpolate (coordinates relative to the input box; taps inside its coefficient part).
    // The warp's lanes cover lx x (32 / lx) outputs (RecParams::lanes_x, 32, 16 or 8: the layout
    // with the fewest modelled bank conflicts, rec_pitch): thread (ix, iy) computes the outputs
    // (x0 + ix + lx cx, y0 + iy + ry r), ry = 8 (32 / lx), at box coordinate b + (ix + lx cx) m +
    // (iy + ry r) m', in float as tile_coord; the B-spline weights times 6 (bspline_weights6),
    // whose 1/36 joins the recursions' (6 z)^2 in one scale per output.
    const int W = src.width, Hs = src.height;
    TileBox b;
    b.xa = xa, b.ya = ya, b.rw = iw, b.rh = ih;
    b.lu0 = static_cast<float>(ub - xa);
    b.lv0 = static_cast<float>(vb - ya);
    const int lx = rp.lanes_x, ly = 32 / lx;
    const int ix = tx & (lx - 1), iy = (tx / lx) + ly * ty;
    const int ry = kRRows * ly, ncx = kRT / lx;  // ncx columns x kRT / ry rows = 16 outputs
    const float m0 = static_cast<float>(p.m[0]), m1 = static_cast<float>(p.m[1]);
    const float m3 = static_cast<float>(p.m[3]), m4 = static_cast<float>(p.m[4]);
    const float bu = fmaf(m0, static_cast<float>(ix), fmaf(m1, static_cast<float>(iy), b.lu0));
    const float bv = fmaf(m3, static_cast<float>(ix), fmaf(m4, static_cast<float>(iy), b.lv0));
    const float su = static_cast<float>(ry) * m1, sv = static_cast<float>(ry) * m4;
    const int last = (ih - 4) * rp.pitch + iw - 4;  // largest first-tap offset in the box
    const int ps = rp.pitch;
    // Output r of column cx at row0 + lx cx + r ostep; nrows: the image rows from this thread's
    // first.
    const std::ptrdiff_t ostep = ry * dst.stride;
    const int nrows = dst.height - (y0 + iy);
    float* const row0 = dst.data + static_cast<std::ptrdiff_t>(y0 + iy) * dst.stride + x0 + ix;
    // Output (x, y) at box coordinate (lu, lv), the fill value where Constant puts it.
    auto value = [&](float lu, float lv, int x, int y) {
        float o = rec_tap_sum<kWide>(s, ps, last, lu, lv);
        if constexpr (kFill)
            if (constant_outside(p, b, lu, lv, x, y, W, Hs)) o = p.fill;
        return o;
    };
    if (lx == 8) {
        // 8 x 4 lanes: 8 columns of 2 rows per thread; round `it` takes columns 2 it and 2 it + 1,
        // rows 0 and 1 (output k: column 2 it + (k >> 1), row k & 1).
#pragma unroll 1
        for (int it = 0; it < 4; ++it) {
            const int x = x0 + ix + 16 * it;
            if (x >= dst.width) break;  // the columns do not decrease with it
            float cu[2], cv[2];
#pragma unroll
            for (int c = 0; c < 2; ++c) {
                const float fx = static_cast<float>(8 * (2 * it + c));
                cu[c] = fmaf(fx, m0, bu), cv[c] = fmaf(fx, m3, bv);
            }
            float out[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) {
                const float fr = static_cast<float>(k & 1);
                const float lu = fmaf(fr, su, cu[k >> 1]), lv = fmaf(fr, sv, cv[k >> 1]);
                out[k] = value(lu, lv, x + 8 * (k >> 1), y0 + iy + ry * (k & 1));
            }
            float* op = row0 + 16 * it;
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (ry * (k & 1) < nrows && (k < 2 || x + 8 < dst.width))
                    op[8 * (k >> 1) + (k & 1) * ostep] = out[k];
        }
        return;
    }
    // 32 x 1 and 16 x 2 lanes: one loop of 4 rounds of 4 outputs; round `it` takes column
    // cx = it >> sh and rows r0..r0 + 3, r0 = 4 (it & sh) (sh = 1 for 32 x 1 lanes, 2 rounds per
    // column; 0 for 16 x 2).
    const int sh = ncx == 2 ? 1 : 0;
#pragma unroll 1
    for (int it = 0; it < 4; ++it) {
        const int cx = it >> sh, r0 = 4 * (it & sh);
        const int x = x0 + ix + lx * cx;
        if (x >= dst.width) break;  // cx does not decrease with it
        float* op = row0 + lx * cx + r0 * ostep;
        const float fx = static_cast<float>(lx * cx), fr0 = static_cast<float>(r0);
        const float cu = fmaf(fx, m0, bu), cv = fmaf(fx, m3, bv);
        float out[4];
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const float fr = fr0 + static_cast<float>(k);
            const float lu = fmaf(fr, su, cu), lv = fmaf(fr, sv, cv);
            out[k] = value(lu, lv, x, y0 + iy + ry * (r0 + k));
        }
#pragma unroll
        for (int k = 0; k < 4; ++k, op += ostep)
            if (ry * (r0 + k) < nrows) *op = out[k];
    }
}

// Shared-memory wavefronts of one warp's tap loads, first taps at the box offsets a[l] (one per
// lane), rows ps floats apart. wide 0: sixteen 4-byte loads (a distinct address per bank and
// wavefront); wide 1: per row two 8-byte loads (per half-warp) at o_j - (o_j & 1) and + 2, and a
// 4-byte load at + 4.
double rec_tap_cost(const long long (&a)[32], int ps, int wide) {
    auto words = [](const long long* v, int n, int width) {
        long long w[64];
        int nw = 0;
        for (int l = 0; l < n; ++l)
            for (int k = 0; k < width; ++k) w[nw++] = v[l] + k;
        std::sort(w, w + nw);
        int count[32] = {};
        for (int i = 0; i < nw; ++i)
            if (i == 0 || w[i] != w[i - 1]) ++count[((w[i] % 32) + 32) % 32];
        return *std::max_element(count, count + 32);
    };
    long long v[32];
    double cost = 0;
    for (int j = 0; j < 4; ++j) {
        if (!wide) {
            for (int k = 0; k < 4; ++k) {
                for (int l = 0; l < 32; ++l) v[l] = a[l] + j * ps + k;
                cost += words(v, 32, 1);
            }
            continue;
        }
        for (int part = 0; part < 3; ++part) {  // the pairs at e and e + 2, the float at e + 4
            for (int l = 0; l < 32; ++l) v[l] = ((a[l] + j * ps) & ~1LL) + 2 * part;
            cost += part < 2 ? words(v, 16, 2) + words(v + 16, 16, 2) : words(v, 32, 1);
        }
    }
    return cost;
}

// The box pitch (2 mod 4, first..last), the tap-load form and the lane layout (32 x 1, 16 x 2 or
// 8 x 4 outputs per warp) with the fewest modelled wavefronts for the plan's steps (rec_tap_cost
// over 16 sub-pixel origins); at equal cost the plain form and the 32 x 1 layout (whole 128-byte
// rows of output per store). Cached per host thread.
void rec_pitch(const WarpPlan& p, int first, int last, int& pitch, int& wide, int& lanes_x) {
    struct Entry {
        double m0, m1, m3, m4;
        int first, last, pitch, wide, lanes_x;
    };
    thread_local Entry cache[8];
    thread_local int next = 0;
    for (const Entry& e : cache)
        if (e.pitch && e.m0 == p.m[0] && e.m1 == p.m[1] && e.m3 == p.m[3] && e.m4 == p.m[4] &&
            e.first == first && e.last == last) {
            pitch = e.pitch, wide = e.wide, lanes_x = e.lanes_x;
            return;
        }
    double best = 1e30;
    for (int lx = 32; lx >= 8; lx /= 2)
        for (int cand = first; cand <= last; cand += 4)
            for (int wd = 0; wd < 2; ++wd) {
                double cost = 0;
                for (int o = 0; o < 16; ++o) {
                    long long a[32];
                    model_first_taps(p, o, cand, 1, a, lx);
                    cost += rec_tap_cost(a, cand, wd);
                }
                if (wd == 1) cost *= 1.02;   // the plain form at equal cost (fewer instructions)
                if (lx != 32) cost *= 1.01;  // the 32 x 1 layout at equal cost
                if (cost < best) best = cost, pitch = cand, wide = wd, lanes_x = lx;
            }
    cache[next] = Entry{p.m[0], p.m[1], p.m[3], p.m[4], first, last, pitch, wide, lanes_x};
    next = (next + 1) % 8;
}

// The plan's constants for rec_fused_kernel; false when the plan is not one it runs.
bool rec_setup(const WarpPlan& plan, int src_w, int src_h, int dst_w, int dst_h, int channels,
               int prefilter, RecParams& rp) {
    if (plan.interp != Interp::BSpline || plan.fast_texture || plan.pad != 0 || channels != 1 ||
        prefilter != 0 || plan.border == Border::Nearest)
        return false;
    // Small sources: the two-pass path (scipy's reflect start-up differs from the extension's
    // exact filter for tiny lines).
    if (src_w < 16 || src_h < 16 || dst_w <= 0 || dst_h <= 0) return false;
    if (!rec_grid(plan, dst_w, dst_h, rp)) return false;
    // Pitches 2 mod 4 (the IIR passes' 8-byte words without bank conflicts) from the narrowest up
    // to 3 more, as long as as many blocks fit on an SM (at most kRecBlocks, the register bound)
    // as with the narrowest: a wider box that costs a block per SM was measured slower than the
    // bank conflicts it saves (50.5 against 49.4 us, 2048^2 rotation on the H200).
    const int first = box_pitch(rp.max_w);
    auto blocks = [&](int pitch) {
        rp.pitch = pitch;
        return std::min(kRecBlocks, smem_blocks_per_sm(rec_smem_bytes(rp)));
    };
    int last = first;
    while (last + 4 < first + 16 && blocks(last + 4) >= blocks(first)) last += 4;
    rec_pitch(plan, first, last, rp.pitch, rp.wide, rp.lanes_x);
    return rec_smem_bytes(rp) <= static_cast<std::size_t>(kRecMaxSmemBytes);
}

template <bool kF, bool kW>
void launch_rec(Span2D<const float> src, Span2D<float> dst, const RecParams& rp, cudaStream_t st) {
    static std::atomic<unsigned long long> configured{0};
    set_smem_limit_once(rec_fused_kernel<kF, kW>, kRecMaxSmemBytes, true, configured);
    const WarpPlan& p = rp.fp.p;
    const dim3 grid((dst.width - p.box_x0 + kRT - 1) / kRT,
                    (dst.height - p.box_y0 + kRT - 1) / kRT);
    rec_fused_kernel<kF, kW><<<grid, kRThreads, rec_smem_bytes(rp), st>>>(src, dst, rp);
    UPRES_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool warp_rec_supported(const WarpPlan& plan, int src_w, int src_h, int dst_w, int dst_h,
                        int channels, int prefilter) {
    RecParams rp{};
    return rec_setup(plan, src_w, src_h, dst_w, dst_h, channels, prefilter, rp);
}

bool warp_rec_preferred(const WarpPlan& plan, int src_w, int src_h, int dst_w, int dst_h,
                        int channels, int prefilter) {
    // Measured faster than the two-pass IIR path for rotations whose boxes leave at least 3
    // blocks per SM (boxes of up to ~64 KB); larger boxes (strong down-scales) keep the two-pass
    // path, where the fused kernel was not measured. Axis-aligned maps (m1 = m3 = 0, every
    // resize) keep it too: their interpolation is the separable kernel's (warp_cuda_kernels.cuh),
    // and prefilter + separable interpolation beat this kernel on the zooms of paper Table 3 (H200,
    // 2048^2 output: x2 26.6 against 29.1 us, x16 20.0 against 25.9).
    RecParams rp{};
    return plan.schedule == WarpScheduleOverride::Policy && !axis_aligned(plan) &&
           rec_setup(plan, src_w, src_h, dst_w, dst_h, channels, prefilter, rp) &&
           rec_smem_bytes(rp) <= 64 * 1024;
}

bool warp_rec_layout(const WarpPlan& plan, int src_w, int src_h, int dst_w, int dst_h,
                     RecLayout& out) {
    RecParams rp{};
    if (!rec_setup(plan, src_w, src_h, dst_w, dst_h, 1, 0, rp)) return false;
    out = RecLayout{};
    out.box_w = rp.max_w, out.box_h = rp.max_h, out.pitch = rp.pitch, out.wide = rp.wide;
    out.lanes_x = rp.lanes_x;
    out.blocks_per_sm = std::min(kRecBlocks, smem_blocks_per_sm(rec_smem_bytes(rp)));
    const int nx = (dst_w + kRT - 1) / kRT, ny = (dst_h + kRT - 1) / kRT;
    for (int ty = 0; ty < ny; ++ty)
        for (int tx = 0; tx < nx; ++tx) {
            const RecBox b = rec_tile_box(rp.g, tx, ty);
            ++out.tiles;
            out.widest = std::max(out.widest, b.iw), out.tallest = std::max(out.tallest, b.ih);
            if (!rec_box_fits(rp, b)) ++out.tiles_beyond_bound;
        }
    return true;
}

void warp_bspline_rec(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan,
                      int prefilter, void* stream, RecTapForm form, RecTileOrder order) {
    if (dst.width <= 0 || dst.height <= 0) return;
    const int tap_form = static_cast<int>(form), tile_order = static_cast<int>(order);
    RecParams rp{};
    // A box of the output (WarpPlan::box_x0): the whole output's tiles and bounds.
    const int dst_w = plan.out_w > 0 ? plan.out_w : dst.width;
    const int dst_h = plan.out_h > 0 ? plan.out_h : dst.height;
    if (!rec_setup(plan, src.width, src.height, dst_w, dst_h, src.channels, prefilter, rp))
        throw Error(ErrorCode::Internal, "cuda::warp_bspline_rec: plan not supported");
    if (tap_form < -1 || tap_form > 5)
        throw Error(ErrorCode::InvalidArgument,
                    "cuda::warp_bspline_rec: tap form must be -1 (auto) or 0 to 5, got " +
                        std::to_string(tap_form));
    if (tile_order < -1 || tile_order > 3)
        throw Error(ErrorCode::InvalidArgument,
                    "cuda::warp_bspline_rec: tile order must be -1 (auto), 0, 1, 2 or 3, got " +
                        std::to_string(tile_order));
    if (tap_form >= 0) rp.wide = tap_form & 1, rp.lanes_x = 32 >> (tap_form >> 1);
    rp.edges_first = tile_order < 0 ? 3 : tile_order;
    rp.fp.p = plan;
    rp.fp.src_w = src.width;
    rp.fp.src_h = src.height;
    rp.fp.n_w = src.width;
    rp.fp.n_h = src.height;
    // The out-of-box fallback's taps: the exact filter truncated at 15 (|z|^16: 7e-10).
    double t[bspline::kMaxFirLength];
    bspline::fir_taps(bspline::kMaxFirLength, t);
    for (int k = 0; k < bspline::kMaxFirLength; ++k) rp.fp.taps[k] = static_cast<float>(t[k]);
    const auto st = static_cast<cudaStream_t>(stream);
    const bool fill = plan.border == Border::Constant;
    if (fill && rp.wide)
        launch_rec<true, true>(src, dst, rp, st);
    else if (fill)
        launch_rec<true, false>(src, dst, rp, st);
    else if (rp.wide)
        launch_rec<false, true>(src, dst, rp, st);
    else
        launch_rec<false, false>(src, dst, rp, st);
}

}  // namespace upres::cuda
