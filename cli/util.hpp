// Helpers shared by the CLI subcommands: reading and writing images with errors that name the
// file, the pixel depths each file format stores, JSON number formatting and a text progress bar.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <upres/context.hpp>
#include <upres/image.hpp>
#include <upres/io.hpp>

namespace upres::cli {

// --format FORMAT, checked against upres's file format names (enum_desc<FileFormat>).
CLI::Option* add_format_option(CLI::App* cmd, std::string& target);

// Reads an image (format from the extension, or `format` when not "auto"). A missing or
// unreadable file is Error(IoError) naming the path; format errors come from upres::read_image.
AnyImage read_input(const std::string& path, const std::string& format = "auto");
// The largest image read_input accepts (ReadOptions::max_pixels): the global --max-pixels.
void set_max_pixels(std::int64_t n);

// The format an output path will be written in: `format` when not "auto", else the extension.
// Throws Error(UnsupportedFormat) for unknown names and formats this build cannot write.
FileFormat output_format(const std::string& path, const std::string& format = "auto");

// Pixel depths a file format stores (png: u8 u16; jpeg: u8; tiff, npy: u8 u16 f32; pfm: f32;
// pnm: u8 u16), and the same list as text ("u8, u16").
std::vector<PixelType> storable_depths(FileFormat f);
std::string depth_list(FileFormat f);
bool can_store(FileFormat f, PixelType t);

// A copy of img converted to pixel type t with normalized ranges (upres::convert); a plain
// move when the type already matches. With ctx.backend == Cuda the conversion runs on the
// device (the image is staged there and back; Error(BackendUnavailable) without CUDA);
// otherwise on the host with ctx.threads.
AnyImage to_depth(AnyImage&& img, PixelType t, const Context& ctx = {});

// Writes img to path in `format` (Auto: from the extension). upres::write_image writes to a
// temporary file renamed over the target when complete, so a failure leaves no partial file.
void write_output(const std::string& path, const AnyImage& img, FileFormat format);

// "12.3456" with `digits` decimals for finite values; JSON has no infinity or NaN, so
// non-finite values become the strings "inf", "-inf" and "nan" (docs/cli.md).
std::string json_number(double v, int digits = 6);
// A JSON string literal (quotes, backslashes and control characters escaped).
std::string json_string(const std::string& s);

// "493 x 356, 3 channels, u8".
std::string describe(const AnyImage& img);

// Whether a path names an image file upres reads (by its extension).
bool image_extension(const std::filesystem::path& p);

// The inputs: the files given, each folder's image files (sorted by name); `batch` is set when
// there are several inputs or a folder.
std::vector<std::string> expand_inputs(const std::vector<std::string>& ins, bool& batch);

// Creates the output folder `out` (and its parents). Error(IoError) when `out` is a file ("<why>
// OUT must be a folder, ...") or cannot be created.
void make_output_folder(const std::string& out, const std::string& why);

// Text progress bar for long commands (batch, video). Draws "label [#####.....] 12/40  3.1/s
// ETA 0:09" on stderr, redrawn in place, only when stderr is a terminal and not --quiet;
// otherwise prints just the final line "label: 40/40 done in 1.2 s" (nothing with --quiet).
// Ctrl-C during a long run (a video, a stream, a tiled job) stops it between frames / row
// chunks / bands; the output is then not written (its temporary file removed). While an
// InterruptHandler lives, SIGINT sets the flag interrupted() reads.
struct InterruptHandler {
    InterruptHandler();
    ~InterruptHandler();
    InterruptHandler(const InterruptHandler&) = delete;
    InterruptHandler& operator=(const InterruptHandler&) = delete;

  private:
    void (*old_)(int);
};
bool interrupted() noexcept;

class ProgressBar {
  public:
    ProgressBar(std::string label, std::int64_t total, bool quiet);
    ~ProgressBar();  // calls finish() if not done yet
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    void update(std::int64_t done);  // done in [0, total]
    void step() { update(done_ + 1); }
    void set_total(std::int64_t total);  // a better estimate of the total (not below done)
    void finish();                       // prints the final line once
    void abandon();                      // an error: clears the bar, prints nothing more

    // Whether the live bar is drawn (stderr is a terminal and not quiet).
    bool live() const noexcept { return live_; }

  private:
    void draw();
    std::string label_;
    std::int64_t total_;
    std::int64_t done_ = 0;
    bool quiet_;
    bool live_;
    bool finished_ = false;
    int last_drawn_ = -1;  // per-mille last drawn, to redraw at most 1000 times
    std::chrono::steady_clock::time_point start_;
};

}  // namespace upres::cli
