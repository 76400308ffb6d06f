// The upres command line (cli::run): parsing, the command table and the exit codes.
#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <new>
#include <string>

#include <upres/error.hpp>
#include <upres/image.hpp>
#include <upres/options.hpp>
#include "app.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "util.hpp"

namespace upres::cli {

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
