// SRCNN, the whole network in one kernel on tensor cores (srcnn_backends.hpp, namespace cuda;
// docs/ops/srcnn.md, section "Fused tensor-core network").
//
// Shapes: 9-1-5 with n1 = 64, n2 = 32 (the shipped models); fused_supports() is false for any
// other shape (9-5-5, other channel counts), and the engine then runs per-layer kernels.
//
// Schedule (persistent CTAs of 8 warps, one per SM, looping over output tiles of 28 x 60 pixels
// in the 16-bit modes and 28 x 28 in the 32-bit ones, whose weights take shared memory):
//  * The input tile (halo + the 4-pixel radius of layer 1: 40 x 72 or 40 x 40) is read from
//    global memory at clamped coordinates (replication border), converted to the mode's operand
//    type (fp16 / bf16 / tf32-rounded fp32 / fp32) and stored in shared memory. The next tile's
//    input is prefetched into registers while the current one is computed.
//  * Layers 1 and 2 run on the halo region (32 x 64 or 32 x 32 pixels: the output tile + 2 on
//    each side) as GEMMs with M = pixels: a warp takes M-tiles of 16 pixels (2 x 8 consecutive
//    pixels of one halo row; two M-tiles at a time in the 32-bit modes, sharing each weight
//    fragment read from shared memory). Layer 1: K = 81 taps (im2col
//    gathered from shared memory on the fly, padded to 88 = 5 k16 + 1 k8 steps in 16-bit modes,
//    11 k8 steps in TF32 modes), N = 64, accumulators initialised with the bias. Bias + ReLU, and
//    the accumulators are re-packed in registers as layer 2's A operand (the mma C layout is the
//    A layout; in TF32 modes the K order of layer 2 is permuted to match). Layer 2: K = 64,
//    N = 32, + bias + ReLU, re-packed again as the A operand of
//  * layer 3 as a product P = H2 * W3' with W3' = 32 channels x 25 taps (N padded to 32): P holds,
//    for every halo pixel q and tap t, the contribution of q to the output at q - offset(t).
//    P (fp32) goes to shared memory; then out(p) = b3 + sum_t P(clamp(p + offset(t)), t), where
//    clamp() maps halo positions outside the image to the clamped in-image position, so the
//    layer-2 values read at the image border are those of clamped positions (the reference's
//    replication border of layer 3). Halo positions outside the image are computed (from clamped
//    inputs) but never read.
//  * Precisions: Fp16 / Bf16: m16n8k16 (+ one m16n8k8) with 16-bit inputs, weights and
//    intermediates, FP32 accumulation; weights of all layers in registers. Tf32: m16n8k8 tf32,
//    operands rounded to TF32 (cvt.rna), weights in shared memory. Fp32: 3xTF32 (a = big + small,
//    a*b ~ small*big + big*small + big*big, FP32 accumulation), weights split on the host,
//    activations split on the fly. Layer 3's reduction over taps is FP32 in every mode.
// Every intermediate stays on chip; each input pixel is read ~1.2-1.6 times (halo overlap, mostly
// from L2), each output written once. Measured (H200, 3840 x 2160): Fp16 / Bf16 0.62 ms, Tf32
// 1.03 ms, Fp32 2.52 ms (docs/ops/srcnn.md).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/cuda_check.hpp"
#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_math.hpp"

