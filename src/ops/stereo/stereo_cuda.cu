// Cuda backend of upres::stereo_disparity (docs/ops/stereo.md). Two ways to run, bit-identical
// to the reference (integer costs and sums, stereo_math.hpp):
//
//  Stream (the default; the FPGA scheme of the paper's section 6.2 on the GPU): a block owns a
//  stripe of kRows rows across the image (or a column range of it on wide images) and runs the
//  disparities one after another. Per layer it computes the costs of its rows plus the
//  window's radius and the column pass into shared memory, then the row pass, updating each
//  owned pixel's left winner state (smallest sum, its two neighbours for the parabola) in
//  registers; the right map's state of right pixel x_r reads the row-pass sum at x_r + d from
//  shared memory. The cost volume never exists: device memory is three W x H maps. A second
//  kernel does the left-right check and writes the outputs.
//  On 8-bit gray pairs and census costs with the default truncation, every cost is a multiple
//  of 16, so the sums divided by 16 stay below 2^24 and run exactly in fp32 (twice the integer
//  multiply-add rate on sm_90), on images converted to float once; the 7 x 7 and 13 x 13
//  windows are compiled with their radius, so the weights are constant operands. Gray images
//  up to kTileW wide have the stripe's rows of both images in shared memory (1.30 ms against
//  1.72 ms from global memory for 1120 x 1120 x 200 on an H200; docs/ops/stereo.md lists the
//  block shapes measured).
//
//  Cube1 / Cube2 (the paper's section 6.1 kernels, for reproduction): buildCube writes the
//  W x H x D cost cube, aggrCube filters every layer with the non-separable 2-D window from a
//  shared-memory tile (into a second cube: Cube2, the dual-cube layout; or into a W x H buffer
//  copied back into the one cube: Cube1), cubeMin searches each depth ray for the left map and
//  each diagonal for the right map, crossCheck nullifies disagreeing pixels and parPeakInterp
//  fits the parabola from the cube.
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <type_traits>

#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"
#include "ops/stereo/stereo_backends.hpp"
#include "ops/stereo/stereo_math.hpp"

namespace upres::cuda {

namespace {

using stereo::kNone;
using u64 = std::uint64_t;

constexpr int kNoD = INT_MIN;  // "no disparity" in the winner maps (disparities may be < 0)

__device__ __forceinline__ int clampi(int v, int lo, int hi) { return min(max(v, lo), hi); }

// ---- Cost sources: cost(x, xr, y) of left pixel x against right pixel xr (clamped) on row y.

// The integer cost of any pixel type (1/16 levels).
template <class T, int C>
struct AdCost {
    using Acc = int;
    static constexpr bool kFloat = false;
    Span2D<const T> l, r;
    int max_q;
    __device__ __forceinline__ int operator()(int x, int xr, int y) const {
        return stereo::pixel_cost(l.row(y) + x * C, r.row(y) + xr * C, C, max_q);
    }
};

// Census, integer (1/16 levels).
struct CensusCost {
    using Acc = int;
    static constexpr bool kFloat = false;
    const u64* __restrict__ cl;
    const u64* __restrict__ cr;
    int w, max_q;
    __device__ __forceinline__ int operator()(int x, int xr, int y) const {
        const std::size_t row = static_cast<std::size_t>(y) * w;
        return stereo::census_cost(cl[row + x], cr[row + xr], max_q);
    }
};

// Exact small integers as floats without a conversion instruction (conversions run at 1/8 of
// the fp32 rate on sm_90): 0x4b000000 | n is 2^23 + n for 0 <= n < 2^23.
__device__ __forceinline__ float small_int_to_float(int n) {
    return __int_as_float(0x4b000000 | n) - 8388608.0f;
}

// 8-bit gray absolute difference in whole levels (the integer cost / 16, exact when max_q is a
// multiple of 16), on the images converted to float once.
struct AdGrayFloat {
    using Acc = float;
    static constexpr bool kFloat = true;  // and tiled (stream_kernel's kTile)
    const float* __restrict__ l;
    const float* __restrict__ r;
    int w;
    float max_c;  // max_q / 16
    __device__ __forceinline__ float operator()(int x, int xr, int y) const {
        const int row = y * w;  // float_path: W x H < 2^31
        return fminf(fabsf(l[row + x] - r[row + xr]), max_c);
    }
};

// Census in whole bits (the integer cost / 16, exact when max_q is a multiple of 16).
struct CensusFloat {
    using Acc = float;
    static constexpr bool kFloat = true;
    const u64* __restrict__ cl;
    const u64* __restrict__ cr;
    int w;
    float max_c;
    __device__ __forceinline__ float operator()(int x, int xr, int y) const {
        const int row = y * w;  // float_path: W x H < 2^31
        return fminf(small_int_to_float(__popcll(cl[row + x] ^ cr[row + xr])), max_c);
    }
};

// ---- Winner states of the streaming search (stereo_math.hpp's rules).

template <class Acc>
__device__ __forceinline__ Acc acc_none();
template <>
__device__ __forceinline__ float acc_none<float>() {
    return __int_as_float(0x7f800000);  // +inf
}
template <>
__device__ __forceinline__ int acc_none<int>() {
    return kNone;
}
__device__ __forceinline__ std::int32_t to_i32(float v) {
    return isinf(v) ? kNone : static_cast<std::int32_t>(v);  // exact: integers below 2^24
}
__device__ __forceinline__ std::int32_t to_i32(int v) { return v; }

// The left winner without the uniqueness competitor: smallest sum (ties: smaller d) and its
// neighbours, winner_step's rule for best / before / after.
template <class Acc>
struct LeanLeft {
    Acc best, before, after, prev;
    int bd;
    __device__ __forceinline__ void init() {
        best = before = after = prev = acc_none<Acc>();
        bd = 0;
    }
    __device__ __forceinline__ void step(Acc h, int d) {
        const bool lt = h < best;
        after = lt ? acc_none<Acc>() : (d == bd + 1 ? h : after);
        before = lt ? prev : before;
        bd = lt ? d : bd;
        best = lt ? h : best;
        prev = h;
    }
    __device__ __forceinline__ stereo::Winner winner() const {
        return stereo::finished(to_i32(best), bd, to_i32(before), to_i32(after), kNone);
    }
    // A block that runs a chunk of the disparities (the stream variant's tail) also visits the
    // candidate just before its chunk (mode 0: only its sum, the `before` of a winner at the
    // chunk's first d) and the one just after it (mode 2: only the `after` of a winner at the
    // chunk's last d); mode 1 is a step. The chunks' states then merge into the state of one pass.
    __device__ __forceinline__ void visit(Acc h, int d, int mode) {
        if (mode == 1)
            step(h, d);
        else if (mode == 0)
            prev = h;
        else
            after = d == bd + 1 ? h : after;
    }
};

// The full state (uniqueness): winner_step itself.
template <class Acc>
struct FullLeft {
    std::int32_t best, bd, before, after, far, prev, below2;
    __device__ __forceinline__ void init() {
        best = before = after = far = prev = below2 = kNone;
        bd = 0;
    }
    __device__ __forceinline__ void step(Acc h, int d) {
        stereo::winner_step(best, bd, before, after, far, prev, below2, d, to_i32(h));
    }
    __device__ __forceinline__ stereo::Winner winner() const {
        return stereo::finished(best, bd, before, after, far);
    }
    __device__ __forceinline__ void visit(Acc h, int d, int) { step(h, d); }  // never chunked
};

template <class Acc>
struct RightState {
    Acc best;
    int bd;
    __device__ __forceinline__ void init() {
        best = acc_none<Acc>();
        bd = 0;
    }
    __device__ __forceinline__ void step(Acc h, int d) {
        const bool lt = h < best;
        bd = lt ? d : bd;
        best = lt ? h : best;
    }
};

// ---- Stream variant.

// A block's shape: output rows, owned columns per thread (consecutive: the row pass reads one
// window of kSlots + 2r column sums for them), threads. The lean state runs 4 rows, the full one
// (uniqueness) 2, so that every state stays in registers (at most 168 of them, one block of 384
// threads per SM). Measured alternatives: docs/ops/stereo.md.
template <int Rows, int Slots, int Threads>
struct Shape {
    static constexpr int kRows = Rows, kSlots = Slots, kThreads = Threads;
};
using LeanShape = Shape<4, 3, 384>;
using FullShape = Shape<2, 3, 384>;

// A chunk's states of one pixel in the stream variant's tail (sums as integers, kNone: none).
struct TailState {
    std::int32_t best, bd, before, after, rbest, rbd;
};

struct StreamParams {
    int W, H, min_d, num_d, r, own_w, uniqueness;
    bool subpixel;
    int gi[16];         // one-sided weights g_0 .. g_r
    float gf[16];       // the same as floats
    unsigned wp[4][4];  // kTile: output row i's weights of the rows of group g, a byte each
    unsigned max_c4;    // kTile: the cost's truncation in each byte (~0: none)
    float* left_sub;    // W x H: the left winner, refined
    int* left_bk;       // W x H: the left winner's d (kNoD: none, or not unique)
    int* right_bk;      // W x H: the right winner's d (kNoD: none)
    // Blocks: main_blocks = stripes x blocks_x column ranges over all disparities, then (the
    // tail) the stripes from tail_s0 on, each as `chunks` blocks of chunk_d disparities whose
    // states go to `tail` (chunk, row from tail_s0 * kRows, x) and merge in tail_merge_kernel.
    int blocks_x, main_blocks, tail_s0, chunks, chunk_d;
    TailState* tail;
};

// A pixel's winner maps: the left winner (invalid when not unique enough) and the right
// winner's sum and d (kNone: none).
__device__ __forceinline__ void store_winners(const StreamParams& p, std::size_t idx,
                                              const stereo::Winner& w, std::int32_t rbest,
                                              int rbd) {
    const bool ok = w.best >= 0 && stereo::unique_enough(w, p.uniqueness);
    p.left_bk[idx] = ok ? w.best_d : kNoD;
    p.left_sub[idx] = ok ? stereo::refined(w, p.subpixel) : 0.0f;
    p.right_bk[idx] = rbest == kNone ? kNoD : rbd;
}

template <class Acc>
__device__ __forceinline__ Acc weight(const StreamParams& p, int j);
template <>
__device__ __forceinline__ float weight<float>(const StreamParams& p, int j) {
    return p.gf[j];
}
template <>
__device__ __forceinline__ int weight<int>(const StreamParams& p, int j) {
    return p.gi[j];
}

// The columns [s0, s1) whose sums a block needs: its owned pixels [own0, own1) as left pixels
// (the sum at x) and as right pixels (the sums at x_r + d over the range).
__host__ __device__ inline void block_span(int own0, int own1, int W, int min_d, int num_d, int& s0,
                                           int& s1) {
    const int max_d = min_d + num_d - 1;
    s0 = max(0, min(own0, own0 + min_d));
    s1 = min(W, max(own1, own1 + max_d));
}

// Tiled kernels (Src::kTiled, images up to kTileW wide) copy the stripe's rows of both images
// into shared memory once, with a compile-time row pitch: each cost is then two shared loads at
// immediate offsets from one address per column.
constexpr int kTileW = 1344;

// kR > 0: the radius at compile time (gauss7, gauss13); 0: p.r.
template <class Src, class Left, int kR, class Sh, bool kTile = false>
__global__ void __launch_bounds__(Sh::kThreads) stream_kernel(Src src, StreamParams p) {
    using Acc = typename Src::Acc;
    constexpr int kRows = Sh::kRows, kSlots = Sh::kSlots;
    extern __shared__ __align__(16) unsigned char smem_raw[];
    const int W = p.W, H = p.H, r = kR > 0 ? kR : p.r, nt = blockDim.x, tid = threadIdx.x;
    int stripe, own0, k0 = 0, k1 = p.num_d, chunk = -1;
    if (static_cast<int>(blockIdx.x) < p.main_blocks) {
        stripe = blockIdx.x / p.blocks_x;
        own0 = (blockIdx.x - stripe * p.blocks_x) * p.own_w;
    } else {
        const int t = blockIdx.x - p.main_blocks;
        stripe = p.tail_s0 + t / p.chunks;
        chunk = t - (t / p.chunks) * p.chunks;
        own0 = 0;
        k0 = chunk * p.chunk_d;
        k1 = min(p.num_d, k0 + p.chunk_d);
    }
    const int y0 = stripe * kRows;
    const int own1 = min(W, own0 + p.own_w), own_n = own1 - own0;
    int s0, s1;
    block_span(own0, own1, W, p.min_d, p.num_d, s0, s1);
    const int span = s1 - s0, vw = span + 2 * r, off = own0 - s0;
    // Rows of vw column sums (r clamped each side), pitch vp: the row pass reads kSlots + 2r
    // sums from a thread's first owned column, up to kSlots - 1 past vw for the last thread.
    const int vp = vw + kSlots - 1;
    Acc* v = reinterpret_cast<Acc*>(smem_raw);  // kRows x vp
    Acc* hs = v + kRows * vp;                   // kRows x span: window sums
    constexpr int kSrcRows = kRows + 2 * (kR > 0 ? kR : 0);
    // kTile: the stripe's rows of both images as bytes, 4 consecutive rows to a word (group g
    // holds rows 4g .. 4g + 3 from y0 - r), so that one VABSDIFF4 makes 4 rows' costs and one
    // DP4A adds 4 of them, weighted, to an output row's column sum.
    constexpr int kGroups = (kSrcRows + 3) / 4;
    [[maybe_unused]] unsigned* lt = reinterpret_cast<unsigned*>(hs + kRows * span);
    [[maybe_unused]] unsigned* rt = lt + kGroups * kTileW;
    if constexpr (kTile) {
        for (int i = tid; i < kGroups * W; i += nt) {
            const int g = i / W, x = i - g * W;
            unsigned a = 0, b = 0;
#pragma unroll
            for (int u = 0; u < 4; ++u)
                if (4 * g + u < kSrcRows) {
                    const int y = clampi(y0 - r + 4 * g + u, 0, H - 1);
                    // The level n as a float is 2^23 + n once 2^23 is added: its low byte.
                    a |= (__float_as_uint(src.l[y * W + x] + 8388608.0f) & 0xffu) << (8 * u);
                    b |= (__float_as_uint(src.r[y * W + x] + 8388608.0f) & 0xffu) << (8 * u);
                }
            lt[g * kTileW + x] = a;
            rt[g * kTileW + x] = b;
        }
        __syncthreads();
    }

    // Owned pixel of slot sl: kSlots consecutive columns per thread.
    auto owned = [&](int sl) { return tid * kSlots + sl; };
    Left left[kSlots][kRows];
    RightState<Acc> right[kSlots][kRows];
#pragma unroll
    for (int sl = 0; sl < kSlots; ++sl)
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
            left[sl][i].init();
            right[sl][i].init();
        }

