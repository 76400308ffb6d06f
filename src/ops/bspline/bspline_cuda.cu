// CUDA backend of the cubic B-spline prefilter (docs/ops/bspline.md, "Backends").
//
// Variants (upres::PrefilterVariant):
//   Recursive  the paper's baseline (Ruijters & Thevenaz): one thread per row (strided, not
//              coalesced) then one thread per column (coalesced), exact IIR in float with
//              scipy's start-ups truncated after kFloatHorizon samples.
//   FirShared  the paper's FIR (Champagnat & Le Sant, Sec. 6): row kernel through shared memory
//              (256 outputs per block, K*C halo each side), column kernel with the rotating
//              window of Fig. 5 (one thread per element column, one coalesced row load per
//              output row). Rows -> temporary buffer -> columns.
//   FirFused   one kernel: a 2-D tile plus halos is loaded once (coalesced, transposed into
//              shared memory with an odd pitch: conflict-free), filtered along rows into a
//              second shared buffer, then along columns straight to global memory. Each
//              thread computes runs of 16 outputs from a register window (16 + 2K shared loads
//              for 16 (2K + 1) FMAs). Taps are kernel parameters (constant bank).
//   FirRec     (1 channel, FIR 17..31, from 2^23 samples) the FIR taps g z^|k| as two running
//              exponential sums (one recursion each way, the sample leaving the window
//              subtracted): 7 operations per output and pass instead of 2K + 1 FMAs; persistent
//              blocks over 64 x 64 tiles with the next tile's copy in flight (double buffer).
//   IirFused   the exact IIR; from 2^21 elements the warp-streaming kernel (stream_kernel<15,
//              C, true>: causal + anticausal sums in registers, see "Stream" below), else the
//              overlapped 2-D tile kernel: each block loads its tile plus 16 samples of warm-up
//              on every side (cp.async), runs the causal/anticausal recursions along rows then
//              columns in shared memory, and writes the tile's centre. The zero start state
//              decays by |z|^16 = 7e-10 before any output (bspline_math.hpp).
// Every launch is checked; temporaries come stream-ordered from upres's pool (device_temp.hpp). The
// streaming FIR kernel is reachable through bspline_prefilter_forced (tests and benchmarks).
//
// Measured (bench/bspline_bench.cpp, NVIDIA H200, 2048^2 float, 1
// channel; a device-to-device copy of the image takes 11.9 us): Recursive 1103 us, FirShared
// FIR15 99.6 us, FirFused FIR15 25.3 us (2.12x copy; the streaming FIR kernel: 28.4 us),
// FIR7 19.9, FIR31 39.2, IirFused 34.4 us (2.88x copy; the tile kernel: 42.2 us). FirRec
// 27.5 us at 2048^2, 65.1 us at 4096^2 (FirFused 84.6 us). FirFused compiled for one
// channel: FIR15 20.8 us at 2048^2 (1.73x the 12.0 us copy),
// 61.8 us at 4096^2 (FirRec 65.5 us). docs/ops/bspline.md has all sizes and the experiments.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <mutex>

#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"
#include "ops/bspline/bspline_backends.hpp"
#include "ops/bspline/bspline_iir_box.cuh"
#include "ops/bspline/bspline_math.hpp"

namespace upres::cuda {

namespace {

using bspline::kMaxFirLength;
using bspline::prefilter_index;

struct Taps {
    float t[kMaxFirLength];  // t[k + KMAX], zero beyond the filter's own radius
};

Taps make_taps(int fir_length, int kmax) {
    Taps t{};
    double d[kMaxFirLength];
    bspline::fir_taps(fir_length, d);
    const int K = (fir_length - 1) / 2;
    for (int k = -K; k <= K; ++k) t.t[k + kmax] = static_cast<float>(d[k + K]);
    return t;
}

// The shared-memory opt-in (cudaFuncSetAttribute) is per device: done once per device id.
constexpr int kMaxDevices = 64;
int current_device() {
    int d = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&d));
    if (d < 0 || d >= kMaxDevices)
        throw Error(ErrorCode::Internal, "bspline_prefilter: CUDA device id out of range");
    return d;
}

__host__ __device__ inline int floordiv(int a, int b) {
    const int q = a / b;
    return (q * b > a) ? q - 1 : q;
}

// ---------------------------------------------------------------- Recursive (baseline)

// One line of n samples in[i * step] -> out[i * step] (may alias), exact IIR in float.
__device__ void iir_line(const float* in, float* out, int n, std::ptrdiff_t step, Border b) {
    if (n == 1) {
        out[0] = in[0];
        return;
    }
    const float z = static_cast<float>(bspline::kPole);
    const float g = static_cast<float>(bspline::kGain);
    const auto x = [&](int i) { return g * in[i * step]; };
    float prev = bspline::causal_init<float>(x, n, b, bspline::kFloatHorizon);
    out[0] = prev;
    for (int i = 1; i < n; ++i) {
        prev = g * in[i * step] + z * prev;
        out[i * step] = prev;
    }
    const auto cp = [&](int i) { return out[i * step]; };
    prev = bspline::anticausal_init<float>(cp, n, b, bspline::kFloatHorizon);
    out[(n - 1) * step] = prev;
    for (int i = n - 2; i >= 0; --i) {
        prev = z * (prev - out[i * step]);
        out[i * step] = prev;
    }
}

__global__ void iir_rows_kernel(Span2D<const float> src, Span2D<float> dst, Border b) {
    const int line = blockIdx.x * blockDim.x + threadIdx.x;  // y * C + c
    if (line >= src.height * src.channels) return;
    const int y = line / src.channels, c = line - y * src.channels;
    iir_line(src.row(y) + c, dst.row(y) + c, src.width, src.channels, b);
}

__global__ void iir_cols_kernel(Span2D<float> img, Border b) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;  // element column x * C + c
    if (j >= img.width * img.channels) return;
    iir_line(img.data + j, img.data + j, img.height, img.stride, b);
}

