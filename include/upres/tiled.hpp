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

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/warp.hpp>

namespace upres {

inline constexpr int kMaxTiledDimension = 1 << 20;  // pixels per side on the tiled paths

// Rows of an image of any size, read in any order (a band's halo re-reads rows).
class RowSource {
  public:
    virtual ~RowSource() = default;
    virtual PixelType type() const = 0;
    virtual int width() const = 0;
    virtual int height() const = 0;
    virtual int channels() const = 0;
    // Rows [y0, y0 + rows) into dst: host memory, `stride` elements from row to row, each row
    // width() * channels() elements of type(). Errors name the source (Error(IoError /
    // CorruptData)).
    virtual void read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) = 0;
};

// Rows written once each, top to bottom.
class RowSink {
  public:
    virtual ~RowSink() = default;
    // Rows [y0, y0 + rows): y0 is the number of rows written so far.
    virtual void write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) = 0;
    // After the last row: completes the output (a file is renamed over its target only now).
    virtual void commit() = 0;
};

// An image in host memory as a RowSource (tests, small inputs).
class ViewRowSource final : public RowSource {
  public:
    explicit ViewRowSource(const detail::RawView& v);
    template <Pixel T>
    explicit ViewRowSource(ImageView<T> v) : ViewRowSource(v.raw()) {}
    PixelType type() const override { return v_.type; }
    int width() const override { return v_.width; }
    int height() const override { return v_.height; }
    int channels() const override { return v_.channels; }
    void read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) override;

  private:
    detail::RawView v_;
};

// A host image as a RowSink (rows written into it; commit() does nothing).
class ViewRowSink final : public RowSink {
  public:
    explicit ViewRowSink(const detail::RawView& v);
    template <Pixel T>
    explicit ViewRowSink(ImageView<T> v) : ViewRowSink(v.raw()) {}
    void write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) override;
    void commit() override {}

  private:
    detail::RawView v_;
};

struct TiledOptions {
    // Host memory for the bands (input rows, their float staging, output rows), in bytes. The
    // band height follows from it; Error(InvalidArgument) if even the smallest band (8 output
    // rows and their halo) needs more.
    std::size_t max_memory = std::size_t{256} << 20;
    // Output rows per band; 0: as many as max_memory allows. Smaller bands re-read more halo.
    int band_rows = 0;
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
// a band_rows < 0 or a memory budget too small; source and sink errors pass through.
TiledStats warp_tiled(RowSource& src, RowSink& dst, int out_width, int out_height,
                      const Transform& t, const WarpOptions& opts = {},
                      const TiledOptions& topts = {}, const Context& ctx = {});

}  // namespace upres
