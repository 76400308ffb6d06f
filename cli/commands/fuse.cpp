// upres fuse FRAME... OUT: non-local-means multi-frame super-resolution (upres/nlmsr.hpp).
//
// The frames (files, or folders of image files taken in name order) are fused into OUT around
// the reference frame (--reference, default the middle one). With --sequence, OUT is a folder
// and every input frame gets its own output (same file name): frame i fused with its --window
// neighbours (the window centred on i, shifted inside the sequence at its ends), with a
// progress bar. The options come from the fuse declaration.
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <upres/io.hpp>
#include <upres/nlmsr.hpp>
#include <upres/tiled.hpp>
#include "command.hpp"
#include "options.hpp"
#include "tiled_job.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

namespace fs = std::filesystem;

struct FuseArgs {
    std::vector<std::string> paths;  // FRAME... OUT
    NlmsrOptions opts;
    bool sequence = false;
    int window = 5;
    TiledArgs tiling;  // --tiled: TIFF frames in, a tiled TIFF out (tiled_job.hpp)
};

[[noreturn]] void invalid(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, "fuse: " + msg);
}

// --tiled: TIFF frames of any size fused band by band (nlm_fuse_tiled) into a tiled (Big)TIFF,
// in bounded memory and resumable; the pixels equal the whole-frame command's.
void run_tiled(const FuseArgs& args, const std::vector<std::string>& files, const Common& common,
               const Context& ctx) {
    if (args.sequence) invalid("--tiled fuses one output (not --sequence)");
    const std::string& out = args.paths.back();
    for (const std::string& f : files) check_tiled_paths("fuse", f, out, "auto", args.tiling);
    std::vector<std::unique_ptr<TiffRowReader>> readers;
    for (const std::string& f : files) readers.push_back(std::make_unique<TiffRowReader>(f));
    const NlmsrOptions& o = args.opts;
    const TiffRowReader& f0 = *readers[0];
    TiledJob job;
    job.command = "fuse";
    job.in = files[0];
    job.out = out;
    job.out_width = o.scale * f0.width();
    job.out_height = o.scale * f0.height();
    std::string frames;
    for (std::size_t i = 1; i < files.size(); ++i) {
        std::error_code ec;
        frames +=
            fmt::format("{} {} {}; ", fs::absolute(files[i]).string(), fs::file_size(files[i], ec),
                        fs::last_write_time(files[i], ec).time_since_epoch().count());
    }
    job.options = fmt::format(
        "frames {}scale {} reference {} patch {} search {} sigma {} noise {} iterations {} post "
        "{} back_projections {} psf_sigma {} reconstructions {} model {} backend {}",
        frames, o.scale, o.reference, o.patch, o.search, o.sigma, o.noise, o.iterations,
        to_string(o.post), o.back_projections, o.psf_sigma, o.reconstructions, o.model,
        ctx.backend == Backend::Cuda ? "cuda" : "cpu");
    // On the cuda backend the kernels change the bytes (the variant's sums, the precision of
    // post reconstruct's SRCNN start).
    if (ctx.backend == Backend::Cuda)
        job.options += fmt::format(" variant {} precision {} blocks {} {} {}", to_string(o.variant),
                                   to_string(o.precision), o.block_x, o.block_y, o.block_z);
    const std::vector<int> devices = common.device_list();  // --devices: bands over the GPUs
    const TiledResult r = run_tiled_job(job, *readers[0], args.tiling, common.quiet,
                                        [&](RowSource& src, RowSink& dst, const TiledOptions& to) {
                                            std::vector<RowSource*> srcs{&src};
                                            for (std::size_t i = 1; i < readers.size(); ++i)
                                                srcs.push_back(readers[i].get());
                                            TiledOptions with = to;
                                            with.devices = devices;
                                            return nlm_fuse_tiled(srcs, dst, o, with, ctx);
                                        });
    if (!common.quiet)
        fmt::print(
            "{}: {} frame{} of {} x {} x {} {} -> {} x {} (x{}); {} band{} of {} rows, {:.0f} MiB "
            "of buffers, {}{:.1f} s\n",
            out, files.size(), files.size() == 1 ? "" : "s", f0.width(), f0.height(), f0.channels(),
            to_string(f0.type()), job.out_width, job.out_height, o.scale, r.stats.bands,
            r.stats.bands == 1 ? "" : "s", r.stats.band_rows,
            static_cast<double>(r.stats.buffer_bytes) / 1048576.0, r.bigtiff ? "BigTIFF, " : "",
            r.seconds);
}

