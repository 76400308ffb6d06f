// upres upscale IN... OUT: every method of upres::upscale (upres/upscale.hpp): SRCNN, SEABI
// (L-SEAI, SIL-SEABI, L-SEABI), tap4 / tap6, bilinear, bicubic. This file only maps the flags
// (declared once with the upscale operation, src/pipelines/upscale/upscale_options.cpp) to
// UpscaleOptions; the choice of method and lattice (--method auto: SRCNN for x2, x3, x4, else
// bicubic) and their composition are the library's.
//
// A video file in (upres/video.hpp, when built with FFmpeg's libraries): a video file out, every
// frame through the method, a progress bar with fps and ETA, --json statistics; Ctrl-C stops it
// and leaves no output file.
//
// Several inputs, or a folder: OUT is a folder (created), each output keeps its input's file
// name; a progress bar on stderr; a file that fails is reported on stderr and counted, the
// others still run, and the command exits with the first failure's code.
#include <fmt/core.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <atomic>
#include <csignal>
#include <upres/io.hpp>
#include <upres/seabi.hpp>
#include <upres/srcnn.hpp>
#include <upres/upscale.hpp>
#if UPRES_HAVE_VIDEO
#include <upres/video.hpp>
#endif
#include <upres/warp.hpp>
#include "command.hpp"
#include "options.hpp"
#include "tiled_job.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

namespace fs = std::filesystem;

struct UpscaleArgs {
    std::vector<std::string> paths;  // IN... OUT
    UpscaleOptions opts;
    std::string format = "auto";
    bool verbose = false;
    bool json = false;
    bool stream = false;       // --stream: row-streamed PGM -> PGM (SeabiStream)
    bool single_pass = false;  // --single-pass: predicted threshold, the input read once
    int stripe_rows = 64;      // --stripe-rows
    bool stripe_rows_given = false;
    TiledArgs tiling;  // --tiled: TIFF in, tiled (Big)TIFF out (tiled_job.hpp)
#if UPRES_HAVE_VIDEO
    VideoOptions video;
#endif
};

// Which method-specific flags were given (they apply to one method only).
struct Given {
    bool scale, iterations, max_error, model, precision, variant;
    std::string video_flag;  // the first video flag given (--codec, ...), "" if none
};

[[noreturn]] void invalid(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, "upscale: " + msg);
}

// The options for every image, decided once from the flags: the method's own flags are refused
// with another method rather than ignored.
UpscaleOptions make_options(const UpscaleArgs& args, const Given& given) {
    UpscaleOptions o = args.opts;
    const UpscaleMethod m = resolved_method(o);
    if ((given.iterations || given.max_error) && m != UpscaleMethod::LSeabi)
        invalid(fmt::format("{} applies to --method lseabi only (not {})",
                            given.iterations ? "--iterations" : "--max-error", to_string(m)));
    if (m != UpscaleMethod::Srcnn && (given.model || given.precision || given.variant))
        invalid(fmt::format("{} applies to --method srcnn only (not {})",
                            given.model       ? "--model"
                            : given.precision ? "--precision"
                                              : "--variant",
                            to_string(m)));
    if (given.model && !given.scale) o.scale = 0.0;  // the model's own factor
    resolved_lattice(o);                             // a lattice the method is not defined on
    return o;
}

void print_plan(const UpscaleOptions& o, const Context& ctx) {
    const UpscaleMethod m = resolved_method(o);
    fmt::print("method {}, x{}, lattice {}, backend {}\n", to_string(m), o.scale,
               to_string(resolved_lattice(o)), to_string(ctx.backend));
    if (m != UpscaleMethod::Srcnn) return;
    const std::string path =
        o.model.empty() ? fmt::format("{}/srcnn_x{}.srcnn", srcnn_model_dir(), o.scale) : o.model;
    const SrcnnModel mo = load_srcnn_model(path);
    fmt::print("model {}: {}-{}-{}, channels {}/{}, receptive field {}, {} MACs/pixel\n", path,
               mo.layers[0].kernel, mo.layers[1].kernel, mo.layers[2].kernel,
               mo.layers[0].out_channels, mo.layers[1].out_channels, mo.receptive_field(),
               mo.macs_per_pixel());
    if (!mo.description.empty()) fmt::print("model description: {}\n", mo.description);
    fmt::print("requested precision {}, variant {}\n", to_string(o.srcnn.precision),
               to_string(o.srcnn.variant));
}

