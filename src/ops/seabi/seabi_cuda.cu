// SEABI CUDA backend. The paper's GPU optimisations and further fusion:
//  - total variation: grid-stride sums, warp shuffles, one integer atomic per warp (integer
//    sums: deterministic); the threshold is computed on the device (no host round trip, where
//    the paper copied the reduction result to the host);
//  - SIL-SEABI is two fused kernels after the reduction:
//      error_kernel<true>:  L-SEAI construction of a tile + halo into shared memory (writing the
//                           tile's own cells to global memory for the final add), the vertical
//                           blur at the even rows only and the horizontal blur at the even
//                           columns only (blur fused with decimation, the paper's convRowsdec),
//                           the error image; the HR image is never re-read from global memory
//                           for the blur;
//      refine_kernel:       CxHD up-sampling of the error tile + halo into shared memory, the
//                           5 x 5 back-projection filter from shared memory (the paper's
//                           shared-memory convNoSep, here split exactly into centre minus
//                           separable), add and clamp; the up-sampled error never goes to
//                           global memory;
//  - branch-free edge rules (the selects of seabi_math.hpp compile to predicated code), 4
//    outputs per thread (one 2 x 2 cell), 256 threads per block, integer arithmetic only, so
//    the output is bit-identical to the reference.
// Tile: 32 x 8 low-resolution pixels per block (64 x 16 output pixels).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"
#include "ops/seabi/seabi_backends.hpp"
#include "ops/seabi/seabi_cuda.hpp"
#include "ops/seabi/seabi_math.hpp"

namespace upres::seabi {

namespace {

constexpr int TX = 32, TY = 8;                   // low-resolution tile (cells) per block
constexpr int YW = 2 * TX + 4, YH = 2 * TY + 4;  // high-resolution region: tile + 2 each side
constexpr int kThreads = TX * TY;

// The tile's geometry on each lattice. Co-sited: cells i0 - 1 .. i0 + TX write local columns
// 2 cc, 2 cc + 1 and read input columns from i0 - 2. Centred: blocks i0 - 1 .. i0 + TX + 1 write
// local columns 2 cc - 1, 2 cc (the first and last fall outside the region) and read input
// columns from i0 - 3. Rows alike. The high-resolution region starts at 2 i0 - 2 on both.
template <bool kCentered>
struct Geo {
    static constexpr int C = kCentered ? 1 : 0;
    static constexpr int R0 = 2 + C;                        // input halo before the tile
    static constexpr int RW = TX + 5 + C, RH = TY + 5 + C;  // input region incl. halo
    static constexpr int CW = TX + 2 + C, CH = TY + 2 + C;  // cells / blocks incl. halo
};

template <class T>
Span2D<const T> cspan(Span2D<T> s) {
    return {s.data, s.width, s.height, s.channels, s.stride};
}

__device__ __forceinline__ int clampd(int v, int lo, int hi) { return min(max(v, lo), hi); }

__device__ __forceinline__ void block_add_u64(unsigned long long v, unsigned long long* dst) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) atomicAdd(dst, v);
}

// R1: sum of gx^2 + gy^2 (one atomic per warp).
__global__ void tv_kernel(Span2D<const std::uint8_t> in, unsigned long long* tv) {
    const int w = in.width, h = in.height;
    const long long n = static_cast<long long>(w) * h;
    unsigned long long acc = 0;
    for (long long k = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; k < n;
         k += static_cast<long long>(gridDim.x) * blockDim.x) {
        const int y = static_cast<int>(k / w), x = static_cast<int>(k % w);
        const std::uint8_t* r = in.row(y);
        const int v = r[x];
        acc +=
            static_cast<unsigned>(tv_term(v, r[min(x + 1, w - 1)], in.row(min(y + 1, h - 1))[x]));
    }
    block_add_u64(acc, tv);
}