void run_recursive(Span2D<const float> src, Span2D<float> dst, Border b, cudaStream_t s) {
    constexpr int kThreads = 64;  // few lines: small blocks spread them over more SMs
    const int rows = src.height * src.channels, cols = src.width * src.channels;
    iir_rows_kernel<<<(rows + kThreads - 1) / kThreads, kThreads, 0, s>>>(src, dst, b);
    UPRES_CUDA_CHECK_LAUNCH();
    iir_cols_kernel<<<(cols + kThreads - 1) / kThreads, kThreads, 0, s>>>(dst, b);
    UPRES_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- FirShared (paper Sec. 6)

// Not tuned on Hopper beyond a first guess (the paper tuned 96 x 256 for a Tesla C2050).
constexpr int kRowThreads = 256;  // outputs per block of the row kernel (paper: 256)
constexpr int kColThreads = 128;  // element columns per block of the column kernel (paper: 96)
constexpr int kColRows = 64;      // rows per block of the column kernel (paper: 256)

__global__ void fir_rows_shared_kernel(Span2D<const float> src, Span2D<float> dst, Border b,
                                       Taps taps, int K) {
    __shared__ float s_taps[kMaxFirLength];
    __shared__ float s_line[kRowThreads + 2 * bspline::kMaxFirRadius * 4];
    // Row in blockIdx.x (heights up to kMaxDimension exceed gridDim.y's 65535).
    const int C = src.channels, n = src.width * C, y = blockIdx.x;
    const int j0 = blockIdx.y * kRowThreads, halo = K * C;
    if (threadIdx.x < 2 * K + 1) s_taps[threadIdx.x] = taps.t[threadIdx.x];
    const float* in = src.row(y);
    for (int i = threadIdx.x; i < kRowThreads + 2 * halo; i += kRowThreads) {
        const int e = j0 - halo + i;
        const int px = floordiv(e, C), c = e - px * C;
        s_line[i] = in[prefilter_index(px, src.width, b) * C + c];
    }
    __syncthreads();
    const int j = j0 + threadIdx.x;
    if (j >= n) return;
    float acc = 0.0f;
    for (int k = 0; k <= 2 * K; ++k) acc += s_taps[k] * s_line[threadIdx.x + k * C];
    dst.row(y)[j] = acc;
}

// Rotating window (Fig. 5): slot (r mod L) holds input row r of the window, L = 2K + 1.
__global__ void fir_cols_rotating_kernel(Span2D<const float> src, Span2D<float> dst, Border b,
                                         Taps taps, int K) {
    extern __shared__ float s_win[];  // [L][kColThreads]
    __shared__ float s_taps[kMaxFirLength];
    const int L = 2 * K + 1, h = src.height;
    const int j = blockIdx.x * kColThreads + threadIdx.x;
    const bool valid = j < src.width * src.channels;
    const int y0 = blockIdx.y * kColRows, y1 = min(y0 + kColRows, h);
    if (threadIdx.x < L) s_taps[threadIdx.x] = taps.t[threadIdx.x];
    __syncthreads();
    if (!valid) return;  // no barrier below: each thread owns its column of the window
    float* w = s_win + threadIdx.x;
    for (int i = 0; i < L - 1; ++i)
        w[i * kColThreads] = src.row(prefilter_index(y0 - K + i, h, b))[j];
    int head = L - 1;
    float next = y0 < y1 ? src.row(prefilter_index(y0 + K, h, b))[j] : 0.0f;
    for (int y = y0; y < y1; ++y) {
        w[head * kColThreads] = next;
        // prefetch the row of the next step: its load latency overlaps this step's sum
        if (y + 1 < y1) next = src.row(prefilter_index(y + 1 + K, h, b))[j];
        int s = head + 1 == L ? 0 : head + 1;  // oldest row: y - K
        float acc = 0.0f;
        for (int k = 0; k < L; ++k) {
            acc += s_taps[k] * w[s * kColThreads];
            s = s + 1 == L ? 0 : s + 1;
        }
        dst.row(y)[j] = acc;
        head = head + 1 == L ? 0 : head + 1;
    }
}

// ---------------------------------------------------------------- FirFused

// H200, 2048^2, FIR15: 28.5 us with synchronous loads, 25.3 us with cp.async;
// __launch_bounds__(256, 5) (48 registers, 5 blocks per SM instead of 4): 25.2 us, no gain.
constexpr int kTileE = 64;  // tile width in elements (x * C + c), before rounding
constexpr int kTileH = 64;  // tile height in rows
constexpr int kRun = 16;    // outputs per thread (both passes)
constexpr int kFusedThreads = 256;

__host__ __device__ inline int fused_tile_pixels(int C) {
    return (kTileE / C) / kRun * kRun;  // 64, 32, 16, 16 pixels for C = 1..4
}

template <int KMAX>
__host__ __device__ inline void fused_geometry(int C, int& twp, int& twe, int& NX, int& NY, int& PY,
                                               int& PX) {
    twp = fused_tile_pixels(C);
    twe = twp * C;
    NX = twe + 2 * KMAX * C;
    NY = kTileH + 2 * KMAX;
    PY = NY | 1;  // odd pitches: conflict-free strided shared accesses
    PX = twe | 1;
}

template <int KMAX>
std::size_t fused_smem_bytes(int C) {
    int twp, twe, NX, NY, PY, PX;
    fused_geometry<KMAX>(C, twp, twe, NX, NY, PY, PX);
    return sizeof(float) * (std::size_t(NX) * PY + std::size_t(NY) * PX);
}

// CC: the channel count as a compile-time constant (1), or 0 for src.channels. One channel gets
// constant strides and no integer divisions by C (the kernel is bound by instruction issue).
template <int KMAX, int CC>
__global__ void __launch_bounds__(kFusedThreads)
    fir_fused_kernel(Span2D<const float> src, Span2D<float> dst, Border b, Taps taps) {
    extern __shared__ float sm[];
    const int C = CC ? CC : src.channels, w = src.width, h = src.height;
    int twp, twe, NX, NY, PY, PX;
    fused_geometry<KMAX>(C, twp, twe, NX, NY, PY, PX);
    float* s_in = sm;             // [NX][PY], transposed: element column-major
    float* s_mid = sm + NX * PY;  // [NY][PX], row-major
    const int x0 = blockIdx.x * twp, y0 = blockIdx.y * kTileH;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;

    // 1. Load the tile + halos (border-mapped), one warp per row, coalesced.
    constexpr int kMaxM = (kTileE + 2 * KMAX * 4 + 31) / 32;
    int goff[kMaxM];
#pragma unroll
    for (int m = 0; m < kMaxM; ++m) {
        const int je = lane + 32 * m;
        const int e = je - KMAX * C;
        const int fd = floordiv(e, C);
        goff[m] = prefilter_index(x0 + fd, w, b) * C + (e - fd * C);
    }
    // cp.async (4 bytes, global -> shared without registers): every load of the tile is in
    // flight at once instead of one row per global-memory latency.
    for (int ye = warp; ye < NY; ye += kFusedThreads / 32) {
        const float* r = src.row(prefilter_index(y0 - KMAX + ye, h, b));
#pragma unroll
        for (int m = 0; m < kMaxM; ++m) {
            const int je = lane + 32 * m;
            if (je < NX) __pipeline_memcpy_async(s_in + je * PY + ye, r + goff[m], sizeof(float));
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();

    // 2. Row pass: task = (row ye, channel c, run of kRun pixels) -> s_mid.
    const int runs_x = twp / kRun;
    for (int t = threadIdx.x; t < NY * C * runs_x; t += kFusedThreads) {
        const int ye = t % NY, rest = t / NY;
        const int c = rest % C, rx = rest / C;
        const float* col = s_in + (rx * kRun * C + c) * PY + ye;
        float v[kRun + 2 * KMAX];
#pragma unroll
        for (int q = 0; q < kRun + 2 * KMAX; ++q) v[q] = col[q * C * PY];
        float* out = s_mid + ye * PX + rx * kRun * C + c;
#pragma unroll
        for (int i = 0; i < kRun; ++i) {
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k <= 2 * KMAX; ++k) acc = fmaf(taps.t[k], v[i + k], acc);
            out[i * C] = acc;
        }
    }
    __syncthreads();

    // 3. Column pass: task = (element column j, run of kRun rows) -> global.
    const int gx = x0 * C;
    const int nvalid = min(twe, w * C - gx);
    constexpr int runs_y = kTileH / kRun;
    for (int t = threadIdx.x; t < twe * runs_y; t += kFusedThreads) {
        const int j = t % twe, ry = t / twe;
        if (j >= nvalid) continue;
        const float* col = s_mid + ry * kRun * PX + j;
        float v[kRun + 2 * KMAX];
#pragma unroll
        for (int q = 0; q < kRun + 2 * KMAX; ++q) v[q] = col[q * PX];
        const int yb = y0 + ry * kRun;
        float* d = dst.row(min(yb, h - 1)) + gx + j;  // stepped by the stride (no 64-bit multiply)
#pragma unroll
        for (int i = 0; i < kRun; ++i, d += dst.stride) {
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k <= 2 * KMAX; ++k) acc = fmaf(taps.t[k], v[i + k], acc);
            if (yb + i < h) *d = acc;
        }
    }
}

template <int KMAX>
void launch_fused(Span2D<const float> src, Span2D<float> dst, Border b, const Taps& taps,
                  cudaStream_t s) {
    static std::once_flag once[kMaxDevices];
    std::call_once(once[current_device()], [] {
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(fir_fused_kernel<KMAX, 0>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(fused_smem_bytes<KMAX>(4))));
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(fir_fused_kernel<KMAX, 1>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(fused_smem_bytes<KMAX>(1))));
    });
    const int twp = fused_tile_pixels(src.channels);
    const dim3 grid((src.width + twp - 1) / twp, (src.height + kTileH - 1) / kTileH);
    const std::size_t smem = fused_smem_bytes<KMAX>(src.channels);
    if (src.channels == 1)
        fir_fused_kernel<KMAX, 1><<<grid, kFusedThreads, smem, s>>>(src, dst, b, taps);
    else
        fir_fused_kernel<KMAX, 0><<<grid, kFusedThreads, smem, s>>>(src, dst, b, taps);
    UPRES_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- IirFused (exact, tiled)

