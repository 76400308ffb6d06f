// The exact (IIR) cubic B-spline prefilter of a box of an image in shared memory, as a CUDA
// block of kRThreads threads computes it: the box is gathered through the prefilter's extension
// (bspline::prefilter_extension, so its coefficients are the exact IIR's at the image borders
// too), then the recursions run along its rows and its columns in place, each started kIirHalo
// samples before the first coefficient it stores. Shared by the recursive fused warp kernel
// (src/ops/warp/warp_fused_cuda.cu: one box per output tile) and the bspline prefilter's
// box-tile kernel (src/ops/bspline/bspline_cuda.cu: one box per tile of the image). Device code
// only; include from .cu files.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "core/border_math.hpp"
#include "core/span2d.hpp"
#include "ops/bspline/bspline_math.hpp"

namespace upres::cuda::iir_box {

inline constexpr int kRThreads = 256;          // threads per block
inline constexpr int kRRows = kRThreads / 32;  // rows of threads: thread (tid & 31, tid >> 5)
inline constexpr int kIirHalo = 12;            // samples before the first stored coefficient
inline constexpr int kRMaxChunks = 6;          // box rows of at most 192 samples

// Width of the box that holds n coefficient columns: kIirHalo more on each side, rounded up to
// an even count (the row pass reads pairs).
__host__ __device__ constexpr int box_width(int n) { return (n + 2 * kIirHalo + 1) & ~1; }
// The narrowest row pitch >= the even width w that is 2 mod 4 floats: the passes' 8-byte words
// of 16 consecutive rows or column pairs then hit distinct banks.
__host__ __device__ constexpr int box_pitch(int w) { return w % 4 == 2 ? w : w + 2; }

// border_index, with Mirror (the default border) taken by one reflection, without a division,
// when the index lies less than a period outside [0, n) (a box reaching past a side).
__device__ __forceinline__ int box_index(int i, int n, Border ext) {
    if (i >= 0 && i < n) return i;
    if (ext == Border::Mirror && n > 1) {
        if (i < 0 && i > -n) return -i;
        if (i >= n && i <= 2 * n - 2) return 2 * n - 2 - i;
    }
    return border_index(i, n, ext);
}

// One lane's samples of a box row: g[32 k] -> shared d + 128 k for the chunks k with 32 k < n, at
// immediate offsets from the two base addresses (one cp.async and one compare per chunk; the
// compiler's own version recomputed both 64-bit addresses per chunk). 4-byte cp.async (global ->
// shared), .ca: the sample may be read again by the next tile. No "memory" clobber (it made the
// compiler reload the kernel parameters and recompute the shared window after every copy):
// nothing reads the box before the wait_all + barrier that follow, and that wait carries the
// clobber.
__device__ __forceinline__ void cp_async_row(unsigned d, const float* g, int n) {
    static_assert(kRMaxChunks == 6, "one line per chunk below");
    asm volatile(
        "{\n"
        " .reg .pred p;\n"
        " setp.gt.s32 p, %2, 0;   @p cp.async.ca.shared.global [%0], [%1], 4;\n"
        " setp.gt.s32 p, %2, 32;  @p cp.async.ca.shared.global [%0+128], [%1+128], 4;\n"
        " setp.gt.s32 p, %2, 64;  @p cp.async.ca.shared.global [%0+256], [%1+256], 4;\n"
        " setp.gt.s32 p, %2, 96;  @p cp.async.ca.shared.global [%0+384], [%1+384], 4;\n"
        " setp.gt.s32 p, %2, 128; @p cp.async.ca.shared.global [%0+512], [%1+512], 4;\n"
        " setp.gt.s32 p, %2, 160; @p cp.async.ca.shared.global [%0+640], [%1+640], 4;\n"
        "}\n" ::"r"(d),
        "l"(g), "r"(n));
}

// As cp_async_row, the chunks' sources at the bytes g + xo[k] (a row crossing a side of the
// image; xo: this lane's byte offsets, 4 * its source column per chunk). The 64-bit addresses
// are formed in the asm block from the row pointer (two adds per chunk: the compiler's version
// folded each offset into a 64-bit multiply-add of the row index, ~8 instructions per chunk).
__device__ __forceinline__ void cp_async_row_map(unsigned d, const float* g,
                                                 const unsigned (&xo)[kRMaxChunks], int n) {
    static_assert(kRMaxChunks == 6, "one line per chunk below");
    asm volatile(
        "{\n"
        " .reg .pred p;\n"
        " .reg .u64 a;\n"
        " setp.gt.s32 p, %8, 0;   cvt.u64.u32 a, %2; add.u64 a, a, %1;"
        " @p cp.async.ca.shared.global [%0], [a], 4;\n"
        " setp.gt.s32 p, %8, 32;  cvt.u64.u32 a, %3; add.u64 a, a, %1;"
        " @p cp.async.ca.shared.global [%0+128], [a], 4;\n"
        " setp.gt.s32 p, %8, 64;  cvt.u64.u32 a, %4; add.u64 a, a, %1;"
        " @p cp.async.ca.shared.global [%0+256], [a], 4;\n"
        " setp.gt.s32 p, %8, 96;  cvt.u64.u32 a, %5; add.u64 a, a, %1;"
        " @p cp.async.ca.shared.global [%0+384], [a], 4;\n"
        " setp.gt.s32 p, %8, 128; cvt.u64.u32 a, %6; add.u64 a, a, %1;"
        " @p cp.async.ca.shared.global [%0+512], [a], 4;\n"
        " setp.gt.s32 p, %8, 160; cvt.u64.u32 a, %7; add.u64 a, a, %1;"
        " @p cp.async.ca.shared.global [%0+640], [a], 4;\n"
        "}\n" ::"r"(d),
        "l"(g), "r"(xo[0]), "r"(xo[1]), "r"(xo[2]), "r"(xo[3]), "r"(xo[4]), "r"(xo[5]), "r"(n));
}

// The exact IIR along one segment [s, e) of a line of the box in shared memory, in place: each
// line is split between threads, which store the coefficients (times 1 / (6 z)) on disjoint
// segments. A thread first takes its segment's two start values from the raw samples H before
// and H after it (seg_*_starts: bspline::iir_segment_starts, the closed forms of starting each
// recursion H samples outside the segment); a barrier must follow before any thread runs its
// segment (seg_*_run), since the neighbours overwrite those samples. A segment needs H samples
// of the line on each side (s >= H, e + H <= the line's length). Two forms, both on 8-byte
// words (the box pitch is even):
//  - seg_row_*: one row, s and e even, read and written as pairs of consecutive samples;
//  - seg_col_*: two adjacent columns at once, x[i * st] and x[i * st + 1], two independent
//    recursions in the two halves of a float2.
// (Running the recursions over the H samples on either side instead, holding the neighbour's
// in registers, gives the same sums up to rounding and was 3% slower.)
__device__ __forceinline__ float2 fma2(float z, float2 a, float2 b) {
    return make_float2(fmaf(z, a.x, b.x), fmaf(z, a.y, b.y));
}
__device__ __forceinline__ float2 neg2(float2 a) { return make_float2(-a.x, -a.y); }

// The start weights in float (folded into immediates where the loops below are unrolled).
struct SegStarts {
    float zk[kIirHalo], beta[kIirHalo], alpha;
};
__host__ __device__ constexpr SegStarts seg_starts() {
    constexpr bspline::IirSegmentStarts<kIirHalo> d = bspline::iir_segment_starts<kIirHalo>();
    SegStarts f{};
    for (int k = 0; k < kIirHalo; ++k)
        f.zk[k] = static_cast<float>(d.zk[k]), f.beta[k] = static_cast<float>(d.beta[k]);
    f.alpha = static_cast<float>(d.alpha);
    return f;
}

// The causal recursion over the pairs a[i0, i1), stored; returns its last value.
__device__ __forceinline__ float causal_pairs(float2* a, int i0, int i1, float pc, float z) {
#pragma unroll 4
    for (int i = i0; i < i1; ++i) {
        float2 v = a[i];
        v.x = pc = fmaf(z, pc, v.x);
        v.y = pc = fmaf(z, pc, v.y);
        a[i] = v;
    }
    return pc;
}

// The anticausal recursion over the pairs a[i0, i1), from a[i1 - 1] down, stored.
__device__ __forceinline__ void anticausal_pairs(float2* a, int i1, int i0, float q, float z) {
#pragma unroll 4
    for (int i = i1 - 1; i >= i0; --i) {
        float2 v = a[i];
        v.y = q = fmaf(z, q, -v.y);
        v.x = q = fmaf(z, q, -v.x);
        a[i] = v;
    }
}

// Row segment [s, e) (s, e even) of the line x: p0 = p(s - 1) and d = sum_l beta_l x(e + l),
// smallest weights first.
__device__ __forceinline__ void seg_row_starts(const float* x, int s, int e, float& p0, float& d) {
    constexpr SegStarts c = seg_starts();
    constexpr int H = kIirHalo;
    const float2* a = reinterpret_cast<const float2*>(x);
    p0 = 0.0f, d = 0.0f;
#pragma unroll
    for (int q = H / 2 - 1; q >= 0; --q) {  // x(s - 2 - 2q), x(s - 1 - 2q)
        const float2 v = a[s / 2 - 1 - q];
        p0 = fmaf(c.zk[2 * q + 1], v.x, p0);
        p0 = fmaf(c.zk[2 * q], v.y, p0);
    }
#pragma unroll
    for (int q = H / 2 - 1; q >= 0; --q) {  // x(e + 2q), x(e + 2q + 1)
        const float2 v = a[e / 2 + q];
        d = fmaf(c.beta[2 * q + 1], v.y, d);
        d = fmaf(c.beta[2 * q], v.x, d);
    }
}

// Both recursions over the row segment, from its starts; q(e) = -alpha p(e - 1) - d.
__device__ __forceinline__ void seg_row_run(float* x, int s, int e, float p0, float d, float z) {
    constexpr SegStarts c = seg_starts();
    float2* a = reinterpret_cast<float2*>(x);
    const float pc = causal_pairs(a, s / 2, e / 2, p0, z);
    anticausal_pairs(a, e / 2, s / 2, -fmaf(c.alpha, pc, d), z);
}

// The same for two adjacent columns (rows st floats apart), segment [s, e) of rows.
__device__ __forceinline__ void seg_col_starts(const float* x, int st, int s, int e, float2& p0,
                                               float2& d) {
    constexpr SegStarts c = seg_starts();
    constexpr int H = kIirHalo;
    auto at = [&](int i) { return *reinterpret_cast<const float2*>(x + i * st); };
    p0 = make_float2(0.0f, 0.0f), d = p0;
#pragma unroll
    for (int k = H - 1; k >= 0; --k) p0 = fma2(c.zk[k], at(s - 1 - k), p0);
#pragma unroll
    for (int l = H - 1; l >= 0; --l) d = fma2(c.beta[l], at(e + l), d);
}

__device__ __forceinline__ void seg_col_run(float* x, int st, int s, int e, float2 p0, float2 d,
                                            float z) {
    constexpr SegStarts c = seg_starts();
    float2* a = reinterpret_cast<float2*>(x + s * st);
    float2 pc = p0;
#pragma unroll 4
    for (int i = s; i < e; ++i, a += st / 2) *a = pc = fma2(z, pc, *a);
    float2 q = make_float2(-fmaf(c.alpha, pc.x, d.x), -fmaf(c.alpha, pc.y, d.y));
    a -= st / 2;
#pragma unroll 4
    for (int i = e - 1; i >= s; --i, a -= st / 2) *a = q = fma2(z, q, neg2(*a));
}

// Steps 1-3 of the recursive fused kernel on the input box [xa, xa + iw) x [ya, ya + ih) (iw
// even, pitch 2 mod 4 >= iw): gather it into s through the prefilter's extension, then the IIR
// along its rows and along its coefficient columns, in place; ends with a barrier, after which s
// holds the coefficients times 1 / (6 z)^2 on [H, iw - H) x [H, ih - H).
template <bool kWide>
__device__ __forceinline__ void rec_box(Span2D<const float> src, float* s, int pitch, Border border,
                                        int xa, int ya, int iw, int ih) {
    constexpr int H = kIirHalo;
    const int tid = threadIdx.x, tx = tid & 31, ty = tid >> 5;
    // 1. Gather the input box: one warp per row (the row through the prefilter's extension), 4-byte
    // cp.async per sample (fire and forget: the whole box is in flight at once) at immediate
    // offsets from one row pointer; columns through per-lane byte offsets (xo) when the box crosses
    // a side.
    const int W = src.width, Hs = src.height;
    const Border ext = bspline::prefilter_extension(border);
    const bool cols_inside = xa >= 0 && xa + iw <= W;
    unsigned xo[kRMaxChunks];  // this lane's source columns (bytes) when the box crosses a side
    if (!cols_inside) {
#pragma unroll
        for (int k = 0; k < kRMaxChunks; ++k)
            xo[k] = tx + 32 * k < iw ? 4u * box_index(xa + tx + 32 * k, W, ext) : 0u;
    }
    if constexpr (kWide) {  // zero what the wide tap reads touch outside the box (no NaN x 0)
        for (int r = tid; r < ih; r += kRThreads)
            for (int c = iw; c < pitch; ++c) s[r * pitch + c] = 0.0f;
        if (tid == 0) s[ih * pitch] = 0.0f;
    }
    const unsigned s_base = static_cast<unsigned>(__cvta_generic_to_shared(s));
    if (cols_inside && ya >= 0 && ya + ih <= Hs) {  // most tiles: pointers stepped by 8 rows
        const float* g = src.row(ya + ty) + xa + tx;
        const std::ptrdiff_t gstep = kRRows * src.stride;
        unsigned d = s_base + 4u * static_cast<unsigned>(ty * pitch + tx);
        const unsigned dstep = 4u * kRRows * static_cast<unsigned>(pitch);
        for (int j = ty; j < ih; j += kRRows, g += gstep, d += dstep) cp_async_row(d, g, iw - tx);
    } else {  // the box crosses a side: rows (and columns) through the extension
        unsigned d = s_base + 4u * static_cast<unsigned>(ty * pitch + tx);
        const unsigned dstep = 4u * kRRows * static_cast<unsigned>(pitch);
        for (int j = ty; j < ih; j += kRRows, d += dstep) {
            const float* g = src.row(box_index(ya + j, Hs, ext));
            if (cols_inside)
                cp_async_row(d, g + xa + tx, iw - tx);
            else
                cp_async_row_map(d, g, xo, iw - tx);
        }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();
    const float z = static_cast<float>(bspline::kPole);
    // 2. Row pass (all rows; coefficient columns [H, iw - H) stored): each row split between
    // threads t and t + 128 at m (segments [H, m) and [m, iw - H), seg_row_*), warps 0-3 the
    // left segments, 4-7 the right ones; 8-byte words, the lanes of a half-warp on 16 consecutive
    // rows (pitch 2 mod 4: no bank conflict).
    constexpr int kHalf = kRThreads / 2;
    const bool right = tid >= kHalf;
    const int lane_line = tid & (kHalf - 1);
    {
        const int m = (iw >> 1) & ~1;
        const int s0 = right ? m : H, e0 = right ? iw - H : m;
        for (int base = 0; base < ih; base += kHalf) {  // block-uniform rounds of 128 rows
            const int j = base + lane_line;
            float p0 = 0.0f, d = 0.0f;
            if (j < ih) seg_row_starts(s + j * pitch, s0, e0, p0, d);
            __syncthreads();
            if (j < ih) seg_row_run(s + j * pitch, s0, e0, p0, d, z);
        }
    }
    __syncthreads();
    // 3. Column pass on the coefficient columns (coefficient rows [H, ih - H) stored), two
    // adjacent columns per thread (seg_col_*), each pair split between two threads as the rows.
    // (Trimming each column to the rows the tile's outputs read there was measured slower: the
    // lanes of a warp then walk different rows, and the shared loads became 2.2-way
    // bank-conflicted. Splitting each pair between up to 4 threads, so that twice as many work,
    // measured no faster.)
    {
        const int m = ih >> 1, pairs = (iw - 2 * H) >> 1;
        const int s0 = right ? m : H, e0 = right ? ih - H : m;
        for (int base = 0; base < pairs; base += kHalf) {  // block-uniform rounds of 128 pairs
            const int c = H + 2 * (base + lane_line);
            float2 p0 = make_float2(0.0f, 0.0f), d = p0;
            if (base + lane_line < pairs) seg_col_starts(s + c, pitch, s0, e0, p0, d);
            __syncthreads();
            if (base + lane_line < pairs) seg_col_run(s + c, pitch, s0, e0, p0, d, z);
        }
    }
    __syncthreads();
}

}  // namespace upres::cuda::iir_box