__global__ void threshold_kernel(const unsigned long long* tv, long long pixels, int* th) {
    const int tq = static_cast<int>(static_cast<long long>(*tv) / pixels);
    int t = static_cast<int>(sqrtf(static_cast<float>(tq)));
    while (t > 0 && t * t > tq) --t;
    while ((t + 1) * (t + 1) <= tq) ++t;
    th[0] = tq;
    th[1] = t;
}

// Centred L-SEAI straight to global memory: one block (kx, ky) in [0, W] x [0, H] per thread,
// output pixels (2 kx - 1 + i, 2 ky - 1 + j) inside the image.
__global__ void lseai_centered_kernel(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                                      const int* th) {
    const int kx = blockIdx.x * blockDim.x + threadIdx.x;
    const int ky = blockIdx.y * blockDim.y + threadIdx.y;
    const int w = in.width, h = in.height;
    if (kx > w || ky > h) return;
    int p[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        const std::uint8_t* row = in.row(clampd(ky + r - 2, 0, h - 1));
#pragma unroll
        for (int c = 0; c < 4; ++c) p[r][c] = __ldg(row + clampd(kx + c - 2, 0, w - 1));
    }
    const Quad q = lseai_quad(p, th[0], th[1]);
    const int v[2][2] = {{q.q00, q.q10}, {q.q01, q.q11}};
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        const int y = 2 * ky - 1 + j;
        if (y < 0 || y >= 2 * h) continue;
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int x = 2 * kx - 1 + i;
            if (x >= 0 && x < 2 * w) out(x, y) = static_cast<std::uint8_t>(v[j][i]);
        }
    }
}

// L-SEAI straight to global memory (L-SEAI output, and L-SEABI's first image).
__global__ void lseai_kernel(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                             const int* th) {
    const int cx = blockIdx.x * blockDim.x + threadIdx.x;
    const int cy = blockIdx.y * blockDim.y + threadIdx.y;
    const int w = in.width, h = in.height;
    if (cx >= w || cy >= h) return;
    int p[4][4];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
        const std::uint8_t* row = in.row(clampd(cy + r - 1, 0, h - 1));
#pragma unroll
        for (int c = 0; c < 4; ++c) p[r][c] = __ldg(row + clampd(cx + c - 1, 0, w - 1));
    }
    const Cell cl = lseai_cell(p, th[0], th[1]);
    std::uint8_t* top = out.row(2 * cy) + 2 * cx;
    std::uint8_t* bot = out.row(2 * cy + 1) + 2 * cx;
    top[0] = static_cast<std::uint8_t>(p[1][1]);
    top[1] = static_cast<std::uint8_t>(cl.h);
    bot[0] = static_cast<std::uint8_t>(cl.v);
    bot[1] = static_cast<std::uint8_t>(cl.d);
}

// A centred block's four samples into the tile's HR region (local columns 2 cc - 1, 2 cc, rows
// 2 cr - 1, 2 cr); the halo blocks' outer samples fall outside it and are dropped.
template <class T>
__device__ __forceinline__ void store_quad(T (&dst)[YH][YW], int cc, int cr, const Quad& q) {
    const int v[2][2] = {{q.q00, q.q10}, {q.q01, q.q11}};
#pragma unroll
    for (int j = 0; j < 2; ++j)
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int lx = 2 * cc - 1 + i, ly = 2 * cr - 1 + j;
            if (lx >= 0 && lx < YW && ly >= 0 && ly < YH) dst[ly][lx] = static_cast<T>(v[j][i]);
        }
}

