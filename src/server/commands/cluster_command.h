// Cluster mode's commands: CLUSTER, READONLY, READWRITE, ASKING.
#pragma once

#include <span>

#include "server/commands/command.h"

namespace chronocached {

std::span<const CommandSpec> cluster_commands();

}  // namespace chronocached
