// The CUDA NLM fusion (upres/nlmsr.hpp): the paper's simple kernel (Fig. 2), its shared-memory
// kernel (Fig. 3's load mapping, Fig. 4), and the fast variant (patch distances as separable box
// sums per search offset, from shared memory). All in float, summation orders fixed:
// deterministic. Measured ratios: docs/ops/nlmsr.md.
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <upres/error.hpp>

#include "core/cuda_check.hpp"
#include "core/device_temp.hpp"
#include "ops/nlmsr/nlmsr_backends.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"

namespace upres::cuda {

namespace {

using nlmsr::clamp_index;

struct Frames {
    const float* data[nlmsr::kMaxFrames];
    long long stride[nlmsr::kMaxFrames];
    int n;
};

struct Params {
    int W, H, pr, sr;
    float neg_inv;
    const float* est;
    long long est_stride;
    float* out;
    long long out_stride;
};

__device__ __forceinline__ float at(const float* p, long long stride, int x, int y) {
    return __ldg(p + y * stride + x);
}

__device__ __forceinline__ void finish(const Params& p, int x, int y, float num, float den) {
    p.out[y * p.out_stride + x] =
        den >= nlmsr::kMinWeightSum ? num / den : at(p.est, p.est_stride, x, y);
}

// Fig. 2: one thread per output pixel, every patch pixel read from global memory.
__global__ void simple_kernel(Frames f, Params p) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.W || y >= p.H) return;
    float num = 0.0f, den = 0.0f;
    for (int t = 0; t < f.n; ++t)
        for (int oy = -p.sr; oy <= p.sr; ++oy)
            for (int ox = -p.sr; ox <= p.sr; ++ox) {
                if (!nlmsr::candidate(x + ox, y + oy, p.W, p.H)) continue;
                float d = 0.0f;
                for (int i = -p.pr; i <= p.pr; ++i) {
                    const int ye = clamp_index(y + i, p.H), yu = clamp_index(y + oy + i, p.H);
                    for (int j = -p.pr; j <= p.pr; ++j) {
                        const float a = at(p.est, p.est_stride, clamp_index(x + j, p.W), ye);
                        const float b =
                            at(f.data[t], f.stride[t], clamp_index(x + ox + j, p.W), yu);
                        d += (a - b) * (a - b);
                    }
                }
                const float w = nlmsr::weight(d, p.neg_inv);
                num += w * at(f.data[t], f.stride[t], x + ox, y + oy);
                den += w;
            }
    finish(p, x, y, num, den);
}