// R5 + R6 (C5) for a 32 x 8 tile: the error image (and l1). kConstruct: the HR region is built
// here by L-SEAI (and the tile's own cells are written to `y`); otherwise it is read from `y`.
template <bool kConstruct, bool kCentered>
__global__ void __launch_bounds__(kThreads)
    error_kernel(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> y, Span2D<std::int16_t> err,
                 const int* th, unsigned long long* l1) {
    using G = Geo<kCentered>;
    __shared__ std::uint8_t ys[YH][YW];
    __shared__ std::uint8_t lrs[G::RH][G::RW];
    __shared__ int cb[TY][YW];
    const int w = in.width, h = in.height, w2 = 2 * w, h2 = 2 * h;
    const int i0 = blockIdx.x * TX, j0 = blockIdx.y * TY;
    const int ox = 2 * i0 - 2, oy = 2 * j0 - 2;  // HR origin of the shared region
    const int tid = threadIdx.y * TX + threadIdx.x;
    if (kConstruct) {
        for (int k = tid; k < G::RH * G::RW; k += kThreads) {
            const int r = k / G::RW, c = k % G::RW;
            lrs[r][c] = in(clampd(i0 - G::R0 + c, 0, w - 1), clampd(j0 - G::R0 + r, 0, h - 1));
        }
        __syncthreads();
        const int tq = th[0], t = th[1];
        for (int k = tid; k < G::CH * G::CW; k += kThreads) {
            const int cr = k / G::CW, cc = k % G::CW;
            const int cx = i0 - 1 + cc, cy = j0 - 1 + cr;
            if (cx < 0 || cx >= w + G::C || cy < 0 || cy >= h + G::C) continue;
            int p[4][4];
#pragma unroll
            for (int r = 0; r < 4; ++r)
#pragma unroll
                for (int c = 0; c < 4; ++c) p[r][c] = lrs[cr + r][cc + c];
            if constexpr (kCentered) {
                store_quad(ys, cc, cr, lseai_quad(p, tq, t));
            } else {
                const Cell cl = lseai_cell(p, tq, t);
                const std::uint8_t a = static_cast<std::uint8_t>(p[1][1]);
                const std::uint8_t hv = static_cast<std::uint8_t>(cl.h);
                const std::uint8_t vv = static_cast<std::uint8_t>(cl.v);
                const std::uint8_t dv = static_cast<std::uint8_t>(cl.d);
                ys[2 * cr][2 * cc] = a;
                ys[2 * cr][2 * cc + 1] = hv;
                ys[2 * cr + 1][2 * cc] = vv;
                ys[2 * cr + 1][2 * cc + 1] = dv;
                if (cr >= 1 && cr <= TY && cc >= 1 && cc <= TX) {  // own cell: keep for the add
                    *reinterpret_cast<uchar2*>(y.row(2 * cy) + 2 * cx) = make_uchar2(a, hv);
                    *reinterpret_cast<uchar2*>(y.row(2 * cy + 1) + 2 * cx) = make_uchar2(vv, dv);
                }
            }
        }
    } else {
        for (int k = tid; k < YH * YW; k += kThreads) {
            const int r = k / YW, c = k % YW;
            const int gx = ox + c, gy = oy + r;
            if (gx >= 0 && gx < w2 && gy >= 0 && gy < h2) ys[r][c] = y(gx, gy);
        }
    }
    __syncthreads();
    if constexpr (kConstruct && kCentered) {  // the tile's own 2 x 2 output cells, for the add
        const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
        if (i < w && j < h) {
            const int lx = 2 * threadIdx.x + 2, ly = 2 * threadIdx.y + 2;
            *reinterpret_cast<uchar2*>(y.row(2 * j) + 2 * i) =
                make_uchar2(ys[ly][lx], ys[ly][lx + 1]);
            *reinterpret_cast<uchar2*>(y.row(2 * j + 1) + 2 * i) =
                make_uchar2(ys[ly + 1][lx], ys[ly + 1][lx + 1]);
        }
    }
    // Vertical blur at the decimated rows of the tile, all HR columns of the region.
    for (int k = tid; k < TY * YW; k += kThreads) {
        const int r = k / YW, c = k % YW;
        const int gx = ox + c, gy = 2 * (j0 + r);
        if (gx < 0 || gx >= w2 || gy >= h2) continue;
        auto at = [&](int d) { return static_cast<int>(ys[clampd(gy + d, 0, h2 - 1) - oy][c]); };
        cb[r][c] = kCentered ? cblur6(at(-2), at(-1), at(0), at(1), at(2), at(3))
                             : blur5(at(-2), at(-1), at(0), at(1), at(2));
    }
    __syncthreads();
    const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
    int ae = 0;
    if (i < w && j < h) {
        const int gx = 2 * i;
        const int* row = cb[threadIdx.y];
        auto at = [&](int d) { return row[clampd(gx + d, 0, w2 - 1) - ox]; };
        const int d = kCentered ? cblur6(at(-2), at(-1), at(0), at(1), at(2), at(3))
                                : blur5(at(-2), at(-1), at(0), at(1), at(2));
        const int lv = kConstruct ? static_cast<int>(lrs[threadIdx.y + G::R0][threadIdx.x + G::R0])
                                  : static_cast<int>(in(i, j));
        const int ev = lv - d;
        err(i, j) = static_cast<std::int16_t>(ev);
        ae = iabs(ev);
    }
    if (l1) block_add_u64(static_cast<unsigned long long>(ae), l1);
}

