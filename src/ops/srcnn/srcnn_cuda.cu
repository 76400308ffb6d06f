// SRCNN CUDA engine: per-layer kernels (the variants of Zhao et al., Table II, plus tensor-core
// implicit GEMM), the device model cache, the workspace and the autotuner (docs/ops/srcnn.md,
// "CUDA engine and per-layer variants").
//
// Layouts: activations are planar CHW (plane stride w*h) in the precision's storage type (fp32 for
// Fp32 / Tf32, fp16 for Fp16, bf16 for Bf16); the network's input and output are the caller's
// single-channel fp32 planes (any row stride). Borders: replication (clamped indices) at every
// layer. Every kernel fuses bias and ReLU. Run-to-run deterministic (no atomics).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <mma.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/cuda_check.hpp"
#include "ops/srcnn/srcnn_backends.hpp"
#include "ops/srcnn/srcnn_cuda.hpp"
#include "ops/srcnn/srcnn_cudnn.hpp"

namespace upres::srcnn::cuda {
namespace {

using namespace nvcuda;

// ------------------------------------------------------------------ device helpers

enum class DType { F32, F16, Bf16 };

template <class T>
struct Planes {
    T* data;
    int w;
    int h;
    std::ptrdiff_t row;    // elements between rows
    std::ptrdiff_t plane;  // elements between channels
};

__device__ __forceinline__ float to_f(float v) { return v; }
__device__ __forceinline__ float to_f(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f(__nv_bfloat16 v) { return __bfloat162float(v); }
template <class T>
__device__ __forceinline__ T from_f(float v);
template <>
__device__ __forceinline__ float from_f<float>(float v) {
    return v;
}
template <>
__device__ __forceinline__ __half from_f<__half>(float v) {
    return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
__device__ __forceinline__ int clampi(int v, int hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

// ------------------------------------------------------------------ CUDA-core variants (fp32)

// Output channels accumulated per pass (registers); the input is re-read per pass.
constexpr int kOcChunk = 16;
constexpr int kBlockX = 32, kBlockY = 8;  // 256 threads, one output pixel each

// Accumulators of output channels oc0 .. oc0 + kOcChunk - 1 start at their biases (0 past cout).
__device__ __forceinline__ void chunk_bias(float (&acc)[kOcChunk], const float* __restrict__ bias,
                                           int oc0, int cout) {
#pragma unroll
    for (int j = 0; j < kOcChunk; ++j) acc[j] = oc0 + j < cout ? bias[oc0 + j] : 0.f;
}

// Stores the chunk's outputs at pixel (x, y), ReLU applied when asked.
__device__ __forceinline__ void store_chunk(Planes<float> out, const float (&acc)[kOcChunk],
                                            int oc0, int cout, int x, int y, bool relu) {
#pragma unroll
    for (int j = 0; j < kOcChunk; ++j)
        if (oc0 + j < cout)
            out.data[(oc0 + j) * out.plane + y * out.row + x] = relu ? fmaxf(acc[j], 0.f) : acc[j];
}

// Direct (kSharedW false) and SharedKernel (true): one thread per output pixel.
template <bool kSharedW>
__global__ void __launch_bounds__(kBlockX* kBlockY)
    conv_direct_kernel(Planes<const float> in, Planes<float> out, const float* __restrict__ w,
                       const float* __restrict__ bias, int cin, int cout, int k, bool relu) {
    extern __shared__ __align__(16) float smem[];
    const float* wt = w;
    if constexpr (kSharedW) {
        const int n = cout * cin * k * k;
        for (int i = threadIdx.y * blockDim.x + threadIdx.x; i < n; i += blockDim.x * blockDim.y)
            smem[i] = w[i];
        __syncthreads();
        wt = smem;
    }
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out.w || y >= out.h) return;
    const int r = k / 2, kk = k * k, kin = cin * kk;
    for (int oc0 = 0; oc0 < cout; oc0 += kOcChunk) {
        float acc[kOcChunk];
        chunk_bias(acc, bias, oc0, cout);
        for (int ic = 0; ic < cin; ++ic) {
            for (int ky = 0; ky < k; ++ky) {
                const float* rowp = in.data + ic * in.plane + clampi(y + ky - r, in.h - 1) * in.row;
                const float* wrow = wt + (oc0 * cin + ic) * kk + ky * k;
                for (int kx = 0; kx < k; ++kx) {
                    const float v = rowp[clampi(x + kx - r, in.w - 1)];
#pragma unroll
                    for (int j = 0; j < kOcChunk; ++j)
                        if (oc0 + j < cout) acc[j] = fmaf(wrow[j * kin + kx], v, acc[j]);
                }
            }
        }
        store_chunk(out, acc, oc0, cout, x, y, relu);
    }
}

// SharedKernelPatch: weights and, channel by channel, the block's input patch (tile + halo) in
// shared memory.
__global__ void __launch_bounds__(kBlockX* kBlockY)
    conv_patch_kernel(Planes<const float> in, Planes<float> out, const float* __restrict__ w,
                      const float* __restrict__ bias, int cin, int cout, int k, bool relu) {
    extern __shared__ __align__(16) float smem[];
    const int nw = cout * cin * k * k;
    float* ws = smem;
    float* patch = smem + ((nw + 3) & ~3);
    const int tid = threadIdx.y * kBlockX + threadIdx.x;
    for (int i = tid; i < nw; i += kBlockX * kBlockY) ws[i] = w[i];
    const int r = k / 2, kk = k * k;
    const int pw = kBlockX + 2 * r, ph = kBlockY + 2 * r;
    const int x0 = blockIdx.x * kBlockX, y0 = blockIdx.y * kBlockY;
    const int x = x0 + threadIdx.x, y = y0 + threadIdx.y;
    const bool live = x < out.w && y < out.h;
    for (int oc0 = 0; oc0 < cout; oc0 += kOcChunk) {
        float acc[kOcChunk];
        chunk_bias(acc, bias, oc0, cout);
        for (int ic = 0; ic < cin; ++ic) {
            __syncthreads();
            const float* src = in.data + ic * in.plane;
            for (int i = tid; i < pw * ph; i += kBlockX * kBlockY) {
                const int py = i / pw, px = i - py * pw;
                patch[i] =
                    src[clampi(y0 + py - r, in.h - 1) * in.row + clampi(x0 + px - r, in.w - 1)];
            }
            __syncthreads();
            const float* wbase = ws + (oc0 * cin + ic) * kk;
            for (int ky = 0; ky < k; ++ky)
                for (int kx = 0; kx < k; ++kx) {
                    const float v = patch[(threadIdx.y + ky) * pw + threadIdx.x + kx];
#pragma unroll
                    for (int j = 0; j < kOcChunk; ++j)
                        if (oc0 + j < cout)
                            acc[j] = fmaf(wbase[j * cin * kk + ky * k + kx], v, acc[j]);
                }
        }
        if (live) store_chunk(out, acc, oc0, cout, x, y, relu);
    }
}

// RegisteredPixel ("shared kernel and registered pixel"): the pixel's in_channels*k*k inputs in
// registers, weights in shared memory, every output channel from the registers.
__global__ void __launch_bounds__(kBlockX* kBlockY)
    conv_regpix_kernel(Planes<const float> in, Planes<float> out, const float* __restrict__ w,
                       const float* __restrict__ bias, int cin, int cout, int k, bool relu) {
    extern __shared__ __align__(16) float smem[];
    const int kk = k * k, kin = cin * kk;
    const int tid = threadIdx.y * kBlockX + threadIdx.x;
    for (int i = tid; i < cout * kin; i += kBlockX * kBlockY) smem[i] = w[i];
    __syncthreads();
    const int x = blockIdx.x * kBlockX + threadIdx.x;
    const int y = blockIdx.y * kBlockY + threadIdx.y;
    if (x >= out.w || y >= out.h) return;
    const int r = k / 2;
    float v[kRegisteredPixelMaxInputs];
#pragma unroll
    for (int i = 0; i < kRegisteredPixelMaxInputs; ++i) {
        v[i] = 0.f;
        if (i < kin) {
            const int ic = i / kk, rem = i - ic * kk, ky = rem / k, kx = rem - ky * k;
            v[i] = in.data[ic * in.plane + clampi(y + ky - r, in.h - 1) * in.row +
                           clampi(x + kx - r, in.w - 1)];
        }
    }
    for (int oc = 0; oc < cout; ++oc) {
        const float* wr = smem + oc * kin;
        float a = bias[oc];
#pragma unroll
        for (int i = 0; i < kRegisteredPixelMaxInputs; ++i)
            if (i < kin) a = fmaf(wr[i], v[i], a);
        out.data[oc * out.plane + y * out.row + x] = relu ? fmaxf(a, 0.f) : a;
    }
}

// ------------------------------------------------------------------ tensor-core variant

// Implicit GEMM: M = pixels (a block: 64 consecutive pixels of one row), N = output channels
// (padded to 16), K = in_channels * k * k (padded to 32). A (im2col) is gathered into shared
// memory chunk by chunk (column-major, conflict-free stores); B (packed weights [Kpad][Npad]) is
// read straight from global memory (small, cached). 4 warps, each 16 pixels x all channels.
enum class Mma { Tf32, Tf32x3, F16, Bf16 };
template <Mma M>
struct MmaT {
    using A = float;
    using Prec = wmma::precision::tf32;
    static constexpr int kK = 8;
};
template <>
struct MmaT<Mma::F16> {
    using A = __half;
    using Prec = __half;
    static constexpr int kK = 16;
};
template <>
struct MmaT<Mma::Bf16> {
    using A = __nv_bfloat16;
    using Prec = __nv_bfloat16;
    static constexpr int kK = 16;
};

constexpr int kTcM = 64, kTcKc = 32, kTcThreads = 128, kTcMaxFrag = 8;
constexpr int kTcLda = kTcM + 8;  // column-major A: elements between k columns
constexpr int kTcLdc = kTcM + 4;  // column-major C staging (fp32)

template <class F>
__device__ __forceinline__ void tf32_round(F& f) {
#pragma unroll
    for (int i = 0; i < f.num_elements; ++i) f.x[i] = wmma::__float_to_tf32(f.x[i]);
}
template <class F>
__device__ __forceinline__ void tf32_split(F& big, F& small) {
#pragma unroll
    for (int i = 0; i < big.num_elements; ++i) {
        const float v = big.x[i];
        const float b = wmma::__float_to_tf32(v);
        big.x[i] = b;
        small.x[i] = wmma::__float_to_tf32(v - b);
    }
}

template <Mma M, class TIn, class TOut>
__global__ void __launch_bounds__(kTcThreads)
    conv_tc_kernel(Planes<const TIn> in, Planes<TOut> out,
                   const typename MmaT<M>::A* __restrict__ wp, const float* __restrict__ bias,
                   int cin, int cout, int k, int kpad, int npad, bool relu) {
    using AT = typename MmaT<M>::A;
    using Prec = typename MmaT<M>::Prec;
    constexpr int KS = MmaT<M>::kK;
    using FragA = wmma::fragment<wmma::matrix_a, 16, 16, KS, Prec, wmma::col_major>;
    using FragB = wmma::fragment<wmma::matrix_b, 16, 16, KS, Prec, wmma::row_major>;
    using FragC = wmma::fragment<wmma::accumulator, 16, 16, KS, float>;
    extern __shared__ __align__(128) unsigned char smem_raw[];
    AT* as = reinterpret_cast<AT*>(smem_raw);
    float* cs = reinterpret_cast<float*>(smem_raw);

    const int tid = threadIdx.x, warp = tid / 32;
    const int x0 = blockIdx.x * kTcM, y = blockIdx.y;
    const int m = tid % kTcM;
    const int xm = x0 + m;
    const int r = k / 2, kk = k * k, kdim = cin * kk;
    const int nfrag = npad / 16;

    FragC acc[kTcMaxFrag];
#pragma unroll
    for (int f = 0; f < kTcMaxFrag; ++f) wmma::fill_fragment(acc[f], 0.f);

    // This thread gathers k indices tid / kTcM + 2 * it of every chunk: decoded incrementally.
    constexpr int kStep = kTcThreads / kTcM;
    int kidx = tid / kTcM;
    int ic = kidx / kk, ky = (kidx - ic * kk) / k, kx = kidx - ic * kk - ky * k;
    for (int k0 = 0; k0 < kpad; k0 += kTcKc) {
        __syncthreads();
#pragma unroll 4
        for (int it = 0; it < kTcKc / kStep; ++it) {
            float v = 0.f;
            if (kidx < kdim)
                v = to_f(in.data[ic * in.plane + clampi(y + ky - r, in.h - 1) * in.row +
                                 clampi(xm + kx - r, in.w - 1)]);
            as[(kidx - k0) * kTcLda + m] = from_f<AT>(v);
            kidx += kStep;
            kx += kStep;
            while (kx >= k) {
                kx -= k;
                if (++ky == k) {
                    ky = 0;
                    ++ic;
                }
            }
        }
        __syncthreads();
#pragma unroll
        for (int ks = 0; ks < kTcKc; ks += KS) {
            FragA a, a_small;
            wmma::load_matrix_sync(a, as + ks * kTcLda + warp * 16, kTcLda);
            if constexpr (M == Mma::Tf32) tf32_round(a);
            if constexpr (M == Mma::Tf32x3) tf32_split(a, a_small);
            const AT* bp = wp + static_cast<std::ptrdiff_t>(k0 + ks) * npad;
#pragma unroll
            for (int f = 0; f < kTcMaxFrag; ++f) {
                if (f < nfrag) {
                    FragB b, b_small;
                    wmma::load_matrix_sync(b, bp + f * 16, npad);
                    if constexpr (M == Mma::Tf32x3) {
                        tf32_split(b, b_small);
                        wmma::mma_sync(acc[f], a_small, b, acc[f]);
                        wmma::mma_sync(acc[f], a, b_small, acc[f]);
                    } else if constexpr (M == Mma::Tf32) {
                        tf32_round(b);
                    }
                    wmma::mma_sync(acc[f], a, b, acc[f]);
                }
            }
        }
    }
    __syncthreads();
#pragma unroll
    for (int f = 0; f < kTcMaxFrag; ++f)
        if (f < nfrag)
            wmma::store_matrix_sync(cs + f * 16 * kTcLdc + warp * 16, acc[f], kTcLdc,
                                    wmma::mem_col_major);
    __syncthreads();
    for (int e = tid; e < kTcM * cout; e += kTcThreads) {
        const int mm = e % kTcM, n = e / kTcM;
        const int xo = x0 + mm;
        if (xo < out.w) {
            float v = cs[n * kTcLdc + mm] + bias[n];
            if (relu) v = fmaxf(v, 0.f);
            out.data[n * out.plane + static_cast<std::ptrdiff_t>(y) * out.row + xo] =
                from_f<TOut>(v);
        }
    }
}

// ------------------------------------------------------------------ device model cache

// The public names (srcnn.cpp): plans, cache keys and messages use them.
const char* variant_name(SrcnnVariant v) { return to_string(v); }
const char* precision_name(SrcnnPrecision p) { return to_string(p); }
constexpr SrcnnVariant kLayerVariants[] = {
    SrcnnVariant::Direct,          SrcnnVariant::SharedKernel, SrcnnVariant::SharedKernelPatch,
    SrcnnVariant::RegisteredPixel, SrcnnVariant::TensorCore,   SrcnnVariant::Cudnn};
constexpr SrcnnPrecision kConcretePrecisions[] = {SrcnnPrecision::Fp32, SrcnnPrecision::Tf32,
                                                  SrcnnPrecision::Fp16, SrcnnPrecision::Bf16};

DType act_dtype(SrcnnPrecision p) {
    return p == SrcnnPrecision::Fp16   ? DType::F16
           : p == SrcnnPrecision::Bf16 ? DType::Bf16
                                       : DType::F32;
}
std::size_t dtype_size(DType t) { return t == DType::F32 ? 4 : 2; }

std::uint64_t fnv1a(std::uint64_t h, const void* p, std::size_t n) {
    const auto* b = static_cast<const unsigned char*>(p);
    for (std::size_t i = 0; i < n; ++i) {
        h ^= b[i];
        h *= 1099511628211ull;
    }
    return h;
}
std::uint64_t hash_layer(std::uint64_t h, const SrcnnLayer& l) {
    const int dims[3] = {l.out_channels, l.in_channels, l.kernel};
    h = fnv1a(h, dims, sizeof dims);
    h = fnv1a(h, l.weights.data(), l.weights.size() * sizeof(float));
    return fnv1a(h, l.bias.data(), l.bias.size() * sizeof(float));
}

struct DevLayer {
    int cout = 0, cin = 0, k = 0, kpad = 0, npad = 0;
    float* w = nullptr;             // OIHW fp32
    float* b = nullptr;             // bias fp32
    float* tc32 = nullptr;          // [kpad][npad] fp32 (tf32 and 3xTF32 split on the fly)
    __half* tc16 = nullptr;         // [kpad][npad] fp16
    __nv_bfloat16* tcbf = nullptr;  // [kpad][npad] bf16
};

template <class T>
T* upload(const T* host, std::size_t n) {
    void* p = nullptr;
    const cudaError_t err = cudaMalloc(&p, n * sizeof(T));
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        throw Error(ErrorCode::OutOfMemory, "srcnn: cannot allocate " +
                                                std::to_string(n * sizeof(T)) +
                                                " bytes of device memory for the model weights");
    }
    UPRES_CUDA_CHECK(err);
    UPRES_CUDA_CHECK(cudaMemcpy(p, host, n * sizeof(T), cudaMemcpyHostToDevice));
    return static_cast<T*>(p);
}

DevLayer upload_layer(const SrcnnLayer& l) {
    DevLayer d;
    d.cout = l.out_channels;
    d.cin = l.in_channels;
    d.k = l.kernel;
    const int kdim = d.cin * d.k * d.k;
    d.kpad = (kdim + kTcKc - 1) / kTcKc * kTcKc;
    d.npad = (d.cout + 15) / 16 * 16;
    d.w = upload(l.weights.data(), l.weights.size());
    d.b = upload(l.bias.data(), l.bias.size());
    std::vector<float> packed(static_cast<std::size_t>(d.kpad) * d.npad, 0.f);
    for (int n = 0; n < d.cout; ++n)
        for (int kk = 0; kk < kdim; ++kk)
            packed[static_cast<std::size_t>(kk) * d.npad + n] =
                l.weights[static_cast<std::size_t>(n) * kdim + kk];
    d.tc32 = upload(packed.data(), packed.size());
    std::vector<__half> p16(packed.size());
    std::vector<__nv_bfloat16> pbf(packed.size());
    for (std::size_t i = 0; i < packed.size(); ++i) {
        p16[i] = __float2half_rn(packed[i]);
        pbf[i] = __float2bfloat16_rn(packed[i]);
    }
    d.tc16 = upload(p16.data(), p16.size());
    d.tcbf = upload(pbf.data(), pbf.size());
    return d;
}

void free_layer(DevLayer& d) noexcept {
    for (void* p : {static_cast<void*>(d.w), static_cast<void*>(d.b), static_cast<void*>(d.tc32),
                    static_cast<void*>(d.tc16), static_cast<void*>(d.tcbf)})
        if (p) (void)cudaFree(p);
    d = DevLayer{};
}

struct DevModel {
    std::uint64_t hash = 0;
    int device = 0;
    int nlayers = 0;
    DevLayer layers[3];
    std::map<SrcnnPrecision, FusedWeights*> fused;
    ~DevModel() {
        for (int i = 0; i < nlayers; ++i) free_layer(layers[i]);
        for (auto& [p, f] : fused) fused_release(f);
    }
};

struct DeviceInfo {
    std::string name;
    int smem_optin = 48 * 1024;
};

// The engine's process-wide state, guarded by one mutex. Freed at exit (errors ignored: the CUDA
// runtime may already be shutting down).
struct Engine {
    std::mutex mu;
    std::list<std::shared_ptr<DevModel>> models;  // most recently used first
    std::map<std::pair<int, cudaStream_t>, DeviceScratch> workspaces;
    std::map<int, DeviceInfo> devices;
    std::map<std::string, std::string> tuned;  // autotune key -> plan string
    int tunings = 0;
    static constexpr std::size_t kMaxModels = 6;

    ~Engine() { release(); }
    void release() noexcept {
        std::lock_guard<std::mutex> lock(mu);
        models.clear();
        for (auto& [key, ws] : workspaces) ws.release();
        workspaces.clear();
    }
};
Engine& engine() {
    static Engine e;
    return e;
}

int current_device() {
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    return dev;
}

const DeviceInfo& device_info(int dev) {
    Engine& e = engine();
    std::lock_guard<std::mutex> lock(e.mu);
    auto it = e.devices.find(dev);
    if (it != e.devices.end()) return it->second;
    DeviceInfo info;
    cudaDeviceProp prop{};
    UPRES_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
    info.name = prop.name;
    int optin = 0;
    UPRES_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
    info.smem_optin = optin;
    return e.devices.emplace(dev, info).first->second;
}

// The cached device copy of `n` layers (one for conv_layer, three for a model).
std::shared_ptr<DevModel> device_model(const SrcnnLayer* layers, int n, std::uint64_t hash) {
    const int dev = current_device();
    Engine& e = engine();
    {
        std::lock_guard<std::mutex> lock(e.mu);
        for (auto it = e.models.begin(); it != e.models.end(); ++it)
            if ((*it)->hash == hash && (*it)->device == dev && (*it)->nlayers == n) {
                auto m = *it;
                e.models.erase(it);
                e.models.push_front(m);
                return m;
            }
    }
    auto m = std::make_shared<DevModel>();
    m->hash = hash;
    m->device = dev;
    for (int i = 0; i < n; ++i) {
        m->layers[i] = upload_layer(layers[i]);
        m->nlayers = i + 1;
    }
    std::lock_guard<std::mutex> lock(e.mu);
    e.models.push_front(m);
    while (e.models.size() > Engine::kMaxModels) {
        // cudaFree waits for the device: work queued with the evicted weights completes first.
        e.models.pop_back();
    }
    return m;
}

// Grow-only intermediate buffer per (device, stream).
void* workspace(cudaStream_t stream, std::size_t bytes) {
    const int dev = current_device();
    Engine& e = engine();
    std::lock_guard<std::mutex> lock(e.mu);
    return e.workspaces[{dev, stream}].grow(bytes, stream, "the intermediate feature maps");
}

// ------------------------------------------------------------------ per-layer launch

struct Unsupported {
    ErrorCode code;
    std::string why;  // empty: supported
};

std::size_t layer_weight_bytes(int cout, int cin, int k) {
    return static_cast<std::size_t>(cout) * cin * k * k * sizeof(float);
}
std::size_t patch_smem_bytes(int cout, int cin, int k) {
    const std::size_t nw = (static_cast<std::size_t>(cout) * cin * k * k + 3) & ~std::size_t{3};
    const int r = k / 2;
    return (nw + static_cast<std::size_t>(kBlockX + 2 * r) * (kBlockY + 2 * r)) * sizeof(float);
}

Unsupported check_layer(SrcnnVariant v, SrcnnPrecision p, int cout, int cin, int k,
                        int smem_optin) {
    const bool cuda_core = v == SrcnnVariant::Direct || v == SrcnnVariant::SharedKernel ||
                           v == SrcnnVariant::SharedKernelPatch ||
                           v == SrcnnVariant::RegisteredPixel;
    if (v == SrcnnVariant::Auto || v == SrcnnVariant::FusedNetwork)
        return {ErrorCode::InvalidArgument,
                std::string("'") + variant_name(v) + "' is not a per-layer variant"};
    // cudnn (srcnn_cudnn.cu): unavailable when not built or libcudnn cannot be loaded, so Auto
    // never lists it then.
    if (v == SrcnnVariant::Cudnn && !cudnn_unavailable_reason().empty())
        return {ErrorCode::BackendUnavailable, cudnn_unavailable_reason()};
    if (v == SrcnnVariant::Cudnn && !cudnn_supports(p))
        return {ErrorCode::InvalidArgument,
                std::string("variant 'cudnn' runs only at precision fp32 or tf32 (asked: ") +
                    precision_name(p) + "); use tensor-core or fused for " + precision_name(p)};
    if (cuda_core && p != SrcnnPrecision::Fp32)
        return {ErrorCode::InvalidArgument,
                std::string("variant '") + variant_name(v) +
                    "' computes in fp32 on CUDA cores and runs only at precision fp32 (asked: " +
                    precision_name(p) + "); use tensor-core or fused for " + precision_name(p)};
    if (v == SrcnnVariant::SharedKernel &&
        layer_weight_bytes(cout, cin, k) > static_cast<std::size_t>(smem_optin))
        return {ErrorCode::InvalidArgument,
                "variant 'shared-kernel' needs the layer's " +
                    std::to_string(layer_weight_bytes(cout, cin, k)) +
                    " bytes of weights in shared memory; the device allows " +
                    std::to_string(smem_optin)};
    if (v == SrcnnVariant::SharedKernelPatch &&
        patch_smem_bytes(cout, cin, k) > static_cast<std::size_t>(smem_optin))
        return {ErrorCode::InvalidArgument,
                "variant 'shared-kernel-patch' needs " +
                    std::to_string(patch_smem_bytes(cout, cin, k)) +
                    " bytes of shared memory (weights + patch); the device allows " +
                    std::to_string(smem_optin)};
    if (v == SrcnnVariant::RegisteredPixel) {
        if (cin * k * k > kRegisteredPixelMaxInputs)
            return {ErrorCode::InvalidArgument,
                    "variant 'registered-pixel' holds at most " +
                        std::to_string(kRegisteredPixelMaxInputs) +
                        " inputs per pixel in registers; this layer has in_channels*k*k = " +
                        std::to_string(cin * k * k) + " (" + std::to_string(cin) + "x" +
                        std::to_string(k) + "x" + std::to_string(k) + ")"};
        if (layer_weight_bytes(cout, cin, k) > static_cast<std::size_t>(smem_optin))
            return {ErrorCode::InvalidArgument,
                    "variant 'registered-pixel' needs the layer's weights in shared memory"};
    }
    if (v == SrcnnVariant::TensorCore && p == SrcnnPrecision::Fastest)
        return {ErrorCode::Internal, "precision fastest reached a layer unresolved"};
    if (cout > kTcMaxFrag * 16)
        return {ErrorCode::InvalidArgument, "more than 128 output channels"};
    return {ErrorCode::Internal, {}};
}

template <class T>
Planes<T> planes(void* p, int w, int h, std::ptrdiff_t row, std::ptrdiff_t plane) {
    return {static_cast<T*>(p), w, h, row, plane};
}

struct Act {
    const void* data;
    DType type;
    std::ptrdiff_t row, plane;
};
struct ActOut {
    void* data;
    DType type;
    std::ptrdiff_t row, plane;
};

template <Mma M, class TIn, class TOut>
void launch_tc(const DevLayer& L, const Act& in, const ActOut& out, int w, int h, bool relu,
               cudaStream_t s) {
    using AT = typename MmaT<M>::A;
    const AT* wp;
    if constexpr (std::is_same_v<AT, float>)
        wp = L.tc32;
    else if constexpr (std::is_same_v<AT, __half>)
        wp = L.tc16;
    else
        wp = L.tcbf;
    const std::size_t smem = std::max(sizeof(AT) * kTcKc * kTcLda,
                                      sizeof(float) * static_cast<std::size_t>(L.npad) * kTcLdc);
    const dim3 grid((w + kTcM - 1) / kTcM, h);
    Planes<const TIn> pin{static_cast<const TIn*>(in.data), w, h, in.row, in.plane};
    Planes<TOut> pout{static_cast<TOut*>(out.data), w, h, out.row, out.plane};
    conv_tc_kernel<M, TIn, TOut><<<grid, kTcThreads, smem, s>>>(pin, pout, wp, L.b, L.cin, L.cout,
                                                                L.k, L.kpad, L.npad, relu);
    UPRES_CUDA_CHECK_LAUNCH();
}

template <Mma M>
void launch_tc_types(const DevLayer& L, const Act& in, const ActOut& out, int w, int h, bool relu,
                     cudaStream_t s) {
    if constexpr (M == Mma::Tf32 || M == Mma::Tf32x3) {
        if (in.type == DType::F32 && out.type == DType::F32)
            return launch_tc<M, float, float>(L, in, out, w, h, relu, s);
    } else {
        using T = typename MmaT<M>::A;
        const DType t = M == Mma::F16 ? DType::F16 : DType::Bf16;
        if (in.type == DType::F32 && out.type == DType::F32)
            return launch_tc<M, float, float>(L, in, out, w, h, relu, s);
        if (in.type == DType::F32 && out.type == t)
            return launch_tc<M, float, T>(L, in, out, w, h, relu, s);
        if (in.type == t && out.type == t) return launch_tc<M, T, T>(L, in, out, w, h, relu, s);
        if (in.type == t && out.type == DType::F32)
            return launch_tc<M, T, float>(L, in, out, w, h, relu, s);
    }
    throw Error(ErrorCode::Internal, "srcnn: tensor-core layer with mismatched storage types");
}

template <class K>
void set_smem(K kernel, std::size_t bytes) {
    if (bytes > 48 * 1024)
        UPRES_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                              static_cast<int>(bytes)));
}

// Runs one layer (the variant was checked by check_layer).
void launch_layer(SrcnnVariant v, SrcnnPrecision p, const DevLayer& L, const Act& in,
                  const ActOut& out, int w, int h, bool relu, cudaStream_t s) {
    if (v == SrcnnVariant::TensorCore) {
        switch (p) {
            case SrcnnPrecision::Fp32:
                return launch_tc_types<Mma::Tf32x3>(L, in, out, w, h, relu, s);
            case SrcnnPrecision::Tf32:
                return launch_tc_types<Mma::Tf32>(L, in, out, w, h, relu, s);
            case SrcnnPrecision::Fp16:
                return launch_tc_types<Mma::F16>(L, in, out, w, h, relu, s);
            case SrcnnPrecision::Bf16:
                return launch_tc_types<Mma::Bf16>(L, in, out, w, h, relu, s);
            default:
                break;
        }
        throw Error(ErrorCode::Internal, "srcnn: unresolved precision");
    }
    if (in.type != DType::F32 || out.type != DType::F32)
        throw Error(ErrorCode::Internal, "srcnn: CUDA-core variant on non-fp32 storage");
    if (v == SrcnnVariant::Cudnn)  // srcnn_cudnn.cu
        return cudnn_conv_layer(static_cast<const float*>(in.data), in.row, in.plane,
                                static_cast<float*>(out.data), out.row, out.plane, w, h, L.cin,
                                L.cout, L.k, L.w, L.b, relu, p, s);
    Planes<const float> pin{static_cast<const float*>(in.data), w, h, in.row, in.plane};
    Planes<float> pout{static_cast<float*>(out.data), w, h, out.row, out.plane};
    const dim3 block(kBlockX, kBlockY);
    const dim3 grid((w + kBlockX - 1) / kBlockX, (h + kBlockY - 1) / kBlockY);
    switch (v) {
        case SrcnnVariant::Direct:
            conv_direct_kernel<false>
                <<<grid, block, 0, s>>>(pin, pout, L.w, L.b, L.cin, L.cout, L.k, relu);
            break;
        case SrcnnVariant::SharedKernel: {
            const std::size_t smem = layer_weight_bytes(L.cout, L.cin, L.k);
            set_smem(conv_direct_kernel<true>, smem);
            conv_direct_kernel<true>
                <<<grid, block, smem, s>>>(pin, pout, L.w, L.b, L.cin, L.cout, L.k, relu);
            break;
        }
        case SrcnnVariant::SharedKernelPatch: {
            const std::size_t smem = patch_smem_bytes(L.cout, L.cin, L.k);
            set_smem(conv_patch_kernel, smem);
            conv_patch_kernel<<<grid, block, smem, s>>>(pin, pout, L.w, L.b, L.cin, L.cout, L.k,
                                                        relu);
            break;
        }
        case SrcnnVariant::RegisteredPixel: {
            const std::size_t smem = layer_weight_bytes(L.cout, L.cin, L.k);
            set_smem(conv_regpix_kernel, smem);
            conv_regpix_kernel<<<grid, block, smem, s>>>(pin, pout, L.w, L.b, L.cin, L.cout, L.k,
                                                         relu);
            break;
        }
        default:
            throw Error(ErrorCode::Internal, "srcnn: not a per-layer variant");
    }
    UPRES_CUDA_CHECK_LAUNCH();
}

void check_grid(int w, int h) {
    if (h > 65535 || w > (1 << 30))
        throw Error(ErrorCode::InvalidArgument,
                    "srcnn: the CUDA engine handles planes up to 65535 rows; got " +
                        std::to_string(w) + "x" + std::to_string(h));
}

// ------------------------------------------------------------------ plans and autotuning

struct Choice {
    SrcnnPrecision precision = SrcnnPrecision::Fp32;
    bool fused = false;
    std::array<SrcnnVariant, 3> layers{SrcnnVariant::TensorCore, SrcnnVariant::TensorCore,
                                       SrcnnVariant::TensorCore};
};

std::string choice_string(const Choice& c) {
    std::string s = precision_name(c.precision);
    if (c.fused) return s + " fused";
    s += ' ';
    for (int i = 0; i < 3; ++i) {
        if (i) s += ',';
        s += variant_name(c.layers[i]);
    }
    return s;
}

bool parse_choice(const std::string& s, Choice& c) {
    const auto sp = s.find(' ');
    if (sp == std::string::npos) return false;
    const std::string p = s.substr(0, sp), rest = s.substr(sp + 1);
    bool okp = false;
    for (SrcnnPrecision q : kConcretePrecisions)
        if (p == precision_name(q)) {
            c.precision = q;
            okp = true;
        }
    if (!okp) return false;
    if (rest == "fused") {
        c.fused = true;
        return true;
    }
    c.fused = false;
    int i = 0;
    for (std::size_t at = 0; at <= rest.size();) {
        std::size_t e = rest.find(',', at);
        if (e == std::string::npos) e = rest.size();
        const std::string item = rest.substr(at, e - at);
        at = e + 1;
        if (i >= 3) return false;
        bool okv = false;
        for (SrcnnVariant v : kLayerVariants)
            if (item == variant_name(v)) {
                c.layers[i] = v;
                okv = true;
            }
        if (!okv) return false;
        ++i;
    }
    return i == 3;
}

// Candidate plans for one concrete precision.
struct Candidates {
    SrcnnPrecision precision;
    bool fused = false;                                  // the fused kernel is a candidate
    std::array<std::vector<SrcnnVariant>, 3> per_layer;  // empty: per-layer plans excluded
    std::size_t count() const {
        std::size_t n = fused ? 1 : 0;
        if (!per_layer[0].empty())
            n += per_layer[0].size() * per_layer[1].size() * per_layer[2].size();
        return n;
    }
    bool has(const Choice& c) const {
        if (c.precision != precision) return false;
        if (c.fused) return fused;
        if (per_layer[0].empty()) return false;
        for (int i = 0; i < 3; ++i)
            if (std::find(per_layer[i].begin(), per_layer[i].end(), c.layers[i]) ==
                per_layer[i].end())
                return false;
        return true;
    }
};

// layer < 0: a single layer of conv_layer.
[[noreturn]] void throw_layer(const Unsupported& u, int layer, const SrcnnLayer& l) {
    throw Error(u.code,
                std::string("srcnn: ") +
                    (layer < 0 ? std::string("conv_layer") : "layer " + std::to_string(layer + 1)) +
                    " (" + std::to_string(l.out_channels) + "x" + std::to_string(l.in_channels) +
                    "x" + std::to_string(l.kernel) + "x" + std::to_string(l.kernel) +
                    "): " + u.why);
}

// Candidate sets for each concrete precision the request allows; throws the first reason when
// nothing can run.
std::vector<Candidates> candidates(const SrcnnModel& model, const SrcnnOptions& opts,
                                   int smem_optin) {
    std::vector<SrcnnPrecision> precs;
    if (opts.precision == SrcnnPrecision::Fastest)
        precs.assign(kFastestPrecisions.begin(), kFastestPrecisions.end());
    else
        precs.push_back(opts.precision);
    const bool all_auto = opts.variant == SrcnnVariant::Auto &&
                          std::all_of(opts.layer_variants.begin(), opts.layer_variants.end(),
                                      [](SrcnnVariant v) { return v == SrcnnVariant::Auto; });
    for (int i = 0; i < 3; ++i)
        if (opts.variant == SrcnnVariant::Auto &&
            opts.layer_variants[i] == SrcnnVariant::FusedNetwork)
            throw Error(ErrorCode::InvalidArgument,
                        "srcnn: layer_variants[" + std::to_string(i) +
                            "] is 'fused', which is a whole-network variant: set "
                            "SrcnnOptions::variant to FusedNetwork instead");
    std::vector<Candidates> out;
    std::string first_error;
    ErrorCode first_code = ErrorCode::InvalidArgument;
    for (SrcnnPrecision p : precs) {
        Candidates c{p, false, {}};
        if (opts.variant == SrcnnVariant::FusedNetwork || all_auto) {
            c.fused = fused_supports(model, p);
            if (!c.fused && opts.variant == SrcnnVariant::FusedNetwork && first_error.empty())
                first_error = std::string("srcnn: the fused kernel does not support this model (") +
                              std::to_string(model.layers[0].kernel) + "-" +
                              std::to_string(model.layers[1].kernel) + "-" +
                              std::to_string(model.layers[2].kernel) + ", " +
                              std::to_string(model.layers[0].out_channels) + "/" +
                              std::to_string(model.layers[1].out_channels) +
                              " channels) at precision " + precision_name(p);
        }
        if (opts.variant != SrcnnVariant::FusedNetwork) {
            bool ok = true;
            for (int i = 0; i < 3 && ok; ++i) {
                const SrcnnLayer& l = model.layers[i];
                const SrcnnVariant forced =
                    opts.variant != SrcnnVariant::Auto ? opts.variant : opts.layer_variants[i];
                if (forced != SrcnnVariant::Auto) {
                    const Unsupported u =
                        check_layer(forced, p, l.out_channels, l.in_channels, l.kernel, smem_optin);
                    if (!u.why.empty()) {
                        if (precs.size() == 1) throw_layer(u, i, l);
                        ok = false;
                        break;
                    }
                    c.per_layer[i] = {forced};
                } else {
                    for (SrcnnVariant v : kLayerVariants)
                        if (check_layer(v, p, l.out_channels, l.in_channels, l.kernel, smem_optin)
                                .why.empty())
                            c.per_layer[i].push_back(v);
                    if (c.per_layer[i].empty()) ok = false;
                }
            }
            if (!ok) c.per_layer = {};
        }
        if (c.count() > 0) out.push_back(std::move(c));
    }
    if (out.empty()) {
        if (first_error.empty())
            first_error = std::string("srcnn: no variant can run this model at precision ") +
                          precision_name(opts.precision) + " with variant " +
                          variant_name(opts.variant);
        throw Error(first_code, first_error);
    }
    return out;
}

float median_ms(cudaStream_t s, const std::function<void()>& f) {
    f();  // warm-up (module load, first-touch)
    cudaEvent_t a, b;
    UPRES_CUDA_CHECK(cudaEventCreate(&a));
    UPRES_CUDA_CHECK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int i = 0; i < 3; ++i) {
        UPRES_CUDA_CHECK(cudaEventRecord(a, s));
        f();
        UPRES_CUDA_CHECK(cudaEventRecord(b, s));
        UPRES_CUDA_CHECK(cudaEventSynchronize(b));
        float ms = 0;
        UPRES_CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms);
    }
    (void)cudaEventDestroy(a);
    (void)cudaEventDestroy(b);
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

