#include "server/cluster_handshakes.h"

#include <array>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/cluster/cluster_config_file.h"
#include "server/cluster/peer_connection.h"
#include "server/cluster/peer_query.h"

namespace chronocached {

void ClusterHandshakes::start() {
  thread_ = std::thread([this] { run(); });
}

void ClusterHandshakes::stop() {
  if (!thread_.joinable()) return;
  {
    const chronocache::MutexLock lock(state_.mu);
    stopping_ = true;
  }
  state_.meets_ready.notify_all();
  thread_.join();
}

void ClusterHandshakes::run() {
  for (;;) {
    ClusterNode peer;
    std::uint64_t resets = 0;
    std::string password;
    {
      const chronocache::MutexLock lock(state_.mu);
      while (state_.pending_meets.empty() && !stopping_) state_.meets_ready.wait(state_.mu);
      if (stopping_) return;
      peer = std::move(state_.pending_meets.front());
      state_.pending_meets.erase(state_.pending_meets.begin());
      resets = state_.cluster->resets();
      password = state_.config.requirepass;
    }
    meet(peer, resets, password);
  }
}

void ClusterHandshakes::meet(const ClusterNode& peer, std::uint64_t resets,
                             const std::string& password) {
  const std::string where = peer.ip + ":" + std::to_string(peer.port);
  std::string error;
  const std::optional<ClusterMap> view =
      ask_peer_map(peer.ip, static_cast<int>(peer.port), password, error);
  std::vector<ClusterNode> learned;
  long long my_port = 0;
  {
    const chronocache::MutexLock lock(state_.mu);
    if (!view) {
      state_.logger.log("warning", "CLUSTER MEET " + where + ": cannot read its view: " + error);
      return;
    }
    ClusterMap& map = *state_.cluster;
    if (map.resets() != resets) return;  // a CLUSTER RESET since: this node has started over
    const std::int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
    const std::optional<std::vector<int>> added = map.learn_from(peer, *view, now_ms, error);
    if (!added) {
      state_.logger.log("warning", "CLUSTER MEET " + where + " refused: " + error);
      return;
    }
    for (const int index : *added) learned.push_back(map.nodes()[static_cast<std::size_t>(index)]);
    if (!added->empty()) {
      if (!state_.cluster_config->save(map, error))
        state_.logger.log("warning", "Could not save the cluster config: " + error);
      state_.logger.log("notice", "CLUSTER MEET " + where + ": " + std::to_string(added->size()) +
                                      " node(s) learned");
    }
    my_port = map.myself().port;
  }
  for (const ClusterNode& node : learned) introduce(node, my_port, password);
}

// Sends `node` "CLUSTER MEET <this host> <my_port>", from the address it reaches this host by;
// the node answers at once (its own handshake thread asks back).
void ClusterHandshakes::introduce(const ClusterNode& node, long long my_port,
                                  const std::string& password) {
  constexpr std::chrono::milliseconds kTimeout(kPeerTimeoutMs);
  std::string error;
  std::optional<PeerConnection> peer =
      PeerConnection::open(node.ip, static_cast<int>(node.port), kTimeout, error);
  std::optional<PeerReply> reply;
  if (peer) {
    const std::string me = peer->local_ip();
    const std::string port = std::to_string(my_port);
    const std::array<std::string_view, 4> words = {"CLUSTER", "MEET", me, port};
    reply = ask_peer(*peer, words, password, error);
  }
  if (reply && reply->kind == PeerReply::Kind::kSimple) return;
  if (reply) error = reply->text;
  const chronocache::MutexLock lock(state_.mu);
  state_.logger.log("warning", "Could not introduce this node to " + node.ip + ":" +
                                   std::to_string(node.port) + ": " + error);
}

}  // namespace chronocached
