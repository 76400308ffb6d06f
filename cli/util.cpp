#include "util.hpp"

#include <fmt/core.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>
#include <variant>

namespace upres::cli {

// A JSON string literal (quotes, backslashes and control characters escaped).
std::string json_string(const std::string& s) {
    std::string o = "\"";
    for (const char ch : s) {
        if (ch == '"' || ch == '\\') {
            o += '\\';
            o += ch;
        } else if (static_cast<unsigned char>(ch) < 0x20) {
            o += fmt::format("\\u{:04x}", static_cast<unsigned char>(ch));
        } else {
            o += ch;
        }
    }
    return o + "\"";
}

namespace {
std::int64_t g_max_pixels = kMaxPixels;  // --max-pixels (set while the flags are parsed)
}  // namespace

void set_max_pixels(std::int64_t n) { g_max_pixels = n; }

AnyImage read_input(const std::string& path, const std::string& format) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0)
        throw Error(ErrorCode::IoError,
                    fmt::format("cannot read '{}': {}", path, std::strerror(errno)));
    if (S_ISDIR(st.st_mode))
        throw Error(ErrorCode::IoError, fmt::format("cannot read '{}': is a directory", path));
    ReadOptions opts;
    opts.format = parse_file_format(format);
    opts.max_pixels = g_max_pixels;
    return read_image(path, opts);
}

FileFormat output_format(const std::string& path, const std::string& format) {
    FileFormat f = parse_file_format(format);
    if (f == FileFormat::Auto) f = format_from_path(path);
    if (!format_supported(f))
        throw Error(
            ErrorCode::UnsupportedFormat,
            fmt::format("{}: format {} is not supported by this build", path, to_string(f)));
    return f;
}

std::vector<PixelType> storable_depths(FileFormat f) {
    switch (f) {
        case FileFormat::Png:
        case FileFormat::Pnm:
            return {PixelType::U8, PixelType::U16};
        case FileFormat::Jpeg:
            return {PixelType::U8};
        case FileFormat::Pfm:
            return {PixelType::F32};
        case FileFormat::Tiff:
        case FileFormat::Npy:
        case FileFormat::Auto:
            return {PixelType::U8, PixelType::U16, PixelType::F32};
    }
    return {};
}

std::string depth_list(FileFormat f) {
    std::string s;
    for (PixelType t : storable_depths(f)) {
        if (!s.empty()) s += ", ";
        s += to_string(t);
    }
    return s;
}

bool can_store(FileFormat f, PixelType t) {
    for (PixelType u : storable_depths(f))
        if (u == t) return true;
    return false;
}

CLI::Option* add_format_option(CLI::App* cmd, std::string& target) {
    // Not checked here: output_format() refuses an unknown name with UnsupportedFormat (exit 4),
    // the code every other format problem gets.
    return cmd
        ->add_option("--format", target,
                     "Output format, auto = from OUT's extension (allowed: " +
                         enum_desc<FileFormat>().allowed() + ")")
        ->capture_default_str();
}

namespace {
template <class T>
AnyImage convert_to(const AnyImage& img, const Context& ctx) {
    return std::visit(
        [&ctx](const auto& im) -> AnyImage {
            Image<T> out(im.width(), im.height(), im.channels());
            if (im.empty()) return AnyImage(std::move(out));
            if (ctx.backend == Backend::Cuda) {
                // Allocating device memory throws BackendUnavailable without CUDA or a device.
                auto d_in = clone(im.view(), Location::Device);
                Image<T> d_out(im.width(), im.height(), im.channels(), Location::Device);
                convert(d_in.view(), d_out.view(), true, ctx.cuda_stream);
                copy(d_out.view(), out.view(), ctx.cuda_stream);
            } else {
                convert(im.view(), out.view(), true, nullptr, ctx.threads);
            }
            return AnyImage(std::move(out));
        },
        img.variant());
}
}  // namespace

AnyImage to_depth(AnyImage&& img, PixelType t, const Context& ctx) {
    if (img.pixel_type() == t) return std::move(img);
    switch (t) {
        case PixelType::U8:
            return convert_to<std::uint8_t>(img, ctx);
        case PixelType::U16:
            return convert_to<std::uint16_t>(img, ctx);
        case PixelType::F32:
            return convert_to<float>(img, ctx);
    }
    throw Error(ErrorCode::Internal, "to_depth: unknown pixel type");
}

void write_output(const std::string& path, const AnyImage& img, FileFormat format) {
    WriteOptions opts;
    opts.format = format;
    write_image(path, img, opts);
}

std::string json_number(double v, int digits) {
    if (std::isnan(v)) return "\"nan\"";
    if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
    return fmt::format("{:.{}f}", v, digits);
}