void print_ran(const SrcnnPlan& sp) {
    if (sp.fused)
        fmt::print("ran: fused network kernel, precision {}\n", to_string(sp.precision));
    else
        fmt::print("ran: layers {}, {}, {}, precision {}\n", to_string(sp.layers[0]),
                   to_string(sp.layers[1]), to_string(sp.layers[2]), to_string(sp.precision));
}

#if UPRES_HAVE_VIDEO

void run_video(const UpscaleArgs& args, const Common& common, const UpscaleOptions& opts,
               const Context& ctx) {
    const std::string& in = args.paths[0];
    const std::string& out = args.paths[1];
    if (!is_video_path(out))
        throw Error(ErrorCode::InvalidArgument,
                    "upscale: " + out +
                        ": a video input needs a video output (.mkv, .mp4, .mov, "
                        ".webm, ...)");
    // Ctrl-C stops the run between frames; upscale_video then removes its partial output.
    const InterruptHandler handler;
    ProgressBar bar("upscale", 0, common.quiet);
    VideoStats st;
    try {
        st = upscale_video(in, out, opts, args.video, ctx,
                           [&](std::int64_t done, std::int64_t total) {
                               bar.set_total(total);
                               bar.update(done);
                               return !interrupted();
                           });
    } catch (...) {
        bar.abandon();
        throw;
    }
    bar.finish();
    const auto fps = [&](double s) { return s > 0 ? static_cast<double>(st.frames) / s : 0.0; };
    if (args.json) {
        fmt::print(
            "{{\"input\": {}, \"output\": {}, \"method\": \"{}\", \"scale\": {}, "
            "\"backend\": \"{}\", \"hwdec\": \"{}\", \"codec\": \"{}\", \"pixel_format\": \"{}\", "
            "\"input_size\": [{}, {}], \"output_size\": [{}, {}], \"frames\": {}, "
            "\"copied_streams\": {}, \"seconds\": {:.4f}, \"fps\": {:.3f}, "
            "\"stages\": {{\"decode\": {{\"seconds\": {:.4f}, \"fps\": {:.3f}}}, "
            "\"upscale\": {{\"seconds\": {:.4f}, \"fps\": {:.3f}}}, "
            "\"encode\": {{\"seconds\": {:.4f}, \"fps\": {:.3f}}}}}}}\n",
            json_string(in), json_string(out), to_string(resolved_method(opts)), opts.scale,
            to_string(ctx.backend), to_string(args.video.hwdec), st.codec, st.pixel_format,
            st.in_width, st.in_height, st.out_width, st.out_height, st.frames, st.copied_streams,
            st.seconds, fps(st.seconds), st.decode_seconds, fps(st.decode_seconds),
            st.upscale_seconds, fps(st.upscale_seconds), st.encode_seconds, fps(st.encode_seconds));
    } else if (!common.quiet) {
        fmt::print(
            "{}: {} x {} -> {} x {} {} ({}, x{}, {}), {} frames in {:.1f} s ({:.1f} fps; stages: "
            "decode {:.1f}, upscale {:.1f}, encode {:.1f} fps), {} streams copied\n",
            out, st.in_width, st.in_height, st.out_width, st.out_height, st.pixel_format,
            to_string(resolved_method(opts)), opts.scale, st.codec, st.frames, st.seconds,
            fps(st.seconds), fps(st.decode_seconds), fps(st.upscale_seconds),
            fps(st.encode_seconds), st.copied_streams);
    }
}
#endif

