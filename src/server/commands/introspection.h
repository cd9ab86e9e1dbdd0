// OBJECT and MEMORY: introspection of keys and of the server's memory, with Redis 7.0's replies.
// Part of the keyspace family (Redis's "generic" and "server" groups): keyspace.cc lists these
// two containers with its own commands.
#pragma once

#include <span>

#include "server/commands/command.h"

namespace chronocached {

// The OBJECT and MEMORY container specs, each with its subcommands.
std::span<const CommandSpec> introspection_commands();

}  // namespace chronocached
