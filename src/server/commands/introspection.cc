// OBJECT ENCODING FREQ IDLETIME REFCOUNT HELP and MEMORY USAGE STATS DOCTOR MALLOC-STATS PURGE
// HELP. Every value is a string, so OBJECT answers what Redis answers for strings; what we do not
// track (access times and frequencies) is reported as such, never invented.
#include "server/commands/introspection.h"

#include <malloc.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "chronocache/table/segmented_table.h"
#include "server/commands/arguments.h"
#include "server/commands/errors.h"
#include "server/commands/memory_report.h"

namespace chronocached {
namespace {

// ---- OBJECT --------------------------------------------------------------------------------

bool policy_is_lfu(const ServerConfig& config) {
  return config.maxmemory_policy == "allkeys-lfu" || config.maxmemory_policy == "volatile-lfu";
}

// Redis shares the integer objects 0..9999 (refcount INT_MAX) unless a maxmemory limit with an
// LRU or LFU policy needs per-key access data.
bool shares_integers(const ServerConfig& config) {
  const std::string_view policy = config.maxmemory_policy;
  const bool tracks_access =
      policy.find("lru") != std::string_view::npos || policy.find("lfu") != std::string_view::npos;
  return config.maxmemory == 0 || !tracks_access;
}

// Redis's string encodings, as tryObjectEncoding picks them when a value is written:
//   "int"     a decimal that fits a long (string2l: no '+', no leading zeros, <= 20 bytes)
//   "embstr"  up to 44 bytes (one allocation with the object header in Redis)
//   "raw"     longer, or changed in place by APPEND or SETRANGE (a grown Blob).
// Where we can differ: Redis keeps "embstr" for a value INCRBYFLOAT wrote even if it reads as an
// integer ("3"), reports "int" for values of commands that skip tryObjectEncoding only when they
// built an integer object, and gives a COPY of a shared integer (0..9999) a private object of its
// own (REFCOUNT 1); we derive the encoding and the sharing from the bytes and the grown mark
// alone, which has no bit to spare for either.
constexpr std::size_t kEmbstrLimit = 44;
constexpr long long kSharedRefcount = 2147483647;  // Redis's OBJ_SHARED_REFCOUNT (INT_MAX)
constexpr std::int64_t kSharedIntegers = 10000;    // Redis's OBJ_SHARED_INTEGERS

std::optional<std::int64_t> integer_encoded(const Blob& value) {
  if (value.grown() || value.size() > 20) return std::nullopt;
  return parse_int64(value.view());
}

std::string_view encoding_of(const Blob& value) {
  if (integer_encoded(value)) return "int";
  return !value.grown() && value.size() <= kEmbstrLimit ? "embstr" : "raw";
}

// OBJECT's subcommands look the key up first: a missing key is a null reply, whatever else. The
// look leaves the key's place in the eviction order as it was (Db::inspect).
Db::Inspection object_lookup(CommandContext& ctx) {
  Db::Inspection found = ctx.db().inspect(ctx.args[2], ctx.now);
  if (found.record == nullptr) ctx.reply.null();
  return found;
}

void object_encoding(CommandContext& ctx) {
  if (const Blob* value = object_lookup(ctx).record) ctx.reply.bulk(encoding_of(*value));
}

void object_refcount(CommandContext& ctx) {
  const Blob* value = object_lookup(ctx).record;
  if (value == nullptr) return;
  const auto number = integer_encoded(*value);
  const bool shared =
      number && *number >= 0 && *number < kSharedIntegers && shares_integers(ctx.server.config);
  ctx.reply.integer(shared ? kSharedRefcount : 1);
}

// The LFU policy's count of the key's accesses (Db::inspect): a linear count, not Redis's
// logarithmic counter with its decay, so the numbers differ from Redis's; the order they put
// keys in (what redis-cli --hotkeys reads them for) is the policy's own.
void object_freq(CommandContext& ctx) {
  const Db::Inspection found = object_lookup(ctx);
  if (found.record == nullptr) return;
  if (!policy_is_lfu(ctx.server.config)) {
    return ctx.reply.error(errors::kNoLfuPolicy);
  }
  ctx.reply.integer(found.lfu_count.value_or(0));
}

void object_idletime(CommandContext& ctx) {
  if (object_lookup(ctx).record == nullptr) return;
  if (policy_is_lfu(ctx.server.config)) {
    return ctx.reply.error(errors::kLfuPolicyNoIdle);
  }
  // No access time is kept per key (the ordering policies keep an order, not a clock): every
  // key reports 0 seconds idle (docs/design/server.md).
  ctx.reply.integer(0);
}

void reply_help(CommandContext& ctx, std::string_view command,
                std::span<const std::string_view> lines) {
  std::string head(command);
  head.append(" <subcommand> [<arg> [value] [opt] ...]. Subcommands are:");
  ctx.reply.array(lines.size() + 3);
  ctx.reply.simple(head);
  for (std::string_view line : lines) ctx.reply.simple(line);
  ctx.reply.simple("HELP");
  ctx.reply.simple("    Prints this help.");
}

void object_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "ENCODING <key>",
      "    Return the kind of internal representation used in order to store the value",
      "    associated with a <key>.",
      "FREQ <key>",
      "    Return the access frequency index of the <key>. The returned integer is",
      "    proportional to the logarithm of the recent access frequency of the key.",
      "IDLETIME <key>",
      "    Return the idle time of the <key>, that is the approximated number of",
      "    seconds elapsed since the last access to the key.",
      "REFCOUNT <key>",
      "    Return the number of references of the value associated with the specified",
      "    <key>.",
  };
  reply_help(ctx, "OBJECT", kLines);
}

