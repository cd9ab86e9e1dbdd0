// Keyspace commands: DEL UNLINK EXISTS TYPE KEYS SCAN RANDOMKEY RENAME RENAMENX COPY TOUCH
// SWAPDB, with Redis 7.0's replies and errors; the family's OBJECT and MEMORY containers live in
// introspection.cc.
//
// Every value is a string, so TYPE answers "string" or "none" and SCAN's TYPE filter keeps all
// keys or none. Lookups that Redis counts as keyspace hits/misses (EXISTS, TYPE, TOUCH, COPY's
// source) go through Db::find, which counts them too; existence checks Redis does not
// count use Db::exists and Db::deadline. RENAME's read of its source counts a hit where Redis
// does not: Db::find is the only way to the value.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"
#include "server/commands/glob.h"
#include "server/commands/introspection.h"

namespace chronocached {
namespace {

// ---- DEL UNLINK EXISTS TOUCH TYPE ----------------------------------------------------------

// DEL and UNLINK: the engine frees a string at once either way (no lazy-free thread to hand to).
void del(CommandContext& ctx) {
  Db& db = ctx.db();
  long long deleted = 0;
  for (std::size_t i = 1; i < ctx.argc(); ++i)
    if (db.erase(ctx.args[i], ctx.now)) ++deleted;
  ctx.reply.integer(deleted);
}

// EXISTS and TOUCH: how many of the arguments name live keys, a repeated key counting each time.
// As Redis, EXISTS leaves each key's place in the eviction order; TOUCH is an access.
void count_live(CommandContext& ctx, bool touch) {
  Db& db = ctx.db();
  long long found = 0;
  for (std::size_t i = 1; i < ctx.argc(); ++i) {
    const std::string_view key = ctx.args[i];
    if ((touch ? db.find(key, ctx.now) : db.find_untouched(key, ctx.now)) != nullptr) ++found;
  }
  ctx.reply.integer(found);
}

void exists(CommandContext& ctx) { count_live(ctx, false); }
void touch(CommandContext& ctx) { count_live(ctx, true); }

void type(CommandContext& ctx) {
  ctx.reply.simple(ctx.db().find_untouched(ctx.args[1], ctx.now) != nullptr ? "string" : "none");
}

// ---- KEYS SCAN RANDOMKEY -------------------------------------------------------------------

void reply_keys(CommandContext& ctx, const std::vector<std::string_view>& keys) {
  ctx.reply.array(keys.size());
  for (std::string_view key : keys) ctx.reply.bulk(key);
}

void keys(CommandContext& ctx) {
  const std::string_view pattern = ctx.args[1];
  const bool all = pattern == "*";      // Redis's shortcut; it also lists the empty key, which the
                                        // matcher itself would not ("*" needs one byte to start)
  std::vector<std::string_view> found;  // views into the table: nothing writes before the reply
  ctx.db().for_each(ctx.now, [&](std::string_view key, const Blob&, TimePoint) {
    if (all || glob_match(pattern, key)) found.push_back(key);
  });
  reply_keys(ctx, found);
}

// A cursor as Redis's parseScanCursorOrReply reads it: strtoul(3) in base 10 over the whole
// argument (which ends at its first NUL, as a C string), no leading space. So "" is 0, "+5" is 5
// and "-1" wraps to 2^64-1; only overflow and stray bytes are errors.
std::optional<std::uint64_t> parse_cursor(std::string_view text) {
  text = text.substr(0, text.find('\0'));
  if (text.empty()) return 0;  // strtoul converts nothing and stops at the terminator
  if (std::isspace(static_cast<unsigned char>(text[0]))) return std::nullopt;
  std::size_t i = 0;
  const bool negative = text[0] == '-';
  if (text[0] == '+' || text[0] == '-') i = 1;
  if (i == text.size()) return std::nullopt;  // a lone sign: nothing converted
  std::uint64_t value = 0;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return negative ? 0 - value : value;
}

// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
//
// The cursor is the engine's (Db::scan): stateless, and every key live for the whole walk is
// returned at least once however the table grows between calls (a key may come twice). COUNT
// works as in Redis: the walk stops once it has visited about COUNT live keys (before MATCH and
// TYPE filter them) or examined 10 * COUNT slots, so a sparse table cannot make a call slow.
void scan(CommandContext& ctx) {
  const auto cursor = parse_cursor(ctx.args[1]);
  if (!cursor) return ctx.reply.error(errors::kInvalidCursor);
  std::int64_t count = 10;
  std::string_view pattern;
  bool use_pattern = false;
  std::string_view type_name;
  bool filter_type = false;
  for (std::size_t i = 2; i < ctx.argc(); i += 2) {
    const bool has_value = i + 1 < ctx.argc();
    if (option_is(ctx.args[i], "COUNT") && has_value) {
      const auto n = parse_int64(ctx.args[i + 1]);
      if (!n) return ctx.reply.error(errors::kNotInteger);
      if (*n < 1) return ctx.reply.error(errors::kSyntax);
      count = *n;
    } else if (option_is(ctx.args[i], "MATCH") && has_value) {
      pattern = ctx.args[i + 1];
      use_pattern = pattern != "*";  // "*" is a no-op, as in Redis (the empty key included)
    } else if (option_is(ctx.args[i], "TYPE") && has_value) {
      type_name = ctx.args[i + 1];
      filter_type = true;
    } else {
      return ctx.reply.error(errors::kSyntax);
    }
  }
  // Every value is a string; Redis 7.0 does not reject unknown type names, it matches nothing.
  const bool type_matches = !filter_type || option_is(type_name, "string");

  const auto wanted = static_cast<std::uint64_t>(count);
  const std::uint64_t slot_budget =
      wanted > std::numeric_limits<std::uint64_t>::max() / 10 ? wanted : wanted * 10;
  std::vector<std::string_view> found;  // views into the table: nothing writes before the reply
  std::uint64_t visited = 0;
  std::uint64_t examined = 0;
  std::uint64_t next = 0;
  // An empty database ends the scan at once, whatever the cursor, as Redis's dictScan does: a
  // client does not walk an empty table's slots for nothing.
  if (ctx.db().stored_size() != 0) {
    next = *cursor;
    do {
      const std::uint64_t chunk = std::min(wanted - visited, slot_budget - examined);
      next = ctx.db().scan(next, static_cast<std::size_t>(chunk), ctx.now,
                           [&](std::string_view key, const Blob&) {
                             ++visited;
                             if (type_matches && (!use_pattern || glob_match(pattern, key)))
                               found.push_back(key);
                           });
      examined += chunk;
    } while (next != 0 && visited < wanted && examined < slot_budget);
  }

  std::array<char, 24> digits{};
  const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), next).ptr;
  ctx.reply.array(2);
  ctx.reply.bulk(std::string_view(digits.data(), static_cast<std::size_t>(end - digits.data())));
  reply_keys(ctx, found);
}

