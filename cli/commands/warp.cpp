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
    // --tiled: TIFF in, tiled (Big)TIFF out, band by band (upres/tiled.hpp).
    bool tiled = false, deflate = false;
    int band_rows = 0, tile_size = 0;
    double max_memory_mib = 0;
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

// The files of a resumable tiled job writing `out` (see run_tiled).
struct ResumeState {
    std::string file;  // the partial file holding the rows
    int rows = 0;
};
struct ResumeFiles {
    std::string partial, done, journal;
    explicit ResumeFiles(const std::string& out)
        : partial(out + ".upres-partial.tif"),
          done(out + ".upres-done.tif"),
          journal(out + ".upres-resume") {}
    // The journal's state if it is this job's, its rows are whole rows of tiles of the output
    // and its file holds an image of the output's size; rows = 0 otherwise (start over).
    ResumeState read(const std::string& key, int width, int height, int tile) const {
        std::ifstream f(journal);
        std::string magic, k, file;
        int rows = 0;
        if (!std::getline(f, magic) || magic != "upres tiled job 1" || !std::getline(f, k) ||
            k != key || !std::getline(f, file) || !(f >> rows) || rows <= 0 || rows >= height ||
            rows % tile != 0 || (file != partial && file != done) || !std::filesystem::exists(file))
            return {};
        try {
            const TiffRowReader r(file);
            if (r.width() != width || r.height() != height) return {};
        } catch (const Error&) {
            return {};
        }
        return {file, rows};
    }
    // Replaces the journal (written aside, then renamed: a kill leaves the old or the new one).
    void write(const std::string& key, const std::string& file, int rows) const {
        const std::string tmp = journal + ".tmp";
        {
            std::ofstream f(tmp, std::ios::trunc);
            f << "upres tiled job 1\n" << key << "\n" << file << "\n" << rows << "\n";
            if (!f.flush())
                throw Error(ErrorCode::IoError, journal + ": cannot write the resume journal");
        }
        std::error_code ec;
        std::filesystem::rename(tmp, journal, ec);
        if (ec)
            throw Error(ErrorCode::IoError,
                        journal + ": cannot write the resume journal: " + ec.message());
    }
    void remove_all() const noexcept {
        std::error_code ec;
        for (const std::string* p : {&partial, &done, &journal}) std::filesystem::remove(*p, ec);
    }
};

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
    if (format_from_path(args.in) != FileFormat::Tiff)
        throw Error(ErrorCode::InvalidArgument,
                    "warp: " + args.in + ": --tiled reads TIFF or BigTIFF (.tif, .tiff)");
    if (output_format(args.out, args.format) != FileFormat::Tiff)
        throw Error(ErrorCode::InvalidArgument,
                    "warp: " + args.out + ": --tiled writes tiled TIFF (.tif, .tiff)");
    if (args.max_memory_mib != 0 && (!(args.max_memory_mib >= 1) || args.max_memory_mib > 1e6))
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("warp: --max-memory {} MiB is outside [1, 1000000] (0: automatic)",
                                args.max_memory_mib));
    if (args.band_rows < 0)
        throw Error(
            ErrorCode::InvalidArgument,
            fmt::format("warp: --band-rows {} is negative (0: from --max-memory)", args.band_rows));
    const Context ctx = common.context();
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
    if (args.band_rows > oh)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("warp: --band-rows {} exceeds the output's {} rows (0: from "
                                "--max-memory)",
                                args.band_rows, oh));
    // The output's tile side (also in the resumable job's key: fixed before the writer).
    const int cover = (std::max(ow, oh) + 15) / 16 * 16;
    if (args.tile_size < 0)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("warp: --tile-size {} is negative (0: automatic)", args.tile_size));
    const int tile = args.tile_size > 0 ? args.tile_size : tiff_tile_side(ow, oh);
    if (tile > cover)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("warp: --tile-size {} exceeds the {} x {} output (at most {}, the "
                                "multiple of 16 that covers it)",
                                tile, ow, oh, cover));
    // Resumable: OUT.upres-partial.tif holds the rows written so far (a valid TIFF after every
    // row of tiles) and OUT.upres-resume names the job and the rows; the same command after a
    // kill, a Ctrl-C or an error copies those rows and computes the rest.
    std::error_code fs_ec;  // the input was opened: its size and time are there
    const std::string key = fmt::format(
        "input {} {} {}; {}; output {} x {}; interp {} border {} fill {} prefilter {} "
        "prefiltered {} antialias {} cubic_a {}; tile {} deflate {}",
        std::filesystem::absolute(args.in).string(), std::filesystem::file_size(args.in, fs_ec),
        std::filesystem::last_write_time(args.in, fs_ec).time_since_epoch().count(), what, ow, oh,
        to_string(o.interp), to_string(o.border), o.fill, o.prefilter, o.prefiltered, o.antialias,
        o.cubic_a, tile, args.deflate);
    const ResumeFiles rf{args.out};
    const ResumeState prev = rf.read(key, ow, oh, tile);
    int done = 0;
    std::string done_file;
    if (prev.rows > 0) {
        std::error_code ec;
        if (prev.file != rf.done) std::filesystem::rename(prev.file, rf.done, ec);
        if (ec)
            throw Error(ErrorCode::IoError, fmt::format("warp: {}: cannot rename it to resume: {}",
                                                        prev.file, ec.message()));
        rf.write(key, rf.done, prev.rows);
        done = prev.rows, done_file = rf.done;
    } else {
        rf.remove_all();
    }
    TiffRowWriterOptions wo;
    wo.tile = tile;
    wo.deflate = args.deflate;
    wo.partial_path = rf.partial;
    int checkpointed = 0;  // rows safe in the partial file
    wo.on_checkpoint = [&](int rows) {
        checkpointed = rows;
        if (rows < done) return;  // still copying: the rows are in the done file
        rf.write(key, rf.partial, rows);
        if (!done_file.empty()) {
            std::error_code ec;
            std::filesystem::remove(done_file, ec);
            done_file.clear();
        }
    };
    TiffRowWriter out(args.out, ow, oh, in.channels(), in.type(), wo);
    TiledOptions to;
    to.max_memory = static_cast<std::size_t>(args.max_memory_mib * 1048576.0);
    to.band_rows = args.band_rows;
    // Bands end on rows of output tiles, where the writer checkpoints: a kill loses at most one
    // band, at most 1 % of the rows on images of 25600 output rows or more.
    to.band_align = tile;
    to.max_band_rows = std::max(tile, oh / 100);
    to.first_row = done;
    const InterruptHandler handler;
    ProgressBar bar("warp (tiled)", oh, common.quiet);
    to.progress = [&](std::int64_t rows, std::int64_t total) {
        bar.update(rows);
        if (interrupted())
            throw Error(ErrorCode::IoError,
                        fmt::format("warp: interrupted after {} of {} rows", rows, total));
    };
    const auto t0 = std::chrono::steady_clock::now();
    TiledStats st;
    try {
        if (done > 0) {  // the rows of the interrupted run, copied
            TiffRowReader prev_rows(done_file);
            const int chunk = tile;
            std::vector<unsigned char> buf(static_cast<std::size_t>(chunk) * ow * in.channels() *
                                           pixel_size(in.type()));
            for (int y = 0; y < done; y += chunk) {
                const int n = std::min(chunk, done - y);
                prev_rows.read_rows(y, n, buf.data(), std::ptrdiff_t{ow} * in.channels());
                out.write_rows(y, n, buf.data(), std::ptrdiff_t{ow} * in.channels());
            }
            bar.update(done);
        }
        st = warp_tiled(in, out, ow, oh, t, o, to, ctx);
        rf.remove_all();
    } catch (const Error& e) {
        bar.abandon();
        const int kept = std::max(checkpointed, done);
        if (kept == 0) {
            rf.remove_all();
            throw;
        }
        out.keep_partial();
        throw Error(e.code(), fmt::format("{}; {} was not written: rerun the same command to "
                                          "resume after the {} rows kept",
                                          e.what(), args.out, kept));
    } catch (...) {
        bar.abandon();
        rf.remove_all();
        throw;
    }
    bar.finish();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!common.quiet)
        fmt::print(
            "{} -> {} ({} x {} x {} {}, {} x {} -> {} x {}, {} interpolation, {} border; "
            "{} band{} of {} rows, {:.0f} MiB of buffers, {}{:.1f} s)\n",
            args.in, args.out, ow, oh, in.channels(), to_string(in.type()), w, h, ow, oh,
            to_string(o.interp), to_string(o.border), st.bands, st.bands == 1 ? "" : "s",
            st.band_rows, static_cast<double>(st.buffer_bytes) / 1048576.0,
            out.bigtiff() ? "BigTIFF, " : "", secs);
}