    // A chunk also visits the disparity before it and the one after it (Left::visit).
    const int kb = k0 - (k0 > 0), ke = k1 + (k1 < p.num_d);
    for (int k = kb; k < ke; ++k) {
        const int d = p.min_d + k, mode = k < k0 ? 0 : (k < k1 ? 1 : 2);
        // Column pass: the costs of rows y0 - r .. y0 + kRows - 1 + r (clamped), each added to
        // the outputs whose window holds it.
        for (int j = tid; j < vw; j += nt) {
            const int x = clampi(s0 - r + j, 0, W - 1), xr = clampi(x - d, 0, W - 1);
            Acc acc[kRows];
#pragma unroll
            for (int i = 0; i < kRows; ++i) acc[i] = 0;
            if constexpr (kTile) {
                // The same integers as the float sums below: every product and sum is below
                // 2^24 (weights on 256, costs at most 255).
                unsigned q[kGroups];
#pragma unroll
                for (int g = 0; g < kGroups; ++g) {
                    q[g] = __vabsdiffu4(lt[g * kTileW + x], rt[g * kTileW + xr]);
                    if (p.max_c4 != ~0u) q[g] = __vminu4(q[g], p.max_c4);
                }
#pragma unroll
                for (int i = 0; i < kRows; ++i) {
                    unsigned a = 0;
#pragma unroll
                    for (int g = 0; g < kGroups; ++g) a = __dp4a(q[g], p.wp[i][g], a);
                    acc[i] = small_int_to_float(static_cast<int>(a));
                }
            } else {
#pragma unroll
                for (int s = 0; s < kRows + 2 * r; ++s) {
                    const Acc q = src(x, xr, clampi(y0 - r + s, 0, H - 1));
#pragma unroll
                    for (int i = 0; i < kRows; ++i) {
                        const int t = s - r - i;
                        if (t >= -r && t <= r) acc[i] += weight<Acc>(p, t < 0 ? -t : t) * q;
                    }
                }
            }
#pragma unroll
            for (int i = 0; i < kRows; ++i) v[i * vp + j] = acc[i];
        }
        __syncthreads();
        // Row pass; owned columns update their left winners.
        auto row_sum = [&](int i, int j) {  // window sum at span column j, row i
            const Acc* c = v + i * vp + j + r;
            Acc s = weight<Acc>(p, 0) * c[0];
#pragma unroll
            for (int t = 1; t <= (kR > 0 ? kR : 15); ++t) {
                if (kR == 0 && t > r) break;
                s += weight<Acc>(p, t) * (c[-t] + c[t]);
            }
            return s;
        };
        if constexpr (kR > 0) {
            // The thread's kSlots consecutive sums from one window of kSlots + 2r column sums.
            const int o0 = owned(0);
            if (o0 < own_n)
#pragma unroll
                for (int i = 0; i < kRows; ++i) {
                    const Acc* c = v + i * vp + o0 + off;
                    Acc win[kSlots + 2 * kR];
#pragma unroll
                    for (int u = 0; u < kSlots + 2 * kR; ++u) win[u] = c[u];
#pragma unroll
                    for (int sl = 0; sl < kSlots; ++sl) {
                        Acc h = weight<Acc>(p, 0) * win[sl + kR];
#pragma unroll
                        for (int t = 1; t <= kR; ++t)
                            h += weight<Acc>(p, t) * (win[sl + kR - t] + win[sl + kR + t]);
                        const int o = o0 + sl, x = own0 + o;
                        if (o < own_n) {
                            hs[i * span + o + off] = h;
                            if (x - d >= 0 && x - d < W) left[sl][i].visit(h, d, mode);
                        }
                    }
                }
        } else {
#pragma unroll
            for (int sl = 0; sl < kSlots; ++sl) {
                const int o = owned(sl);
                if (o < own_n) {
                    const int x = own0 + o, j = o + off;
                    const bool cand = x - d >= 0 && x - d < W;
#pragma unroll
                    for (int i = 0; i < kRows; ++i) {
                        const Acc h = row_sum(i, j);
                        hs[i * span + j] = h;
                        if (cand) left[sl][i].visit(h, d, mode);
                    }
                }
            }
        }
        if (span > own_n)
            for (int j = tid; j < span; j += nt) {
                if (j >= off && j < off + own_n) continue;
#pragma unroll
                for (int i = 0; i < kRows; ++i) hs[i * span + j] = row_sum(i, j);
            }
        __syncthreads();
        // Right winners: right pixel x_r against left pixel x_r + d.
#pragma unroll
        for (int sl = 0; sl < kSlots; ++sl) {
            const int o = owned(sl);
            const int x = own0 + o + d;
            if (mode == 1 && o < own_n && x >= 0 && x < W)
#pragma unroll
                for (int i = 0; i < kRows; ++i) right[sl][i].step(hs[i * span + x - s0], d);
        }
    }
#pragma unroll
    for (int sl = 0; sl < kSlots; ++sl) {
        const int o = owned(sl);
        if (o >= own_n) continue;
        const int x = own0 + o;
#pragma unroll
        for (int i = 0; i < kRows; ++i) {
            const int y = y0 + i;
            if (y >= H) break;
            if (chunk >= 0) {
                if constexpr (std::is_same_v<Left, LeanLeft<Acc>>)
                    p.tail[(static_cast<std::size_t>(chunk) * (H - p.tail_s0 * kRows) +
                            (y - p.tail_s0 * kRows)) *
                               W +
                           x] = {to_i32(left[sl][i].best),   left[sl][i].bd,
                                 to_i32(left[sl][i].before), to_i32(left[sl][i].after),
                                 to_i32(right[sl][i].best),  right[sl][i].bd};
                continue;
            }
            store_winners(p, static_cast<std::size_t>(y) * W + x, left[sl][i].winner(),
                          to_i32(right[sl][i].best), right[sl][i].bd);
        }
    }
}

// The tail's chunk states merged in disparity order into the winner maps, as one pass over all
// disparities would leave them: a later chunk's winner only when strictly smaller (ties: the
// smaller d), its `before` from its visit of the disparity before it, an earlier winner's
// `after` from that chunk's visit of the one after it.
__global__ void tail_merge_kernel(StreamParams p, int rows0) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = rows0 + blockIdx.y;
    if (x >= p.W) return;
    const int tail_h = p.H - rows0;
    std::int32_t best = kNone, bd = 0, before = kNone, after = kNone, rb = kNone, rd = 0;
    for (int c = 0; c < p.chunks; ++c) {
        const TailState t = p.tail[(static_cast<std::size_t>(c) * tail_h + (y - rows0)) * p.W + x];
        if (t.best < best) {
            best = t.best;
            bd = t.bd;
            before = t.before;
            after = t.after;
        }
        if (t.rbest < rb) {
            rb = t.rbest;
            rd = t.rbd;
        }
    }
    store_winners(p, static_cast<std::size_t>(y) * p.W + x,
                  stereo::finished(best, bd, before, after, kNone), rb, rd);
}

// The left winner of (x, y) where the right map's winner at x - d agrees within lr_check (-1:
// no check), else kNoD.
__device__ __forceinline__ int checked_winner(const int* __restrict__ lbk,
                                              const int* __restrict__ rbk, int W, int x, int y,
                                              int lr_check) {
    const int d = lbk[static_cast<std::size_t>(y) * W + x];
    if (d == kNoD || lr_check < 0) return d;
    const int o = rbk[static_cast<std::size_t>(y) * W + (x - d)];
    return o != kNoD && abs(d - o) <= lr_check ? d : kNoD;
}

