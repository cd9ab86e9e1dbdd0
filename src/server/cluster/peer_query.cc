#include "server/cluster/peer_query.h"

#include <array>
#include <string_view>

#include "server/cluster/peer_connection.h"

namespace chronocached {

std::optional<ClusterMap> ask_peer_map(const std::string& ip, int port, std::string& error) {
  constexpr std::chrono::milliseconds kTimeout(kPeerTimeoutMs);
  std::optional<PeerConnection> peer = PeerConnection::open(ip, port, kTimeout, error);
  if (!peer) return std::nullopt;
  std::string request;
  constexpr std::array<std::string_view, 2> kClusterNodes = {"CLUSTER", "NODES"};
  append_request(request, kClusterNodes);
  if (!peer->send(request, kTimeout, error)) return std::nullopt;
  const std::optional<PeerReply> reply = peer->read_reply(kTimeout, error);
  if (!reply) return std::nullopt;
  if (reply->kind != PeerReply::Kind::kBulk) {
    error = "CLUSTER NODES answered " +
            std::string(reply->kind == PeerReply::Kind::kError ? "-" : "") + reply->text;
    return std::nullopt;
  }
  std::optional<ClusterMap> map = ClusterMap::parse(reply->text, error);
  if (!map) error = "its CLUSTER NODES: " + error;
  return map;
}

}  // namespace chronocached
