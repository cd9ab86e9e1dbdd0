// What CLUSTER MEET asks a peer, since there is no cluster bus to learn it from: its CLUSTER
// NODES, over one short blocking connection (the command waits at most kPeerTimeoutMs).
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/cluster/cluster_map.h"
#include "server/cluster/peer_connection.h"

namespace chronocached {

inline constexpr int kPeerTimeoutMs = 500;

// One command's reply from a peer, preceded by AUTH `password` when it is not empty: Redis's
// cluster bus needs no password, and a node that has one (requirepass) assumes its peers share
// it, as redis-cli --cluster create -a gives every node the same. nullopt with `error` when the
// peer cannot be reached in time or refuses the password.
std::optional<PeerReply> ask_peer(PeerConnection& peer, std::span<const std::string_view> words,
                                  const std::string& password, std::string& error);

// The peer's view, its own node as myself(); nullopt with `error` when it cannot be reached in
// time or does not answer with a cluster view (cluster mode off, a wrong password, not a
// node...).
std::optional<ClusterMap> ask_peer_map(const std::string& ip, int port, const std::string& password,
                                       std::string& error);

}  // namespace chronocached
