// INTERFACE READY
//
// Internal backend entry points of upres::warp. warp.cpp validates everything once and builds a
// WarpPlan; backends do no validation. Composite operations may call these directly.
//
// The plan describes the OUTPUT -> INPUT map (see warp_math.hpp for the formulas and the
// border rule). For Interp::BSpline the source span holds the B-spline COEFFICIENTS (float),
// computed by the prefilter backend of the same backend (src/ops/bspline/bspline_backends.hpp)
// with border tap_border(plan.border); for Border::Nearest the coefficients are those of the
// image padded by plan.pad = kBSplineNearestPad edge samples on each side, prefiltered with
// Mirror (scipy's prepadding), and coordinates are shifted by plan.pad. For the other
// interpolations the source span is the image itself and plan.pad is 0.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/tiled.hpp>
#include <upres/warp.hpp>

#include "core/span2d.hpp"
#include "ops/warp/warp_math.hpp"

namespace upres {

// The CUDA warp's kernel choice, for tests and benchmarks: Policy (what upres::warp runs), or one
// kernel forced first: PerOutput (warp_kernel, the exact border rule per output), Tiled (the
// tile's source box in shared memory), Separable (axis-aligned maps), or NoTiled (the policy's
// choice with the tiled kernel left out).
enum class WarpScheduleOverride : std::uint8_t { Policy, PerOutput, Tiled, Separable, NoTiled };

// Trivially copyable (passed by value to CUDA kernels).
struct WarpPlan {
    Transform::Kind kind = Transform::Kind::Affine;
    // Affine / Resize: u = m0 x + m1 y + m2, v = m3 x + m4 y + m5 (output -> input, before the
    // pad shift). Resize: m = {sx, 0, 0.5 sx - 0.5, 0, sy, 0.5 sy - 0.5} with
    // sx = src.width / dst.width, sy = src.height / dst.height (the ORIGINAL src size).
    // Perspective: the 9 homography coefficients, row-major.
    double m[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    // Remap: field(x, y) = (u, v); Flow: field(x, y) = (dx, dy), (u, v) = (x + dx, y + dy).
    // 2 channels, dst's size, in the same memory space as the images. Unused otherwise.
    Span2D<const float> field{nullptr, 0, 0, 0, 0};
    // CUDA, Remap / Flow: a device word (~0 before the launch) into which every output whose
    // field entry is not finite reports a code by atomicMin (report_nonfinite in
    // warp_cuda_util.cuh): the smallest, i.e. the first such value in row-major order, wins.
    // nullptr: no check (host fields are scanned before the warp; check_field = false).
    unsigned long long* field_bad = nullptr;
    Interp interp = Interp::BSpline;
    Border border = Border::Mirror;
    float fill = 0.0f;      // Border::Constant (and non-finite coordinates)
    float cubic_a = -0.5f;  // Interp::Cubic
    // Resize only, linear/cubic only: antialiased down-scaling along each axis whose scale
    // (dst / src) is below 1 (warp_math.hpp, MATLAB imresize). Other axes interpolate normally.
    bool antialias = false;
    bool fast_texture = false;  // CUDA only (warp.cpp rejects it elsewhere)
    int pad = 0;                // coordinates in the source span are u + pad, v + pad
    // CUDA, tests and benchmarks: the kernel to force instead of the policy's choice
    // (warp_schedule.hpp). cuda::warp throws Error(InvalidArgument) when the forced kernel cannot
    // run the plan, so a benchmark never measures another kernel than the one it names.
    WarpScheduleOverride schedule = WarpScheduleOverride::Policy;
    // CUDA bands of an axis-aligned map (warp_tiled, the separable kernel only): dst's row 0 is
    // output row out_row0, and src's row 0 is row src_row0 of a source span of src_rows rows
    // (0: src.height). The other kernels take whole images (0, 0, 0).
    int out_row0 = 0, src_row0 = 0, src_rows = 0;
    // CUDA boxes of the point maps (warp_tiled): the kernels compute the outputs [box_x0,
    // dst.width) x [box_y0, dst.height) only, box_x0 and box_y0 multiples of kCudaBoxAlign (every
    // kernel's output tile divides it, so each output meets the whole call's arithmetic). src and
    // dst are then the whole source span and output, their data pointers offset so that
    // whole-image coordinates address the box buffers (only the samples the box reads and its
    // outputs are touched); dst.width and dst.height are the box's end. out_w x out_h: the whole
    // output, for the host's kernel choices (0: dst's size, the whole call).
    int box_x0 = 0, box_y0 = 0, out_w = 0, out_h = 0;
};
inline constexpr int kCudaBoxAlign = 64;
// A box of outputs grown to the cuda kernels' whole tiles: its start down to multiples of
// kCudaBoxAlign, its end up to them or to the output's side.
inline Box cuda_tile_box(Box b, int out_width, int out_height) {
    constexpr int a = kCudaBoxAlign;
    return {b.x0 / a * a, b.y0 / a * a, std::min(out_width, (b.x1 + a - 1) / a * a),
            std::min(out_height, (b.y1 + a - 1) / a * a)};
}

// warp_tiled's cuda backend for the point maps (warp_box.cpp computes, warp_tiled_cuda.cu runs):
// the span samples the kernels read for a box of outputs, the coordinates' range widened by
// `margin` samples before the border folds it (the kernels' tile boxes and the recursive fused
// kernel's halo read around the taps). coefficients: the box is prefiltered on its own, so it
// grows to whole units of the prefilter's kernel (unit_x x unit_y, the whole span's plan) and
// two more at each end that is not the span's (their coefficients are not the whole call's, those
// they shield are); unit_x == 0: the whole span (the prefilter does not cut it). The first column
// is a multiple of 4 (whole-image coordinates then keep the alignment of the kernels' vector
// loads). Empty span: no sample is read (every output is the fill).
// tile: the kernels compute whole tiles of this many outputs (the whole call's too, at the
// output's last row and column): the affine and perspective maps' coordinates are taken over the
// box grown to whole tiles.
// unit_y_bound: unit_y is only a bound of the prefilter's row unit (the device's is not known:
// PrefilterBandPlan::unit_is_bound); the box then takes 3 of it beyond the samples at each cut,
// which holds the whole units and their shields of any unit up to it.
struct CudaBoxUnits {
    int margin = 0;
    int tile = 0;
    bool coefficients = false;
    int unit_x = 0, unit_y = 0;
    bool unit_y_bound = false;
};
struct CudaPointBox {
    Box span;   // span coordinates (the image padded by WarpPlan::pad)
    Box image;  // the source pixels behind it (edge replication of the padded span)
};
CudaPointBox cuda_point_box(int src_width, int src_height, int out_width, int out_height,
                            const Transform& t, const WarpOptions& opts, Box out,
                            const CudaBoxUnits& units);

// warp.cpp: the option checks of upres::warp (Error(InvalidArgument)) and its plan for a source
// of sw x sh and an output of dw x dh (for warp_tiled, which shares both).
void check_warp_options(const WarpOptions& o, const Transform& t);
WarpPlan make_warp_plan(const Transform& t, const WarpOptions& o, int sw, int sh, int dw, int dh);
// The transform's checks for an output of dw x dh in `loc` memory (matrices, the field's size,
// memory and, with field_values, a host field's values).
void check_transform(const Transform& t, int dw, int dh, Location loc, bool field_values,
                     const Context& ctx);

}  // namespace upres

// Each backend: src holds pixels of dst's type (nearest, linear, cubic) or float B-spline
// coefficients (bspline); dst's size is the output size; channels equal.
namespace upres::ref {
// Double precision, direct formulae (sample_point<double>), slow on purpose.
void warp(Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst, const WarpPlan& plan);
void warp(Span2D<const std::uint16_t> src, Span2D<std::uint16_t> dst, const WarpPlan& plan);
void warp(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan);
void warp(Span2D<const float> coeffs, Span2D<std::uint8_t> dst, const WarpPlan& plan);
void warp(Span2D<const float> coeffs, Span2D<std::uint16_t> dst, const WarpPlan& plan);
}  // namespace upres::ref

namespace upres::cpu {
// OpenMP over output rows, float math (coordinates in double). threads: 0 = OpenMP default.
void warp(Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst, const WarpPlan& plan,
          int threads);
void warp(Span2D<const std::uint16_t> src, Span2D<std::uint16_t> dst, const WarpPlan& plan,
          int threads);
void warp(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan, int threads);
void warp(Span2D<const float> coeffs, Span2D<std::uint8_t> dst, const WarpPlan& plan, int threads);
void warp(Span2D<const float> coeffs, Span2D<std::uint16_t> dst, const WarpPlan& plan, int threads);

// Tiled execution (warp_tiled.cpp), Resize plans only: output rows [y0, y0 + dst.height) of the
// whole output, from rows [r0, r0 + src.height) of the whole call's span_h-row source span
// (pixels, or coefficients padded by plan.pad); the span's full width. The same tap tables and
// per-row arithmetic as the whole call: the rows come out bit-identical.
template <class S, class D>
void warp_resize_band(Span2D<const S> src, Span2D<D> dst, const WarpPlan& plan, int span_h, int y0,
                      int r0, int threads);
// Tiled execution (warp_box.cpp), point maps (Affine, Perspective, Remap, Flow): outputs
// [ox, ox + dst.width) x [oy, oy + dst.height) of the whole output (plan.field: that box of the
// field) from samples [sx0, sx0 + src.width) x [sy0, sy0 + src.height) of the whole call's
// span_w x span_h source span, which must hold every sample those outputs read (the whole
// call's indices address them) and be followed by kBoxSlack readable elements (a 3-channel
// pixel is read as 4 samples). The whole call's per-pixel arithmetic: bit-identical pixels.
inline constexpr int kBoxSlack = 64;
template <class S, class D>
void warp_box(Span2D<const S> src, int sx0, int sy0, int span_w, int span_h, Span2D<D> dst, int ox,
              int oy, const WarpPlan& plan, int threads);
// The span rows that the output rows of a Resize plan read: rows(a, b) is [first, last] for
// output rows [a, b) (a sub-range of the constructor's [y0, y1)); first > last when no output
// row reads any (Border::Constant, every row outside). One pass over the whole call's tap tables
// builds each row's reach: the tiled calls ask for the rows of dozens of band heights while
// choosing one, and building each band's tables again took 5.6 to 8.6 ms of a 16000^2 x2 zoom's
// 51 ms on an H200 host.
class ResizeRowReach {
  public:
    ResizeRowReach(const WarpPlan& plan, int span_h, int y0, int y1);
    std::pair<int, int> rows(int a, int b) const;