// Overlapped-tile recursive filter: each block filters a 2-D tile plus kIirWarm samples of
// warm-up on every side, in shared memory, rows then columns, and writes the tile's centre.
// Each recursion starts from a zero state kIirWarm samples outside the tile; the state error
// decays by |z|^kIirWarm = 7e-10 before it reaches an output, and the warm-up samples come from
// the exact border extension, so the result is the exact IIR (to float rounding) also at the
// image borders. The gain 6 of each pass is applied once at the store (36).
// H200, 2048^2: 42.2 us (the 31-tap exact convolution in the FirFused kernel: 39.0 us at 2048^2,
// 135 us vs 121 us at 4096^2). Latency-bound: one dependent chain per line, 96 of 128 threads
// busy in the row pass, 64 in the column pass (docs/ops/bspline.md lists the next steps).
constexpr int kIirTileE = 64;  // tile width in elements, rounded down to whole pixels
constexpr int kIirTileH = 64;  // tile height in rows
constexpr int kIirWarm = 16;   // warm-up samples on each side
constexpr int kIirThreads = 128;

__host__ __device__ inline void iir_geometry(int C, int& twp, int& twe, int& NXp, int& NY, int& P) {
    twp = kIirTileE / C;
    twe = twp * C;
    NXp = twp + 2 * kIirWarm;
    NY = kIirTileH + 2 * kIirWarm;
    P = (NXp * C) | 1;  // odd pitch: row-pass lines (stride P) are conflict-free
}

inline std::size_t iir_smem_bytes(int C) {
    int twp, twe, NXp, NY, P;
    iir_geometry(C, twp, twe, NXp, NY, P);
    return sizeof(float) * std::size_t(NY) * P;
}

__global__ void __launch_bounds__(kIirThreads)
    iir_fused_kernel(Span2D<const float> src, Span2D<float> dst, Border b) {
    extern __shared__ float s[];  // [NY][P], row-major
    const int C = src.channels, w = src.width, h = src.height;
    int twp, twe, NXp, NY, P;
    iir_geometry(C, twp, twe, NXp, NY, P);
    const int NX = NXp * C;
    const int x0 = blockIdx.x * twp, y0 = blockIdx.y * kIirTileH;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const float z = static_cast<float>(bspline::kPole);

    // 1. Load tile + warm-up (border-mapped), cp.async, one warp per row.
    constexpr int kMaxM = (kIirTileE + 2 * kIirWarm * 4 + 31) / 32;
    int goff[kMaxM];
#pragma unroll
    for (int m = 0; m < kMaxM; ++m) {
        const int e = lane + 32 * m - kIirWarm * C;
        const int fd = floordiv(e, C);
        goff[m] = prefilter_index(x0 + fd, w, b) * C + (e - fd * C);
    }
    for (int ye = warp; ye < NY; ye += kIirThreads / 32) {
        const float* r = src.row(prefilter_index(y0 - kIirWarm + ye, h, b));
#pragma unroll
        for (int m = 0; m < kMaxM; ++m) {
            const int je = lane + 32 * m;
            if (je < NX) __pipeline_memcpy_async(s + ye * P + je, r + goff[m], sizeof(float));
        }
    }
    __pipeline_commit();
    __pipeline_wait_prior(0);
    __syncthreads();

    // 2. Row pass, one thread per (row, channel) line, in place. Only the tile's own columns
    //    need the anticausal result.
    for (int line = threadIdx.x; line < NY * C; line += kIirThreads) {
        const int r = line % NY, c = line / NY;
        float* p = s + r * P + c;
        float acc = 0.0f;
#pragma unroll 8
        for (int i = 0; i < NXp; ++i) {
            acc = fmaf(z, acc, p[i * C]);
            p[i * C] = acc;
        }
        acc = 0.0f;
#pragma unroll 8
        for (int i = NXp - 1; i >= kIirWarm; --i) {
            acc = z * (acc - p[i * C]);
            p[i * C] = acc;
        }
    }
    __syncthreads();

    // 3. Column pass, one thread per output element column; results go straight to global.
    const int gx = x0 * C;
    const int nvalid = min(twe, w * C - gx);
    for (int je = threadIdx.x; je < nvalid; je += kIirThreads) {
        float* p = s + kIirWarm * C + je;
        float acc = 0.0f;
#pragma unroll 8
        for (int i = 0; i < NY; ++i) {
            acc = fmaf(z, acc, p[i * P]);
            p[i * P] = acc;
        }
        acc = 0.0f;
        for (int i = NY - 1; i >= kIirTileH + kIirWarm; --i) acc = z * (acc - p[i * P]);
        const int rows = min(kIirTileH, h - y0);
        float* out = dst.data + gx + je;
#pragma unroll 8
        for (int i = kIirTileH - 1; i >= 0; --i) {
            acc = z * (acc - p[(i + kIirWarm) * P]);
            if (i < rows) out[(y0 + i) * dst.stride] = 36.0f * acc;
        }
    }
}

void launch_iir_fused(Span2D<const float> src, Span2D<float> dst, Border b, cudaStream_t s) {
    static std::once_flag once[kMaxDevices];
    std::call_once(once[current_device()], [] {
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(iir_fused_kernel,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(iir_smem_bytes(4))));
    });
    const int twp = kIirTileE / src.channels;
    const dim3 grid((src.width + twp - 1) / twp, (src.height + kIirTileH - 1) / kIirTileH);
    iir_fused_kernel<<<grid, kIirThreads, iir_smem_bytes(src.channels), s>>>(src, dst, b);
    UPRES_CUDA_CHECK_LAUNCH();
}

// ---------------------------------------------------------------- Stream (FirFused / IirFused)

// Warp-streaming kernels: IirFused from 2^21 elements (2048^2: 34.4 us vs 42.2 us for the tile
// kernel); the FIR form is slower than the tile kernel (2048^2 FIR15: 28.4 vs 25.3 us) and
// only reachable through bspline_prefilter_forced (FusedKernel::Stream). Each warp owns a strip of
// kStripE = 128 elements (4 consecutive elements per lane) and walks down a segment of `seg` output
// rows. Input rows (the strip plus HL halo elements on each side, border mapped) stream into a
// private shared-memory ring of kRing rows with cp.async (16-byte copies where the strip lies
// inside the row and the row is 16-byte aligned, else 4-byte copies of mapped elements), kRing - 1
// rows ahead. The row pass reads each ring row once per lane as NV aligned float4 loads
// (conflict-free) and produces the lane's 4 row-filtered values; the column pass keeps a sliding
// window of those values in registers (unrolled by the window length, so every register index is a
// compile-time constant) and writes one output row per input row with one float4 store per lane. No
// block-level barrier: warps are independent.
//   FIR (direct): out = sum_k t_k x(i + k), |k| <= R, R the template bucket (zero-padded taps);
//   exact (IIR): b(k) = sqrt(3) z^|k| = sqrt(3) (P + Q - x) with the causal P(i) = sum_k>=0
//   z^k x(i - k) and anticausal Q(i) = sum_k>=0 z^k x(i + k) sums. Rows: both sums by
//   recursion over the lane's R samples of halo on each side (R = 15: the neglected terms are
//   below |z|^16 = 7e-10 of the input); columns: P runs down the whole segment (started R rows
//   above it), Q by Horner over a window of the next R rows. The border extension of the
//   loaded samples is the one scipy's start-ups invert, so this is the exact IIR at the borders
//   too (lines of 32 samples or more; shorter ones run Recursive, see bspline_prefilter).
constexpr int kStreamV = 4;                    // elements per lane
constexpr int kStripE = 32 * kStreamV;         // elements per warp strip
constexpr int kStreamWarps = 4;                // independent warps per block
constexpr int kRing = 16;                      // rows in each warp's ring
constexpr int kAhead = kRing - 1;              // rows in flight ahead of the one being filtered
constexpr int kIirR = bspline::kMaxFirRadius;  // 15: halo of the exact path

template <int R, int C>
struct StreamGeom {
    static constexpr int HL = (R * C + 3) / 4 * 4;  // halo elements each side, 16-byte multiple
    static constexpr int W = kStripE + 2 * HL;      // floats per ring row
    static constexpr int NV = (2 * HL + 4) / 4;     // float4 ring loads per lane and row
    static constexpr int NL = (W + 31) / 32;        // 4-byte copies per lane and row (slow path)
};

