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

#include <upres/nlmsr.hpp>
#include "command.hpp"
#include "options.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

namespace fs = std::filesystem;

struct FuseArgs {
    std::vector<std::string> paths;  // FRAME... OUT
    NlmsrOptions opts;
    bool sequence = false;
    int window = 5;
};

[[noreturn]] void invalid(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, "fuse: " + msg);
}

void run_fuse(const FuseArgs& args, const Common& common) {
    if (args.paths.size() < 2) invalid("give at least one frame and the output (FRAME... OUT)");
    const Context ctx = common.context();
    const std::vector<std::string> ins(args.paths.begin(), args.paths.end() - 1);
    const std::string& out = args.paths.back();
    bool batch = false;
    const std::vector<std::string> files = expand_inputs(ins, batch);
    const int n = static_cast<int>(files.size());

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
    cmd->callback([args, &common] { run_fuse(*args, common); });
}

}  // namespace upres::cli
