// upres upscale IN OUT: super-resolution with SEABI (L-SEAI, SIL-SEABI, L-SEABI) or the
// baselines of the SEABI paper (tap4, tap6, bilinear, bicubic); upres/upscale.hpp,
// docs/ops/seabi.md.
//
// Colour images: Y through the method, Cb/Cr through bicubic. 8-bit images only: 16-bit and
// float files are refused (convert them first with `upres convert --depth u8`).
// --iterations / --max-error apply to lseabi only and are refused with other methods.
#include <fmt/core.h>

#include <chrono>
#include <memory>
#include <string>

#include <upres/upscale.hpp>
#include "command.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

struct UpscaleArgs {
    std::string in, out;
    std::string method = "silseabi";
    double scale = 2.0;
    int iterations = 4;
    double max_error = 0.25;
    std::string format = "auto";
};

void run_upscale(const UpscaleArgs& args, const Common& common, bool iterations_given,
                 bool max_error_given) {
    const Context ctx = common.context();
    UpscaleOptions opts;
    opts.method = parse_upscale_method(args.method);
    opts.scale = args.scale;
    if ((iterations_given || max_error_given) && opts.method != UpscaleMethod::LSeabi)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("upscale: {} applies to --method lseabi only (not {})",
                                iterations_given ? "--iterations" : "--max-error", args.method));
    opts.max_iterations = args.iterations;
    opts.max_error = args.max_error;
    const FileFormat fmt_out = output_format(args.out, args.format);
    const AnyImage img = read_input(args.in);
    const auto t0 = std::chrono::steady_clock::now();
    AnyImage up = upscale(img, opts, ctx);
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    write_output(args.out, up, fmt_out);
    if (!common.quiet)
        fmt::print("{}: {} -> {} x {} ({}, x{}) in {:.1f} ms\n", args.out, describe(img),
                   up.width(), up.height(), args.method, args.scale, ms);
}

}  // namespace

void add_upscale(CLI::App& app, const Common& common) {
    auto args = std::make_shared<UpscaleArgs>();
    auto* cmd = app.add_subcommand(
        "upscale",
        "Super-resolution: SEABI (lseai, silseabi, lseabi) or tap4/tap6/bilinear/bicubic");
    cmd->add_option("IN", args->in, "Input image (8-bit gray, RGB or RGBA)")->required();
    cmd->add_option("OUT", args->out, "Output image")->required();
    cmd->add_option("--method", args->method,
                    "lseai, silseabi, lseabi, tap4, tap6, bilinear or bicubic")
        ->capture_default_str();
    cmd->add_option("--scale", args->scale,
                    "Factor in [1, 16]: powers of two cascade x2, others add a B-spline resize")
        ->capture_default_str();
    auto* it = cmd->add_option("--iterations", args->iterations,
                               "lseabi: at most this many back-projections (1 to 1000)")
                   ->capture_default_str();
    auto* me = cmd->add_option("--max-error", args->max_error,
                               "lseabi: stop when the mean absolute LR error is below this")
                   ->capture_default_str();
    cmd->add_option("--format", args->format, "Output format (default: from the extension)")
        ->capture_default_str();
    cmd->callback(
        [args, &common, it, me] { run_upscale(*args, common, it->count() > 0, me->count() > 0); });
}

}  // namespace upres::cli
