// keyspace commands.
#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> keyspace_commands() { return {}; }

}  // namespace chronocached