// --stream: an 8-bit gray PGM, TIFF or BigTIFF of any size through L-SEAI or SIL-SEABI x2, row
// by row (upres/seabi.hpp, SeabiStream), into a PGM or a tiled (Big)TIFF written row by row:
// memory independent of the height. Without --single-pass the input is read twice (the exact
// total variation first, then the stream), and the output equals the whole-image result byte
// for byte.
struct StreamInput {
    std::unique_ptr<PgmRowReader> pgm;
    std::unique_ptr<TiffRowReader> tiff;
    int y = 0;
    explicit StreamInput(const std::string& path) {
        if (format_from_path(path) == FileFormat::Pnm) {
            pgm = std::make_unique<PgmRowReader>(path);
            return;
        }
        tiff = std::make_unique<TiffRowReader>(path);
        if (tiff->type() != PixelType::U8 || tiff->channels() != 1)
            invalid(fmt::format("{}: --stream reads 8-bit gray images, not {} channel{} of {}",
                                path, tiff->channels(), tiff->channels() == 1 ? "" : "s",
                                to_string(tiff->type())));
    }
    int width() const { return pgm ? pgm->width() : tiff->width(); }
    int height() const { return pgm ? pgm->height() : tiff->height(); }
    void read(ImageView<std::uint8_t> rows) {
        if (pgm) return pgm->read(rows);
        tiff->read_rows(y, rows.height(), rows.data(), rows.stride());
        y += rows.height();
    }
};
struct StreamOutput {
    std::unique_ptr<PgmRowWriter> pgm;
    std::unique_ptr<TiffRowWriter> tiff;
    int y = 0;
    StreamOutput(const std::string& path, FileFormat f, int w, int h) {
        if (f == FileFormat::Pnm)
            pgm = std::make_unique<PgmRowWriter>(path, w, h);
        else
            tiff = std::make_unique<TiffRowWriter>(path, w, h, 1, PixelType::U8);
    }
    void write(ImageView<const std::uint8_t> rows) {
        if (pgm) return pgm->write(rows);
        tiff->write_rows(y, rows.height(), rows.data(), rows.stride());
        y += rows.height();
    }
    void commit() { pgm ? pgm->commit() : tiff->commit(); }
};
// TIFF to TIFF with the exact threshold: a resumable job (cli/tiled_job.hpp). A killed run
// keeps the rows of tiles written; the same command computes the total variation again (a read
// of the input), then streams from the first row not kept, with the stream's halo above it
// (SeabiStreamOptions::first_row): the file equals an uninterrupted run's.
void run_stream_resumable(const UpscaleArgs& args, const Common& common, UpscaleMethod m,
                          SeabiStreamOptions so, const Context& ctx,
                          std::chrono::steady_clock::time_point t0) {
    TiffRowReader in(args.paths[0]);
    const int w = in.width(), h = in.height();
    TiledJob job;
    job.command = "upscale";
    job.in = args.paths[0];
    job.out = args.paths[1];
    job.out_width = 2 * w;
    job.out_height = 2 * h;
    job.options = fmt::format("stream method {} lattice {}", to_string(m), to_string(so.lattice));
    int stripes = 0, stripe_rows = 0;
    std::size_t buffers = 0;
    const TiledResult r =
        run_tiled_job(job, in, TiledArgs{}, common.quiet,
                      [&](RowSource& src, RowSink& dst, const TiledOptions& to) {
                          TiledStats st;
                          const int done = to.first_row;  // rows of tiles kept: even
                          so.first_row = done / 2;
                          // Written by rows of output tiles (the writer checkpoints after each
                          // write): a kill loses less than a row of tiles.
                          const int unit = std::max(1, to.band_align);
                          Image<std::uint8_t> pending(2 * w, unit, 1);
                          int held = 0, y_out = done;
                          const auto flush = [&] {
                              dst.write_rows(y_out, held, pending.data(), pending.stride());
                              y_out += held;
                              held = 0;
                              ++st.bands;
                              if (to.progress) to.progress(y_out, 2 * h);
                          };
                          SeabiStream s(
                              w, h, so,
                              [&](ImageView<const std::uint8_t> rows, int first) {
                                  for (int i = std::max(0, done - first); i < rows.height(); ++i) {
                                      std::memcpy(pending.view().row(held++), rows.row(i),
                                                  static_cast<std::size_t>(2 * w));
                                      if ((y_out + held) % unit == 0) flush();
                                  }
                              },
                              ctx);
                          constexpr int kChunk = 64;
                          Image<std::uint8_t> buf(w, kChunk, 1);
                          for (int y = s.first_input_row(); y < h; y += kChunk) {
                              const int n = std::min(kChunk, h - y);
                              src.read_rows(y, n, buf.data(), buf.stride());
                              st.rows_read += n;
                              s.push(buf.view().sub(0, 0, w, n));
                          }
                          if (held > 0) flush();
                          dst.commit();
                          stripes = s.pipelines(), stripe_rows = s.stripe_rows();
                          buffers = s.buffer_bytes();
                          st.band_rows = unit;
                          st.buffer_bytes = buffers + static_cast<std::size_t>(2 * w) * unit;
                          return st;
                      });
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!common.quiet)
        fmt::print(
            "{}: {} x {} -> {} x {} ({}, x2 streamed, {} lattice, exact threshold) in {:.1f} s "
            "({:.1f} Mpx/s out), {} stripes of {} rows per batch, stream buffers {:.1f} MB{}\n",
            job.out, w, h, 2 * w, 2 * h, to_string(m), to_string(so.lattice), sec,
            4.0 * w * h / sec / 1e6, stripes, stripe_rows, static_cast<double>(buffers) / 1e6,
            r.bigtiff ? ", BigTIFF" : "");
}

