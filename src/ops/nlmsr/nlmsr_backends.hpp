// Internal backend entry points of upres::nlm_fuse: the fusion of eq. (5) on luma planes
// already on the high-resolution grid (nlmsr.cpp does the validation, the colour, the
// interpolation, the iterations and the post-step). Backends do no validation.
#pragma once

#include <span>

#include <upres/nlmsr.hpp>

#include "core/span2d.hpp"
#include "ops/nlmsr/nlmsr_math.hpp"

namespace upres {

struct NlmsrPlan {
    int patch_r = 6;                            // patch radius
    int search_r = 2;                           // search radius
    double neg_inv = -1.0;                      // -1 / (2 sigma^2 patch^2)
    int block_x = 8, block_y = 8, block_z = 4;  // Shared variant
    // The cuda Fast variant's blocks and groups (whose order of sums sets the bits) are chosen
    // as for a plane of this many rows; 0: the plane's own. A band of a larger image
    // (nlm_fuse_tiled) gives the whole image's, so its rows get the whole call's sums.
    int layout_rows = 0;
};

}  // namespace upres

// Each: frames (U_t, W x H x 1 float, the 8-bit scale), estimate X (W x H), out Z (W x H).
namespace upres::ref {
void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan);
// The camera model's filter along x (axis 0) or y (axis 1): out(m) = nlmsr::psf_sample, in
// double, then nlmsr::psf_epilogue with `add` (data nullptr: none) and k. in, out and add:
// single-channel planes of one size; out may be add (in place), not in.
void nlm_psf(Span2D<const float> in, Span2D<float> out, const nlmsr::PsfTaps& taps, int axis,
             Span2D<const float> add = {}, float k = 1.0f);
}  // namespace upres::ref

namespace upres::cpu {
void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan, int threads);
// As ref::nlm_psf, in float.
void nlm_psf(Span2D<const float> in, Span2D<float> out, const nlmsr::PsfTaps& taps, int axis,
             int threads, Span2D<const float> add = {}, float k = 1.0f);
}  // namespace upres::cpu

namespace upres::cuda {
// Device spans; asynchronous on `stream`. Defined in CUDA builds only. Throws Error
// (InvalidArgument) when the Shared variant's tile does not fit in shared memory.
void nlm_fuse(std::span<const Span2D<const float>> frames, Span2D<const float> estimate,
              Span2D<float> out, const NlmsrPlan& plan, NlmsrVariant variant, void* stream);

// The element-wise steps of the device pipeline (nlmsr.cpp), asynchronous on `stream`; each the
// same float expression as the host loop it replaces.
// out = scale * v (gray frames' luma on the 8-bit scale).
template <class T>
void nlm_scale(Span2D<const T> in, Span2D<float> out, float scale, void* stream);
// out = in / d.
void nlm_divide(Span2D<const float> in, Span2D<float> out, float d, void* stream);
// out's channels = in's channels first .. first + out.channels - 1.
void nlm_get_channels(Span2D<const float> in, int first, Span2D<float> out, void* stream);
// out's channels first .. first + in.channels - 1 = in's channels.
void nlm_set_channels(Span2D<const float> in, Span2D<float> out, int first, void* stream);
// d = a + k d (k = -1: the residual a - d; k = 1: the correction added).
void nlm_axpy(Span2D<const float> a, Span2D<float> d, float k, void* stream);
// Immerkaer's sum over the interior rows (nlmsr::immerkaer_row, rows added in order on the
// host); synchronizes `stream`.
double nlm_immerkaer_sum(Span2D<const float> y, void* stream);
// As cpu::nlm_psf.
void nlm_psf(Span2D<const float> in, Span2D<float> out, const nlmsr::PsfTaps& taps, int axis,
             void* stream, Span2D<const float> add = {}, float k = 1.0f);
// Phase (a, b) of a plane on the output grid: gather: lr(q, p) = hr(s p + a, s q + b) (x, y);
// scatter: hr(s p + a, s q + b) = lr(q, p).
void nlm_phase(Span2D<const float> from, Span2D<float> to, int s, int a, int b, bool gather,
               void* stream);
}  // namespace upres::cuda