// crossCheck of the stream variant, and the outputs.
__global__ void finalize_kernel(int W, int H, const int* __restrict__ lbk,
                                const float* __restrict__ lsub, const int* __restrict__ rbk,
                                int lr_check, float invalid, Span2D<float> disparity,
                                Span2D<std::uint8_t> valid) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= W) return;
    const std::size_t i = static_cast<std::size_t>(y) * W + x;
    const bool ok = checked_winner(lbk, rbk, W, x, y, lr_check) != kNoD;
    disparity.row(y)[x] = ok ? lsub[i] : invalid;
    if (valid.data) valid.row(y)[x] = ok ? 255 : 0;
}

// The aggregated sum S(x, y, d) straight from the 2-D window (64-bit), for the right map's
// parabola in the stream variant (an optional output: not worth streaming state).
template <class Src>
__device__ std::int64_t window_sum(const Src& src, int W, int H, int x, int y, int d, int r,
                                   const int* g) {
    std::int64_t s = 0;
    for (int i = -r; i <= r; ++i) {
        const int yy = clampi(y + i, 0, H - 1);
        std::int64_t row = 0;
        for (int j = -r; j <= r; ++j) {
            const int xx = clampi(x + j, 0, W - 1);
            row += static_cast<std::int64_t>(g[j < 0 ? -j : j]) *
                   src(xx, clampi(xx - d, 0, W - 1), yy);
        }
        s += g[i < 0 ? -i : i] * row;
    }
    return s;
}

struct Weights {
    int g[16];
};

template <class Src>
__global__ void right_refine_kernel(Src src, int W, int H, int min_d, int num_d, int r, Weights wt,
                                    bool subpixel, float invalid, const int* __restrict__ rbk,
                                    Span2D<float> out) {
    const int xr = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (xr >= W) return;
    const int d = rbk[static_cast<std::size_t>(y) * W + xr];
    if (d == kNoD) {
        out.row(y)[xr] = invalid;
        return;
    }
    stereo::Winner w;
    w.best_d = d;
    w.best = static_cast<std::int32_t>(window_sum(src, W, H, xr + d, y, d, r, wt.g));
    const int x = xr + d, max_d = min_d + num_d - 1;
    if (subpixel && d - 1 >= min_d && x - 1 >= 0)
        w.before = static_cast<std::int32_t>(window_sum(src, W, H, x - 1, y, d - 1, r, wt.g));
    if (subpixel && d + 1 <= max_d && x + 1 < W)
        w.after = static_cast<std::int32_t>(window_sum(src, W, H, x + 1, y, d + 1, r, wt.g));
    out.row(y)[xr] = stereo::refined(w, subpixel);
}

// ---- Cube variants (the paper's kernels).

template <class Src, class Out>
__global__ void build_cube_kernel(Src src, int W, int H, int min_d, Out* __restrict__ cube) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y,
              k = blockIdx.z;
    if (x >= W || y >= H) return;
    const int d = min_d + k;
    cube[(static_cast<std::size_t>(k) * H + y) * W + x] =
        static_cast<Out>(src(x, clampi(x - d, 0, W - 1), y));
}

// The non-separable window g_i g_j over a shared-memory tile of the layer (rows and columns
// clamped), kAggr x kAggr outputs per block of kAggr x kAggrRows threads.
constexpr int kAggr = 32, kAggrRows = 8, kMaxSide = kAggr + 30;

template <class In>
__global__ void aggr_cube_kernel(const In* __restrict__ in, int* __restrict__ out, int W, int H,
                                 int r, Weights wt) {
    __shared__ int tile[kMaxSide][kMaxSide + 1];
    __shared__ int w2[31][31];
    const std::size_t layer = static_cast<std::size_t>(W) * H * blockIdx.z;
    const In* src = in + layer;
    const int x0 = blockIdx.x * kAggr, y0 = blockIdx.y * kAggr, side = kAggr + 2 * r;
    const int tid = threadIdx.y * kAggr + threadIdx.x;
    for (int i = tid; i < side * side; i += kAggr * kAggrRows) {
        const int ty = i / side, tx = i % side;
        tile[ty][tx] =
            static_cast<int>(src[static_cast<std::size_t>(clampi(y0 - r + ty, 0, H - 1)) * W +
                                 clampi(x0 - r + tx, 0, W - 1)]);
    }
    for (int i = tid; i < (2 * r + 1) * (2 * r + 1); i += kAggr * kAggrRows) {
        const int a = i / (2 * r + 1) - r, b = i % (2 * r + 1) - r;
        w2[a + r][b + r] = wt.g[a < 0 ? -a : a] * wt.g[b < 0 ? -b : b];
    }
    __syncthreads();
    const int x = x0 + threadIdx.x;
    for (int yy = threadIdx.y; yy < kAggr; yy += kAggrRows) {
        const int y = y0 + yy;
        int s = 0;
        for (int a = 0; a <= 2 * r; ++a)
            for (int b = 0; b <= 2 * r; ++b) s += w2[a][b] * tile[yy + a][threadIdx.x + b];
        if (x < W && y < H) out[layer + static_cast<std::size_t>(y) * W + x] = s;
    }
}

// cubeMin: the left winner along each depth ray (with the uniqueness test), the right winner
// along each diagonal x = x_r + d.
__global__ void cube_min_kernel(const int* __restrict__ agg, int W, int H, int min_d, int num_d,
                                int uniqueness, int* __restrict__ lbk, int* __restrict__ rbk) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= W || y >= H) return;
    const std::size_t plane = static_cast<std::size_t>(W) * H, px = static_cast<std::size_t>(y) * W;
    std::int32_t best = kNone, bd = 0, before = kNone, after = kNone, far = kNone, prev = kNone,
                 below2 = kNone;
    std::int32_t rbest = kNone, rd = 0;
    for (int k = 0; k < num_d; ++k) {
        const int d = min_d + k;
        if (x - d >= 0 && x - d < W)
            stereo::winner_step(best, bd, before, after, far, prev, below2, d,
                                agg[plane * k + px + x]);
        const int xl = x + d;
        if (xl >= 0 && xl < W) {
            const std::int32_t c = agg[plane * k + px + xl];
            if (c < rbest) rbest = c, rd = d;
        }
    }
    const stereo::Winner w = stereo::finished(best, bd, before, after, far);
    lbk[px + x] = w.best >= 0 && stereo::unique_enough(w, uniqueness) ? w.best_d : kNoD;
    rbk[px + x] = rbest == kNone ? kNoD : rd;
}

// crossCheck: the left winner where the right map agrees within lr_check, else kNoD.
__global__ void cross_check_kernel(int W, int H, const int* __restrict__ lbk,
                                   const int* __restrict__ rbk, int lr_check,
                                   int* __restrict__ checked) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= W) return;
    checked[static_cast<std::size_t>(y) * W + x] = checked_winner(lbk, rbk, W, x, y, lr_check);
}

// parPeakInterp: the parabola through the cube's sums at d - 1, d, d + 1 (both maps).
__device__ float peak(const int* agg, int W, int H, int min_d, int num_d, int x, int y, int d,
                      int step, bool subpixel) {
    // step: +1 for the left map (the ray at x), the diagonal x + (d' - d) for the right map.
    const std::size_t plane = static_cast<std::size_t>(W) * H, px = static_cast<std::size_t>(y) * W;
    const int k = d - min_d;
    stereo::Winner w;
    w.best_d = d;
    w.best = agg[plane * k + px + x];
    const int xb = x - step, xa = x + step;
    if (k > 0 && xb >= 0 && xb < W && xb - (d - 1) >= 0 && xb - (d - 1) < W)
        w.before = agg[plane * (k - 1) + px + xb];
    if (k + 1 < num_d && xa >= 0 && xa < W && xa - (d + 1) >= 0 && xa - (d + 1) < W)
        w.after = agg[plane * (k + 1) + px + xa];
    return stereo::refined(w, subpixel);
}

__global__ void par_peak_interp_kernel(const int* __restrict__ agg, int W, int H, int min_d,
                                       int num_d, bool subpixel, float invalid,
                                       const int* __restrict__ checked, const int* __restrict__ rbk,
                                       Span2D<float> disparity, Span2D<std::uint8_t> valid,
                                       Span2D<float> right_disparity) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= W) return;
    const std::size_t i = static_cast<std::size_t>(y) * W + x;
    const int d = checked[i];
    disparity.row(y)[x] = d == kNoD ? invalid : peak(agg, W, H, min_d, num_d, x, y, d, 0, subpixel);
    if (valid.data) valid.row(y)[x] = d == kNoD ? 0 : 255;
    if (right_disparity.data) {
        const int e = rbk[i];
        right_disparity.row(y)[x] =
            e == kNoD ? invalid : peak(agg, W, H, min_d, num_d, x + e, y, e, 1, subpixel);
    }
}

// ---- Input preparation.

// Both images' census codes (blockIdx.z: 0 the left, 1 the right; W x H each): a block's 32 x 8
// pixels from a shared tile of their intensities with the window's margins, rows and columns
// clamped as census_code clamps them; each code is then census_code's inside branch on the
// tile. P: float where the channel sums are exact in it (u8, u16), else double. One kernel for
// both images and no intensity planes (Aloe's pair on an H200: 0.107 ms for the four kernels
// and two double planes it replaces, 0.084 ms; with census_code's rows in 32 bits, less).
constexpr int kCensusTx = 32, kCensusTy = 8;
template <class T, class P>
__global__ void census_pair_kernel(Span2D<const T> left, Span2D<const T> right,
                                   u64* __restrict__ codes) {
    constexpr int kRx = stereo::kCensusRx, kRy = stereo::kCensusRy;
    constexpr int kSw = kCensusTx + 2 * kRx, kSh = kCensusTy + 2 * kRy;
    __shared__ P tile[kSh * kSw];
    const Span2D<const T>& img = blockIdx.z ? right : left;
    const int W = img.width, H = img.height;
    const int x0 = blockIdx.x * kCensusTx, y0 = blockIdx.y * kCensusTy;
    for (int i = threadIdx.y * kCensusTx + threadIdx.x; i < kSw * kSh; i += kCensusTx * kCensusTy) {
        const int xx = clampi(x0 - kRx + i % kSw, 0, W - 1);
        const int yy = clampi(y0 - kRy + i / kSw, 0, H - 1);
        tile[i] = static_cast<P>(stereo::intensity(
            img.row(yy) + static_cast<std::ptrdiff_t>(xx) * img.channels, img.channels));
    }
    __syncthreads();
    const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
    if (x < W && y < H)
        codes[static_cast<std::size_t>(blockIdx.z) * W * H + static_cast<std::size_t>(y) * W + x] =
            stereo::census_code(tile, kSw, kSh, threadIdx.x + kRx, threadIdx.y + kRy);
}

__global__ void gray_to_float_kernel(Span2D<const std::uint8_t> img, float* __restrict__ out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x >= img.width) return;
    out[static_cast<std::size_t>(y) * img.width + x] = img.row(y)[x];
}

