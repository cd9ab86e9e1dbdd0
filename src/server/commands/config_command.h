// CONFIG GET / SET / RESETSTAT / REWRITE / HELP over the settings in server/config: the command
// only parses, matches names and reports; what a setting accepts is the config module's.
#pragma once

#include <span>

#include "server/commands/command.h"

namespace chronocached {

// CONFIG's subcommands, for its CommandSpec.
std::span<const CommandSpec> config_subcommands();

}  // namespace chronocached