std::string cache_file() {
    const char* dir = std::getenv("UPRES_CACHE_DIR");
    if (!dir || !*dir) return {};
    return std::string(dir) + "/srcnn_autotune.tsv";
}

// key -> plan lines "key\tplan"; malformed lines are skipped (a corrupt file is ignored and
// rewritten on the next store).
std::map<std::string, std::string> read_cache_file(const std::string& path) {
    std::map<std::string, std::string> m;
    // C stdio, not iostreams: no locale facets (docs/python.md: an extension's libstdc++ copy).
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return m;
    std::string text;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
    std::fclose(f);
    for (std::size_t at = 0; at < text.size();) {
        std::size_t e = text.find('\n', at);
        if (e == std::string::npos) e = text.size();
        const std::string line = text.substr(at, e - at);
        at = e + 1;
        const auto tab = line.rfind('\t');
        if (tab == std::string::npos || tab == 0) continue;
        Choice c;
        const std::string plan = line.substr(tab + 1);
        if (!parse_choice(plan, c)) continue;
        m[line.substr(0, tab)] = plan;
    }
    return m;
}

void write_cache_file(const std::string& path, const std::string& key, const std::string& plan) {
    try {
        auto m = read_cache_file(path);
        m[key] = plan;
        detail::AtomicFile f(path);
        for (const auto& [k, v] : m) std::fprintf(f.file(), "%s\t%s\n", k.c_str(), v.c_str());
        f.commit();
    } catch (const Error&) {
        // An unwritable cache folder only costs a re-tune next process.
    }
}