// Fig. 4: a bx x by x bz block caches, for its bx x by outputs, the estimate's tile (r = pr) and
// every frame's tile (r = sr + pr) in shared memory, each thread loading the pixels that lie a
// whole number of blocks away from it (Fig. 3); thread z takes the frames t = z, z + bz, ...,
// and the bz partial sums meet in shared memory in a fixed order.
__global__ void shared_kernel(Frames f, Params p) {
    extern __shared__ float sm[];
    const int bx = blockDim.x, by = blockDim.y, bz = blockDim.z;
    const int tx = threadIdx.x, ty = threadIdx.y, tz = threadIdx.z;
    const int x0 = blockIdx.x * bx, y0 = blockIdx.y * by, r = p.sr + p.pr;
    const int ew = bx + 2 * p.pr, eh = by + 2 * p.pr, fw = bx + 2 * r, fh = by + 2 * r;
    float* est = sm;                   // ew x eh
    float* fr = est + ew * eh;         // n x fw x fh
    float* part = fr + f.n * fw * fh;  // bz x by x bx x 2
    // Fig. 3's mapping: the tile cut into block-sized pieces, a thread loading its own place in
    // each; the z threads take whole frames.
    for (int j = ty; j < eh; j += by)
        for (int i = tx; i < ew; i += bx)
            if (tz == 0)
                est[j * ew + i] = at(p.est, p.est_stride, clamp_index(x0 - p.pr + i, p.W),
                                     clamp_index(y0 - p.pr + j, p.H));
    for (int t = tz; t < f.n; t += bz)
        for (int j = ty; j < fh; j += by)
            for (int i = tx; i < fw; i += bx)
                fr[(t * fh + j) * fw + i] = at(f.data[t], f.stride[t], clamp_index(x0 - r + i, p.W),
                                               clamp_index(y0 - r + j, p.H));
    __syncthreads();
    const int x = x0 + tx, y = y0 + ty;
    float num = 0.0f, den = 0.0f;
    if (x < p.W && y < p.H)
        for (int t = tz; t < f.n; t += bz) {
            const float* ft = fr + t * fh * fw;
            for (int oy = -p.sr; oy <= p.sr; ++oy)
                for (int ox = -p.sr; ox <= p.sr; ++ox) {
                    if (!nlmsr::candidate(x + ox, y + oy, p.W, p.H)) continue;
                    float d = 0.0f;
                    for (int i = 0; i <= 2 * p.pr; ++i) {
                        const float* e = est + (ty + i) * ew + tx;
                        const float* u = ft + (ty + p.sr + oy + i) * fw + tx + p.sr + ox;
                        for (int j = 0; j <= 2 * p.pr; ++j) d += (e[j] - u[j]) * (e[j] - u[j]);
                    }
                    const float w = nlmsr::weight(d, p.neg_inv);
                    num += w * ft[(ty + r + oy) * fw + tx + r + ox];
                    den += w;
                }
        }
    part[((tz * by + ty) * bx + tx) * 2] = num;
    part[((tz * by + ty) * bx + tx) * 2 + 1] = den;
    __syncthreads();
    if (tz != 0 || x >= p.W || y >= p.H) return;
    for (int z = 1; z < bz; ++z) {
        num += part[((z * by + ty) * bx + tx) * 2];
        den += part[((z * by + ty) * bx + tx) * 2 + 1];
    }
    finish(p, x, y, num, den);
}

// The fast variant. A warp owns 8 output rows of a band of 128 - 2 pr columns; its lanes hold
// the patch's column sums of 128 consecutive columns (4 consecutive ones each, in registers),
// slid down the rows: one row's squared differences added and the row 2 pr + 1 above taken
// away per output row, for up to 4 horizontal search offsets at once (one load of the
// estimate's row, two of the frame's, for 16 sums). The patch's row sums come from the
// neighbouring lanes' column sums by shuffles (6 for a 13-pixel patch) and the 8 rows' weight
// sums stay in registers. A block of 1 or 4 warps (stacked) holds the estimate's and one
// frame's region in shared memory; blocks take groups of frames (one each where the image
// alone would make too few blocks), whose sums a second kernel adds in frame order. The weight
// by the hardware's 2^x (ex2.approx: relative error 2^-22, as small as exp_nonpos's).
constexpr int kLaneCols = 4, kBandCols = 32 * kLaneCols, kWarpRows = 8, kChunk = 4;

struct FastArgs {
    Frames f;
    Params p;
    float nl2;     // neg_inv log2(e): w = 2^(sum_sq nl2)
    float2* part;  // groups x H x W (num, den), or null: one group writes the outputs
    int per_t, per_oy, oy_groups;  // a group: per_t frames x per_oy search rows
};

__device__ __forceinline__ float ex2_approx(float x) {
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// The sums of L consecutive column sums starting at each of the lane's 4 columns: its own
// suffix, the whole sums of the lanes in between, a prefix of the last lane's.
template <int L>
__device__ __forceinline__ void box_row(const float (&v)[4], float (&out)[4]) {
    float suf[4], pre[4];
    suf[3] = v[3];
    suf[2] = v[2] + suf[3];
    suf[1] = v[1] + suf[2];
    suf[0] = v[0] + suf[1];
    pre[0] = 0.0f;
    pre[1] = v[0];
    pre[2] = pre[1] + v[1];
    pre[3] = pre[2] + v[2];
    constexpr int kA = (3 + L) / 4 + 1;
    float mid[kA];  // mid[a]: the whole sums of lanes l + 1 .. l + a - 1
    mid[0] = mid[1] = 0.0f;
#pragma unroll
    for (int a = 2; a < kA; ++a) mid[a] = mid[a - 1] + __shfl_down_sync(~0u, suf[0], a - 1);
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        const int a = (k + L) / 4, b = (k + L) % 4;
        float s = 0.0f;
        if (a == 0) {
#pragma unroll
            for (int j = k; j < k + L && j < 4; ++j) s += v[j];
        } else {
            s = suf[k] + mid[a];
            if (b != 0) s += __shfl_down_sync(~0u, pre[b], a);
        }
        out[k] = s;
    }
}

