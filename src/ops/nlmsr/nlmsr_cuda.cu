// The CUDA NLM fusion (upres/nlmsr.hpp): the paper's simple kernel (Fig. 2), its shared-memory
// kernel (Fig. 3's load mapping, Fig. 4), and the fast variant (patch distances as separable box
// sums per search offset, from shared memory). All in float, summation orders fixed:
// deterministic. Measured ratios: docs/ops/nlmsr.md.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include <upres/error.hpp>

#include "core/cuda_check.hpp"
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

// The fast variant: a block of kFx x kFy threads owns kFx x kTile outputs; per frame and search
// offset it writes the squared differences of its (kFx + 2 pr) x (kTile + 2 pr) region to shared
// memory, sums them down the columns, then along the rows: about 2 (2 pr + 1) shared reads per
// output and offset instead of the patch's (2 pr + 1)^2 terms. kTile 32 on large images; 8
// where 32 would leave the device's SMs idle (fewer blocks than twice the SMs: the paper's
// 256 x 256 output makes 64 blocks of 32 rows).
constexpr int kFx = 32, kFy = 8;

template <int kTile>
__global__ void __launch_bounds__(kFx* kFy) fast_kernel(Frames f, Params p) {
    extern __shared__ float sm[];
    const int pr = p.pr, rw = kFx + 2 * pr, rh = kTile + 2 * pr;
    float* est = sm;            // rw x rh: the estimate around the tile
    float* dq = est + rw * rh;  // rw x rh: squared differences of one offset
    float* cs = dq + rw * rh;   // rw x kTile: their column sums
    const int tx = threadIdx.x, ty = threadIdx.y, tid = ty * kFx + tx, nt = kFx * kFy;
    const int x0 = blockIdx.x * kFx, y0 = blockIdx.y * kTile;
    for (int i = tid; i < rw * rh; i += nt) {
        const int j = i / rw, c = i - j * rw;
        est[i] =
            at(p.est, p.est_stride, clamp_index(x0 - pr + c, p.W), clamp_index(y0 - pr + j, p.H));
    }
    constexpr int kRowsPer = (kTile + kFy - 1) / kFy;
    float num[kRowsPer], den[kRowsPer];
#pragma unroll
    for (int k = 0; k < kRowsPer; ++k) num[k] = den[k] = 0.0f;
    const int x = x0 + tx;
    for (int t = 0; t < f.n; ++t)
        for (int oy = -p.sr; oy <= p.sr; ++oy)
            for (int ox = -p.sr; ox <= p.sr; ++ox) {
                __syncthreads();  // est written / the last offset's sums read
                for (int i = tid; i < rw * rh; i += nt) {
                    const int j = i / rw, c = i - j * rw;
                    const float b = at(f.data[t], f.stride[t], clamp_index(x0 - pr + c + ox, p.W),
                                       clamp_index(y0 - pr + j + oy, p.H));
                    const float d = est[i] - b;
                    dq[i] = d * d;
                }
                __syncthreads();
                if constexpr (kTile >= 32) {
                    // Tall tiles: a running sum down each column (the region's width in
                    // threads; 2.38 ms against 3.05 ms for direct sums on 5 x 1080p, H200).
                    for (int c = tid; c < rw; c += nt) {
                        float s = 0.0f;
                        for (int j = 0; j < 2 * pr; ++j) s += dq[j * rw + c];
                        for (int k = 0; k < kTile; ++k) {
                            s += dq[(k + 2 * pr) * rw + c];
                            cs[k * rw + c] = s;
                            s -= dq[k * rw + c];
                        }
                    }
                } else {
                    // Short tiles: every thread sums whole windows (173 us against 320 us for
                    // 32-row tiles with running sums on the paper's 4 x 256 x 256, H200).
                    for (int i = tid; i < rw * kTile; i += nt) {
                        const float* q = dq + i;  // row i / rw, column i % rw
                        float s = 0.0f;
                        for (int j = 0; j <= 2 * pr; ++j) s += q[j * rw];
                        cs[i] = s;
                    }
                }
                __syncthreads();
#pragma unroll
                for (int k = 0; k < kRowsPer; ++k) {
                    const int ly = ty + k * kFy, y = y0 + ly;
                    if (ly >= kTile || x >= p.W || y >= p.H ||
                        !nlmsr::candidate(x + ox, y + oy, p.W, p.H))
                        continue;
                    const float* c = cs + ly * rw + tx;
                    float d = 0.0f;
                    for (int j = 0; j <= 2 * pr; ++j) d += c[j];
                    const float w = nlmsr::weight(d, p.neg_inv);
                    num[k] += w * at(f.data[t], f.stride[t], x + ox, y + oy);
                    den[k] += w;
                }
            }
#pragma unroll
    for (int k = 0; k < kRowsPer; ++k) {
        const int ly = ty + k * kFy, y = y0 + ly;
        if (ly < kTile && x < p.W && y < p.H) finish(p, x, y, num[k], den[k]);
    }
}

template <int kTile>
void launch_fast(const Frames& f, const Params& p, cudaStream_t s) {
    const int rw = kFx + 2 * p.pr, rh = kTile + 2 * p.pr;
    const std::size_t smem = sizeof(float) * (2 * static_cast<std::size_t>(rw) * rh +
                                              static_cast<std::size_t>(rw) * kTile);
    UPRES_CUDA_CHECK(cudaFuncSetAttribute(
        fast_kernel<kTile>, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    const dim3 b(kFx, kFy), g((p.W + kFx - 1) / kFx, (p.H + kTile - 1) / kTile);
    fast_kernel<kTile><<<g, b, smem, s>>>(f, p);
    UPRES_CUDA_CHECK_LAUNCH();
}

int sm_count() {
    int dev = 0, v = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, dev));
    return v;
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
        case NlmsrVariant::Fast: {
            const long long blocks32 =
                static_cast<long long>((p.W + kFx - 1) / kFx) * ((p.H + 31) / 32);
            if (blocks32 < 2LL * sm_count())
                launch_fast<8>(f, p, s);
            else
                launch_fast<32>(f, p, s);
            return;
        }
    }
    throw Error(ErrorCode::Internal, "nlm_fuse: unknown cuda variant");
}

}  // namespace upres::cuda