// A container's own handler never runs (the dispatcher resolves the subcommand or refuses it),
// but a spec needs one.
void object_container(CommandContext& ctx) {
  ctx.reply.error(errors::unknown_subcommand(ctx.args[1], "OBJECT"));
}

// ---- MEMORY --------------------------------------------------------------------------------

// MEMORY USAGE key [SAMPLES count]: the record's heap block (key and value together: what malloc
// handed out, size-class rounding and growth room included) plus the entry's table slot, control
// byte and policy word (Engine::entry_table_bytes): our counterpart of the dictEntry Redis adds to
// a key's usage (neither charges the share of empty slots or buckets). SAMPLES
// only matters for collections; it is parsed and checked as Redis does. Not byte-equal to Redis's
// figure, whose object layout differs (robj headers, jemalloc size classes). Redis's lookup is a
// bare dictFind: no keyspace hit or miss, no access (Db::peek). Unlike it, a key past its
// deadline reads as absent here (and is removed), as everywhere else in chronocached.
void memory_usage(CommandContext& ctx) {
  for (std::size_t i = 3; i < ctx.argc(); ++i) {
    if (option_is(ctx.args[i], "SAMPLES") && i + 1 < ctx.argc()) {
      const auto samples = parse_int64(ctx.args[++i]);
      if (!samples) return ctx.reply.error(errors::kNotInteger);
      if (*samples < 0) return ctx.reply.error(errors::kSyntax);
    } else {
      return ctx.reply.error(errors::kSyntax);
    }
  }
  const Blob* record = ctx.db().peek(ctx.args[2], ctx.now);
  if (record == nullptr) return ctx.reply.null();
  const std::size_t bytes = record->heap_bytes() + ctx.db().engine().entry_table_bytes();
  ctx.reply.integer(static_cast<long long>(bytes));
}