// Per-layer storage: input/output descriptors of layer i in a per-layer plan.
struct PlanBuffers {
    Act in[3];
    ActOut out[3];
};

PlanBuffers plan_buffers(const SrcnnModel& model, SrcnnPrecision p, Span2D<const float> in,
                         Span2D<float> out, cudaStream_t s) {
    const int w = in.width, h = in.height;
    const DType t = act_dtype(p);
    const std::size_t px = static_cast<std::size_t>(w) * h;
    const std::size_t n1 = static_cast<std::size_t>(model.layers[0].out_channels);
    const std::size_t n2 = static_cast<std::size_t>(model.layers[1].out_channels);
    // 256-byte aligned second buffer.
    const std::size_t b1 = (n1 * px * dtype_size(t) + 255) & ~std::size_t{255};
    auto* base = static_cast<unsigned char*>(workspace(s, b1 + n2 * px * dtype_size(t)));
    void* a1 = base;
    void* a2 = base + b1;
    const auto pl = static_cast<std::ptrdiff_t>(px);
    PlanBuffers b;
    b.in[0] = {in.data, DType::F32, in.stride, 0};
    b.out[0] = {a1, t, w, pl};
    b.in[1] = {a1, t, w, pl};
    b.out[1] = {a2, t, w, pl};
    b.in[2] = {a2, t, w, pl};
    b.out[2] = {out.data, DType::F32, out.stride, 0};
    return b;
}

