// DUMP RESTORE RESTORE-ASKING, with Redis 7.0's replies and errors, in ChronoCache's own payload
// format (persistence/dump_payload.h): Redis's RESTORE refuses our payloads and ours refuses
// Redis's, each with "DUMP payload version or checksum are wrong".
//
// RESTORE checks in Redis's order, so the first error is Redis's: the options (syntax, IDLETIME,
// FREQ), then BUSYKEY, then the TTL, then the payload. The key is written with Db::put, which
// tells WATCHers and counts the change for save rules; maxmemory refuses RESTORE before it runs
// (kDenyOom), as Redis's denyoom flag does.
//
// OBJECT ENCODING after RESTORE is Redis's: Redis re-encodes a restored string from its bytes
// (int, embstr, raw by length), so a value APPENDed to ("raw") comes back "embstr" when short.
// Db::put stores it without the grown mark, and introspection.cc derives the same encodings from
// the bytes.
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "persistence/dump_payload.h"
#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"
#include "server/store/unix_time.h"

namespace chronocached {
namespace {

using chronocache::persistence::decode_dump_payload;
using chronocache::persistence::DecodedDump;
using chronocache::persistence::DumpStatus;
using chronocache::persistence::encode_dump_payload;

// DUMP key: a nil reply for a missing or expired key. The lookup counts a keyspace hit or miss,
// as Redis's lookupKeyRead does.
void dump(CommandContext& ctx) {
  const Blob* value = ctx.db().find(ctx.args[1], ctx.now);
  if (value == nullptr) return ctx.reply.null();
  ctx.reply.bulk(encode_dump_payload(value->view()));
}

// RESTORE's options after the payload. IDLETIME and FREQ are validated exactly as Redis does and
// then have no effect: the engine offers no way to set one entry's LRU recency or LFU count (its
// policies order entries by the accesses they see), and OBJECT IDLETIME / FREQ report 0 for every
// key. So a restored key's place in the eviction order is that of a key just written.
struct RestoreOptions {
  bool replace = false;
  bool absolute_ttl = false;                 // ABSTTL: the ttl is a unix time in milliseconds
  std::optional<std::int64_t> idle_seconds;  // IDLETIME, validated, unused
  std::optional<std::int64_t> frequency;     // FREQ, validated, unused
};

// Reads an option's integer value as Redis's getLongLongFromObjectOrReply does; checks
// [min, max] with `out_of_range` as its error. Replies and returns nullopt on a bad value.
std::optional<std::int64_t> option_value(CommandContext& ctx, std::string_view text,
                                         std::int64_t min, std::int64_t max,
                                         std::string_view out_of_range) {
  const auto value = parse_int64(text);
  if (!value) {
    ctx.reply.error(errors::kNotInteger);
    return std::nullopt;
  }
  if (*value < min || *value > max) {
    ctx.reply.error(out_of_range);
    return std::nullopt;
  }
  return value;
}

// Redis's restoreCommand option loop: IDLETIME and FREQ each exclude the other (the second one
// named is a syntax error), either may repeat, and a value-taking option without its value is a
// syntax error. Replies and returns nullopt on the first error.
std::optional<RestoreOptions> parse_restore_options(CommandContext& ctx) {
  constexpr std::int64_t kMaxInt64 = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMaxFrequency = 255;  // Redis's 8-bit LFU counter
  RestoreOptions options;
  for (std::size_t i = 4; i < ctx.argc(); ++i) {
    const std::string_view option = ctx.args[i];
    const bool has_value = i + 1 < ctx.argc();
    if (option_is(option, "REPLACE")) {
      options.replace = true;
    } else if (option_is(option, "ABSTTL")) {
      options.absolute_ttl = true;
    } else if (option_is(option, "IDLETIME") && has_value && !options.frequency) {
      options.idle_seconds =
          option_value(ctx, ctx.args[++i], 0, kMaxInt64, errors::kInvalidIdletime);
      if (!options.idle_seconds) return std::nullopt;
    } else if (option_is(option, "FREQ") && has_value && !options.idle_seconds) {
      options.frequency = option_value(ctx, ctx.args[++i], 0, kMaxFrequency, errors::kInvalidFreq);
      if (!options.frequency) return std::nullopt;
    } else {
      ctx.reply.error(errors::kSyntax);
      return std::nullopt;
    }
  }
  return options;
}

// The unix time in ms RESTORE's ttl means, or nullopt for no expiry (ttl 0). Redis 7.0 adds a
// relative ttl to the clock unchecked, so a sum past INT64_MAX wraps negative there and the key is
// taken as already expired (RESTORE replies OK and stores nothing); the wrap is spelled out here.
std::optional<std::int64_t> restore_target_unix_ms(std::int64_t ttl, bool absolute,
                                                   std::int64_t unix_ms) {
  if (ttl == 0) return std::nullopt;
  if (absolute) return ttl;
  if (ttl > std::numeric_limits<std::int64_t>::max() - unix_ms)
    return std::numeric_limits<std::int64_t>::min();
  return ttl + unix_ms;
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency], and
// RESTORE-ASKING, the same command under the name MIGRATE sends.
void restore(CommandContext& ctx) {
  const std::optional<RestoreOptions> options = parse_restore_options(ctx);
  if (!options) return;
  Db& db = ctx.db();
  const std::string_view key = ctx.args[1];
  if (!options->replace && db.exists(key, ctx.now)) return ctx.reply.error(errors::kBusyKey);
  const auto ttl = parse_int64(ctx.args[2]);
  if (!ttl) return ctx.reply.error(errors::kNotInteger);
  if (*ttl < 0) return ctx.reply.error(errors::kInvalidTtl);
  const DecodedDump decoded = decode_dump_payload(ctx.args[3]);
  switch (decoded.status) {
    case DumpStatus::kOk:
      break;
    case DumpStatus::kBadVersionOrChecksum:
      return ctx.reply.error(errors::kDumpPayload);
    case DumpStatus::kBadData:
      return ctx.reply.error(errors::kBadDataFormat);
  }

  const std::optional<std::int64_t> target_ms =
      restore_target_unix_ms(*ttl, options->absolute_ttl, ctx.unix_ms);
  if (target_ms && *target_ms <= ctx.unix_ms) {
    // Already expired (ABSTTL in the past): Redis replies OK and stores nothing; with REPLACE the
    // old key is deleted, which is the one change counted (none when there was no key).
    if (options->replace) db.erase(key, ctx.now);
    return ctx.reply.ok();
  }
  const TimePoint deadline =
      target_ms ? deadline_at_unix_ms(*target_ms, ctx.now, ctx.unix_ms) : kNoExpiry;
  db.put(key, decoded.value, deadline, ctx.now);  // with REPLACE, overwrites: one change
  ctx.reply.ok();
}

// ---- The table -----------------------------------------------------------------------------

constexpr std::string_view kRestoreComplexity =
    "O(1) to create the new key and additional O(N*M) to reconstruct the serialized value, where "
    "N is the number of Redis objects composing the value and M their average size. For small "
    "string values the time complexity is thus O(1)+O(1*M) where M is small, so simply O(1). "
    "However for sorted set values the complexity is O(N*M*log(N)) because inserting values into "
    "sorted sets is O(log(N)).";
constexpr std::string_view kRestoreArguments =
    "key:key ttl:integer serialized-value:string ?REPLACE ?ABSTTL ?IDLETIME=seconds:integer "
    "?FREQ=frequency:integer";

constexpr CommandSpec kCommands[] = {
    {.name = "dump",
     .arity = 2,
     .flags = kReadOnly,
     .handler = dump,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Return a serialized version of the value stored at the specified key.",
     .since = "2.6.0",
     .complexity = "O(1) to access the key and additional O(N*M) to serialize it, where N is the "
                   "number of Redis objects composing the value and M their average size. For "
                   "small string values the time complexity is thus O(1)+O(1*M) where M is small, "
                   "so simply O(1).",
     .acl = "keyspace read slow",
     .arguments = "key:key",
     .tips = "nondeterministic_output"},
    {.name = "restore",
     .arity = -4,
     .flags = kWrite | kDenyOom,
     .handler = restore,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Create a key using the provided serialized value, previously obtained using DUMP.",
     .since = "2.6.0",
     .complexity = kRestoreComplexity,
     .acl = "keyspace write slow dangerous",
     .arguments = kRestoreArguments,
     .key_flags = "OW update"},
    // Redis's internal variant, which MIGRATE sends to the target node: the same handler; kAsking
    // lets cluster mode serve it for a slot being imported, as ASKING would.
    {.name = "restore-asking",
     .arity = -4,
     .flags = kWrite | kDenyOom | kAsking,
     .handler = restore,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "server",
     .summary = "An internal command for migrating keys in a cluster",
     .since = "3.0.0",
     .complexity = kRestoreComplexity,
     .acl = "keyspace write slow dangerous",
     .arguments = kRestoreArguments,
     .key_flags = "OW update"},
};

}  // namespace

std::span<const CommandSpec> dump_restore_commands() { return kCommands; }

}  // namespace chronocached
