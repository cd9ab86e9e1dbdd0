#include "server/cluster/peer_query.h"

#include <array>
#include <string_view>

namespace chronocached {

std::optional<PeerReply> ask_peer(PeerConnection& peer, std::span<const std::string_view> words,
                                  const std::string& password, std::string& error) {
  constexpr std::chrono::milliseconds kTimeout(kPeerTimeoutMs);
  std::string request;
  if (!password.empty()) {
    const std::array<std::string_view, 2> auth = {"AUTH", password};
    append_request(request, auth);
  }
  append_request(request, words);
  if (!peer.send(request, kTimeout, error)) return std::nullopt;
  if (!password.empty()) {
    const std::optional<PeerReply> auth = peer.read_reply(kTimeout, error);
    if (!auth) return std::nullopt;
    if (auth->kind == PeerReply::Kind::kError) {
      error = "AUTH answered -" + auth->text;
      return std::nullopt;
    }
  }
  return peer.read_reply(kTimeout, error);
}

std::optional<ClusterMap> ask_peer_map(const std::string& ip, int port, const std::string& password,
                                       std::string& error) {
  constexpr std::chrono::milliseconds kTimeout(kPeerTimeoutMs);
  std::optional<PeerConnection> peer = PeerConnection::open(ip, port, kTimeout, error);
  if (!peer) return std::nullopt;
  constexpr std::array<std::string_view, 2> kClusterNodes = {"CLUSTER", "NODES"};
  const std::optional<PeerReply> reply = ask_peer(*peer, kClusterNodes, password, error);
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