// One (frame, search row oy, chunk of up to 4 search columns from ox0) for the warp's rows.
// es: the estimate's region (rows from the block's first output row - PR, 128 columns from its
// first column - PR); fs: the frame's (rows and columns sr further out, fw4 float4 a row).
template <int PR>
__device__ __forceinline__ void fast_pass(const float4* es, const float4* fs, int fw4, int lane,
                                          int wr0, int c, int nx, int oy, int ox0, int x, int y0,
                                          const Params& p, float nl2, float (&num)[kWarpRows][4],
                                          float (&den)[kWarpRows][4]) {
    constexpr int L = 2 * PR + 1, kQ = (PR % 4 + 6) / 4 + 1;  // float4s holding the centres
    const int sr = p.sr;
    float cs[kChunk][4];
#pragma unroll
    for (int i = 0; i < kChunk; ++i)
#pragma unroll
        for (int k = 0; k < 4; ++k) cs[i][k] = 0.0f;
    // Row j of the estimate's region against row j + oy + sr of the frame's, sign +1 or -1.
    auto add_row = [&](int j, float sign) {
        const float4 e4 = es[j * (kBandCols / 4) + lane];
        const float4 fa = fs[(j + oy + sr) * fw4 + lane + c],
                     fb = fs[(j + oy + sr) * fw4 + lane + c + 1];
        const float e[4] = {e4.x, e4.y, e4.z, e4.w};
        const float fv[8] = {fa.x, fa.y, fa.z, fa.w, fb.x, fb.y, fb.z, fb.w};
#pragma unroll
        for (int i = 0; i < kChunk; ++i)
            if (i < nx)
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    const float d = e[k] - fv[k + i];
                    cs[i][k] = fmaf(sign * d, d, cs[i][k]);
                }
    };
#pragma unroll 1
    for (int j = wr0; j < wr0 + 2 * PR; ++j) add_row(j, 1.0f);
    // Candidates: the search target inside the image.
    unsigned colok = 0;
#pragma unroll
    for (int i = 0; i < kChunk; ++i)
#pragma unroll
        for (int k = 0; k < 4; ++k)
            colok |= static_cast<unsigned>(static_cast<unsigned>(x + k + ox0 + i) <
                                           static_cast<unsigned>(p.W))
                     << (i * 4 + k);
#pragma unroll
    for (int o = 0; o < kWarpRows; ++o) {
        add_row(wr0 + o + 2 * PR, 1.0f);
        if (o > 0) add_row(wr0 + o - 1, -1.0f);
        const int yc = y0 + o + oy;  // the centre's row
        const bool rowok = static_cast<unsigned>(yc) < static_cast<unsigned>(p.H);
        // The centres: frame row (wr0 + o + PR + oy + sr), columns 4 (lane + c) + PR + k + i.
        float cv[4 * kQ];
        {
            const float4* q = fs + (wr0 + o + PR + oy + sr) * fw4 + lane + c + PR / 4;
#pragma unroll
            for (int m = 0; m < kQ; ++m) {
                const float4 v = q[m];
                cv[4 * m] = v.x;
                cv[4 * m + 1] = v.y;
                cv[4 * m + 2] = v.z;
                cv[4 * m + 3] = v.w;
            }
        }
#pragma unroll
        for (int i = 0; i < kChunk; ++i)
            if (i < nx) {
                float d[4];
                box_row<L>(cs[i], d);
#pragma unroll
                for (int k = 0; k < 4; ++k) {
                    float w = ex2_approx(d[k] * nl2);
                    w = (rowok && ((colok >> (i * 4 + k)) & 1u)) ? w : 0.0f;
                    num[o][k] = fmaf(w, cv[PR % 4 + k + i], num[o][k]);
                    den[o][k] += w;
                }
            }
    }
}

