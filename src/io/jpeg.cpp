// JPEG reading and writing with libjpeg(-turbo). error_exit longjmps back into the function
// that called setjmp; those functions hold only trivially destructible locals, so the jump
// never skips a C++ destructor. Warnings are recorded, not printed; a premature end of file
// (which libjpeg only warns about, padding the image with gray) is treated as an error.
#include <cstdio>
// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

#include <sys/stat.h>
#include <cerrno>

#include <algorithm>
#include <csetjmp>
#include <cstring>
#include <string>

#include "io/io_internal.hpp"

namespace upres::io_detail {
namespace {

struct JpegError {
    jpeg_error_mgr mgr;  // first member: libjpeg's err pointer is cast back to JpegError
    std::jmp_buf jump;
    char message[JMSG_LENGTH_MAX];
};

void on_error_exit(j_common_ptr cinfo) {
    auto* e = reinterpret_cast<JpegError*>(cinfo->err);
    (*cinfo->err->format_message)(cinfo, e->message);
    std::longjmp(e->jump, 1);
}

void on_emit_message(j_common_ptr cinfo, int level) {
    if (level >= 0) return;  // trace messages
    if (cinfo->err->msg_code == JWRN_JPEG_EOF) on_error_exit(cinfo);
    cinfo->err->num_warnings++;
}

void init_error(JpegError* e) {
    jpeg_std_error(&e->mgr);
    e->mgr.error_exit = on_error_exit;
    e->mgr.emit_message = on_emit_message;
    e->message[0] = '\0';
}

bool jpeg_header(jpeg_decompress_struct* cinfo, JpegError* err, std::FILE* f) {
    if (setjmp(err->jump)) return false;
    jpeg_create_decompress(cinfo);
    jpeg_stdio_src(cinfo, f);
    jpeg_read_header(cinfo, TRUE);
    return true;
}

// out_color_space must be set by the caller. A progressive or multi-scan file is read whole
// here (into libjpeg's coefficient buffers), before the caller allocates the output.
bool jpeg_start(jpeg_decompress_struct* cinfo, JpegError* err) {
    if (setjmp(err->jump)) return false;
    jpeg_start_decompress(cinfo);
    return true;
}

// Decodes into rows of `stride_bytes`.
bool jpeg_pixels(jpeg_decompress_struct* cinfo, JpegError* err, unsigned char* data,
                 std::size_t stride_bytes) {
    if (setjmp(err->jump)) return false;
    while (cinfo->output_scanline < cinfo->output_height) {
        JSAMPROW row = data + static_cast<std::size_t>(cinfo->output_scanline) * stride_bytes;
        jpeg_read_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_decompress(cinfo);
    return true;
}

struct JpegWriteArgs {
    const unsigned char* data;
    std::size_t stride_bytes;
    int width, height, channels, quality;
};

bool jpeg_write_all(jpeg_compress_struct* cinfo, JpegError* err, std::FILE* f,
                    const JpegWriteArgs* a) {
    if (setjmp(err->jump)) return false;
    jpeg_create_compress(cinfo);
    jpeg_stdio_dest(cinfo, f);
    cinfo->image_width = static_cast<JDIMENSION>(a->width);
    cinfo->image_height = static_cast<JDIMENSION>(a->height);
    cinfo->input_components = a->channels;
    cinfo->in_color_space = a->channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(cinfo);
    jpeg_set_quality(cinfo, a->quality, TRUE);
    if (a->channels == 3 && a->quality >= 90) {
        // Full-resolution chroma (4:4:4) for high qualities.
        for (int i = 0; i < cinfo->num_components; ++i) {
            cinfo->comp_info[i].h_samp_factor = 1;
            cinfo->comp_info[i].v_samp_factor = 1;
        }
    }
    jpeg_start_compress(cinfo, TRUE);
    while (cinfo->next_scanline < cinfo->image_height) {
        // libjpeg's API takes non-const rows but does not modify them.
        JSAMPROW row = const_cast<unsigned char*>(a->data) +
                       static_cast<std::size_t>(cinfo->next_scanline) * a->stride_bytes;
        jpeg_write_scanlines(cinfo, &row, 1);
    }
    jpeg_finish_compress(cinfo);
    return true;
}

class DecompressGuard {
  public:
    explicit DecompressGuard(jpeg_decompress_struct* c) : c_(c) {}
    ~DecompressGuard() { jpeg_destroy_decompress(c_); }
    DecompressGuard(const DecompressGuard&) = delete;
    DecompressGuard& operator=(const DecompressGuard&) = delete;

  private:
    jpeg_decompress_struct* c_;
};

std::string color_space_name(J_COLOR_SPACE cs) {
    switch (cs) {
        case JCS_CMYK:
            return "CMYK";
        case JCS_YCCK:
            return "YCCK";
        default:
            return "color space " + std::to_string(static_cast<int>(cs));
    }
}

}  // namespace

AnyImage read_jpeg(const std::string& path, std::FILE* f, std::int64_t max_pixels) {
    JpegError err;
    init_error(&err);
    jpeg_decompress_struct cinfo;
    std::memset(&cinfo, 0, sizeof(cinfo));
    cinfo.err = &err.mgr;
    // jpeg_destroy_decompress is safe on a zeroed or partially created struct.
    DecompressGuard guard(&cinfo);
    if (!jpeg_header(&cinfo, &err, f))
        fail(ErrorCode::CorruptData, path, std::string("corrupt JPEG: ") + err.message);
    check_dimensions(path, cinfo.image_width, cinfo.image_height, max_pixels);
    int channels = 0;
    switch (cinfo.jpeg_color_space) {
        case JCS_GRAYSCALE:
            cinfo.out_color_space = JCS_GRAYSCALE;
            channels = 1;
            break;
        case JCS_YCbCr:
        case JCS_RGB:
            cinfo.out_color_space = JCS_RGB;
            channels = 3;
            break;
        default:
            fail(ErrorCode::UnsupportedFormat, path,
                 "JPEG in " + color_space_name(cinfo.jpeg_color_space) +
                     " is not supported (allowed: grayscale and YCbCr/RGB)");
    }
    // libjpeg's own working memory: a progressive or multi-scan file keeps every coefficient of
    // the image (about 2 bytes per sample) while it decodes. A file far smaller than that is a
    // decompression bomb (a 311-byte file asked for 2.4 GB under fuzzing): the decoder's memory
    // is bounded by 64 MiB plus 1024 bytes per byte of the file (progressive photos need 10-60,
    // a flat grey 4096^2 progressive file 512); past it libjpeg-turbo stops (no backing store).
    struct stat st;
    const std::int64_t file_bytes = ::fstat(::fileno(f), &st) == 0 ? st.st_size : 0;
    const std::int64_t budget =
        (std::int64_t{64} << 20) + 1024 * std::min<std::int64_t>(file_bytes, std::int64_t{1} << 40);
    cinfo.mem->max_memory_to_use = static_cast<long>(budget);
    const auto refuse = [&] {
        if (std::strstr(err.message, "ackin") != nullptr)  // "Backing store not supported"
            fail(ErrorCode::UnsupportedFormat, path,
                 "this multi-scan JPEG needs more than " + std::to_string(budget >> 20) +
                     " MiB of decoder memory for a " + std::to_string(file_bytes) +
                     "-byte file (64 MiB + 1024 bytes per byte of file): refused as a "
                     "decompression bomb");
        fail(ErrorCode::CorruptData, path,
             std::string("corrupt or truncated JPEG: ") + err.message);
    };
    // Started before the output is allocated: a bomb or a corrupt multi-scan file is refused
    // without touching gigabytes of pixels.
    if (!jpeg_start(&cinfo, &err)) refuse();
    Image<std::uint8_t> img(static_cast<int>(cinfo.image_width),
                            static_cast<int>(cinfo.image_height), channels);
    if (!jpeg_pixels(&cinfo, &err, img.data(), static_cast<std::size_t>(img.stride()))) refuse();
    if (static_cast<int>(cinfo.output_components) != channels ||
        cinfo.output_width != cinfo.image_width || cinfo.output_height != cinfo.image_height)
        fail(ErrorCode::Internal, path, "libjpeg decoded an unexpected layout");
    return AnyImage(std::move(img));
}

void check_write_jpeg(const std::string& path, const detail::RawView& v, const WriteOptions& o) {
    if (v.type != PixelType::U8 || (v.channels != 1 && v.channels != 3))
        fail(ErrorCode::UnsupportedFormat, path,
             "JPEG cannot store " + describe(v) +
                 " images (allowed: u8 with 1 or 3 channels; convert first)");
    if (o.jpeg_quality < 1 || o.jpeg_quality > 100)
        fail(ErrorCode::InvalidArgument, path,
             "jpeg_quality " + std::to_string(o.jpeg_quality) + " is not in 1..100");
}

void write_jpeg(const std::string& path, std::FILE* f, const detail::RawView& v,
                const WriteOptions& o) {
    JpegError err;
    init_error(&err);
    jpeg_compress_struct cinfo;
    std::memset(&cinfo, 0, sizeof(cinfo));
    cinfo.err = &err.mgr;
    const JpegWriteArgs args{static_cast<const unsigned char*>(v.data),
                             static_cast<std::size_t>(v.stride),
                             v.width,
                             v.height,
                             v.channels,
                             o.jpeg_quality};
    const bool ok = jpeg_write_all(&cinfo, &err, f, &args);
    const int e = errno;
    jpeg_destroy_compress(&cinfo);
    if (!ok)
        fail(ErrorCode::IoError, path,
             std::string("JPEG write failed: ") + err.message +
                 (std::ferror(f) ? std::string(" (") + std::strerror(e) + ")" : std::string()));
}

}  // namespace upres::io_detail