FusedWeights* fused_weights(DevModel& dm, const SrcnnModel& model, SrcnnPrecision p,
                            cudaStream_t s) {
    {
        std::lock_guard<std::mutex> lock(engine().mu);
        auto it = dm.fused.find(p);
        if (it != dm.fused.end()) return it->second;
    }
    FusedWeights* f = fused_prepare(model, p, s);
    std::lock_guard<std::mutex> lock(engine().mu);
    auto [it, inserted] = dm.fused.emplace(p, f);
    if (!inserted) fused_release(f);
    return it->second;
}

void run_choice(const Choice& c, DevModel& dm, const SrcnnModel& model, Span2D<const float> in,
                Span2D<float> out, cudaStream_t s) {
    if (c.fused) {
        fused_forward(fused_weights(dm, model, c.precision, s), in, out, s);
        return;
    }
    const PlanBuffers b = plan_buffers(model, c.precision, in, out, s);
    for (int i = 0; i < 3; ++i)
        launch_layer(c.layers[i], c.precision, dm.layers[i], b.in[i], b.out[i], in.width, in.height,
                     i < 2, s);
}

std::string tune_key(const DeviceInfo& dev, const SrcnnModel& model, const SrcnnOptions& opts,
                     int w, int h) {
    // Shape bucket: sizes rounded up to multiples of 256 (timings scale with the area).
    std::string s =
        dev.name + '|' + precision_name(opts.precision) + '|' + variant_name(opts.variant);
    for (SrcnnVariant v : opts.layer_variants) s += std::string(",") + variant_name(v);
    s += '|';
    for (const SrcnnLayer& l : model.layers)
        s += std::to_string(l.out_channels) + 'x' + std::to_string(l.in_channels) + 'x' +
             std::to_string(l.kernel) + ';';
    s += '|' + std::to_string((w + 255) / 256 * 256) + 'x' + std::to_string((h + 255) / 256 * 256);
    for (char& ch : s)
        if (ch == '\t' || ch == '\n') ch = ' ';
    return s;
}