template <int PR>
__global__ void __launch_bounds__(128, 3) fast_kernel(FastArgs a) {
    extern __shared__ float4 sm4[];
    const Params& p = a.p;
    const int nw = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int sr = p.sr, ow = kBandCols - 2 * PR, rows = nw * kWarpRows;
    const int bx0 = blockIdx.x * ow, by0 = blockIdx.y * rows;
    const int eh = rows + 2 * PR, fh = eh + 2 * sr, fw4 = 37 + sr / 2, fw = 4 * fw4;
    float* es = reinterpret_cast<float*>(sm4);
    float* fs = es + eh * kBandCols;
    for (int r = warp; r < eh; r += nw) {
        const float* src = p.est + clamp_index(by0 - PR + r, p.H) * p.est_stride;
        for (int cc = lane; cc < kBandCols; cc += 32)
            es[r * kBandCols + cc] = __ldg(src + clamp_index(bx0 - PR + cc, p.W));
    }
    float num[kWarpRows][4], den[kWarpRows][4];
#pragma unroll
    for (int o = 0; o < kWarpRows; ++o)
#pragma unroll
        for (int k = 0; k < 4; ++k) num[o][k] = den[o][k] = 0.0f;
    const int wr0 = warp * kWarpRows, x = bx0 + lane * 4, y0 = by0 + wr0;
    const int gt = blockIdx.z / a.oy_groups, go = blockIdx.z - gt * a.oy_groups;
    const int t0 = gt * a.per_t, t1 = min(a.f.n, t0 + a.per_t);
    const int oy0 = -sr + go * a.per_oy, oy1 = min(sr, oy0 + a.per_oy - 1);
    // The frame's rows these search rows reach.
    const int fr0 = oy0 + sr, fr1 = min(fh, eh + oy1 + sr);
    for (int t = t0; t < t1; ++t) {
        __syncthreads();  // the last frame's region read
        for (int r = fr0 + warp; r < fr1; r += nw) {
            const float* src = a.f.data[t] + clamp_index(by0 - PR - sr + r, p.H) * a.f.stride[t];
            for (int cc = lane; cc < fw; cc += 32)
                fs[r * fw + cc] = __ldg(src + clamp_index(bx0 - PR - sr + cc, p.W));
        }
        __syncthreads();
        for (int oy = oy0; oy <= oy1; ++oy)
            for (int c = 0; 4 * c <= 2 * sr; ++c)
                fast_pass<PR>(reinterpret_cast<const float4*>(es),
                              reinterpret_cast<const float4*>(fs), fw4, lane, wr0, c,
                              min(kChunk, 2 * sr + 1 - 4 * c), oy, -sr + 4 * c, x, y0, p, a.nl2,
                              num, den);
    }
#pragma unroll
    for (int o = 0; o < kWarpRows; ++o)
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            const int y = y0 + o, xk = x + k;
            if (lane * 4 + k >= ow || xk >= p.W || y >= p.H) continue;
            if (a.part)
                a.part[(static_cast<long long>(blockIdx.z) * p.H + y) * p.W + xk] =
                    make_float2(num[o][k], den[o][k]);
            else
                finish(p, xk, y, num[o][k], den[o][k]);
        }
}

// The groups' sums added in their order (frames, then search rows).
__global__ void fast_finish(Params p, const float2* part, int groups) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= p.W || y >= p.H) return;
    float num = 0.0f, den = 0.0f;
    for (int g = 0; g < groups; ++g) {
        const float2 v = part[(static_cast<long long>(g) * p.H + y) * p.W + x];
        num += v.x;
        den += v.y;
    }
    finish(p, x, y, num, den);
}

template <int... P>
constexpr auto fast_kernels(std::integer_sequence<int, P...>) {
    return std::array<void (*)(FastArgs), sizeof...(P)>{&fast_kernel<P>...};
}

