// CLIENT ID SETNAME GETNAME LIST INFO KILL NO-EVICT REPLY PAUSE UNPAUSE HELP: a connection looking
// at itself and at the others, with Redis 7.0's fields, filters and error texts.
#pragma once

#include <span>
#include <string_view>

#include "server/commands/command.h"

namespace chronocached {

// CLIENT's subcommands, for its CommandSpec (connection.cc).
std::span<const CommandSpec> client_subcommands();

// Redis's validateClientName, for CLIENT SETNAME and HELLO SETNAME: printable ASCII without
// spaces (CLIENT LIST splits on spaces); the empty name is allowed (it clears the name). Bytes
// past 0x7e fail too: Redis compares them as negative signed chars.
bool valid_client_name(std::string_view name);

}  // namespace chronocached
