// File-format names and extension mapping.
#include <algorithm>
#include <cctype>
#include <string>

#include <upres/error.hpp>
#include <upres/io.hpp>
#include <upres/options.hpp>

namespace upres {

namespace {
// The first entry of each value is its name; the others are aliases parse_file_format accepts.
constexpr EnumEntry kFormats[] = {
    {static_cast<int>(FileFormat::Auto), "auto", "from the file's extension"},
    {static_cast<int>(FileFormat::Png), "png", "PNG: u8, u16"},
    {static_cast<int>(FileFormat::Jpeg), "jpeg", "JPEG: u8"},
    {static_cast<int>(FileFormat::Jpeg), "jpg", "JPEG (alias)"},
    {static_cast<int>(FileFormat::Tiff), "tiff", "TIFF: u8, u16, f32"},
    {static_cast<int>(FileFormat::Tiff), "tif", "TIFF (alias)"},
    {static_cast<int>(FileFormat::Pfm), "pfm", "PFM: f32"},
    {static_cast<int>(FileFormat::Pnm), "pnm", "PGM / PPM: u8, u16"},
    {static_cast<int>(FileFormat::Pnm), "pgm", "PGM (alias)"},
    {static_cast<int>(FileFormat::Pnm), "ppm", "PPM (alias)"},
    {static_cast<int>(FileFormat::Npy), "npy", "NumPy .npy: u8, u16, f32"},
};
constexpr EnumDesc kFormatDesc{"file format", kFormats};

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}
}  // namespace

template <>
const EnumDesc& enum_desc<FileFormat>() noexcept {
    return kFormatDesc;
}

const char* to_string(FileFormat f) noexcept { return enum_name(f); }

// Case-insensitive (extensions come in upper case too), and an unknown name is
// UnsupportedFormat, not InvalidArgument.
FileFormat parse_file_format(const std::string& name) {
    try {
        return parse_enum<FileFormat>(lower(name));
    } catch (const Error&) {
        throw Error(ErrorCode::UnsupportedFormat,
                    "unknown file format '" + name + "' (allowed: " + kFormatDesc.allowed() + ")");
    }
}

FileFormat format_from_path(const std::string& path) {
    const auto slash = path.find_last_of('/');
    const auto dot = path.find_last_of('.');
    if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
        throw Error(ErrorCode::UnsupportedFormat,
                    path +
                        ": no file extension to choose a format from (use .png, .jpg, .tif, "
                        ".pfm, .pgm, .ppm or .npy, or name the format)");
    const std::string ext = path.substr(dot + 1);
    try {
        const FileFormat f = parse_file_format(ext);
        if (f == FileFormat::Auto) throw Error(ErrorCode::UnsupportedFormat, "auto");
        return f;
    } catch (const Error&) {
        throw Error(
            ErrorCode::UnsupportedFormat,
            path + ": unknown extension '." + ext +
                "' (allowed: .png, .jpg, .jpeg, .tif, .tiff, .pfm, .pgm, .ppm, .pnm, .npy)");
    }
}

bool format_supported(FileFormat f) noexcept {
#if UPRES_HAVE_TIFF
    return f != FileFormat::Auto;
#else
    return f != FileFormat::Auto && f != FileFormat::Tiff;
#endif
}

}  // namespace upres
