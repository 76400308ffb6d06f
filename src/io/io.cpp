// read_image / write_image: format dispatch, file opening and the atomic-write helper.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "core/atomic_file.hpp"
#include "io/io_internal.hpp"

namespace upres {
namespace io_detail {

void fail(ErrorCode code, const std::string& path, const std::string& what) {
    throw Error(code, path + ": " + what);
}

void check_side(const std::string& path, const char* format, std::int64_t v, const char* what,
                int max, const char* note) {
    if (v < 1 || v > max)
        fail(ErrorCode::CorruptData, path,
             std::string(format) + " " + what + " " + std::to_string(v) + " is outside [1, " +
                 std::to_string(max) + "]" + note);
}

void check_dimensions(const std::string& path, std::int64_t width, std::int64_t height,
                      std::int64_t max_pixels, const char* larger) {
    const std::string size = std::to_string(width) + " x " + std::to_string(height);
    const std::string hint = larger ? std::string("; ") + larger : std::string();
    if (width <= 0 || height <= 0)
        fail(ErrorCode::CorruptData, path, "image size " + size + " is empty or negative");
    if (width > kMaxDimension || height > kMaxDimension)
        fail(ErrorCode::CorruptData, path,
             "image size " + size + " exceeds the limit of " + std::to_string(kMaxDimension) +
                 " pixels per side" + hint);
    if (width * height > kMaxPixels)
        fail(ErrorCode::CorruptData, path,
             "image size " + size + " exceeds the limit of " + std::to_string(kMaxPixels) +
                 " pixels" + hint);
    if (width * height > max_pixels)
        fail(ErrorCode::UnsupportedFormat, path,
             "image size " + size + " (" + std::to_string(width * height) +
                 " pixels) exceeds the limit of " + std::to_string(max_pixels) +
                 " pixels set for reading (ReadOptions::max_pixels, --max-pixels)");
}

std::int64_t bytes_left(std::FILE* f) {
    const long pos = std::ftell(f);
    if (pos < 0) return -1;
    if (std::fseek(f, 0, SEEK_END) != 0) return -1;
    const long end = std::ftell(f);
    if (std::fseek(f, pos, SEEK_SET) != 0 || end < 0) return -1;
    return static_cast<std::int64_t>(end) - pos;
}

void check_bytes_left(const std::string& path, std::FILE* f, std::int64_t needed) {
    const std::int64_t left = bytes_left(f);
    if (left >= 0 && left < needed)
        fail(ErrorCode::CorruptData, path,
             "truncated: pixel data needs " + std::to_string(needed) + " bytes but only " +
                 std::to_string(left) + " remain");
}

void read_exact(const std::string& path, std::FILE* f, void* dst, std::size_t n, const char* what) {
    const std::size_t got = std::fread(dst, 1, n, f);
    if (got == n) return;
    if (std::ferror(f))
        fail(ErrorCode::IoError, path,
             std::string("read error in ") + what + ": " + std::strerror(errno));
    fail(ErrorCode::CorruptData, path,
         std::string("truncated ") + what + " (read " + std::to_string(got) + " of " +
             std::to_string(n) + " bytes)");
}

void write_exact(const std::string& path, std::FILE* f, const void* src, std::size_t n) {
    if (n == 0) return;
    if (std::fwrite(src, 1, n, f) != n)
        fail(ErrorCode::IoError, path, std::string("write failed: ") + std::strerror(errno));
}

std::string describe(const detail::RawView& v) {
    return std::to_string(v.width) + " x " + std::to_string(v.height) + " x " +
           std::to_string(v.channels) + " " + to_string(v.type);
}

std::uint32_t load_u32(const unsigned char* p, bool little) {
    if (little)
        return std::uint32_t{p[0]} | (std::uint32_t{p[1]} << 8) | (std::uint32_t{p[2]} << 16) |
               (std::uint32_t{p[3]} << 24);
    return std::uint32_t{p[3]} | (std::uint32_t{p[2]} << 8) | (std::uint32_t{p[1]} << 16) |
           (std::uint32_t{p[0]} << 24);
}
void store_u32(unsigned char* p, std::uint32_t v, bool little) {
    for (int i = 0; i < 4; ++i) {
        const auto b = static_cast<unsigned char>((v >> (8 * i)) & 0xff);
        p[little ? i : 3 - i] = b;
    }
}
float load_f32(const unsigned char* p, bool little) {
    const std::uint32_t u = load_u32(p, little);
    float f;
    std::memcpy(&f, &u, 4);
    return f;
}
void store_f32(unsigned char* p, float v, bool little) {
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    store_u32(p, u, little);
}

int open_temporary_file() noexcept {
    const char* env = std::getenv("TMPDIR");
    const std::string dir = env && *env ? env : "/tmp";
#ifdef O_TMPFILE
    const int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd >= 0) return fd;
#endif
    std::string name = dir + "/upres-scratch-XXXXXX";
    const int named = ::mkostemp(name.data(), O_CLOEXEC);
    if (named < 0) return -1;
    ::unlink(name.c_str());
    return named;
}

namespace {
// Exactly n bytes at `offset` through `step` (pread or pwrite), retrying short transfers and EINTR.
template <class Byte, class Step>
bool transfer_all(Byte* p, std::size_t n, std::int64_t offset, Step step) noexcept {
    while (n > 0) {
        const ssize_t done = step(p, n, static_cast<off_t>(offset));
        if (done < 0 && errno == EINTR) continue;
        if (done <= 0) return false;
        p += done, n -= static_cast<std::size_t>(done), offset += done;
    }
    return true;
}
}  // namespace

bool pread_all(int fd, void* dst, std::size_t n, std::int64_t offset) noexcept {
    return transfer_all(
        static_cast<unsigned char*>(dst), n, offset,
        [fd](unsigned char* p, std::size_t k, off_t at) { return ::pread(fd, p, k, at); });
}

bool pwrite_all(int fd, const void* src, std::size_t n, std::int64_t offset) noexcept {
    return transfer_all(
        static_cast<const unsigned char*>(src), n, offset,
        [fd](const unsigned char* p, std::size_t k, off_t at) { return ::pwrite(fd, p, k, at); });
}

namespace {

struct FileCloser {
    void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using FilePtr = std::unique_ptr<std::FILE, FileCloser>;

using detail::AtomicFile;  // core/atomic_file.hpp (shared with the model writers)

FileFormat resolve(const std::string& path, FileFormat requested) {
    const FileFormat f = requested == FileFormat::Auto ? format_from_path(path) : requested;
    if (!format_supported(f))
        fail(ErrorCode::UnsupportedFormat, path,
             std::string("format ") + to_string(f) +
                 " is not available: this build of upres lacks libtiff");
    return f;
}

void write_raw(const std::string& path, const detail::RawView& v, const WriteOptions& o) {
    const FileFormat fmt = resolve(path, o.format);
    if (v.location != Location::Host)
        fail(ErrorCode::InvalidArgument, path,
             "cannot write an image in device memory (copy it to the host first)");
    if (v.width <= 0 || v.height <= 0 || !v.data)
        fail(ErrorCode::InvalidArgument, path,
             "cannot write an empty image (" + std::to_string(v.width) + " x " +
                 std::to_string(v.height) + ")");
    if (v.channels < 1 || v.channels > kMaxChannels)
        fail(ErrorCode::InvalidArgument, path,
             "channel count " + std::to_string(v.channels) + " is not 1..4");
    switch (fmt) {
        case FileFormat::Png:
            check_write_png(path, v, o);
            break;
        case FileFormat::Jpeg:
            check_write_jpeg(path, v, o);
            break;
        case FileFormat::Tiff:
            check_write_tiff(path, v);
            break;
        case FileFormat::Pfm:
            check_write_pfm(path, v);
            break;
        case FileFormat::Pnm:
            check_write_pnm(path, v);
            break;
        case FileFormat::Npy:
            check_write_npy(path, v);
            break;
        case FileFormat::Auto:
            break;
    }
    AtomicFile out(path);
    switch (fmt) {
        case FileFormat::Png:
            write_png(path, out.file(), v, o);
            break;
        case FileFormat::Jpeg:
            write_jpeg(path, out.file(), v, o);
            break;
        case FileFormat::Tiff:
            write_tiff(path, out.file(), v);
            break;
        case FileFormat::Pfm:
            write_pfm(path, out.file(), v);
            break;
        case FileFormat::Pnm:
            write_pnm(path, out.file(), v);
            break;
        case FileFormat::Npy:
            write_npy(path, out.file(), v);
            break;
        case FileFormat::Auto:
            break;
    }
    out.commit();
}

}  // namespace
}  // namespace io_detail

using io_detail::fail;

AnyImage read_image(const std::string& path, const ReadOptions& opts) {
    const FileFormat fmt = io_detail::resolve(path, opts.format);
    if (opts.max_pixels < 1 || opts.max_pixels > kMaxPixels)
        throw Error(ErrorCode::InvalidArgument,
                    "read_image: max_pixels " + std::to_string(opts.max_pixels) +
                        " is outside [1, " + std::to_string(kMaxPixels) + "]");
    const std::int64_t limit = opts.max_pixels;
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        fail(ErrorCode::IoError, path, std::string("cannot open: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) fail(ErrorCode::IoError, path, "cannot read: is a directory");
    io_detail::FilePtr f(std::fopen(path.c_str(), "rb"));
    if (!f) fail(ErrorCode::IoError, path, std::string("cannot open: ") + std::strerror(errno));
    switch (fmt) {
        case FileFormat::Png:
            return io_detail::read_png(path, f.get(), limit);
        case FileFormat::Jpeg:
            return io_detail::read_jpeg(path, f.get(), limit);
        case FileFormat::Tiff:
            return io_detail::read_tiff(path, f.get(), limit);
        case FileFormat::Pfm:
            return io_detail::read_pfm(path, f.get(), limit);
        case FileFormat::Pnm:
            return io_detail::read_pnm(path, f.get(), limit);
        case FileFormat::Npy:
            return io_detail::read_npy(path, f.get(), limit);
        case FileFormat::Auto:
            break;
    }
    fail(ErrorCode::Internal, path, "no reader for the format");
}

void write_image(const std::string& path, ImageView<const std::uint8_t> img,
                 const WriteOptions& opts) {
    io_detail::write_raw(path, img.raw(), opts);
}
void write_image(const std::string& path, ImageView<const std::uint16_t> img,
                 const WriteOptions& opts) {
    io_detail::write_raw(path, img.raw(), opts);
}
void write_image(const std::string& path, ImageView<const float> img, const WriteOptions& opts) {
    io_detail::write_raw(path, img.raw(), opts);
}
void write_image(const std::string& path, const AnyImage& img, const WriteOptions& opts) {
    std::visit([&](const auto& im) { io_detail::write_raw(path, im.view().raw(), opts); },
               img.variant());
}

}  // namespace upres
