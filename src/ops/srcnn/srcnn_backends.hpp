// SRCNN backends (internal). srcnn.cpp validates arguments, resolves the backend and calls these.
// Planes are single-channel float spans: host memory for the reference and CPU backends, device
// memory for the CUDA backend. Borders: replication (clamp) at every layer.
#pragma once

#include <upres/srcnn.hpp>
#include "core/span2d.hpp"

namespace upres {

// The network on one plane, the operation's backends (srcnn_forward):
// Double-precision direct loops (srcnn_ref.cpp). The oracle for every other backend.
namespace ref {
void srcnn_forward(Span2D<const float> in, Span2D<float> out, const SrcnnModel& model);
}
// Optimized CPU (srcnn_cpu.cpp, OpenMP + SIMD), fp32. threads: 0 = OpenMP default.
namespace cpu {
void srcnn_forward(Span2D<const float> in, Span2D<float> out, const SrcnnModel& model, int threads);
}
// The CUDA engine (srcnn_cuda.cu; CUDA builds only): uploads/caches the model's weights per
// precision, picks the variants (Auto: autotuned per shape, GPU and precision, cached) and runs
// them on `stream`.
namespace cuda {
SrcnnPlan srcnn_forward(Span2D<const float> in, Span2D<float> out, const SrcnnModel& model,
                        const SrcnnOptions& opts, void* stream);
}

}  // namespace upres

namespace upres::srcnn {

// One layer of the reference on planar CHW buffers (tests and golden data): in has
// layer.in_channels planes of w x h, out layer.out_channels planes; ReLU when relu is true.
void conv_reference(const float* in, float* out, int w, int h, const SrcnnLayer& layer, bool relu);

}  // namespace upres::srcnn

#if UPRES_HAVE_CUDA
namespace upres::srcnn::cuda {

// One layer with a forced variant, for the per-layer benchmark (the paper's Table II) and tests.
// in: layer.in_channels planes (CHW, plane stride w*h floats) on the device; out likewise.
void conv_layer(const float* in, float* out, int w, int h, const SrcnnLayer& layer, bool relu,
                SrcnnVariant variant, SrcnnPrecision precision, void* stream);

// Pipeline helpers (srcnn_pipeline_cuda.cu), asynchronous on `stream`:
// dst = scale * src[channel c] (dst single-channel, src's size).
void extract_plane(Span2D<const float> src, int c, float scale, Span2D<float> dst, void* stream);
// dst[channel c] = scale * clamp(src, 0, 1) (src single-channel, dst's size); and, when
// clamp_c >= 0, dst[channel clamp_c] clamped to [0, clamp_hi] (alpha).
void insert_plane(Span2D<const float> src, float scale, Span2D<float> dst, int c, int clamp_c,
                  float clamp_hi, void* stream);

// The whole network in one kernel on tensor cores (srcnn_fused_cuda.cu).
struct FusedWeights;  // opaque, device memory, packed for one precision
// True if the fused kernel can run this model shape at this precision (Fastest never reaches
// here: the engine resolves it first).
bool fused_supports(const SrcnnModel& model, SrcnnPrecision precision);
// Packs and uploads; released by fused_release.
FusedWeights* fused_prepare(const SrcnnModel& model, SrcnnPrecision precision, void* stream);
void fused_release(FusedWeights* w) noexcept;
void fused_forward(const FusedWeights* w, Span2D<const float> in, Span2D<float> out, void* stream);

}  // namespace upres::srcnn::cuda
#endif
