// Shared by the TIFF readers and writers (tiff.cpp: whole images; tiff_rows.cpp: rows and
// tiles of images of any size): libtiff's messages collected per file, opening on a descriptor,
// and the sample layouts upres reads. Only when built with libtiff (UPRES_HAVE_TIFF).
#pragma once

#include <tiffio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "io/io_internal.hpp"

namespace upres::io_detail {

struct TiffMessages {
    std::string path;   // the file name libtiff uses as "module" for some messages
    std::string error;  // last error
};

inline int tiff_on_error(TIFF*, void* user, const char* module, const char* fmt, va_list ap) {
    auto* m = static_cast<TiffMessages*>(user);
    char buf[512];
    std::vsnprintf(buf, sizeof(buf), fmt, ap);
    const bool named = module && *module && m->path != module;
    m->error = named ? std::string(module) + ": " + buf : std::string(buf);
    return 1;  // handled: do not call the global (stderr) handler
}
inline int tiff_on_warning(TIFF*, void*, const char*, const char*, va_list) { return 1; }

struct TiffCloser {
    void operator()(TIFF* t) const noexcept { TIFFClose(t); }
};
using TiffPtr = std::unique_ptr<TIFF, TiffCloser>;

// Deflate level of the TIFFs upres writes: 1 (zlib's fastest). An 8192^2 RGB u8 output of
// `upres warp` (2-core machine): 0.91 s and 51.7 MB against 5.96 s and 47.0 MB at libtiff's
// default level 6 (level 3: 1.70 s, 50.1 MB); the compressor ran on one thread and took 90 % of
// the command's time.
inline constexpr int kDeflateLevel = 1;

// Opens a TIFF on a duplicate of f's descriptor (TIFFClose closes the duplicate; the caller
// keeps f). mode: libtiff's ("r", "w", "w8" for BigTIFF, ...). Messages go to *msgs.
inline TiffPtr open_tiff(const std::string& path, std::FILE* f, const char* mode,
                         TiffMessages* msgs, ErrorCode on_fail) {
    std::fflush(f);
    const int fd = ::dup(::fileno(f));
    if (fd < 0) fail(ErrorCode::IoError, path, std::string("dup failed: ") + std::strerror(errno));
    TIFFOpenOptions* opts = TIFFOpenOptionsAlloc();
    if (!opts) {
        ::close(fd);
        fail(ErrorCode::OutOfMemory, path, "cannot allocate TIFF options");
    }
    TIFFOpenOptionsSetErrorHandlerExtR(opts, tiff_on_error, msgs);
    TIFFOpenOptionsSetWarningHandlerExtR(opts, tiff_on_warning, msgs);
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

inline std::string libtiff_says(const TiffMessages& m) {
    return m.error.empty() ? std::string() : " (libtiff: " + m.error + ")";
}

// The first image's size and sample layout, checked against what upres reads (1-4 channels,
// min-is-black gray or RGB, u8 / u16 / f32); Error(CorruptData / UnsupportedFormat) otherwise.
struct TiffLayout {
    std::uint32_t width = 0, height = 0;
    int channels = 1;
    PixelType type = PixelType::U8;
    bool planar_separate = false;
};

inline TiffLayout tiff_layout(const std::string& path, TIFF* t, const TiffMessages& msgs) {
    TiffLayout l;
    std::uint16_t spp = 1, bps = 1, fmt = SAMPLEFORMAT_UINT, photo = PHOTOMETRIC_MINISBLACK,
                  planar = PLANARCONFIG_CONTIG;
    if (!TIFFGetField(t, TIFFTAG_IMAGEWIDTH, &l.width) ||
        !TIFFGetField(t, TIFFTAG_IMAGELENGTH, &l.height))
        fail(ErrorCode::CorruptData, path, "TIFF without image size" + libtiff_says(msgs));
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLESPERPIXEL, &spp);
    TIFFGetFieldDefaulted(t, TIFFTAG_BITSPERSAMPLE, &bps);
    TIFFGetFieldDefaulted(t, TIFFTAG_SAMPLEFORMAT, &fmt);
    TIFFGetFieldDefaulted(t, TIFFTAG_PLANARCONFIG, &planar);
    TIFFGetField(t, TIFFTAG_PHOTOMETRIC, &photo);
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
    l.channels = spp;
    l.planar_separate = planar == PLANARCONFIG_SEPARATE;
    if (bps == 8 && fmt == SAMPLEFORMAT_UINT)
        l.type = PixelType::U8;
    else if (bps == 16 && fmt == SAMPLEFORMAT_UINT)
        l.type = PixelType::U16;
    else if (bps == 32 && fmt == SAMPLEFORMAT_IEEEFP)
        l.type = PixelType::F32;
    else
        fail(ErrorCode::UnsupportedFormat, path,
             "TIFF with " + kind +
                 " is not supported (allowed: 8 or 16-bit unsigned integers, 32-bit float)");
    return l;
}

}  // namespace upres::io_detail
