// Image file I/O (library upres_io, separate from the core library upres).
//
// Formats, chosen by file extension (case-insensitive) unless ReadOptions/WriteOptions::format
// names one:
//   png  (.png)            8/16-bit gray, gray+alpha, RGB, RGBA            (libpng)
//                          reading expands palette, 1/2/4-bit gray and tRNS to 8-bit
//   jpeg (.jpg, .jpeg)     8-bit gray and RGB (CMYK refused)               (libjpeg-turbo)
//                          quality >= 90 writes full-resolution chroma (4:4:4), else 4:2:0
//   tiff (.tif, .tiff)     8/16-bit and 32-bit float, 1-4 channels, when built with libtiff
//                          (written with Deflate compression; gray or RGB, + unassoc. alpha)
//   pfm  (.pfm)            32-bit float gray (Pf) and RGB (PF), rows bottom to top; either
//                          byte order is read (the scale's magnitude is ignored), little-endian
//                          is written. 2 or 4 channels: use NPY or TIFF
//   pnm  (.pgm, .ppm, .pnm) binary P5/P6, 8-bit (maxval 255) and 16-bit (maxval 65535);
//                          .pgm takes 1 channel, .ppm 3, .pnm either
//   npy  (.npy)            '<f4', '|u1', '<u2'; shape (H, W) or (H, W, C), C in 1..4, C order;
//                          versions 1-3 read, version 1 written
// Pixel values are stored as they are (no scaling): a u8 PNG reads as Image<uint8_t>, a PFM as
// Image<float>.
//
// Errors: every failure throws upres::Error whose message names the file and the problem.
// Unreadable/missing files -> IoError; truncated or malformed -> CorruptData; unknown
// extension, unsupported depth or channel count -> UnsupportedFormat; dimensions over
// kMaxDimension or kMaxPixels -> CorruptData, refused before any pixel allocation.
// Every message starts with the file path.
// Writing goes to a temporary file in the destination folder ("<path>.tmp-<pid>-<n>") that is
// renamed over the target only when complete: a failure removes it and never leaves a
// half-written or clobbered output. Options are checked (InvalidArgument) and the pixel type /
// channel count (UnsupportedFormat) before any file is created.
#pragma once

#include <upres/image.hpp>
#include <upres/rows.hpp>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>

namespace upres {

enum class FileFormat { Auto, Png, Jpeg, Tiff, Pfm, Pnm, Npy };

const char* to_string(FileFormat f) noexcept;
// Parses "auto", "png", "jpeg"/"jpg", "tiff"/"tif", "pfm", "pnm"/"pgm"/"ppm", "npy".
FileFormat parse_file_format(const std::string& name);
// The names parse_file_format accepts, aliases included (defined in upres_io).
template <>
const EnumDesc& enum_desc<FileFormat>() noexcept;
// Format implied by a path's extension; throws Error(UnsupportedFormat) if unknown.
FileFormat format_from_path(const std::string& path);
// True when this build can read and write the format (TIFF depends on libtiff).
bool format_supported(FileFormat f) noexcept;

struct ReadOptions {
    FileFormat format = FileFormat::Auto;
    // A file whose header declares more pixels is refused (Error(UnsupportedFormat)) before any
    // pixel memory is allocated: decompression bombs, hostile headers. In [1, kMaxPixels]; the
    // default is kMaxPixels (2^30 pixels: 4 GiB of RGBA u8, 16 GiB of RGBA f32).
    std::int64_t max_pixels = kMaxPixels;
};

struct WriteOptions {
    FileFormat format = FileFormat::Auto;
    int jpeg_quality = 95;    // 1..100, else Error(InvalidArgument)
    int png_compression = 6;  // zlib level 0..9, else Error(InvalidArgument)
};

// Reads an image into host memory.
AnyImage read_image(const std::string& path, const ReadOptions& opts = {});

// Writes a host image. The pixel type must be one the format stores (e.g. PNG: u8/u16; PFM:
// f32; JPEG: u8); otherwise Error(UnsupportedFormat) says which types are allowed. Convert
// first with upres::convert.
void write_image(const std::string& path, ImageView<const std::uint8_t> img,
                 const WriteOptions& opts = {});
void write_image(const std::string& path, ImageView<const std::uint16_t> img,
                 const WriteOptions& opts = {});
void write_image(const std::string& path, ImageView<const float> img,
                 const WriteOptions& opts = {});
void write_image(const std::string& path, const AnyImage& img, const WriteOptions& opts = {});

// Row-by-row binary 8-bit gray PGM (P5, maxval 255), for images that need not fit in memory
// (the streaming paths: SeabiStream, `upres upscale --stream`). Sides up to kMaxDimension, no
// limit on the pixel count.
class PgmRowReader {
  public:
    // Opens the file and reads its header; Error(IoError / CorruptData / UnsupportedFormat)
    // naming the file, also for a file too short for the size its header states.
    explicit PgmRowReader(const std::string& path);
    PgmRowReader(const PgmRowReader&) = delete;
    PgmRowReader& operator=(const PgmRowReader&) = delete;
    ~PgmRowReader();
    int width() const noexcept { return width_; }
    int height() const noexcept { return height_; }
    int rows_read() const noexcept { return rows_; }
    // The next rows.height() rows into rows (width() wide, 1 channel, host memory).
    void read(ImageView<std::uint8_t> rows);