// R7 (C7) + R8 + R9 for a 32 x 8 cell tile (64 x 16 output pixels, one 2 x 2 cell per thread).
template <bool kCentered>
__global__ void __launch_bounds__(kThreads)
    refine_kernel(Span2D<const std::int16_t> err, Span2D<const std::uint8_t> y,
                  Span2D<std::uint8_t> out) {
    using G = Geo<kCentered>;
    __shared__ std::int16_t es[G::RH][G::RW];
    __shared__ std::int16_t eh[YH][YW];
    __shared__ int vs[2 * TY][YW];
    const int w = err.width, h = err.height, w2 = 2 * w, h2 = 2 * h;
    const int i0 = blockIdx.x * TX, j0 = blockIdx.y * TY;
    const int ox = 2 * i0 - 2, oy = 2 * j0 - 2;
    const int tid = threadIdx.y * TX + threadIdx.x;
    for (int k = tid; k < G::RH * G::RW; k += kThreads) {
        const int r = k / G::RW, c = k % G::RW;
        es[r][c] = err(clampd(i0 - G::R0 + c, 0, w - 1), clampd(j0 - G::R0 + r, 0, h - 1));
    }
    __syncthreads();
    for (int k = tid; k < G::CH * G::CW; k += kThreads) {
        const int cr = k / G::CW, cc = k % G::CW;
        const int cx = i0 - 1 + cc, cy = j0 - 1 + cr;
        if (cx < 0 || cx >= w + G::C || cy < 0 || cy >= h + G::C) continue;
        int p[4][4];
#pragma unroll
        for (int r = 0; r < 4; ++r)
#pragma unroll
            for (int c = 0; c < 4; ++c) p[r][c] = es[cr + r][cc + c];
        if constexpr (kCentered) {
            store_quad(eh, cc, cr, cubic_quad(p));
        } else {
            const Cell cl = cxhd_cell(p);
            eh[2 * cr][2 * cc] = static_cast<std::int16_t>(p[1][1]);
            eh[2 * cr][2 * cc + 1] = static_cast<std::int16_t>(cl.h);
            eh[2 * cr + 1][2 * cc] = static_cast<std::int16_t>(cl.v);
            eh[2 * cr + 1][2 * cc + 1] = static_cast<std::int16_t>(cl.d);
        }
    }
    __syncthreads();
    for (int k = tid; k < 2 * TY * YW; k += kThreads) {
        const int r = k / YW, c = k % YW;
        const int gx = ox + c, gy = 2 * j0 + r;
        if (gx < 0 || gx >= w2 || gy >= h2) continue;
        vs[r][c] =
            bp_g5(eh[clampd(gy - 2, 0, h2 - 1) - oy][c], eh[clampd(gy - 1, 0, h2 - 1) - oy][c],
                  eh[gy - oy][c], eh[clampd(gy + 1, 0, h2 - 1) - oy][c],
                  eh[clampd(gy + 2, 0, h2 - 1) - oy][c]);
    }
    __syncthreads();
    const int cx = i0 + threadIdx.x, cy = j0 + threadIdx.y;
    if (cx >= w || cy >= h) return;
#pragma unroll
    for (int dy = 0; dy < 2; ++dy) {
        const int gy = 2 * cy + dy;
        const int* vrow = vs[gy - 2 * j0];
        const std::uint8_t* yr = y.row(gy) + 2 * cx;  // byte access: views may be unaligned
        std::uint8_t* orow = out.row(gy) + 2 * cx;
#pragma unroll
        for (int dx = 0; dx < 2; ++dx) {
            const int gx = 2 * cx + dx;
            const int gg =
                bp_g5(vrow[clampd(gx - 2, 0, w2 - 1) - ox], vrow[clampd(gx - 1, 0, w2 - 1) - ox],
                      vrow[gx - ox], vrow[clampd(gx + 1, 0, w2 - 1) - ox],
                      vrow[clampd(gx + 2, 0, w2 - 1) - ox]);
            const int r = bp_finish(eh[gy - oy][gx - ox], gg);
            orow[dx] = static_cast<std::uint8_t>(add_clamp(yr[dx], r));
        }
    }
}