// MEMORY STATS: Redis's fields in Redis's order, from the figures INFO reports
// (memory_report.h). What we do not have (replication, Lua, AOF, cluster links, a separate
// expires table) is 0.
void memory_stats(CommandContext& ctx) {
  const MemoryReport memory = memory_report(ctx.server);
  ctx.reply.map(27 + memory.tables.size());
  const auto field = [&](std::string_view name, long long value) {
    ctx.reply.bulk(name);
    ctx.reply.integer(value);
  };
  const auto bytes = [&](std::string_view name, std::size_t value) {
    field(name, static_cast<long long>(value));
  };
  const auto real = [&](std::string_view name, float value) {
    ctx.reply.bulk(name);
    ctx.reply.double_value(value);  // the float, widened, as Redis replies it
  };
  bytes("peak.allocated", memory.peak);
  bytes("total.allocated", memory.total);
  bytes("startup.allocated", memory.startup);
  field("replication.backlog", 0);
  field("clients.slaves", 0);
  bytes("clients.normal", memory.clients);
  field("cluster.links", 0);
  field("aof.buffer", 0);
  field("lua.caches", 0);
  field("functions.caches", 0);
  for (const auto& [index, table_bytes] : memory.tables) {
    char name[32];
    std::snprintf(name, sizeof(name), "db.%zu", index);
    ctx.reply.bulk(name);
    ctx.reply.map(3);
    bytes("overhead.hashtable.main", table_bytes);
    field("overhead.hashtable.expires", 0);  // deadlines live in the slots
    field("overhead.hashtable.slot-to-keys", 0);
  }
  bytes("overhead.total", memory.overhead);
  bytes("keys.count", memory.keys);
  bytes("keys.bytes-per-key", memory.bytes_per_key());
  bytes("dataset.bytes", memory.dataset);
  real("dataset.percentage", memory.dataset_percent());
  real("peak.percentage", memory.peak_percent());
  bytes("allocator.allocated", memory.allocator_allocated());
  bytes("allocator.active", memory.allocator_active());
  bytes("allocator.resident", memory.allocator_resident());
  real("allocator-fragmentation.ratio", memory.allocator_fragmentation());
  field("allocator-fragmentation.bytes", memory.allocator_fragmentation_bytes());
  real("allocator-rss.ratio", 1.0f);
  field("allocator-rss.bytes", 0);
  real("rss-overhead.ratio", 1.0f);
  field("rss-overhead.bytes", 0);
  real("fragmentation", memory.fragmentation());
  field("fragmentation.bytes", memory.fragmentation_bytes());
}