void run_fuse(const FuseArgs& args, const Common& common) {
    if (args.paths.size() < 2) invalid("give at least one frame and the output (FRAME... OUT)");
    const Context ctx = common.context();
    const std::vector<std::string> ins(args.paths.begin(), args.paths.end() - 1);
    const std::string& out = args.paths.back();
    bool batch = false;
    const std::vector<std::string> files = expand_inputs(ins, batch);
    const int n = static_cast<int>(files.size());
    if (args.tiling.tiled) return run_tiled(args, files, common, ctx);

    if (!args.sequence) {
        const FileFormat f = output_format(out);
        std::vector<AnyImage> frames;
        for (const std::string& p : files) frames.push_back(read_input(p));
        const auto t0 = std::chrono::steady_clock::now();
        const AnyImage r = nlm_fuse(frames, args.opts, ctx);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        write_output(out, r, f);
        if (!common.quiet)
            fmt::print("{}: {} frames of {} -> {} x {} (x{}) in {:.1f} ms\n", out, n,
                       describe(frames[0]), r.width(), r.height(), args.opts.scale, ms);
        return;
    }

    if (args.opts.reference != -1)
        invalid(
            "--reference applies to one fused frame; with --sequence every frame is the "
            "reference of its own window");
    if (args.window < 1 || args.window > 64)
        invalid(fmt::format("--window {} is outside [1, 64]", args.window));
    make_output_folder(out, "fuse: with --sequence");
    const int win = std::min(args.window, n);
    std::vector<AnyImage> frames;  // the current window, frames [first, first + size)
    int first = 0;
    ProgressBar bar("fuse", n, common.quiet);
    for (int i = 0; i < n; ++i) {
        const int want = std::clamp(i - win / 2, 0, n - win);
        for (; first < want; ++first) frames.erase(frames.begin());
        while (static_cast<int>(frames.size()) < win)
            frames.push_back(read_input(files[first + static_cast<int>(frames.size())]));
        NlmsrOptions o = args.opts;
        o.reference = i - first;
        const std::string target = (fs::path(out) / fs::path(files[i]).filename()).string();
        const FileFormat f = output_format(target);
        write_output(target, nlm_fuse(frames, o, ctx), f);
        bar.step();
    }
}

}  // namespace

void add_fuse(CLI::App& app, const Common& common) {
    auto args = std::make_shared<FuseArgs>();
    const OperationDesc& op = operation("fuse");
    auto* cmd = app.add_subcommand("fuse", op.doc);
    cmd->add_option("PATHS", args->paths,
                    "FRAME... OUT: the frames (files or folders, in order), then the output (a "
                    "folder with --sequence)")
        ->required()
        ->expected(2, -1);
    add_declared_fields(cmd, op, &args->opts);
    cmd->add_flag("--sequence", args->sequence,
                  "Write one output per frame, each fused with its --window neighbours");
    cmd->add_option("--window", args->window,
                    "--sequence: frames fused per output, centred on it (1..64) [default: 5]");
    const TiledFlags tiled = add_tiled_flags(
        cmd, args->tiling,
        "TIFF frames of any size in, a tiled TIFF out, band by band in bounded memory (cpu or "
        "cuda backend, --devices spreads the bands over GPUs; resumable); the pixels equal the "
        "whole-frame run's on the same backend");
    cmd->callback([args, &common, tiled] {
        check_tiled_flags(tiled);
        run_fuse(*args, common);
    });
}

}  // namespace upres::cli