template <int R, int C>
constexpr std::size_t stream_smem_bytes() {
    return sizeof(float) * std::size_t(kStreamWarps) * kRing * StreamGeom<R, C>::W;
}

__device__ inline void cp_async16(float* smem, const float* gmem) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ inline void cp_async4(float* smem, const float* gmem) {
    const unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem) : "memory");
}
__device__ inline void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ inline void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Row pass, direct taps: v = the lane's NV float4 of the ring row (element 4 lane - HL + s at
// index s), outputs at s = HL + j, j < 4; tap k reads s = HL + j + k C.
template <int R, int C>
__device__ inline void stream_row_direct(const float4* rv, const Taps& taps, float (&hv)[4]) {
    using G = StreamGeom<R, C>;
    float acc[2][4] = {};  // even / odd taps: two dependency chains per output
#pragma unroll
    for (int q = 0; q < G::NV; ++q) {
        const float4 v4 = rv[q];
        const float v[4] = {v4.x, v4.y, v4.z, v4.w};
#pragma unroll
        for (int a = 0; a < 4; ++a)
#pragma unroll
            for (int j = 0; j < 4; ++j) {
                const int d = 4 * q + a - G::HL - j;  // = k C
                if (d % C == 0 && d / C >= -R && d / C <= R)
                    acc[(d / C) & 1][j] = fmaf(taps.t[d / C + R], v[a], acc[(d / C) & 1][j]);
            }
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) hv[j] = acc[0][j] + acc[1][j];
}

// Row pass, exact: per channel class of the lane's 4 elements, the causal recursion from R C
// elements left of the first output and the anticausal one from R C right of the last.
template <int C>
__device__ inline void stream_row_exact(const float4* rv, float (&hv)[4]) {
    constexpr int R = kIirR;
    using G = StreamGeom<R, C>;
    const float z = static_cast<float>(bspline::kPole);
    const float s3 = static_cast<float>(bspline::kSqrt3);
    float x[4 * G::NV];
#pragma unroll
    for (int q = 0; q < G::NV; ++q) {
        const float4 v4 = rv[q];
        x[4 * q] = v4.x;
        x[4 * q + 1] = v4.y;
        x[4 * q + 2] = v4.z;
        x[4 * q + 3] = v4.w;
    }
    const float z2 = z * z;
    float P[4], Q[4];
#pragma unroll
    for (int r = 0; r < (C < 4 ? C : 4); ++r) {
        const int jmax = r + (3 - r) / C * C;  // last of the lane's outputs of this class
        // P(r) = sum_{k<=R} z^k x(r - k C) as two Horner chains in z^2 (even / odd k), then
        // P(j + C) = x(j + C) + z P(j); Q mirrored from jmax.
        float pe = x[G::HL + r - (R - 1) * C], po = x[G::HL + r - R * C];
#pragma unroll
        for (int k = R - 3; k >= 0; k -= 2) {
            pe = fmaf(z2, pe, x[G::HL + r - k * C]);
            po = fmaf(z2, po, x[G::HL + r - (k + 1) * C]);
        }
        float p = fmaf(z, po, pe);
        P[r] = p;
#pragma unroll
        for (int j = r + C; j <= jmax; j += C) P[j] = p = fmaf(z, p, x[G::HL + j]);
        float qe = x[G::HL + jmax + (R - 1) * C], qo = x[G::HL + jmax + R * C];
#pragma unroll
        for (int k = R - 3; k >= 0; k -= 2) {
            qe = fmaf(z2, qe, x[G::HL + jmax + k * C]);
            qo = fmaf(z2, qo, x[G::HL + jmax + (k + 1) * C]);
        }
        float a = fmaf(z, qo, qe);
        Q[jmax] = a;
#pragma unroll
        for (int j = jmax - C; j >= r; j -= C) Q[j] = a = fmaf(z, a, x[G::HL + j]);
    }
#pragma unroll
    for (int j = 0; j < 4; ++j) hv[j] = s3 * (P[j] + Q[j] - x[G::HL + j]);
}

template <int R, int C, bool EXACT>
__global__ void __launch_bounds__(kStreamWarps * 32)
    stream_kernel(Span2D<const float> src, Span2D<float> dst, Border b, Taps taps, int seg,
                  int nstrips, int nsegs) {
    using G = StreamGeom<R, C>;
    constexpr int L = EXACT ? R + 1 : 2 * R + 1;  // register window (rows)
    extern __shared__ float4 sm4[];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int wg = blockIdx.x * kStreamWarps + warp;
    if (wg >= nstrips * nsegs) return;  // no block barrier below
    const int strip = wg % nstrips, sg = wg / nstrips;
    float* ring = reinterpret_cast<float*>(sm4) + warp * (kRing * G::W);
    const int w = src.width, h = src.height, n = w * C;
    const int e0 = strip * kStripE, y0 = sg * seg;
    const int N = min(seg, h - y0) + 2 * R;  // input rows of the segment

    const bool fast_in = e0 - G::HL >= 0 && e0 + kStripE + G::HL <= n &&
                         (reinterpret_cast<std::uintptr_t>(src.data) & 15) == 0 &&
                         (src.stride & 3) == 0;
    int goff[G::NL];
#pragma unroll
    for (int m = 0; m < G::NL; ++m) {
        const int e = e0 - G::HL + lane + 32 * m;
        const int px = floordiv(e, C);
        goff[m] = prefilter_index(px, w, b) * C + (e - px * C);
    }
    const auto issue = [&](int i) {  // input row i -> ring slot i % kRing
        if (i < N) {
            const float* r = src.row(prefilter_index(y0 - R + i, h, b));
            float* d = ring + (i % kRing) * G::W;
            if (fast_in) {
                const float* g = r + (e0 - G::HL);
#pragma unroll
                for (int q = lane; q < G::W / 4; q += 32) cp_async16(d + 4 * q, g + 4 * q);
            } else {
#pragma unroll
                for (int m = 0; m < G::NL; ++m)
                    if (lane + 32 * m < G::W) cp_async4(d + lane + 32 * m, r + goff[m]);
            }
        }
        cp_async_commit();  // one group per row, empty past the end: wait counts stay exact
    };
    for (int i = 0; i < kAhead; ++i) issue(i);

    const int ex = e0 + kStreamV * lane;  // the lane's first output element
    const bool vec_out = (reinterpret_cast<std::uintptr_t>(dst.data) & 15) == 0 &&
                         (dst.stride & 3) == 0 && ex + kStreamV <= n;
    const float z = static_cast<float>(bspline::kPole);
    const float s3 = static_cast<float>(bspline::kSqrt3);
    const float z2 = z * z;
    float win[L][kStreamV];
    float P[kStreamV] = {0.0f, 0.0f, 0.0f, 0.0f};  // exact: causal column sums
    for (int base = 0; base < N; base += L) {
#pragma unroll
        for (int u = 0; u < L; ++u) {
            const int i = base + u;
            if (i < N) {  // uniform over the warp
                issue(i + kAhead);
                cp_async_wait<kAhead>();  // this lane's copies of row i have landed
                __syncwarp();             // ... and every lane's
                const float4* rv =
                    reinterpret_cast<const float4*>(ring + (i % kRing) * G::W) + lane;
                if constexpr (EXACT)
                    stream_row_exact<C>(rv, win[u]);
                else
                    stream_row_direct<R, C>(rv, taps, win[u]);
                __syncwarp();  // slot i % kRing is refilled by the next iteration's issue
                if constexpr (EXACT) {
                    // window slot (u + 1) % L holds row i - R, the row of the causal column sum
                    if (i >= R) {
#pragma unroll
                        for (int j = 0; j < kStreamV; ++j)
                            P[j] = fmaf(z, P[j], win[(u + 1) % L][j]);
                    }
                }
                if (i >= 2 * R) {
                    float o[kStreamV];
                    if constexpr (EXACT) {
#pragma unroll
                        for (int j = 0; j < kStreamV; ++j) {
                            // Q = sum_{k<=R} z^k h(i - R + k): Horner in z^2, even / odd k
                            float qe = win[(u + R) % L][j], qo = win[u][j];
#pragma unroll
                            for (int k = R - 3; k >= 0; k -= 2) {
                                qe = fmaf(z2, qe, win[(u + 1 + k) % L][j]);
                                qo = fmaf(z2, qo, win[(u + 2 + k) % L][j]);
                            }
                            o[j] = s3 * (P[j] + fmaf(z, qo, qe) - win[(u + 1) % L][j]);
                        }
                    } else {
#pragma unroll
                        for (int j = 0; j < kStreamV; ++j) {
                            float acc[2] = {0.0f, 0.0f};  // two dependency chains
#pragma unroll
                            for (int k = 0; k < L; ++k)
                                acc[k & 1] = fmaf(taps.t[k], win[(u + 1 + k) % L][j], acc[k & 1]);
                            o[j] = acc[0] + acc[1];
                        }
                    }
                    float* out = dst.row(y0 + i - 2 * R) + ex;
                    if (vec_out) {
                        *reinterpret_cast<float4*>(out) = make_float4(o[0], o[1], o[2], o[3]);
                    } else {
#pragma unroll
                        for (int j = 0; j < kStreamV; ++j)
                            if (ex + j < n) out[j] = o[j];
                    }
                }
            }
        }
    }
    cp_async_wait<0>();  // nothing outstanding at exit (the tail groups are empty)
}

