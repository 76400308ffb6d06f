// TIFF reading and writing with libtiff (when the build found it: UPRES_HAVE_TIFF). libtiff's
// warnings and errors are collected per file through TIFFOpenOptions handlers (never printed);
// the last error message is part of the upres::Error.
#include <string>

#include "io/io_internal.hpp"

#if UPRES_HAVE_TIFF

#include <tiffio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace upres::io_detail {
namespace {

struct TiffMessages {
    std::string path;   // the file name libtiff uses as "module" for some messages
    std::string error;  // last error
};

int on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
    auto* m = static_cast<TiffMessages*>(user);
    char buf[512];
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    const bool named = module && *module && m->path != module;
    m->error = named ? std::string(module) + ": " + buf : std::string(buf);
    return 1;  // handled: do not call the global (stderr) handler
}
int on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

struct TiffCloser {
    void operator()(TIFF* t) const noexcept { TIFFClose(t); }
};
using TiffPtr = std::unique_ptr<TIFF, TiffCloser>;

// Opens a TIFF on a duplicate of f's descriptor (TIFFClose closes the duplicate; the caller
// keeps f). Messages go to *msgs.
TiffPtr open_tiff(const std::string& path, std::FILE* f, const char* mode, TiffMessages* msgs,
                  ErrorCode on_fail) {
    std::fflush(f);
    const int fd = ::dup(::fileno(f));
    if (fd < 0) fail(ErrorCode::IoError, path, std::string("dup failed: ") + std::strerror(errno));
    TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        ::close(fd);
        fail(ErrorCode::OutOfMemory, path, "cannot allocate TIFF options");
    }
    TIFFOpenOptionsSetErrorHandlerExtR(opts, on_error, msgs);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, on_warning, msgs);
    TIFF* t = TIFFFdOpenExt(fd, path.c_str(), mode, opts);
    TIFFOpenOptionsFree(opts);
    if (!t) {
        ::close(fd);
        fail(on_fail, path,
             std::string(on_fail == ErrorCode::CorruptData ? "not a valid TIFF file: "
                                                           : "cannot start the TIFF file: ") +
                 (msgs->error.empty() ? "libtiff could not open it" : msgs->error));
    }
    return TiffPtr(t);
}

std::string libtiff_says(const TiffMessages& m) {
    return m.error.empty() ? std::string() : " (libtiff: " + m.error + ")";
}

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
    std::uint32_t w = 0, h = 0;
    std::uint16_t spp = 1, bps = 1, fmt = SAMPLEFORMAT_UINT, photo = PHOTOMETRIC_MINISBLACK,
                  planar = PLANARCONFIG_CONTIG;
    if (!TIFFGetField(t.get(), TIFFTAG_IMAGEWIDTH, &w) ||
        !TIFFGetField(t.get(), TIFFTAG_IMAGELENGTH, &h))
        fail(ErrorCode::CorruptData, path, "TIFF without image size" + libtiff_says(msgs));
    check_dimensions(path, w, h, max_pixels);
    TIFFGetFieldDefaulted(t.get(), TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(t.get(), TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(t.get(), TIFFTAG_SAMPLEFORMAT, &fmt);
    TIFFGetFieldDefaulted(t.get(), TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetField(t.get(), TIFFTAG_PHOTOMETRIC, &photo);
    const std::string kind = std::to_string(spp) + " samples of " + std::to_string(bps) +
                             " bits (sample format " + std::to_string(fmt) + ", photometric " +
                             std::to_string(photo) + ")";
    if (spp < 1 || spp > 4)
        fail(ErrorCode::UnsupportedFormat, path,
             "TIFF with " + kind + " is not supported (allowed: 1-4 channels)");
    if (photo != PHOTOMETRIC_MINISBLACK && photo != PHOTOMETRIC_RGB)
        fail(ErrorCode::UnsupportedFormat, path,
             "TIFF with " + kind +
                 " is not supported (allowed photometric: min-is-black gray or RGB; no "
                 "palette, min-is-white, YCbCr or CMYK)");
    const bool separate = planar == PLANARCONFIG_SEPARATE;
    if (bps == 8 && fmt == SAMPLEFORMAT_UINT)
        return read_pixels<std::uint8_t>(path, t.get(), msgs, static_cast<int>(w),
                                         static_cast<int>(h), spp, separate);
    if (bps == 16 && fmt == SAMPLEFORMAT_UINT)
        return read_pixels<std::uint16_t>(path, t.get(), msgs, static_cast<int>(w),
                                          static_cast<int>(h), spp, separate);
    if (bps == 32 && fmt == SAMPLEFORMAT_IEEEFP)
        return read_pixels<float>(path, t.get(), msgs, static_cast<int>(w), static_cast<int>(h),
                                  spp, separate);
    fail(ErrorCode::UnsupportedFormat, path,
         "TIFF with " + kind +
             " is not supported (allowed: 8 or 16-bit unsigned integers, 32-bit float)");
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
