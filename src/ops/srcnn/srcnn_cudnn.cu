// The SRCNN `cudnn` per-layer variant (srcnn_cudnn.hpp; docs/ops/srcnn.md, "CUDA engine and
// per-layer variants").
//
// libcudnn.so.9 is not linked: it is loaded with dlopen on first use and the handful of functions
// used here are resolved with dlsym into pointers typed from cudnn.h's prototypes. Per layer:
// a replicate-padded copy of the input (cuDNN only pads with zeros) is written to a workspace,
// then cudnnConvolutionBiasActivationForward (ReLU layers) or cudnnConvolutionForward +
// cudnnAddTensor (the last layer: its fused call supports IDENTITY only with one algorithm), fp32
// NCHW, the algorithm chosen once per shape, device and precision by
// cudnnFindConvolutionForwardAlgorithm (deterministic GEMM / direct algorithms only) and cached.
// Fp32 uses CUDNN_FMA_MATH (no TF32), Tf32 CUDNN_DEFAULT_MATH (TF32 tensor cores allowed).
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>

#include "core/cuda_check.hpp"
#include "ops/srcnn/srcnn_cuda.hpp"
#include "ops/srcnn/srcnn_cudnn.hpp"

#if UPRES_HAVE_CUDNN
#include <cudnn.h>
#include <dlfcn.h>
#endif