Choice autotune(const std::vector<Candidates>& cands, DevModel& dm, const SrcnnModel& model,
                Span2D<const float> in, Span2D<float> out, cudaStream_t s) {
    Choice best;
    float best_ms = 0;
    bool have = false;
    for (const Candidates& c : cands) {
        if (c.fused) {
            Choice f{c.precision, true, {}};
            const float ms = median_ms(s, [&] { run_choice(f, dm, model, in, out, s); });
            if (!have || ms < best_ms) {
                best = f;
                best_ms = ms;
                have = true;
            }
        }
        if (c.per_layer[0].empty()) continue;
        const PlanBuffers b = plan_buffers(model, c.precision, in, out, s);
        Choice pl{c.precision, false, {}};
        float total = 0;
        for (int i = 0; i < 3; ++i) {
            float layer_best = 0;
            bool lh = false;
            for (SrcnnVariant v : c.per_layer[i]) {
                const float ms = median_ms(s, [&] {
                    launch_layer(v, c.precision, dm.layers[i], b.in[i], b.out[i], in.width,
                                 in.height, i < 2, s);
                });
                if (!lh || ms < layer_best) {
                    layer_best = ms;
                    pl.layers[i] = v;
                    lh = true;
                }
            }
            total += layer_best;
        }
        if (!have || total < best_ms) {
            best = pl;
            best_ms = total;
            have = true;
        }
    }
    return best;
}

}  // namespace