  private:
    int y0_ = 0, span_h_ = 0;
    std::vector<int> lo_, hi_;  // per output row; lo > hi: it reads none
};
}  // namespace upres::cpu

namespace upres::cuda {
// DEVICE spans (src, dst and plan.field). Asynchronous on `stream` (a cudaStream_t; nullptr =
// default stream). plan.fast_texture selects the hardware-texture mode. Throws
// upres::Error(CudaError) on launch failure.
void warp(Span2D<const std::uint8_t> src, Span2D<std::uint8_t> dst, const WarpPlan& plan,
          void* stream);
void warp(Span2D<const std::uint16_t> src, Span2D<std::uint16_t> dst, const WarpPlan& plan,
          void* stream);
void warp(Span2D<const float> src, Span2D<float> dst, const WarpPlan& plan, void* stream);
void warp(Span2D<const float> coeffs, Span2D<std::uint8_t> dst, const WarpPlan& plan, void* stream);
void warp(Span2D<const float> coeffs, Span2D<std::uint16_t> dst, const WarpPlan& plan,
          void* stream);
// warp_tiled on the devices named (at least one, existing) for an axis-aligned plan (Resize, no
// antialias) of the whole source (warp_tiled_cuda.cu): bands of output rows through pinned host
// buffers, spread over the devices; prefilter: the B-spline coefficients are computed here with
// po (else the source holds them, or samples). Arguments checked by warp_tiled. Leaves another
// device current (the caller's DeviceScope restores it). Error(OutOfMemory) when a band does
// not fit.
TiledStats warp_resize_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                             const WarpPlan& plan, bool prefilter, const PrefilterOptions& po,
                             const TiledOptions& to, const std::vector<int>& devices);
// warp_tiled on the devices named for a point map (Affine, Perspective, Remap, Flow; no
// fast_texture, no Wrap border with the prefilter) of the whole source (warp_tiled_cuda.cu):
// bands of output rows in boxes, bit-identical to upres::warp on the cuda backend, the bands
// spread over the devices. Arguments checked by warp_tiled (the field's values by the boxes).
TiledStats warp_points_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                             const Transform& t, const WarpOptions& opts, const TiledOptions& to,
                             const Context& ctx, const std::vector<int>& devices);