void run_stream(const UpscaleArgs& args, const Common& common, const UpscaleOptions& opts,
                const Context& ctx) {
    if (args.paths.size() != 2)
        invalid("--stream takes one input and one output (IN.pgm|tif OUT.pgm|tif)");
    const std::string& in = args.paths[0];
    const std::string& out = args.paths[1];
    const UpscaleMethod m = resolved_method(opts);
    if (m != UpscaleMethod::SilSeabi && m != UpscaleMethod::LSeai)
        invalid(fmt::format("--stream runs --method silseabi or lseai (not {})", to_string(m)));
    if (opts.scale != 2.0) invalid(fmt::format("--stream runs x2 (--scale 2), not {}", opts.scale));
    const FileFormat in_format = format_from_path(in), out_format = output_format(out, args.format);
    if (in_format != FileFormat::Pnm && in_format != FileFormat::Tiff)
        invalid(in + ": --stream reads binary PGM (.pgm) or TIFF / BigTIFF (.tif)");
    if (out_format != FileFormat::Pnm && out_format != FileFormat::Tiff)
        invalid(out + ": --stream writes binary PGM (.pgm) or tiled TIFF / BigTIFF (.tif)");
    SeabiStreamOptions so;
    so.method = m == UpscaleMethod::LSeai ? SeabiMethod::LSeai : SeabiMethod::SilSeabi;
    so.lattice = resolved_lattice(opts);
    so.stripe_rows = args.stripe_rows;
    const auto t0 = std::chrono::steady_clock::now();
    const InterruptHandler handler;
    // Reads `in` in chunks of rows into `use`, with a progress bar; Ctrl-C stops between chunks.
    const auto each_chunk = [&](StreamInput& r, const char* label, const auto& use) {
        constexpr int kChunk = 64;
        const int w = r.width(), h = r.height();
        Image<std::uint8_t> buf(w, kChunk, 1);
        ProgressBar bar(label, h, common.quiet);
        try {
            for (int y = 0; y < h; y += kChunk) {
                if (interrupted())
                    throw Error(ErrorCode::IoError,
                                fmt::format("upscale: interrupted after {} of {} rows; {} was not "
                                            "written",
                                            y, h, out));
                const ImageView<std::uint8_t> rows =
                    buf.view().sub(0, 0, w, std::min(kChunk, h - y));
                r.read(rows);
                use(rows);
                bar.update(y + rows.height());
            }
        } catch (...) {
            bar.abandon();
            throw;
        }
        bar.finish();
    };
    if (!args.single_pass) {  // pass 1: the exact total variation
        StreamInput r(in);
        SeabiTotalVariation tv(r.width(), r.height());
        each_chunk(r, "upscale (pass 1 of 2: total variation)",
                   [&](ImageView<const std::uint8_t> rows) { tv.push(rows); });
        so.total_variation = tv.value();
        if (in_format == FileFormat::Tiff && out_format == FileFormat::Tiff)
            return run_stream_resumable(args, common, m, so, ctx, t0);
    }
    StreamInput r(in);
    const int w = r.width(), h = r.height();
    StreamOutput wr(out, out_format, 2 * w, 2 * h);
    SeabiStream s(
        w, h, so, [&](ImageView<const std::uint8_t> rows, int) { wr.write(rows); }, ctx);
    each_chunk(r, args.single_pass ? "upscale (stream)" : "upscale (pass 2 of 2: stream)",
               [&](ImageView<const std::uint8_t> rows) { s.push(rows); });
    wr.commit();
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!common.quiet)
        fmt::print(
            "{}: {} x {} -> {} x {} ({}, x2 streamed, {} lattice, {} threshold) in {:.1f} s "
            "({:.1f} Mpx/s out), {} stripes of {} rows per batch, stream buffers {:.1f} MB\n",
            out, w, h, 2 * w, 2 * h, to_string(m), to_string(so.lattice),
            args.single_pass ? "predicted" : "exact", sec, 4.0 * w * h / sec / 1e6, s.pipelines(),
            s.stripe_rows(), static_cast<double>(s.buffer_bytes()) / 1e6);
}

