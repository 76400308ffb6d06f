// Internal helpers of the SRCNN CUDA engine (srcnn_cuda.cu) for tests and benchmarks. The
// engine's entry points (forward, conv_layer, fused_*) are declared in srcnn_backends.hpp.
#pragma once

#include <array>
#include <cstddef>
#include <string>

#include <upres/srcnn.hpp>

namespace upres::srcnn::cuda {

// Precisions that SrcnnPrecision::Fastest may resolve to: those whose PSNR loss on the
// evaluation set is documented (docs/ops/srcnn.md) to be at most 0.01 dB. The one place to
// change when the training measurements say otherwise.
// Measured (tools/srcnn/precision_loss.py, H200): fp16 loses at most 0.001 dB on the
// mean of every scale, bf16 up to 0.040 dB (x2): only fp16 qualifies.
inline constexpr std::array<SrcnnPrecision, 1> kFastestPrecisions{SrcnnPrecision::Fp16};

// Largest in_channels * k * k the RegisteredPixel variant holds in registers.
inline constexpr int kRegisteredPixelMaxInputs = 64;

// Autotuner introspection: how many tunings ran in this process (a cache hit runs none), and
// dropping the in-memory cache (the file cache, when UPRES_CACHE_DIR is set, is re-read on the
// next tuning lookup).
int autotune_count() noexcept;
void autotune_forget() noexcept;

// "fp16 fused" / "fp32 direct,tensor-core,shared-kernel-patch": the form plans take in the
// autotune cache file.
std::string plan_string(const SrcnnPlan& plan);

// A grow-only device buffer (the engine keeps one per device and stream for its intermediates,
// the cudnn variant one for its padded input). grow() returns a buffer of at least `bytes`;
// growing first waits for `stream` (work queued on the old buffer) and frees it. A failed
// allocation is Error(OutOfMemory) naming the size and `what`.
struct DeviceScratch {
    void* p = nullptr;
    std::size_t bytes = 0;
    void* grow(std::size_t need, void* stream, const char* what);
    void release() noexcept;  // errors ignored (also used at exit)
};

// Frees every cached device model and workspace (the engine also frees them at exit).
void release_caches() noexcept;

}  // namespace upres::srcnn::cuda