namespace upres::srcnn::cuda {

#if UPRES_HAVE_CUDNN
namespace {

// X-macro of the cuDNN functions used (name without the "cudnn" prefix).
// clang-format off
#define UPRES_CUDNN_FUNCTIONS(X)                                                           \
    X(GetVersion) X(GetErrorString) X(Create) X(Destroy) X(SetStream)                      \
    X(CreateTensorDescriptor) X(DestroyTensorDescriptor) X(SetTensor4dDescriptor)          \
    X(CreateFilterDescriptor) X(DestroyFilterDescriptor) X(SetFilter4dDescriptor)          \
    X(CreateConvolutionDescriptor) X(DestroyConvolutionDescriptor)                         \
    X(SetConvolution2dDescriptor) X(SetConvolutionMathType)                                \
    X(CreateActivationDescriptor) X(DestroyActivationDescriptor) X(SetActivationDescriptor) \
    X(FindConvolutionForwardAlgorithm) X(GetConvolutionForwardWorkspaceSize)               \
    X(ConvolutionBiasActivationForward) X(ConvolutionForward) X(AddTensor)
// clang-format on

struct Api {
#define UPRES_CUDNN_MEMBER(name) decltype(&cudnn##name) name = nullptr;
    UPRES_CUDNN_FUNCTIONS(UPRES_CUDNN_MEMBER)
#undef UPRES_CUDNN_MEMBER
    std::string unavailable;  // empty: loaded
};

Api load_api() {
    Api a;
    void* lib = nullptr;
    std::string why;
    for (const char* name : {"libcudnn.so.9", "libcudnn.so"}) {
        lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (lib) break;
        const char* e = dlerror();
        if (why.empty() && e) why = e;
    }
    if (!lib) {
        a.unavailable =
            "the cudnn variant is not available: cannot load libcudnn.so.9 (" + why +
            "); install cuDNN 9 or add the folder holding libcudnn.so.9 to LD_LIBRARY_PATH (e.g. "
            "PyTorch's site-packages/nvidia/cudnn/lib)";
        return a;
    }
#define UPRES_CUDNN_LOAD(name)                                                           \
    a.name = reinterpret_cast<decltype(a.name)>(dlsym(lib, "cudnn" #name));              \
    if (!a.name) {                                                                       \
        a.unavailable =                                                                  \
            "the cudnn variant is not available: the loaded libcudnn lacks cudnn" #name; \
        return a;                                                                        \
    }
    UPRES_CUDNN_FUNCTIONS(UPRES_CUDNN_LOAD)
#undef UPRES_CUDNN_LOAD
    const std::size_t v = a.GetVersion();
    if (v / 10000 != CUDNN_MAJOR)
        a.unavailable = "the cudnn variant is not available: the loaded libcudnn is version " +
                        std::to_string(v) + ", upres was built for cuDNN " +
                        std::to_string(CUDNN_MAJOR);
    // The library stays loaded for the life of the process (never dlclose'd).
    return a;
}

const Api& api() {
    static const Api a = load_api();
    return a;
}

void check(cudnnStatus_t st, const char* what) {
    if (st != CUDNN_STATUS_SUCCESS)
        throw Error(ErrorCode::CudaError, std::string("srcnn: cuDNN ") + what +
                                              " failed: " + api().GetErrorString(st) + " (" +
                                              std::to_string(static_cast<int>(st)) + ")");
}

// Replicate-padded copy: out (c planes of (w + 2r) x (h + 2r), packed) from in (c planes of
// w x h, row / plane strides in elements).
__global__ void pad_replicate_kernel(const float* __restrict__ in, std::ptrdiff_t row,
                                     std::ptrdiff_t plane, float* __restrict__ out, int w, int h,
                                     int r, int c) {
    const std::int64_t pw = w + 2 * r, ph = h + 2 * r;
    const std::int64_t n = pw * ph * c;
    for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
         i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
        const std::int64_t x = i % pw, y = (i / pw) % ph, ch = i / (pw * ph);
        const std::int64_t sx = min(max(x - r, std::int64_t{0}), static_cast<std::int64_t>(w - 1));
        const std::int64_t sy = min(max(y - r, std::int64_t{0}), static_cast<std::int64_t>(h - 1));
        out[i] = in[ch * plane + sy * row + sx];
    }
}

// Descriptors and algorithm of one shape at one precision on one device.
struct Plan {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, b = nullptr;
    cudnnFilterDescriptor_t f = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnActivationDescriptor_t relu = nullptr;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    std::size_t ws_bytes = 0;
};

// (device, w, h, cin, cout, k, precision)
using PlanKey = std::tuple<int, int, int, int, int, int, int>;

// Process-wide state, one mutex. Freed at exit (errors ignored).
struct State {
    std::mutex mu;
    std::map<std::pair<int, cudaStream_t>, cudnnHandle_t> handles;
    std::map<std::pair<int, cudaStream_t>, DeviceScratch> workspaces;
    std::map<PlanKey, Plan> plans;

    ~State() { release(); }
    void release() noexcept {
        std::lock_guard<std::mutex> lock(mu);
        if (plans.empty() && handles.empty() && workspaces.empty()) return;
        const Api& a = api();  // loaded: something was created with it
        for (auto& [key, p] : plans) {
            a.DestroyTensorDescriptor(p.x);
            a.DestroyTensorDescriptor(p.y);
            a.DestroyTensorDescriptor(p.b);
            a.DestroyFilterDescriptor(p.f);
            a.DestroyConvolutionDescriptor(p.conv);
            a.DestroyActivationDescriptor(p.relu);
        }
        plans.clear();
        for (auto& [key, h] : handles) a.Destroy(h);
        handles.clear();
        for (auto& [key, ws] : workspaces) ws.release();
        workspaces.clear();
    }
};
State& state() {
    static State s;
    return s;
}

// Caller holds state().mu.
cudnnHandle_t handle(State& st, int dev, cudaStream_t s) {
    auto it = st.handles.find({dev, s});
    if (it != st.handles.end()) return it->second;
    cudnnHandle_t h = nullptr;
    check(api().Create(&h), "cudnnCreate");
    const cudnnStatus_t e = api().SetStream(h, s);
    if (e != CUDNN_STATUS_SUCCESS) {
        api().Destroy(h);
        check(e, "cudnnSetStream");
    }
    st.handles.emplace(std::pair<int, cudaStream_t>{dev, s}, h);
    return h;
}

// Grow-only; caller holds state().mu.
void* workspace(State& st, int dev, cudaStream_t s, std::size_t bytes) {
    return st.workspaces[{dev, s}].grow(bytes, s, "the cudnn variant's padded input and workspace");
}

// Caller holds state().mu.
const Plan& plan(State& st, cudnnHandle_t h, int dev, int w, int hgt, int cin, int cout, int k,
                 SrcnnPrecision p) {
    const PlanKey key{dev, w, hgt, cin, cout, k, static_cast<int>(p)};
    auto it = st.plans.find(key);
    if (it != st.plans.end()) return it->second;
    const Api& a = api();
    Plan pl;
    const int r = k / 2;
    // Created one by one so that a failure leaves only null or valid descriptors to destroy.
    struct Guard {
        Plan& pl;
        bool keep = false;
        ~Guard() {
            if (keep) return;
            const Api& a = api();
            if (pl.x) a.DestroyTensorDescriptor(pl.x);
            if (pl.y) a.DestroyTensorDescriptor(pl.y);
            if (pl.b) a.DestroyTensorDescriptor(pl.b);
            if (pl.f) a.DestroyFilterDescriptor(pl.f);
            if (pl.conv) a.DestroyConvolutionDescriptor(pl.conv);
            if (pl.relu) a.DestroyActivationDescriptor(pl.relu);
        }
    } guard{pl};
    check(a.CreateTensorDescriptor(&pl.x), "cudnnCreateTensorDescriptor");
    check(a.CreateTensorDescriptor(&pl.y), "cudnnCreateTensorDescriptor");
    check(a.CreateTensorDescriptor(&pl.b), "cudnnCreateTensorDescriptor");
    check(a.CreateFilterDescriptor(&pl.f), "cudnnCreateFilterDescriptor");
    check(a.CreateConvolutionDescriptor(&pl.conv), "cudnnCreateConvolutionDescriptor");
    check(a.CreateActivationDescriptor(&pl.relu), "cudnnCreateActivationDescriptor");
    check(a.SetTensor4dDescriptor(pl.x, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, cin, hgt + 2 * r,
                                  w + 2 * r),
          "cudnnSetTensor4dDescriptor (input)");
    check(a.SetTensor4dDescriptor(pl.y, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, cout, hgt, w),
          "cudnnSetTensor4dDescriptor (output)");
    check(a.SetTensor4dDescriptor(pl.b, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, 1, cout, 1, 1),
          "cudnnSetTensor4dDescriptor (bias)");
    check(a.SetFilter4dDescriptor(pl.f, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, cout, cin, k, k),
          "cudnnSetFilter4dDescriptor");
    check(a.SetConvolution2dDescriptor(pl.conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION,
                                       CUDNN_DATA_FLOAT),
          "cudnnSetConvolution2dDescriptor");
    const cudnnMathType_t math =
        p == SrcnnPrecision::Fp32 ? CUDNN_FMA_MATH : CUDNN_DEFAULT_MATH;  // Tf32: TF32 allowed
    check(a.SetConvolutionMathType(pl.conv, math), "cudnnSetConvolutionMathType");
    check(a.SetActivationDescriptor(pl.relu, CUDNN_ACTIVATION_RELU, CUDNN_NOT_PROPAGATE_NAN, 0.0),
          "cudnnSetActivationDescriptor");

    cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
    int n = 0;
    check(a.FindConvolutionForwardAlgorithm(h, pl.x, pl.f, pl.conv, pl.y,
                                            CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &n, perf),
          "cudnnFindConvolutionForwardAlgorithm");
    // Fastest first; deterministic only (run-to-run identical results, as every variant here).
    bool found = false;
    for (int i = 0; i < n && !found; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].determinism != CUDNN_DETERMINISTIC)
            continue;
        if (p == SrcnnPrecision::Fp32 && perf[i].mathType != CUDNN_FMA_MATH &&
            perf[i].mathType != CUDNN_DEFAULT_MATH)
            continue;
        // GEMM and direct algorithms only: FFT and Winograd round differently (FFT measured
        // 2.3e-4 of the range on a 7x3 plane, over fp32's 1e-4 tolerance).
        if (perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM &&
            perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM &&
            perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_GEMM &&
            perf[i].algo != CUDNN_CONVOLUTION_FWD_ALGO_DIRECT)
            continue;
        pl.algo = perf[i].algo;
        found = true;
    }
    if (!found) pl.algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    check(a.GetConvolutionForwardWorkspaceSize(h, pl.x, pl.f, pl.conv, pl.y, pl.algo, &pl.ws_bytes),
          "cudnnGetConvolutionForwardWorkspaceSize");
    guard.keep = true;
    return st.plans.emplace(key, pl).first->second;
}

}  // namespace