void launch_fast(const Frames& f, const Params& p, int layout_rows, cudaStream_t s) {
    static_assert(nlmsr::kMaxPatch / 2 < 16);
    static constexpr auto kernels = fast_kernels(std::make_integer_sequence<int, 16>());
    const int ow = kBandCols - 2 * p.pr, col_tiles = (p.W + ow - 1) / ow;
    // Blocks of 4 warps where the image gives enough of them, else of 1 (the paper's 256 x 256
    // output: 96 blocks of 4 warps would leave most SMs idle). Then groups of frames, and of
    // search rows, until there are enough blocks to fill a large GPU; from the sizes alone (the
    // sums' order, hence the bits, then do not depend on the device), the rows those of the
    // whole image a band belongs to (layout_rows).
    const int lh = std::max(p.H, layout_rows);
    const int nw = static_cast<long long>(col_tiles) * ((lh + 31) / 32) >= 512 ? 4 : 1;
    const int row_tiles = (p.H + nw * kWarpRows - 1) / (nw * kWarpRows);
    if (row_tiles > 65535)
        throw Error(ErrorCode::InvalidArgument, "nlm_fuse: the output's height " +
                                                    std::to_string(p.H) +
                                                    " is more than the fast variant's " +
                                                    std::to_string(65535 * kWarpRows) + " rows");
    const long long blocks =
        static_cast<long long>(col_tiles) * ((lh + nw * kWarpRows - 1) / (nw * kWarpRows));
    const auto split = [](int n, long long want) {  // parts of n items, want of them at most
        const int per =
            static_cast<int>((n + std::min<long long>(n, want) - 1) / std::min<long long>(n, want));
        return std::pair{per, (n + per - 1) / per};
    };
    const auto [per_t, t_groups] = split(f.n, (4096 + blocks - 1) / blocks);
    const int side = 2 * p.sr + 1;
    const long long units = blocks * t_groups;
    const auto [per_oy, oy_groups] = split(side, units >= 2048 ? 1 : (2048 + units - 1) / units);
    const int groups = t_groups * oy_groups;
    const int eh = nw * kWarpRows + 2 * p.pr, fw = 4 * (37 + p.sr / 2);
    const std::size_t smem = sizeof(float) * (static_cast<std::size_t>(eh) * kBandCols +
                                              static_cast<std::size_t>(eh + 2 * p.sr) * fw);
    FastArgs a{};
    a.f = f;
    a.p = p;
    a.nl2 = static_cast<float>(p.neg_inv * 1.4426950408889634);
    a.per_t = per_t;
    a.per_oy = per_oy;
    a.oy_groups = oy_groups;
    std::optional<DeviceTemp> part;
    if (groups > 1) {
        part.emplace(sizeof(float2) * static_cast<std::size_t>(groups) * p.W * p.H, s,
                     "nlm_fuse (fast variant's partial sums)");
        a.part = part->as<float2>();
    }
    const auto k = kernels[p.pr];
    UPRES_CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(smem)));
    k<<<dim3(col_tiles, row_tiles, groups), 32 * nw, smem, s>>>(a);
    UPRES_CUDA_CHECK_LAUNCH();
    if (groups > 1) {
        const dim3 b(32, 8), g((p.W + 31) / 32, (p.H + 7) / 8);
        fast_finish<<<g, b, 0, s>>>(p, a.part, groups);
        UPRES_CUDA_CHECK_LAUNCH();
    }
}

int shared_limit() {
    int dev = 0, v = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    return v;
}

}  // namespace

