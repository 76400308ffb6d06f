// Tiled execution: operations on images larger than memory, band by band of rows, with results
// bit-identical to the whole-image call.
//
// The image comes from a RowSource and goes to a RowSink (upres/io.hpp has TIFF ones: tiled or
// stripped TIFF and BigTIFF in, tiled (Big)TIFF out). The output is computed in bands of full
// rows; each band reads the input rows its outputs need plus the operation's halo (for the
// exact B-spline prefilter: warm-up rows at both cut ends, src/ops/bspline/bspline_backends.hpp).
// Host memory is bounded by TiledOptions::max_memory whatever the image's height; sides may go
// up to kMaxTiledDimension (the whole-image calls stop at kMaxDimension and kMaxPixels).
// docs/scale.md has the design, the measured memory and speed, and what is not tiled yet.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/nlmsr.hpp>
#include <upres/rows.hpp>
#include <upres/stereo.hpp>
#include <upres/upscale.hpp>
#include <upres/warp.hpp>

namespace upres {

struct TiledOptions {
    // Host memory for the bands (input rows, their float staging, output rows), in bytes. The
    // band height follows from it; Error(InvalidArgument) if even the smallest band (8 output
    // rows and their halo) needs more. 0: automatic, 64 MiB or what bands reading 256 rows of
    // their own need, whichever is more (bands span the full width: memory grows with the width,
    // not with the height).
    std::size_t max_memory = 0;
    // Output rows per band, at most the output's height; 0: as many as max_memory allows.
    // Smaller bands re-read more halo.
    int band_rows = 0;
    // With band_rows = 0: at most max_band_rows rows per band (0: no cap), and a multiple of
    // band_align rows when the budget allows one (a tiled TIFF sink then checkpoints after every
    // band: a resumed job recomputes at most one band).
    int max_band_rows = 0;
    int band_align = 1;
    // upscale_tiled's srcnn tiles and warp_tiled's point maps on the cuda backend: output columns
    // per tile (0: 2048, or the band's height if taller; wide tiles keep the halo a small part of
    // each). The other operations choose their own tiles.
    int tile_columns = 0;
    // Output rows [first_row, last_row) only (last_row 0: the output's end). Resuming starts at
    // first_row (the sink has the rows before); a task of a cluster computes one range (its
    // source rows from warp_tiled_source_rows: a ViewRowSource of those rows serves it).
    int first_row = 0;
    int last_row = 0;
    // The cuda backend (warp_tiled's zoom / resize, upscale_tiled, stereo_disparity_tiled): the
    // GPUs the bands are spread over, each fed by a thread of its own (empty: ctx.device, or the
    // current device). The output is the same bytes on any number of them. Non-empty with
    // another backend: Error(InvalidArgument).
    std::vector<int> devices;
    // Called after each band with the output rows done so far and the total. An exception it
    // throws stops the run (the sink is then not committed) and reaches the caller.
    std::function<void(std::int64_t done, std::int64_t total)> progress;
};

struct TiledStats {
    int bands = 0;
    int band_rows = 0;             // output rows per band (the last may have fewer)
    std::int64_t rows_read = 0;    // input rows read, halos included (2-D tiles: boxes' rows)
    std::int64_t pixels_read = 0;  // 2-D tiles: input pixels read, halos included
    std::size_t buffer_bytes = 0;  // the bands' buffers (not a source's own, e.g. a TIFF cache)
    std::size_t device_bytes = 0;  // cuda backend: the bands' device buffers
    // cuda backend: seconds spent reading the source, writing the sink and, in the writing
    // thread, waiting for the devices (the slowest of the three stages bounds the run).
    double read_seconds = 0, write_seconds = 0, wait_seconds = 0;
};

// upres::warp over a RowSource into a RowSink of out_width x out_height (the source's type and
// channels). Transforms: Resize (zoom), in bands of full rows; Affine (rotations), Perspective,
// Remap and Flow (t.field: the whole output's field, in host memory), in bands of square
// tiles each computed from its source box (warp_source_box, read by RowSource::read_box: a
// tiled TIFF decodes only the tiles it crosses). Interpolations, borders and options as
// upres::warp, except Border::Wrap with the B-spline prefilter (the prefilter couples opposite
// edges; zoom: Wrap refused altogether) and fast_texture.
// Backends: cpu; cuda (over TiledOptions::devices): Resize without antialias in bands on the
// device through pinned host buffers, the point maps in boxes of whole kernel tiles
// (TiledOptions::tile_columns wide, 0: 2048), each from the samples its kernels read. The
// reference backend is refused, never substituted.
// The output is bit-identical to upres::warp on the whole image with the same options and
// backend.
// Error(InvalidArgument) for unsupported transforms or options, sizes over kMaxTiledDimension,
// band_rows outside [0, out_height], a memory budget too small, and (B-spline) a non-finite
// value in a float source, found when its band is read; source and sink errors pass through.
TiledStats warp_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                      const Transform& t, const WarpOptions& opts = {},
                      const TiledOptions& topts = {}, const Context& ctx = {});