// Integer x2 baselines: one input pixel (all channels) per thread, 4 outputs per channel.
template <int N>
__device__ __forceinline__ int half_tap(const int (&v)[N]) {
    if constexpr (N == 4)
        return clamp255(c4(v[0], v[1], v[2], v[3]));
    else
        return clamp255(c6(v[0], v[1], v[2], v[3], v[4], v[5]));
}

template <int N>
__global__ void tap_kernel(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int w = in.width, h = in.height, ch = in.channels;
    if (x >= w || y >= h) return;
    constexpr int off = N / 2 - 1;  // taps at x - off .. x + N - 1 - off
    for (int c = 0; c < ch; ++c) {
        int hrow[N], vcol[N];
        for (int r = 0; r < N; ++r) {
            const int yy = clampd(y - off + r, 0, h - 1);
            int hv[N];
            for (int k = 0; k < N; ++k) hv[k] = in(clampd(x - off + k, 0, w - 1), yy, c);
            hrow[r] = half_tap<N>(hv);
            vcol[r] = in(x, yy, c);
        }
        out(2 * x, 2 * y, c) = in(x, y, c);
        out(2 * x + 1, 2 * y, c) = static_cast<std::uint8_t>(hrow[off]);
        out(2 * x, 2 * y + 1, c) = static_cast<std::uint8_t>(half_tap<N>(vcol));
        out(2 * x + 1, 2 * y + 1, c) = static_cast<std::uint8_t>(half_tap<N>(hrow));
    }
}

// Centre-aligned baselines: one output pixel (all channels) per thread; the vertical quarter
// tap of six horizontal quarter taps (tap_quarter), as the host backends' two rounded passes.
__global__ void tap_centered_kernel(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                                    bool tap6) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    const int w = in.width, h = in.height, ch = in.channels;
    if (x >= out.width || y >= out.height) return;
    const int kx = (x + 1) / 2, ky = (y + 1) / 2;
    for (int c = 0; c < ch; ++c) {
        int col[6];
        for (int r = 0; r < 6; ++r) {
            const int yy = clampd(ky - 3 + r, 0, h - 1);
            int p[6];
            for (int k = 0; k < 6; ++k) p[k] = in(clampd(kx - 3 + k, 0, w - 1), yy, c);
            col[r] = tap_quarter(p, tap6, x % 2 == 0);
        }
        out(x, y, c) = static_cast<std::uint8_t>(tap_quarter(col, tap6, y % 2 == 0));
    }
}

struct Layout {
    std::size_t tv, th, l1, y0, e, y1, total;
};

