// upres stereo LEFT RIGHT OUT: disparity of a rectified pair (upres/stereo.hpp).
//
// The options come from the stereo declaration. OUT holds float disparities (PFM, TIFF, NPY;
// invalid pixels NaN unless --invalid) or, for PNG, 16-bit disparities x 16 (OpenCV's fixed
// point; invalid pixels 0, negative disparities refused). --right OUT2 writes the right-based
// map the same way, --mask MASK the validity mask (255 valid, 0 invalid, u8), --preview PNG the
// left map colour-mapped over the searched range with a legend (invalid pixels black).
// --aggregate box:N is the box window of side N.
#include <fmt/core.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <variant>

#include <upres/io.hpp>
#include <upres/stereo.hpp>
#include <upres/tiled.hpp>
#include "command.hpp"
#include "options.hpp"
#include "preview.hpp"
#include "tiled_job.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

struct StereoArgs {
    std::string left, right, out, right_out, mask, preview;
    StereoOptions opts;  // the declared field options
    bool no_subpixel = false;
    int box_from_aggregate = 0;  // N of --aggregate box:N (0: not given)
    TiledArgs tiling;            // --tiled: TIFF pair in, tiled float TIFF out (tiled_job.hpp)
};

// The disparity map as the output format stores it: float, or u16 x 16 for PNG.
AnyImage encode(Image<float>&& d, FileFormat f, const std::string& path) {
    if (can_store(f, PixelType::F32)) return AnyImage(std::move(d));
    if (!can_store(f, PixelType::U16))
        throw Error(
            ErrorCode::UnsupportedFormat,
            fmt::format("stereo: {} cannot hold disparities (use pfm, tiff, npy or png)", path));
    Image<std::uint16_t> q(d.width(), d.height(), 1);
    for (int y = 0; y < d.height(); ++y)
        for (int x = 0; x < d.width(); ++x) {
            const float v = d.view().row(y)[x];
            if (std::isfinite(v) && v < 0)
                throw Error(ErrorCode::InvalidArgument,
                            fmt::format("stereo: {} (16-bit x 16) cannot hold the negative "
                                        "disparity {} at x {}, y {} (use pfm, tiff or npy)",
                                        path, v, x, y));
            const double s = std::isfinite(v) ? std::nearbyint(16.0 * v) : 0.0;
            q.view().row(y)[x] = static_cast<std::uint16_t>(s > 65535.0 ? 65535.0 : s);
        }
    return AnyImage(std::move(q));
}

StereoOptions options_of(const StereoArgs& args) {
    StereoOptions o = args.opts;
    o.subpixel = !args.no_subpixel;
    if (args.box_from_aggregate > 0) o.box_size = args.box_from_aggregate;
    return o;
}

// --tiled: a TIFF pair of any size matched band by band (stereo_disparity_tiled) into a tiled
// float TIFF, in bounded memory and resumable; the map equals the whole-pair command's.
void run_tiled(const StereoArgs& args, const Common& common) {
    if (!args.right_out.empty() || !args.mask.empty() || !args.preview.empty())
        throw Error(ErrorCode::InvalidArgument,
                    "stereo: --tiled writes the left map only (not --right, --mask, --preview)");
    check_tiled_paths("stereo", args.left, args.out, "auto", args.tiling);
    const Context ctx = common.context();
    const std::vector<int> devices = common.device_list();
    const StereoOptions o = options_of(args);
    TiffRowReader left(args.left);
    TiffRowReader right(args.right);
    TiledJob job;
    job.command = "stereo";
    job.in = args.left;
    job.out = args.out;
    job.out_width = left.width();
    job.out_height = left.height();
    job.out_channels = 1;
    job.out_type = PixelType::F32;
    std::error_code ec;
    job.options = fmt::format(
        "right {} {}; min {} count {} cost {} aggregate {} box {} max_cost {} lr {} subpixel {} "
        "uniqueness {} invalid {} median {}",
        std::filesystem::absolute(args.right).string(),
        std::filesystem::last_write_time(args.right, ec).time_since_epoch().count(),
        o.min_disparity, o.num_disparities, to_string(o.cost), to_string(o.aggregation), o.box_size,
        o.max_cost, o.lr_check, o.subpixel, o.uniqueness, o.invalid, o.median);
    const TiledResult r =
        run_tiled_job(job, left, args.tiling, common.quiet,
                      [&](RowSource& src, RowSink& dst, const TiledOptions& to) {
                          TiledOptions with = to;
                          with.devices = devices;  // --devices: bands over the GPUs
                          return stereo_disparity_tiled(src, right, dst, o, with, ctx);
                      });
    if (!common.quiet)
        fmt::print(
            "{} -> {} ({} x {} disparities {}..{}, {} {}; {} band{} of {} rows, {:.0f} MiB "
            "of buffers, {}{:.1f} s)\n",
            args.left, args.out, left.width(), left.height(), o.min_disparity,
            o.min_disparity + o.num_disparities - 1, to_string(o.cost), to_string(o.aggregation),
            r.stats.bands, r.stats.bands == 1 ? "" : "s", r.stats.band_rows,
            static_cast<double>(r.stats.buffer_bytes) / 1048576.0, r.bigtiff ? "BigTIFF, " : "",
            r.seconds);
}