void randomkey(CommandContext& ctx) {
  Db& db = ctx.db();
  // Each sample already steps past a few expired entries; a table that is mostly dead keys can
  // still defeat several samples, so a last full pass picks among the live ones (rare, O(n)).
  constexpr int kSamples = 8;
  for (int attempt = 0; attempt < kSamples; ++attempt) {
    const auto key = db.random_key(ctx.server.random(), ctx.now);
    if (key) return ctx.reply.bulk(*key);
  }
  std::vector<std::string_view> live;
  db.for_each(ctx.now, [&](std::string_view key, const Blob&, TimePoint) { live.push_back(key); });
  if (live.empty()) return ctx.reply.null();
  ctx.reply.bulk(live[ctx.server.random() % live.size()]);
}

// ---- RENAME RENAMENX COPY SWAPDB -----------------------------------------------------------

// RENAME key newkey / RENAMENX key newkey: the value moves to the new name with its TTL.
void rename_key(CommandContext& ctx, bool only_if_new) {
  Db& db = ctx.db();
  const std::string_view source = ctx.args[1];
  const std::string_view target = ctx.args[2];
  const auto deadline = db.deadline(source, ctx.now);
  if (!deadline) return ctx.reply.error(errors::kNoSuchKey);
  // Renaming a key onto itself changes nothing, but the key must exist (checked above).
  if (source == target) return only_if_new ? ctx.reply.integer(0) : ctx.reply.ok();
  if (only_if_new && db.exists(target, ctx.now)) return ctx.reply.integer(0);
  db.rename(source, target, ctx.now);
  if (only_if_new) return ctx.reply.integer(1);
  ctx.reply.ok();
}

