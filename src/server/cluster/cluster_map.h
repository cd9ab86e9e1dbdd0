// ClusterMap: this node's view of a Redis Cluster, which operators set (CLUSTER ADDSLOTS, SETSLOT,
// MEET, or the config file) instead of a gossip protocol: the nodes, which of them is this one,
// and the node that serves each of the 16 384 hash slots.
//
// Its text form is Redis's nodes.conf, which is also what CLUSTER NODES prints: one line per node
//   <id> <ip>:<port>@<cport> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link>
//   <slot>...
// with flags "myself,master" on this node's line and slots as "N" or "A-B" ranges, then a line
//   vars currentEpoch <n> lastVoteEpoch 0
// (docs/design/server.md, "Cluster mode"). Nodes are masters only: there are no replicas.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "server/base/hash_slot.h"

namespace chronocached {

struct ClusterNode {
  std::string id;  // 40 lower-case hex characters
  std::string ip;
  long long port = 0;
  long long cport = 0;  // the cluster bus port Redis would use (port + 10000): shown, not opened
  unsigned long long config_epoch = 0;
};

class ClusterMap {
 public:
  static constexpr int kUnassigned = -1;
  static constexpr std::size_t kIdLength = 40;

  explicit ClusterMap(ClusterNode myself);
  // A map read from nodes.conf text; nullopt with `error` ("line N: ...") when it is malformed.
  static std::optional<ClusterMap> parse(std::string_view text, std::string& error);
  // A new node id: 40 hex characters from `random`.
  static std::string new_node_id(std::mt19937_64& random);
  static bool is_node_id(std::string_view text) noexcept;

  // CLUSTER NODES: the node lines; nodes.conf: the same and the vars line.
  std::string nodes_text() const;
  std::string config_text() const;

  const std::vector<ClusterNode>& nodes() const noexcept { return nodes_; }
  const ClusterNode& myself() const noexcept { return nodes_[0]; }
  ClusterNode& myself() noexcept { return nodes_[0]; }
  ClusterNode& node(int index) noexcept { return nodes_[static_cast<std::size_t>(index)]; }
  static constexpr int kMyself = 0;  // this node's index
  int find(std::string_view id) const noexcept;
  // Adds a node (an id not yet known) and returns its index.
  int add(ClusterNode node);
  // CLUSTER FORGET at `now_ms` (unix time): drops another node (kMyself or no node: nothing
  // happens). The slots it served become unassigned and slots migrating to or importing from it
  // are closed, as Redis's clusterDelNode; the indexes of the nodes after it move down by one.
  // For a minute after, as in Redis, no MEET learns it again (kForgetBanMs): a handshake already
  // under way, or a peer that still knows it, would otherwise bring it back.
  void forget(int node, std::int64_t now_ms);
  static constexpr std::int64_t kForgetBanMs = 60'000;
  // CLUSTER RESET: this node alone, serving nothing, no slot open; `hard` also takes `new_id`
  // and sets the epochs back to 0. resets() counts them, so that a handshake begun before one
  // can tell and drop what it learnt.
  void reset(bool hard, std::string new_id);
  std::uint64_t resets() const noexcept { return resets_; }

  int owner(std::uint32_t slot) const noexcept { return owner_[slot]; }
  void assign(std::uint32_t slot, int node) noexcept;

  // Slots in migration (SETSLOT MIGRATING / IMPORTING, closed by STABLE or NODE): the node a
  // slot served here is moving to, or the node a slot is coming from; kUnassigned when neither.
  // nodes.conf and CLUSTER NODES show them on this node's line, as Redis does:
  // "[<slot>->-<to-id>]" and "[<slot>-<-<from-id>]".
  int migrating_to(std::uint32_t slot) const noexcept { return migrating_to_[slot]; }
  int importing_from(std::uint32_t slot) const noexcept { return importing_from_[slot]; }
  void set_migrating(std::uint32_t slot, int node) noexcept;
  void set_importing(std::uint32_t slot, int node) noexcept;
  bool is_open(std::uint32_t slot) const noexcept {
    return migrating_to_[slot] != kUnassigned || importing_from_[slot] != kUnassigned;
  }
  // Any slot migrating or importing: the common case, none, lets a request skip is_open().
  bool has_open_slots() const noexcept { return open_slots_ > 0; }
  // A new config epoch for this node, as Redis takes one when a slot it imported becomes its own.
  void bump_my_epoch() noexcept { myself().config_epoch = ++current_epoch_; }
  // CLUSTER BUMPEPOCH (Redis's clusterBumpConfigEpochWithoutConsensus): a new epoch for this
  // node unless its own is already the highest any node has; whether it took one.
  bool bump_epoch_unless_highest() noexcept;
  // SET-CONFIG-EPOCH: this node's epoch, which the current epoch follows if it is above it.
  void set_my_epoch(unsigned long long epoch) noexcept {
    myself().config_epoch = epoch;
    current_epoch_ = std::max(current_epoch_, epoch);
  }
  std::size_t assigned_slots() const noexcept { return assigned_; }
  bool covers_all_slots() const noexcept { return assigned_ == kClusterSlots; }
  // Masters serving at least one slot (CLUSTER INFO's cluster_size).
  std::size_t serving_nodes() const;
  unsigned long long current_epoch() const noexcept { return current_epoch_; }

  // What a MEET learns: `view` is the peer's own map (its CLUSTER NODES), reached at `address`
  // (its ip, port and cport; the id is taken from the view). The peer's word on its own slots is
  // final: it serves what it says and nothing else. Nodes it knows that this map does not are
  // added with the slots it sees them serve (those still unassigned here); nodes known here keep
  // what they said themselves. Returns the indexes of the nodes added, or nullopt with `error`
  // (and nothing changed) when the peer claims a slot this node serves.
  // Nodes forgotten less than kForgetBanMs before `now_ms` are not learned, the peer included.
  std::optional<std::vector<int>> learn_from(const ClusterNode& address, const ClusterMap& view,
                                             std::int64_t now_ms, std::string& error);

  // Runs of consecutive slots served by one node, in slot order (CLUSTER SLOTS, NODES).
  struct SlotRange {
    std::uint32_t first;
    std::uint32_t last;
    int node;
  };
  std::vector<SlotRange> ranges() const;

 private:
  std::string node_line(int node, const std::vector<SlotRange>& ranges) const;

  std::vector<ClusterNode> nodes_;  // nodes_[0] is this node
  void set_open(std::array<std::int16_t, kClusterSlots>& side, std::uint32_t slot,
                int node) noexcept;

  std::array<std::int16_t, kClusterSlots> owner_;
  std::array<std::int16_t, kClusterSlots> migrating_to_;
  std::array<std::int16_t, kClusterSlots> importing_from_;
  std::size_t assigned_ = 0;
  std::size_t open_slots_ = 0;  // slots with a migrating or importing node
  struct Forgotten {
    std::string id;
    std::int64_t until_ms;
  };
  std::vector<Forgotten> forgotten_;  // FORGET's ban, a few entries at most
  bool banned(std::string_view id, std::int64_t now_ms) const noexcept;
  std::uint64_t resets_ = 0;
  unsigned long long current_epoch_ = 0;
};

}  // namespace chronocached
