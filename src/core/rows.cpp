// ViewRowSource / ViewRowSink (upres/rows.hpp): host images as row sources and sinks.
#include <upres/rows.hpp>

#include <cstring>
#include <string>

namespace upres {

namespace {
void check_rows(const detail::RawView& v, int y0, int rows, const char* what) {
    if (y0 < 0 || rows < 0 || y0 + rows > v.height)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(what) + ": rows [" + std::to_string(y0) + ", " +
                        std::to_string(y0 + rows) + ") are outside the image's " +
                        std::to_string(v.height) + " rows");
}
void check_host(const detail::RawView& v, const char* what) {
    if (v.location != Location::Host || v.data == nullptr || v.width < 1 || v.height < 1)
        throw Error(ErrorCode::InvalidArgument,
                    std::string(what) + " needs a non-empty image in host memory");
}
}  // namespace

ViewRowSource::ViewRowSource(const detail::RawView& v) : v_(v) { check_host(v, "ViewRowSource"); }

void ViewRowSource::read_rows(int y0, int rows, void* dst, std::ptrdiff_t stride) {
    check_rows(v_, y0, rows, "ViewRowSource");
    const std::size_t px = pixel_size(v_.type);
    for (int y = 0; y < rows; ++y)
        std::memcpy(static_cast<char*>(dst) + static_cast<std::ptrdiff_t>(y) * stride * px,
                    static_cast<const char*>(v_.data) +
                        static_cast<std::ptrdiff_t>(y0 + y) * v_.stride * px,
                    static_cast<std::size_t>(v_.width) * v_.channels * px);
}

ViewRowSink::ViewRowSink(const detail::RawView& v) : v_(v) { check_host(v, "ViewRowSink"); }

void ViewRowSink::write_rows(int y0, int rows, const void* src, std::ptrdiff_t stride) {
    check_rows(v_, y0, rows, "ViewRowSink");
    const std::size_t px = pixel_size(v_.type);
    for (int y = 0; y < rows; ++y)
        std::memcpy(
            static_cast<char*>(v_.data) + static_cast<std::ptrdiff_t>(y0 + y) * v_.stride * px,
            static_cast<const char*>(src) + static_cast<std::ptrdiff_t>(y) * stride * px,
            static_cast<std::size_t>(v_.width) * v_.channels * px);
}

}  // namespace upres
