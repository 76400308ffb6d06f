// The upres command line (cli::run): parsing, the command table and the exit codes.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <upres/context.hpp>
#include <upres/error.hpp>
#include <upres/image.hpp>
#include <upres/options.hpp>
#include "app.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "util.hpp"

namespace upres::cli {

std::vector<int> Common::device_list() const {
    std::vector<int> out;
    if (devices.empty()) return out;
    const int n = cuda_device_count();
    if (n == 0)
        throw Error(ErrorCode::BackendUnavailable,
                    "--devices " + devices + ": no CUDA device (" +
                        (build_info().cuda ? "none found" : "upres was built without CUDA") + ")");
    if (devices == "all") {
        for (int i = 0; i < n; ++i) out.push_back(i);
        return out;
    }
    std::stringstream ss(devices);
    std::string item;
    while (std::getline(ss, item, ',')) {
        const bool digits = !item.empty() && item.size() <= 4 &&
                            item.find_first_not_of("0123456789") == std::string::npos;
        const int d = digits ? std::stoi(item) : -1;
        if (d < 0 || d >= n)
            throw Error(ErrorCode::InvalidArgument, "--devices " + devices + ": '" + item +
                                                        "' is not a device (allowed: all, "
                                                        "or indices 0 to " +
                                                        std::to_string(n - 1) +
                                                        ", comma-separated)");
        if (std::find(out.begin(), out.end(), d) != out.end())
            throw Error(ErrorCode::InvalidArgument,
                        "--devices " + devices + ": device " + item + " is named twice");
        out.push_back(d);
    }
    if (out.empty())
        throw Error(ErrorCode::InvalidArgument,
                    "--devices: give all, or indices 0 to " + std::to_string(n - 1));
    return out;
}

Context Common::context() const {
    Context c = ctx;
    const std::vector<int> d = device_list();
    if (d.empty()) return c;
    if (c.backend == Backend::Cpu || c.backend == Backend::Reference)
        throw Error(
            ErrorCode::InvalidArgument,
            std::string("--devices needs the cuda backend, not --backend ") + to_string(c.backend));
    c.backend = Backend::Cuda;
    c.device = d.front();
    return c;
}

int run(int argc, char** argv) {
    set_max_pixels(kMaxPixels);
    CLI::App app{
        "upres: fast, exact image resampling, super-resolution and stereo on GPUs "
        "and CPUs"};
    app.set_version_flag("--version", std::string("upres ") + UPRES_VERSION);
    app.require_subcommand(1);
    app.fallthrough();
    Common common;
    add_declared_fields(&app, operation("context"), &common.ctx);
    app.add_flag("-q,--quiet", common.quiet,
                 "No progress or informational output (results are still printed)");
    app.add_option("--devices", common.devices,
                   "GPUs for the cuda backend: all, or indices 0,1,...; a batch spreads its "
                   "files over them (default: the current GPU)");
    app.add_option_function<std::int64_t>(
           "--max-pixels", [](std::int64_t n) { set_max_pixels(n); },
           "Refuse input images larger than this many pixels, before reading their pixels "
           "[default: 1073741824 (2^30), the most upres takes]")
        ->check(CLI::Range(std::int64_t{1}, kMaxPixels));
    for (int i = 0; i < kCommandCount; ++i) kCommands[i].add(app, common);
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help / --version exit 0; usage errors print one line and exit 1.
        if (e.get_exit_code() == 0) return app.exit(e);
        // An unknown command name leaves no subcommand parsed and the name unparsed: say so
        // rather than CLI11's "A subcommand is required".
        const auto rest = app.remaining();
        if (app.get_subcommands().empty() && !rest.empty() && !rest.front().empty() &&
            rest.front()[0] != '-') {
            std::string names;
            for (int i = 0; i < kCommandCount; ++i)
                names += std::string(i ? ", " : "") + kCommands[i].name;
            std::fprintf(stderr, "upres: unknown command '%s' (commands: %s; see 'upres --help')\n",
                         rest.front().c_str(), names.c_str());
            return 1;
        }
        std::fprintf(stderr, "upres: %s (see 'upres --help')\n", e.what());
        return 1;
    } catch (const Error& e) {
        std::fprintf(stderr, "upres: error: %s\n", e.what());
        return exit_code(e.code());
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "upres: error: out of host memory\n");
        return exit_code(ErrorCode::OutOfMemory);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "upres: internal error: %s\n", e.what());
        return exit_code(ErrorCode::Internal);
    }
    return 0;
}

}  // namespace upres::cli
