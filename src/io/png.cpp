// PNG reading and writing with libpng. libpng reports errors through longjmp: every function
// that calls setjmp below holds only trivially destructible locals, so no C++ object is ever
// skipped by the jump; the C++ callers turn the recorded message into an upres::Error.
#include <png.h>

#include <bit>
#include <cerrno>
#include <csetjmp>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/io_internal.hpp"

namespace upres::io_detail {
namespace {

struct PngError {
    char message[256];
};

void on_error(png_structp png, png_const_charp msg) {
    auto* e = static_cast<PngError*>(png_get_error_ptr(png));
    std::snprintf(e->message, sizeof(e->message), "%s", msg ? msg : "unknown libpng error");
    png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}  // warnings are not fatal and not printed

struct PngHeader {
    png_uint_32 width = 0, height = 0;
    int bit_depth = 0, channels = 0;
};

// Reads the header and sets up expansion to 8/16-bit gray, gray+alpha, RGB or RGBA.
bool png_read_header(png_structp png, png_infop info, std::FILE* f, PngHeader* out) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_init_io(png, f);
    png_set_sig_bytes(png, 8);
    // Let upres' own, clearer size limits decide (checked by the caller before allocating).
    png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
    png_read_info(png, info);
    const int color_type = png_get_color_type(png, info);
    const int depth = png_get_bit_depth(png, info);
    if (color_type == PNG_COLOR_TYPE_PALETTE) png_set_palette_to_rgb(png);
    if (color_type == PNG_COLOR_TYPE_GRAY && depth < 8) png_set_expand_gray_1_2_4_to_8(png);
    if (png_get_valid(png, info, PNG_INFO_tRNS)) png_set_tRNS_to_alpha(png);
    if (depth == 16 && std::endian::native == std::endian::little) png_set_swap(png);
    png_set_interlace_handling(png);
    png_read_update_info(png, info);
    out->width = png_get_image_width(png, info);
    out->height = png_get_image_height(png, info);
    out->bit_depth = png_get_bit_depth(png, info);
    out->channels = png_get_channels(png, info);
    return true;
}

bool png_read_pixels(png_structp png, png_bytepp rows) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_read_image(png, rows);
    png_read_end(png, nullptr);
    return true;
}

struct PngWriteArgs {
    const unsigned char* data;
    std::size_t row_bytes_stride;
    png_uint_32 width, height;
    int bit_depth, color_type, compression;
};

bool png_write_all(png_structp png, png_infop info, std::FILE* f, const PngWriteArgs* a) {
    if (setjmp(png_jmpbuf(png))) return false;
    png_init_io(png, f);
    png_set_IHDR(png, info, a->width, a->height, a->bit_depth, a->color_type, PNG_INTERLACE_NONE,
                 PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_set_compression_level(png, a->compression);
    png_write_info(png, info);
    if (a->bit_depth == 16 && std::endian::native == std::endian::little) png_set_swap(png);
    for (png_uint_32 y = 0; y < a->height; ++y)
        png_write_row(png, a->data + static_cast<std::size_t>(y) * a->row_bytes_stride);
    png_write_end(png, info);
    return true;
}

class ReadGuard {
  public:
    ReadGuard(png_structp p, png_infop i) : png_(p), info_(i) {}
    ~ReadGuard() { png_destroy_read_struct(&png_, info_ ? &info_ : nullptr, nullptr); }
    ReadGuard(const ReadGuard&) = delete;
    ReadGuard& operator=(const ReadGuard&) = delete;

  private:
    png_structp png_;
    png_infop info_;
};

class WriteGuard {
  public:
    WriteGuard(png_structp p, png_infop i) : png_(p), info_(i) {}
    ~WriteGuard() { png_destroy_write_struct(&png_, info_ ? &info_ : nullptr); }
    WriteGuard(const WriteGuard&) = delete;
    WriteGuard& operator=(const WriteGuard&) = delete;

  private:
    png_structp png_;
    png_infop info_;
};

std::string png_problem(std::FILE* f, const PngError& e) {
    if (std::feof(f))
        return std::string("truncated PNG (unexpected end of file: ") + e.message + ")";
    return std::string("corrupt PNG: ") + e.message;
}

template <class T>
AnyImage read_png_pixels(const std::string& path, std::FILE* f, png_structp png, const PngHeader& h,
                         const PngError& err) {
    Image<T> img(static_cast<int>(h.width), static_cast<int>(h.height), h.channels);
    std::vector<png_bytep> rows(h.height);
    for (png_uint_32 y = 0; y < h.height; ++y)
        rows[y] = reinterpret_cast<png_bytep>(img.view().row(static_cast<int>(y)));
    if (!png_read_pixels(png, rows.data())) fail(ErrorCode::CorruptData, path, png_problem(f, err));
    return AnyImage(std::move(img));
}

}  // namespace

