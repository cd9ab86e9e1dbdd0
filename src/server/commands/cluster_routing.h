// Where a keyed command must run in cluster mode: here, or elsewhere as Redis's redirection
// error says (MOVED, ASK, TRYAGAIN, CROSSSLOT, CLUSTERDOWN). execute() asks before every command
// with keys while cluster-enabled is on, the one-key fast path first.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "server/cluster/cluster_map.h"
#include "server/commands/command.h"
#include "server/store/keyspace.h"

namespace chronocached {

// The common case, checked before cluster_redirection(): a command on one key whose slot is
// served here, with the whole map served. One hash, two loads; measured by make bench-cluster
// (about 40 instructions a request fewer than the general check).
inline bool one_key_served_here(const ClusterMap& map, const Db& db, const CommandSpec& spec,
                                std::span<const std::string_view> args) {
  // A command whose keys move with its arguments (MIGRATE's KEYS: its key argument is then "")
  // is routed by the keys it names, not by first_key.
  if (spec.first_key <= 0 || spec.last_key != spec.first_key || (spec.flags & kMovableKeys) != 0 ||
      static_cast<std::size_t>(spec.first_key) >= args.size() || !map.covers_all_slots())
    return false;
  const std::uint32_t slot = db.hash_slot_of(args[static_cast<std::size_t>(spec.first_key)]);
  return map.owner(slot) == ClusterMap::kMyself && (!map.has_open_slots() || !map.is_open(slot));
}

// A command and its arguments, for the redirection check.
struct KeyedCommand {
  const CommandSpec* spec;
  std::span<const std::string_view> args;
};

// What the redirection check needs beside the map: the commands (one, or EXEC's queue), and,
// for a slot in migration, whether the client sent ASKING (or the command acts as if it had:
// RESTORE-ASKING) and which keys are here.
struct RedirectionQuery {
  std::span<const KeyedCommand> commands;
  bool asking = false;
  bool require_full_coverage = true;   // cluster-require-full-coverage
  bool allow_reads_when_down = false;  // cluster-allow-reads-when-down
  const Db* db = nullptr;              // database 0, the only one in cluster mode
  chronocache::TimePoint now{};
};

// Where these commands must go instead of running here, as Redis's error reply ("MOVED 3999
// 127.0.0.1:6381", "ASK ...", "CROSSSLOT ...", "TRYAGAIN ...", "CLUSTERDOWN ..."); nullopt to run
// them here. Every key of every command must hash to one slot; it runs here when this node
// serves the slot (and, while the slot migrates away, holds every key), or imports it and the
// client asked.
std::optional<std::string> cluster_redirection(const ClusterMap& map,
                                               const RedirectionQuery& query);

// A keyed write that would add a key the table has no room for, which only cluster mode can meet
// (millions of keys in one hash slot, under one hash tag: blob.h, Db::has_room_for): the error
// reply; nullopt to run it. Asked only while the database says some slot is that crowded.
std::optional<std::string> slot_full_refusal(const Db& db, const KeyedCommand& command,
                                             chronocache::TimePoint now);

}  // namespace chronocached
