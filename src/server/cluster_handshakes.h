// ClusterHandshakes: the part of the cluster bus chronocached has, on a thread of its own. As in
// Redis, CLUSTER MEET answers at once and the handshake happens afterwards: this thread takes
// each queued peer (ServerState::pending_meets), asks it for its view (its CLUSTER NODES, with
// no lock held, so no event loop ever waits on a peer, and two nodes meeting each other at once
// cannot stall each other), merges that view into the slot map under the state lock
// (ClusterMap::learn_from) and saves it, then introduces this node to every node it learned of
// by sending each a CLUSTER MEET of its own. So a MEET is mutual, and nodes that met one common
// node come to know each other: `redis-cli --cluster create` joins its nodes this way. Each
// request goes after AUTH with this node's requirepass, when it has one (peer_query.h).
//
// It is not gossip: nothing is exchanged periodically, so a slot map changed on one node later
// (ADDSLOTS, SETSLOT) is told to the others by the operator, as redis-cli --cluster reshard does.
#pragma once

#include <cstdint>
#include <thread>

#include "chronocache/base/thread_annotations.h"
#include "server/server_state.h"

namespace chronocached {

class ClusterHandshakes {
 public:
  explicit ClusterHandshakes(ServerState& state) : state_(state) {}
  ~ClusterHandshakes() { stop(); }
  ClusterHandshakes(const ClusterHandshakes&) = delete;
  ClusterHandshakes& operator=(const ClusterHandshakes&) = delete;

  void start();
  // Finishes the handshake under way, drops the queued ones and joins the thread.
  void stop();

 private:
  void run();
  // `resets`: ClusterMap::resets() when the MEET was taken from the queue; a RESET since then
  // drops what the peer answers.
  // `password`: this node's requirepass when the MEET was taken, which the peers share.
  void meet(const ClusterNode& peer, std::uint64_t resets, const std::string& password);
  void introduce(const ClusterNode& node, long long my_port, const std::string& password);

  ServerState& state_;
  bool stopping_ CC_GUARDED_BY(state_.mu) = false;
  std::thread thread_;
};

}  // namespace chronocached
