// upres warp IN OUT: geometric transforms (rotation, zoom/resize, affine, homography,
// displacement field) with nearest, linear, Keys cubic or cubic B-spline interpolation.
//
// Exactly one transform: --rotate DEG (about the centre, scipy.ndimage.rotate's sense,
// reshape=False), --zoom F (output size round(F * size)), --size WxH, --affine a,b,c,d,e,f or
// --homography h1,...,h9 (both INVERSE maps, output pixel (x, y) -> input position:
// u = a x + b y + c, v = d x + e y + f; homography row-major, divided by h7 x + h8 y + h9),
// --flow FLOW (output (x, y) samples input (x + dx, y + dy); FLOW is a float32 NPY of shape
// (H, W, 2) = (dx, dy), or a 3-channel PFM whose first two channels are dx, dy, of IN's size,
// which the output keeps). The pixel type is kept (float images stay float through PFM/NPY/TIFF).
#include <fmt/core.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <upres/io.hpp>
#include <upres/tiled.hpp>
#include <upres/warp.hpp>
#include "command.hpp"
#include "options.hpp"
#include "tiled_job.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

struct WarpArgs {
    std::string in, out;
    double rotate = 0, zoom = 0;
    std::string size, flow;
    std::vector<double> affine, homography;
    WarpOptions opts;  // the declared field options (interp, border, fill, antialias, fast)
    std::string prefilter, format = "auto";
    TiledArgs tiling;  // --tiled: TIFF in, tiled (Big)TIFF out, band by band (tiled_job.hpp)
};

void parse_size(const std::string& s, int& w, int& h, int limit = kMaxDimension) {
    const auto x = s.find('x');
    auto num = [&](const std::string& t) {
        if (t.empty() || t.size() > 7 || t.find_first_not_of("0123456789") != std::string::npos)
            return -1;
        return std::stoi(t);
    };
    w = x == std::string::npos ? -1 : num(s.substr(0, x));
    h = x == std::string::npos ? -1 : num(s.substr(x + 1));
    if (w < 1 || h < 1 || w > limit || h > limit)
        throw Error(ErrorCode::InvalidArgument,
                    "warp: --size '" + s + "' is not WIDTHxHEIGHT with sizes 1.." +
                        std::to_string(limit) +
                        (limit == kMaxDimension
                             ? " (--tiled: up to " + std::to_string(kMaxTiledDimension) + ")"
                             : std::string()));
}

// --zoom F on a w x h input: round(F w) x round(F h), each side in 1..limit (kMaxDimension, or
// kMaxTiledDimension with --tiled).
void zoom_size(double zoom, int w, int h, int limit, int& ow, int& oh) {
    if (!(zoom > 0) || !std::isfinite(zoom))
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("warp: --zoom {} must be a positive number", zoom));
    const double fw = std::round(w * zoom), fh = std::round(h * zoom);
    if (fw < 1 || fh < 1 || fw > limit || fh > limit)
        throw Error(ErrorCode::InvalidArgument,
                    limit == kMaxDimension
                        ? fmt::format("warp: --zoom {} gives a {} x {} image (sizes 1..{}; "
                                      "--tiled: 1..{})",
                                      zoom, fw, fh, kMaxDimension, kMaxTiledDimension)
                        : fmt::format("warp: --zoom {} gives a {} x {} image (sizes 1..{} with "
                                      "--tiled)",
                                      zoom, fw, fh, limit));
    ow = static_cast<int>(fw), oh = static_cast<int>(fh);
}

// The flow field as a 2-channel float image (dx, dy).
Image<float> read_flow(const std::string& path) {
    AnyImage a = read_input(path);
    if (!a.holds<float>())
        throw Error(ErrorCode::UnsupportedFormat,
                    "warp: flow '" + path + "' holds " + to_string(a.pixel_type()) +
                        " values; a flow field is float32 (NPY H x W x 2, or 3-channel PFM)");
    Image<float>& f = a.as<float>();
    if (f.channels() == 2) return std::move(f);
    if (f.channels() == 3) {  // PFM: first two channels are dx, dy
        Image<float> out(f.width(), f.height(), 2);
        for (int y = 0; y < f.height(); ++y)
            for (int x = 0; x < f.width(); ++x) {
                out(x, y, 0) = f(x, y, 0);
                out(x, y, 1) = f(x, y, 1);
            }
        return out;
    }
    throw Error(ErrorCode::UnsupportedFormat,
                "warp: flow '" + path + "' has " + std::to_string(f.channels()) +
                    " channels (2: NPY (dx, dy); 3: PFM whose first two channels are dx, dy)");
}

// The transform options, in the order of the callback's count.
enum class Given { Rotate, Zoom, Size, Affine, Homography, Flow };

