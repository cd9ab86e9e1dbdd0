// Redis Cluster's client protocol (docs/design/server.md, "Cluster mode"): the CLUSTER command and
// READONLY / READWRITE / ASKING; where a keyed command must go instead is cluster_routing.cc's.
// The slot map is set by operators (ADDSLOTS, SETSLOT NODE, MEET, or the config
// file): there is no gossip, failover or replica, and a MEET asks the peer for its id directly.
#include "server/commands/cluster_command.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/cluster/cluster_config_file.h"
#include "server/cluster/cluster_map.h"
#include "server/commands/arguments.h"
#include "server/commands/command_keys.h"
#include "server/commands/errors.h"

namespace chronocached {
namespace {

constexpr std::string_view kDisabled = "ERR This instance has cluster support disabled";
constexpr std::string_view kBadSlot = "ERR Invalid or out of range slot";

bool cluster_or_reply(CommandContext& ctx) {
  if (ctx.server.cluster) return true;
  ctx.reply.error(kDisabled);
  return false;
}

// Redis's getSlotOrReply.
std::optional<std::uint32_t> slot_or_reply(CommandContext& ctx, std::string_view text) {
  const std::optional<std::int64_t> slot = parse_int64(text);
  if (!slot || *slot < 0 || *slot >= static_cast<std::int64_t>(kClusterSlots)) {
    ctx.reply.error(kBadSlot);
    return std::nullopt;
  }
  return static_cast<std::uint32_t>(*slot);
}

std::optional<std::int64_t> int64_or_reply(CommandContext& ctx, std::string_view text) {
  const std::optional<std::int64_t> value = parse_int64(text);
  if (!value) ctx.reply.error(errors::kNotInteger);
  return value;
}

// Writes the map to cluster-config-file; a failure is logged and answered, the change kept in
// memory (as Redis, which exits instead: a cache node keeps serving and says why).
void save_or_reply(CommandContext& ctx) {
  std::string error;
  if (ctx.server.cluster_config->save(*ctx.server.cluster, error)) {
    ctx.reply.ok();
    return;
  }
  ctx.server.logger.log("warning", "Could not save the cluster config: " + error);
  ctx.reply.error("ERR the slot map changed but could not be saved: " + error);
}

// ---- Reading the map ----------------------------------------------------------------------

void cluster_info(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const ClusterMap& map = *ctx.server.cluster;
  const std::string assigned = std::to_string(map.assigned_slots());
  std::string text;
  const auto field = [&](std::string_view name, const std::string& value) {
    text.append(name).append(":").append(value).append("\r\n");
  };
  const bool down = ctx.server.config.cluster_require_full_coverage && !map.covers_all_slots();
  field("cluster_state", down ? "fail" : "ok");
  field("cluster_slots_assigned", assigned);
  field("cluster_slots_ok", assigned);
  field("cluster_slots_pfail", "0");
  field("cluster_slots_fail", "0");
  field("cluster_known_nodes", std::to_string(map.nodes().size()));
  field("cluster_size", std::to_string(map.serving_nodes()));
  field("cluster_current_epoch", std::to_string(map.current_epoch()));
  field("cluster_my_epoch", std::to_string(map.myself().config_epoch));
  field("cluster_stats_messages_sent", "0");
  field("cluster_stats_messages_received", "0");
  field("total_cluster_links_buffer_limit_exceeded", "0");
  ctx.reply.verbatim(text);
}

void cluster_myid(CommandContext& ctx) {
  if (cluster_or_reply(ctx)) ctx.reply.bulk(ctx.server.cluster->myself().id);
}

void cluster_nodes(CommandContext& ctx) {
  if (cluster_or_reply(ctx)) ctx.reply.verbatim(ctx.server.cluster->nodes_text());
}

// Each run of slots with its node: [first, last, [ip, port, id, {}]] (no replicas follow).
void cluster_slots(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const ClusterMap& map = *ctx.server.cluster;
  const std::vector<ClusterMap::SlotRange> ranges = map.ranges();
  ctx.reply.array(ranges.size());
  for (const ClusterMap::SlotRange& range : ranges) {
    const ClusterNode& node = map.nodes()[static_cast<std::size_t>(range.node)];
    ctx.reply.array(3);
    ctx.reply.integer(range.first);
    ctx.reply.integer(range.last);
    ctx.reply.array(4);
    ctx.reply.bulk(node.ip);
    ctx.reply.integer(node.port);
    ctx.reply.bulk(node.id);
    ctx.reply.map(0);  // Redis 7's networking metadata (hostname): none
  }
}

void cluster_keyslot(CommandContext& ctx) {
  if (cluster_or_reply(ctx)) ctx.reply.integer(key_hash_slot(ctx.args[2]));
}

// Every node is a shard of its own (no replicas): its slot ranges as [first, last, ...] and its
// one node, described as Redis 7.0 describes a healthy master.
void cluster_shards(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const ClusterMap& map = *ctx.server.cluster;
  const std::vector<ClusterMap::SlotRange> ranges = map.ranges();
  ctx.reply.array(map.nodes().size());
  for (std::size_t i = 0; i < map.nodes().size(); ++i) {
    const ClusterNode& node = map.nodes()[i];
    ctx.reply.map(2);
    ctx.reply.bulk("slots");
    const auto owned = static_cast<std::size_t>(std::count_if(
        ranges.begin(), ranges.end(),
        [&](const ClusterMap::SlotRange& r) { return r.node == static_cast<int>(i); }));
    ctx.reply.array(owned * 2);
    for (const ClusterMap::SlotRange& range : ranges) {
      if (range.node != static_cast<int>(i)) continue;
      ctx.reply.integer(range.first);
      ctx.reply.integer(range.last);
    }
    ctx.reply.bulk("nodes");
    ctx.reply.array(1);
    const bool has_port = node.port != 0;
    ctx.reply.map(has_port ? 7 : 6);
    ctx.reply.bulk("id");
    ctx.reply.bulk(node.id);
    if (has_port) {
      ctx.reply.bulk("port");
      ctx.reply.integer(node.port);
    }
    ctx.reply.bulk("ip");
    ctx.reply.bulk(node.ip);
    ctx.reply.bulk("endpoint");
    ctx.reply.bulk(node.ip);
    ctx.reply.bulk("role");
    ctx.reply.bulk("master");
    ctx.reply.bulk("replication-offset");
    ctx.reply.integer(0);
    ctx.reply.bulk("health");
    ctx.reply.bulk("online");
  }
}

// ---- The keys of a slot (database 0, the only one in cluster mode) ----------------------------
// Each walks the slot's keys alone: the table's hash puts the slot in its top bits (blob.h).

void cluster_countkeysinslot(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const std::optional<std::int64_t> slot = int64_or_reply(ctx, ctx.args[2]);
  if (!slot) return;
  if (*slot < 0 || *slot >= static_cast<std::int64_t>(kClusterSlots))
    return ctx.reply.error("ERR Invalid slot");
  std::size_t count = 0;
  ctx.server.keyspace.db(0).for_each_in_slot(static_cast<std::uint32_t>(*slot), ctx.now,
                                             [&](std::string_view, const Blob&) {
                                               ++count;
                                               return true;
                                             });
  ctx.reply.integer(static_cast<long long>(count));
}

void cluster_getkeysinslot(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const std::optional<std::int64_t> slot = int64_or_reply(ctx, ctx.args[2]);
  if (!slot) return;
  const std::optional<std::int64_t> count = int64_or_reply(ctx, ctx.args[3]);
  if (!count) return;
  if (*count < 0 || *slot < 0 || *slot >= static_cast<std::int64_t>(kClusterSlots))
    return ctx.reply.error("ERR Invalid slot or number of keys");
  std::vector<std::string_view> keys;
  if (*count > 0) {
    ctx.server.keyspace.db(0).for_each_in_slot(
        static_cast<std::uint32_t>(*slot), ctx.now, [&](std::string_view key, const Blob&) {
          keys.push_back(key);
          return static_cast<std::int64_t>(keys.size()) < *count;
        });
  }
  ctx.reply.array(keys.size());
  for (const std::string_view key : keys) ctx.reply.bulk(key);
}

// ---- Changing it --------------------------------------------------------------------------

// The slots of ADDSLOTS / DELSLOTS (single slots) or their RANGE forms (pairs), each checked as
// Redis checks them: in range, not given twice, then free (add) or assigned (delete).
std::optional<std::vector<std::uint32_t>> slots_or_reply(CommandContext& ctx, bool ranges,
                                                         bool adding) {
  std::vector<std::uint32_t> slots;
  if (ranges && (ctx.argc() - 2) % 2 != 0) {  // pairs: the arity (-4) cannot say it
    ctx.reply.error(
        errors::wrong_arity(adding ? "cluster|addslotsrange" : "cluster|delslotsrange"));
    return std::nullopt;
  }
  for (std::size_t i = 2; i < ctx.argc(); i += ranges ? 2 : 1) {
    const std::optional<std::uint32_t> first = slot_or_reply(ctx, ctx.args[i]);
    if (!first) return std::nullopt;
    std::uint32_t last = *first;
    if (ranges) {
      const std::optional<std::uint32_t> end = slot_or_reply(ctx, ctx.args[i + 1]);
      if (!end) return std::nullopt;
      if (*first > *end) {
        ctx.reply.error("ERR start slot number " + std::to_string(*first) +
                        " is greater than end slot number " + std::to_string(*end));
        return std::nullopt;
      }
      last = *end;
    }
    for (std::uint32_t slot = *first; slot <= last; ++slot) slots.push_back(slot);
  }
  std::vector<bool> seen(kClusterSlots, false);
  const ClusterMap& map = *ctx.server.cluster;
  for (const std::uint32_t slot : slots) {
    const bool assigned = map.owner(slot) != ClusterMap::kUnassigned;
    if (adding && assigned) {
      ctx.reply.error("ERR Slot " + std::to_string(slot) + " is already busy");
      return std::nullopt;
    }
    if (!adding && !assigned) {
      ctx.reply.error("ERR Slot " + std::to_string(slot) + " is already unassigned");
      return std::nullopt;
    }
    if (seen[slot]) {
      ctx.reply.error("ERR Slot " + std::to_string(slot) + " specified multiple times");
      return std::nullopt;
    }
    seen[slot] = true;
  }
  return slots;
}

void change_slots(CommandContext& ctx, bool ranges, bool adding) {
  if (!cluster_or_reply(ctx)) return;
  const std::optional<std::vector<std::uint32_t>> slots = slots_or_reply(ctx, ranges, adding);
  if (!slots) return;
  ClusterMap& map = *ctx.server.cluster;
  for (const std::uint32_t slot : *slots) {
    // As Redis: a slot being imported is now ours, or nobody's, either way no longer imported.
    map.set_importing(slot, ClusterMap::kUnassigned);
    map.assign(slot, adding ? ClusterMap::kMyself : ClusterMap::kUnassigned);
  }
  save_or_reply(ctx);
}

void cluster_addslots(CommandContext& ctx) { change_slots(ctx, false, true); }
void cluster_addslotsrange(CommandContext& ctx) { change_slots(ctx, true, true); }
void cluster_delslots(CommandContext& ctx) { change_slots(ctx, false, false); }
void cluster_delslotsrange(CommandContext& ctx) { change_slots(ctx, true, false); }

bool slot_has_keys(CommandContext& ctx, std::uint32_t slot) {
  bool found = false;
  ctx.server.keyspace.db(0).for_each_in_slot(slot, ctx.now, [&](std::string_view, const Blob&) {
    found = true;
    return false;
  });
  return found;
}

// SETSLOT <slot> MIGRATING <id> | IMPORTING <id> | STABLE | NODE <id>, with Redis 7.0's checks:
// a node migrates only a slot it serves and imports only one it does not; NODE gives a slot away
// only once its keys have left, and closes its migration (NODE to itself ends an import, with a
// new config epoch, as Redis takes one without a vote).
void cluster_setslot(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const std::optional<std::uint32_t> slot = slot_or_reply(ctx, ctx.args[2]);
  if (!slot) return;
  ClusterMap& map = *ctx.server.cluster;
  const std::string_view action = ctx.args[3];
  const std::string node_id = ctx.argc() == 5 ? std::string(ctx.args[4]) : std::string();
  if (option_is(action, "MIGRATING") && ctx.argc() == 5) {
    if (map.owner(*slot) != ClusterMap::kMyself)
      return ctx.reply.error("ERR I'm not the owner of hash slot " + std::to_string(*slot));
    const int node = map.find(node_id);
    if (node == ClusterMap::kUnassigned)
      return ctx.reply.error("ERR I don't know about node " + node_id);
    map.set_migrating(*slot, node);
  } else if (option_is(action, "IMPORTING") && ctx.argc() == 5) {
    if (map.owner(*slot) == ClusterMap::kMyself)
      return ctx.reply.error("ERR I'm already the owner of hash slot " + std::to_string(*slot));
    const int node = map.find(node_id);
    if (node == ClusterMap::kUnassigned)
      return ctx.reply.error("ERR I don't know about node " + node_id);
    map.set_importing(*slot, node);
  } else if (option_is(action, "STABLE") && ctx.argc() == 4) {
    map.set_migrating(*slot, ClusterMap::kUnassigned);
    map.set_importing(*slot, ClusterMap::kUnassigned);
  } else if (option_is(action, "NODE") && ctx.argc() == 5) {
    const int node = map.find(node_id);
    if (node == ClusterMap::kUnassigned) return ctx.reply.error("ERR Unknown node " + node_id);
    const bool has_keys = slot_has_keys(ctx, *slot);
    if (map.owner(*slot) == ClusterMap::kMyself && node != ClusterMap::kMyself && has_keys)
      return ctx.reply.error("ERR Can't assign hashslot " + std::to_string(*slot) +
                             " to a different node while I still hold keys for this hash slot.");
    if (!has_keys) map.set_migrating(*slot, ClusterMap::kUnassigned);
    if (node == ClusterMap::kMyself && map.importing_from(*slot) != ClusterMap::kUnassigned) {
      map.bump_epoch_unless_highest();  // Redis: clusterBumpConfigEpochWithoutConsensus
      map.set_importing(*slot, ClusterMap::kUnassigned);
    }
    map.assign(*slot, node);
  } else {
    return ctx.reply.error(
        "ERR Invalid CLUSTER SETSLOT action or number of arguments. Try CLUSTER HELP");
  }
  save_or_reply(ctx);
}

// MEET <ip> <port> [<bus-port>]: checks the address and answers at once, as Redis does; the
// handshake (asking the peer for its view, and introducing this node to the nodes it learns of)
// is the handshake thread's (cluster_handshakes.h). Meeting oneself changes nothing.
void cluster_meet(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  if (ctx.argc() > 5) return ctx.reply.error(errors::subcommand_syntax(ctx.args[1], "CLUSTER"));
  const std::string ip(ctx.args[2]);
  const std::optional<std::int64_t> port = parse_int64(ctx.args[3]);
  if (!port)
    return ctx.reply.error("ERR Invalid TCP base port specified: " + std::string(ctx.args[3]));
  std::optional<std::int64_t> cport = *port + 10000;
  if (ctx.argc() == 5) {
    cport = parse_int64(ctx.args[4]);
    if (!cport)
      return ctx.reply.error("ERR Invalid TCP bus port specified: " + std::string(ctx.args[4]));
  }
  in6_addr scratch{};
  const bool ip_ok = inet_pton(AF_INET, ip.c_str(), &scratch) == 1 ||
                     inet_pton(AF_INET6, ip.c_str(), &scratch) == 1;
  if (!ip_ok || *port <= 0 || *port > 65535 || *cport <= 0 || *cport > 65535)
    return ctx.reply.error("ERR Invalid node address specified: " + ip + ":" +
                           std::string(ctx.args[3]));
  ClusterMap& map = *ctx.server.cluster;
  // A node bound to a wildcard does not know the address it is reached by until a peer meets it:
  // as Redis takes it from the first MEET packet, this takes it from the connection the MEET came
  // on (our end of it), and keeps it.
  if (map.myself().ip.empty()) {
    const std::string& ours = ctx.client.local_address;
    const std::size_t colon = ours.rfind(':');
    if (colon != std::string::npos && colon > 0 && ours != "?:0") {
      map.myself().ip = ours.substr(0, colon);
      std::string error;
      if (!ctx.server.cluster_config->save(map, error))
        ctx.server.logger.log("warning", "Could not save the cluster config: " + error);
    }
  }
  if (*port == map.myself().port && (ip == map.myself().ip || ip == "127.0.0.1" || ip == "::1"))
    return ctx.reply.ok();
  ClusterNode peer;
  peer.ip = ip;
  peer.port = *port;
  peer.cport = *cport;
  ctx.server.pending_meets.push_back(std::move(peer));
  ctx.server.meets_ready.notify_one();
  ctx.reply.ok();
}

// SET-CONFIG-EPOCH <epoch>: redis-cli --cluster create gives each new node its own epoch, which
// Redis accepts only before the node knows any other.
void cluster_set_config_epoch(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const std::optional<std::int64_t> epoch = int64_or_reply(ctx, ctx.args[2]);
  if (!epoch) return;
  ClusterMap& map = *ctx.server.cluster;
  if (*epoch < 0)
    return ctx.reply.error("ERR Invalid config epoch specified: " + std::string(ctx.args[2]));
  if (map.nodes().size() > 1)
    return ctx.reply.error(
        "ERR The user can assign a config epoch only when the node does not know any other "
        "node.");
  if (map.myself().config_epoch != 0)
    return ctx.reply.error("ERR Node config epoch is already non-zero");
  map.set_my_epoch(static_cast<unsigned long long>(*epoch));
  save_or_reply(ctx);
}

// ---- Membership: forgetting nodes, starting over ------------------------------------------

bool holds_keys(const CommandContext& ctx) { return ctx.server.keyspace.db(0).size(ctx.now) != 0; }

// FORGET <node-id>: redis-cli --cluster del-node sends it to every other node. As in Redis, the
// id is kept out for a minute (ClusterMap::kForgetBanMs): a handshake under way, or a peer that
// has not forgotten it yet, would otherwise bring it back.
void cluster_forget(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  ClusterMap& map = *ctx.server.cluster;
  const std::string id(ctx.args[2]);
  const int node = map.find(id);
  if (node == ClusterMap::kUnassigned) return ctx.reply.error("ERR Unknown node " + id);
  if (node == ClusterMap::kMyself)
    return ctx.reply.error("ERR I tried hard but I can't forget myself...");
  map.forget(node, ctx.unix_ms);
  save_or_reply(ctx);
}

// RESET [HARD|SOFT]: this node alone again, serving no slot (HARD: a new id, epochs 0). Refused
// while it holds keys, as Redis refuses it to a master with keys.
void cluster_reset(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  if (ctx.args.size() > 3)
    return ctx.reply.error(errors::subcommand_syntax(ctx.args[1], "CLUSTER"));
  bool hard = false;
  if (ctx.args.size() == 3) {
    if (option_is(ctx.args[2], "hard")) {
      hard = true;
    } else if (!option_is(ctx.args[2], "soft")) {
      return ctx.reply.error(errors::kSyntax);
    }
  }
  if (holds_keys(ctx))
    return ctx.reply.error("ERR CLUSTER RESET can't be called with master nodes containing keys");
  ClusterMap& map = *ctx.server.cluster;
  map.reset(hard, hard ? ClusterMap::new_node_id(ctx.server.random) : std::string());
  ctx.server.pending_meets.clear();  // handshakes not begun; those under way see resets()
  save_or_reply(ctx);
}

void cluster_flushslots(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  if (holds_keys(ctx))
    return ctx.reply.error("ERR DB must be empty to perform CLUSTER FLUSHSLOTS.");
  ClusterMap& map = *ctx.server.cluster;
  for (std::uint32_t slot = 0; slot < kClusterSlots; ++slot)
    if (map.owner(slot) == ClusterMap::kMyself) map.assign(slot, ClusterMap::kUnassigned);
  save_or_reply(ctx);
}

void cluster_saveconfig(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  std::string error;
  if (ctx.server.cluster_config->save(*ctx.server.cluster, error, ClusterConfigFile::Sync::kAlways))
    return ctx.reply.ok();
  ctx.reply.error("ERR error saving the cluster node config: " + error);
}

// BUMPEPOCH: "BUMPED <epoch>" when this node took a new one, "STILL <epoch>" when its own was
// already the highest (redis-cli --cluster fix asks it after settling a slot's owner).
void cluster_bumpepoch(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  ClusterMap& map = *ctx.server.cluster;
  const bool bumped = map.bump_epoch_unless_highest();
  if (bumped) {
    std::string error;
    if (!ctx.server.cluster_config->save(map, error))
      return ctx.reply.error("ERR the epoch changed but could not be saved: " + error);
  }
  ctx.reply.simple((bumped ? "BUMPED " : "STILL ") + std::to_string(map.myself().config_epoch));
}

// ---- What a cluster without gossip, failure detection or replicas answers ------------------

// COUNT-FAILURE-REPORTS <node-id>: no node reports failures here, so 0 for any known node.
void cluster_count_failure_reports(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const std::string id(ctx.args[2]);
  if (ctx.server.cluster->find(id) == ClusterMap::kUnassigned)
    return ctx.reply.error("ERR Unknown node " + id);
  ctx.reply.integer(0);
}

// LINKS: the cluster bus links; there is no bus, so none.
void cluster_links(CommandContext& ctx) {
  if (cluster_or_reply(ctx)) ctx.reply.array(0);
}

// REPLICAS / SLAVES <node-id>: every node is a master without replicas.
void cluster_replicas(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const std::string id(ctx.args[2]);
  if (ctx.server.cluster->find(id) == ClusterMap::kUnassigned)
    return ctx.reply.error("ERR Unknown node " + id);
  ctx.reply.array(0);
}

// REPLICATE <node-id>: Redis's checks, in its order; a node that passes them all would become a
// replica, which this server cannot be.
void cluster_replicate(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  const ClusterMap& map = *ctx.server.cluster;
  const std::string id(ctx.args[2]);
  const int node = map.find(id);
  if (node == ClusterMap::kUnassigned) return ctx.reply.error("ERR Unknown node " + id);
  if (node == ClusterMap::kMyself) return ctx.reply.error("ERR Can't replicate myself");
  bool serves = false;
  for (std::uint32_t slot = 0; slot < kClusterSlots && !serves; ++slot)
    serves = map.owner(slot) == ClusterMap::kMyself;
  if (serves || holds_keys(ctx))
    return ctx.reply.error(
        "ERR To set a master the node must be empty and without assigned slots.");
  ctx.reply.error("ERR chronocached nodes are masters only: replicas are not supported");
}

// FAILOVER [FORCE|TAKEOVER]: Redis's answer to a master, which every node here is.
void cluster_failover(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  if (ctx.args.size() > 3)
    return ctx.reply.error(errors::subcommand_syntax(ctx.args[1], "CLUSTER"));
  if (ctx.args.size() == 3 && !option_is(ctx.args[2], "force") &&
      !option_is(ctx.args[2], "takeover"))
    return ctx.reply.error(errors::kSyntax);
  ctx.reply.error("ERR You should send CLUSTER FAILOVER to a replica");
}

void cluster_help(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;  // Redis answers no CLUSTER subcommand, HELP included
  // Redis 7.0's text, line for line: every subcommand it lists is answered here.
  static constexpr std::string_view kLines[] = {
      "CLUSTER <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ADDSLOTS <slot> [<slot> ...]",
      "    Assign slots to current node.",
      "ADDSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
      "    Assign slots which are between <start-slot> and <end-slot> to current node.",
      "BUMPEPOCH",
      "    Advance the cluster config epoch.",
      "COUNT-FAILURE-REPORTS <node-id>",
      "    Return number of failure reports for <node-id>.",
      "COUNTKEYSINSLOT <slot>",
      "    Return the number of keys in <slot>.",
      "DELSLOTS <slot> [<slot> ...]",
      "    Delete slots information from current node.",
      "DELSLOTSRANGE <start slot> <end slot> [<start slot> <end slot> ...]",
      // One line of Redis's text, split for width (not a missing comma).
      // NOLINTNEXTLINE(bugprone-suspicious-missing-comma)
      "    Delete slots information which are between <start-slot> and <end-slot> from current "
      "node.",
      "FAILOVER [FORCE|TAKEOVER]",
      "    Promote current replica node to being a master.",
      "FORGET <node-id>",
      "    Remove a node from the cluster.",
      "GETKEYSINSLOT <slot> <count>",
      "    Return key names stored by current node in a slot.",
      "FLUSHSLOTS",
      "    Delete current node own slots information.",
      "INFO",
      "    Return information about the cluster.",
      "KEYSLOT <key>",
      "    Return the hash slot for <key>.",
      "MEET <ip> <port> [<bus-port>]",
      "    Connect nodes into a working cluster.",
      "MYID",
      "    Return the node id.",
      "NODES",
      "    Return cluster configuration seen by node. Output format:",
      "    <id> <ip:port> <flags> <master> <pings> <pongs> <epoch> <link> <slot> ...",
      "REPLICATE <node-id>",
      "    Configure current node as replica to <node-id>.",
      "RESET [HARD|SOFT]",
      "    Reset current node (default: soft).",
      "SET-CONFIG-EPOCH <epoch>",
      "    Set config epoch of current node.",
      "SETSLOT <slot> (IMPORTING <node-id>|MIGRATING <node-id>|STABLE|NODE <node-id>)",
      "    Set slot state.",
      "REPLICAS <node-id>",
      "    Return <node-id> replicas.",
      "SAVECONFIG",
      "    Force saving cluster configuration on disk.",
      "SLOTS",
      "    Return information about slots range mappings. Each range is made of:",
      "    start, end, master and replicas IP addresses, ports and ids",
      "SHARDS",
      "    Return information about slot range mappings and the nodes associated with them.",
      "LINKS",
      "    Return information about all network links between this node and its peers.",
      "    Output format is an array where each array element is a map containing attributes of a "
      "link",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

// ---- Connection state ---------------------------------------------------------------------

void readonly(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  ctx.client.cluster_readonly = true;
  ctx.reply.ok();
}

void readwrite(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  ctx.client.cluster_readonly = false;
  ctx.reply.ok();
}

void asking(CommandContext& ctx) {
  if (!cluster_or_reply(ctx)) return;
  ctx.client.cluster_asking = true;  // execute() clears it after the next command
  ctx.reply.ok();
}

constexpr std::uint32_t kAdminStale = kAdmin | kStale;

constexpr CommandSpec kClusterSubcommands[] = {
    {.name = "addslots",
     .arity = -3,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_addslots,
     .group = "cluster",
     .summary = "Assigns new hash slots to a node",
     .since = "3.0.0",
     .complexity = "O(N) where N is the total number of hash slot arguments",
     .acl = "admin slow dangerous",
     .arguments = "slot:integer..."},
    {.name = "addslotsrange",
     .arity = -4,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_addslotsrange,
     .group = "cluster",
     .summary = "Assigns new hash slot ranges to a node",
     .since = "7.0.0",
     .complexity = "O(N) where N is the total number of the slots between the start slot and "
                   "end slot arguments.",
     .acl = "admin slow dangerous",
     .arguments = "range{start-slot:integer end-slot:integer}..."},
    {.name = "bumpepoch",
     .arity = 2,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_bumpepoch,
     .group = "cluster",
     .summary = "Advance the cluster config epoch",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .tips = "nondeterministic_output"},
    {.name = "count-failure-reports",
     .arity = 3,
     .flags = kAdminStale,
     .handler = cluster_count_failure_reports,
     .group = "cluster",
     .summary = "Return the number of failure reports active for a given node",
     .since = "3.0.0",
     .complexity = "O(N) where N is the number of failure reports",
     .acl = "admin slow dangerous",
     .arguments = "node-id:string",
     .tips = "nondeterministic_output"},
    {.name = "countkeysinslot",
     .arity = 3,
     .flags = kStale,
     .handler = cluster_countkeysinslot,
     .group = "cluster",
     .summary = "Returns the number of keys in a hash slot",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "slow",
     .arguments = "slot:integer"},
    {.name = "delslots",
     .arity = -3,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_delslots,
     .group = "cluster",
     .summary = "Sets hash slots as unbound for a node",
     .since = "3.0.0",
     .complexity = "O(N) where N is the total number of hash slot arguments",
     .acl = "admin slow dangerous",
     .arguments = "slot:integer..."},
    {.name = "delslotsrange",
     .arity = -4,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_delslotsrange,
     .group = "cluster",
     .summary = "Sets hash slot ranges as unbound for a node",
     .since = "7.0.0",
     .complexity = "O(N) where N is the total number of the slots between the start slot and "
                   "end slot arguments.",
     .acl = "admin slow dangerous",
     .arguments = "range{start-slot:integer end-slot:integer}..."},
    {.name = "failover",
     .arity = -2,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_failover,
     .group = "cluster",
     .summary = "Forces a replica to perform a manual failover of its master.",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "?options(FORCE|TAKEOVER)"},
    {.name = "flushslots",
     .arity = 2,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_flushslots,
     .group = "cluster",
     .summary = "Delete a node's own slots information",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous"},
    {.name = "forget",
     .arity = 3,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_forget,
     .group = "cluster",
     .summary = "Remove a node from the nodes table",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "node-id:string"},
    {.name = "getkeysinslot",
     .arity = 4,
     .flags = kStale,
     .handler = cluster_getkeysinslot,
     .group = "cluster",
     .summary = "Returns the key names in a hash slot",
     .since = "3.0.0",
     .complexity = "O(N) where N is the number of requested keys",
     .acl = "slow",
     .arguments = "slot:integer count:integer",
     .tips = "nondeterministic_output"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = cluster_help,
     .group = "cluster",
     .summary = "Returns helpful text about the different subcommands",
     .since = "5.0.0",
     .complexity = "O(1)",
     .acl = "slow"},
    {.name = "info",
     .arity = 2,
     .flags = kStale,
     .handler = cluster_info,
     .group = "cluster",
     .summary = "Returns information about the state of a node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "slow",
     .tips = "nondeterministic_output"},
    {.name = "keyslot",
     .arity = 3,
     .flags = kStale,
     .handler = cluster_keyslot,
     .group = "cluster",
     .summary = "Returns the hash slot for a key",
     .since = "3.0.0",
     .complexity = "O(N) where N is the number of bytes in the key",
     .acl = "slow",
     .arguments = "key:string"},
    {.name = "links",
     .arity = 2,
     .flags = kStale,
     .handler = cluster_links,
     .group = "cluster",
     .summary = "Returns a list of all TCP links to and from peer nodes in cluster",
     .since = "7.0.0",
     .complexity = "O(N) where N is the total number of Cluster nodes",
     .acl = "slow",
     .tips = "nondeterministic_output"},
    {.name = "meet",
     .arity = -4,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_meet,
     .group = "cluster",
     .summary = "Forces a node to handshake with another node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "ip:string port:integer ?cluster-bus-port:integer"},
    {.name = "myid",
     .arity = 2,
     .flags = kStale,
     .handler = cluster_myid,
     .group = "cluster",
     .summary = "Returns the ID of a node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "slow"},
    {.name = "nodes",
     .arity = 2,
     .flags = kStale,
     .handler = cluster_nodes,
     .group = "cluster",
     .summary = "Returns the cluster configuration for a node",
     .since = "3.0.0",
     .complexity = "O(N) where N is the total number of Cluster nodes",
     .acl = "slow",
     .tips = "nondeterministic_output"},
    {.name = "replicas",
     .arity = 3,
     .flags = kAdminStale,
     .handler = cluster_replicas,
     .group = "cluster",
     .summary = "List replica nodes of the specified master node",
     .since = "5.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "node-id:string",
     .tips = "nondeterministic_output"},
    {.name = "replicate",
     .arity = 3,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_replicate,
     .group = "cluster",
     .summary = "Reconfigure a node as a replica of the specified master node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "node-id:string"},
    {.name = "reset",
     .arity = -2,
     .flags = kAdminStale | kNoScript,
     .handler = cluster_reset,
     .group = "cluster",
     .summary = "Reset a Redis Cluster node",
     .since = "3.0.0",
     .complexity = "O(N) where N is the number of known nodes. The command may execute a FLUSHALL "
                   "as a side effect.",
     .acl = "admin slow dangerous",
     .arguments = "?hard_soft(HARD|SOFT)"},
    {.name = "saveconfig",
     .arity = 2,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_saveconfig,
     .group = "cluster",
     .summary = "Forces the node to save cluster state on disk",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous"},
    {.name = "set-config-epoch",
     .arity = 3,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_set_config_epoch,
     .group = "cluster",
     .summary = "Sets the configuration epoch for a new node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "config-epoch:integer"},
    {.name = "setslot",
     .arity = -4,
     .flags = kAdminStale | kNoAsyncLoading,
     .handler = cluster_setslot,
     .group = "cluster",
     .summary = "Binds a hash slot to a node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "slot:integer subcommand(IMPORTING=node-id:string|MIGRATING=node-id:string|"
                  "NODE=node-id:string|STABLE)"},
    {.name = "shards",
     .arity = 2,
     .flags = kStale,
     .handler = cluster_shards,
     .group = "cluster",
     .summary = "Returns the mapping of cluster slots to shards",
     .since = "7.0.0",
     .complexity = "O(N) where N is the total number of cluster nodes",
     .acl = "slow",
     .tips = "nondeterministic_output"},
    {.name = "slaves",
     .arity = 3,
     .flags = kAdminStale,
     .handler = cluster_replicas,
     .group = "cluster",
     .summary = "List replica nodes of the specified master node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous",
     .arguments = "node-id:string",
     .tips = "nondeterministic_output"},
    {.name = "slots",
     .arity = 2,
     .flags = kStale,
     .handler = cluster_slots,
     .group = "cluster",
     .summary = "Returns the mapping of cluster slots to nodes",
     .since = "3.0.0",
     .complexity = "O(N) where N is the total number of Cluster nodes",
     .acl = "slow",
     .tips = "nondeterministic_output"},
};

void cluster_container(CommandContext& ctx) {
  ctx.reply.error(errors::unknown_subcommand(ctx.args[1], "CLUSTER"));
}

constexpr CommandSpec kCommands[] = {
    {.name = "cluster",
     .arity = -2,
     .flags = 0,
     .handler = cluster_container,
     .group = "cluster",
     .summary = "A container for Redis Cluster commands",
     .since = "3.0.0",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = kClusterSubcommands},
    {.name = "readonly",
     .arity = 1,
     .flags = kFast | kLoading | kStale,
     .handler = readonly,
     .group = "cluster",
     .summary = "Enables read-only queries for a connection to a Redis Cluster replica node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "fast connection"},
    {.name = "readwrite",
     .arity = 1,
     .flags = kFast | kLoading | kStale,
     .handler = readwrite,
     .group = "cluster",
     .summary = "Enables read-write queries for a connection to a Redis Cluster replica node",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "fast connection"},
    {.name = "asking",
     .arity = 1,
     .flags = kFast,
     .handler = asking,
     .group = "cluster",
     .summary = "Signals that a cluster client is following an -ASK redirect",
     .since = "3.0.0",
     .complexity = "O(1)",
     .acl = "fast connection"},
};

}  // namespace

std::span<const CommandSpec> cluster_commands() { return kCommands; }

}  // namespace chronocached