// ---- Host side.

struct Outputs {
    Span2D<float> disparity, right_disparity;
    Span2D<std::uint8_t> valid;
};

dim3 rows_grid(int W, int H, int threads) { return dim3((W + threads - 1) / threads, H); }

template <class Src, class Left, int kR, class Sh, bool kTile = false>
void launch_stream(const Src& src, StreamParams p, int W, cudaStream_t s) {
    using Acc = typename Src::Acc;
    constexpr int kRows = Sh::kRows, kSlots = Sh::kSlots, kThreads = Sh::kThreads;
    // Owned columns per block: the whole row up to kThreads x kSlots columns.
    p.own_w = std::min(W, kThreads * kSlots);
    const int nt = std::min(kThreads, ((p.own_w + kSlots - 1) / kSlots + 31) / 32 * 32);
    const int blocks_x = (W + p.own_w - 1) / p.own_w;
    int smax = 0;
    for (int b = 0; b < blocks_x; ++b) {
        int s0, s1;
        block_span(b * p.own_w, std::min(W, (b + 1) * p.own_w), W, p.min_d, p.num_d, s0, s1);
        smax = std::max(smax, s1 - s0);
    }
    std::size_t smem =
        sizeof(Acc) * kRows * (2 * static_cast<std::size_t>(smax) + 2 * p.r + kSlots - 1);
    if constexpr (kTile) {
        constexpr int kGroups = (kRows + 2 * kR + 3) / 4;
        smem += 2 * sizeof(unsigned) * kGroups * kTileW;
        static_assert(kRows <= 4 && kGroups <= 4);
        for (int i = 0; i < kRows; ++i)
            for (int g = 0; g < kGroups; ++g) {
                p.wp[i][g] = 0;
                for (int u = 0; u < 4; ++u) {
                    const int t = 4 * g + u - kR - i;  // row 4g + u from y0 - r, output row i
                    const int w = t >= -kR && t <= kR ? p.gi[t < 0 ? -t : t] : 0;
                    if (w < 0 || w > 255)
                        throw Error(ErrorCode::Internal, "stereo: a window weight above 255");
                    p.wp[i][g] |= static_cast<unsigned>(w) << (8 * u);
                }
            }
        const float mc = src.max_c;
        p.max_c4 = mc >= 255.0f ? ~0u : 0x01010101u * static_cast<unsigned>(mc);
    }
    auto* kernel = stream_kernel<Src, Left, kR, Sh, kTile>;
    UPRES_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
    const int stripes = (p.H + kRows - 1) / kRows;
    p.blocks_x = blocks_x;
    p.main_blocks = stripes * blocks_x;
    p.chunks = 0;
    // The tail: a block runs a whole stripe, so stripes beyond a whole number of waves leave the
    // last wave mostly idle (1120 rows: 280 stripes on 132 SMs, the third wave 16 blocks). Those
    // stripes run as chunks of the disparities instead, enough to fill one wave, their states
    // merged afterwards (rows x chunks at most H: memory O(W x H)). One column range only.
    DeviceTemp tail;
    if constexpr (std::is_same_v<Left, LeanLeft<Acc>>) {
        int dev = 0, sms = 0, per_sm = 0;
        UPRES_CUDA_CHECK(cudaGetDevice(&dev));
        UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        UPRES_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, nt, smem));
        const int slots = std::max(1, sms * per_sm), rest = stripes % slots;
        int chunks = rest > 0 ? std::min({slots / rest, p.num_d / 4, p.H / (rest * kRows)}) : 0;
        if (blocks_x == 1 && chunks >= 2) {
            p.chunk_d = (p.num_d + chunks - 1) / chunks;
            chunks = (p.num_d + p.chunk_d - 1) / p.chunk_d;
            p.chunks = chunks;
            p.tail_s0 = stripes - rest;
            p.main_blocks = p.tail_s0;
            const std::size_t tail_rows = static_cast<std::size_t>(p.H - p.tail_s0 * kRows);
            tail = DeviceTemp(sizeof(TailState) * chunks * tail_rows * W, s,
                              "stereo (the stream variant's tail states)");
            p.tail = tail.as<TailState>();
        }
    }
    const long long blocks =
        static_cast<long long>(p.main_blocks) +
        (p.chunks > 0 ? static_cast<long long>(stripes - p.tail_s0) * p.chunks : 0);
    kernel<<<static_cast<unsigned>(blocks), nt, smem, s>>>(src, p);
    UPRES_CUDA_CHECK_LAUNCH();
    if (p.chunks > 0) {
        const int rows0 = p.tail_s0 * kRows;
        tail_merge_kernel<<<dim3((W + 127) / 128, p.H - rows0), 128, 0, s>>>(p, rows0);
        UPRES_CUDA_CHECK_LAUNCH();
    }
}

template <class Src>
void run_right_refine(const Src& src, int W, int H, const StereoPlan& plan, const int* rbk,
                      Span2D<float> out, cudaStream_t s) {
    Weights wt{};
    for (int j = 0; j <= plan.radius; ++j) wt.g[j] = plan.weights[j];
    right_refine_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(
        src, W, H, plan.min_d, plan.num_d, plan.radius, wt, plan.subpixel, plan.invalid, rbk, out);
    UPRES_CUDA_CHECK_LAUNCH();
}

template <class Src, class ISrc>
void run_stream(const Src& src, const ISrc& isrc, int W, int H, const StereoPlan& plan,
                const Outputs& out, cudaStream_t s) {
    using Acc = typename Src::Acc;
    const std::size_t n = static_cast<std::size_t>(W) * H;
    DeviceTemp maps(n * (2 * sizeof(int) + sizeof(float)), s, "stereo (winner maps)");
    StreamParams p{};
    p.W = W;
    p.H = H;
    p.min_d = plan.min_d;
    p.num_d = plan.num_d;
    p.r = plan.radius;
    p.uniqueness = plan.uniqueness;
    p.subpixel = plan.subpixel;
    for (int j = 0; j <= plan.radius; ++j) {
        p.gi[j] = plan.weights[j];
        p.gf[j] = static_cast<float>(plan.weights[j]);
    }
    p.left_bk = maps.as<int>();
    p.right_bk = p.left_bk + n;
    p.left_sub = reinterpret_cast<float*>(p.right_bk + n);
    if constexpr (Src::kFloat) {  // radius 3 or 6, no uniqueness (float_path)
        constexpr bool kTile = std::is_same_v<Src, AdGrayFloat>;
        if (plan.radius == 3) {
            if (kTile && W <= kTileW)
                launch_stream<Src, LeanLeft<Acc>, 3, LeanShape, kTile>(src, p, W, s);
            else
                launch_stream<Src, LeanLeft<Acc>, 3, LeanShape>(src, p, W, s);
        } else {
            if (kTile && W <= kTileW)
                launch_stream<Src, LeanLeft<Acc>, 6, LeanShape, kTile>(src, p, W, s);
            else
                launch_stream<Src, LeanLeft<Acc>, 6, LeanShape>(src, p, W, s);
        }
    } else {
        if (plan.uniqueness > 0)
            launch_stream<Src, FullLeft<Acc>, 0, FullShape>(src, p, W, s);
        else
            launch_stream<Src, LeanLeft<Acc>, 0, LeanShape>(src, p, W, s);
    }
    finalize_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(W, H, p.left_bk, p.left_sub, p.right_bk,
                                                         plan.lr_check, plan.invalid, out.disparity,
                                                         out.valid);
    UPRES_CUDA_CHECK_LAUNCH();
    // The right map's parabola from the integer source (its sums are 16 x the float source's:
    // the same winners and, scaled by a power of two, the same parabola).
    if (out.right_disparity.data)
        run_right_refine(isrc, W, H, plan, p.right_bk, out.right_disparity, s);
}

template <class Src>
void run_cube(const Src& src, int W, int H, const StereoPlan& plan, bool dual, const Outputs& out,
              cudaStream_t s) {
    const std::size_t n = static_cast<std::size_t>(W) * H, D = plan.num_d;
    Weights wt{};
    for (int j = 0; j <= plan.radius; ++j) wt.g[j] = plan.weights[j];
    // Cube2: a 16-bit cost cube and a 32-bit aggregated cube; Cube1: one 32-bit cube and a
    // W x H buffer.
    DeviceTemp agg(n * D * sizeof(int), s, "stereo (aggregated cube)");
    DeviceTemp costs(dual ? n * D * sizeof(std::uint16_t) : n * sizeof(int), s,
                     dual ? "stereo (cost cube)" : "stereo (layer buffer)");
    DeviceTemp maps(n * 3 * sizeof(int), s, "stereo (winner maps)");
    int* lbk = maps.as<int>();
    int* rbk = lbk + n;
    int* checked = rbk + n;
    const dim3 b2(32, 4);
    const dim3 g3((W + 31) / 32, (H + 3) / 4, plan.num_d);
    const dim3 ga((W + kAggr - 1) / kAggr, (H + kAggr - 1) / kAggr, dual ? plan.num_d : 1);
    const dim3 ba(kAggr, kAggrRows);
    if (dual) {
        build_cube_kernel<<<g3, b2, 0, s>>>(src, W, H, plan.min_d, costs.as<std::uint16_t>());
        UPRES_CUDA_CHECK_LAUNCH();
        aggr_cube_kernel<<<ga, ba, 0, s>>>(costs.as<std::uint16_t>(), agg.as<int>(), W, H,
                                           plan.radius, wt);
        UPRES_CUDA_CHECK_LAUNCH();
    } else {
        build_cube_kernel<<<g3, b2, 0, s>>>(src, W, H, plan.min_d, agg.as<int>());
        UPRES_CUDA_CHECK_LAUNCH();
        for (int k = 0; k < plan.num_d; ++k) {
            int* layer = agg.as<int>() + n * k;
            aggr_cube_kernel<<<ga, ba, 0, s>>>(layer, costs.as<int>(), W, H, plan.radius, wt);
            UPRES_CUDA_CHECK_LAUNCH();
            UPRES_CUDA_CHECK(
                cudaMemcpyAsync(layer, costs.get(), n * sizeof(int), cudaMemcpyDeviceToDevice, s));
        }
    }
    cube_min_kernel<<<dim3((W + 31) / 32, (H + 3) / 4), b2, 0, s>>>(
        agg.as<int>(), W, H, plan.min_d, plan.num_d, plan.uniqueness, lbk, rbk);
    UPRES_CUDA_CHECK_LAUNCH();
    cross_check_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(W, H, lbk, rbk, plan.lr_check, checked);
    UPRES_CUDA_CHECK_LAUNCH();
    par_peak_interp_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(
        agg.as<int>(), W, H, plan.min_d, plan.num_d, plan.subpixel, plan.invalid, checked, rbk,
        out.disparity, out.valid, out.right_disparity);
    UPRES_CUDA_CHECK_LAUNCH();
}