// --tiled: a TIFF of any size upscaled tile by tile (upscale_tiled: srcnn in tiles with their
// halo, bicubic / bilinear / bspline as warp_tiled's bands) into a tiled (Big)TIFF, in bounded
// memory and resumable; the pixels equal the whole-image command's.
void run_tiled(const UpscaleArgs& args, const Common& common, const UpscaleOptions& opts,
               const Context& ctx) {
    if (args.paths.size() != 2) invalid("--tiled takes one input and one output (IN.tif OUT.tif)");
    check_tiled_paths("upscale", args.paths[0], args.paths[1], args.format, args.tiling);
    TiffRowReader in(args.paths[0]);
    const UpscaleMethod m = resolved_method(opts);
    const double s = opts.scale;
    // The output size (upscale_tiled checks the scale and the method).
    const long long ow = std::llround(s * in.width()), oh = std::llround(s * in.height());
    if (!(s >= 1 && s <= 16) || s != std::floor(s))
        invalid(fmt::format("--tiled needs an integer scale in [1, 16], not {}", s));
    if (ow > kMaxTiledDimension || oh > kMaxTiledDimension)
        invalid(fmt::format("the output {} x {} exceeds {} a side (--tiled's limit)", ow, oh,
                            kMaxTiledDimension));
    TiledJob job;
    job.command = "upscale";
    job.in = args.paths[0];
    job.out = args.paths[1];
    job.out_width = static_cast<int>(ow);
    job.out_height = static_cast<int>(oh);
    // The backend and the network's kernels change the bytes (cuda: float sums in another
    // order; with variant auto or precision fastest the kernels are chosen by timing).
    const bool cuda = ctx.backend == Backend::Cuda;
    job.options = fmt::format("method {} scale {} model {} lattice {} backend {}", to_string(m), s,
                              opts.model, to_string(resolved_lattice(opts)), cuda ? "cuda" : "cpu");
    if (cuda && m == UpscaleMethod::Srcnn)
        job.options += fmt::format(
            " precision {} variant {} layers {} {} {}", to_string(opts.srcnn.precision),
            to_string(opts.srcnn.variant), to_string(opts.srcnn.layer_variants[0]),
            to_string(opts.srcnn.layer_variants[1]), to_string(opts.srcnn.layer_variants[2]));
    const std::vector<int> devices = common.device_list();  // --devices: bands over the GPUs
    const TiledResult r = run_tiled_job(job, in, args.tiling, common.quiet,
                                        [&](RowSource& src, RowSink& dst, const TiledOptions& to) {
                                            TiledOptions with = to;
                                            with.devices = devices;
                                            return upscale_tiled(src, dst, opts, with, ctx);
                                        });
    if (!common.quiet)
        fmt::print(
            "{} -> {} ({} x {} x {} {} -> {} x {}, {}, x{}; {} band{} of {} rows, {:.0f} MiB of "
            "buffers, {}{:.1f} s)\n",
            job.in, job.out, in.width(), in.height(), in.channels(), to_string(in.type()), ow, oh,
            to_string(m), s, r.stats.bands, r.stats.bands == 1 ? "" : "s", r.stats.band_rows,
            static_cast<double>(r.stats.buffer_bytes) / 1048576.0, r.bigtiff ? "BigTIFF, " : "",
            r.seconds);
}

