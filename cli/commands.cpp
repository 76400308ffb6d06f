// The command table: one line per subcommand.
#include "commands.hpp"
#include "command.hpp"

namespace upres::cli {

const CommandEntry kCommands[] = {
    {"info", add_info},
};
const int kCommandCount = sizeof(kCommands) / sizeof(kCommands[0]);

}  // namespace upres::cli