namespace upres::srcnn::cuda {

namespace {

// ------------------------------------------------------------------ geometry
constexpr int kK1 = 9, kK3 = 5;
constexpr int kN1 = 64, kN2 = 32;
constexpr int kTaps1 = kK1 * kK1;     // 81
constexpr int kTaps3 = kK3 * kK3;     // 25
constexpr int kHX = 32;               // halo region width (layer 1-2 outputs) per tile
constexpr int kTX = kHX - (kK3 - 1);  // 28 output columns per tile
constexpr int kIW = kHX + kK1 - 1;    // 40 input-tile columns
constexpr int kIWS = 48;              // input row stride (bank spread)

enum Mode { kF16 = 0, kBf16 = 1, kTf32 = 2, kFp32 = 3 };

template <int M>
struct Cfg {
    static constexpr bool k16 = M == kF16 || M == kBf16;
    static constexpr bool kSplit = M == kFp32;
    static constexpr int kThreads = 256;
    static constexpr int kMT = k16 ? 1 : 2;  // M-tiles per warp step
    // Tile rows: halo kHY (the 32-bit modes keep their weights in shared memory: 32 rows; the
    // 16-bit modes use the room for 64, less halo overhead), outputs kTY, input kIH.
    static constexpr int kHY = k16 ? 64 : 32;
    static constexpr int kTY = kHY - (kK3 - 1);
    static constexpr int kIH = kHY + kK1 - 1;
    static constexpr int kInElems = kIW * kIH;
    static constexpr int kMTiles = kHX * kHY / 16;  // M-tiles of 16 pixels
    static constexpr int kPlane = kHX * kHY + 4;    // P plane stride: conflict-free C stores
    static constexpr int kWarps = kThreads / 32;
    // k-steps per layer (16-bit: k16 steps, the 6th of layer 1 a k8 step; TF32: k8 steps)
    static constexpr int kS1 = k16 ? 6 : 11;
    static constexpr int kS2 = k16 ? kN1 / 16 : kN1 / 8;
    static constexpr int kS3 = k16 ? kN2 / 16 : kN2 / 8;
    // 32-bit words of packed B fragments per (step, n-tile): 32 lanes x 2 (x 2 for big+small)
    static constexpr int kFragWords = kSplit ? 128 : 64;
    static constexpr int kW1Words = kS1 * 8 * kFragWords;
    static constexpr int kW2Words = kS2 * 4 * kFragWords;
    static constexpr int kW3Words = kS3 * 4 * kFragWords;
    static constexpr int kWWords = kW1Words + kW2Words + kW3Words;
    static constexpr int kInBytes = k16 ? 2 : 4;
    // dynamic shared memory: P, input tile, biases, (32-bit modes) weights
    static constexpr int kSmemP = kTaps3 * kPlane * 4;
    static constexpr int kSmemIn = kIH * kIWS * kInBytes;
    static constexpr int kSmemBias = 128 * 4;
    static constexpr int kSmemW = k16 ? 0 : kWWords * 4;
    static constexpr int kSmem = kSmemP + kSmemIn + kSmemBias + kSmemW;
    static constexpr int kPrefetch = (kInElems + kThreads - 1) / kThreads;
};

constexpr int kBiasFloats = 128;  // b1 (64), b2 (32), b3 (1), padding

// ------------------------------------------------------------------ PTX wrappers
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1, bool bf16) {
    if (bf16) {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
            "{%8,%9}, {%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    }
}

__device__ __forceinline__ void mma1688h(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t b0,
                                         bool bf16) {
    if (bf16) {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(b0));
    } else {
        asm volatile(
            "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, "
            "{%0,%1,%2,%3};\n"
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
            : "r"(a0), "r"(a1), "r"(b0));
    }
}

__device__ __forceinline__ void mma1688tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0,
                                            uint32_t b1) {
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t to_tf32(float x) {
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x));
    return r;
}

// TF32 operand of mode M from an fp32 value (Tf32: rounded; Fp32: big part, small via split).
__device__ __forceinline__ void split_tf32(float x, uint32_t& big, uint32_t& small) {
    big = to_tf32(x);
    small = to_tf32(x - __uint_as_float(big));
}

template <int M>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
    if constexpr (M == kBf16) {
        __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    } else {
        __half2 v = __floats2half2_rn(lo, hi);
        return *reinterpret_cast<uint32_t*>(&v);
    }
}

// Stored input element of mode M (raw bits in the low 16 or all 32 bits).
template <int M>
__device__ __forceinline__ uint32_t to_operand(float x) {
    if constexpr (M == kF16) {
        return __half_as_ushort(__float2half_rn(x));
    } else if constexpr (M == kBf16) {
        return __bfloat16_as_ushort(__float2bfloat16_rn(x));
    } else if constexpr (M == kTf32) {
        return to_tf32(x);
    } else {
        return __float_as_uint(x);
    }
}

// ------------------------------------------------------------------ kernel
struct KParams {
    const float* in;
    std::ptrdiff_t in_stride;
    float* out;
    std::ptrdiff_t out_stride;
    int w, h;
    int tiles_x, tiles;
    const uint32_t* weights;  // packed B fragments (Cfg::kWWords)
    const float* bias;        // kBiasFloats
};

// Input tile element i (0 <= i < Cfg::kInElems) of tile (tx0, ty0): clamped global read.
__device__ __forceinline__ float load_input(const KParams& p, int tx0, int ty0, int i) {
    const int iy = i / kIW, ix = i - iy * kIW;
    const int gy = clamp_index(ty0 - 6 + iy, p.h);
    const int gx = clamp_index(tx0 - 6 + ix, p.w);
    return __ldg(p.in + static_cast<std::ptrdiff_t>(gy) * p.in_stride + gx);
}