void run_upscale(const UpscaleArgs& args, const Common& common, const Given& given) {
    if (args.paths.size() < 2)
        throw Error(ErrorCode::InvalidArgument,
                    "upscale: give at least one input and the output (IN... OUT)");
    const Context ctx = common.context();
    const UpscaleOptions opts = make_options(args, given);
    const bool srcnn = resolved_method(opts) == UpscaleMethod::Srcnn;
    const std::vector<std::string> ins(args.paths.begin(), args.paths.end() - 1);
    const std::string& out = args.paths.back();
    bool batch = false;
    const std::vector<std::string> files = expand_inputs(ins, batch);
    if (args.verbose) print_plan(opts, ctx);
    if (args.stream && args.tiling.tiled)
        invalid(
            "--stream and --tiled do not go together (silseabi / lseai stream; srcnn, "
            "bicubic, bilinear, bspline tile)");
    if (args.stream) return run_stream(args, common, opts, ctx);
    if (args.tiling.tiled) return run_tiled(args, common, opts, ctx);
    if (args.single_pass || args.stripe_rows_given)
        invalid(std::string(args.single_pass ? "--single-pass" : "--stripe-rows") +
                " applies to --stream only");
#if UPRES_HAVE_VIDEO
    if (!batch && is_video_path(files[0])) return run_video(args, common, opts, ctx);
#endif
    if (args.json)
        throw Error(ErrorCode::InvalidArgument, "upscale: --json applies to video input only");
    if (!given.video_flag.empty())
        throw Error(ErrorCode::InvalidArgument,
                    "upscale: " + given.video_flag + " applies to video input only");

    if (!batch) {
        const FileFormat fmt_out = output_format(out, args.format);
        const AnyImage img = read_input(files[0]);
        const auto t0 = std::chrono::steady_clock::now();
        SrcnnPlan sp;
        AnyImage up = upscale(img, opts, ctx, &sp);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        write_output(out, up, fmt_out);
        if (args.verbose && srcnn) print_ran(sp);
        if (!common.quiet)
            fmt::print("{}: {} -> {} x {} ({}, x{}) in {:.1f} ms\n", out, describe(img), up.width(),
                       up.height(), to_string(resolved_method(opts)),
                       static_cast<double>(up.width()) / img.width(), ms);
        return;
    }

    make_output_folder(out, "upscale: with several inputs");
    // An output that is one of the inputs would replace it, and an input named twice would
    // then be upscaled again from its own result (the argument fuzzer's 2^10 upscale).
    for (const std::string& f : files) {
        std::error_code ec;
        if (fs::equivalent(fs::path(out) / fs::path(f).filename(), f, ec))
            throw Error(ErrorCode::InvalidArgument,
                        fmt::format("upscale: the output folder '{}' holds the input '{}': its "
                                    "result would replace it (choose another output folder)",
                                    out, f));
    }
    std::optional<ErrorCode> first_error;
    int failed = 0;
    bool printed_ran = false;
    {
        ProgressBar bar("upscale", static_cast<std::int64_t>(files.size()), common.quiet);
        std::mutex mu;  // the bar, stderr and the counts, with several GPUs
        const auto one = [&](const std::string& f, const Context& c) {
            const std::string target = (fs::path(out) / fs::path(f).filename()).string();
            try {
                const FileFormat fmt_out = output_format(target, args.format);
                const AnyImage img = read_input(f);
                SrcnnPlan sp;
                const AnyImage up = upscale(img, opts, c, &sp);
                write_output(target, up, fmt_out);
                const std::lock_guard<std::mutex> lock(mu);
                if (args.verbose && srcnn && !printed_ran) {
                    print_ran(sp);
                    printed_ran = true;
                }
            } catch (const Error& e) {
                const std::lock_guard<std::mutex> lock(mu);
                if (bar.live()) std::fputc('\n', stderr);
                const std::string msg = e.what();
                if (msg.find(f) == std::string::npos)  // name the file once
                    std::fprintf(stderr, "upres: error: %s: %s\n", f.c_str(), msg.c_str());
                else
                    std::fprintf(stderr, "upres: error: %s\n", msg.c_str());
                if (!first_error) first_error = e.code();
                ++failed;
            }
            const std::lock_guard<std::mutex> lock(mu);
            bar.step();
        };
        const std::vector<int> devices = common.device_list();
        if (devices.size() <= 1) {
            for (const std::string& f : files) one(f, ctx);
        } else {
            // One thread per GPU, each taking the next file: reading, the method on its GPU and
            // writing overlap across the GPUs.
            std::atomic<std::size_t> next{0};
            std::vector<std::thread> workers;
            std::exception_ptr crashed;
            for (const int d : devices)
                workers.emplace_back([&, d] {
                    try {
                        set_cuda_device(d);
                        Context c = ctx;
                        c.device = d;
                        for (std::size_t i; (i = next++) < files.size();) one(files[i], c);
                    } catch (...) {
                        const std::lock_guard<std::mutex> lock(mu);
                        if (!crashed) crashed = std::current_exception();
                        next = files.size();
                    }
                });
            for (std::thread& t : workers) t.join();
            if (crashed) std::rethrow_exception(crashed);
        }
    }
    if (failed)
        throw Error(*first_error, fmt::format("upscale: {} of {} files failed (reported above)",
                                              failed, files.size()));
}

}  // namespace