// MEMORY DOCTOR: Redis's checks on the same figures, with its texts. Those about replicas, Lua
// scripts and the allocator's own RSS cannot fire here (no replicas or scripts; the allocator's
// RSS is the process's, memory_report.h), so only their thresholds' kin are kept.
void memory_doctor(CommandContext& ctx) {
  constexpr std::size_t kTooSmallToJudge = 5 * 1024 * 1024;
  constexpr long long kLargeFragmentation = 10 << 20;
  constexpr std::size_t kLargeClientBuffers = 200 * 1024;  // a client, on average
  const MemoryReport memory = memory_report(ctx.server);
  if (memory.total < kTooSmallToJudge) {
    return ctx.reply.verbatim(
        "Hi Sam, this instance is empty or is using very little memory, my issues detector can't "
        "be used in these conditions. Please, leave for your mission on Earth and fill it with "
        "some data. The new Sam and I will be back to our programming as soon as I finished "
        "rebooting.\n");
  }
  std::size_t clients = 0;
  for (const auto& [id, client] : ctx.server.clients.by_id) clients += client->killed ? 0 : 1;
  const bool big_peak = static_cast<float>(memory.peak) / static_cast<float>(memory.total) > 1.5f;
  const bool high_fragmentation =
      memory.fragmentation() > 1.4f && memory.fragmentation_bytes() > kLargeFragmentation;
  const bool high_allocator_fragmentation =
      memory.allocator_fragmentation() > 1.1f &&
      memory.allocator_fragmentation_bytes() > kLargeFragmentation;
  const bool big_client_buffers = clients != 0 && memory.clients / clients > kLargeClientBuffers;
  if (!big_peak && !high_fragmentation && !high_allocator_fragmentation && !big_client_buffers) {
    return ctx.reply.verbatim(
        "Hi Sam, I can't find any memory issue in your instance. I can only account for what "
        "occurs on this base.\n");
  }
  std::string report = "Sam, I detected a few issues in this Redis instance memory implants:\n\n";
  if (big_peak) {
    report +=
        " * Peak memory: In the past this instance used more than 150% the memory that is "
        "currently using. The allocator is normally not able to release memory after a peak, so "
        "you can expect to see a big fragmentation ratio, however this is actually harmless and "
        "is only due to the memory peak, and if the Redis instance Resident Set Size (RSS) is "
        "currently bigger than expected, the memory will be used as soon as you fill the Redis "
        "instance with more data. If the memory peak was only occasional and you want to try to "
        "reclaim memory, please try the MEMORY PURGE command, otherwise the only other option is "
        "to shutdown and restart the instance.\n\n";
  }
  if (high_fragmentation) {
    report +=
        " * High total RSS: This instance has a memory fragmentation and RSS overhead greater "
        "than 1.4 (this means that the Resident Set Size of the Redis process is much larger "
        "than the sum of the logical allocations Redis performed). This problem is usually due "
        "either to a large peak memory (check if there is a peak memory entry above in the "
        "report) or may result from a workload that causes the allocator to fragment memory a "
        "lot. If the problem is a large peak memory, then there is no issue. Otherwise, make "
        "sure you are using the Jemalloc allocator and not the default libc malloc. Note: The "
        "currently used allocator is \"libc\".\n\n";
  }
  if (high_allocator_fragmentation) {
    report +=
        " * High allocator fragmentation: This instance has an allocator external fragmentation "
        "greater than 1.1. This problem is usually due either to a large peak memory (check if "
        "there is a peak memory entry above in the report) or may result from a workload that "
        "causes the allocator to fragment memory a lot. You can try enabling 'activedefrag' "
        "config option.\n\n";
  }
  if (big_client_buffers) {
    report +=
        " * Big client buffers: The clients output buffers in this instance are greater than "
        "200K per client (on average). This may result from different causes, like Pub/Sub "
        "clients subscribed to channels bot not receiving data fast enough, so that data piles "
        "on the Redis instance output buffer, or clients sending commands with large replies or "
        "very large sequences of commands in the same pipeline. Please use the CLIENT LIST "
        "command in order to investigate the issue if it causes problems in your instance, or to "
        "understand better why certain clients are using a big amount of memory.\n\n";
  }
  report += "I'm here to keep you safe, Sam. I want to help you.\n";
  ctx.reply.verbatim(report);
}

// Redis built without jemalloc answers this text, as a bulk string; glibc's malloc_info XML is
// no substitute.
void memory_malloc_stats(CommandContext& ctx) {
  ctx.reply.bulk("Stats not supported for the current allocator");
}

// glibc's counterpart of jemalloc's purge: give free heap pages back to the kernel.
void memory_purge(CommandContext& ctx) {
  ::malloc_trim(0);
  ctx.reply.ok();
}

void memory_container(CommandContext& ctx) {
  ctx.reply.error(errors::unknown_subcommand(ctx.args[1], "MEMORY"));
}

void memory_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "DOCTOR",
      "    Return memory problems reports.",
      "MALLOC-STATS",
      "    Return internal statistics report from the memory allocator.",
      "PURGE",
      "    Attempt to purge dirty pages for reclamation by the allocator.",
      "STATS",
      "    Return information about the memory usage of the server.",
      "USAGE <key> [SAMPLES <count>]",
      "    Return memory in bytes used by <key> and its value. Nested values are",
      "    sampled up to <count> times (default: 5, 0 means sample all).",
  };
  reply_help(ctx, "MEMORY", kLines);
}

// ---- The table -----------------------------------------------------------------------------