// The fp32 stream kernels apply: costs multiples of 16 (8-bit gray AD, census) with a
// truncation that keeps them so, a 7 x 7 or 13 x 13 window, no uniqueness competitor.
bool float_path(const StereoPlan& plan, StereoVariant variant, int W, int H) {
    return static_cast<std::int64_t>(W) * H < (std::int64_t{1} << 31) &&
           variant == StereoVariant::Stream && plan.max_q % stereo::kCostScale == 0 &&
           (plan.radius == 3 || plan.radius == 6) && plan.uniqueness == 0;
}

// ---- Semi-global matching (stereo_math.hpp's sgm_step; bit-identical to the reference).
// Two layouts of the same steps:
//  Bytes (census costs with a truncation and penalties in whole bits, and max C + P2 <= 255
//  bits, so that every path cost fits a byte; the default census plan): costs and penalties in
//  whole bits (the reference's values / 16: sgm_step is homogeneous, so every path cost is
//  the reference's / 16 exactly; the keys keep their order, and the uniqueness test and the
//  parabola's quotient their values), the cost cube in bytes, every direction at once in one
//  launch, each writing its own byte cube of path costs (write only; the search adds them).
//  Words (any other plan): the 16-bit cost cube (after its window mean), each direction adding
//  its path costs into one 16-bit sum cube (the directions run one after another on the
//  stream: no atomics).
// Kernels:
//  sgm_cost_kernel    the cost cube C (W x H x D, d fastest), then its window mean (Words);
//  sgm_path_kernel    one warp per path line (a row, a column or a diagonal), the disparities
//  (Words), and       spread over the lanes (KPL consecutive ones each); the neighbours d -+ 1
//  sgm_path_bytes_    across lanes by shuffles, the previous minimum by a warp reduction; the
//  kernel (Bytes: 16  costs of the line's next pixels loaded while the current one is computed
//  or 32 lanes a      (the step's dependency chain then hides their latency);
//  line, in pairs)
//  sgm_wta_kernel     one block per row: a warp per pixel finds the smallest key (S << 16) | k
//                     over the candidates (and, with uniqueness, the smallest sum two or more
//                     away from it) and offers each key to the right pixel x - d through a
//                     shared-memory atomicMin (the smallest sum, then the smallest d); the
//                     winner's neighbours' sums come from the lanes that hold them; each warp's
//                     next two pixels' sums load while it searches one; then the check, the
//                     parabola from S, the outputs.
using u16 = std::uint16_t;
using u8 = std::uint8_t;

// The Bytes layout applies (see above).
bool sgm_bytes(const StereoPlan& plan) {
    constexpr int s = stereo::kCostScale;
    if (!plan.census || plan.sgm_radius != 0 || plan.max_q % s || plan.p1 % s || plan.p2 % s)
        return false;
    return std::min(plan.max_q / s, 64) + plan.p2 / s <= 255;
}

// KPL consecutive bytes of one lane, in words (byte i of the lane: bits 8 (i % 4) of word i / 4).
template <int KPL>
struct LaneBytes {
    static_assert(KPL >= 2, "the Bytes layout's lanes hold pairs");
    unsigned w[(KPL + 3) / 4];
    __device__ __forceinline__ void load(const u8* __restrict__ p) {  // KPL-aligned
        if constexpr (KPL == 2) {
            w[0] = *reinterpret_cast<const u16*>(p);
        } else if constexpr (KPL == 4) {
            w[0] = *reinterpret_cast<const unsigned*>(p);
        } else if constexpr (KPL == 8) {
            const uint2 v = *reinterpret_cast<const uint2*>(p);
            w[0] = v.x, w[1] = v.y;
        } else {
#pragma unroll
            for (int j = 0; j < KPL / 16; ++j) {
                const uint4 v = reinterpret_cast<const uint4*>(p)[j];
                w[4 * j] = v.x, w[4 * j + 1] = v.y, w[4 * j + 2] = v.z, w[4 * j + 3] = v.w;
            }
        }
    }
    __device__ __forceinline__ void store(u8* __restrict__ p) const {
        if constexpr (KPL == 2) {
            *reinterpret_cast<u16*>(p) = static_cast<u16>(w[0]);
        } else if constexpr (KPL == 4) {
            *reinterpret_cast<unsigned*>(p) = w[0];
        } else if constexpr (KPL == 8) {
            *reinterpret_cast<uint2*>(p) = make_uint2(w[0], w[1]);
        } else {
#pragma unroll
            for (int j = 0; j < KPL / 16; ++j)
                reinterpret_cast<uint4*>(p)[j] =
                    make_uint4(w[4 * j], w[4 * j + 1], w[4 * j + 2], w[4 * j + 3]);
        }
    }
};

template <class Src>
__global__ void sgm_cost_kernel(Src src, int W, int H, int min_d, int D, u16* __restrict__ cost) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (i >= static_cast<long long>(W) * D) return;
    const int x = static_cast<int>(i / D), k = static_cast<int>(i % D);
    cost[static_cast<std::size_t>(y) * W * D + i] =
        static_cast<u16>(src(x, clampi(x - min_d - k, 0, W - 1), y));
}

// The Bytes cost cube: Dp bytes per pixel (the candidates d < D, then zeros). A block (Dp
// threads) makes 32 pixels of a row (their Dp x 32 bytes are contiguous): the right codes they
// read into shared memory once; warp j makes candidates 32 j to 32 j + 31 of the pixel of each
// lane into a shared tile (rows padded by a word: no bank conflicts), then the tile goes out in
// whole words.
constexpr int kCostPixels = 32;
__global__ void sgm_cost_bytes_kernel(CensusCost src, int W, int min_d, int D, int Dp, int qshift,
                                      unsigned* __restrict__ cost) {
    // Dp + 31 right codes, the 32 left codes, then the tile (32 x (Dp / 4 + 1) words).
    extern __shared__ u64 codes[];
    const int q = 1 << qshift, pitch = q + 1;  // q = Dp / 4 words a pixel
    u64* lcodes = codes + Dp + kCostPixels - 1;
    unsigned* tile = reinterpret_cast<unsigned*>(lcodes + kCostPixels);
    const int x0 = blockIdx.x * kCostPixels, y = blockIdx.y;
    const std::size_t row = static_cast<std::size_t>(y) * W;
    const int base = x0 - min_d - (Dp - 1);  // column of codes[0]
    for (int m = threadIdx.x; m < Dp + kCostPixels - 1; m += blockDim.x)
        codes[m] = src.cr[row + clampi(base + m, 0, W - 1)];
    if (threadIdx.x < kCostPixels) lcodes[threadIdx.x] = src.cl[row + min(x0 + threadIdx.x, W - 1)];
    __syncthreads();
    const int mc = src.max_q / stereo::kCostScale;
    const int px = threadIdx.x & 31, kb = threadIdx.x & ~31;
    const u64 l = lcodes[px];
    const u64* cp = codes + px + Dp - 1 - kb;  // candidate kb + i: column x - min_d - kb - i
    unsigned* trow = tile + px * pitch + kb / 4;
    auto make = [&](auto all) {
#pragma unroll
        for (int w = 0; w < 8; ++w) {
            unsigned v = 0;
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int i = 4 * w + j;
                const unsigned c = static_cast<unsigned>(min(__popcll(l ^ cp[-i]), mc));
                v |= (decltype(all)::value || kb + i < D ? c : 0u) << (8 * j);
            }
            trow[w] = v;
        }
    };
    if (kb + 32 <= D)  // warp-uniform
        make(std::true_type{});
    else
        make(std::false_type{});
    __syncthreads();
    const int n = min(kCostPixels, W - x0) << qshift;
    unsigned* dst = cost + ((row + x0) << qshift);
    for (int i = threadIdx.x; i < n; i += blockDim.x)
        dst[i] = tile[(i >> qshift) * pitch + (i & (q - 1))];
}

__global__ void sgm_window_kernel(const u16* __restrict__ in, u16* __restrict__ out, int W, int H,
                                  int D, int rad) {
    const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
    const int y = blockIdx.y;
    if (i >= static_cast<long long>(W) * D) return;
    const int x = static_cast<int>(i / D), k = static_cast<int>(i % D);
    std::int64_t sum = 0;
    for (int a = -rad; a <= rad; ++a)
        for (int b = -rad; b <= rad; ++b)
            sum += in[(static_cast<std::size_t>(clampi(y + a, 0, H - 1)) * W +
                       clampi(x + b, 0, W - 1)) *
                          D +
                      k];
    out[static_cast<std::size_t>(y) * W * D + i] =
        static_cast<u16>(stereo::window_mean(sum, (2 * rad + 1) * (2 * rad + 1)));
}

// Where a path line starts and how many pixels it has.
struct PathLine {
    int x, y, len;
};
__device__ __forceinline__ bool path_line(int line, int W, int H, int dx, int dy, PathLine& p) {
    if (dy == 0) {
        if (line >= H) return false;
        p = {dx > 0 ? 0 : W - 1, line, W};
    } else if (dx == 0) {
        if (line >= W) return false;
        p = {line, dy > 0 ? 0 : H - 1, H};
    } else {
        if (line >= W + H - 1) return false;
        if (line < W) {
            p.x = line;
            p.y = dy > 0 ? 0 : H - 1;
        } else {
            const int j = line - W + 1;
            p.x = dx > 0 ? 0 : W - 1;
            p.y = dy > 0 ? j : H - 1 - j;
        }
        p.len = min(dx > 0 ? W - p.x : p.x + 1, dy > 0 ? H - p.y : p.y + 1);
    }
    return true;
}

// One step of a lane's KPL path costs L (disparities lane * KPL + i) from the pixel's costs c
// and the previous minimum pmin (updated); the first pixel of a line takes its costs.
template <int KPL>
__device__ __forceinline__ void sgm_lane_step(const int* c, int* L, int& pmin, bool first, int lane,
                                              int D, int p1, int p2) {
    constexpr int kBig = stereo::kSgmBig;
    int nl[KPL];
    if (first) {
#pragma unroll
        for (int i = 0; i < KPL; ++i) nl[i] = c[i];
    } else {
        const int from_left = __shfl_up_sync(0xffffffffu, L[KPL - 1], 1);
        const int from_right = __shfl_down_sync(0xffffffffu, L[0], 1);
#pragma unroll
        for (int i = 0; i < KPL; ++i) {
            const int below = i > 0 ? L[i - 1] : (lane > 0 ? from_left : kBig);
            const int above = i + 1 < KPL ? L[i + 1] : (lane < 31 ? from_right : kBig);
            nl[i] = stereo::sgm_step(c[i], L[i], below, above, pmin, p1, p2);
        }
    }
    int m = kBig;
#pragma unroll
    for (int i = 0; i < KPL; ++i) {
        if (lane * KPL + i >= D) nl[i] = kBig;  // beyond the range: never a neighbour
        m = min(m, nl[i]);
        L[i] = nl[i];
    }
    pmin = __reduce_min_sync(0xffffffffu, m);
}

