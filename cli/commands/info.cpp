// upres info: version, build options and CUDA devices.
#include <fmt/core.h>

#include <upres/context.hpp>
#include <upres/io.hpp>
#include "command.hpp"

namespace upres::cli {

void add_info(CLI::App& app, const Common& /*common*/) {
    auto* cmd = app.add_subcommand("info", "Print version, build options and CUDA devices");
    cmd->callback([] {
        const BuildInfo b = build_info();
        fmt::print("upres {}\n", b.version);
        fmt::print("compiler:      {}\n", b.compiler);
        fmt::print("OpenMP:        {} (max threads {})\n", b.openmp ? "yes" : "no",
                   b.openmp_max_threads);
        fmt::print("CUDA backends: {}", b.cuda ? "yes" : "no");
        if (b.cuda) fmt::print(" (runtime {}, sm_{})", b.cuda_runtime, b.cuda_archs);
        fmt::print("\n");
        fmt::print("TIFF:          {}\n", format_supported(FileFormat::Tiff) ? "yes" : "no");
        const std::string devices = cuda_device_info();
        fmt::print("CUDA devices:  {}\n", devices.empty() ? "none" : "");
        if (!devices.empty()) fmt::print("{}", devices);
    });
}

}  // namespace upres::cli
