// Internal helpers shared by the image readers and writers (not installed).
#pragma once

#include <upres/io.hpp>

#include <cstdint>
#include <cstdio>
#include <string>

namespace upres::io_detail {

// Error whose message is "<path>: <what>".
[[noreturn]] void fail(ErrorCode code, const std::string& path, const std::string& what);

// Refuses zero-sized images and sizes over kMaxDimension / kMaxPixels (CorruptData naming the
// file, the size and the limit). Called by every reader before it allocates pixels.
// Error(CorruptData) for an empty size or one beyond kMaxDimension per side; Error(
// UnsupportedFormat) beyond max_pixels (ReadOptions::max_pixels), before anything is allocated.
// larger: what to use for larger images of this format, appended to the size errors.
void check_dimensions(const std::string& path, std::int64_t width, std::int64_t height,
                      std::int64_t max_pixels, const char* larger = nullptr);

// Refuses a side a row-wise reader's header declares outside [1, max] (CorruptData "<format>
// <what> <v> is outside [1, <max>]<note>").
void check_side(const std::string& path, const char* format, std::int64_t v, const char* what,
                int max, const char* note = "");

// Bytes left in f from its current position to the end (-1 if the file is not seekable).
std::int64_t bytes_left(std::FILE* f);

// Refuses a file too short for `needed` bytes of pixel data (CorruptData), so that a small
// file claiming a large size never causes a large allocation.
void check_bytes_left(const std::string& path, std::FILE* f, std::int64_t needed);

// A temporary file for scratch data, open for reading and writing, with no name (created in
// TMPDIR or /tmp and unlinked at once, or made with O_TMPFILE): it is gone when closed or when
// the process ends, however it ends. -1 if it cannot be made.
int open_temporary_file() noexcept;
// Exactly n bytes at `offset` of fd, retrying short transfers and EINTR; false on any error
// (a full disk, an I/O error, end of file).
bool pread_all(int fd, void* dst, std::size_t n, std::int64_t offset) noexcept;
bool pwrite_all(int fd, const void* src, std::size_t n, std::int64_t offset) noexcept;

// Test hooks of TiffRowReader: the bytes each of a reader's caches keeps (0: the default,
// 64 MiB), and the strips and tiles every reader has decoded, and written to its scratch file,
// so far.
void set_tiff_cache_bytes(std::size_t bytes) noexcept;
std::int64_t tiff_blocks_decoded() noexcept;
std::int64_t tiff_blocks_spilled() noexcept;

// Reads exactly n bytes or throws CorruptData ("truncated ...") / IoError (read error).
void read_exact(const std::string& path, std::FILE* f, void* dst, std::size_t n, const char* what);
// Writes exactly n bytes or throws IoError.
void write_exact(const std::string& path, std::FILE* f, const void* src, std::size_t n);

// Per-format readers: f is open for reading at offset 0.
AnyImage read_png(const std::string& path, std::FILE* f, std::int64_t max_pixels);
AnyImage read_jpeg(const std::string& path, std::FILE* f, std::int64_t max_pixels);
AnyImage read_tiff(const std::string& path, std::FILE* f, std::int64_t max_pixels);
AnyImage read_pfm(const std::string& path, std::FILE* f, std::int64_t max_pixels);
AnyImage read_pnm(const std::string& path, std::FILE* f, std::int64_t max_pixels);
AnyImage read_npy(const std::string& path, std::FILE* f, std::int64_t max_pixels);

// Per-format checks run before any file is created: throw UnsupportedFormat (pixel type or
// channel count the format cannot store) or InvalidArgument (bad option).
void check_write_png(const std::string& path, const detail::RawView& v, const WriteOptions& o);
void check_write_jpeg(const std::string& path, const detail::RawView& v, const WriteOptions& o);
void check_write_tiff(const std::string& path, const detail::RawView& v);
void check_write_pfm(const std::string& path, const detail::RawView& v);
void check_write_pnm(const std::string& path, const detail::RawView& v);
void check_write_npy(const std::string& path, const detail::RawView& v);

// Per-format writers: `f` is the temporary file (opened "wb"), `path` the final target (used in
// messages). They throw on failure; the caller removes the temporary file.
void write_png(const std::string& path, std::FILE* f, const detail::RawView& v,
               const WriteOptions& o);
void write_jpeg(const std::string& path, std::FILE* f, const detail::RawView& v,
                const WriteOptions& o);
void write_tiff(const std::string& path, std::FILE* f, const detail::RawView& v);
void write_pfm(const std::string& path, std::FILE* f, const detail::RawView& v);
void write_pnm(const std::string& path, std::FILE* f, const detail::RawView& v);
void write_npy(const std::string& path, std::FILE* f, const detail::RawView& v);

// "37 x 5 x 3 u8" for messages.
std::string describe(const detail::RawView& v);

// Little/big-endian loads and stores (portable, independent of the host byte order).
inline std::uint16_t load_u16(const unsigned char* p, bool little) {
    return little ? static_cast<std::uint16_t>(p[0] | (p[1] << 8))
                  : static_cast<std::uint16_t>((p[0] << 8) | p[1]);
}
inline void store_u16(unsigned char* p, std::uint16_t v, bool little) {
    const auto lo = static_cast<unsigned char>(v & 0xff), hi = static_cast<unsigned char>(v >> 8);
    p[0] = little ? lo : hi;
    p[1] = little ? hi : lo;
}
std::uint32_t load_u32(const unsigned char* p, bool little);
void store_u32(unsigned char* p, std::uint32_t v, bool little);
float load_f32(const unsigned char* p, bool little);
void store_f32(unsigned char* p, float v, bool little);

}  // namespace upres::io_detail
