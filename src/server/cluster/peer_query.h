// What CLUSTER MEET asks a peer, since there is no cluster bus to learn it from: its CLUSTER
// NODES, over one short blocking connection (the command waits at most kPeerTimeoutMs).
#pragma once

#include <optional>
#include <string>

#include "server/cluster/cluster_map.h"

namespace chronocached {

inline constexpr int kPeerTimeoutMs = 500;

// The peer's view, its own node as myself(); nullopt with `error` when it cannot be reached in
// time or does not answer with a cluster view (cluster mode off, a password, not a node...).
std::optional<ClusterMap> ask_peer_map(const std::string& ip, int port, std::string& error);

}  // namespace chronocached