// ------------------------------------------------------------------ public (internal) API

int autotune_count() noexcept {
    std::lock_guard<std::mutex> lock(engine().mu);
    return engine().tunings;
}
void autotune_forget() noexcept {
    std::lock_guard<std::mutex> lock(engine().mu);
    engine().tuned.clear();
}
void* DeviceScratch::grow(std::size_t need, void* stream, const char* what) {
    if (bytes >= need) return p;
    if (p) {
        UPRES_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
        UPRES_CUDA_CHECK(cudaFree(p));
        *this = DeviceScratch{};
    }
    const cudaError_t err = cudaMalloc(&p, need);
    if (err == cudaErrorMemoryAllocation) {
        (void)cudaGetLastError();
        *this = DeviceScratch{};
        throw Error(ErrorCode::OutOfMemory, "srcnn: cannot allocate " + std::to_string(need >> 20) +
                                                " MiB (" + std::to_string(need) +
                                                " bytes) of device memory for " + what);
    }
    UPRES_CUDA_CHECK(err);
    bytes = need;
    return p;
}

void DeviceScratch::release() noexcept {
    if (p) (void)cudaFree(p);
    *this = DeviceScratch{};
}

std::string plan_string(const SrcnnPlan& plan) {
    Choice c{plan.precision, plan.fused, plan.layers};
    return choice_string(c);
}
void release_caches() noexcept {
    engine().release();
    cudnn_release();  // srcnn_cudnn.cu's handles and workspaces
}

}  // namespace upres::srcnn::cuda

