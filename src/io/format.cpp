// File-format names and extension mapping.
#include <algorithm>
#include <cctype>
#include <string>

#include <upres/io.hpp>

namespace upres {

const char* to_string(FileFormat f) noexcept {
    switch (f) {
        case FileFormat::Auto:
            return "auto";
        case FileFormat::Png:
            return "png";
        case FileFormat::Jpeg:
            return "jpeg";
        case FileFormat::Tiff:
            return "tiff";
        case FileFormat::Pfm:
            return "pfm";
        case FileFormat::Pnm:
            return "pnm";
        case FileFormat::Npy:
            return "npy";
    }
    return "unknown";
}

namespace {
std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}
}  // namespace

FileFormat parse_file_format(const std::string& name) {
    const std::string n = lower(name);
    if (n == "auto") return FileFormat::Auto;
    if (n == "png") return FileFormat::Png;
    if (n == "jpeg" || n == "jpg") return FileFormat::Jpeg;
    if (n == "tiff" || n == "tif") return FileFormat::Tiff;
    if (n == "pfm") return FileFormat::Pfm;
    if (n == "pnm" || n == "pgm" || n == "ppm") return FileFormat::Pnm;
    if (n == "npy") return FileFormat::Npy;
    throw Error(ErrorCode::UnsupportedFormat,
                "unknown file format '" + name +
                    "' (allowed: auto, png, jpeg, tiff, pfm, pnm/pgm/ppm, npy)");
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
