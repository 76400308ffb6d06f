// upres compare A B: PSNR and SSIM of two images (upres/metrics.hpp).
//
// Colour images are compared on BT.601 luma Y (data range 255) unless --no-y; --shave N removes
// N pixels from every border first. Images of different pixel types are both converted to f32
// (normalized ranges) first. --json prints one object {"psnr": ..., "ssim": ...}; an infinite
// PSNR (identical images) is the string "inf" there, as JSON has no infinity.
#include <fmt/core.h>

#include <cmath>
#include <memory>
#include <string>
#include <variant>

#include <upres/metrics.hpp>
#include "command.hpp"
#include "options.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

struct CompareArgs {
    std::string a, b;
    MetricOptions opts;  // the declared field options (shave, data-range)
    bool json = false;
    bool no_y = false;
};

struct Scores {
    double psnr = 0.0, ssim = 0.0;
};

template <class T>
Scores score(const Image<T>& a, const Image<T>& b, const MetricOptions& opts, const Context& ctx) {
    return {psnr(a.view(), b.view(), opts, ctx), ssim(a.view(), b.view(), opts, ctx)};
}

void run_compare(const CompareArgs& args, const Common& common) {
    const Context ctx = common.context();
    AnyImage a = read_input(args.a);
    AnyImage b = read_input(args.b);
    if (a.width() != b.width() || a.height() != b.height() || a.channels() != b.channels())
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("compare: '{}' is {} but '{}' is {} (sizes and channel counts "
                                "must match)",
                                args.a, describe(a), args.b, describe(b)));
    const int min_side = a.width() < a.height() ? a.width() : a.height();
    if (2 * args.opts.shave >= min_side)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("compare: --shave {} leaves nothing of a {} x {} image",
                                args.opts.shave, a.width(), a.height()));
    if (a.pixel_type() != b.pixel_type()) {
        a = to_depth(std::move(a), PixelType::F32, ctx);
        b = to_depth(std::move(b), PixelType::F32, ctx);
    }
    MetricOptions opts = args.opts;
    opts.on_y = !args.no_y;
    const Scores s = std::visit(
        [&](const auto& ia) -> Scores {
            using I = std::decay_t<decltype(ia)>;
            return score(ia, std::get<I>(b.variant()), opts, ctx);
        },
        a.variant());
    const bool on_y = opts.on_y && a.channels() >= 3;
    if (args.json) {
        fmt::print("{{\"psnr\": {}, \"ssim\": {}}}\n", json_number(s.psnr), json_number(s.ssim));
        return;
    }
    if (std::isinf(s.psnr))
        fmt::print("PSNR: inf dB (identical)\n");
    else
        fmt::print("PSNR: {:.4f} dB\n", s.psnr);
    fmt::print("SSIM: {:.6f}\n", s.ssim);
    fmt::print("(on {}, shave {}, {})\n", on_y ? "Y (BT.601 luma)" : "all channels",
               args.opts.shave, describe(a));
}

}  // namespace

void add_compare(CLI::App& app, const Common& common) {
    auto args = std::make_shared<CompareArgs>();
    auto* cmd = app.add_subcommand("compare", "PSNR and SSIM of two images (on Y for colour)");
    cmd->add_option("A", args->a, "First image (e.g. the reference)")->required();
    cmd->add_option("B", args->b, "Second image (same size and channels)")->required();
    const OperationDesc& op = operation("compare");
    add_declared_fields(cmd, op, &args->opts);
    cmd->add_flag("--json", args->json,
                  "Print one JSON object {\"psnr\": ..., \"ssim\": ...} (infinite PSNR: \"inf\")");
    add_declared(cmd, op, "no-y", args->no_y);
    cmd->callback([args, &common] { run_compare(*args, common); });
}

}  // namespace upres::cli