namespace upres::cuda {

using namespace srcnn::cuda;  // the engine above

SrcnnPlan srcnn_forward(Span2D<const float> in, Span2D<float> out, const SrcnnModel& model,
                        const SrcnnOptions& opts, void* stream) {
    const auto s = static_cast<cudaStream_t>(stream);
    if (in.width != out.width || in.height != out.height || in.width < 1 || in.height < 1)
        throw Error(ErrorCode::InvalidArgument, "srcnn: input and output planes differ in size");
    check_grid(in.width, in.height);
    const int dev = current_device();
    const DeviceInfo& info = device_info(dev);
    const std::vector<Candidates> cands = candidates(model, opts, info.smem_optin);

    std::uint64_t hash = 1469598103934665603ull;
    for (const SrcnnLayer& l : model.layers) hash = hash_layer(hash, l);
    auto dm = device_model(model.layers.data(), 3, hash);

    Choice choice;
    std::size_t total = 0;
    for (const Candidates& c : cands) total += c.count();
    if (total == 1) {
        const Candidates& c = cands.front();
        choice.precision = c.precision;
        choice.fused = c.fused;
        if (!c.fused)
            for (int i = 0; i < 3; ++i) choice.layers[i] = c.per_layer[i].front();
    } else {
        const std::string key = tune_key(info, model, opts, in.width, in.height);
        bool found = false;
        {
            std::lock_guard<std::mutex> lock(engine().mu);
            auto it = engine().tuned.find(key);
            if (it != engine().tuned.end()) found = parse_choice(it->second, choice);
        }
        const std::string file = cache_file();
        if (!found && !file.empty()) {
            const auto m = read_cache_file(file);
            auto it = m.find(key);
            if (it != m.end() && parse_choice(it->second, choice)) {
                found = std::any_of(cands.begin(), cands.end(),
                                    [&](const Candidates& c) { return c.has(choice); });
            }
        }
        if (!found) {
            choice = autotune(cands, *dm, model, in, out, s);
            if (!file.empty()) write_cache_file(file, key, choice_string(choice));
        }
        std::lock_guard<std::mutex> lock(engine().mu);
        if (!found) ++engine().tunings;
        engine().tuned[key] = choice_string(choice);
    }
    run_choice(choice, *dm, model, in, out, s);
    SrcnnPlan plan;
    plan.fused = choice.fused;
    plan.precision = choice.precision;
    plan.layers = choice.fused ? std::array<SrcnnVariant, 3>{SrcnnVariant::FusedNetwork,
                                                             SrcnnVariant::FusedNetwork,
                                                             SrcnnVariant::FusedNetwork}
                               : choice.layers;
    return plan;
}

}  // namespace upres::cuda