int sm_count() {
    static int count[kMaxDevices] = {};
    const int d = current_device();
    if (count[d] == 0) {
        int c = 0;
        UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&c, cudaDevAttrMultiProcessorCount, d));
        count[d] = c;
    }
    return count[d];
}

// Rows per warp segment: enough warps for every SM to hold kWarpsPerSm of them (the ring keeps
// kAhead rows in flight per warp), but segments of at least kMinSeg rows so that the 2R rows of
// vertical halo stay a fraction of the row-pass work.
int stream_segment(int h, int nstrips, int R, int seg) {
    if (seg > 0) return seg;
    constexpr int kWarpsPerSm = 8;
    const int min_seg = R >= 15 ? 32 : 16;
    const long long want = (long long)h * nstrips / ((long long)sm_count() * kWarpsPerSm);
    int s = static_cast<int>(std::min<long long>(want, cpu::kCudaMaxBandUnit));
    s = (s + 7) / 8 * 8;
    return std::max(s, min_seg);
}

template <int R, int C, bool EXACT>
void launch_stream_rc(Span2D<const float> src, Span2D<float> dst, Border b, const Taps& taps,
                      int seg, cudaStream_t s) {
    static std::once_flag once[kMaxDevices];
    std::call_once(once[current_device()], [] {
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(stream_kernel<R, C, EXACT>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(stream_smem_bytes<R, C>())));
    });
    const int nstrips = (src.width * C + kStripE - 1) / kStripE;
    seg = stream_segment(src.height, nstrips, R, seg);
    const int nsegs = (src.height + seg - 1) / seg;
    const long long warps = (long long)nstrips * nsegs;
    const int blocks = static_cast<int>((warps + kStreamWarps - 1) / kStreamWarps);
    stream_kernel<R, C, EXACT><<<blocks, kStreamWarps * 32, stream_smem_bytes<R, C>(), s>>>(
        src, dst, b, taps, seg, nstrips, nsegs);
    UPRES_CUDA_CHECK_LAUNCH();
}

template <int R, bool EXACT>
void launch_stream(Span2D<const float> src, Span2D<float> dst, Border b, const Taps& taps, int seg,
                   cudaStream_t s) {
    switch (src.channels) {
        case 1:
            return launch_stream_rc<R, 1, EXACT>(src, dst, b, taps, seg, s);
        case 2:
            return launch_stream_rc<R, 2, EXACT>(src, dst, b, taps, seg, s);
        case 3:
            return launch_stream_rc<R, 3, EXACT>(src, dst, b, taps, seg, s);
        default:
            return launch_stream_rc<R, 4, EXACT>(src, dst, b, taps, seg, s);
    }
}

// ---------------------------------------------------------------- FirRec (1 channel)

// The FIR taps are g z^|k|, |k| <= K (eq. 6 renormalised: g = 1 / sum_k z^|k|; the exact filter:
// g = sqrt(3), K = 15, whose neglected tail is below |z|^16 = 7e-10 of the input). So
// out(i) = g (C(i) + A(i) - x(i)) with the running exponential sums C(i) = sum_{k=0..K} z^k
// x(i - k) and A(i) = sum_{k=0..K} z^k x(i + k), each a first-order recursion that drops the
// sample leaving the window: C(i) = z C(i - 1) + x(i) - z^(K+1) x(i - K - 1). A run of N outputs
// costs 2K FMAs to start the two sums and 7 operations per output, against 2K + 1 FMAs per
// output for the direct taps (FirFused), so the kernel is no longer bound by instruction issue
// (FirFused FIR15 on the H200: 72% issue slots busy, 134 instructions per output). Rounding:
// each step adds ~1 ulp that decays by |z| = 0.27 per sample, so the error stays ~1.4 ulp.
// Schedule: 64 x 64 tiles, blocks of 256 threads; the tile plus an x halo rounded up to 4
// samples (HA) and a y halo of K rows is copied with 16-byte cp.async (interior, aligned tiles)
// or 4-byte border-mapped loads (the others); the row pass writes 16 outputs per thread (float4
// loads and stores, pitches of an odd number of float4: conflict-free), the column pass runs 16
// rows per thread down a column straight to global memory (coalesced). Measured (H200): fewer
// instructions did not make it faster at 2048^2 (27.5 us vs FirFused 25.5 us; ncu: 39% issue
// slots, 12% of DRAM bandwidth, warps stalled on the recursions' dependent FMAs and the
// barriers), it was faster from 4096^2 (65.1 vs 84.6 us) until FirFused got its one-channel
// build (61.8 vs 65.5 us); bspline_prefilter now picks it only for FIR 17..31 from 2^23 samples.
constexpr int kRecTile = 64;  // tile side (pixels)
constexpr int kRecRun = 16;   // outputs per thread and pass
constexpr int kRecThreads = 256;

template <int K>
struct RecGeom {
    static constexpr int HA = (K + 3) / 4 * 4;             // x halo, a multiple of 4
    static constexpr int NX = kRecTile + 2 * HA;           // loaded width
    static constexpr int PX = (NX / 4) % 2 ? NX : NX + 4;  // pitch: odd number of float4
    static constexpr int NY = kRecTile + 2 * K;            // loaded rows
    static constexpr int PM = kRecTile + 4;                // row-pass output pitch (17 float4)
    static constexpr int NV = (kRecRun + 2 * HA) / 4;      // float4 loads per row-pass run
    // two input buffers (double buffering) + the row-pass output
    static constexpr std::size_t kSmemBytes = sizeof(float) * std::size_t(NY) * (2 * PX + PM);
};

// Run of kRecRun outputs from v[0 .. kRecRun + 2K): output i is centred on v[i + K].
template <int K>
__device__ __forceinline__ void rec_run(const float (&v)[kRecRun + 2 * K], float z, float zk1,
                                        float g, float (&o)[kRecRun]) {
    constexpr int N = kRecRun;
    float c = v[0];  // C(0) = sum_{k<=K} z^k v[K - k], Horner
#pragma unroll
    for (int q = 1; q <= K; ++q) c = fmaf(z, c, v[q]);
    o[0] = c;
#pragma unroll
    for (int i = 1; i < N; ++i) o[i] = c = fmaf(z, c, fmaf(-zk1, v[i - 1], v[i + K]));
    float a = v[N - 1 + 2 * K];  // A(N - 1) = sum_{k<=K} z^k v[N - 1 + K + k], Horner
#pragma unroll
    for (int q = N - 2 + 2 * K; q >= N - 1 + K; --q) a = fmaf(z, a, v[q]);
    o[N - 1] = g * (o[N - 1] + a - v[N - 1 + K]);
#pragma unroll
    for (int i = N - 2; i >= 0; --i) {
        a = fmaf(z, a, fmaf(-zk1, v[i + 1 + 2 * K], v[i + K]));
        o[i] = g * (o[i] + a - v[i + K]);
    }
}

