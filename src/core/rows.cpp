// ViewRowSource / ViewRowSink (upres/rows.hpp): host images as row sources and sinks.
#include <upres/rows.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace upres {

namespace {
// Rows [y0, y0 + rows) of the image inside the rows [first, first + v.height) the view holds.
void check_rows(const detail::RawView& v, int first, int y0, int rows, const char* what) {
    if (y0 < first || rows < 0 || std::int64_t{y0} + rows > std::int64_t{first} + v.height)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(what) + ": rows [" + std::to_string(y0) + ", " +
                        std::to_string(std::int64_t{y0} + rows) + ") are outside the rows [" +
                        std::to_string(first) + ", " + std::to_string(first + v.height) +
                        ") it holds");
}
void check_host(const detail::RawView& v, const char* what) {
    if (v.location != Location::Host || v.data == nullptr || v.width < 1 || v.height < 1)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(what) + " needs a non-empty image in host memory");
}
}  // namespace

void RowSource::read_box(int x0, int y0, int w, int h, void* dst, std::ptrdiff_t stride) {
    if (x0 < 0 || y0 < 0 || w < 1 || h < 1 || std::int64_t{x0} + w > width() ||
        std::int64_t{y0} + h > height())
        throw Error(ErrorCode::InvalidArgument,
                    "read_box: the box of " + std::to_string(w) + " x " + std::to_string(h) +
                        " pixels at (" + std::to_string(x0) + ", " + std::to_string(y0) +
                        ") is not inside the " + std::to_string(width()) + " x " +
                        std::to_string(height()) + " image");
    const std::size_t px = pixel_size(type());
    const std::size_t c = static_cast<std::size_t>(channels());
    const std::size_t row_bytes = static_cast<std::size_t>(w) * c * px;
    auto* out = static_cast<unsigned char*>(dst);
    const auto copy = [&](const unsigned char* rows, std::ptrdiff_t rstride, int first, int n) {
        for (int y = 0; y < n; ++y)
            std::memcpy(out + static_cast<std::ptrdiff_t>(first + y) * stride * px,
                        rows + static_cast<std::ptrdiff_t>(y) * rstride * px + x0 * c * px,
                        row_bytes);
    };
    std::ptrdiff_t st = 0;
    if (const void* p = rows_in_memory(y0, h, &st)) {
        copy(static_cast<const unsigned char*>(p), st, 0, h);
        return;
    }
    const std::ptrdiff_t full = std::ptrdiff_t{width()} * channels();
    const int chunk = static_cast<int>(std::clamp<std::int64_t>(
        (std::int64_t{8} << 20) / (full * static_cast<std::int64_t>(px)), 1, h));
    std::vector<unsigned char> buf(static_cast<std::size_t>(chunk) * full * px);
    for (int y = 0; y < h; y += chunk) {
        const int n = std::min(chunk, h - y);
        read_rows(y0 + y, n, buf.data(), full);
        copy(buf.data(), full, y, n);
    }
}

ViewRowSource::ViewRowSource(const detail::RawView& v) : ViewRowSource(v, 0, v.height) {}

ViewRowSource::ViewRowSource(const detail::RawView& rows, int first_row, int height)
    : v_(rows), first_(first_row), height_(height) {
    check_host(rows, "ViewRowSource");
    if (first_row < 0 || std::int64_t{first_row} + rows.height > height)
        throw Error(ErrorCode::InvalidArgument,
                    "ViewRowSource: rows [" + std::to_string(first_row) + ", " +
                        std::to_string(std::int64_t{first_row} + rows.height) +
                        ") are not inside an image of " + std::to_string(height) + " rows");
}

void ViewRowSource::read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) {
    check_rows(v_, first_, y0, rows, "ViewRowSource");
    y0 -= first_;
    const std::size_t px = pixel_size(v_.type);
    for (int y = 0; y < rows; ++y)
        std::memcpy(static_cast<char*>(dst) + static_cast<std::ptrdiff_t>(y) * stride * px,
                    static_cast<const char*>(v_.data) +
                        static_cast<std::ptrdiff_t>(y0 + y) * v_.stride * px,
                    static_cast<std::size_t>(v_.width) * v_.channels * px);
}

const void* ViewRowSource::rows_in_memory(int y0, int rows, std::ptrdiff_t* stride) const {
    check_rows(v_, first_, y0, rows, "ViewRowSource");
    *stride = v_.stride;
    return static_cast<const char*>(v_.data) +
           static_cast<std::ptrdiff_t>(y0 - first_) * v_.stride * pixel_size(v_.type);
}

ViewRowSink::ViewRowSink(const detail::RawView& v, int first_row) : v_(v), first_(first_row) {
    check_host(v, "ViewRowSink");
    if (first_row < 0)
        throw Error(ErrorCode::InvalidArgument,
                    "ViewRowSink: first_row " + std::to_string(first_row) + " is negative");
}

void* ViewRowSink::rows_in_memory(int y0, int rows, std::ptrdiff_t* stride) {
    check_rows(v_, first_, y0, rows, "ViewRowSink");
    *stride = v_.stride;
    return static_cast<char*>(v_.data) +
           static_cast<std::ptrdiff_t>(y0 - first_) * v_.stride * pixel_size(v_.type);
}

void ViewRowSink::write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) {
    check_rows(v_, first_, y0, rows, "ViewRowSink");
    y0 -= first_;
    const void* here = static_cast<const char*>(v_.data) +
                       static_cast<std::ptrdiff_t>(y0) * v_.stride * pixel_size(v_.type);
    if (src == here && stride == v_.stride) return;  // computed in place (rows_in_memory)
    const std::size_t px = pixel_size(v_.type);
    for (int y = 0; y < rows; ++y)
        std::memcpy(
            static_cast<char*>(v_.data) + static_cast<std::ptrdiff_t>(y0 + y) * v_.stride * px,
            static_cast<const char*>(src) + static_cast<std::ptrdiff_t>(y) * stride * px,
            static_cast<std::size_t>(v_.width) * v_.channels * px);
}

}  // namespace upres
