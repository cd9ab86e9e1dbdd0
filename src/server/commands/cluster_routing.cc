// The redirection check of cluster mode (cluster_routing.h), after Redis's getNodeByQuery.
#include "server/commands/cluster_routing.h"

#include <cstddef>
#include <cstdint>
#include <string>

#include "server/commands/command_keys.h"

namespace chronocached {
namespace {

std::string address_of(const ClusterMap& map, int node) {
  const ClusterNode& n = map.nodes()[static_cast<std::size_t>(node)];
  return n.ip + ":" + std::to_string(n.port);
}

}  // namespace

std::optional<std::string> slot_full_refusal(const Db& db, const KeyedCommand& command,
                                             chronocache::TimePoint now) {
  std::optional<std::string> refusal;
  for_each_key(*command.spec, command.args, [&](std::string_view key, std::string_view) {
    if (!refusal && !db.has_room_for(key) && !db.exists(key, now))
      refusal = "ERR too many keys in hash slot " + std::to_string(key_hash_slot(key)) +
                " on this node: the table cannot grow their share (spread them over more hash "
                "tags)";
  });
  return refusal;
}

std::optional<std::string> cluster_redirection(const ClusterMap& map,
                                               const RedirectionQuery& query) {
  // Redis's getNodeByQuery: the first key's slot must be served, every other key must share it;
  // in a slot in migration, the keys missing here decide between serving, ASK and TRYAGAIN.
  constexpr int kNoKeys = -1;
  int slot = kNoKeys;
  std::string_view first_key;
  bool migrating = false;
  bool importing = false;
  bool multiple_keys = false;
  bool runs_migrate = false;
  std::size_t missing_keys = 0;
  std::size_t here_keys = 0;
  std::optional<std::string> refusal;
  for (const KeyedCommand& command : query.commands) {
    runs_migrate = runs_migrate || command.spec->name == "migrate";
    for_each_key(*command.spec, command.args, [&](std::string_view key, std::string_view) {
      if (refusal) return;
      const auto key_slot = static_cast<int>(key_hash_slot(key));
      if (slot == kNoKeys) {
        slot = key_slot;
        first_key = key;
        const auto s = static_cast<std::uint32_t>(slot);
        if (map.owner(s) == ClusterMap::kUnassigned) {
          refusal = "CLUSTERDOWN Hash slot not served";
          return;
        }
        migrating =
            map.owner(s) == ClusterMap::kMyself && map.migrating_to(s) != ClusterMap::kUnassigned;
        importing = !migrating && map.importing_from(s) != ClusterMap::kUnassigned;
      } else if (key != first_key) {
        if (key_slot != slot) {
          refusal = "CROSSSLOT Keys in request don't hash to the same slot";
          return;
        }
        multiple_keys = true;
      }
      if (migrating || importing) ++(query.db->exists(key, query.now) ? here_keys : missing_keys);
    });
    if (refusal) return refusal;
  }
  if (slot == kNoKeys) return std::nullopt;
  // The cluster is down while a slot is unassigned (unless full coverage is not required):
  // Redis then refuses every keyed command, or, allowing reads when down, the writes alone.
  if (query.require_full_coverage && !map.covers_all_slots()) {
    if (!query.allow_reads_when_down) return std::string("CLUSTERDOWN The cluster is down");
    for (const KeyedCommand& command : query.commands)
      if ((command.spec->flags & kWrite) != 0)
        return std::string("CLUSTERDOWN The cluster is down and only accepts read commands");
  }
  const auto s = static_cast<std::uint32_t>(slot);
  // MIGRATE moves what is here from an open slot, whichever way it is open.
  if ((migrating || importing) && runs_migrate) return std::nullopt;
  // Keys split between the two nodes cannot be served by either until the move is done.
  constexpr std::string_view kTryAgain = "TRYAGAIN Multiple keys request during rehashing of slot";
  if (migrating && missing_keys > 0) {
    if (here_keys > 0) return std::string(kTryAgain);
    return "ASK " + std::to_string(slot) + " " + address_of(map, map.migrating_to(s));
  }
  if (importing && query.asking) {
    if (multiple_keys && missing_keys > 0) return std::string(kTryAgain);
    return std::nullopt;
  }
  const int owner = map.owner(s);
  if (owner == ClusterMap::kMyself) return std::nullopt;
  return "MOVED " + std::to_string(slot) + " " + address_of(map, owner);
}

}  // namespace chronocached
