// transaction commands.
#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> transaction_commands() { return {}; }

}  // namespace chronocached
