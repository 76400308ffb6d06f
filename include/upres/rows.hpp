// Rows of images of any size: the sources and sinks of tiled execution (upres/tiled.hpp) and
// of the row-wise file readers and writers (upres/io.hpp: TiffRowReader, TiffRowWriter).
// Raw pointers and strides, not ImageViews: a band of rows may be wider than kMaxDimension.
#pragma once

#include <cstddef>

#include <upres/image.hpp>

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
    // Rows [y0, y0 + rows) where they already are in host memory, to be read in place (their
    // row stride, in elements, in *stride), or nullptr: read_rows copies them. An in-memory
    // source saves the tiled operations a copy of every band.
    virtual const void* rows_in_memory(int y0, int rows, std::ptrdiff_t* stride) const {
        (void)y0, (void)rows, (void)stride;
        return nullptr;
    }
    // Pixels [x0, x0 + w) of rows [y0, y0 + h) into dst (host memory, `stride` elements from
    // row to row, each w * channels() elements of type()): the source box of a 2-D tile
    // (warp_tiled on rotations and other point maps). The default copies them out of
    // rows_in_memory, or reads the rows (read_rows, about 8 MiB at a time) and keeps the columns;
    // TiffRowReader decodes only the tiles of a tiled TIFF that the box crosses.
    // Error(InvalidArgument) for a box outside the image.
    virtual void read_box(int x0, int y0, int w, int h, void* dst, std::ptrdiff_t stride);
};

// Rows written once each, top to bottom.
class RowSink {
  public:
    virtual ~RowSink() = default;
    // Rows [y0, y0 + rows): y0 is the number of rows written so far.
    virtual void write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) = 0;
    // Where rows [y0, y0 + rows) will be kept, in host memory, for the operation to compute them
    // in place (their row stride, in elements, in *stride), or nullptr. write_rows is still
    // called, with that memory (nothing to copy then).
    virtual void* rows_in_memory(int y0, int rows, std::ptrdiff_t* stride) {
        (void)y0, (void)rows, (void)stride;
        return nullptr;
    }
    // After the last row: completes the output (a file is renamed over its target only now).
    virtual void commit() = 0;
};

// An image in host memory as a RowSource (tests, small inputs), or only its rows
// [first_row, first_row + v.height) of an image of `height` rows (the rows a task of a cluster
// holds: reading others is Error(InvalidArgument)).
class ViewRowSource final : public RowSource {
  public:
    explicit ViewRowSource(const detail::RawView& v);
    ViewRowSource(const detail::RawView& rows, int first_row, int height);
    template <Pixel T>
    explicit ViewRowSource(ImageView<T> v) : ViewRowSource(v.raw()) {}
    PixelType type() const override { return v_.type; }
    int width() const override { return v_.width; }
    int height() const override { return height_; }
    int channels() const override { return v_.channels; }
    void read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) override;
    const void* rows_in_memory(int y0, int rows, std::ptrdiff_t* stride) const override;

  private:
    detail::RawView v_;
    int first_ = 0, height_ = 0;
};

// A host image as a RowSink (rows written into it; commit() does nothing), or as the output's
// rows [first_row, first_row + v.height) only.
class ViewRowSink final : public RowSink {
  public:
    explicit ViewRowSink(const detail::RawView& v, int first_row = 0);
    template <Pixel T>
    explicit ViewRowSink(ImageView<T> v) : ViewRowSink(v.raw()) {}
    void write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) override;
    void* rows_in_memory(int y0, int rows, std::ptrdiff_t* stride) override;
    void commit() override {}

  private:
    detail::RawView v_;
    int first_ = 0;
};

}  // namespace upres