// Words: the line's costs from the 16-bit cube, its path costs added into the sum cube.
template <int KPL>
__global__ void sgm_path_kernel(const u16* __restrict__ cost, u16* __restrict__ sums, int W, int H,
                                int D, int dx, int dy, int p1, int p2) {
    const int lane = threadIdx.x & 31;
    const int line =
        static_cast<int>((static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) >> 5);
    PathLine pl;
    if (!path_line(line, W, H, dx, dy, pl)) return;
    const std::ptrdiff_t step = (static_cast<std::ptrdiff_t>(dy) * W + dx) * D;
    const u16* cp = cost + (static_cast<std::size_t>(pl.y) * W + pl.x) * D;
    u16* sp = sums + (static_cast<std::size_t>(pl.y) * W + pl.x) * D;
    int c[KPL], sv[KPL], L[KPL];
    auto load = [&](const u16* cc, const u16* ss, int* co, int* so) {
#pragma unroll
        for (int i = 0; i < KPL; ++i) {
            const int k = lane * KPL + i;
            co[i] = k < D ? cc[k] : 0;
            so[i] = k < D ? ss[k] : 0;
        }
    };
    load(cp, sp, c, sv);
    int pmin = 0;
    for (int t = 0; t < pl.len; ++t, cp += step, sp += step) {
        int cn[KPL], sn[KPL];
        if (t + 1 < pl.len) load(cp + step, sp + step, cn, sn);
        sgm_lane_step<KPL>(c, L, pmin, t == 0, lane, D, p1, p2);
#pragma unroll
        for (int i = 0; i < KPL; ++i) {
            const int k = lane * KPL + i;
            if (k < D) sp[k] = static_cast<u16>(sv[i] + L[i]);
            c[i] = cn[i];
            sv[i] = sn[i];
        }
    }
}

// The path directions of one launch (blockIdx.y: direction kSgmDirs[blockIdx.y]).
struct SgmDirs {
    signed char dx[8], dy[8];
};
// Bytes: the step on pairs of 16-bit path costs (disparities KPL gl + 2j and + 2j + 1 in the low
// and high halves of word j), two at a time in the sm_90 16-bit SIMD minimum (min.u16x2) and in
// plain 32-bit adds that never carry between the halves (every value is at most 0x3fff + 255);
// a line of G lanes (32 / G lines a warp, G KPL = Dp); the line's costs from the byte cube (Dp
// bytes a pixel) kAhead pixels ahead, its path costs into the direction's own byte cube. Every
// load is unconditional (the line's last pixel is read again past its end), so that the
// compiler counts them on its scoreboards and waits for each ring slot alone (with the loads
// under a branch it waited for all of them at every pixel: 3.5 against 2.5 ms, 4 paths on Aloe).
template <int KPL, int G, int kAhead>
__global__ void sgm_path_bytes_kernel(const u8* __restrict__ cost, u8* __restrict__ out, int W,
                                      int H, int D, int Dp, SgmDirs dirs, std::size_t vol, int p1,
                                      int p2) {
    static_assert(KPL >= 2 && (G == 16 || G == 32), "pairs of disparities, half or whole warps");
    constexpr int kP = KPL / 2;
    constexpr unsigned kBig2 = 0x3fff3fffu;
    const int lane = threadIdx.x & 31, gl = lane & (G - 1);
    const int line =
        static_cast<int>((static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x) / G);
    const int r = static_cast<int>(blockIdx.y), dx = dirs.dx[r], dy = dirs.dy[r];
    PathLine pl;
    const bool live = path_line(line, W, H, dx, dy, pl);
    // The warp's lines run together (their lanes meet in the shuffles and reductions): a line
    // past the last, or shorter than its partner, repeats its last pixel without storing.
    int last = live ? pl.len - 1 : -1;
    if (!live) pl = {0, 0, 1};
    int steps = live ? pl.len : 0;
    if constexpr (G == 16) steps = max(steps, __shfl_xor_sync(0xffffffffu, steps, 16));
    if (steps == 0) return;  // warp-uniform
    const std::ptrdiff_t step = (static_cast<std::ptrdiff_t>(dy) * W + dx) * Dp;
    const u8* const c0 = cost + (static_cast<std::size_t>(pl.y) * W + pl.x) * Dp + gl * KPL;
    u8* const o0 = out + r * vol + (static_cast<std::size_t>(pl.y) * W + pl.x) * Dp + gl * KPL;
    const int lastc = max(last, 0);
    const unsigned P1 = static_cast<unsigned>(p1) * 0x10001u,
                   P2 = static_cast<unsigned>(p2) * 0x10001u;
    unsigned beyond[kP];
#pragma unroll
    for (int j = 0; j < kP; ++j) {
        const int k = gl * KPL + 2 * j;
        beyond[j] = (k >= D ? 0x3fffu : 0u) | (k + 1 >= D ? 0x3fff0000u : 0u);
    }
    LaneBytes<KPL> ring[kAhead];
#pragma unroll
    for (int j = 0; j < kAhead; ++j) ring[j].load(c0 + min(j, lastc) * step);
    unsigned L[kP], pmin2 = 0;
    for (int t0 = 0; t0 < steps; t0 += kAhead) {
#pragma unroll
        for (int a = 0; a < kAhead; ++a) {
            const int t = t0 + a;
            unsigned c2[kP];
#pragma unroll
            for (int j = 0; j < kP; ++j)
                c2[j] = __byte_perm(ring[a].w[j >> 1], 0, (j & 1) ? 0x4342 : 0x4140);
            ring[a].load(c0 + min(t + kAhead, lastc) * step);
            if (t < steps) {  // warp-uniform
                unsigned nl[kP];
                if (t == 0) {
#pragma unroll
                    for (int j = 0; j < kP; ++j) nl[j] = c2[j];
                } else {
                    unsigned fl = __shfl_up_sync(0xffffffffu, L[kP - 1], 1, G);
                    unsigned fr = __shfl_down_sync(0xffffffffu, L[0], 1, G);
                    if (gl == 0) fl = kBig2;
                    if (gl == G - 1) fr = kBig2;
                    const unsigned cap = pmin2 + P2;
#pragma unroll
                    for (int j = 0; j < kP; ++j) {
                        const unsigned below = __byte_perm(j > 0 ? L[j - 1] : fl, L[j], 0x5432);
                        const unsigned above =
                            __byte_perm(L[j], j + 1 < kP ? L[j + 1] : fr, 0x5432);
                        const unsigned m = __vimin3_u16x2(__vminu2(below, above) + P1, L[j], cap);
                        nl[j] = m + c2[j] - pmin2;
                    }
                }
                unsigned mm = 0xffffffffu;
#pragma unroll
                for (int j = 0; j < kP; ++j) {
                    nl[j] = __vmaxu2(nl[j], beyond[j]);
                    mm = __vminu2(mm, nl[j]);
                    L[j] = nl[j];
                }
                const unsigned lm = min(mm & 0xffffu, mm >> 16);
                unsigned pm;
                if constexpr (G == 32) {
                    pm = __reduce_min_sync(0xffffffffu, lm);
                } else {
                    const unsigned lo = __reduce_min_sync(0xffffffffu, lane < 16 ? lm : ~0u);
                    const unsigned hi = __reduce_min_sync(0xffffffffu, lane < 16 ? ~0u : lm);
                    pm = lane < 16 ? lo : hi;
                }
                pmin2 = pm * 0x10001u;
                if (t <= last) {
                    LaneBytes<KPL> o;
                    if constexpr (KPL == 2) {
                        o.w[0] = __byte_perm(nl[0], 0, 0x20);
                    } else {
#pragma unroll
                        for (int w = 0; w < KPL / 4; ++w)
                            o.w[w] = __byte_perm(nl[2 * w], nl[2 * w + 1], 0x6420);
                    }
                    o.store(o0 + t * step);
                }
            }
        }
    }
}

// The sums S(x, y, d) the search reads: the Words sum cube, or the Bytes layout's P direction
// cubes added. A lane's sums come in pairs: word j holds those of d = KPL lane + 2j (low half)
// and + 1 (high half); every sum fits 16 bits (a Words sum by its plan's check, a Bytes sum is
// at most 8 x 255).
struct WordSums {
    const u16* S;
    int D;
    template <int KPL>
    struct Raw {
        unsigned s2[KPL / 2];
    };
    template <int KPL>
    __device__ __forceinline__ void load(std::size_t p, int lane, Raw<KPL>& r) const {
#pragma unroll
        for (int j = 0; j < KPL / 2; ++j) {
            const int k = lane * KPL + 2 * j;
            r.s2[j] = (k < D ? S[p * D + k] : 0u) | (k + 1 < D ? S[p * D + k + 1] : 0u) << 16;
        }
    }
    template <int KPL>
    __device__ __forceinline__ void pairs(const Raw<KPL>& r, unsigned* s2) const {
#pragma unroll
        for (int j = 0; j < KPL / 2; ++j) s2[j] = r.s2[j];
    }
    __device__ __forceinline__ int at(std::size_t p, int k) const { return S[p * D + k]; }
};
template <int P>
struct ByteSums {
    const u8* v;
    std::size_t vol;  // bytes per direction cube
    int Dp;
    template <int KPL>
    struct Raw {
        LaneBytes<KPL> b[P];
    };
    template <int KPL>
    __device__ __forceinline__ void load(std::size_t p, int lane, Raw<KPL>& r) const {
#pragma unroll
        for (int j = 0; j < P; ++j) r.b[j].load(v + j * vol + p * Dp + lane * KPL);
    }
    template <int KPL>
    __device__ __forceinline__ void pairs(const Raw<KPL>& r, unsigned* s2) const {
#pragma unroll
        for (int j = 0; j < KPL / 2; ++j) {
            // bytes 2j, 2j + 1 of each cube widened to the halves of a word (no carries: <= 2040)
            const int sel = (j & 1) ? 0x4342 : 0x4140;
            s2[j] = __byte_perm(r.b[0].w[j >> 1], 0, sel);
#pragma unroll
            for (int c = 1; c < P; ++c) s2[j] += __byte_perm(r.b[c].w[j >> 1], 0, sel);
        }
    }
    __device__ __forceinline__ int at(std::size_t p, int k) const {
        int s = 0;
#pragma unroll
        for (int j = 0; j < P; ++j) s += v[j * vol + p * Dp + k];
        return s;
    }
};