// Test hook: false makes warp_points_tiled keep one box window for all columns of boxes (what it
// does when a window per column does not fit the devices' memory); true (the default) restores
// the choice by memory.
void set_point_box_windows(bool per_column);
// warp_source_box's units on the cuda backend for a source of sw x sh x c, without a device
// (the client of upres.dask may have none): the boxes hold what any device's run reads (the
// prefilter's box whether or not the device runs the recursive fused kernel, which reads less;
// the streaming prefilter's largest row unit).
CudaBoxUnits point_units_any(int sw, int sh, int c, const Transform& t, const WarpOptions& opts);
// upres::warp_box on the cuda backend (warp_tiled_cuda.cu), on ctx.device (-1: the current one)
// and ctx.cuda_stream (null: a stream of its own), host memory in and out, synchronous: the
// outputs in `out` computed as warp_points_tiled computes them (the box grown to the kernels'
// whole tiles, the field of a remap or flow padded onto them), from the source pixels the
// device's run reads, which `in` must hold. Arguments checked by warp_box.cpp.
void warp_box(ImageView<const std::uint8_t> src, Box in, int sw, int sh,
              ImageView<std::uint8_t> dst, Box out, int ow, int oh, const Transform& t,
              const WarpOptions& opts, const Context& ctx);
void warp_box(ImageView<const std::uint16_t> src, Box in, int sw, int sh,
              ImageView<std::uint16_t> dst, Box out, int ow, int oh, const Transform& t,
              const WarpOptions& opts, const Context& ctx);
void warp_box(ImageView<const float> src, Box in, int sw, int sh, ImageView<float> dst, Box out,
              int ow, int oh, const Transform& t, const WarpOptions& opts, const Context& ctx);
}  // namespace upres::cuda
