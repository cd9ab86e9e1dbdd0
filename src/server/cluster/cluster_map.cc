// nodes.conf in and out, and the slot bookkeeping behind CLUSTER INFO, NODES and SLOTS.
#include "server/cluster/cluster_map.h"

#include <algorithm>
#include <charconv>
#include <utility>

namespace chronocached {
namespace {

std::vector<std::string_view> split_spaces(std::string_view line) {
  std::vector<std::string_view> words;
  while (!line.empty()) {
    const std::size_t start = line.find_first_not_of(' ');
    if (start == std::string_view::npos) break;
    line.remove_prefix(start);
    const std::size_t end = line.find(' ');
    words.push_back(line.substr(0, end));
    if (end == std::string_view::npos) break;
    line.remove_prefix(end);
  }
  return words;
}

template <class T>
bool parse_number(std::string_view text, T& out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

// "ip:port@cport" (the ip may be empty, or an IPv6 address with colons of its own).
bool parse_address(std::string_view text, ClusterNode& node) {
  const std::size_t at = text.find('@');
  const std::size_t colon = text.substr(0, at).rfind(':');
  if (at == std::string_view::npos || colon == std::string_view::npos) return false;
  node.ip = std::string(text.substr(0, colon));
  std::string_view cport = text.substr(at + 1);
  cport = cport.substr(0, cport.find(','));  // ",hostname" (Redis 7) is not kept
  return parse_number(text.substr(colon + 1, at - colon - 1), node.port) && node.port >= 0 &&
         node.port <= 65535 && parse_number(cport, node.cport) && node.cport >= 0 &&
         node.cport <= 65535;
}

// "[<slot>->-<id>]" (migrating to id) or "[<slot>-<-<id>]" (importing from id).
struct OpenSlot {
  std::uint32_t slot;
  bool importing;
  std::string_view peer;
};
std::optional<OpenSlot> parse_open_slot(std::string_view word) {
  if (word.size() < 2 || word.front() != '[' || word.back() != ']') return std::nullopt;
  word = word.substr(1, word.size() - 2);
  for (const auto& [arrow, importing] :
       {std::pair<std::string_view, bool>{"->-", false}, {"-<-", true}}) {
    const std::size_t at = word.find(arrow);
    if (at == std::string_view::npos) continue;
    OpenSlot open{0, importing, word.substr(at + arrow.size())};
    if (!parse_number(word.substr(0, at), open.slot) || open.slot >= kClusterSlots ||
        !ClusterMap::is_node_id(open.peer))
      return std::nullopt;
    return open;
  }
  return std::nullopt;
}

}  // namespace

ClusterMap::ClusterMap(ClusterNode myself) {
  nodes_.push_back(std::move(myself));
  owner_.fill(static_cast<std::int16_t>(kUnassigned));
  migrating_to_.fill(static_cast<std::int16_t>(kUnassigned));
  importing_from_.fill(static_cast<std::int16_t>(kUnassigned));
}

std::string ClusterMap::new_node_id(std::mt19937_64& random) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id(kIdLength, '0');
  for (char& c : id) c = kHex[random() & 0xF];
  return id;
}

bool ClusterMap::is_node_id(std::string_view text) noexcept {
  return text.size() == kIdLength && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

std::optional<ClusterMap> ClusterMap::parse(std::string_view text, std::string& error) {
  std::vector<ClusterNode> nodes;
  std::vector<std::vector<SlotRange>> slots;  // per node, as listed
  std::vector<OpenSlot> open_slots;           // this node's, resolved once every node is known
  int myself = -1;
  unsigned long long current_epoch = 0;
  std::size_t number = 0;
  while (!text.empty()) {
    const std::size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::vector<std::string_view> words = split_spaces(line);
    if (words.empty()) continue;
    const std::string where = "line " + std::to_string(number) + ": ";
    if (words[0] == "vars") {
      for (std::size_t i = 1; i + 1 < words.size(); i += 2) {
        if (words[i] == "currentEpoch" && !parse_number(words[i + 1], current_epoch)) {
          error = where + "bad currentEpoch";
          return std::nullopt;
        }
      }
      continue;
    }
    ClusterNode node;
    if (words.size() < 8 || !is_node_id(words[0]) || !parse_address(words[1], node) ||
        !parse_number(words[6], node.config_epoch)) {
      error = where +
              "expected <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> "
              "<link> <slot>...";
      return std::nullopt;
    }
    node.id = std::string(words[0]);
    for (const auto& known : nodes) {
      if (known.id == node.id) {
        error = where + "node " + node.id + " listed twice";
        return std::nullopt;
      }
    }
    if (words[2].find("slave") != std::string_view::npos ||
        words[2].find("replica") != std::string_view::npos) {
      error = where + "replicas are not supported (every node is a master)";
      return std::nullopt;
    }
    const bool is_myself = words[2].find("myself") != std::string_view::npos;
    if (is_myself && myself >= 0) {
      error = where + "a second node flagged myself";
      return std::nullopt;
    }
    if (is_myself) myself = static_cast<int>(nodes.size());
    std::vector<SlotRange> ranges;
    for (std::size_t i = 8; i < words.size(); ++i) {
      const std::string_view range = words[i];
      if (range.front() == '[') {
        const std::optional<OpenSlot> open = parse_open_slot(range);
        if (!open || !is_myself) {
          error = where + "bad slot migration " + std::string(range) +
                  (is_myself ? "" : " (only this node's line may have them)");
          return std::nullopt;
        }
        open_slots.push_back(*open);
        continue;
      }
      const std::size_t dash = range.find('-');
      std::uint32_t first = 0;
      std::uint32_t last = 0;
      const bool ok = dash == std::string_view::npos
                          ? parse_number(range, first) && (last = first, true)
                          : parse_number(range.substr(0, dash), first) &&
                                parse_number(range.substr(dash + 1), last);
      if (!ok || first > last || last >= kClusterSlots) {
        error = where + "bad slot range " + std::string(range);
        return std::nullopt;
      }
      ranges.push_back({first, last, 0});
    }
    nodes.push_back(std::move(node));
    slots.push_back(std::move(ranges));
  }
  if (myself < 0) {
    error = "no node flagged myself";
    return std::nullopt;
  }
  std::swap(nodes[0], nodes[static_cast<std::size_t>(myself)]);
  std::swap(slots[0], slots[static_cast<std::size_t>(myself)]);
  ClusterMap map(std::move(nodes[0]));
  for (std::size_t i = 1; i < nodes.size(); ++i) map.nodes_.push_back(std::move(nodes[i]));
  map.current_epoch_ = current_epoch;
  for (std::size_t node = 0; node < slots.size(); ++node) {
    for (const SlotRange& range : slots[node]) {
      for (std::uint32_t slot = range.first; slot <= range.last; ++slot) {
        if (map.owner(slot) != kUnassigned) {
          error = "slot " + std::to_string(slot) + " is served by two nodes";
          return std::nullopt;
        }
        map.assign(slot, static_cast<int>(node));
      }
    }
  }
  for (const OpenSlot& open : open_slots) {
    const int peer = map.find(open.peer);
    if (peer == kUnassigned) {
      error = "slot " + std::to_string(open.slot) + " migrates to or from unknown node " +
              std::string(open.peer);
      return std::nullopt;
    }
    if (open.importing) {
      map.set_importing(open.slot, peer);
    } else {
      map.set_migrating(open.slot, peer);
    }
  }
  return map;
}

int ClusterMap::find(std::string_view id) const noexcept {
  for (std::size_t i = 0; i < nodes_.size(); ++i)
    if (nodes_[i].id == id) return static_cast<int>(i);
  return kUnassigned;
}

int ClusterMap::add(ClusterNode node) {
  nodes_.push_back(std::move(node));
  return static_cast<int>(nodes_.size() - 1);
}

void ClusterMap::forget(int node, std::int64_t now_ms) {
  if (node <= kMyself || node >= static_cast<int>(nodes_.size())) return;  // not a peer
  std::erase_if(forgotten_, [now_ms](const Forgotten& f) { return f.until_ms <= now_ms; });
  forgotten_.push_back(Forgotten{nodes_[static_cast<std::size_t>(node)].id, now_ms + kForgetBanMs});
  // Each slot's reference to the node goes; references past it move down with the vector.
  const auto renumbered = [node](std::int16_t at) {
    return at == node ? static_cast<std::int16_t>(kUnassigned)
                      : static_cast<std::int16_t>(at > node ? at - 1 : at);
  };
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    if (owner_[slot] == node) assign(slot, kUnassigned);
    if (migrating_to_[slot] == node) set_migrating(slot, kUnassigned);
    if (importing_from_[slot] == node) set_importing(slot, kUnassigned);
    owner_[slot] = renumbered(owner_[slot]);
    migrating_to_[slot] = renumbered(migrating_to_[slot]);
    importing_from_[slot] = renumbered(importing_from_[slot]);
  }
  nodes_.erase(nodes_.begin() + node);
}

void ClusterMap::reset(bool hard, std::string new_id) {
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    assign(slot, kUnassigned);
    set_migrating(slot, kUnassigned);
    set_importing(slot, kUnassigned);
  }
  nodes_.resize(1);
  ++resets_;
  if (!hard) return;
  myself().id = std::move(new_id);
  myself().config_epoch = 0;
  current_epoch_ = 0;
}

