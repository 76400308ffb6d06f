// The command table: one line per subcommand.
#include "commands.hpp"
#include "command.hpp"

namespace upres::cli {

// One entry per line (clang-format would pack them).
// clang-format off
const CommandEntry kCommands[] = {
    {"info", add_info},
    {"compare", add_compare},
    {"convert", add_convert},
    {"upscale", add_upscale},
    {"warp", add_warp},
    {"stereo", add_stereo},
    {"fuse", add_fuse},
    {"quality", add_quality},
};
// clang-format on
const int kCommandCount = sizeof(kCommands) / sizeof(kCommands[0]);

}  // namespace upres::cli
