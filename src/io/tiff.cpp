// TIFF reading and writing with libtiff (when the build found it: UPRES_HAVE_TIFF). libtiff's
// warnings and errors are collected per file through TIFFOpenOptions handlers (never printed);
// the last error message is part of the upres::Error.
#include <string>

#include "io/io_internal.hpp"

#if UPRES_HAVE_TIFF

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

#include "io/tiff_common.hpp"

namespace upres::io_detail {
namespace {

template <class T>
AnyImage read_pixels(const std::string& path, TIFF* t, const TiffMessages& msgs, int w, int h,
                     int spp, bool planar_separate) {
    Image<T> img(w, h, spp);
    const tmsize_t line_bytes = TIFFScanlineSize(t);
    if (TIFFIsTiled(t)) {
        std::uint32_t tw = 0, th = 0;
        TIFFGetField(t, TIFFTAG_TILEWIDTH, &tw);
        TIFFGetField(t, TIFFTAG_TILELENGTH, &th);
        const tmsize_t tile_bytes = TIFFTileSize(t);
        if (planar_separate || tw == 0 || th == 0 ||
            tile_bytes != static_cast<tmsize_t>(tw) * th * spp * static_cast<tmsize_t>(sizeof(T)))
            fail(ErrorCode::UnsupportedFormat, path,
                 "this tiled TIFF layout is not supported (allowed: contiguous samples)" +
                     libtiff_says(msgs));
        // The tile buffer is bounded by the image or 16 MiB: a 509-byte file declaring tiles of
        // 618 GB was found by fuzzing (the row-wise reader has its own bound: a row of tiles
        // of at most 1 GiB).
        const std::uint64_t image_bytes = std::uint64_t{static_cast<std::uint32_t>(w)} *
                                          static_cast<std::uint32_t>(h) * spp * sizeof(T);
        if (static_cast<std::uint64_t>(tile_bytes) >
            std::max<std::uint64_t>(image_bytes, std::uint64_t{16} << 20))
            fail(ErrorCode::CorruptData, path,
                 "TIFF tile " + std::to_string(tw) + " x " + std::to_string(th) +
                     " is larger than the image (" + std::to_string(w) + " x " + std::to_string(h) +
                     ") and than 16 MiB");
        std::vector<T> tile(static_cast<std::size_t>(tw) * th * spp);
        for (std::uint32_t ty = 0; ty < static_cast<std::uint32_t>(h); ty += th)
            for (std::uint32_t tx = 0; tx < static_cast<std::uint32_t>(w); tx += tw) {
                if (TIFFReadTile(t, tile.data(), tx, ty, 0, 0) < 0)
                    fail(ErrorCode::CorruptData, path,
                         "cannot read TIFF tile at (" + std::to_string(tx) + ", " +
                             std::to_string(ty) + ")" + libtiff_says(msgs));
                const std::uint32_t cw = std::min<std::uint32_t>(tw, w - tx);
                const std::uint32_t ch = std::min<std::uint32_t>(th, h - ty);
                for (std::uint32_t y = 0; y < ch; ++y)
                    std::memcpy(img.view().row(static_cast<int>(ty + y)) + tx * spp,
                                tile.data() + static_cast<std::size_t>(y) * tw * spp,
                                static_cast<std::size_t>(cw) * spp * sizeof(T));
            }
    } else if (!planar_separate) {
        if (line_bytes != static_cast<tmsize_t>(w) * spp * static_cast<tmsize_t>(sizeof(T)))
            fail(ErrorCode::CorruptData, path,
                 "inconsistent TIFF scanline size" + libtiff_says(msgs));
        for (int y = 0; y < h; ++y)
            if (TIFFReadScanline(t, img.view().row(y), static_cast<std::uint32_t>(y), 0) < 0)
                fail(ErrorCode::CorruptData, path,
                     "cannot read TIFF row " + std::to_string(y) + libtiff_says(msgs));
    } else {
        if (line_bytes != static_cast<tmsize_t>(w) * static_cast<tmsize_t>(sizeof(T)))
            fail(ErrorCode::CorruptData, path,
                 "inconsistent TIFF scanline size" + libtiff_says(msgs));
        std::vector<T> line(static_cast<std::size_t>(w));
        for (int s = 0; s < spp; ++s)
            for (int y = 0; y < h; ++y) {
                if (TIFFReadScanline(t, line.data(), static_cast<std::uint32_t>(y),
                                     static_cast<std::uint16_t>(s)) < 0)
                    fail(ErrorCode::CorruptData, path,
                         "cannot read TIFF row " + std::to_string(y) + " of sample " +
                             std::to_string(s) + libtiff_says(msgs));
                T* row = img.view().row(y);
                for (int x = 0; x < w; ++x) row[x * spp + s] = line[static_cast<std::size_t>(x)];
            }
    }
    return AnyImage(std::move(img));
}

}  // namespace

AnyImage read_tiff(const std::string& path, std::FILE* f, std::int64_t max_pixels) {
    TiffMessages msgs{path, {}};
    TiffPtr t = open_tiff(path, f, "rm", &msgs, ErrorCode::CorruptData);
    const TiffLayout l = tiff_layout(path, t.get(), msgs);
    check_dimensions(path, l.width, l.height, max_pixels,
                     "larger TIFFs go through the tiled paths (upres warp --tiled, "
                     "upres::warp_tiled with TiffRowReader)");
    const int w = static_cast<int>(l.width), h = static_cast<int>(l.height);
    switch (l.type) {
        case PixelType::U8:
            return read_pixels<std::uint8_t>(path, t.get(), msgs, w, h, l.channels,
                                             l.planar_separate);
        case PixelType::U16:
            return read_pixels<std::uint16_t>(path, t.get(), msgs, w, h, l.channels,
                                              l.planar_separate);
        case PixelType::F32:
            break;
    }
    return read_pixels<float>(path, t.get(), msgs, w, h, l.channels, l.planar_separate);
}

void check_write_tiff(const std::string&, const detail::RawView&) {}  // u8/u16/f32, 1-4 ch.

void write_tiff(const std::string& path, std::FILE* f, const detail::RawView& v) {
    TiffMessages msgs{path, {}};
    TiffPtr t = open_tiff(path, f, "w", &msgs, ErrorCode::IoError);
    const int bits = static_cast<int>(pixel_size(v.type) * 8);
    const bool is_float = v.type == PixelType::F32;
    TIFF* tp = t.get();
    TIFFSetField(tp, TIFFTAG_IMAGEWIDTH, static_cast<std::uint32_t>(v.width));
    TIFFSetField(tp, TIFFTAG_IMAGELENGTH, static_cast<std::uint32_t>(v.height));
    TIFFSetField(tp, TIFFTAG_SAMPLESPERPIXEL, static_cast<std::uint16_t>(v.channels));
    TIFFSetField(tp, TIFFTAG_BITSPERSAMPLE, static_cast<std::uint16_t>(bits));
    TIFFSetField(tp, TIFFTAG_SAMPLEFORMAT,
                 static_cast<std::uint16_t>(is_float ? SAMPLEFORMAT_IEEEFP : SAMPLEFORMAT_UINT));
    TIFFSetField(tp, TIFFTAG_PLANARCONFIG, static_cast<std::uint16_t>(PLANARCONFIG_CONTIG));
    TIFFSetField(
        tp, TIFFTAG_PHOTOMETRIC,
        static_cast<std::uint16_t>(v.channels >= 3 ? PHOTOMETRIC_RGB : PHOTOMETRIC_MINISBLACK));
    if (v.channels == 2 || v.channels == 4) {
        const std::uint16_t extra[1] = {EXTRASAMPLE_UNASSALPHA};
        TIFFSetField(tp, TIFFTAG_EXTRASAMPLES, static_cast<std::uint16_t>(1), extra);
    }
    TIFFSetField(tp, TIFFTAG_COMPRESSION, static_cast<std::uint16_t>(COMPRESSION_ADOBE_DEFLATE));
    TIFFSetField(tp, TIFFTAG_ZIPQUALITY, kDeflateLevel);
    TIFFSetField(
        tp, TIFFTAG_PREDICTOR,
        static_cast<std::uint16_t>(is_float ? PREDICTOR_FLOATINGPOINT : PREDICTOR_HORIZONTAL));
    TIFFSetField(tp, TIFFTAG_ROWSPERSTRIP, TIFFDefaultStripSize(tp, 0));
    const std::size_t row_bytes = static_cast<std::size_t>(v.width) * v.channels * (bits / 8);
    std::vector<unsigned char> line(row_bytes);  // libtiff may modify the row (predictor)
    const auto* base = static_cast<const unsigned char*>(v.data);
    for (int y = 0; y < v.height; ++y) {
        std::memcpy(
            line.data(),
            base + static_cast<std::size_t>(y) * static_cast<std::size_t>(v.stride) * (bits / 8),
            row_bytes);
        errno = 0;
        if (TIFFWriteScanline(tp, line.data(), static_cast<std::uint32_t>(y), 0) < 0) {
            const int e = errno;
            fail(ErrorCode::IoError, path,
                 std::string("TIFF write failed") +
                     (e ? std::string(": ") + std::strerror(e) : "") + libtiff_says(msgs));
        }
    }
    if (!TIFFFlush(tp)) fail(ErrorCode::IoError, path, "TIFF write failed" + libtiff_says(msgs));
    TIFF* raw = t.release();
    TIFFClose(raw);
    if (!msgs.error.empty())
        fail(ErrorCode::IoError, path, "TIFF write failed" + libtiff_says(msgs));
}

}  // namespace upres::io_detail

#else  // !UPRES_HAVE_TIFF

namespace upres::io_detail {
namespace {
[[noreturn]] void no_tiff(const std::string& path) {
    fail(ErrorCode::UnsupportedFormat, path,
         "TIFF is not available: this build of upres lacks libtiff");
}
}  // namespace
AnyImage read_tiff(const std::string& path, std::FILE*, std::int64_t) { no_tiff(path); }
void check_write_tiff(const std::string& path, const detail::RawView&) { no_tiff(path); }
void write_tiff(const std::string& path, std::FILE*, const detail::RawView&) { no_tiff(path); }
}  // namespace upres::io_detail

#endif