void rename(CommandContext& ctx) { rename_key(ctx, false); }
void renamenx(CommandContext& ctx) { rename_key(ctx, true); }

// Redis's getIntFromObjectOrReply: a long long first, then the int range. With `message`, both
// failures reply it; without, each has its own text.
std::optional<int> parse_int_or_reply(CommandContext& ctx, std::string_view text,
                                      std::string_view message = {}) {
  const auto value = parse_int64(text);
  if (!value) {
    ctx.reply.error(message.empty() ? errors::kNotInteger : message);
    return std::nullopt;
  }
  if (*value < std::numeric_limits<int>::min() || *value > std::numeric_limits<int>::max()) {
    ctx.reply.error(message.empty() ? errors::kNotInt32 : message);
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

bool db_index_valid(const CommandContext& ctx, int index) {
  return index >= 0 && static_cast<std::size_t>(index) < ctx.server.keyspace.count();
}

// COPY source destination [DB destination-db] [REPLACE]
void copy(CommandContext& ctx) {
  const std::size_t source_db = ctx.client.db;
  std::size_t target_db = source_db;
  bool replace = false;
  for (std::size_t i = 3; i < ctx.argc(); ++i) {
    if (option_is(ctx.args[i], "REPLACE")) {
      replace = true;
    } else if (option_is(ctx.args[i], "DB") && i + 1 < ctx.argc()) {
      const auto index = parse_int_or_reply(ctx, ctx.args[++i]);
      if (!index) return;
      if (!db_index_valid(ctx, *index)) return ctx.reply.error(errors::kDbIndexOutOfRange);
      target_db = static_cast<std::size_t>(*index);
    } else {
      return ctx.reply.error(errors::kSyntax);
    }
  }
  if (ctx.server.cluster && target_db != source_db)
    return ctx.reply.error("ERR Copying to another database is not allowed in cluster mode");
  const std::string_view source = ctx.args[1];
  const std::string_view target = ctx.args[2];
  if (source_db == target_db && source == target) return ctx.reply.error(errors::kSameObject);
  Db& from = ctx.server.keyspace.db(source_db);
  Db& to = ctx.server.keyspace.db(target_db);
  const Blob* value = from.find(source, ctx.now);
  if (value == nullptr) return ctx.reply.integer(0);
  if (!replace && to.exists(target, ctx.now)) return ctx.reply.integer(0);
  const TimePoint deadline = from.deadline(source, ctx.now).value_or(kNoExpiry);
  to.put_copy(target, *value, deadline, ctx.now);
  ctx.reply.integer(1);
}

// MOVE key db: the key goes to another database with its TTL, unless it is there already. As
// Redis 7.0: refused in cluster mode, then the index checked, then the key looked up as a write
// (no keyspace hit or miss); the record is copied, then erased here: one change.
void move(CommandContext& ctx) {
  if (ctx.server.cluster) return ctx.reply.error("ERR MOVE is not allowed in cluster mode");
  const auto index = parse_int_or_reply(ctx, ctx.args[2]);
  if (!index) return;
  if (!db_index_valid(ctx, *index)) return ctx.reply.error(errors::kDbIndexOutOfRange);
  const auto target_db = static_cast<std::size_t>(*index);
  if (target_db == ctx.client.db) return ctx.reply.error(errors::kSameObject);
  const std::string_view key = ctx.args[1];
  Db& from = ctx.db();
  Db& to = ctx.server.keyspace.db(target_db);
  const Blob* value = from.find_mutable(key, ctx.now);
  if (value == nullptr || to.exists(key, ctx.now)) return ctx.reply.integer(0);
  const TimePoint deadline = from.deadline(key, ctx.now).value_or(kNoExpiry);
  to.put_copy(key, *value, deadline, ctx.now);
  from.erase_uncounted(key, ctx.now);  // one change for the move, as Redis counts it
  ctx.reply.integer(1);
}

void swapdb(CommandContext& ctx) {
  if (ctx.server.cluster) return ctx.reply.error("ERR SWAPDB is not allowed in cluster mode");
  const auto first = parse_int_or_reply(ctx, ctx.args[1], errors::kInvalidFirstDb);
  if (!first) return;
  const auto second = parse_int_or_reply(ctx, ctx.args[2], errors::kInvalidSecondDb);
  if (!second) return;
  if (!db_index_valid(ctx, *first) || !db_index_valid(ctx, *second))
    return ctx.reply.error(errors::kDbIndexOutOfRange);
  // Keyspace::swap tells WATCHers of both databases (Redis's touchAllWatchedKeysInDb).
  ctx.server.keyspace.swap(static_cast<std::size_t>(*first), static_cast<std::size_t>(*second),
                           ctx.now);
  ctx.reply.ok();
}

// ---- The table -----------------------------------------------------------------------------

// The key specs that first..last cannot say: the source is read (and, for RENAME, deleted),
// the destination written.
constexpr KeySpec kRenameKeys[] = {{.flags = "RW access delete", .index = 1},
                                   {.flags = "OW update", .index = 2}};
constexpr KeySpec kRenamenxKeys[] = {{.flags = "RW access delete", .index = 1},
                                     {.flags = "OW insert", .index = 2}};
constexpr KeySpec kCopyKeys[] = {{.flags = "RO access", .index = 1},
                                 {.flags = "OW update", .index = 2}};
// Redis 7.0 calls MOVE an update of its key (7.2: delete).
constexpr KeySpec kMoveKeys[] = {{.flags = "RW access update", .index = 1}};

constexpr CommandSpec kCommands[] = {
    {.name = "del",
     .arity = -2,
     .flags = kWrite,
     .handler = del,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .summary = "Delete a key",
     .complexity = "O(N) where N is the number of keys that will be removed. When a key to "
                   "remove holds a value other than a string, the individual complexity for "
                   "this key is O(M) where M is the number of elements in the list, set, "
                   "sorted set or hash. Removing a single key that holds a string value is O(1).",
     .acl = "keyspace write slow",
     .key_flags = "RM delete",
     .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {.name = "unlink",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = del,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .summary = "Delete a key asynchronously in another thread. Otherwise it is just as DEL, but "
                "non blocking.",
     .since = "4.0.0",
     .complexity = "O(1) for each key removed regardless of its size. Then the command does O(N) "
                   "work in a different thread in order to reclaim memory, where N is the number "
                   "of allocations the deleted objects where composed of.",
     .acl = "keyspace write fast",
     .key_flags = "RM delete",
     .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {.name = "exists",
     .arity = -2,
     .flags = kReadOnly | kFast,
     .handler = exists,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .summary = "Determine if a key exists",
     .complexity = "O(N) where N is the number of keys to check.",
     .acl = "keyspace read fast",
     .key_flags = "RO",
     .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {.name = "touch",
     .arity = -2,
     .flags = kReadOnly | kFast,
     .handler = touch,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .summary = "Alters the last access time of a key(s). Returns the number of existing keys "
                "specified.",
     .since = "3.2.1",
     .complexity = "O(N) where N is the number of keys that will be touched.",
     .acl = "keyspace read fast",
     .key_flags = "RO",
     .tips = "request_policy:multi_shard response_policy:agg_sum"},
    {.name = "type",
     .arity = 2,
     .flags = kReadOnly | kFast,
     .handler = type,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Determine the type stored at key",
     .complexity = "O(1)",
     .acl = "keyspace read fast",
     .key_flags = "RO"},
    {.name = "keys",
     .arity = 2,
     .flags = kReadOnly,
     .handler = keys,
     .summary = "Find all keys matching the given pattern",
     .complexity = "O(N) with N being the number of keys in the database, under the assumption "
                   "that the key names in the database and the given pattern have limited "
                   "length.",
     .acl = "keyspace read slow dangerous",
     .tips = "request_policy:all_shards nondeterministic_output_order"},
    {.name = "scan",
     .arity = -2,
     .flags = kReadOnly,
     .handler = scan,
     .summary = "Incrementally iterate the keys space",
     .since = "2.8.0",
     .complexity = "O(1) for every call. O(N) for a complete iteration, including enough "
                   "command calls for the cursor to return back to 0. N is the number of "
                   "elements inside the collection.",
     .acl = "keyspace read slow",
     .tips = "nondeterministic_output request_policy:special"},
    {.name = "randomkey",
     .arity = 1,
     .flags = kReadOnly,
     .handler = randomkey,
     .summary = "Return a random key from the keyspace",
     .complexity = "O(1)",
     .acl = "keyspace read slow",
     .tips = "request_policy:all_shards nondeterministic_output"},
    {.name = "rename",
     .arity = 3,
     .flags = kWrite,
     .handler = rename,
     .first_key = 1,
     .last_key = 2,
     .key_step = 1,
     .summary = "Rename a key",
     .complexity = "O(1)",
     .acl = "keyspace write slow",
     .key_specs = kRenameKeys},
    {.name = "renamenx",
     .arity = 3,
     .flags = kWrite | kFast,
     .handler = renamenx,
     .first_key = 1,
     .last_key = 2,
     .key_step = 1,
     .summary = "Rename a key, only if the new key does not exist",
     .complexity = "O(1)",
     .acl = "keyspace write fast",
     .key_specs = kRenamenxKeys},
    {.name = "copy",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = copy,
     .first_key = 1,
     .last_key = 2,
     .key_step = 1,
     .summary = "Copy a key",
     .since = "6.2.0",
     .complexity = "O(N) worst case for collections, where N is the number of nested items. "
                   "O(1) for string values.",
     .acl = "keyspace write slow",
     .key_specs = kCopyKeys},
    {.name = "move",
     .arity = 3,
     .flags = kWrite | kFast,
     .handler = move,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Move a key to another database",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "keyspace write fast",
     .key_specs = kMoveKeys},
    {.name = "swapdb",
     .arity = 3,
     .flags = kWrite | kFast,
     .handler = swapdb,
     .group = "server",
     .summary = "Swaps two Redis databases",
     .since = "4.0.0",
     .complexity = "O(N) where N is the count of clients watching or blocking on keys from both "
                   "databases.",
     .acl = "keyspace write fast dangerous"},
};

}  // namespace

std::span<const CommandSpec> keyspace_commands() {
  // One table for the dispatcher: this file's commands, then OBJECT and MEMORY. Built once, on
  // the registry's first use; the specs are copied, the subcommand tables they point to are not.
  static const std::vector<CommandSpec> all = [] {
    std::vector<CommandSpec> joined(std::begin(kCommands), std::end(kCommands));
    for (const CommandSpec& spec : introspection_commands()) joined.push_back(spec);
    return joined;
  }();
  return all;
}

}  // namespace chronocached