AnyImage read_png(const std::string& path, std::FILE* f, std::int64_t max_pixels) {
    unsigned char sig[8];
    if (std::fread(sig, 1, 8, f) != 8 || png_sig_cmp(sig, 0, 8) != 0)
        fail(ErrorCode::CorruptData, path, "not a PNG file (bad or missing signature)");
    // Check the size in IHDR (always the first chunk) before libpng allocates anything.
    unsigned char ihdr[16];
    if (std::fread(ihdr, 1, 16, f) == 16 && std::memcmp(ihdr + 4, "IHDR", 4) == 0)
        check_dimensions(path, load_u32(ihdr + 8, false), load_u32(ihdr + 12, false), max_pixels);
    if (std::fseek(f, 8, SEEK_SET) != 0)
        fail(ErrorCode::IoError, path, std::string("cannot seek: ") + std::strerror(errno));
    PngError err{};
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, on_error, on_warning);
    if (!png) fail(ErrorCode::OutOfMemory, path, "cannot create a libpng reader");
    png_infop info = png_create_info_struct(png);
    ReadGuard guard(png, info);
    if (!info) fail(ErrorCode::OutOfMemory, path, "cannot create a libpng info struct");
    PngHeader h;
    if (!png_read_header(png, info, f, &h)) fail(ErrorCode::CorruptData, path, png_problem(f, err));
    check_dimensions(path, h.width, h.height, max_pixels);
    if (h.channels < 1 || h.channels > 4 || (h.bit_depth != 8 && h.bit_depth != 16))
        fail(ErrorCode::UnsupportedFormat, path,
             "PNG with " + std::to_string(h.channels) + " channels of " +
                 std::to_string(h.bit_depth) + " bits is not supported");
    if (h.bit_depth == 8) return read_png_pixels<std::uint8_t>(path, f, png, h, err);
    return read_png_pixels<std::uint16_t>(path, f, png, h, err);
}

void check_write_png(const std::string& path, const detail::RawView& v, const WriteOptions& o) {
    if (v.type == PixelType::F32)
        fail(ErrorCode::UnsupportedFormat, path,
             "PNG cannot store " + describe(v) +
                 " images (allowed: u8 or u16, 1-4 channels; convert first, or use TIFF, PFM "
                 "or NPY for float)");
    if (o.png_compression < 0 || o.png_compression > 9)
        fail(ErrorCode::InvalidArgument, path,
             "png_compression " + std::to_string(o.png_compression) + " is not in 0..9");
}

void write_png(const std::string& path, std::FILE* f, const detail::RawView& v,
               const WriteOptions& o) {
    static constexpr int kColorTypes[] = {PNG_COLOR_TYPE_GRAY, PNG_COLOR_TYPE_GRAY_ALPHA,
                                          PNG_COLOR_TYPE_RGB, PNG_COLOR_TYPE_RGB_ALPHA};
    PngError err{};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err, on_error, on_warning);
    if (!png) fail(ErrorCode::OutOfMemory, path, "cannot create a libpng writer");
    png_infop info = png_create_info_struct(png);
    WriteGuard guard(png, info);
    if (!info) fail(ErrorCode::OutOfMemory, path, "cannot create a libpng info struct");
    const std::size_t elem = pixel_size(v.type);
    const PngWriteArgs args{static_cast<const unsigned char*>(v.data),
                            static_cast<std::size_t>(v.stride) * elem,
                            static_cast<png_uint_32>(v.width),
                            static_cast<png_uint_32>(v.height),
                            static_cast<int>(elem * 8),
                            kColorTypes[v.channels - 1],
                            o.png_compression};
    if (!png_write_all(png, info, f, &args)) {
        const int e = errno;
        fail(ErrorCode::IoError, path,
             std::string("PNG write failed: ") + err.message +
                 (std::ferror(f) ? std::string(" (") + std::strerror(e) + ")" : std::string()));
    }
}

}  // namespace upres::io_detail
