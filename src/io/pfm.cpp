// PFM (Portable Float Map): "Pf" gray or "PF" RGB, 32-bit float. The scale's sign gives the
// byte order (negative: little-endian), and rows are stored bottom to top.
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/header_parse.hpp"
#include "io/io_internal.hpp"

namespace upres::io_detail {

AnyImage read_pfm(const std::string& path, std::FILE* f, std::int64_t max_pixels) {
    HeaderReader hr(path, f, "PFM", false);
    const std::string magic = hr.token("magic number");
    int channels = 0;
    if (magic == "Pf")
        channels = 1;
    else if (magic == "PF")
        channels = 3;
    else
        fail(ErrorCode::CorruptData, path,
             "not a PFM file (magic '" + magic.substr(0, 8) + "', expected 'Pf' or 'PF')");
    const long long w = hr.integer("width");
    const long long h = hr.integer("height");
    const std::string scale_tok = hr.token("scale");
    char* end = nullptr;
    const double scale = std::strtod(scale_tok.c_str(), &end);
    if (end == scale_tok.c_str() || *end != '\0' || !std::isfinite(scale) || scale == 0.0)
        hr.bad("scale (must be a non-zero number; its sign gives the byte order)", scale_tok);
    hr.expect_data_start("scale");
    check_dimensions(path, w, h, max_pixels);
    const bool little = scale < 0;
    const std::size_t row_values = static_cast<std::size_t>(w) * channels;
    check_bytes_left(path, f, static_cast<std::int64_t>(row_values) * 4 * h);
    Image<float> img(static_cast<int>(w), static_cast<int>(h), channels);
    std::vector<unsigned char> buf(row_values * 4);
    for (long long r = 0; r < h; ++r) {
        read_exact(path, f, buf.data(), buf.size(), "PFM pixel data");
        float* row = img.view().row(static_cast<int>(h - 1 - r));  // bottom row first
        for (std::size_t i = 0; i < row_values; ++i) row[i] = load_f32(&buf[i * 4], little);
    }
    return AnyImage(std::move(img));
}

void check_write_pfm(const std::string& path, const detail::RawView& v) {
    if (v.type != PixelType::F32 || (v.channels != 1 && v.channels != 3))
        fail(ErrorCode::UnsupportedFormat, path,
             "PFM cannot store " + describe(v) +
                 " images (allowed: f32 with 1 or 3 channels; use NPY or TIFF for 2 or 4 "
                 "channels)");
}

void write_pfm(const std::string& path, std::FILE* f, const detail::RawView& v) {
    const std::string header = std::string(v.channels == 1 ? "Pf" : "PF") + "\n" +
                               std::to_string(v.width) + " " + std::to_string(v.height) +
                               "\n-1.0\n";
    write_exact(path, f, header.data(), header.size());
    const std::size_t row_values = static_cast<std::size_t>(v.width) * v.channels;
    std::vector<unsigned char> buf(row_values * 4);
    const auto* base = static_cast<const float*>(v.data);
    for (int r = 0; r < v.height; ++r) {
        const float* row = base + static_cast<std::ptrdiff_t>(v.height - 1 - r) * v.stride;
        for (std::size_t i = 0; i < row_values; ++i) store_f32(&buf[i * 4], row[i], true);
        write_exact(path, f, buf.data(), buf.size());
    }
}

}  // namespace upres::io_detail
