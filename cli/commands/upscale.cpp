// upres upscale IN... OUT: super-resolution with SRCNN (upres/srcnn.hpp, docs/ops/srcnn.md),
// SEABI (L-SEAI, SIL-SEABI, L-SEABI; upres/upscale.hpp, docs/ops/seabi.md) or the baselines
// (tap4, tap6, bilinear, bicubic).
//
// Lattice (--lattice): srcnn, bilinear and bicubic default to the centre-aligned lattice of
// upres resize and MATLAB imresize (output x samples (x + 0.5) / s - 0.5, Border::Reflect; bicubic
// is the MATLAB bicubic SRCNN is compared against, upres::bicubic_resize); the SEABI family and
// tap4/tap6 are co-sited (output x samples x / s), as the SEABI paper. `--lattice cosited` gives
// the co-sited bilinear/bicubic of upres::upscale (the SEABI paper's baselines).
//
// SRCNN: --scale picks the bundled model models/srcnn_x<scale>.srcnn (srcnn_model_dir()) unless
// --model FILE is given; u8, u16 and float images; --precision and --variant choose the CUDA
// arithmetic and kernels (the cpu and reference backends run fp32 / auto only).
// SEABI and co-sited baselines: 8-bit images only (convert others with `upres convert`).
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
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <upres/srcnn.hpp>
#include <upres/upscale.hpp>
#include <upres/warp.hpp>
#include "command.hpp"
#include "util.hpp"

