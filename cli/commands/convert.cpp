// upres convert IN OUT: converts between file formats and pixel depths.
//
// Depth conversion maps the nominal ranges onto each other (u8 [0,255] <-> u16 [0,65535] <->
// f32 [0,1]; upres::convert: round half to even, saturate). Without --depth the input depth is
// kept; when OUT's format cannot store it, the narrowest depth it stores that holds every input
// value exactly is taken (u8 -> f32 for PFM); a depth that would lose precision (f32 -> PNG,
// u16 -> JPEG) is only written when asked with --depth, and the command fails naming the depths
// the format stores otherwise.
#include <fmt/core.h>

#include <memory>
#include <string>

#include "command.hpp"
#include "options.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

struct ConvertArgs {
    std::string in, out;
    PixelType depth = PixelType::U8;  // when given
    std::string format = "auto";
};

// Whether every value of `from` has an exact value in `to` (u8 -> u16 -> f32).
bool lossless(PixelType from, PixelType to) {
    const auto rank = [](PixelType t) {
        return t == PixelType::U8 ? 0 : t == PixelType::U16 ? 1 : 2;
    };
    return rank(to) >= rank(from);
}

// The depth written without --depth: the input's, else the narrowest exact one the format
// stores; `from` itself when none is (the caller reports it).
PixelType implied_depth(FileFormat f, PixelType from) {
    if (can_store(f, from)) return from;
    for (PixelType t : storable_depths(f))
        if (lossless(from, t)) return t;
    return from;
}

void run_convert(const ConvertArgs& args, bool forced, const Common& common) {
    const Context ctx = common.context();
    // Validate everything about the output before reading the input.
    const FileFormat fmt_out = output_format(args.out, args.format);
    if (forced && !can_store(fmt_out, args.depth))
        throw Error(ErrorCode::UnsupportedFormat,
                    fmt::format("convert: {} files cannot store {} pixels (allowed depths for {}: "
                                "{})",
                                to_string(fmt_out), to_string(args.depth), to_string(fmt_out),
                                depth_list(fmt_out)));
    AnyImage img = read_input(args.in);
    const PixelType from = img.pixel_type();
    const PixelType to = forced ? args.depth : implied_depth(fmt_out, from);
    if (!can_store(fmt_out, to))
        throw Error(ErrorCode::UnsupportedFormat,
                    fmt::format("convert: '{}' holds {} pixels but {} files store only {}, which "
                                "would lose precision; choose one with --depth (e.g. --depth {})",
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
    auto* depth = add_declared(cmd, operation("convert"), "depth", args->depth);
    add_format_option(cmd, args->format);
    cmd->callback([args, &common, depth] { run_convert(*args, depth->count() > 0, common); });
}

}  // namespace upres::cli