// Issues the copy of tile (x0, y0) plus halos into s_in (interior tiles of 16-byte aligned
// rows: 16-byte cp.async, asynchronous; the others: border-mapped 4-byte loads, synchronous).
template <int K>
__device__ __forceinline__ void rec_load_tile(Span2D<const float> src, Border b, int x0, int y0,
                                              float* s_in) {
    using G = RecGeom<K>;
    const int w = src.width, h = src.height, tid = threadIdx.x;
    const bool vec = x0 - G::HA >= 0 && x0 + kRecTile + G::HA <= w &&
                     (reinterpret_cast<std::uintptr_t>(src.data) & 15) == 0 &&
                     (src.stride & 3) == 0;
    if (vec) {
        constexpr int NQ = G::NX / 4;
        for (int f = tid; f < G::NY * NQ; f += kRecThreads) {
            const int r = f / NQ, q = f - r * NQ;
            const float* g4 = src.row(prefilter_index(y0 - K + r, h, b)) + (x0 - G::HA + 4 * q);
            cp_async16(s_in + r * G::PX + 4 * q, g4);
        }
    } else {
        for (int f = tid; f < G::NY * G::NX; f += kRecThreads) {
            const int r = f / G::NX, q = f - r * G::NX;
            const float* row = src.row(prefilter_index(y0 - K + r, h, b));
            s_in[r * G::PX + q] = row[prefilter_index(x0 - G::HA + q, w, b)];
        }
    }
}

// Persistent blocks (as many as fit on the device, see launch_rec_k) walk the tiles; the copy of
// the next tile is in flight while the current one is filtered (two input buffers), so memory
// traffic and arithmetic overlap. Without this (one tile per block, load -> filter -> store),
// the blocks of a wave run in lockstep and the memory sits idle while they compute: 27.2 us at
// 2048^2 FIR15 on the H200, with only 13% of DRAM bandwidth used (ncu).
template <int K>
__global__ void __launch_bounds__(kRecThreads, K <= 7 ? 3 : 2)
    fir_rec_kernel(Span2D<const float> src, Span2D<float> dst, Border b, float g, float zk1,
                   int tiles_x, int ntiles) {
    using G = RecGeom<K>;
    extern __shared__ float4 rec_smem4[];
    float* s_in0 = reinterpret_cast<float*>(rec_smem4);  // 2 x [NY][PX]: x0 - HA .. x0 + 64 + HA
    float* s_mid = s_in0 + 2 * G::NY * G::PX;            // [NY][PM]: row-filtered, x0 .. x0 + 64
    const float z = static_cast<float>(bspline::kPole);
    const int w = src.width, h = src.height, tid = threadIdx.x;
    int tile = blockIdx.x, buf = 0;
    if (tile < ntiles)
        rec_load_tile<K>(src, b, tile % tiles_x * kRecTile, tile / tiles_x * kRecTile, s_in0);
    cp_async_commit();
    for (; tile < ntiles; tile += gridDim.x, buf ^= 1) {
        const int x0 = tile % tiles_x * kRecTile, y0 = tile / tiles_x * kRecTile;
        const int next = tile + gridDim.x;
        float* s_in = s_in0 + buf * G::NY * G::PX;
        if (next < ntiles)  // its buffer was last read before the previous iteration's barrier
            rec_load_tile<K>(src, b, next % tiles_x * kRecTile, next / tiles_x * kRecTile,
                             s_in0 + (buf ^ 1) * G::NY * G::PX);
        cp_async_commit();
        cp_async_wait<1>();  // this tile's copy has landed (the next one may be in flight)
        __syncthreads();

        // Row pass: task (run rx, row r), consecutive threads on consecutive rows.
        constexpr int kRuns = kRecTile / kRecRun;
        for (int t = tid; t < G::NY * kRuns; t += kRecThreads) {
            const int rx = t / G::NY, r = t - rx * G::NY;
            const float4* in4 = reinterpret_cast<const float4*>(s_in + r * G::PX + rx * kRecRun);
            float l[4 * G::NV];
#pragma unroll
            for (int q = 0; q < G::NV; ++q) {
                const float4 f = in4[q];
                l[4 * q] = f.x, l[4 * q + 1] = f.y, l[4 * q + 2] = f.z, l[4 * q + 3] = f.w;
            }
            float v[kRecRun + 2 * K];
#pragma unroll
            for (int q = 0; q < kRecRun + 2 * K; ++q) v[q] = l[q + G::HA - K];
            float o[kRecRun];
            rec_run<K>(v, z, zk1, g, o);
            float4* out4 = reinterpret_cast<float4*>(s_mid + r * G::PM + rx * kRecRun);
#pragma unroll
            for (int q = 0; q < kRecRun / 4; ++q)
                out4[q] = make_float4(o[4 * q], o[4 * q + 1], o[4 * q + 2], o[4 * q + 3]);
        }
        __syncthreads();

        // Column pass: task (column j, run ry) -> global, coalesced along j.
        static_assert(kRecThreads == kRecTile * (kRecTile / kRecRun), "one column task per thread");
        const int j = tid % kRecTile, ry = tid / kRecTile;
        const int x = x0 + j;
        if (x < w) {
            float v[kRecRun + 2 * K];
#pragma unroll
            for (int q = 0; q < kRecRun + 2 * K; ++q) v[q] = s_mid[(ry * kRecRun + q) * G::PM + j];
            float o[kRecRun];
            rec_run<K>(v, z, zk1, g, o);
            const int yb = y0 + ry * kRecRun;
#pragma unroll
            for (int i = 0; i < kRecRun; ++i)
                if (yb + i < h) dst.row(yb + i)[x] = o[i];
        }
        __syncthreads();  // s_mid is rewritten by the next tile's row pass
    }
    cp_async_wait<0>();
}

template <int K>
void launch_rec_k(Span2D<const float> src, Span2D<float> dst, Border b, float g, float zk1,
                  cudaStream_t s) {
    using G = RecGeom<K>;
    constexpr std::size_t smem = G::kSmemBytes;
    static int resident[kMaxDevices] = {};  // blocks per SM x SMs, per device
    static std::once_flag once[kMaxDevices];
    const int dev = current_device();
    std::call_once(once[dev], [dev] {
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(fir_rec_kernel<K>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(smem)));
        int per_sm = 0, sms = 0;
        UPRES_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fir_rec_kernel<K>,
                                                                       kRecThreads, smem));
        UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
        resident[dev] = std::max(1, per_sm) * sms;
    });
    const int tiles_x = (src.width + kRecTile - 1) / kRecTile;
    const int ntiles = tiles_x * ((src.height + kRecTile - 1) / kRecTile);
    const int grid = std::min(ntiles, resident[dev]);
    fir_rec_kernel<K><<<grid, kRecThreads, smem, s>>>(src, dst, b, g, zk1, tiles_x, ntiles);
    UPRES_CUDA_CHECK_LAUNCH();
}

// fir_length 0: the exact filter (K = 15, g = sqrt(3)); else the renormalised FIR (eq. 6).
void launch_rec(Span2D<const float> src, Span2D<float> dst, Border b, int fir_length,
                cudaStream_t s) {
    const int K = fir_length == 0 ? bspline::kMaxFirRadius : (fir_length - 1) / 2;
    double taps[kMaxFirLength];
    if (fir_length) bspline::fir_taps(fir_length, taps);  // centre tap: g of eq. 6
    const float g = static_cast<float>(fir_length == 0 ? bspline::kSqrt3 : taps[K]);
    const float zk1 = static_cast<float>(std::pow(bspline::kPole, K + 1));
    switch (K) {
#define UPRES_REC_CASE(k) \
    case k:               \
        return launch_rec_k<k>(src, dst, b, g, zk1, s);
        UPRES_REC_CASE(1)
        UPRES_REC_CASE(2)
        UPRES_REC_CASE(3)
        UPRES_REC_CASE(4)
        UPRES_REC_CASE(5)
        UPRES_REC_CASE(6)
        UPRES_REC_CASE(7)
        UPRES_REC_CASE(8)
        UPRES_REC_CASE(9)
        UPRES_REC_CASE(10)
        UPRES_REC_CASE(11)
        UPRES_REC_CASE(12)
        UPRES_REC_CASE(13)
        UPRES_REC_CASE(14)
        UPRES_REC_CASE(15)
#undef UPRES_REC_CASE
        default:
            throw Error(ErrorCode::Internal, "bspline_prefilter: FIR radius out of range");
    }
}

// ---------------------------------------------------------------- Box tiles (IirFused)