// The map of --rotate, --affine or --homography for a w x h input, and its description.
Transform point_transform(const WarpArgs& args, Given which, int w, int h, std::string& what) {
    if (which == Given::Affine) {
        if (args.affine.size() != 6)
            throw CLI::ValidationError(
                "--affine", fmt::format("needs 6 numbers a,b,c,d,e,f, got {}", args.affine.size()));
        Affine a;
        for (int i = 0; i < 6; ++i) a.m[i] = args.affine[static_cast<std::size_t>(i)];
        what = fmt::format("affine {}", fmt::join(args.affine, ","));
        return Transform::make_affine(a);
    }
    if (which == Given::Homography) {
        if (args.homography.size() != 9)
            throw CLI::ValidationError(
                "--homography",
                fmt::format("needs 9 numbers h1,...,h9, got {}", args.homography.size()));
        Homography hm;
        for (int i = 0; i < 9; ++i) hm.h[i] = args.homography[static_cast<std::size_t>(i)];
        what = fmt::format("homography {}", fmt::join(args.homography, ","));
        return Transform::make_perspective(hm);
    }
    what = fmt::format("rotate {} deg", args.rotate);
    return Transform::make_rotation(args.rotate, w, h);
}

// --tiled: a TIFF of any size warped band by band (warp_tiled: zoom and resize by bands of rows,
// rotations, affine maps and homographies by bands of 2-D tiles) into a tiled TIFF (BigTIFF over
// 3.9 GB), in bounded memory; the output equals the whole-image command's pixels.
void run_tiled(const WarpArgs& args, const Common& common, Given which) {
    if (which == Given::Flow)
        throw Error(ErrorCode::InvalidArgument,
                    "warp: --tiled does not take --flow (the displacement field is read whole; "
                    "run it without --tiled)");
    check_tiled_paths("warp", args.in, args.out, args.format, args.tiling);
    const Context ctx = common.context();
    const std::vector<int> devices = common.device_list();  // --devices: bands over the GPUs
    WarpOptions o = args.opts;
    o.prefilter = parse_prefilter_name(args.prefilter);
    TiffRowReader in(args.in);
    const int w = in.width(), h = in.height();
    int ow = w, oh = h;
    Transform t = Transform::make_resize();
    std::string what = "resize";
    if (which == Given::Size) {
        parse_size(args.size, ow, oh, kMaxTiledDimension);
    } else if (which == Given::Zoom) {
        zoom_size(args.zoom, w, h, kMaxTiledDimension, ow, oh);
    } else {
        t = point_transform(args, which, w, h, what);
    }
    TiledJob job;
    job.command = "warp";
    job.in = args.in;
    job.out = args.out;
    job.out_width = ow;
    job.out_height = oh;
    job.options = fmt::format(
        "{}; interp {} border {} fill {} prefilter {} prefiltered {} antialias {} cubic_a {}; "
        "backend {}",
        what, to_string(o.interp), to_string(o.border), o.fill, o.prefilter, o.prefiltered,
        o.antialias, o.cubic_a, ctx.backend == Backend::Cuda ? "cuda" : "cpu");
    const TiledResult r = run_tiled_job(job, in, args.tiling, common.quiet,
                                        [&](RowSource& src, RowSink& dst, const TiledOptions& to) {
                                            TiledOptions with = to;
                                            with.devices = devices;
                                            return warp_tiled(src, dst, ow, oh, t, o, with, ctx);
                                        });
    if (!common.quiet)
        fmt::print(
            "{} -> {} ({} x {} x {} {}, {} x {} -> {} x {}, {} interpolation, {} border; "
            "{} band{} of {} rows, {:.0f} MiB of buffers{}, {}{:.1f} s)\n",
            args.in, args.out, ow, oh, in.channels(), to_string(in.type()), w, h, ow, oh,
            to_string(o.interp), to_string(o.border), r.stats.bands, r.stats.bands == 1 ? "" : "s",
            r.stats.band_rows, static_cast<double>(r.stats.buffer_bytes) / 1048576.0,
            r.stats.device_bytes
                ? fmt::format(" ({:.0f} MiB on the devices; reading {:.1f} s, writing {:.1f} s, "
                              "waiting for the devices {:.1f} s)",
                              static_cast<double>(r.stats.device_bytes) / 1048576.0,
                              r.stats.read_seconds, r.stats.write_seconds, r.stats.wait_seconds)
                : "",
            r.bigtiff ? "BigTIFF, " : "", r.seconds);
}

