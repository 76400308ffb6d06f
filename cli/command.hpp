// The CLI's command table: one subcommand per operation. A command is one file in
// cli/commands/ defining a `void add_<name>(CLI::App&, const Common&)` and one line in
// cli/commands.cpp's kCommands table.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include <upres/context.hpp>

namespace upres::cli {

// Flags shared by every subcommand (given before or after the subcommand name).
struct Common {
    Context ctx;  // --backend, --threads (the "context" operation's declared fields)
    bool quiet = false;
    Context context() const { return ctx; }
};

using AddCommand = void (*)(CLI::App& app, const Common& common);

struct CommandEntry {
    const char* name;
    AddCommand add;
};

}  // namespace upres::cli