Layout layout(int w, int h, SeabiMethod m) {
    auto up = [](std::size_t v) { return (v + 255) & ~std::size_t{255}; };
    Layout l{};
    l.tv = 0;
    l.th = 256;
    l.l1 = 512;
    l.y0 = 768;
    const std::size_t hr = static_cast<std::size_t>(4) * w * h;
    l.e = l.y0 + up(hr);
    l.y1 = l.e + up(static_cast<std::size_t>(2) * w * h);
    l.total = l.y1 + (m == SeabiMethod::LSeabi ? up(hr) : 0);
    return l;
}

}  // namespace

std::size_t cuda_workspace_bytes(int w, int h, SeabiMethod m) { return layout(w, h, m).total; }

SeabiStats run_cuda_ws(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                       const SeabiOptions& opts, void* workspace, bool want_stats, void* stream_ptr,
                       std::int64_t tv, std::int64_t tv_pixels) {
    auto stream = static_cast<cudaStream_t>(stream_ptr);
    const int w = in.width, h = in.height;
    const Layout L = layout(w, h, opts.method);
    auto* base = static_cast<unsigned char*>(workspace);
    auto* d_tv = reinterpret_cast<unsigned long long*>(base + L.tv);
    auto* d_th = reinterpret_cast<int*>(base + L.th);
    auto* d_l1 = reinterpret_cast<unsigned long long*>(base + L.l1);
    Span2D<std::uint8_t> y0{base + L.y0, 2 * w, 2 * h, 1, 2 * w};
    Span2D<std::int16_t> e{reinterpret_cast<std::int16_t*>(base + L.e), w, h, 1, w};
    Span2D<std::uint8_t> y1{base + L.y1, 2 * w, 2 * h, 1, 2 * w};

    UPRES_CUDA_CHECK(cudaMemsetAsync(base, 0, 768, stream));
    const long long pixels = static_cast<long long>(w) * h;
    if (tv >= 0) {  // the caller's total variation (pageable source: copied before returning)
        const unsigned long long v = static_cast<unsigned long long>(tv);
        UPRES_CUDA_CHECK(cudaMemcpyAsync(d_tv, &v, sizeof v, cudaMemcpyHostToDevice, stream));
        threshold_kernel<<<1, 1, 0, stream>>>(d_tv, tv_pixels, d_th);
    } else {
        const int tv_blocks = static_cast<int>(std::min<long long>((pixels + 255) / 256, 1184));
        tv_kernel<<<tv_blocks, 256, 0, stream>>>(in, d_tv);
        UPRES_CUDA_CHECK_LAUNCH();
        threshold_kernel<<<1, 1, 0, stream>>>(d_tv, pixels, d_th);
    }
    UPRES_CUDA_CHECK_LAUNCH();
    const dim3 tile_grid((w + TX - 1) / TX, (h + TY - 1) / TY);
    const dim3 tile_block(TX, TY);
    SeabiStats stats;
    auto read_threshold = [&] {
        int th[2] = {0, 0};
        UPRES_CUDA_CHECK(cudaMemcpyAsync(th, d_th, sizeof th, cudaMemcpyDeviceToHost, stream));
        UPRES_CUDA_CHECK(cudaStreamSynchronize(stream));
        stats.threshold = th[1];
    };
    auto read_l1 = [&]() -> std::int64_t {
        unsigned long long v = 0;
        UPRES_CUDA_CHECK(cudaMemcpyAsync(&v, d_l1, sizeof v, cudaMemcpyDeviceToHost, stream));
        UPRES_CUDA_CHECK(cudaStreamSynchronize(stream));
        return static_cast<std::int64_t>(v);
    };

    const bool centered = opts.lattice != Lattice::CoSited;
    auto construct = [&](Span2D<std::uint8_t> dst) {
        if (centered) {
            const dim3 grid((w + 1 + TX - 1) / TX, (h + 1 + TY - 1) / TY);
            lseai_centered_kernel<<<grid, tile_block, 0, stream>>>(in, dst, d_th);
        } else {
            lseai_kernel<<<tile_grid, tile_block, 0, stream>>>(in, dst, d_th);
        }
        UPRES_CUDA_CHECK_LAUNCH();
    };
    auto refine = [&](Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst) {
        if (centered)
            refine_kernel<true><<<tile_grid, tile_block, 0, stream>>>(cspan(e), src, dst);
        else
            refine_kernel<false><<<tile_grid, tile_block, 0, stream>>>(cspan(e), src, dst);
        UPRES_CUDA_CHECK_LAUNCH();
    };

    if (opts.method == SeabiMethod::LSeai) {
        construct(out);
        if (want_stats) read_threshold();
        return stats;
    }
    if (opts.method == SeabiMethod::SilSeabi) {
        unsigned long long* l1 = want_stats ? d_l1 : nullptr;
        if (centered)
            error_kernel<true, true><<<tile_grid, tile_block, 0, stream>>>(in, y0, e, d_th, l1);
        else
            error_kernel<true, false><<<tile_grid, tile_block, 0, stream>>>(in, y0, e, d_th, l1);
        UPRES_CUDA_CHECK_LAUNCH();
        refine(cspan(y0), out);
        stats.iterations = 1;
        if (want_stats) {
            read_threshold();
            stats.last_l1 = read_l1();
        }
        return stats;
    }
    // L-SEABI: construction into out, then ping-pong out <-> y1 with an l1 read per iteration.
    construct(out);
    read_threshold();
    Span2D<std::uint8_t> bufs[2] = {out, y1};
    int cur = 0;
    for (int it = 0; it < opts.max_iterations; ++it) {
        UPRES_CUDA_CHECK(cudaMemsetAsync(d_l1, 0, sizeof(unsigned long long), stream));
        if (centered)
            error_kernel<false, true>
                <<<tile_grid, tile_block, 0, stream>>>(in, bufs[cur], e, d_th, d_l1);
        else
            error_kernel<false, false>
                <<<tile_grid, tile_block, 0, stream>>>(in, bufs[cur], e, d_th, d_l1);
        UPRES_CUDA_CHECK_LAUNCH();
        const std::int64_t l1 = read_l1();
        stats.last_l1 = l1;
        if (converged(l1, opts.max_error, pixels)) break;
        refine(cspan(bufs[cur]), bufs[1 - cur]);
        cur = 1 - cur;
        ++stats.iterations;
    }
    if (cur == 1)
        UPRES_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.stride, y1.data, y1.stride, 2 * w, 2 * h,
                                           cudaMemcpyDeviceToDevice, stream));
    return stats;
}

}  // namespace upres::seabi