template <int M>
__global__ void __launch_bounds__(Cfg<M>::kThreads, 1) srcnn_fused_kernel(const KParams p) {
    using C = Cfg<M>;
    constexpr bool kBf = M == kBf16;
    extern __shared__ __align__(16) unsigned char smem[];
    float* P = reinterpret_cast<float*>(smem);
    unsigned char* in_raw = smem + C::kSmemP;
    float* bias_s = reinterpret_cast<float*>(smem + C::kSmemP + C::kSmemIn);
    uint32_t* w_s = reinterpret_cast<uint32_t*>(smem + C::kSmemP + C::kSmemIn + C::kSmemBias);

    const int tid = threadIdx.x;
    const int lane = tid & 31, warp = tid >> 5;
    const int g = lane >> 2, t = lane & 3;

    for (int i = tid; i < kBiasFloats; i += C::kThreads) bias_s[i] = p.bias[i];
    if constexpr (!C::k16) {
        for (int i = tid; i < C::kWWords / 4; i += C::kThreads)
            reinterpret_cast<uint4*>(w_s)[i] = reinterpret_cast<const uint4*>(p.weights)[i];
    }
    // 16-bit modes: every B fragment of the network in registers (136 words per thread).
    uint32_t w1r[C::k16 ? 6 : 1][8][2];
    uint32_t w2r[C::k16 ? 4 : 1][4][2];
    uint32_t w3r[C::k16 ? 2 : 1][4][2];
    if constexpr (C::k16) {
        const uint2* wg = reinterpret_cast<const uint2*>(p.weights);
#pragma unroll
        for (int j = 0; j < 6; ++j)
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                const uint2 v = __ldg(wg + (j * 8 + n) * 32 + lane);
                w1r[j][n][0] = v.x, w1r[j][n][1] = v.y;
            }
        wg += C::kW1Words / 2;
#pragma unroll
        for (int j = 0; j < 4; ++j)
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                const uint2 v = __ldg(wg + (j * 4 + n) * 32 + lane);
                w2r[j][n][0] = v.x, w2r[j][n][1] = v.y;
            }
        wg += C::kW2Words / 2;
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                const uint2 v = __ldg(wg + (j * 4 + n) * 32 + lane);
                w3r[j][n][0] = v.x, w3r[j][n][1] = v.y;
            }
    }

    // Layer-1 tap offsets (input-tile elements) of this thread's A columns, per k-step:
    // 16-bit: columns 2t, 2t+1, 2t+8, 2t+9 of k16 step j; TF32: columns t, t+4 of k8 step j.
    constexpr int kOffs = C::k16 ? 4 : 2;
    int toff[C::kS1][kOffs];
#pragma unroll
    for (int j = 0; j < C::kS1; ++j)