void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan, NlmsrVariant variant, void* stream) {
    Frames f{};
    f.n = static_cast<int>(frames.size());
    for (int t = 0; t < f.n; ++t) {
        f.data[t] = frames[t].data;
        f.stride[t] = frames[t].stride;
    }
    Params p{estimate.width,
             estimate.height,
             plan.patch_r,
             plan.search_r,
             static_cast<float>(plan.neg_inv),
             estimate.data,
             estimate.stride,
             out.data,
             out.stride};
    const auto s = static_cast<cudaStream_t>(stream);
    switch (variant) {
        case NlmsrVariant::Simple: {
            const dim3 b(16, 16), g((p.W + 15) / 16, (p.H + 15) / 16);
            simple_kernel<<<g, b, 0, s>>>(f, p);
            UPRES_CUDA_CHECK_LAUNCH();
            return;
        }
        case NlmsrVariant::Shared: {
            const int bx = plan.block_x, by = plan.block_y, bz = plan.block_z;
            if (bx * by * bz > 1024)
                throw Error(ErrorCode::InvalidArgument,
                            "nlm_fuse: the shared variant's block " + std::to_string(bx) + " x " +
                                std::to_string(by) + " x " + std::to_string(bz) +
                                " has more than 1024 threads");
            const int r = p.sr + p.pr;
            const std::size_t smem =
                sizeof(float) * (static_cast<std::size_t>(bx + 2 * p.pr) * (by + 2 * p.pr) +
                                 static_cast<std::size_t>(f.n) * (bx + 2 * r) * (by + 2 * r) +
                                 2 * static_cast<std::size_t>(bx) * by * bz);
            if (smem > static_cast<std::size_t>(shared_limit()))
                throw Error(ErrorCode::InvalidArgument,
                            "nlm_fuse: the shared variant's tiles of " + std::to_string(f.n) +
                                " frames need " + std::to_string(smem) +
                                " bytes of shared memory, more than the device's " +
                                std::to_string(shared_limit()) +
                                " (fewer frames, a smaller patch, search or block, or variant "
                                "fast)");
            UPRES_CUDA_CHECK(cudaFuncSetAttribute(shared_kernel,
                                                  cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                  static_cast<int>(smem)));
            const dim3 b(bx, by, bz), g((p.W + bx - 1) / bx, (p.H + by - 1) / by);
            shared_kernel<<<g, b, smem, s>>>(f, p);
            UPRES_CUDA_CHECK_LAUNCH();
            return;
        }
        case NlmsrVariant::Fast:
            launch_fast(f, p, plan.layout_rows, s);
            return;
    }
    throw Error(ErrorCode::Internal, "nlm_fuse: unknown cuda variant");
}

// ---------------------------------------------------------------- the pipeline's element steps

namespace {

dim3 grid_of(int w, int h) { return dim3((w + 31) / 32, (h + 7) / 8); }

template <class T>
__global__ void scale_kernel(Span2D<const T> in, Span2D<float> out, float scale) {
    const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (x < out.width && y < out.height) out(x, y) = scale * static_cast<float>(in(x, y));
}

__global__ void divide_kernel(Span2D<const float> in, Span2D<float> out, float d) {
    const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (x < out.width && y < out.height) out(x, y) = in(x, y) / d;
}

__global__ void channels_kernel(Span2D<const float> in, int in_first, Span2D<float> out,
                                int out_first, int count) {
    const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (x < out.width && y < out.height)
        for (int c = 0; c < count; ++c) out(x, y, out_first + c) = in(x, y, in_first + c);
}

__global__ void axpy_kernel(Span2D<const float> a, Span2D<float> d, float k) {
    const int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 8 + threadIdx.y;
    if (x < d.width && y < d.height) d(x, y) = __fadd_rn(a(x, y), __fmul_rn(k, d(x, y)));
}

__global__ void psf_kernel(Span2D<const float> in, Span2D<float> out, nlmsr::PsfTaps t, int axis,
                           Span2D<const float> add, float k) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= in.width || y >= in.height) return;
    const float v = axis == 0 ? nlmsr::psf_sample<float>(in.row(y), 1, in.width, x, t)
                              : nlmsr::psf_sample<float>(in.data + x, in.stride, in.height, y, t);
    out(x, y) = nlmsr::psf_epilogue(v, add.data ? &add(x, y) : nullptr, k);
}

__global__ void phase_kernel(Span2D<const float> from, Span2D<float> to, int s, int a, int b,
                             bool gather) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (gather) {
        if (x < to.width && y < to.height) to(x, y) = from(s * x + a, s * y + b);
    } else if (x < from.width && y < from.height) {
        to(s * x + a, s * y + b) = from(x, y);
    }
}