namespace upres::cuda {

using namespace seabi;  // the kernels above

SeabiStats seabi_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out,
                          const SeabiOptions& opts, void* stream) {
    // The workspace from upres's stream-ordered pool: no cudaMalloc / cudaFree per call.
    const DeviceTemp ws(cuda_workspace_bytes(in.width, in.height, opts.method),
                        static_cast<cudaStream_t>(stream), "seabi_upscale2 (workspace)");
    const SeabiStats s = run_cuda_ws(in, out, opts, ws.get(), true, stream);
    UPRES_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
    return s;
}

void tap_upscale2(Span2D<const std::uint8_t> in, Span2D<std::uint8_t> out, TapFilter f,
                  bool centered, void* stream_ptr) {
    auto stream = static_cast<cudaStream_t>(stream_ptr);
    const dim3 block(32, 8);
    if (centered) {
        const dim3 ogrid((out.width + 31) / 32, (out.height + 7) / 8);
        tap_centered_kernel<<<ogrid, block, 0, stream>>>(in, out, f == TapFilter::Tap6);
        UPRES_CUDA_CHECK_LAUNCH();
        return;
    }
    const dim3 grid((in.width + 31) / 32, (in.height + 7) / 8);
    if (f == TapFilter::Tap4)
        tap_kernel<4><<<grid, block, 0, stream>>>(in, out);
    else
        tap_kernel<6><<<grid, block, 0, stream>>>(in, out);
    UPRES_CUDA_CHECK_LAUNCH();
}

}  // namespace upres::cuda
