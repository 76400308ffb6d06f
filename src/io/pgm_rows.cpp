// PgmRowReader / PgmRowWriter (upres/io.hpp): binary 8-bit PGM row by row, for images larger
// than memory. The header is parsed by the same HeaderReader as read_image's PNM reader.
#include <upres/io.hpp>

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/atomic_file.hpp"
#include "io/header_parse.hpp"
#include "io/io_internal.hpp"

namespace upres {

using io_detail::check_side;
using io_detail::fail;

namespace {

void check_rows(const std::string& path, ImageView<const std::uint8_t> rows, int width, int left) {
    if (rows.height() == 0) return;
    if (rows.data() == nullptr || rows.on_device() || rows.channels() != 1 || rows.width() != width)
        fail(ErrorCode::InvalidArgument, path,
             "rows must be " + std::to_string(width) + " wide, 1 channel, in host memory (got " +
                 std::to_string(rows.width()) + " x " + std::to_string(rows.height()) + " x " +
                 std::to_string(rows.channels()) + ")");
    if (rows.height() > left)
        fail(
            ErrorCode::InvalidArgument, path,
            std::to_string(rows.height()) + " rows but only " + std::to_string(left) + " are left");
}

}  // namespace

PgmRowReader::PgmRowReader(const std::string& path) : path_(path) {
    struct stat st;
    if (::stat(path.c_str(), &st) != 0)
        fail(ErrorCode::IoError, path, std::string("cannot open: ") + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) fail(ErrorCode::IoError, path, "cannot read: is a directory");
    file_ = std::fopen(path.c_str(), "rb");
    if (!file_) fail(ErrorCode::IoError, path, std::string("cannot open: ") + std::strerror(errno));
    try {
        io_detail::HeaderReader hr(path, file_, "PNM", true);
        const std::string magic = hr.token("magic number");
        if (magic != "P5") {
            const bool pnm =
                magic.size() == 2 && magic[0] == 'P' && magic[1] >= '1' && magic[1] <= '7';
            fail(pnm ? ErrorCode::UnsupportedFormat : ErrorCode::CorruptData, path,
                 (pnm ? "PNM type " + magic + " is not a binary gray PGM"
                      : std::string("not a PGM file (bad magic number)")) +
                     " (streaming reads P5 with maxval 255)");
        }
        const long long w = hr.integer("width");
        const long long h = hr.integer("height");
        const long long maxval = hr.integer("maxval");
        hr.expect_data_start("maxval");
        if (maxval != 255)
            fail(ErrorCode::UnsupportedFormat, path,
                 "PGM maxval " + std::to_string(maxval) + " (streaming reads 8-bit: maxval 255)");
        check_side(path, "PGM", w, "width", kMaxDimension);
        check_side(path, "PGM", h, "height", kMaxDimension);
        width_ = static_cast<int>(w);
        height_ = static_cast<int>(h);
        io_detail::check_bytes_left(path, file_, static_cast<std::int64_t>(w) * h);
    } catch (...) {
        std::fclose(file_);
        file_ = nullptr;
        throw;
    }
}

PgmRowReader::~PgmRowReader() {
    if (file_) std::fclose(file_);
}

void PgmRowReader::read(ImageView<std::uint8_t> rows) {
    check_rows(path_, rows, width_, height_ - rows_);
    for (int y = 0; y < rows.height(); ++y)
        io_detail::read_exact(path_, file_, rows.row(y), static_cast<std::size_t>(width_),
                              "PGM pixel data");
    rows_ += rows.height();
}

struct PgmRowWriter::Impl {
    std::string path;
    int width, height;
    detail::AtomicFile file;
    Impl(const std::string& p, int w, int h) : path(p), width(w), height(h), file(p) {}
};

PgmRowWriter::PgmRowWriter(const std::string& path, int width, int height) {
    check_side(path, "PGM", width, "width", kMaxDimension);
    check_side(path, "PGM", height, "height", kMaxDimension);
    impl_ = std::make_unique<Impl>(path, width, height);
    const std::string header =
        "P5\n" + std::to_string(width) + " " + std::to_string(height) + "\n255\n";
    io_detail::write_exact(path, impl_->file.file(), header.data(), header.size());
}

PgmRowWriter::~PgmRowWriter() = default;

void PgmRowWriter::write(ImageView<const std::uint8_t> rows) {
    check_rows(impl_->path, rows, impl_->width, impl_->height - rows_);
    for (int y = 0; y < rows.height(); ++y)
        io_detail::write_exact(impl_->path, impl_->file.file(), rows.row(y),
                               static_cast<std::size_t>(impl_->width));
    rows_ += rows.height();
}

void PgmRowWriter::commit() {
    if (rows_ != impl_->height)
        fail(ErrorCode::InvalidArgument, impl_->path,
             "commit after " + std::to_string(rows_) + " of " + std::to_string(impl_->height) +
                 " rows");
    impl_->file.commit();
}

}  // namespace upres