bool ClusterMap::banned(std::string_view id, std::int64_t now_ms) const noexcept {
  return std::any_of(forgotten_.begin(), forgotten_.end(),
                     [&](const Forgotten& f) { return f.id == id && now_ms < f.until_ms; });
}

bool ClusterMap::bump_epoch_unless_highest() noexcept {
  unsigned long long highest = current_epoch_;
  for (const ClusterNode& node : nodes_) highest = std::max(highest, node.config_epoch);
  if (myself().config_epoch != 0 && myself().config_epoch == highest) return false;
  current_epoch_ = highest;  // Redis's current epoch follows every epoch it hears of
  bump_my_epoch();
  return true;
}

void ClusterMap::assign(std::uint32_t slot, int node) noexcept {
  const bool was = owner_[slot] != kUnassigned;
  const bool is = node != kUnassigned;
  owner_[slot] = static_cast<std::int16_t>(node);
  assigned_ = assigned_ + (is ? 1 : 0) - (was ? 1 : 0);
}

void ClusterMap::set_open(std::array<std::int16_t, kClusterSlots>& side, std::uint32_t slot,
                          int node) noexcept {
  const bool was = is_open(slot);
  side[slot] = static_cast<std::int16_t>(node);
  open_slots_ = open_slots_ + (is_open(slot) ? 1 : 0) - (was ? 1 : 0);
}