// nb: W x H words (the sums of the left winner's neighbours, before | after << 16); far: W x H
// sums (uniqueness > 0: the smallest sum two or more candidates from the winner; -1: none), else
// null.
template <int KPL, class Sums>
__global__ void sgm_wta_kernel(Sums sums, int W, int H, int D, int min_d, int uniqueness,
                               int lr_check, bool subpixel, float invalid,
                               unsigned* __restrict__ nb, int* __restrict__ far,
                               Span2D<float> disparity, Span2D<float> right_disparity,
                               Span2D<std::uint8_t> valid) {
    static_assert(KPL >= 2, "pairs of candidates");
    constexpr int kP = KPL / 2;
    extern __shared__ unsigned keys[];  // right keys (W), then left keys (W)
    const int y = blockIdx.x, tid = threadIdx.x, lane = tid & 31, warp = tid >> 5,
              nw = blockDim.x >> 5;
    unsigned* rkey = keys;
    unsigned* lkey = keys + W;
    for (int i = tid; i < W; i += blockDim.x) rkey[i] = 0xffffffffu;
    __syncthreads();
    const std::size_t row = static_cast<std::size_t>(y) * W;
    const int k0 = lane * KPL;
    unsigned kw[kP];  // the pairs' candidates, as the keys' low halves
#pragma unroll
    for (int j = 0; j < kP; ++j)
        kw[j] = static_cast<unsigned>(k0 + 2 * j) | static_cast<unsigned>(k0 + 2 * j + 1) << 16;
    // Pixel x's winner, its neighbours' sums and its competitor, from its sums s2 (in pairs);
    // each candidate's key (S << 16) | k offered to the right pixel x - min_d - k.
    auto search_pixel = [&](int x, const unsigned* s2) {
        const int khi = min(D - 1, x - min_d), klo = max(0, x - min_d - (W - 1));
        unsigned m = 0xffffffffu;
        unsigned* rk = rkey + (x - min_d - k0);
        auto offer = [&](auto checked) {  // checked: some candidates of the lane are out of range
#pragma unroll
            for (int j = 0; j < kP; ++j) {
                const int k = k0 + 2 * j;
                if (!decltype(checked)::value || (k >= klo && k <= khi)) {
                    const unsigned lo = __byte_perm(s2[j], kw[j], 0x1054);
                    m = min(m, lo);
                    atomicMin(rk - 2 * j, lo);
                }
                if (!decltype(checked)::value || (k + 1 >= klo && k + 1 <= khi)) {
                    const unsigned hi = __byte_perm(s2[j], kw[j], 0x3276);
                    m = min(m, hi);
                    atomicMin(rk - 2 * j - 1, hi);
                }
            }
        };
        if (k0 >= klo && k0 + KPL - 1 <= khi)
            offer(std::false_type{});
        else
            offer(std::true_type{});
        m = __reduce_min_sync(0xffffffffu, m);
        // The sum of candidate k (warp-uniform) from the lane that holds it.
        auto pick = [&](int k) {
            const int j = (k & (KPL - 1)) >> 1;  // warp-uniform
            unsigned v = s2[0];
#pragma unroll
            for (int i = 1; i < kP; ++i)
                if (j == i) v = s2[i];
            v = __shfl_sync(0xffffffffu, v, k / KPL);
            return (k & 1) ? v >> 16 : v & 0xffffu;
        };
        const int kb = static_cast<int>(m & 0xffffu);
        if (m != 0xffffffffu) {
            const unsigned before = kb > klo ? pick(kb - 1) : 0u;
            const unsigned after = kb < khi ? pick(kb + 1) : 0u;
            if (lane == 0) nb[row + x] = before | after << 16;
        }
        if (lane == 0) lkey[x] = m;
        if (far) {
            unsigned f = 0xffffffffu;
#pragma unroll
            for (int i = 0; i < KPL; ++i) {
                const int k = k0 + i;
                if (k >= klo && k <= khi && (k < kb - 1 || k > kb + 1))
                    f = min(f, (s2[i >> 1] >> (16 * (i & 1))) & 0xffffu);
            }
            f = __reduce_min_sync(0xffffffffu, f);
            if (lane == 0) far[row + x] = f == 0xffffffffu ? -1 : static_cast<int>(f);
        }
    };
    // The warp's next kAhead pixels' sums load while this one's are searched (unconditionally:
    // the row's last pixel again past its end); they are added when searched.
    constexpr int kAhead = 2;
    typename Sums::template Raw<KPL> ring[kAhead];
#pragma unroll
    for (int a = 0; a < kAhead; ++a) sums.load(row + min(warp + a * nw, W - 1), lane, ring[a]);
    for (int x0 = warp; x0 < W; x0 += kAhead * nw) {
#pragma unroll
        for (int a = 0; a < kAhead; ++a) {
            const int x = x0 + a * nw;
            unsigned s2[kP];
            sums.pairs(ring[a], s2);
            sums.load(row + min(x + kAhead * nw, W - 1), lane, ring[a]);
            if (x < W) search_pixel(x, s2);
        }
    }
    __syncthreads();
    for (int x = tid; x < W; x += blockDim.x) {
        const int khi = min(D - 1, x - min_d), klo = max(0, x - min_d - (W - 1));
        stereo::Winner w;
        if (klo <= khi) {
            const int kb = static_cast<int>(lkey[x] & 0xffffu);
            w.best = static_cast<std::int32_t>(lkey[x] >> 16);
            w.best_d = min_d + kb;
            if (kb > klo) w.before = static_cast<std::int32_t>(nb[row + x] & 0xffffu);
            if (kb < khi) w.after = static_cast<std::int32_t>(nb[row + x] >> 16);
            if (far) w.far = far[row + x];
        }
        bool ok = w.best >= 0 && stereo::unique_enough(w, uniqueness);
        if (ok && lr_check >= 0) {
            const unsigned r = rkey[x - w.best_d];
            const int diff = w.best_d - (min_d + static_cast<int>(r & 0xffffu));
            ok = r != 0xffffffffu && abs(diff) <= lr_check;
        }
        disparity.row(y)[x] = ok ? stereo::refined(w, subpixel) : invalid;
        if (valid.data) valid.row(y)[x] = ok ? 255 : 0;
        if (right_disparity.data) {
            stereo::Winner o;
            const unsigned r = rkey[x];
            if (r != 0xffffffffu) {
                const int k = static_cast<int>(r & 0xffffu), xl = x + min_d + k;
                o.best = static_cast<std::int32_t>(r >> 16);
                o.best_d = min_d + k;
                if (k > 0 && xl - 1 >= 0) o.before = sums.at(row + xl - 1, k - 1);
                if (k + 1 < D && xl + 1 < W) o.after = sums.at(row + xl + 1, k + 1);
            }
            right_disparity.row(y)[x] = o.best >= 0 ? stereo::refined(o, subpixel) : invalid;
        }
    }
}

// The disparities per lane: the smallest of 1, 2, 4, ..., 32 with 32 KPL >= D (D <= 1024); the
// Bytes layout's lanes take pairs (at least 2).
int sgm_kpl(int D, bool bytes = false) {
    int k = bytes ? 2 : 1;
    while (32 * k < D) k *= 2;
    return k;
}
// f(std::integral_constant<int, kpl>).
template <class F>
void with_kpl(int kpl, F&& f) {
    switch (kpl) {
        case 1:
            return f(std::integral_constant<int, 1>{});
        case 2:
            return f(std::integral_constant<int, 2>{});
        case 4:
            return f(std::integral_constant<int, 4>{});
        case 8:
            return f(std::integral_constant<int, 8>{});
        case 16:
            return f(std::integral_constant<int, 16>{});
        default:
            return f(std::integral_constant<int, 32>{});
    }
}

template <class Sums>
void launch_sgm_wta(const Sums& sums, int W, int H, int kpl, const StereoPlan& plan,
                    const Outputs& out, cudaStream_t s) {
    DeviceTemp far;
    if (plan.uniqueness > 0)
        far = DeviceTemp(static_cast<std::size_t>(W) * H * sizeof(int), s,
                         "stereo (sgm uniqueness sums)");
    const DeviceTemp nb(static_cast<std::size_t>(W) * H * sizeof(unsigned), s,
                        "stereo (sgm winners' neighbours)");
    constexpr int kThreads = 256;
    kpl = std::max(kpl, 2);
    const std::size_t smem = 2 * sizeof(unsigned) * static_cast<std::size_t>(W);
    with_kpl(kpl, [&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (K >= 2) {
            UPRES_CUDA_CHECK(cudaFuncSetAttribute(sgm_wta_kernel<K, Sums>,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(smem)));
            sgm_wta_kernel<K, Sums><<<H, kThreads, smem, s>>>(
                sums, W, H, plan.num_d, plan.min_d, plan.uniqueness, plan.lr_check, plan.subpixel,
                plan.invalid, nb.as<unsigned>(), far.as<int>(), out.disparity, out.right_disparity,
                out.valid);
        }
    });
    UPRES_CUDA_CHECK_LAUNCH();
}