const std::string& cudnn_unavailable_reason() { return api().unavailable; }

bool cudnn_supports(SrcnnPrecision p) noexcept {
    return p == SrcnnPrecision::Fp32 || p == SrcnnPrecision::Tf32;
}

void cudnn_conv_layer(const float* in, std::ptrdiff_t in_row, std::ptrdiff_t in_plane, float* out,
                      std::ptrdiff_t out_row, std::ptrdiff_t out_plane, int w, int h, int cin,
                      int cout, int k, const float* weights, const float* bias, bool relu,
                      SrcnnPrecision p, void* stream) {
    if (!cudnn_unavailable_reason().empty())
        throw Error(ErrorCode::BackendUnavailable, "srcnn: " + cudnn_unavailable_reason());
    if (!cudnn_supports(p))
        throw Error(ErrorCode::InvalidArgument,
                    std::string("srcnn: variant 'cudnn' runs only at precision fp32 or tf32 "
                                "(asked: ") +
                        to_string(p) + ")");
    const auto s = static_cast<cudaStream_t>(stream);
    int dev = 0;
    UPRES_CUDA_CHECK(cudaGetDevice(&dev));
    const Api& a = api();
    State& st = state();
    std::lock_guard<std::mutex> lock(st.mu);
    const cudnnHandle_t hd = handle(st, dev, s);
    const Plan& pl = plan(st, hd, dev, w, h, cin, cout, k, p);

    const int r = k / 2;
    const std::size_t px = static_cast<std::size_t>(w) * h;
    const bool pad =
        r > 0 || in_row != w || (cin > 1 && in_plane != static_cast<std::ptrdiff_t>(px));
    const bool tmp_out = out_row != w || (cout > 1 && out_plane != static_cast<std::ptrdiff_t>(px));
    auto align = [](std::size_t b) { return (b + 255) & ~std::size_t{255}; };
    const std::size_t pad_bytes =
        pad ? align(static_cast<std::size_t>(cin) * (w + 2 * r) * (h + 2 * r) * sizeof(float)) : 0;
    const std::size_t out_bytes = tmp_out ? align(static_cast<std::size_t>(cout) * px * 4) : 0;
    auto* base = static_cast<unsigned char*>(
        workspace(st, dev, s, std::max<std::size_t>(pad_bytes + out_bytes + pl.ws_bytes, 256)));
    const float* x = in;
    if (pad) {
        auto* xp = reinterpret_cast<float*>(base);
        const std::int64_t n = static_cast<std::int64_t>(cin) * (w + 2 * r) * (h + 2 * r);
        const int blocks = static_cast<int>(std::min<std::int64_t>((n + 255) / 256, 65536));
        pad_replicate_kernel<<<blocks, 256, 0, s>>>(in, in_row, in_plane, xp, w, h, r, cin);
        UPRES_CUDA_CHECK_LAUNCH();
        x = xp;
    }
    float* y = tmp_out ? reinterpret_cast<float*>(base + pad_bytes) : out;
    void* ws = pl.ws_bytes ? base + pad_bytes + out_bytes : nullptr;
    check(a.SetStream(hd, s), "cudnnSetStream");
    const float one = 1.f, zero = 0.f;
    if (relu) {
        check(a.ConvolutionBiasActivationForward(hd, &one, pl.x, x, pl.f, weights, pl.conv, pl.algo,
                                                 ws, pl.ws_bytes, &zero, pl.y, y, pl.b, bias,
                                                 pl.relu, pl.y, y),
              "cudnnConvolutionBiasActivationForward");
    } else {
        check(a.ConvolutionForward(hd, &one, pl.x, x, pl.f, weights, pl.conv, pl.algo, ws,
                                   pl.ws_bytes, &zero, pl.y, y),
              "cudnnConvolutionForward");
        check(a.AddTensor(hd, &one, pl.b, bias, &one, pl.y, y), "cudnnAddTensor");
    }
    if (tmp_out)
        for (int c = 0; c < cout; ++c)
            UPRES_CUDA_CHECK(cudaMemcpy2DAsync(out + c * out_plane, out_row * sizeof(float),
                                               y + c * px, w * sizeof(float), w * sizeof(float), h,
                                               cudaMemcpyDeviceToDevice, s));
}

void cudnn_release() noexcept { state().release(); }

#else  // !UPRES_HAVE_CUDNN

const std::string& cudnn_unavailable_reason() {
    static const std::string why =
        "the cudnn variant is not available: this build of upres has no cuDNN (configure with "
        "cuDNN's headers installed, UPRES_WITH_CUDNN)";
    return why;
}
bool cudnn_supports(SrcnnPrecision) noexcept { return false; }
void cudnn_conv_layer(const float*, std::ptrdiff_t, std::ptrdiff_t, float*, std::ptrdiff_t,
                      std::ptrdiff_t, int, int, int, int, int, const float*, const float*, bool,
                      SrcnnPrecision, void*) {
    throw Error(ErrorCode::BackendUnavailable, "srcnn: " + cudnn_unavailable_reason());
}
void cudnn_release() noexcept {}

#endif

}  // namespace upres::srcnn::cuda
