// admin commands.
#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> admin_commands() { return {}; }

}  // namespace chronocached