// upres::bspline_prefilter over a RowSource (u8, u16 or f32; integers are converted to float,
// exactly) into a RowSink of float rows of the same size and channels (for example a
// TiffRowWriter of PixelType::F32). Each band of rows is prefiltered with kBandWarmup (64) rows
// of warm-up beyond each cut (docs/scale.md): the output is bit-identical to bspline_prefilter
// (cpu backend) on the whole image converted to float. Options as bspline_prefilter except
// Border::Wrap (its column recursions couple the first and the last rows); the variant is a
// CUDA kernel choice and does not change the cpu result. Backend: cpu (Reference and CUDA are
// refused, never substituted). Error(InvalidArgument) as warp_tiled for sizes, band_rows,
// first_row and budgets, and for a non-finite value in a float source, found when its band is
// read (the rows before it are then already written to the sink, which is not committed);
// source and sink errors pass through.
TiledStats bspline_prefilter_tiled(RowSource& src, RowSink& dst, const PrefilterOptions& opts = {},
                                   const TiledOptions& topts = {}, const Context& ctx = {});

// upres::upscale over a RowSource into a RowSink of scale W x scale H (the source's type and
// channels), for integer scales on the centre-aligned lattice: srcnn in tiles, each computed
// from its source box and a halo beyond the network's receptive field; bicubic, bilinear and
// bspline through warp_tiled. Band height and tile width from TiledOptions (band_rows,
// tile_columns; else max_memory, 0: 256 MiB for srcnn, shared among the GPUs, warp_tiled's
// automatic budget for the others). The output is bit-identical to upscale() on the whole image
// with the same backend. Backends: cpu; cuda (host-staged tiles, bands over
// TiledOptions::devices), where srcnn's kernels are those the first tile ran (variant Auto and
// precision Fastest choose by timing for the plane's shape: the whole-image call may choose
// others, equal within the precision's tolerance; named kernels give its bytes). The SEABI
// family (whose threshold is a statistic of the whole image) streams instead (upres/seabi.hpp,
// SeabiStream); nlm and the co-sited lattice are refused. The reference backend is refused,
// never substituted. Error(InvalidArgument) for those methods, a scale that is not an
// integer in [1, 16], output sides over kMaxTiledDimension and TiledOptions as warp_tiled; source
// and sink errors pass through.
TiledStats upscale_tiled(RowSource& src, RowSink& dst, const UpscaleOptions& opts = {},
                         const TiledOptions& topts = {}, const Context& ctx = {});

