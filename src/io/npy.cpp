// NumPy .npy files: versions 1.0, 2.0 and 3.0 read, 1.0 written. dtypes '<f4', '|u1' and
// '<u2'; shape (H, W) (one channel) or (H, W, C) with C in 1..4; C order only.
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "io/io_internal.hpp"

namespace upres::io_detail {
namespace {

constexpr unsigned char kMagic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
constexpr std::size_t kMaxHeader = 1 << 16;
constexpr bool kLittleHost = std::endian::native == std::endian::little;

class DictParser {
  public:
    DictParser(const std::string& path, const std::string& text) : path_(path), s_(text) {}

    // Position just after "'key':" (single or double quotes), or npos.
    std::size_t find_value(const char* key) const {
        for (const char q : {'\'', '"'}) {
            const std::string k = std::string(1, q) + key + q;
            std::size_t p = s_.find(k);
            if (p == std::string::npos) continue;
            p += k.size();
            while (p < s_.size() && std::isspace(static_cast<unsigned char>(s_[p]))) ++p;
            if (p < s_.size() && s_[p] == ':') {
                ++p;
                while (p < s_.size() && std::isspace(static_cast<unsigned char>(s_[p]))) ++p;
                return p;
            }
        }
        return std::string::npos;
    }

    std::size_t require(const char* key) const {
        const std::size_t p = find_value(key);
        if (p == std::string::npos || p >= s_.size())
            fail(ErrorCode::CorruptData, path_,
                 std::string("malformed NPY header: no '") + key + "' entry");
        return p;
    }

    std::string descr() const {
        std::size_t p = require("descr");
        const char q = s_[p];
        if (q != '\'' && q != '"')
            fail(ErrorCode::UnsupportedFormat, path_,
                 "NPY dtype " + s_.substr(p, 40) +
                     " is not supported (allowed: '<f4' float32, '|u1' uint8, '<u2' uint16)");
        const std::size_t e = s_.find(q, p + 1);
        if (e == std::string::npos)
            fail(ErrorCode::CorruptData, path_, "malformed NPY header: unterminated descr");
        return s_.substr(p + 1, e - p - 1);
    }

    bool fortran_order() const {
        const std::size_t p = require("fortran_order");
        if (s_.compare(p, 4, "True") == 0) return true;
        if (s_.compare(p, 5, "False") == 0) return false;
        fail(ErrorCode::CorruptData, path_, "malformed NPY header: bad fortran_order value");
    }

    std::vector<long long> shape() const {
        std::size_t p = require("shape");
        if (s_[p] != '(') fail(ErrorCode::CorruptData, path_, "malformed NPY header: bad shape");
        ++p;
        std::vector<long long> dims;
        for (;;) {
            while (p < s_.size() && (std::isspace(static_cast<unsigned char>(s_[p])))) ++p;
            if (p >= s_.size()) break;
            if (s_[p] == ')') return dims;
            long long v = 0;
            int digits = 0;
            while (p < s_.size() && std::isdigit(static_cast<unsigned char>(s_[p]))) {
                if (++digits > 15) break;
                v = v * 10 + (s_[p++] - '0');
            }
            if (digits == 0 || digits > 15 || dims.size() >= 8) break;
            dims.push_back(v);
            while (p < s_.size() && std::isspace(static_cast<unsigned char>(s_[p]))) ++p;
            if (p < s_.size() && s_[p] == ',') ++p;
        }
        fail(ErrorCode::CorruptData, path_, "malformed NPY header: bad shape");
    }