#pragma unroll
        for (int q = 0; q < kOffs; ++q) {
            const int k = C::k16 ? 16 * j + 2 * t + (q & 1) + 8 * (q >> 1) : 8 * j + t + 4 * q;
            toff[j][q] = k < kTaps1 ? (k / kK1) * kIWS + k % kK1 : 0;
        }

    float pre[C::kPrefetch] = {};
    int tile = blockIdx.x;
    if (tile < p.tiles) {
        const int tx0 = (tile % p.tiles_x) * kTX, ty0 = (tile / p.tiles_x) * C::kTY;
#pragma unroll
        for (int r = 0; r < C::kPrefetch; ++r) {
            const int i = tid + r * C::kThreads;
            if (i < C::kInElems) pre[r] = load_input(p, tx0, ty0, i);
        }
    }
    for (; tile < p.tiles; tile += gridDim.x) {
        // The prefetched input -> shared memory (previous tile's layer 1 is done: barrier below).
#pragma unroll
        for (int r = 0; r < C::kPrefetch; ++r) {
            const int i = tid + r * C::kThreads;
            if (i < C::kInElems) {
                const int iy = i / kIW, ix = i - iy * kIW;
                const uint32_t v = to_operand<M>(pre[r]);
                if constexpr (C::k16)
                    reinterpret_cast<unsigned short*>(in_raw)[iy * kIWS + ix] =
                        static_cast<unsigned short>(v);
                else
                    reinterpret_cast<uint32_t*>(in_raw)[iy * kIWS + ix] = v;
            }
        }
        __syncthreads();
        const int tx0 = (tile % p.tiles_x) * kTX, ty0 = (tile / p.tiles_x) * C::kTY;
        {  // prefetch the next tile's input (in flight during the compute)
            const int nt = tile + gridDim.x;
            if (nt < p.tiles) {
                const int nx0 = (nt % p.tiles_x) * kTX, ny0 = (nt / p.tiles_x) * C::kTY;
#pragma unroll
                for (int r = 0; r < C::kPrefetch; ++r) {
                    const int i = tid + r * C::kThreads;
                    if (i < C::kInElems) pre[r] = load_input(p, nx0, ny0, i);
                }
            }
        }

        // A warp takes MT M-tiles at a time (32-bit modes: 2, sharing each B fragment loaded
        // from shared memory; 16-bit modes: 1, the B fragments are in registers).
        constexpr int MT = C::kMT;
        for (int mp = warp; mp < C::kMTiles / MT; mp += C::kWarps) {
            int pix[MT], q0[MT];  // input-tile index of row g's window origin; halo index
#pragma unroll
            for (int m = 0; m < MT; ++m) {
                const int mi = mp * MT + m;
                const int hy = mi >> 1, hx0 = (mi & 1) * 16;
                pix[m] = hy * kIWS + hx0 + g;
                q0[m] = hy * kHX + hx0 + g;
            }
            // ---------------- layer 1
            float acc[MT][8][4];
#pragma unroll
            for (int n = 0; n < 8; ++n) {
                const float2 b = *reinterpret_cast<const float2*>(bias_s + 8 * n + 2 * t);
#pragma unroll
                for (int m = 0; m < MT; ++m)
                    acc[m][n][0] = b.x, acc[m][n][1] = b.y, acc[m][n][2] = b.x, acc[m][n][3] = b.y;
            }
            if constexpr (C::k16) {
#pragma unroll
                for (int m = 0; m < MT; ++m) {
                    const unsigned short* s =
                        reinterpret_cast<const unsigned short*>(in_raw) + pix[m];
#pragma unroll
                    for (int j = 0; j < 6; ++j) {
                        if (j < 5) {
                            uint32_t a[4];
                            a[0] = s[toff[j][0]] | (uint32_t(s[toff[j][1]]) << 16);
                            a[1] = s[toff[j][0] + 8] | (uint32_t(s[toff[j][1] + 8]) << 16);
                            a[2] = s[toff[j][2]] | (uint32_t(s[toff[j][3]]) << 16);
                            a[3] = s[toff[j][2] + 8] | (uint32_t(s[toff[j][3] + 8]) << 16);
#pragma unroll
                            for (int n = 0; n < 8; ++n)
                                mma16816(acc[m][n], a, w1r[j][n][0], w1r[j][n][1], kBf);
                        } else {
                            const uint32_t a0 = s[toff[j][0]] | (uint32_t(s[toff[j][1]]) << 16);
                            const uint32_t a1 =
                                s[toff[j][0] + 8] | (uint32_t(s[toff[j][1] + 8]) << 16);
#pragma unroll
                            for (int n = 0; n < 8; ++n)
                                mma1688h(acc[m][n], a0, a1, w1r[j][n][0], kBf);
                        }
                    }
                }
            } else {
                const uint32_t* wl = w_s + lane * (C::kSplit ? 4 : 2);
#pragma unroll
                for (int j = 0; j < C::kS1; ++j) {
                    uint32_t ab[MT][4], as[MT][4];
#pragma unroll
                    for (int m = 0; m < MT; ++m) {
                        const float* s = reinterpret_cast<const float*>(in_raw) + pix[m];
                        const float x[4] = {s[toff[j][0]], s[toff[j][0] + 8], s[toff[j][1]],
                                            s[toff[j][1] + 8]};
#pragma unroll
                        for (int q = 0; q < 4; ++q) {
                            if constexpr (C::kSplit)
                                split_tf32(x[q], ab[m][q], as[m][q]);
                            else
                                ab[m][q] = __float_as_uint(x[q]);  // stored TF32-rounded
                        }
                    }
#pragma unroll
                    for (int n = 0; n < 8; ++n) {
                        if constexpr (C::kSplit) {
                            const uint4 b = *reinterpret_cast<const uint4*>(wl + (j * 8 + n) * 128);
#pragma unroll
                            for (int m = 0; m < MT; ++m) {
                                mma1688tf32(acc[m][n], as[m], b.x, b.y);
                                mma1688tf32(acc[m][n], ab[m], b.z, b.w);
                                mma1688tf32(acc[m][n], ab[m], b.x, b.y);
                            }
                        } else {
                            const uint2 b = *reinterpret_cast<const uint2*>(wl + (j * 8 + n) * 64);
#pragma unroll
                            for (int m = 0; m < MT; ++m) mma1688tf32(acc[m][n], ab[m], b.x, b.y);
                        }
                    }
                }
            }
            // ---------------- layer 2 (A = relu(acc) re-packed), then layer 3
            float acc2[MT][4][4];
#pragma unroll
            for (int n = 0; n < 4; ++n) {
                const float2 b = *reinterpret_cast<const float2*>(bias_s + 64 + 8 * n + 2 * t);
#pragma unroll
                for (int m = 0; m < MT; ++m)
                    acc2[m][n][0] = b.x, acc2[m][n][1] = b.y, acc2[m][n][2] = b.x,
                    acc2[m][n][3] = b.y;
            }
            float acc3[MT][4][4];
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int n = 0; n < 4; ++n)
                    acc3[m][n][0] = acc3[m][n][1] = acc3[m][n][2] = acc3[m][n][3] = 0.0f;
            if constexpr (C::k16) {
#pragma unroll
                for (int m = 0; m < MT; ++m) {
#pragma unroll
                    for (int kk = 0; kk < 4; ++kk) {
                        uint32_t a[4];
                        a[0] = pack2<M>(relu(acc[m][2 * kk][0]), relu(acc[m][2 * kk][1]));
                        a[1] = pack2<M>(relu(acc[m][2 * kk][2]), relu(acc[m][2 * kk][3]));
                        a[2] = pack2<M>(relu(acc[m][2 * kk + 1][0]), relu(acc[m][2 * kk + 1][1]));
                        a[3] = pack2<M>(relu(acc[m][2 * kk + 1][2]), relu(acc[m][2 * kk + 1][3]));
#pragma unroll
                        for (int n = 0; n < 4; ++n)
                            mma16816(acc2[m][n], a, w2r[kk][n][0], w2r[kk][n][1], kBf);
                    }
#pragma unroll
                    for (int kk = 0; kk < 2; ++kk) {
                        uint32_t a[4];
                        a[0] = pack2<M>(relu(acc2[m][2 * kk][0]), relu(acc2[m][2 * kk][1]));
                        a[1] = pack2<M>(relu(acc2[m][2 * kk][2]), relu(acc2[m][2 * kk][3]));
                        a[2] = pack2<M>(relu(acc2[m][2 * kk + 1][0]), relu(acc2[m][2 * kk + 1][1]));
                        a[3] = pack2<M>(relu(acc2[m][2 * kk + 1][2]), relu(acc2[m][2 * kk + 1][3]));
#pragma unroll
                        for (int n = 0; n < 4; ++n)
                            mma16816(acc3[m][n], a, w3r[kk][n][0], w3r[kk][n][1], kBf);
                    }
                }
            } else {
                // TF32 A layout: (g, t), (g+8, t), (g, t+4), (g+8, t+4); column t of k-step s is
                // channel 8s+2t, column t+4 channel 8s+2t+1 (the host packs B in that K order).
                const uint32_t* wl2 = w_s + C::kW1Words + lane * (C::kSplit ? 4 : 2);
                const uint32_t* wl3 = wl2 + C::kW2Words;
                // One k-step of layers 2/3: A from the C fragment `c` of the previous layer.
                auto kstep = [&](float(&d)[MT][4][4], float(&c)[MT][8][4], int s,
                                 const uint32_t* wl) {
                    uint32_t ab[MT][4], as[MT][4];
#pragma unroll
                    for (int m = 0; m < MT; ++m) {
                        const float v[4] = {relu(c[m][s][0]), relu(c[m][s][2]), relu(c[m][s][1]),
                                            relu(c[m][s][3])};
#pragma unroll
                        for (int q = 0; q < 4; ++q) {
                            if constexpr (C::kSplit)
                                split_tf32(v[q], ab[m][q], as[m][q]);
                            else
                                ab[m][q] = to_tf32(v[q]);
                        }
                    }
#pragma unroll
                    for (int n = 0; n < 4; ++n) {
                        if constexpr (C::kSplit) {
                            const uint4 b = *reinterpret_cast<const uint4*>(wl + (s * 4 + n) * 128);
#pragma unroll
                            for (int m = 0; m < MT; ++m) {
                                mma1688tf32(d[m][n], as[m], b.x, b.y);
                                mma1688tf32(d[m][n], ab[m], b.z, b.w);
                                mma1688tf32(d[m][n], ab[m], b.x, b.y);
                            }
                        } else {
                            const uint2 b = *reinterpret_cast<const uint2*>(wl + (s * 4 + n) * 64);
#pragma unroll
                            for (int m = 0; m < MT; ++m) mma1688tf32(d[m][n], ab[m], b.x, b.y);
                        }
                    }
                };
#pragma unroll
                for (int s = 0; s < 8; ++s) kstep(acc2, acc, s, wl2);
                // layer 2's C fragments as an [MT][8][4] view: only n-tiles 0..3 are read
                float c2[MT][8][4];
#pragma unroll
                for (int m = 0; m < MT; ++m)
#pragma unroll
                    for (int n = 0; n < 8; ++n)
#pragma unroll
                        for (int q = 0; q < 4; ++q) c2[m][n][q] = n < 4 ? acc2[m][n][q] : 0.0f;
#pragma unroll
                for (int s = 0; s < 4; ++s) kstep(acc3, c2, s, wl3);
            }
            // ---------------- P (tap-major planes of halo pixels)
#pragma unroll
            for (int m = 0; m < MT; ++m)
#pragma unroll
                for (int n = 0; n < 4; ++n)
#pragma unroll
                    for (int e = 0; e < 2; ++e) {
                        const int tap = 8 * n + 2 * t + e;
                        if (tap < kTaps3) {
                            P[tap * C::kPlane + q0[m]] = acc3[m][n][e];
                            P[tap * C::kPlane + q0[m] + 8] = acc3[m][n][2 + e];
                        }
                    }
        }
        __syncthreads();
        // ---------------- layer 3 reduction over taps, replication border of layer 2's output
        {
            const int hx_lo = max(0, 2 - tx0), hx_hi = min(kHX - 1, p.w + 1 - tx0);
            const int hy_lo = max(0, 2 - ty0), hy_hi = min(C::kHY - 1, p.h + 1 - ty0);
            const float b3 = bias_s[96];
            for (int i = tid; i < kTX * C::kTY; i += C::kThreads) {
                const int oy = i / kTX, ox = i - oy * kTX;
                const int gx = tx0 + ox, gy = ty0 + oy;
                if (gx >= p.w || gy >= p.h) continue;
                int cx[kK3], cy[kK3];
#pragma unroll
                for (int d = 0; d < kK3; ++d) {
                    cx[d] = min(max(ox + d, hx_lo), hx_hi);
                    cy[d] = min(max(oy + d, hy_lo), hy_hi) * kHX;
                }
                float sum = 0.0f;
#pragma unroll
                for (int dy = 0; dy < kK3; ++dy)
#pragma unroll
                    for (int dx = 0; dx < kK3; ++dx)
                        sum += P[(dy * kK3 + dx) * C::kPlane + cy[dy] + cx[dx]];
                p.out[static_cast<std::ptrdiff_t>(gy) * p.out_stride + gx] = sum + b3;
            }
        }
        // The next iteration overwrites the input tile (read by layer 1 above: ordered by the
        // barrier before the reduction) and P (read by the reduction: ordered by the barrier
        // after the input store).
    }
}

