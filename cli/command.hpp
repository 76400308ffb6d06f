// The CLI's command table: one subcommand per operation. A command is one file in
// cli/commands/ defining a `void add_<name>(CLI::App&, const Common&)` and one line in
// cli/commands.cpp's kCommands table.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include <upres/context.hpp>

namespace upres::cli {

// Flags shared by every subcommand (given before or after the subcommand name).
struct Common {
    Context ctx;  // --backend, --threads (the "context" operation's declared fields)
    bool quiet = false;
    std::string devices;  // --devices: "", "all" or "0,1,..."
    // The context of a run: ctx, on the first of --devices (the cuda backend; Auto becomes
    // Cuda). Error(InvalidArgument) for --devices with the cpu or reference backend or a device
    // that does not exist, Error(BackendUnavailable) without CUDA.
    Context context() const;
    // The GPUs of --devices in order (empty: not given, the current device).
    std::vector<int> device_list() const;
};

using AddCommand = void (*)(CLI::App& app, const Common& common);

struct CommandEntry {
    const char* name;
    AddCommand add;
};

}  // namespace upres::cli