// upres::stereo_disparity's left-based map of a rectified pair from two RowSources (the same
// size, channels and type) into a RowSink of float rows of that size (for example a
// TiffRowWriter of PixelType::F32), band by band of full rows, each with the rows its window
// reaches above and below (census 3, the aggregation window's radius, the median 1). The
// output is bit-identical to stereo_disparity on the whole pair (either backend: both give the
// reference's bytes). The window matcher only: semi-global aggregation (its paths run the whole
// height) and speckle removal are refused. Backends: cpu; cuda (host-staged bands over
// TiledOptions::devices; every variant). The reference backend is refused, never substituted.
// Error(InvalidArgument) for those options, sources that differ, and TiledOptions as
// warp_tiled; the matcher's own errors
// (a non-finite float, found when its band is read) and source and sink errors pass through.
TiledStats stereo_disparity_tiled(RowSource& left, RowSource& right, RowSink& disparity,
                                  const StereoOptions& opts = {}, const TiledOptions& topts = {},
                                  const Context& ctx = {});

// upres::nlm_fuse over 1 to 64 RowSources (frames of one size, 1 or 3 channels, one pixel type)
// into a RowSink of scale W x scale H (their channels and type), band by band of rows: first a
// pass over the reference frame for its noise (Immerkaer's estimate, in the whole call's order;
// or opts.noise when >= 0), then each band is the whole call on its frames' rows plus a halo of
// every step's reach (the fusion, the back-projection rounds or the reconstruction rounds
// compound), its first row at a multiple of 32 input rows where the fusion's runs start. The
// output is bit-identical to nlm_fuse on the whole frames (cpu backend). Backend: cpu (others
// refused, never substituted). Error(InvalidArgument) for the options as nlm_fuse, frames that
// differ, and TiledOptions as warp_tiled; a non-finite float found when its rows are read.
TiledStats nlm_fuse_tiled(std::span<RowSource* const> frames, RowSink& dst,
                          const NlmsrOptions& opts = {}, const TiledOptions& topts = {},
                          const Context& ctx = {});

// Rows [first, last).
struct RowRange {
    int first = 0, last = 0;
};

// The source rows warp_tiled reads for output rows [y0, y1) computed as one band (band_rows =
// y1 - y0, first_row = y0, last_row = y1), halo and warm-up included: a task that holds only
// these rows computes those outputs bit-identical to the whole-image call (upres.dask does).
// backend: the backend that computes the band (Auto: cpu). Cuda: rows enough for any device
// (its prefilter's units depend on the device's SM count; the caller needs none).
// Error(InvalidArgument) as warp_tiled for the sizes, transform and options, and for a range
// outside [0, out_height] or the reference backend.
RowRange warp_tiled_source_rows(int src_width, int src_height, int out_width, int out_height,
                                const Transform& t, const WarpOptions& opts, int y0, int y1,
                                Backend backend = Backend::Cpu);

// The frames' rows nlm_fuse_tiled reads for output rows [y0, y1) computed as one call
// (band_rows = y1 - y0, first_row = y0, last_row = y1), given opts.noise >= 0 (the whole
// reference frame's, NlmsrNoise): a task holding only these rows of every frame computes those
// outputs bit-identical to nlm_fuse on the whole frames (upres.dask.fuse). Error(InvalidArgument)
// for the options as nlm_fuse, sizes over kMaxTiledDimension and a range outside the output.
RowRange nlm_fuse_tiled_source_rows(int width, int height, const NlmsrOptions& opts, int y0,
                                    int y1);

// The rows of both images stereo_disparity_tiled reads for output rows [y0, y1) computed as one
// band (band_rows = y1 - y0, first_row = y0, last_row = y1): a task holding only these rows
// computes those rows of the map bit-identical to stereo_disparity on the whole pair (upres.dask
// .disparity). Error(InvalidArgument) for the options stereo_disparity_tiled refuses, sizes over
// kMaxTiledDimension and a range outside the image. (The matcher's own option checks run with
// the band.)
RowRange stereo_disparity_tiled_source_rows(int width, int height, const StereoOptions& opts,
                                            int y0, int y1);

// A rectangle of pixels: columns [x0, x1), rows [y0, y1).
struct Box {
    int x0 = 0, y0 = 0, x1 = 0, y1 = 0;
    int width() const { return x1 - x0; }
    int height() const { return y1 - y0; }
    bool empty() const { return x1 <= x0 || y1 <= y0; }
};