void add_upscale(CLI::App& app, const Common& common) {
    auto args = std::make_shared<UpscaleArgs>();
    const OperationDesc& op = operation("upscale");
    auto* cmd = app.add_subcommand("upscale", op.doc);
    cmd->add_option("PATHS", args->paths,
                    "IN... OUT: input images or folders, then the output (a folder when there "
                    "are several inputs or a folder)")
        ->required()
        ->expected(2, -1);
    const auto flags = add_declared_fields(cmd, op, &args->opts);
    auto* sc = flags.at("scale");
    auto* it = flags.at("iterations");
    auto* me = flags.at("max-error");
    auto* mo = flags.at("model");
    auto* pr = flags.at("precision");
    auto* va = flags.at("variant");
    cmd->add_flag("--verbose", args->verbose, "Print the plan (model, backend, kernels run)");
    add_format_option(cmd, args->format);
    cmd->add_flag("--json", args->json, "Video: print per-stage statistics as JSON at the end");
    cmd->add_flag("--stream", args->stream,
                  "Stream an 8-bit gray PGM, TIFF or BigTIFF of any size through silseabi / "
                  "lseai x2 row by row into a PGM or a tiled (Big)TIFF (memory independent of "
                  "the height)");
    cmd->add_flag("--single-pass", args->single_pass,
                  "With --stream: read the input once, the threshold predicted from the rows "
                  "seen so far (otherwise a first pass computes it exactly)");
    auto* sr = cmd->add_option("--stripe-rows", args->stripe_rows,
                               "With --stream: input rows per stripe (one stripe per thread at a "
                               "time)")
                   ->check(CLI::Range(1, 65536));
    const TiledFlags tiled = add_tiled_flags(
        cmd, args->tiling,
        "TIFF of any size in, tiled (Big)TIFF out, tile by tile in bounded memory (srcnn, "
        "bicubic, bilinear, bspline; integer scales; cpu or cuda backend, --devices spreads the "
        "tiles over GPUs); the pixels equal the whole-image run's on that backend");
    std::map<std::string, CLI::Option*> video_flags;
#if UPRES_HAVE_VIDEO
    video_flags = add_declared_fields(cmd, video_operation(), &args->video);
#endif
    cmd->callback([args, &common, sc, it, me, mo, pr, va, sr, video_flags, tiled] {
        check_tiled_flags(tiled);
        args->stripe_rows_given = sr->count() > 0;
        Given g{sc->count() > 0,
                it->count() > 0,
                me->count() > 0,
                mo->count() > 0,
                pr->count() > 0,
                va->count() > 0,
                ""};
        for (const auto& [name, opt] : video_flags)
            if (opt->count() > 0 && g.video_flag.empty()) g.video_flag = "--" + name;
        run_upscale(*args, common, g);
    });
}

}  // namespace upres::cli