void run_stereo(const StereoArgs& args, const Common& common) {
    if (args.tiling.tiled) return run_tiled(args, common);
    const Context ctx = common.context();
    const AnyImage l = read_input(args.left);
    const AnyImage r = read_input(args.right);
    if (l.pixel_type() != r.pixel_type() || l.width() != r.width() || l.height() != r.height() ||
        l.channels() != r.channels())
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("stereo: '{}' is {} but '{}' is {} (a rectified pair has one "
                                "size, channel count and depth)",
                                args.left, describe(l), args.right, describe(r)));
    const FileFormat f = output_format(args.out);
    const FileFormat fr = args.right_out.empty() ? f : output_format(args.right_out);
    const FileFormat fm = args.mask.empty() ? f : output_format(args.mask);
    const FileFormat fp = args.preview.empty() ? f : output_format(args.preview);
    const StereoOptions o = options_of(args);
    Image<float> d(l.width(), l.height(), 1), dr;
    Image<std::uint8_t> m;
    if (!args.right_out.empty()) dr = Image<float>(l.width(), l.height(), 1);
    if (!args.mask.empty()) m = Image<std::uint8_t>(l.width(), l.height(), 1);
    std::visit(
        [&](const auto& li) {
            using I = std::remove_cvref_t<decltype(li)>;
            const I& ri = std::get<I>(r.variant());
            stereo_disparity(li.view(), ri.view(), d.view(), o, ctx,
                             args.right_out.empty() ? ImageView<float>() : dr.view(),
                             args.mask.empty() ? ImageView<std::uint8_t>() : m.view());
        },
        l.variant());
    AnyImage preview;
    if (!args.preview.empty())
        preview = AnyImage(
            colour_preview(d.view(), o.min_disparity, o.min_disparity + o.num_disparities - 1));
    const AnyImage out = encode(std::move(d), f, args.out);
    const AnyImage out_r =
        args.right_out.empty() ? AnyImage() : encode(std::move(dr), fr, args.right_out);
    write_output(args.out, out, f);
    if (!args.right_out.empty()) write_output(args.right_out, out_r, fr);
    if (!args.mask.empty()) write_output(args.mask, AnyImage(std::move(m)), fm);
    if (!args.preview.empty()) write_output(args.preview, preview, fp);
}

}  // namespace

void add_stereo(CLI::App& app, const Common& common) {
    auto args = std::make_shared<StereoArgs>();
    auto* cmd = app.add_subcommand(
        "stereo", "Disparity of a rectified stereo pair (the paper's window matcher)");
    cmd->add_option("LEFT", args->left, "Left image")->required();
    cmd->add_option("RIGHT", args->right, "Right image (same size, channels and depth)")
        ->required();
    cmd->add_option("OUT", args->out,
                    "Disparity: pfm, tiff, npy (float, invalid NaN) or png (16-bit x 16, "
                    "invalid 0)")
        ->required();
    cmd->add_option("--right", args->right_out, "Also write the right-based map here");
    cmd->add_option("--mask", args->mask, "Also write the validity mask (255 valid) here");
    cmd->add_option("--preview", args->preview,
                    "Also write the left map colour-mapped over the range, with a legend, here "
                    "(an RGB picture, e.g. PNG)");
    const OperationDesc& op = operation("stereo");
    const auto fields = add_declared_fields(cmd, op, &args->opts);
    // --aggregate box:N is --aggregate box with a box of side N (N wins over --box-size).
    fields.at("aggregate")
        ->transform(CLI::Validator(
            [args](std::string& v) -> std::string {
                if (v.rfind("box:", 0) != 0) return {};
                const std::string n = v.substr(4);
                if (n.empty() || n.size() > 3 ||
                    n.find_first_not_of("0123456789") != std::string::npos)
                    return "box:N needs a whole number N (an odd box side, 1 to 31), not '" + n +
                           "'";
                args->box_from_aggregate = std::stoi(n);
                v = "box";
                return {};
            },
            "", ""));
    add_declared(cmd, op, "no-subpixel", args->no_subpixel);
    const TiledFlags tiled = add_tiled_flags(
        cmd, args->tiling,
        "TIFF pair of any size in, tiled float TIFF out, band by band in bounded memory (the "
        "window matcher: gauss7, gauss13, box; cpu or cuda backend, --devices spreads the bands "
        "over GPUs); the map equals the whole-pair run's");
    cmd->callback([args, &common, tiled] {
        check_tiled_flags(tiled);
        run_stereo(*args, common);
    });
}

}  // namespace upres::cli