// A thread per interior row: the row's sum in the host's order.
__global__ void immerkaer_kernel(Span2D<const float> y, double* rows) {
    const int r = blockIdx.x * blockDim.x + threadIdx.x + 1;
    if (r + 1 >= y.height) return;
    rows[r - 1] = nlmsr::immerkaer_row(y.row(r - 1), y.row(r), y.row(r + 1), y.width);
}

}  // namespace

template <class T>
void nlm_scale(Span2D<const T> in, Span2D<float> out, float scale, void* stream) {
    scale_kernel<<<grid_of(out.width, out.height), dim3(32, 8), 0,
                   static_cast<cudaStream_t>(stream)>>>(in, out, scale);
    UPRES_CUDA_CHECK_LAUNCH();
}
template void nlm_scale(Span2D<const std::uint8_t>, Span2D<float>, float, void*);
template void nlm_scale(Span2D<const std::uint16_t>, Span2D<float>, float, void*);
template void nlm_scale(Span2D<const float>, Span2D<float>, float, void*);

void nlm_divide(Span2D<const float> in, Span2D<float> out, float d, void* stream) {
    divide_kernel<<<grid_of(out.width, out.height), dim3(32, 8), 0,
                    static_cast<cudaStream_t>(stream)>>>(in, out, d);
    UPRES_CUDA_CHECK_LAUNCH();
}

void nlm_get_channels(Span2D<const float> in, int first, Span2D<float> out, void* stream) {
    channels_kernel<<<grid_of(out.width, out.height), dim3(32, 8), 0,
                      static_cast<cudaStream_t>(stream)>>>(in, first, out, 0, out.channels);
    UPRES_CUDA_CHECK_LAUNCH();
}

void nlm_set_channels(Span2D<const float> in, Span2D<float> out, int first, void* stream) {
    channels_kernel<<<grid_of(out.width, out.height), dim3(32, 8), 0,
                      static_cast<cudaStream_t>(stream)>>>(in, 0, out, first, in.channels);
    UPRES_CUDA_CHECK_LAUNCH();
}

void nlm_axpy(Span2D<const float> a, Span2D<float> d, float k, void* stream) {
    axpy_kernel<<<grid_of(d.width, d.height), dim3(32, 8), 0, static_cast<cudaStream_t>(stream)>>>(
        a, d, k);
    UPRES_CUDA_CHECK_LAUNCH();
}

void nlm_psf(Span2D<const float> in, Span2D<float> out, const nlmsr::PsfTaps& taps, int axis,
             void* stream, Span2D<const float> add, float k) {
    psf_kernel<<<grid_of(in.width, in.height), dim3(32, 8), 0, static_cast<cudaStream_t>(stream)>>>(
        in, out, taps, axis, add, k);
    UPRES_CUDA_CHECK_LAUNCH();
}

void nlm_phase(Span2D<const float> from, Span2D<float> to, int s, int a, int b, bool gather,
               void* stream) {
    const Span2D<const float>& lr =
        gather ? Span2D<const float>{to.data, to.width, to.height, to.channels, to.stride} : from;
    phase_kernel<<<grid_of(lr.width, lr.height), dim3(32, 8), 0,
                   static_cast<cudaStream_t>(stream)>>>(from, to, s, a, b, gather);
    UPRES_CUDA_CHECK_LAUNCH();
}

double nlm_immerkaer_sum(Span2D<const float> y, void* stream) {
    if (y.width < 3 || y.height < 3) return 0.0;
    const auto s = static_cast<cudaStream_t>(stream);
    const int rows = y.height - 2;
    const DeviceTemp d(sizeof(double) * rows, s, "nlm_fuse (noise estimate)");
    immerkaer_kernel<<<(rows + 127) / 128, 128, 0, s>>>(y, d.as<double>());
    UPRES_CUDA_CHECK_LAUNCH();
    std::vector<double> h(rows);
    UPRES_CUDA_CHECK(cudaMemcpyAsync(h.data(), d.as<double>(), sizeof(double) * rows,
                                     cudaMemcpyDeviceToHost, s));
    UPRES_CUDA_CHECK(cudaStreamSynchronize(s));
    double sum = 0.0;
    for (const double v : h) sum += v;
    return sum;
}

}  // namespace upres::cuda
