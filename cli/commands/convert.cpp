// upres convert IN OUT: converts between file formats and pixel depths.
//
// Depth conversion maps the nominal ranges onto each other (u8 [0,255] <-> u16 [0,65535] <->
// f32 [0,1]; upres::convert: round half to even, saturate). Without --depth the input depth is
// kept; when OUT's format cannot store it the command fails naming the depths it can store,
// rather than converting silently.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "command.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

struct ConvertArgs {
    std::string in, out;
    std::string depth;  // empty: keep the input depth
    std::string format = "auto";
};

void run_convert(const ConvertArgs& args, const Common& common) {
    const Context ctx = common.context();
    // Validate everything about the output before reading the input.
    const FileFormat fmt_out = output_format(args.out, args.format);
    const bool forced = !args.depth.empty();
    const PixelType wanted = forced ? parse_depth(args.depth) : PixelType::U8;
    if (forced && !can_store(fmt_out, wanted))
        throw Error(
            ErrorCode::UnsupportedFormat,
            fmt::format("convert: {} files cannot store {} pixels (allowed depths for {}: "
                        "{})",
                        to_string(fmt_out), args.depth, to_string(fmt_out), depth_list(fmt_out)));
    AnyImage img = read_input(args.in);
    const PixelType from = img.pixel_type();
    const PixelType to = forced ? wanted : from;
    if (!can_store(fmt_out, to))
        throw Error(ErrorCode::UnsupportedFormat,
                    fmt::format("convert: '{}' holds {} pixels but {} files store only {}; "
                                "choose one with --depth (e.g. --depth {})",
                                args.in, to_string(from), to_string(fmt_out), depth_list(fmt_out),
                                to_string(storable_depths(fmt_out).front())));
    img = to_depth(std::move(img), to, ctx);
    write_output(args.out, img, fmt_out);
    if (!common.quiet)
        fmt::print("{} -> {} ({}, {}{})\n", args.in, args.out, describe(img), to_string(fmt_out),
                   from == to ? "" : fmt::format(", converted from {}", to_string(from)));
}

}  // namespace

void add_convert(CLI::App& app, const Common& common) {
    auto args = std::make_shared<ConvertArgs>();
    auto* cmd = app.add_subcommand("convert", "Convert an image between file formats and depths");
    cmd->add_option("IN", args->in, "Input image")->required();
    cmd->add_option("OUT", args->out, "Output image (format from the extension or --format)")
        ->required();
    cmd->add_option("--depth", args->depth,
                    "Output pixel depth, ranges normalized (u8 0..255, u16 0..65535, f32 0..1)")
        ->check(CLI::IsMember({"u8", "u16", "f32"}));
    cmd->add_option("--format", args->format,
                    "Output format: auto (from OUT's extension), png, jpeg, tiff, pfm, pnm, npy")
        ->check(CLI::IsMember(
            {"auto", "png", "jpeg", "jpg", "tiff", "tif", "pfm", "pnm", "pgm", "ppm", "npy"}))
        ->capture_default_str();
    cmd->callback([args, &common] { run_convert(*args, common); });
}

}  // namespace upres::cli