// Two-dimensional tiles of the point transforms (Affine, rotations included; Perspective;
// Remap; Flow), whose outputs read source pixels anywhere along a row: the outputs in box `out`
// of an out_width x out_height warp of a src_width x src_height source need only the source
// pixels in warp_source_box(...) (taps, border and, for the B-spline, the prefilter's warm-up of
// 64 pixels at each cut, aligned to 64 columns and 8 rows); warp_box computes them from those
// pixels alone, bit-identical to upres::warp (cpu backend) on the whole image. upres.dask's
// affine_transform, rotate and map_coordinates run one task per output tile this way.
// For Remap and Flow, t.field holds the field of the box only (out.width() x out.height(),
// its pixel (0, 0) is output (out.x0, out.y0)). Options as upres::warp, except
// Border::Wrap with the B-spline prefilter (its recursions couple opposite edges; prefiltered
// coefficients may wrap) and fast_texture. An empty box when the outputs read no source pixel
// (Border::Constant, all outside). Error(InvalidArgument) for other transforms (Resize:
// warp_tiled_source_rows), a box outside the output, sizes over kMaxTiledDimension, a
// singular matrix or a non-finite field value.
// backend Cuda: the box warp_box reads on the cuda backend, bit-identical to upres::warp on the
// cuda backend: the outputs grown to the kernels' whole tiles of 64 x 64 (those beyond the box
// computed and dropped; a remap's or flow's box must lie on the tiles: x0, y0 multiples of 64,
// x1, y1 too or the output's side, as each output's bits depend on the field of its kernel
// thread's group), and for the B-spline prefilter whole units of the cuda
// prefilter's kernel plus two at each cut (up to 3 x 256 rows beyond the taps: the streaming
// kernel's unit depends on the device's SM count, and the box holds any device's). channels (1
// to 4) choose that kernel. Needs a CUDA build, not a device; Error(BackendUnavailable) in a
// build without CUDA; the reference backend is refused.
Box warp_source_box(int src_width, int src_height, int out_width, int out_height,
                    const Transform& t, const WarpOptions& opts, Box out,
                    Backend backend = Backend::Cpu, int channels = 1);

// The outputs in `out` into dst (out.width() x out.height(), the source's channels) from src,
// the source pixels in box `in` (in.width() x in.height()) of a src_width x src_height source;
// `in` must contain warp_source_box(...) of the same backend (Error(InvalidArgument) otherwise,
// naming both); an empty `in` (and src) where that box is empty. src and dst in host memory.
// Backends: cpu (ctx.backend Auto or Cpu; the B-spline's prefilter runs on the box only); cuda
// (on ctx.device, -1: the current one; the box's source pixels are uploaded, prefiltered as the
// whole call prefilters them, and the tiles interpolated by the whole call's kernels).
// Error(BackendUnavailable) without a device; the reference backend is refused.
void warp_box(ImageView<const std::uint8_t> src, Box in, int src_width, int src_height,
              ImageView<std::uint8_t> dst, Box out, int out_width, int out_height,
              const Transform& t, const WarpOptions& opts = {}, const Context& ctx = {});
void warp_box(ImageView<const std::uint16_t> src, Box in, int src_width, int src_height,
              ImageView<std::uint16_t> dst, Box out, int out_width, int out_height,
              const Transform& t, const WarpOptions& opts = {}, const Context& ctx = {});
void warp_box(ImageView<const float> src, Box in, int src_width, int src_height,
              ImageView<float> dst, Box out, int out_width, int out_height, const Transform& t,
              const WarpOptions& opts = {}, const Context& ctx = {});

// The same for bspline_prefilter_tiled on an image of width x height.
RowRange bspline_prefilter_tiled_source_rows(int width, int height, const PrefilterOptions& opts,
                                             int y0, int y1);

}  // namespace upres