// The exact filter on tiles of kBoxW x kBoxH coefficients, 1 channel: each block gathers its
// tile plus iir_box::kIirHalo = 12 samples on every side through the prefilter's extension and
// runs the recursions of the recursive fused warp kernel on it in shared memory
// (iir_box::rec_box: lines split between two threads with closed-form segment starts, 8-byte
// words, a pitch of 2 mod 4 floats), then writes the tile's coefficients times the gain 36 z^2
// (the box holds them divided by (6 z)^2). Truncating the recursions' start-ups at 12 samples
// costs at most 1.7e-7 of the range per pass (docs/ops/bspline.md). 128 x 64 tiles: 1.6 box
// samples per coefficient, 4 blocks of 256 threads per SM (register bound), 54 KB of shared
// memory each.
constexpr int kBoxW = 128, kBoxH = 64;

__global__ void __launch_bounds__(iir_box::kRThreads, 4)
    iir_box_kernel(Span2D<const float> src, Span2D<float> dst, int pitch, Border border) {
    using namespace iir_box;
    extern __shared__ float4 box_smem4[];
    float* s = reinterpret_cast<float*>(box_smem4);
    constexpr int H = kIirHalo;
    const int cx0 = blockIdx.x * kBoxW, cy0 = blockIdx.y * kBoxH;
    const int cw = min(kBoxW, src.width - cx0), ch = min(kBoxH, src.height - cy0);
    const int iw = box_width(cw), ih = ch + 2 * H;
    rec_box<false>(src, s, pitch, border, cx0 - H, cy0 - H, iw, ih);
    const float gain = static_cast<float>(36.0 * bspline::kPole * bspline::kPole);
    const int tx = threadIdx.x & 31, ty = threadIdx.x >> 5;
    for (int r = ty; r < ch; r += kRRows) {  // one warp per row: coalesced stores
        const float* a = s + (H + r) * pitch + H;
        float* o = dst.row(cy0 + r) + cx0;
        for (int c = tx; c < cw; c += 32) o[c] = gain * a[c];
    }
}

// Box pitch (floats, 2 mod 4 >= the widest box) and shared-memory bytes of iir_box_kernel.
void box_layout(int w, int h, int& pitch, std::size_t& bytes) {
    pitch = iir_box::box_pitch(iir_box::box_width(std::min(kBoxW, w)));
    bytes = sizeof(float) * static_cast<std::size_t>(pitch) *
            (std::min(kBoxH, h) + 2 * iir_box::kIirHalo);
}

void launch_iir_box(Span2D<const float> src, Span2D<float> dst, Border b, cudaStream_t s) {
    static std::once_flag once[kMaxDevices];
    std::call_once(once[current_device()], [] {
        int p = 0;
        std::size_t most = 0;
        box_layout(kBoxW, kBoxH, p, most);
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(
            iir_box_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(most)));
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(iir_box_kernel,
                                              cudaFuncAttributePreferredSharedMemoryCarveout,
                                              cudaSharedmemCarveoutMaxShared));
    });
    int pitch = 0;
    std::size_t bytes = 0;
    box_layout(src.width, src.height, pitch, bytes);
    const dim3 grid((src.width + kBoxW - 1) / kBoxW, (src.height + kBoxH - 1) / kBoxH);
    iir_box_kernel<<<grid, iir_box::kRThreads, bytes, s>>>(src, dst, pitch, b);
    UPRES_CUDA_CHECK_LAUNCH();
}

// Whether `k` can run this FirFused / IirFused case (FusedKernel::Auto always can).
const char* fused_refusal(FusedKernel k, Span2D<const float> src, const PrefilterOptions& opts) {
    switch (k) {
        case FusedKernel::FirRec:
            if (src.channels != 1) return "the recursive-sum tiles run 1-channel images only";
            return nullptr;
        case FusedKernel::Box:
            if (opts.fir_length != 0) return "the box tiles run the exact filter only";
            if (src.channels != 1 || src.width < 32 || src.height < 32)
                return "the box tiles run 1-channel images of 32 x 32 or more only";
            return nullptr;
        default:
            return nullptr;
    }
}

// The kernel FusedKernel::Auto runs on src.
FusedKernel auto_kernel(Span2D<const float> src, const PrefilterOptions& opts) {
    // Box tiles: the exact filter, 1 channel, 32 x 32 or more (smaller images take the
    // kernels below, and bspline_prefilter runs Recursive under 32 in either direction).
    // Measured fastest for the exact filter at 1024^2, 2048^2 and 4096^2 (docs/ops/bspline.md,
    // sections 4-5, H100: 2048^2 21.3-22.3 us against 35.1 us for the streaming kernel).
    // FirRec (1 channel) only for FIR lengths above 15 (radius 8..15, 31 taps in FirFused)
    // from 2^23 samples. Up to 15 taps the tile kernel is faster at every size since it is
    // compiled for one channel (H200, FIR15: 4096^2 61.8 us vs 65.5 us, 2048^2 20.8 vs
    // 27.7 us). Otherwise: FIR: the tile kernel; exact: the streaming kernel from 2^21
    // elements (2048^2: 34.7 us vs 42.4 us), the tile kernel below (1024^2: 18.9 us vs
    // 24.3 us).
    const bool big = std::int64_t{src.width} * src.channels * src.height >= (1 << 21);
    if (!fused_refusal(FusedKernel::Box, src, opts)) return FusedKernel::Box;
    if (src.channels == 1 && opts.fir_length > 15 &&
        std::int64_t{src.width} * src.height >= (std::int64_t{1} << 23))
        return FusedKernel::FirRec;
    return (opts.fir_length == 0 && big) ? FusedKernel::Stream : FusedKernel::Tile;
}

// FirFused / IirFused on kernel k (Auto: auto_kernel's choice). seg: rows per warp segment
// of the streaming kernels, 0: automatic.
void run_fused(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts,
               FusedKernel k, int seg, cudaStream_t s) {
    // In place: tiles/segments read halos that their neighbours overwrite, so copy first.
    const std::size_t bytes = sizeof(float) * std::size_t(src.width) * src.channels * src.height;
    const std::ptrdiff_t rs = std::ptrdiff_t{src.width} * src.channels;
    Span2D<const float> in = src;
    DeviceTemp tmp;  // empty unless in place
    if (src.data == dst.data) {
        tmp = DeviceTemp(bytes, s, "bspline_prefilter (copy of the in-place source)");
        UPRES_CUDA_CHECK(cudaMemcpy2DAsync(tmp.as<float>(), rs * sizeof(float), src.data,
                                           src.stride * sizeof(float), rs * sizeof(float),
                                           src.height, cudaMemcpyDeviceToDevice, s));
        in = Span2D<const float>{tmp.as<float>(), src.width, src.height, src.channels, rs};
    }
    const Border b = opts.border;
    if (k == FusedKernel::Auto) k = auto_kernel(src, opts);
    if (k == FusedKernel::FirRec) return launch_rec(in, dst, b, opts.fir_length, s);
    if (k == FusedKernel::Box) return launch_iir_box(in, dst, b, s);
    if (opts.fir_length == 0) {
        if (k == FusedKernel::Tile)
            launch_iir_fused(in, dst, b, s);
        else
            launch_stream<kIirR, true>(in, dst, b, Taps{}, seg, s);
        return;
    }
    const int K = (opts.fir_length - 1) / 2;
    const int R = K <= 3 ? 3 : K <= 7 ? 7 : 15;
    const Taps taps = make_taps(opts.fir_length, R);
    if (k == FusedKernel::Tile) {
        if (R == 3)
            launch_fused<3>(in, dst, b, taps, s);
        else if (R == 7)
            launch_fused<7>(in, dst, b, taps, s);
        else
            launch_fused<15>(in, dst, b, taps, s);
        return;
    }
    if (R == 3)
        launch_stream<3, false>(in, dst, b, taps, seg, s);
    else if (R == 7)
        launch_stream<7, false>(in, dst, b, taps, seg, s);
    else
        launch_stream<15, false>(in, dst, b, taps, seg, s);
}

}  // namespace