void ClusterMap::set_migrating(std::uint32_t slot, int node) noexcept {
  set_open(migrating_to_, slot, node);
}

void ClusterMap::set_importing(std::uint32_t slot, int node) noexcept {
  set_open(importing_from_, slot, node);
}

std::optional<std::vector<int>> ClusterMap::learn_from(const ClusterNode& address,
                                                       const ClusterMap& view, std::int64_t now_ms,
                                                       std::string& error) {
  std::vector<int> added;
  const ClusterNode& said = view.myself();
  if (said.id == myself().id) return added;   // met itself, under another address
  if (banned(said.id, now_ms)) return added;  // forgotten a moment ago
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    if (view.owner(slot) == kMyself && owner(slot) == kMyself) {
      error = "slot " + std::to_string(slot) + " is served both here and by " + address.ip + ":" +
              std::to_string(address.port);
      return std::nullopt;
    }
  }
  int peer = find(said.id);
  if (peer == kUnassigned) {
    peer = add(said);
    added.push_back(peer);
  }
  ClusterNode& recorded = node(peer);
  recorded.ip = address.ip;
  recorded.port = address.port;
  recorded.cport = address.cport;
  recorded.config_epoch = said.config_epoch;
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    if (view.owner(slot) == kMyself) {
      assign(slot, peer);
    } else if (owner(slot) == peer) {
      assign(slot, kUnassigned);
    }
  }
  // The nodes the peer knows of, by its account, unless known here or without an address.
  for (std::size_t i = 1; i < view.nodes().size(); ++i) {
    const ClusterNode& other = view.nodes()[i];
    if (other.ip.empty() || other.port == 0 || find(other.id) != kUnassigned ||
        banned(other.id, now_ms))
      continue;
    const int index = add(other);
    added.push_back(index);
    for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot)
      if (view.owner(slot) == static_cast<int>(i) && owner(slot) == kUnassigned)
        assign(slot, index);
  }
  current_epoch_ = std::max(current_epoch_, view.current_epoch());
  return added;
}

std::size_t ClusterMap::serving_nodes() const {
  std::vector<bool> serving(nodes_.size(), false);
  for (const std::int16_t owner : owner_)
    if (owner != kUnassigned) serving[static_cast<std::size_t>(owner)] = true;
  return static_cast<std::size_t>(std::count(serving.begin(), serving.end(), true));
}

std::vector<ClusterMap::SlotRange> ClusterMap::ranges() const {
  std::vector<SlotRange> out;
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
    const int node = owner_[slot];
    if (node == kUnassigned) continue;
    if (!out.empty() && out.back().node == node && out.back().last + 1 == slot) {
      out.back().last = slot;
    } else {
      out.push_back({slot, slot, node});
    }
  }
  return out;
}

std::string ClusterMap::node_line(int node, const std::vector<SlotRange>& ranges) const {
  const ClusterNode& n = nodes_[static_cast<std::size_t>(node)];
  std::string line = n.id;
  line.append(" ").append(n.ip).append(":").append(std::to_string(n.port));
  line.append("@").append(std::to_string(n.cport));
  line.append(node == kMyself ? " myself,master" : " master").append(" - 0 0 ");
  line.append(std::to_string(n.config_epoch)).append(" connected");
  for (const SlotRange& range : ranges) {
    if (range.node != node) continue;
    line.append(" ").append(std::to_string(range.first));
    if (range.last != range.first) line.append("-").append(std::to_string(range.last));
  }
  if (node == kMyself && has_open_slots()) {
    for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot) {
      const auto open = [&](std::string_view arrow, int peer) {
        line.append(" [").append(std::to_string(slot)).append(arrow);
        line.append(nodes_[static_cast<std::size_t>(peer)].id).append("]");
      };
      if (migrating_to_[slot] != kUnassigned) open("->-", migrating_to_[slot]);
      if (importing_from_[slot] != kUnassigned) open("-<-", importing_from_[slot]);
    }
  }
  line.push_back('\n');
  return line;
}

std::string ClusterMap::nodes_text() const {
  const std::vector<SlotRange> all = ranges();
  std::string text;
  for (std::size_t node = 0; node < nodes_.size(); ++node)
    text += node_line(static_cast<int>(node), all);
  return text;
}

std::string ClusterMap::config_text() const {
  return nodes_text() + "vars currentEpoch " + std::to_string(current_epoch_) +
         " lastVoteEpoch 0\n";
}

}  // namespace chronocached