void run_warp(const WarpArgs& args, const Common& common, int given, Given which) {
    if (given != 1)
        throw CLI::ValidationError(
            "warp", given == 0 ? "give one transform: --rotate, --zoom, --size, --affine, "
                                 "--homography or --flow"
                               : "give only one transform (--rotate, --zoom, --size, --affine, "
                                 "--homography, --flow)");
    if (args.tiling.tiled) return run_tiled(args, common, which);
    const Context ctx = common.context();
    WarpOptions o = args.opts;
    o.prefilter = parse_prefilter_name(args.prefilter);
    const FileFormat fmt_out = output_format(args.out, args.format);

    Image<float> flow;
    if (which == Given::Flow) flow = read_flow(args.flow);
    AnyImage img = read_input(args.in);
    if (!can_store(fmt_out, img.pixel_type()))
        throw Error(ErrorCode::UnsupportedFormat,
                    fmt::format("warp: '{}' holds {} pixels but {} files store only {} (warp "
                                "keeps the pixel type; convert first or pick another format)",
                                args.in, to_string(img.pixel_type()), to_string(fmt_out),
                                depth_list(fmt_out)));
    const int w = img.width(), h = img.height();
    int ow = w, oh = h;
    Transform t;
    std::string what;
    if (which == Given::Size) {
        parse_size(args.size, ow, oh);
        t = Transform::make_resize();
        what = fmt::format("resize to {} x {}", ow, oh);
    } else if (which == Given::Zoom) {
        zoom_size(args.zoom, w, h, kMaxDimension, ow, oh);
        t = Transform::make_resize();
        what = fmt::format("zoom x{} to {} x {}", args.zoom, ow, oh);
    } else if (which == Given::Flow) {
        // A field of another size is almost always one computed at another resolution (its
        // vectors in other units): refused, not cropped or padded.
        if (flow.width() != w || flow.height() != h)
            throw Error(ErrorCode::InvalidArgument,
                        fmt::format("warp: the flow field '{}' is {} x {} but '{}' is {} x {}; "
                                    "the displacement field must have the image's size",
                                    args.flow, flow.width(), flow.height(), args.in, w, h));
        t = Transform::make_flow(flow.view());
        what = "flow";
    } else {
        t = point_transform(args, which, w, h, what);
    }

    AnyImage result;
    if (img.holds<std::uint8_t>()) {
        Image<std::uint8_t> r(ow, oh, img.channels());
        warp(img.as<std::uint8_t>().view(), r.view(), t, o, ctx);
        result = std::move(r);
    } else if (img.holds<std::uint16_t>()) {
        Image<std::uint16_t> r(ow, oh, img.channels());
        warp(img.as<std::uint16_t>().view(), r.view(), t, o, ctx);
        result = std::move(r);
    } else {
        Image<float> r(ow, oh, img.channels());
        warp(img.as<float>().view(), r.view(), t, o, ctx);
        result = std::move(r);
    }
    write_output(args.out, result, fmt_out);
    if (!common.quiet)
        fmt::print("{} -> {} ({}, {}, {} interpolation, {} border)\n", args.in, args.out,
                   describe(result), what, to_string(o.interp), to_string(o.border));
}

}  // namespace

void add_warp(CLI::App& app, const Common& common) {
    auto args = std::make_shared<WarpArgs>();
    auto* cmd = app.add_subcommand(
        "warp", "Rotate, zoom/resize, affine, homography or flow warp with exact interpolation");
    cmd->add_option("IN", args->in, "Input image")->required();
    cmd->add_option("OUT", args->out, "Output image (same pixel type as IN)")->required();
    auto* rot = cmd->add_option("--rotate", args->rotate,
                                "Rotate by DEG degrees about the centre (scipy.ndimage.rotate "
                                "sense, same size)");
    auto* zoom = cmd->add_option("--zoom", args->zoom, "Zoom by F (output size round(F * size))");
    auto* size = cmd->add_option("--size", args->size, "Resize to WIDTHxHEIGHT");
    auto* aff = cmd->add_option("--affine", args->affine,
                                "Inverse affine map a,b,c,d,e,f: output (x, y) samples input "
                                "(a x + b y + c, d x + e y + f)")
                    ->delimiter(',')
                    ->allow_extra_args(false);
    auto* hom = cmd->add_option("--homography", args->homography,
                                "Inverse homography h1,...,h9 (row-major, output -> input)")
                    ->delimiter(',')
                    ->allow_extra_args(false);
    auto* flow = cmd->add_option("--flow", args->flow,
                                 "Displacement field: float32 NPY (H, W, 2) = (dx, dy), or a "
                                 "3-channel PFM (dx, dy, ignored); output (x, y) samples input "
                                 "(x + dx, y + dy); the field has the image's size");
    const OperationDesc& op = operation("warp");
    add_declared_fields(cmd, op, &args->opts);
    add_declared(cmd, op, "prefilter", args->prefilter);
    add_format_option(cmd, args->format);
    const TiledFlags tiled = add_tiled_flags(
        cmd, args->tiling,
        "TIFF of any size in, tiled (Big)TIFF out, band by band of rows in bounded "
        "memory (cpu or cuda backend, --devices spreads the bands over GPUs; --rotate, "
        "--affine, --homography by 2-D tiles); "
        "the pixels equal the whole-image run's");
    cmd->callback([args, &common, rot, zoom, size, aff, hom, flow, tiled] {
        check_tiled_flags(tiled);
        // Which option was given decides the transform, not its value (--zoom 0 is an error,
        // not "no zoom").
        const CLI::Option* const opts[] = {rot, zoom, size, aff, hom, flow};
        int given = 0;
        Given which = Given::Rotate;
        for (int i = 0; i < 6; ++i)
            if (opts[i]->count() > 0) ++given, which = static_cast<Given>(i);
        run_warp(*args, common, given, which);
    });
}

}  // namespace upres::cli