constexpr CommandSpec kObjectSubcommands[] = {
    {.name = "encoding",
     .arity = 3,
     .flags = kReadOnly,
     .handler = object_encoding,
     .first_key = 2,
     .last_key = 2,
     .key_step = 1,
     .summary = "Inspect the internal encoding of a Redis object",
     .since = "2.2.3",
     .complexity = "O(1)",
     .acl = "keyspace read slow",
     .key_flags = "RO",
     .tips = "nondeterministic_output"},
    {.name = "freq",
     .arity = 3,
     .flags = kReadOnly,
     .handler = object_freq,
     .first_key = 2,
     .last_key = 2,
     .key_step = 1,
     .summary = "Get the logarithmic access frequency counter of a Redis object",
     .since = "4.0.0",
     .complexity = "O(1)",
     .acl = "keyspace read slow",
     .key_flags = "RO",
     .tips = "nondeterministic_output"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = object_help,
     .summary = "Show helpful text about the different subcommands",
     .since = "6.2.0",
     .complexity = "O(1)",
     .acl = "keyspace slow"},
    {.name = "idletime",
     .arity = 3,
     .flags = kReadOnly,
     .handler = object_idletime,
     .first_key = 2,
     .last_key = 2,
     .key_step = 1,
     .summary = "Get the time since a Redis object was last accessed",
     .since = "2.2.3",
     .complexity = "O(1)",
     .acl = "keyspace read slow",
     .key_flags = "RO",
     .tips = "nondeterministic_output"},
    {.name = "refcount",
     .arity = 3,
     .flags = kReadOnly,
     .handler = object_refcount,
     .first_key = 2,
     .last_key = 2,
     .key_step = 1,
     .summary = "Get the number of references to the value of the key",
     .since = "2.2.3",
     .complexity = "O(1)",
     .acl = "keyspace read slow",
     .key_flags = "RO",
     .tips = "nondeterministic_output"},
};

constexpr CommandSpec kMemorySubcommands[] = {
    {.name = "doctor",
     .arity = 2,
     .flags = 0,
     .handler = memory_doctor,
     .group = "server",
     .summary = "Outputs memory problems report",
     .since = "4.0.0",
     .complexity = "O(1)",
     .acl = "slow",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = memory_help,
     .group = "server",
     .summary = "Show helpful text about the different subcommands",
     .since = "4.0.0",
     .complexity = "O(1)",
     .acl = "slow"},
    {.name = "malloc-stats",
     .arity = 2,
     .flags = 0,
     .handler = memory_malloc_stats,
     .group = "server",
     .summary = "Show allocator internal stats",
     .since = "4.0.0",
     .complexity = "Depends on how much memory is allocated, could be slow",
     .acl = "slow",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {.name = "purge",
     .arity = 2,
     .flags = 0,
     .handler = memory_purge,
     .group = "server",
     .summary = "Ask the allocator to release memory",
     .since = "4.0.0",
     .complexity = "Depends on how much memory is allocated, could be slow",
     .acl = "slow",
     .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {.name = "stats",
     .arity = 2,
     .flags = 0,
     .handler = memory_stats,
     .group = "server",
     .summary = "Show memory usage details",
     .since = "4.0.0",
     .complexity = "O(1)",
     .acl = "slow",
     .tips = "nondeterministic_output request_policy:all_shards response_policy:special"},
    {.name = "usage",
     .arity = -3,
     .flags = kReadOnly,
     .handler = memory_usage,
     .first_key = 2,
     .last_key = 2,
     .key_step = 1,
     .group = "server",
     .summary = "Estimate the memory usage of a key",
     .since = "4.0.0",
     .complexity = "O(N) where N is the number of samples.",
     .acl = "read slow",
     .key_flags = "RO"},
};

constexpr CommandSpec kCommands[] = {
    {.name = "object",
     .arity = -2,
     .flags = 0,
     .handler = object_container,
     .summary = "A container for object introspection commands",
     .since = "2.2.3",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = kObjectSubcommands},
    {.name = "memory",
     .arity = -2,
     .flags = 0,
     .handler = memory_container,
     .group = "server",
     .summary = "A container for memory diagnostics commands",
     .since = "4.0.0",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = kMemorySubcommands},
};

}  // namespace

std::span<const CommandSpec> introspection_commands() { return kCommands; }

}  // namespace chronocached