namespace upres::srcnn::cuda {

void conv_layer(const float* in, float* out, int w, int h, const SrcnnLayer& layer, bool relu,
                SrcnnVariant variant, SrcnnPrecision precision, void* stream) {
    if (w < 1 || h < 1)
        throw Error(ErrorCode::InvalidArgument, "srcnn: conv_layer needs a non-empty plane");
    check_grid(w, h);
    const DeviceInfo& info = device_info(current_device());
    if (precision == SrcnnPrecision::Fastest)
        throw Error(ErrorCode::InvalidArgument,
                    "srcnn: conv_layer needs a concrete precision (fp32, tf32, fp16 or bf16)");
    const Unsupported u = check_layer(variant, precision, layer.out_channels, layer.in_channels,
                                      layer.kernel, info.smem_optin);
    if (!u.why.empty()) throw_layer(u, -1, layer);
    const std::uint64_t hash = hash_layer(0x5eed5eedull, layer);
    auto dm = device_model(&layer, 1, hash);
    const auto pl = static_cast<std::ptrdiff_t>(w) * h;
    launch_layer(variant, precision, dm->layers[0], Act{in, DType::F32, w, pl},
                 ActOut{out, DType::F32, w, pl}, w, h, relu, static_cast<cudaStream_t>(stream));
}

}  // namespace upres::srcnn::cuda