void run_warp(const WarpArgs& args, const Common& common, int given, Given which) {
    if (given != 1)
        throw CLI::ValidationError(
            "warp", given == 0 ? "give one transform: --rotate, --zoom, --size, --affine, "
                                 "--homography or --flow"
                               : "give only one transform (--rotate, --zoom, --size, --affine, "
                                 "--homography, --flow)");
    if (args.tiled) return run_tiled(args, common, which);
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
    auto* tiled = cmd->add_flag(
        "--tiled", args->tiled,
        "TIFF of any size in, tiled (Big)TIFF out, band by band of rows in bounded "
        "memory (--zoom / --size; --rotate, --affine, --homography by 2-D tiles; cpu backend); "
        "the pixels equal the whole-image run's");
    const std::vector<CLI::Option*> tiled_only = {
        cmd->add_option("--band-rows", args->band_rows,
                        "--tiled: output rows per band (default 0: from --max-memory)"),
        cmd->add_option("--max-memory", args->max_memory_mib,
                        "--tiled: MiB for the bands' buffers (default 0: 64, or more for very wide "
                        "images)"),
        cmd->add_option(
            "--tile-size", args->tile_size,
            "--tiled: the output TIFF's tile side, a multiple of 16 (default 0: 256, less "
            "for smaller outputs)"),
        cmd->add_flag("--deflate", args->deflate,
                      "--tiled: Deflate-compress the output tiles (default: uncompressed)")};
    cmd->callback([args, &common, rot, zoom, size, aff, hom, flow, tiled, tiled_only] {
        for (const CLI::Option* o : tiled_only)
            if (o->count() > 0 && tiled->count() == 0)
                throw CLI::ValidationError(o->get_name(), "applies to --tiled runs only");
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
