// CUDA backend of the cubic B-spline prefilter (docs/ops/bspline.md, "GPU kernels").
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
//   IirFused   the exact IIR on overlapped 2-D tiles: each block loads its tile plus 16 samples
//              of warm-up on every side (cp.async), runs the causal/anticausal recursions
//              along rows then columns in shared memory, and writes the tile's centre. The
//              zero start state decays by |z|^16 = 7e-10 before any output (bspline_math.hpp).
// Every launch is checked; temporaries are stream-ordered (cudaMallocAsync).
//
// Measured (bench/bspline_bench.cpp, NVIDIA H200, 2026-11-21, 2048^2 float, 1 channel; a
// device-to-device copy of the image takes 11.9 us): Recursive 1100 us (rows 499, columns 971),
// FirShared FIR15 99 us (rows 43, columns 46), FirFused FIR15 25.3 us (2.13x copy), FIR7 20.2,
// FIR31 39.0, IirFused 42.2 us (3.5x copy). docs/ops/bspline.md has all sizes.
#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <mutex>
#include <optional>

#include "core/cuda_check.hpp"
#include "ops/bspline/bspline_backends.hpp"
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

// H200, 2048^2, FIR15: 28.5 us with synchronous loads, 25.3 us with cp.async (2026-11-21).
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

template <int KMAX>
__global__ void __launch_bounds__(kFusedThreads)
    fir_fused_kernel(Span2D<const float> src, Span2D<float> dst, Border b, Taps taps) {
    extern __shared__ float sm[];
    const int C = src.channels, w = src.width, h = src.height;
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
#pragma unroll
        for (int i = 0; i < kRun; ++i) {
            const int y = y0 + ry * kRun + i;
            float acc = 0.0f;
#pragma unroll
            for (int k = 0; k <= 2 * KMAX; ++k) acc = fmaf(taps.t[k], v[i + k], acc);
            if (y < h) dst.row(y)[gx + j] = acc;
        }
    }
}

template <int KMAX>
void launch_fused(Span2D<const float> src, Span2D<float> dst, Border b, const Taps& taps,
                  cudaStream_t s) {
    static std::once_flag once[kMaxDevices];
    std::call_once(once[current_device()], [] {
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(fir_fused_kernel<KMAX>,
                                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(fused_smem_bytes<KMAX>(4))));
    });
    const int twp = fused_tile_pixels(src.channels);
    const dim3 grid((src.width + twp - 1) / twp, (src.height + kTileH - 1) / kTileH);
    fir_fused_kernel<KMAX>
        <<<grid, kFusedThreads, fused_smem_bytes<KMAX>(src.channels), s>>>(src, dst, b, taps);
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

// ---------------------------------------------------------------- non-finite scan

__global__ void find_nonfinite_kernel(Span2D<const float> src, unsigned long long* first) {
    const int n = src.width * src.channels;
    const int y = blockIdx.x;  // rows in x: heights up to kMaxDimension exceed gridDim.y
    const float* r = src.row(y);
    for (int i = blockIdx.y * blockDim.x + threadIdx.x; i < n; i += gridDim.y * blockDim.x)
        if (!isfinite(r[i]))
            atomicMin(first, static_cast<unsigned long long>(y) * n + i);  // min: deterministic
}

// Stream-ordered temporary device buffer.
struct DeviceTemp {
    float* p = nullptr;
    cudaStream_t s;
    DeviceTemp(std::size_t bytes, cudaStream_t st) : s(st) {
        UPRES_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&p), bytes, s));
    }
    ~DeviceTemp() {
        if (p) cudaFreeAsync(p, s);
    }
    DeviceTemp(const DeviceTemp&) = delete;
    DeviceTemp& operator=(const DeviceTemp&) = delete;
};

}  // namespace

std::int64_t bspline_find_nonfinite(Span2D<const float> src, void* stream) {
    auto s = static_cast<cudaStream_t>(stream);
    unsigned long long* d = nullptr;
    UPRES_CUDA_CHECK(cudaMallocAsync(reinterpret_cast<void**>(&d), sizeof(*d), s));
    unsigned long long h = ~0ull;
    cudaError_t err = cudaMemcpyAsync(d, &h, sizeof(h), cudaMemcpyHostToDevice, s);
    if (err == cudaSuccess) {
        const int n = src.width * src.channels;
        const dim3 grid(src.height, std::min((n + 255) / 256, 16));
        find_nonfinite_kernel<<<grid, 256, 0, s>>>(src, d);
        err = cudaGetLastError();
    }
    if (err == cudaSuccess) err = cudaMemcpyAsync(&h, d, sizeof(h), cudaMemcpyDeviceToHost, s);
    cudaFreeAsync(d, s);
    if (err == cudaSuccess) err = cudaStreamSynchronize(s);
    if (err != cudaSuccess) throw_cuda_error(err, "bspline_find_nonfinite", __FILE__, __LINE__);
    return h == ~0ull ? -1 : static_cast<std::int64_t>(h);
}

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
            DeviceTemp tmp(bytes, s);
            Span2D<float> t{tmp.p, src.width, src.height, src.channels, rs};
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
        case PrefilterVariant::Auto: {
            // In place: tiles read halos that neighbouring tiles overwrite, so copy first.
            Span2D<const float> in = src;
            std::optional<DeviceTemp> tmp;
            if (src.data == dst.data) {
                tmp.emplace(bytes, s);
                UPRES_CUDA_CHECK(cudaMemcpy2DAsync(tmp->p, rs * sizeof(float), src.data,
                                                   src.stride * sizeof(float), rs * sizeof(float),
                                                   src.height, cudaMemcpyDeviceToDevice, s));
                in = Span2D<const float>{tmp->p, src.width, src.height, src.channels, rs};
            }
            if (iir) {
                launch_iir_fused(in, dst, opts.border, s);
                return;
            }
            const int K = (opts.fir_length - 1) / 2;
            if (K <= 3)
                launch_fused<3>(in, dst, opts.border, make_taps(opts.fir_length, 3), s);
            else if (K <= 7)
                launch_fused<7>(in, dst, opts.border, make_taps(opts.fir_length, 7), s);
            else
                launch_fused<15>(in, dst, opts.border, make_taps(opts.fir_length, 15), s);
            return;
        }
    }
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