// ------------------------------------------------------------------ host packing
uint32_t tf32_rna_host(float x) {
    uint32_t u;
    std::memcpy(&u, &x, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) u = (u + 0x1000u) & 0xffffe000u;
    return u;
}
float bits_to_float(uint32_t u) {
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
uint16_t to16_host(float x, bool bf16) {
    if (bf16) return __bfloat16_as_ushort(__float2bfloat16_rn(x));
    return __half_as_ushort(__float2half_rn(x));
}

int mode_of(SrcnnPrecision p) {
    switch (p) {
        case SrcnnPrecision::Fp16:
            return kF16;
        case SrcnnPrecision::Bf16:
            return kBf16;
        case SrcnnPrecision::Tf32:
            return kTf32;
        case SrcnnPrecision::Fp32:
            return kFp32;
        default:
            return -1;
    }
}

// B(k, n) of one layer as a function; packs steps x ntiles fragments in lane order.
//   16-bit: step s (k16; k8 when s == k8_step): reg r holds k = 16s + 2t + 8r + {0, 1}.
//   TF32, natural K (layer 1): reg r holds k = 8s + t + 4r.
//   TF32, permuted K (layers 2, 3): reg r holds k = 8s + 2t + r.
template <class B>
void pack_layer(std::vector<uint32_t>& out, int mode, int steps, int ntiles, bool permuted,
                int k8_step, B&& b) {
    const bool is16 = mode == kF16 || mode == kBf16;
    for (int s = 0; s < steps; ++s)
        for (int nt = 0; nt < ntiles; ++nt)
            for (int lane = 0; lane < 32; ++lane) {
                const int g = lane >> 2, t = lane & 3, n = 8 * nt + g;
                if (is16) {
                    for (int r = 0; r < 2; ++r) {
                        const int k = 16 * s + 2 * t + 8 * r;
                        uint32_t v = 0;
                        if (!(s == k8_step && r == 1))
                            v = uint32_t(to16_host(b(k, n), mode == kBf16)) |
                                (uint32_t(to16_host(b(k + 1, n), mode == kBf16)) << 16);
                        out.push_back(v);
                    }
                } else {
                    uint32_t big[2], small[2];
                    for (int r = 0; r < 2; ++r) {
                        const int k = permuted ? 8 * s + 2 * t + r : 8 * s + t + 4 * r;
                        const float x = b(k, n);
                        big[r] = tf32_rna_host(x);
                        small[r] = tf32_rna_host(x - bits_to_float(big[r]));
                    }
                    out.push_back(big[0]);
                    out.push_back(big[1]);
                    if (mode == kFp32) {
                        out.push_back(small[0]);
                        out.push_back(small[1]);
                    }
                }
            }
}

template <int M>
void set_smem_attr() {
    static_assert(Cfg<M>::kSmem <= 227 * 1024, "beyond Hopper's 227 KiB per block");
    UPRES_CUDA_CHECK(cudaFuncSetAttribute(
        srcnn_fused_kernel<M>, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg<M>::kSmem));
}

template <int M>
void launch(const FusedWeights* w, Span2D<const float> in, Span2D<float> out, cudaStream_t st);

}  // namespace

