// Binary PGM (P5, gray) and PPM (P6, RGB), 8-bit (maxval 255) or 16-bit big-endian
// (maxval 65535). Header comments ('#' to the end of the line) are skipped.
#include <cstdio>
#include <string>
#include <vector>

#include "io/header_parse.hpp"
#include "io/io_internal.hpp"

namespace upres::io_detail {
namespace {

std::string lower_ext(const std::string& path) {
    const auto slash = path.find_last_of('/');
    const auto dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
    std::string e = path.substr(dot + 1);
    for (char& c : e) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return e;
}

}  // namespace

AnyImage read_pnm(const std::string& path, std::FILE* f, std::int64_t max_pixels) {
    HeaderReader hr(path, f, "PNM", true);
    const std::string magic = hr.token("magic number");
    int channels = 0;
    if (magic == "P5")
        channels = 1;
    else if (magic == "P6")
        channels = 3;
    else if (magic.size() == 2 && magic[0] == 'P' && magic[1] >= '1' && magic[1] <= '7')
        fail(ErrorCode::UnsupportedFormat, path,
             "PNM type " + magic + " is not supported (allowed: binary P5 gray and P6 RGB)");
    else
        fail(ErrorCode::CorruptData, path,
             "not a PNM file (magic '" + magic.substr(0, 8) + "', expected 'P5' or 'P6')");
    const long long w = hr.integer("width");
    const long long h = hr.integer("height");
    const long long maxval = hr.integer("maxval");
    hr.expect_data_start("maxval");
    if (maxval < 1 || maxval > 65535)
        fail(ErrorCode::CorruptData, path,
             "bad PNM maxval " + std::to_string(maxval) + " (must be 1..65535)");
    if (maxval != 255 && maxval != 65535)
        fail(ErrorCode::UnsupportedFormat, path,
             "PNM maxval " + std::to_string(maxval) +
                 " is not supported (allowed: 255 for 8-bit, 65535 for 16-bit)");
    check_dimensions(path, w, h, max_pixels);
    const int bytes = maxval == 255 ? 1 : 2;
    const std::size_t row_values = static_cast<std::size_t>(w) * channels;
    check_bytes_left(path, f, static_cast<std::int64_t>(row_values) * bytes * h);
    if (bytes == 1) {
        Image<std::uint8_t> img(static_cast<int>(w), static_cast<int>(h), channels);
        read_exact(path, f, img.data(), row_values * static_cast<std::size_t>(h), "PNM pixel data");
        return AnyImage(std::move(img));
    }
    Image<std::uint16_t> img(static_cast<int>(w), static_cast<int>(h), channels);
    std::vector<unsigned char> buf(row_values * 2);
    for (long long y = 0; y < h; ++y) {
        read_exact(path, f, buf.data(), buf.size(), "PNM pixel data");
        std::uint16_t* row = img.view().row(static_cast<int>(y));
        for (std::size_t i = 0; i < row_values; ++i) row[i] = load_u16(&buf[i * 2], false);
    }
    return AnyImage(std::move(img));
}

void check_write_pnm(const std::string& path, const detail::RawView& v) {
    const std::string ext = lower_ext(path);
    std::string allowed = "u8 or u16 with 1 channel (.pgm) or 3 channels (.ppm)";
    bool ok = v.type != PixelType::F32 && (v.channels == 1 || v.channels == 3);
    if (ext == "pgm") {
        ok = ok && v.channels == 1;
        allowed = "u8 or u16 with 1 channel; use .ppm for RGB";
    } else if (ext == "ppm") {
        ok = ok && v.channels == 3;
        allowed = "u8 or u16 with 3 channels; use .pgm for gray";
    }
    if (!ok)
        fail(ErrorCode::UnsupportedFormat, path,
             "PNM cannot store " + describe(v) + " images here (allowed: " + allowed + ")");
}

void write_pnm(const std::string& path, std::FILE* f, const detail::RawView& v) {
    const bool wide = v.type == PixelType::U16;
    const std::string header = std::string(v.channels == 1 ? "P5" : "P6") + "\n" +
                               std::to_string(v.width) + " " + std::to_string(v.height) + "\n" +
                               (wide ? "65535" : "255") + "\n";
    write_exact(path, f, header.data(), header.size());
    const std::size_t row_values = static_cast<std::size_t>(v.width) * v.channels;
    std::vector<unsigned char> buf(row_values * (wide ? 2 : 1));
    for (int y = 0; y < v.height; ++y) {
        if (wide) {
            const auto* row = static_cast<const std::uint16_t*>(v.data) +
                              static_cast<std::ptrdiff_t>(y) * v.stride;
            for (std::size_t i = 0; i < row_values; ++i) store_u16(&buf[i * 2], row[i], false);
            write_exact(path, f, buf.data(), buf.size());
        } else {
            const auto* row = static_cast<const std::uint8_t*>(v.data) +
                              static_cast<std::ptrdiff_t>(y) * v.stride;
            write_exact(path, f, row, row_values);
        }
    }
}

}  // namespace upres::io_detail