namespace upres::cli {

namespace {

namespace fs = std::filesystem;

struct UpscaleArgs {
    std::vector<std::string> paths;  // IN... OUT
    std::string method = "silseabi";
    double scale = 2.0;
    int iterations = 4;
    double max_error = 0.25;
    std::string format = "auto";
    std::string lattice = "auto";
    std::string model;
    std::string precision = "fp32";
    std::string variant = "auto";
    bool verbose = false;
};

struct Given {
    bool scale, iterations, max_error, model, precision, variant;
};

[[noreturn]] void invalid(const std::string& msg) {
    throw Error(ErrorCode::InvalidArgument, "upscale: " + msg);
}

bool is_seabi_family(const std::string& m) {
    return m == "lseai" || m == "silseabi" || m == "lseabi" || m == "tap4" || m == "tap6";
}

// What runs on every image, decided once from the flags.
struct Plan {
    std::string method;
    bool srcnn = false;
    bool centered = false;
    SrcnnModel model;
    std::string model_path;
    SrcnnOptions srcnn_opts;
    UpscaleOptions opts;
    double scale = 2.0;
};

Plan make_plan(const UpscaleArgs& args, const Given& given) {
    Plan p;
    p.method = args.method;
    p.scale = args.scale;
    p.srcnn = args.method == "srcnn";
    if (!p.srcnn) {
        try {
            p.opts.method = parse_upscale_method(args.method);
        } catch (const Error&) {
            invalid("unknown method '" + args.method +
                    "' (allowed: srcnn, lseai, silseabi, lseabi, tap4, tap6, bilinear, bicubic)");
        }
    }
    if ((given.iterations || given.max_error) && args.method != "lseabi")
        invalid(fmt::format("{} applies to --method lseabi only (not {})",
                            given.iterations ? "--iterations" : "--max-error", args.method));
    if (!p.srcnn && (given.model || given.precision || given.variant))
        invalid(fmt::format("{} applies to --method srcnn only (not {})",
                            given.model       ? "--model"
                            : given.precision ? "--precision"
                                              : "--variant",
                            args.method));
    if (args.lattice != "auto" && args.lattice != "cosited" && args.lattice != "centered")
        invalid("unknown lattice '" + args.lattice + "' (allowed: auto, cosited, centered)");
    const bool cosited_only = is_seabi_family(args.method);
    if (args.lattice == "centered" && cosited_only)
        invalid("--lattice centered: " + args.method +
                " is defined on the co-sited lattice only (allowed: auto, cosited)");
    if (args.lattice == "cosited" && p.srcnn)
        invalid(
            "--lattice cosited: srcnn runs on the centre-aligned lattice of its training "
            "(allowed: auto, centered)");
    p.centered = args.lattice == "centered" || (args.lattice == "auto" && !cosited_only);
    if (p.srcnn) {
        p.srcnn_opts.precision = parse_srcnn_precision(args.precision);
        p.srcnn_opts.variant = parse_srcnn_variant(args.variant);
        if (!std::isfinite(args.scale) || args.scale != std::floor(args.scale))
            invalid(fmt::format("srcnn needs an integer --scale, not {}", args.scale));
        const int s = static_cast<int>(args.scale);
        if (given.model) {
            p.model_path = args.model;
            p.model = load_srcnn_model(args.model);
            if (given.scale && s != p.model.scale)
                invalid(fmt::format("the model {} is for x{}, not --scale {}", args.model,
                                    p.model.scale, s));
        } else {
            const std::string dir = srcnn_model_dir();
            p.model = load_default_srcnn_model(s, dir);  // lists the available scales
            p.model_path = dir + "/srcnn_x" + std::to_string(s) + ".srcnn";
        }
        p.scale = p.model.scale;
    } else {
        p.opts.scale = args.scale;
        p.opts.max_iterations = args.iterations;
        p.opts.max_error = args.max_error;
        if (p.centered && (!std::isfinite(args.scale) || args.scale < 1.0 || args.scale > 16.0))
            invalid(fmt::format("scale {} is outside [1, 16]", args.scale));
    }
    return p;
}

// Centre-aligned bilinear: upres resize (u = (x + 0.5) W / W' - 0.5), Border::Reflect, output
// ceil(s W) x ceil(s H) as bicubic_resize.
AnyImage centered_bilinear(const AnyImage& img, double s, const Context& ctx) {
    const int w = static_cast<int>(std::ceil(s * img.width() - 1e-9));
    const int h = static_cast<int>(std::ceil(s * img.height() - 1e-9));
    WarpOptions wo;
    wo.interp = Interp::Linear;
    wo.border = Border::Reflect;
    return std::visit(
        [&](const auto& im) -> AnyImage {
            using T = std::remove_cvref_t<decltype(*im.data())>;
            Image<T> out(w, h, im.channels());
            warp(im.view(), out.view(), Transform::make_resize(), wo, ctx);
            return AnyImage(std::move(out));
        },
        img.variant());
}

AnyImage run_one(const Plan& p, const AnyImage& img, const Context& ctx, SrcnnPlan* sp) {
    if (p.srcnn) return srcnn_upscale(img, p.model, p.srcnn_opts, ctx, sp);
    if (p.centered && p.method == "bicubic") return bicubic_resize(img, p.scale, ctx);
    if (p.centered && p.method == "bilinear") return centered_bilinear(img, p.scale, ctx);
    return upscale(img, p.opts, ctx);
}

void print_plan(const Plan& p, const Context& ctx) {
    fmt::print("method {}, x{}, lattice {}, backend {}\n", p.method, p.scale,
               p.centered ? "centered" : "cosited", to_string(ctx.backend));
    if (!p.srcnn) return;
    const SrcnnModel& m = p.model;
    fmt::print("model {}: {}-{}-{}, channels {}/{}, receptive field {}, {} MACs/pixel\n",
               p.model_path, m.layers[0].kernel, m.layers[1].kernel, m.layers[2].kernel,
               m.layers[0].out_channels, m.layers[1].out_channels, m.receptive_field(),
               m.macs_per_pixel());
    if (!m.description.empty()) fmt::print("model description: {}\n", m.description);
    fmt::print("requested precision {}, variant {}\n", to_string(p.srcnn_opts.precision),
               to_string(p.srcnn_opts.variant));
}

void print_ran(const SrcnnPlan& sp) {
    if (sp.fused)
        fmt::print("ran: fused network kernel, precision {}\n", to_string(sp.precision));
    else
        fmt::print("ran: layers {}, {}, {}, precision {}\n", to_string(sp.layers[0]),
                   to_string(sp.layers[1]), to_string(sp.layers[2]), to_string(sp.precision));
}

bool image_extension(const fs::path& p) {
    std::string e = p.extension().string();
    std::transform(e.begin(), e.end(), e.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const char* x :
         {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".pfm", ".pgm", ".ppm", ".pnm", ".npy"})
        if (e == x) return true;
    return false;
}

// The inputs: the files given, a folder's image files (sorted by name).
std::vector<std::string> expand_inputs(const std::vector<std::string>& ins, bool& batch) {
    std::vector<std::string> files;
    batch = ins.size() > 1;
    for (const std::string& in : ins) {
        std::error_code ec;
        if (fs::is_directory(in, ec)) {
            batch = true;
            std::vector<std::string> found;
            for (const auto& e : fs::directory_iterator(in, ec))
                if (e.is_regular_file(ec) && image_extension(e.path()))
                    found.push_back(e.path().string());
            if (ec)
                throw Error(ErrorCode::IoError,
                            fmt::format("cannot list the folder '{}': {}", in, ec.message()));
            std::sort(found.begin(), found.end());
            if (found.empty())
                throw Error(ErrorCode::IoError,
                            fmt::format("the folder '{}' holds no image files", in));
            files.insert(files.end(), found.begin(), found.end());
        } else {
            files.push_back(in);
        }
    }
    return files;
}

void run_upscale(const UpscaleArgs& args, const Common& common, const Given& given) {
    if (args.paths.size() < 2)
        throw Error(ErrorCode::InvalidArgument,
                    "upscale: give at least one input and the output (IN... OUT)");
    const Context ctx = common.context();
    const Plan plan = make_plan(args, given);
    const std::vector<std::string> ins(args.paths.begin(), args.paths.end() - 1);
    const std::string& out = args.paths.back();
    bool batch = false;
    const std::vector<std::string> files = expand_inputs(ins, batch);
    if (args.verbose) print_plan(plan, ctx);

    if (!batch) {
        const FileFormat fmt_out = output_format(out, args.format);
        const AnyImage img = read_input(files[0]);
        const auto t0 = std::chrono::steady_clock::now();
        SrcnnPlan sp;
        AnyImage up = run_one(plan, img, ctx, &sp);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                .count();
        write_output(out, up, fmt_out);
        if (args.verbose && plan.srcnn) print_ran(sp);
        if (!common.quiet)
            fmt::print("{}: {} -> {} x {} ({}, x{}) in {:.1f} ms\n", out, describe(img), up.width(),
                       up.height(), args.method, plan.scale, ms);
        return;
    }

    std::error_code ec;
    if (fs::exists(out, ec) && !fs::is_directory(out, ec))
        throw Error(ErrorCode::IoError,
                    fmt::format("upscale: with several inputs OUT must be a folder, and '{}' is a "
                                "file",
                                out));
    fs::create_directories(out, ec);
    if (ec)
        throw Error(ErrorCode::IoError,
                    fmt::format("cannot create the output folder '{}': {}", out, ec.message()));
    std::optional<ErrorCode> first_error;
    int failed = 0;
    bool printed_ran = false;
    {
        ProgressBar bar("upscale", static_cast<std::int64_t>(files.size()), common.quiet);
        for (const std::string& f : files) {
            const std::string target = (fs::path(out) / fs::path(f).filename()).string();
            try {
                const FileFormat fmt_out = output_format(target, args.format);
                const AnyImage img = read_input(f);
                SrcnnPlan sp;
                const AnyImage up = run_one(plan, img, ctx, &sp);
                write_output(target, up, fmt_out);
                if (args.verbose && plan.srcnn && !printed_ran) {
                    print_ran(sp);
                    printed_ran = true;
                }
            } catch (const Error& e) {
                if (bar.live()) std::fputc('\n', stderr);
                const std::string msg = e.what();
                if (msg.find(f) == std::string::npos)  // name the file once
                    std::fprintf(stderr, "upres: error: %s: %s\n", f.c_str(), msg.c_str());
                else
                    std::fprintf(stderr, "upres: error: %s\n", msg.c_str());
                if (!first_error) first_error = e.code();
                ++failed;
            }
            bar.step();
        }
    }
    if (failed)
        throw Error(*first_error, fmt::format("upscale: {} of {} files failed (reported above)",
                                              failed, files.size()));
}

}  // namespace

void add_upscale(CLI::App& app, const Common& common) {
    auto args = std::make_shared<UpscaleArgs>();
    auto* cmd = app.add_subcommand(
        "upscale",
        "Super-resolution: SRCNN, SEABI (lseai, silseabi, lseabi) or tap4/tap6/bilinear/bicubic");
    cmd->add_option("PATHS", args->paths,
                    "IN... OUT: input images or folders, then the output (a folder when there "
                    "are several inputs or a folder)")
        ->required()
        ->expected(2, -1);
    cmd->add_option("--method", args->method,
                    "srcnn, lseai, silseabi, lseabi, tap4, tap6, bilinear or bicubic")
        ->capture_default_str();
    auto* sc = cmd->add_option("--scale", args->scale,
                               "Factor: srcnn 2, 3, 4 (the bundled models); others in [1, 16] "
                               "(SEABI: powers of two cascade x2, others add a B-spline resize)")
                   ->capture_default_str();
    auto* it = cmd->add_option("--iterations", args->iterations,
                               "lseabi: at most this many back-projections (1 to 1000)")
                   ->capture_default_str();
    auto* me = cmd->add_option("--max-error", args->max_error,
                               "lseabi: stop when the mean absolute LR error is below this")
                   ->capture_default_str();
    cmd->add_option("--lattice", args->lattice,
                    "auto, cosited or centered: auto is centered for srcnn, bilinear and "
                    "bicubic (MATLAB imresize), co-sited for SEABI and tap4/tap6")
        ->capture_default_str();
    auto* mo = cmd->add_option("--model", args->model,
                               "srcnn: a .srcnn weights file instead of the bundled model");
    auto* pr = cmd->add_option("--precision", args->precision,
                               "srcnn: fp32, tf32, fp16, bf16 or fastest (cuda backend; cpu and "
                               "reference run fp32)")
                   ->capture_default_str();
    auto* va = cmd->add_option("--variant", args->variant,
                               "srcnn (cuda): auto, direct, shared-kernel, shared-kernel-patch, "
                               "registered-pixel, cudnn, tensor-core or fused")
                   ->capture_default_str();
    cmd->add_flag("--verbose", args->verbose, "Print the plan (model, backend, kernels run)");
    cmd->add_option("--format", args->format, "Output format (default: from the extension)")
        ->capture_default_str();
    cmd->callback([args, &common, sc, it, me, mo, pr, va] {
        const Given g{sc->count() > 0, it->count() > 0, me->count() > 0,
                      mo->count() > 0, pr->count() > 0, va->count() > 0};
        run_upscale(*args, common, g);
    });
}

}  // namespace upres::cli