struct FusedWeights {
    int mode = -1;
    int sms = 1;
    uint32_t* weights = nullptr;  // device
    float* bias = nullptr;        // device
};

namespace {

template <int M>
void launch(const FusedWeights* w, Span2D<const float> in, Span2D<float> out, cudaStream_t st) {
    using C = Cfg<M>;
    KParams p;
    p.in = in.data;
    p.in_stride = in.stride;
    p.out = out.data;
    p.out_stride = out.stride;
    p.w = in.width;
    p.h = in.height;
    p.tiles_x = (in.width + kTX - 1) / kTX;
    p.tiles = p.tiles_x * ((in.height + C::kTY - 1) / C::kTY);
    p.weights = w->weights;
    p.bias = w->bias;
    const int grid = std::min(p.tiles, w->sms);
    srcnn_fused_kernel<M><<<grid, Cfg<M>::kThreads, Cfg<M>::kSmem, st>>>(p);
    UPRES_CUDA_CHECK_LAUNCH();
}

}  // namespace

bool fused_supports(const SrcnnModel& model, SrcnnPrecision precision) {
    const int mode = mode_of(precision);
    if (mode < 0) return false;
    // The tile buffers need 208 KiB (16-bit modes), 143 KiB (Tf32) or 177 KiB (Fp32) of shared
    // memory per block.
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess) {
        cudaGetLastError();  // clear: no device is "not supported", not a sticky error
        return false;
    }
    const int need = mode == kF16    ? Cfg<kF16>::kSmem
                     : mode == kBf16 ? Cfg<kBf16>::kSmem
                     : mode == kTf32 ? Cfg<kTf32>::kSmem
                                     : Cfg<kFp32>::kSmem;
    if (optin < need) return false;
    const auto& l = model.layers;
    const auto ok = [](const SrcnnLayer& L, int o, int i, int k) {
        return L.out_channels == o && L.in_channels == i && L.kernel == k &&
               L.weights.size() == static_cast<std::size_t>(o) * i * k * k &&
               L.bias.size() == static_cast<std::size_t>(o);
    };
    return ok(l[0], kN1, 1, kK1) && ok(l[1], kN2, kN1, 1) && ok(l[2], 1, kN2, kK3);
}

