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

#include <upres/bspline.hpp>
#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/rows.hpp>
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
    // Output rows [first_row, last_row) only (last_row 0: the output's end). Resuming starts at
    // first_row (the sink has the rows before); a task of a cluster computes one range (its
    // source rows from warp_tiled_source_rows: a ViewRowSource of those rows serves it).
    int first_row = 0;
    int last_row = 0;
    // Called after each band with the output rows done so far and the total. An exception it
    // throws stops the run (the sink is then not committed) and reaches the caller.
    std::function<void(std::int64_t done, std::int64_t total)> progress;
};

struct TiledStats {
    int bands = 0;
    int band_rows = 0;             // output rows per band (the last may have fewer)
    std::int64_t rows_read = 0;    // input rows read, halos included
    std::size_t buffer_bytes = 0;  // the bands' buffers
};

// upres::warp over a RowSource into a RowSink of out_width x out_height (the source's type and
// channels). Transforms: Resize (zoom). Interpolations, borders and options as upres::warp,
// except Border::Wrap (its prefilter couples the first and the last rows) and fast_texture.
// Backend: cpu (the Reference and CUDA backends are refused, never substituted). The output is
// bit-identical to upres::warp on the whole image with the same options and backend.
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

// Rows [first, last).
struct RowRange {
    int first = 0, last = 0;
};

// The source rows warp_tiled reads for output rows [y0, y1) computed as one band (band_rows =
// y1 - y0, first_row = y0, last_row = y1), halo and warm-up included: a task that holds only
// these rows computes those outputs bit-identical to the whole-image call (upres.dask does).
// Error(InvalidArgument) as warp_tiled for the sizes, transform and options, and for a range
// outside [0, out_height].
RowRange warp_tiled_source_rows(int src_width, int src_height, int out_width, int out_height,
                                const Transform& t, const WarpOptions& opts, int y0, int y1);

// The same for bspline_prefilter_tiled on an image of width x height.
RowRange bspline_prefilter_tiled_source_rows(int width, int height, const PrefilterOptions& opts,
                                             int y0, int y1);

}  // namespace upres