std::string describe(const AnyImage& img) {
    return fmt::format("{} x {}, {} channel{}, {}", img.width(), img.height(), img.channels(),
                       img.channels() == 1 ? "" : "s", to_string(img.pixel_type()));
}

// ---------------------------------------------------------------- ProgressBar

ProgressBar::ProgressBar(std::string label, std::int64_t total, bool quiet)
    : label_(std::move(label)),
      total_(total < 0 ? 0 : total),
      quiet_(quiet),
      live_(!quiet && ::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()) {
    if (live_) draw();
}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(std::int64_t done) {
    if (finished_) return;
    done_ = done < 0 ? 0 : done;
    if (done_ > total_) total_ = done_;  // an estimated total (video frame counts) ran short
    if (live_) draw();
}

void ProgressBar::set_total(std::int64_t total) { total_ = total < done_ ? done_ : total; }

void ProgressBar::draw() {
    const int permille = total_ > 0 ? static_cast<int>(done_ * 1000 / total_) : 1000;
    if (permille == last_drawn_) return;
    last_drawn_ = permille;
    constexpr int kWidth = 30;
    const int filled = permille * kWidth / 1000;
    std::string bar(static_cast<std::size_t>(filled), '#');
    bar.append(static_cast<std::size_t>(kWidth - filled), '.');
    // Rate and time left once there is something to measure.
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string rate;
    if (done_ > 0 && s > 0.2) {
        const double per_s = static_cast<double>(done_) / s;
        const double left = static_cast<double>(total_ - done_) / per_s;
        char buf[64];
        std::snprintf(buf, sizeof buf, "  %.1f/s  ETA %d:%02d", per_s, static_cast<int>(left) / 60,
                      static_cast<int>(left) % 60);
        rate = buf;
    }
    std::fprintf(stderr, "\r%s [%s] %lld/%lld%s\033[K", label_.c_str(), bar.c_str(),
                 static_cast<long long>(done_), static_cast<long long>(total_), rate.c_str());
    std::fflush(stderr);
}

void ProgressBar::abandon() {
    if (finished_) return;
    finished_ = true;
    if (live_) std::fprintf(stderr, "\r\033[K");  // clear the bar's line
}

void ProgressBar::finish() {
    if (finished_) return;
    finished_ = true;
    if (quiet_) return;
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    if (live_) std::fprintf(stderr, "\r\033[K");  // clear the bar's line
    std::fprintf(stderr, "%s: %lld/%lld done in %.1f s\n", label_.c_str(),
                 static_cast<long long>(done_), static_cast<long long>(total_), s);
    std::fflush(stderr);
}

bool image_extension(const std::filesystem::path& p) {
    std::string e = p.extension().string();
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* x :
         {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pfm", ".pgm", ".ppm", ".pnm", ".npy"})
        if (e == x) return true;
    return false;
}

// The inputs: the files given, a folder's image files (sorted by name).
std::vector<std::string> expand_inputs(const std::vector<std::string>& ins, bool& batch) {
    std::vector<std::string> files;
    batch = ins.size() > 1;
    for (const std::string& in : ins) {
        std::error_code ec;
        if (std::filesystem::is_directory(in, ec)) {
            batch = true;
            std::vector<std::string> found;
            for (const auto& e : std::filesystem::directory_iterator(in, ec))
                if (e.is_regular_file(ec) && image_extension(e.path()))
                    found.push_back(e.path().string());
            if (ec)
                throw Error(ErrorCode::IoError,
                            fmt::format("cannot list the folder '{}': {}", in, ec.message()));
            std::sort(found.begin(), found.end());
            if (found.empty())
                throw Error(ErrorCode::IoError,
                            fmt::format("the folder '{}' holds no image files", in));
            files.insert(files.end(), found.begin(), found.end());
        } else {
            files.push_back(in);
        }
    }
    return files;
}

void make_output_folder(const std::string& out, const std::string& why) {
    std::error_code ec;
    if (std::filesystem::exists(out, ec) && !std::filesystem::is_directory(out, ec))
        throw Error(ErrorCode::IoError,
                    fmt::format("{} OUT must be a folder, and '{}' is a file", why, out));
    std::filesystem::create_directories(out, ec);
    if (ec)
        throw Error(ErrorCode::IoError,
                    fmt::format("cannot create the output folder '{}': {}", out, ec.message()));
}

namespace {
std::atomic<bool> g_interrupted{false};
extern "C" void on_interrupt(int) { g_interrupted = true; }
}  // namespace

InterruptHandler::InterruptHandler() : old_(std::signal(SIGINT, on_interrupt)) {
    g_interrupted = false;
}
InterruptHandler::~InterruptHandler() { std::signal(SIGINT, old_); }
bool interrupted() noexcept { return g_interrupted.load(); }

}  // namespace upres::cli
