// ttl commands.
#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> ttl_commands() { return {}; }

}  // namespace chronocached