constexpr int kSgmDirs[8][2] = {{1, 0}, {-1, 0}, {0, 1},  {0, -1},
                                {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};

int path_lines(int W, int H, int r) {
    const int dx = kSgmDirs[r][0], dy = kSgmDirs[r][1];
    return dy == 0 ? H : (dx == 0 ? W : W + H - 1);
}

void run_sgm_bytes(const CensusCost& src, int W, int H, const StereoPlan& plan, const Outputs& out,
                   cudaStream_t s) {
    constexpr int k = stereo::kCostScale;
    const int D = plan.num_d, kpl = sgm_kpl(D, true);
    const int Dp = 32 * kpl;  // a lane's KPL bytes aligned
    const std::size_t vol = static_cast<std::size_t>(W) * H * Dp;
    DeviceTemp cost(vol, s, "stereo (sgm cost cube)");
    DeviceTemp paths(vol * plan.sgm_paths, s, "stereo (sgm path costs)");
    int qshift = 0;  // Dp / 4 = 1 << qshift
    while ((4 << qshift) < Dp) ++qshift;
    const std::size_t smem =
        sizeof(u64) * (Dp + 2 * kCostPixels - 1) + sizeof(unsigned) * kCostPixels * (Dp / 4 + 1);
    const dim3 gc(static_cast<unsigned>((W + kCostPixels - 1) / kCostPixels), H);
    sgm_cost_bytes_kernel<<<gc, Dp, smem, s>>>(src, W, plan.min_d, D, Dp, qshift,
                                               cost.as<unsigned>());
    UPRES_CUDA_CHECK_LAUNCH();
    // Every direction in one launch, each into its own cube: one direction at a time left most
    // of the H200 idle (a path line is a chain of dependent steps; Aloe has 1110 or 1282 lines a
    // direction): 1.48 against 1.07 ms for 4 paths (32-bit steps). Half-warp lines with 4 paths
    // (4784 lines on Aloe then fit the H200 at once): 0.78 -> 0.76 ms; whole-warp lines with 8
    // (14348 lines, most of them short diagonals): 2.52 against 2.56 ms in all.
    SgmDirs dirs{};
    int lines = 0;
    for (int r = 0; r < plan.sgm_paths; ++r) {
        dirs.dx[r] = static_cast<signed char>(kSgmDirs[r][0]);
        dirs.dy[r] = static_cast<signed char>(kSgmDirs[r][1]);
        lines = std::max(lines, path_lines(W, H, r));
    }
    const int p1 = plan.p1 / k, p2 = plan.p2 / k;
    with_kpl(kpl, [&](auto kc) {
        constexpr int K = decltype(kc)::value;
        if constexpr (K >= 2) {
            if (plan.sgm_paths == 4 && K <= 16) {  // 16 lanes a line, 2 K disparities a lane
                const dim3 grid((lines + 7) / 8, plan.sgm_paths);
                sgm_path_bytes_kernel<2 * K, 16, 4><<<grid, 128, 0, s>>>(
                    cost.as<u8>(), paths.as<u8>(), W, H, D, Dp, dirs, vol, p1, p2);
            } else {
                const dim3 grid((lines + 3) / 4, plan.sgm_paths);
                sgm_path_bytes_kernel<K, 32, (K > 8 ? 128 / K : 8)><<<grid, 128, 0, s>>>(
                    cost.as<u8>(), paths.as<u8>(), W, H, D, Dp, dirs, vol, p1, p2);
            }
        }
    });
    UPRES_CUDA_CHECK_LAUNCH();
    if (plan.sgm_paths == 8)
        launch_sgm_wta(ByteSums<8>{paths.as<u8>(), vol, Dp}, W, H, kpl, plan, out, s);
    else
        launch_sgm_wta(ByteSums<4>{paths.as<u8>(), vol, Dp}, W, H, kpl, plan, out, s);
}

template <class Src>
void run_sgm(const Src& src, int W, int H, const StereoPlan& plan, const Outputs& out,
             cudaStream_t s) {
    const int D = plan.num_d;
    if (W > kSgmCudaMaxWidth)  // stereo.cpp refuses it first, with the message for users
        throw Error(ErrorCode::Internal, "stereo: sgm row wider than kSgmCudaMaxWidth");
    if constexpr (std::is_same_v<Src, CensusCost>)
        if (sgm_bytes(plan)) return run_sgm_bytes(src, W, H, plan, out, s);
    const std::size_t n = static_cast<std::size_t>(W) * H * D;
    DeviceTemp cost(n * sizeof(u16), s, "stereo (sgm cost cube)");
    DeviceTemp sums(n * sizeof(u16), s, "stereo (sgm path sums)");
    const dim3 gc(static_cast<unsigned>((static_cast<long long>(W) * D + 255) / 256), H);
    sgm_cost_kernel<<<gc, 256, 0, s>>>(src, W, H, plan.min_d, D, cost.as<u16>());
    UPRES_CUDA_CHECK_LAUNCH();
    const u16* c = cost.as<u16>();
    DeviceTemp mean;
    if (plan.sgm_radius > 0) {
        mean = DeviceTemp(n * sizeof(u16), s, "stereo (sgm cost cube)");
        sgm_window_kernel<<<gc, 256, 0, s>>>(c, mean.as<u16>(), W, H, D, plan.sgm_radius);
        UPRES_CUDA_CHECK_LAUNCH();
        c = mean.as<u16>();
    }
    UPRES_CUDA_CHECK(cudaMemsetAsync(sums.get(), 0, n * sizeof(u16), s));
    for (int r = 0; r < plan.sgm_paths; ++r) {
        const dim3 grid((path_lines(W, H, r) + 3) / 4);
        with_kpl(sgm_kpl(D), [&](auto kpl) {
            sgm_path_kernel<decltype(kpl)::value><<<grid, 128, 0, s>>>(
                c, sums.as<u16>(), W, H, D, kSgmDirs[r][0], kSgmDirs[r][1], plan.p1, plan.p2);
        });
        UPRES_CUDA_CHECK_LAUNCH();
    }
    launch_sgm_wta(WordSums{sums.as<u16>(), D}, W, H, sgm_kpl(D), plan, out, s);
}

// The 3 x 3 median of valid neighbours (stereo_post.cpp's rule) from `in` / `mask` into out.
__global__ void median_kernel(const float* __restrict__ in, Span2D<std::uint8_t> mask,
                              Span2D<float> out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    const int W = mask.width, H = mask.height;
    if (x >= W) return;
    if (!mask.row(y)[x]) return;
    float v[9];
    int m = 0;
    for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
            const int xx = x + dx, yy = y + dy;
            if (xx >= 0 && xx < W && yy >= 0 && yy < H && mask.row(yy)[xx])
                v[m++] = in[static_cast<std::size_t>(yy) * W + xx];
        }
    for (int i = 1; i < m; ++i)  // insertion sort of at most 9
        for (int j = i; j > 0 && v[j] < v[j - 1]; --j) {
            const float t = v[j];
            v[j] = v[j - 1];
            v[j - 1] = t;
        }
    out.row(y)[x] = v[(m - 1) / 2];
}

// The median with a check (stereo_median_check's device form): 1 where the right map is valid.
__global__ void finite_mask_kernel(Span2D<float> in, Span2D<std::uint8_t> mask) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < in.width) mask.row(y)[x] = isnan(in.row(y)[x]) ? 0 : 1;
}

// The check on the filtered maps; the left map's invalid pixels take `invalid`.
__global__ void filtered_check_kernel(Span2D<float> disparity, Span2D<std::uint8_t> mask,
                                      Span2D<float> right, int lr_check, float invalid) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    const int W = disparity.width;
    if (x >= W) return;
    float& d = disparity.row(y)[x];
    bool ok = mask.row(y)[x] != 0;
    if (ok) {
        const int xr = x - __float2int_rn(d);
        ok = xr >= 0 && xr < W && !isnan(right.row(y)[xr]) &&
             stereo::filtered_agree(d, right.row(y)[xr], lr_check);
        if (!ok) mask.row(y)[x] = 0;
    }
    if (!ok) d = invalid;
}

__global__ void nan_to_kernel(Span2D<float> map, float invalid) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < map.width && isnan(map.row(y)[x])) map.row(y)[x] = invalid;
}

__global__ void copy_plane_kernel(Span2D<float> in, float* __restrict__ out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
    if (x < in.width) out[static_cast<std::size_t>(y) * in.width + x] = in.row(y)[x];
}

template <class Src>
void run_int(const Src& src, int W, int H, const StereoPlan& plan, StereoVariant variant,
             const Outputs& out, cudaStream_t s) {
    if (plan.sgm_paths > 0)
        run_sgm(src, W, H, plan, out, s);
    else if (variant == StereoVariant::Stream)
        run_stream(src, src, W, H, plan, out, s);
    else
        run_cube(src, W, H, plan, variant == StereoVariant::Cube2, out, s);
}

template <class T>
void stereo_matcher(Span2D<const T> left, Span2D<const T> right, const StereoPlan& plan,
                    StereoVariant variant, const Outputs& out, cudaStream_t s) {
    const int W = left.width, H = left.height;
    const std::size_t n = static_cast<std::size_t>(W) * H;
    const bool fast = plan.sgm_paths == 0 && float_path(plan, variant, W, H);
    const float max_c = static_cast<float>(plan.max_q / stereo::kCostScale);
    if (plan.census) {
        DeviceTemp codes(2 * n * sizeof(u64), s, "stereo (census codes)");
        u64* cl = codes.as<u64>();
        using P = std::conditional_t<std::is_same_v<T, float>, double, float>;
        const dim3 gc((W + kCensusTx - 1) / kCensusTx, (H + kCensusTy - 1) / kCensusTy, 2);
        census_pair_kernel<T, P><<<gc, dim3(kCensusTx, kCensusTy), 0, s>>>(left, right, cl);
        UPRES_CUDA_CHECK_LAUNCH();
        const CensusCost ic{cl, cl + n, W, plan.max_q};
        if (fast)
            run_stream(CensusFloat{cl, cl + n, W, max_c}, ic, W, H, plan, out, s);
        else
            run_int(ic, W, H, plan, variant, out, s);
        return;
    }
    if constexpr (std::is_same_v<T, std::uint8_t>) {
        if (fast && left.channels == 1) {
            DeviceTemp planes(2 * n * sizeof(float), s, "stereo (float images)");
            float* fl = planes.as<float>();
            gray_to_float_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(left, fl);
            UPRES_CUDA_CHECK_LAUNCH();
            gray_to_float_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(right, fl + n);
            UPRES_CUDA_CHECK_LAUNCH();
            run_stream(AdGrayFloat{fl, fl + n, W, max_c},
                       AdCost<std::uint8_t, 1>{left, right, plan.max_q}, W, H, plan, out, s);
            return;
        }
    }
    if (left.channels == 1)
        run_int(AdCost<T, 1>{left, right, plan.max_q}, W, H, plan, variant, out, s);
    else
        run_int(AdCost<T, 3>{left, right, plan.max_q}, W, H, plan, variant, out, s);
}

}  // namespace

template <class T>
void stereo(Span2D<const T> left, Span2D<const T> right, Span2D<float> disparity,
            Span2D<float> right_disparity, Span2D<std::uint8_t> valid, const StereoPlan& plan,
            StereoVariant variant, void* stream) {
    const cudaStream_t s = static_cast<cudaStream_t>(stream);
    const int W = left.width, H = left.height;
    const std::size_t n = static_cast<std::size_t>(W) * H;
    // The median reads the validity mask: the caller's, or a temporary one. With a check it
    // filters both maps first (stereo_median_check): the matcher runs without the check, NaN for
    // invalid pixels, and writes the right map (the caller's, or a temporary one).
    const bool median_check = median_before_check(plan);
    DeviceTemp own_mask, own_right;
    Span2D<std::uint8_t> mask = valid;
    if (plan.median && !mask.data) {
        own_mask = DeviceTemp(n, s, "stereo (validity mask)");
        mask = {own_mask.as<std::uint8_t>(), W, H, 1, W};
    }
    Span2D<float> rmap = right_disparity;
    if (median_check && !rmap.data) {
        own_right = DeviceTemp(n * sizeof(float), s, "stereo (right map)");
        rmap = {own_right.as<float>(), W, H, 1, W};
    }
    stereo_matcher(left, right, matcher_plan(plan), variant, Outputs{disparity, rmap, mask}, s);
    if (plan.median) {
        DeviceTemp copy(n * sizeof(float), s, "stereo (median)");
        copy_plane_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(disparity, copy.as<float>());
        UPRES_CUDA_CHECK_LAUNCH();
        median_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(copy.as<float>(), mask, disparity);
        UPRES_CUDA_CHECK_LAUNCH();
        if (median_check) {
            const DeviceTemp rmask_mem(n, s, "stereo (right validity)");
            const Span2D<std::uint8_t> rmask{rmask_mem.as<std::uint8_t>(), W, H, 1, W};
            finite_mask_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(rmap, rmask);
            UPRES_CUDA_CHECK_LAUNCH();
            copy_plane_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(rmap, copy.as<float>());
            UPRES_CUDA_CHECK_LAUNCH();
            median_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(copy.as<float>(), rmask, rmap);
            UPRES_CUDA_CHECK_LAUNCH();
            filtered_check_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(disparity, mask, rmap,
                                                                       plan.lr_check, plan.invalid);
            UPRES_CUDA_CHECK_LAUNCH();
            nan_to_kernel<<<rows_grid(W, H, 128), 128, 0, s>>>(rmap, plan.invalid);
            UPRES_CUDA_CHECK_LAUNCH();
        }
    }
}

template void stereo(Span2D<const std::uint8_t>, Span2D<const std::uint8_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&, StereoVariant, void*);
template void stereo(Span2D<const std::uint16_t>, Span2D<const std::uint16_t>, Span2D<float>,
                     Span2D<float>, Span2D<std::uint8_t>, const StereoPlan&, StereoVariant, void*);
template void stereo(Span2D<const float>, Span2D<const float>, Span2D<float>, Span2D<float>,
                     Span2D<std::uint8_t>, const StereoPlan&, StereoVariant, void*);

}  // namespace upres::cuda