FusedWeights* fused_prepare(const SrcnnModel& model, SrcnnPrecision precision, void* stream) {
    if (!fused_supports(model, precision))
        throw Error(ErrorCode::InvalidArgument,
                    "srcnn fused kernel: unsupported model shape or precision (needs 9-1-5 with "
                    "64/32 channels and Fp32, Tf32, Fp16 or Bf16)");
    const int mode = mode_of(precision);
    const bool is16 = mode == kF16 || mode == kBf16;
    const auto& w1 = model.layers[0].weights;
    const auto& w2 = model.layers[1].weights;
    const auto& w3 = model.layers[2].weights;
    std::vector<uint32_t> packed;
    // Layer 1: B(k, n) = W1[n][tap k] (zero beyond 81 taps).
    pack_layer(packed, mode, is16 ? 6 : 11, 8, false, is16 ? 5 : -1, [&](int k, int n) {
        return k < kTaps1 ? w1[static_cast<std::size_t>(n) * kTaps1 + k] : 0.0f;
    });
    // Layer 2: B(k, n) = W2[n][k].
    pack_layer(packed, mode, is16 ? 4 : 8, 4, true, -1,
               [&](int k, int n) { return w2[static_cast<std::size_t>(n) * kN1 + k]; });
    // Layer 3: B(k, n) = W3[0][k][tap n] (zero beyond 25 taps).
    pack_layer(packed, mode, is16 ? 2 : 4, 4, true, -1, [&](int k, int n) {
        return n < kTaps3 ? w3[static_cast<std::size_t>(k) * kTaps3 + n] : 0.0f;
    });
    std::vector<float> bias(kBiasFloats, 0.0f);
    for (int i = 0; i < kN1; ++i) bias[i] = model.layers[0].bias[i];
    for (int i = 0; i < kN2; ++i) bias[kN1 + i] = model.layers[1].bias[i];
    bias[96] = model.layers[2].bias[0];

    auto* fw = new FusedWeights;
    fw->mode = mode;
    try {
        int dev = 0;
        UPRES_CUDA_CHECK(cudaGetDevice(&dev));
        UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&fw->sms, cudaDevAttrMultiProcessorCount, dev));
        UPRES_CUDA_CHECK(cudaMalloc(&fw->weights, packed.size() * 4));
        UPRES_CUDA_CHECK(cudaMalloc(&fw->bias, bias.size() * 4));
        const auto st = static_cast<cudaStream_t>(stream);
        UPRES_CUDA_CHECK(cudaMemcpyAsync(fw->weights, packed.data(), packed.size() * 4,
                                         cudaMemcpyHostToDevice, st));
        UPRES_CUDA_CHECK(
            cudaMemcpyAsync(fw->bias, bias.data(), bias.size() * 4, cudaMemcpyHostToDevice, st));
        UPRES_CUDA_CHECK(cudaStreamSynchronize(st));  // the host vectors die here
        switch (mode) {
            case kF16:
                set_smem_attr<kF16>();
                break;
            case kBf16:
                set_smem_attr<kBf16>();
                break;
            case kTf32:
                set_smem_attr<kTf32>();
                break;
            default:
                set_smem_attr<kFp32>();
                break;
        }
    } catch (...) {
        fused_release(fw);
        throw;
    }
    return fw;
}

void fused_release(FusedWeights* w) noexcept {
    if (!w) return;
    if (w->weights) cudaFree(w->weights);
    if (w->bias) cudaFree(w->bias);
    delete w;
}

void fused_forward(const FusedWeights* w, Span2D<const float> in, Span2D<float> out, void* stream) {
    if (!w) throw Error(ErrorCode::InvalidArgument, "srcnn fused kernel: no prepared weights");
    if (in.width != out.width || in.height != out.height || in.width < 1 || in.height < 1)
        throw Error(ErrorCode::InvalidArgument, "srcnn fused kernel: in and out sizes differ");
    if (in.channels != 1 || out.channels != 1)
        throw Error(ErrorCode::InvalidArgument, "srcnn fused kernel: planes must have 1 channel");
    const auto st = static_cast<cudaStream_t>(stream);
    switch (w->mode) {
        case kF16:
            launch<kF16>(w, in, out, st);
            break;
        case kBf16:
            launch<kBf16>(w, in, out, st);
            break;
        case kTf32:
            launch<kTf32>(w, in, out, st);
            break;
        default:
            launch<kFp32>(w, in, out, st);
            break;
    }
}

}  // namespace upres::srcnn::cuda