void bspline_prefilter(Span2D<const float> src, Span2D<float> dst, const PrefilterOptions& opts,
                       void* stream) {
    auto s = static_cast<cudaStream_t>(stream);
    const bool iir = opts.fir_length == 0;
    PrefilterVariant v = opts.variant;
    // Auto: measured fastest (docs/ops/bspline.md): the fused kernels. Lines shorter than
    // 2 kMaxFirRadius + 2 samples take the recursive path for the exact filter.
    if (v == PrefilterVariant::Auto)
        v = iir ? PrefilterVariant::IirFused : PrefilterVariant::FirFused;
    if (v == PrefilterVariant::IirFused &&
        std::min(src.width, src.height) < 2 * bspline::kMaxFirRadius + 2)
        v = PrefilterVariant::Recursive;

    const bool fir_variant = v == PrefilterVariant::FirShared || v == PrefilterVariant::FirFused;
    if (iir == fir_variant)
        throw Error(ErrorCode::InvalidArgument,
                    "cuda::bspline_prefilter: variant does not match fir_length " +
                        std::to_string(opts.fir_length));

    const std::size_t bytes = sizeof(float) * std::size_t(src.width) * src.channels * src.height;
    const std::ptrdiff_t rs = std::ptrdiff_t{src.width} * src.channels;
    switch (v) {
        case PrefilterVariant::Recursive:
            run_recursive(src, dst, opts.border, s);
            return;
        case PrefilterVariant::FirShared: {
            const int K = (opts.fir_length - 1) / 2;
            const Taps taps = make_taps(opts.fir_length, K);
            DeviceTemp tmp(bytes, s, "bspline_prefilter (FirShared row pass)");
            Span2D<float> t{tmp.as<float>(), src.width, src.height, src.channels, rs};
            const dim3 g1(src.height, (rs + kRowThreads - 1) / kRowThreads);
            fir_rows_shared_kernel<<<g1, kRowThreads, 0, s>>>(src, t, opts.border, taps, K);
            UPRES_CUDA_CHECK_LAUNCH();
            const dim3 g2((rs + kColThreads - 1) / kColThreads,
                          (src.height + kColRows - 1) / kColRows);
            const std::size_t sm = sizeof(float) * (2 * K + 1) * kColThreads;
            fir_cols_rotating_kernel<<<g2, kColThreads, sm, s>>>(
                Span2D<const float>{t.data, t.width, t.height, t.channels, t.stride}, dst,
                opts.border, taps, K);
            UPRES_CUDA_CHECK_LAUNCH();
            return;
        }
        case PrefilterVariant::FirFused:
        case PrefilterVariant::IirFused:
        case PrefilterVariant::Auto:
            run_fused(src, dst, opts, FusedKernel::Auto, 0, s);
            return;
    }
}

void bspline_prefilter_forced(Span2D<const float> src, Span2D<float> dst,
                              const PrefilterOptions& opts, FusedKernel kernel, int seg,
                              void* stream) {
    const bool iir = opts.fir_length == 0;
    const char* why = nullptr;
    if (opts.variant != (iir ? PrefilterVariant::IirFused : PrefilterVariant::FirFused))
        why = iir ? "the exact filter's fused kernels need variant iir-fused"
                  : "a FIR filter's fused kernels need variant fir-fused";
    else if (iir && std::min(src.width, src.height) < 2 * bspline::kMaxFirRadius + 2)
        why = "lines shorter than 32 samples run the recursive filter";
    else if (seg < 0 || (seg > 0 && kernel != FusedKernel::Stream))
        why = "seg (rows per warp segment) is for the streaming kernel only, and >= 0";
    else
        why = fused_refusal(kernel, src, opts);
    if (why)
        throw Error(ErrorCode::InvalidArgument,
                    std::string("cuda::bspline_prefilter_forced: the forced kernel cannot run "
                                "this case: ") +
                        why);
    run_fused(src, dst, opts, kernel, seg, static_cast<cudaStream_t>(stream));
}

PrefilterBandPlan prefilter_band_plan(int w, int h, int c, const PrefilterOptions& opts,
                                      bool any_device) {
    PrefilterBandPlan plan;
    const bool iir = opts.fir_length == 0;
    // bspline_prefilter's own choice (Auto): the recursive path under 32 samples runs whole
    // columns, so the image is one band.
    if ((opts.variant != PrefilterVariant::Auto &&
         opts.variant != (iir ? PrefilterVariant::IirFused : PrefilterVariant::FirFused)) ||
        (iir && std::min(w, h) < 2 * bspline::kMaxFirRadius + 2))
        return plan;
    const Span2D<const float> shape{nullptr, w, h, c, std::ptrdiff_t{w} * c};
    plan.kernel = auto_kernel(shape, opts);
    // Every fused kernel cuts the rows in tiles of 64 (Tile, FirRec, Box), the streaming one in
    // segments of `seg` rows (a function of the whole image's height: fixed here).
    plan.unit = 64;
    // Columns: the tiles' widths (launch_iir_box, launch_rec, launch_iir_fused, launch_fused),
    // the streaming kernel's strips of kStripE elements (whole pixels: lcm(kStripE, c) / c).
    switch (plan.kernel) {
        case FusedKernel::Box:
            plan.unit_x = kBoxW;
            break;
        case FusedKernel::FirRec:
            plan.unit_x = kRecTile;
            break;
        case FusedKernel::Stream:
            plan.unit_x = c == 3 ? kStripE : kStripE / c;
            break;
        default:
            plan.unit_x = iir ? kIirTileE / c : fused_tile_pixels(c);
            break;
    }
    if (plan.kernel == FusedKernel::Stream && any_device) {
        plan.unit = cpu::kCudaMaxBandUnit;
        plan.unit_is_bound = true;
    } else if (plan.kernel == FusedKernel::Stream) {
        const int nstrips = (w * c + kStripE - 1) / kStripE;
        plan.seg = stream_segment(h, nstrips, kIirR, 0);  // Auto streams the exact filter only
        plan.unit = plan.seg;
    }
    return plan;
}

void bspline_prefilter_band(Span2D<const float> src, Span2D<float> dst,
                            const PrefilterOptions& opts, const PrefilterBandPlan& plan,
                            void* stream) {
    if (plan.unit == 0) return bspline_prefilter(src, dst, opts, stream);
    run_fused(src, dst, opts, plan.kernel, plan.seg, static_cast<cudaStream_t>(stream));
}

void bspline_prefilter_pass(Span2D<const float> src, Span2D<float> dst,
                            const PrefilterOptions& opts, int pass, void* stream) {
    auto s = static_cast<cudaStream_t>(stream);
    const std::ptrdiff_t rs = std::ptrdiff_t{src.width} * src.channels;
    if (opts.variant == PrefilterVariant::Recursive && opts.fir_length == 0) {
        constexpr int kThreads = 64;
        const int rows = src.height * src.channels;
        if (pass == 0)
            iir_rows_kernel<<<(rows + kThreads - 1) / kThreads, kThreads, 0, s>>>(src, dst,
                                                                                  opts.border);
        else
            iir_cols_kernel<<<int((rs + kThreads - 1) / kThreads), kThreads, 0, s>>>(dst,
                                                                                     opts.border);
        UPRES_CUDA_CHECK_LAUNCH();
        return;
    }
    if (opts.variant == PrefilterVariant::FirShared && opts.fir_length > 0) {
        const int K = (opts.fir_length - 1) / 2;
        const Taps taps = make_taps(opts.fir_length, K);
        if (pass == 0) {
            const dim3 g1(src.height, (rs + kRowThreads - 1) / kRowThreads);
            fir_rows_shared_kernel<<<g1, kRowThreads, 0, s>>>(src, dst, opts.border, taps, K);
        } else {
            const dim3 g2((rs + kColThreads - 1) / kColThreads,
                          (src.height + kColRows - 1) / kColRows);
            const std::size_t sm = sizeof(float) * (2 * K + 1) * kColThreads;
            fir_cols_rotating_kernel<<<g2, kColThreads, sm, s>>>(src, dst, opts.border, taps, K);
        }
        UPRES_CUDA_CHECK_LAUNCH();
        return;
    }
    throw Error(ErrorCode::InvalidArgument,
                "bspline_prefilter_pass: only the recursive (IIR) and fir-shared (FIR) variants "
                "have separate passes");
}

}  // namespace upres::cuda
