// Declarations of every subcommand's add function (one per file in cli/commands/).
#pragma once

#include "command.hpp"

namespace upres::cli {

void add_info(CLI::App& app, const Common& common);
void add_compare(CLI::App& app, const Common& common);
void add_convert(CLI::App& app, const Common& common);
void add_upscale(CLI::App& app, const Common& common);
void add_warp(CLI::App& app, const Common& common);
void add_stereo(CLI::App& app, const Common& common);
void add_fuse(CLI::App& app, const Common& common);
void add_quality(CLI::App& app, const Common& common);

extern const CommandEntry kCommands[];
extern const int kCommandCount;

}  // namespace upres::cli