  private:
    std::string path_;
    std::FILE* file_ = nullptr;
    int width_ = 0, height_ = 0, rows_ = 0;
};

// Writes a PGM under a temporary name in the target's folder; commit() (after all rows)
// renames it over the target. Destroyed without commit(), the temporary file is removed and an
// existing target is left untouched.
class PgmRowWriter {
  public:
    PgmRowWriter(const std::string& path, int width, int height);
    PgmRowWriter(const PgmRowWriter&) = delete;
    PgmRowWriter& operator=(const PgmRowWriter&) = delete;
    ~PgmRowWriter();
    void write(ImageView<const std::uint8_t> rows);
    int rows_written() const noexcept { return rows_; }
    void commit();

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    int rows_ = 0;
};

// TIFF and BigTIFF read by rows (a RowSource for tiled execution): stripped or tiled files,
// contiguous samples, the layouts read_image reads, sides up to kMaxTiledDimension and no limit
// on the pixel count. Only the strips or tiles that the rows asked for are decoded (about 64 MiB
// of the latest are kept for the next calls); compressed ones that read_box decodes once that
// cache is full, or that are decoded a second time, are also kept decoded in an unnamed scratch
// file in TMPDIR (gone with the process), so boxes that go back over them do not decode them
// again (without a usable TMPDIR they are decoded again). Error(IoError / CorruptData /
// UnsupportedFormat) naming the file, also for a strip or tile that is missing or corrupt (when
// it is read). Needs libtiff (format_supported(FileFormat::Tiff)).
class TiffRowReader final : public RowSource {
  public:
    explicit TiffRowReader(const std::string& path);
    TiffRowReader(const TiffRowReader&) = delete;
    TiffRowReader& operator=(const TiffRowReader&) = delete;
    ~TiffRowReader() override;
    PixelType type() const override;
    int width() const override;
    int height() const override;
    int channels() const override;
    bool tiled() const noexcept;  // tiles (else strips)
    void read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) override;
    // A tiled TIFF: only the tiles the box crosses are decoded; strips: the strips of its rows.
    // About 64 MiB of each are kept, the least recently used dropped first (neighbouring boxes
    // overlap).
    void read_box(int x0, int y0, int w, int h, void* dst, std::ptrdiff_t stride) override;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// The tile side TiffRowWriter takes by default: 256, or for a smaller image the smallest multiple
// of 16 that covers its longer side.
int tiff_tile_side(int width, int height) noexcept;

struct TiffRowWriterOptions {
    // Tile side, a multiple of 16 in [16, 4096] (TIFF's rule); 0: tiff_tile_side(width, height).
    int tile = 0;
    // Deflate with the horizontal (integers) or floating-point predictor, as write_image; false:
    // uncompressed (the default here: libtiff compresses one tile at a time on one core).
    bool deflate = false;
    bool bigtiff = false;  // BigTIFF whatever the size (readers without BigTIFF cannot open it)
    // Resumable writing: the file is written under this fixed temporary name (replaced if it
    // exists) instead of a unique one, its directory is checkpointed after every write_rows
    // call that completes a row of tiles (the partial file is then a valid TIFF of the rows
    // written so far: unwritten tiles are empty) and on_checkpoint(rows written) is called.
    // keep_partial() leaves the partial file in place when the writer dies uncommitted.
    std::string partial_path;
    std::function<void(int rows)> on_checkpoint;
};

// A tiled TIFF written row by row (a RowSink): BigTIFF when the pixel data exceeds 3.9 GB
// (classic TIFF's offsets stop at 4 GiB), classic TIFF otherwise. Gray or RGB (+ unassociated
// alpha) like write_image. The file is written under a temporary name in the target's folder and
// renamed over the target by commit() after the last row; destroyed before (an error, a full
// disk, Ctrl-C), the temporary file is removed and an existing target is left untouched.
class TiffRowWriter final : public RowSink {
  public:
    TiffRowWriter(const std::string& path, int width, int height, int channels, PixelType type,
                  const TiffRowWriterOptions& opts = {});
    TiffRowWriter(const TiffRowWriter&) = delete;
    TiffRowWriter& operator=(const TiffRowWriter&) = delete;
    ~TiffRowWriter() override;
    bool bigtiff() const noexcept;
    int rows_written() const noexcept;
    void keep_partial() noexcept;
    void write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) override;
    void commit() override;

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace upres
