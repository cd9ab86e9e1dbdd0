// The cluster config file (cluster-config-file, in `dir`): where a node keeps its id and its
// view of the slot map across restarts. Written whole or not at all after every change.
#pragma once

#include <optional>
#include <random>
#include <string>

#include "server/cluster/cluster_map.h"

namespace chronocached {

// The map in `path`; a new map of one node (this one, a new id) when the file does not exist;
// nullopt with `error` when it exists but cannot be read or parsed.
std::optional<ClusterMap> load_cluster_config(const std::string& path, std::mt19937_64& random,
                                              std::string& error);
bool save_cluster_config(const std::string& path, const ClusterMap& map, std::string& error);

}  // namespace chronocached