  private:
    const std::string& path_;
    const std::string& s_;
};

std::string shape_text(const std::vector<long long>& d) {
    std::string s = "(";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + (d.size() == 1 ? ",)" : ")");
}

template <class T>
AnyImage read_data(const std::string& path, std::FILE* f, int w, int h, int c) {
    Image<T> img(w, h, c);
    const std::size_t n = static_cast<std::size_t>(w) * h * c;
    read_exact(path, f, img.data(), n * sizeof(T), "NPY array data");
    if constexpr (sizeof(T) > 1 && !kLittleHost) {
        auto* bytes = reinterpret_cast<unsigned char*>(img.data());
        for (std::size_t i = 0; i < n; ++i) {
            if constexpr (sizeof(T) == 2)
                img.data()[i] = load_u16(bytes + 2 * i, true);
            else
                img.data()[i] = load_f32(bytes + 4 * i, true);
        }
    }
    return AnyImage(std::move(img));
}

}  // namespace

AnyImage read_npy(const std::string& path, std::FILE* f, std::int64_t max_pixels) {
    unsigned char pre[8];
    if (std::fread(pre, 1, 8, f) != 8 || std::memcmp(pre, kMagic, 6) != 0)
        fail(ErrorCode::CorruptData, path, "not an NPY file (bad or missing magic string)");
    const int major = pre[6];
    std::size_t header_len = 0;
    if (major == 1) {
        unsigned char b[2];
        read_exact(path, f, b, 2, "NPY header length");
        header_len = load_u16(b, true);
    } else if (major == 2 || major == 3) {
        unsigned char b[4];
        read_exact(path, f, b, 4, "NPY header length");
        header_len = load_u32(b, true);
    } else {
        fail(ErrorCode::UnsupportedFormat, path,
             "NPY format version " + std::to_string(major) + "." + std::to_string(pre[7]) +
                 " is not supported (allowed: 1.0, 2.0, 3.0)");
    }
    if (header_len == 0 || header_len > kMaxHeader)
        fail(ErrorCode::CorruptData, path,
             "malformed NPY header: length " + std::to_string(header_len));
    check_bytes_left(path, f, static_cast<std::int64_t>(header_len));
    std::string header(header_len, '\0');
    read_exact(path, f, header.data(), header_len, "NPY header");

    const DictParser dict(path, header);
    const std::string descr = dict.descr();
    PixelType type;
    if (descr == "<f4")
        type = PixelType::F32;
    else if (descr == "|u1")
        type = PixelType::U8;
    else if (descr == "<u2")
        type = PixelType::U16;
    else
        fail(ErrorCode::UnsupportedFormat, path,
             "NPY dtype '" + descr +
                 "' is not supported (allowed: '<f4' float32, '|u1' uint8, '<u2' uint16)");
    if (dict.fortran_order())
        fail(ErrorCode::UnsupportedFormat, path,
             "NPY array in Fortran order is not supported (save a C-order array, e.g. "
             "numpy.ascontiguousarray)");
    const std::vector<long long> shape = dict.shape();
    if (shape.size() != 2 && shape.size() != 3)
        fail(ErrorCode::UnsupportedFormat, path,
             "NPY shape " + shape_text(shape) +
                 " is not supported (allowed: (H, W) or (H, W, C) with C in 1..4)");
    const long long c = shape.size() == 3 ? shape[2] : 1;
    if (c < 1 || c > 4)
        fail(ErrorCode::UnsupportedFormat, path,
             "NPY shape " + shape_text(shape) + " has " + std::to_string(c) +
                 " channels (allowed: (H, W) or (H, W, C) with C in 1..4)");
    check_dimensions(path, shape[1], shape[0], max_pixels);
    const int w = static_cast<int>(shape[1]), h = static_cast<int>(shape[0]);
    check_bytes_left(
        path, f,
        static_cast<std::int64_t>(w) * h * c * static_cast<std::int64_t>(pixel_size(type)));
    switch (type) {
        case PixelType::U8:
            return read_data<std::uint8_t>(path, f, w, h, static_cast<int>(c));
        case PixelType::U16:
            return read_data<std::uint16_t>(path, f, w, h, static_cast<int>(c));
        case PixelType::F32:
            break;
    }
    return read_data<float>(path, f, w, h, static_cast<int>(c));
}

void check_write_npy(const std::string&, const detail::RawView&) {}  // u8/u16/f32, 1-4 ch.

void write_npy(const std::string& path, std::FILE* f, const detail::RawView& v) {
    const char* descr = v.type == PixelType::F32 ? "<f4" : v.type == PixelType::U16 ? "<u2" : "|u1";
    std::string dict =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" +
        std::to_string(v.height) + ", " + std::to_string(v.width) +
        (v.channels > 1 ? ", " + std::to_string(v.channels) : std::string()) + "), }";
    // Pad with spaces and end with '\n' so that the data starts at a multiple of 64 bytes.
    const std::size_t total = 10 + dict.size() + 1;
    dict.append((64 - total % 64) % 64, ' ');
    dict.push_back('\n');
    std::string head(reinterpret_cast<const char*>(kMagic), 6);
    head.push_back('\x01');
    head.push_back('\x00');
    unsigned char len[2];
    store_u16(len, static_cast<std::uint16_t>(dict.size()), true);
    head.append(reinterpret_cast<const char*>(len), 2);
    head += dict;
    write_exact(path, f, head.data(), head.size());
    const std::size_t elem = pixel_size(v.type);
    const std::size_t row_values = static_cast<std::size_t>(v.width) * v.channels;
    std::vector<unsigned char> buf(row_values * elem);
    for (int y = 0; y < v.height; ++y) {
        const auto* row = static_cast<const unsigned char*>(v.data) +
                          static_cast<std::size_t>(y) * static_cast<std::size_t>(v.stride) * elem;
        if (kLittleHost || elem == 1) {
            write_exact(path, f, row, row_values * elem);
            continue;
        }
        for (std::size_t i = 0; i < row_values; ++i) {
            if (elem == 2) {
                std::uint16_t u;
                std::memcpy(&u, row + 2 * i, 2);
                store_u16(&buf[2 * i], u, true);
            } else {
                float x;
                std::memcpy(&x, row + 4 * i, 4);
                store_f32(&buf[4 * i], x, true);
            }
        }
        write_exact(path, f, buf.data(), buf.size());
    }
}

}  // namespace upres::io_detail
