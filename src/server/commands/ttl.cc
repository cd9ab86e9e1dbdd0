// TTL commands: EXPIRE PEXPIRE EXPIREAT PEXPIREAT (with NX XX GT LT), TTL PTTL EXPIRETIME
// PEXPIRETIME PERSIST, with Redis 7.0's replies and errors.
//
// Unix times become deadlines, and back, at the batch's clock pair (store/unix_time.h).
#include <chrono>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"
#include "server/store/unix_time.h"

namespace chronocached {
namespace {

using Milliseconds = std::chrono::milliseconds;

enum ExpireCondition : unsigned {
  kIfNoTtl = 1u << 0,    // NX
  kIfHasTtl = 1u << 1,   // XX
  kIfGreater = 1u << 2,  // GT
  kIfLess = 1u << 3,     // LT
};

// Redis's parseExtendedExpireArgumentsOrReply: options in any order and repeatable; an unknown
// one is reported before any incompatibility.
std::optional<unsigned> parse_conditions(CommandContext& ctx) {
  unsigned conditions = 0;
  for (std::size_t i = 3; i < ctx.argc(); ++i) {
    const std::string_view option = ctx.args[i];
    if (option_is(option, "NX")) {
      conditions |= kIfNoTtl;
    } else if (option_is(option, "XX")) {
      conditions |= kIfHasTtl;
    } else if (option_is(option, "GT")) {
      conditions |= kIfGreater;
    } else if (option_is(option, "LT")) {
      conditions |= kIfLess;
    } else {
      ctx.reply.error(errors::unsupported_option(option));
      return std::nullopt;
    }
  }
  if ((conditions & kIfNoTtl) && (conditions & (kIfHasTtl | kIfGreater | kIfLess))) {
    ctx.reply.error(errors::kExpireNxXxGtLt);
    return std::nullopt;
  }
  if ((conditions & kIfGreater) && (conditions & kIfLess)) {
    ctx.reply.error(errors::kExpireGtAndLt);
    return std::nullopt;
  }
  return conditions;
}

// Whether the conditions let a key whose current deadline is `current` (kNoExpiry: none) take
// `wanted`. A key without a TTL counts as an infinite one: GT never beats it, LT always does.
bool conditions_allow(unsigned conditions, TimePoint current, TimePoint wanted) {
  const bool has_ttl = current != kNoExpiry;
  if ((conditions & kIfNoTtl) && has_ttl) return false;
  if ((conditions & kIfHasTtl) && !has_ttl) return false;
  if ((conditions & kIfGreater) && (!has_ttl || wanted <= current)) return false;
  if ((conditions & kIfLess) && has_ttl && wanted >= current) return false;
  return true;
}

enum class Unit : std::uint8_t { kSeconds, kMilliseconds };

// EXPIRE / PEXPIRE (relative: base is now) and EXPIREAT / PEXPIREAT (absolute: base is 0).
void expire_generic(CommandContext& ctx, std::string_view name, bool relative, Unit unit) {
  const auto conditions = parse_conditions(ctx);
  if (!conditions) return;
  const auto amount = parse_int64(ctx.args[2]);
  if (!amount) return ctx.reply.error(errors::kNotInteger);
  // Negative times are allowed (the key is deleted); only overflow is an error.
  std::int64_t target_ms = *amount;
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
  if (unit == Unit::kSeconds) {
    if (target_ms > kMax / 1000 || target_ms < kMin / 1000)
      return ctx.reply.error(errors::invalid_expire(name));
    target_ms *= 1000;
  }
  const std::int64_t base_ms = relative ? ctx.unix_ms : 0;
  if (target_ms > kMax - base_ms) return ctx.reply.error(errors::invalid_expire(name));
  target_ms += base_ms;

  Db& db = ctx.db();
  const auto current = db.deadline(ctx.args[1], ctx.now);
  if (!current) return ctx.reply.integer(0);
  const bool already_past = target_ms <= ctx.unix_ms;
  // A past target is compared as the current time: any past deadline orders before every live
  // one, which is all GT and LT need (and the subtraction below cannot overflow).
  const TimePoint wanted =
      already_past ? ctx.now : deadline_at_unix_ms(target_ms, ctx.now, ctx.unix_ms);
  if (*conditions != 0 && !conditions_allow(*conditions, *current, wanted))
    return ctx.reply.integer(0);
  // A deadline at or before now deletes the key (Db::set_deadline), as Redis's DEL does.
  db.set_deadline(ctx.args[1], wanted, ctx.now);
  ctx.reply.integer(1);
}

void expire(CommandContext& ctx) { expire_generic(ctx, "expire", true, Unit::kSeconds); }
void pexpire(CommandContext& ctx) { expire_generic(ctx, "pexpire", true, Unit::kMilliseconds); }
void expireat(CommandContext& ctx) { expire_generic(ctx, "expireat", false, Unit::kSeconds); }
void pexpireat(CommandContext& ctx) {
  expire_generic(ctx, "pexpireat", false, Unit::kMilliseconds);
}

// TTL PTTL EXPIRETIME PEXPIRETIME: -2 for a missing key, -1 for a key without TTL.
enum class TtlView : std::uint8_t { kRemaining, kUnixTime };

void ttl_generic(CommandContext& ctx, TtlView view, Unit unit) {
  Db& db = ctx.db();
  // Redis's lookup counts a keyspace hit or miss here, and does not touch the key.
  if (db.find_untouched(ctx.args[1], ctx.now) == nullptr) return ctx.reply.integer(-2);
  const TimePoint deadline = db.deadline(ctx.args[1], ctx.now).value_or(kNoExpiry);
  if (deadline == kNoExpiry) return ctx.reply.integer(-1);
  std::int64_t ms = view == TtlView::kUnixTime ? unix_ms_of(deadline, ctx.now, ctx.unix_ms)
                                               : (deadline - ctx.now).count();
  if (ms < 0) ms = 0;
  if (unit == Unit::kMilliseconds) return ctx.reply.integer(ms);
  // Rounded to the nearest second, as Redis's (ttl+500)/1000; in unsigned arithmetic because a
  // unix time near INT64_MAX would overflow, and Redis's build answers with the unsigned result.
  ctx.reply.integer(static_cast<long long>((static_cast<std::uint64_t>(ms) + 500) / 1000));
}

void ttl(CommandContext& ctx) { ttl_generic(ctx, TtlView::kRemaining, Unit::kSeconds); }
void pttl(CommandContext& ctx) { ttl_generic(ctx, TtlView::kRemaining, Unit::kMilliseconds); }
void expiretime(CommandContext& ctx) { ttl_generic(ctx, TtlView::kUnixTime, Unit::kSeconds); }
void pexpiretime(CommandContext& ctx) { ttl_generic(ctx, TtlView::kUnixTime, Unit::kMilliseconds); }

void persist(CommandContext& ctx) {
  Db& db = ctx.db();
  const auto deadline = db.deadline(ctx.args[1], ctx.now);
  if (!deadline || *deadline == kNoExpiry) return ctx.reply.integer(0);
  db.set_deadline(ctx.args[1], kNoExpiry, ctx.now);
  ctx.reply.integer(1);
}

constexpr std::string_view kExpireAcl = "keyspace write fast";
constexpr std::string_view kTtlAcl = "keyspace read fast";

constexpr CommandSpec kCommands[] = {
    {.name = "expire",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = expire,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Set a key's time to live in seconds",
     .complexity = "O(1)",
     .acl = kExpireAcl},
    {.name = "pexpire",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = pexpire,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Set a key's time to live in milliseconds",
     .since = "2.6.0",
     .complexity = "O(1)",
     .acl = kExpireAcl},
    {.name = "expireat",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = expireat,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Set the expiration for a key as a UNIX timestamp",
     .since = "1.2.0",
     .complexity = "O(1)",
     .acl = kExpireAcl},
    {.name = "pexpireat",
     .arity = -3,
     .flags = kWrite | kFast,
     .handler = pexpireat,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Set the expiration for a key as a UNIX timestamp specified in milliseconds",
     .since = "2.6.0",
     .complexity = "O(1)",
     .acl = kExpireAcl},
    {.name = "ttl",
     .arity = 2,
     .flags = kReadOnly | kFast,
     .handler = ttl,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Get the time to live for a key in seconds",
     .complexity = "O(1)",
     .acl = kTtlAcl,
     .tips = "nondeterministic_output"},
    {.name = "pttl",
     .arity = 2,
     .flags = kReadOnly | kFast,
     .handler = pttl,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Get the time to live for a key in milliseconds",
     .since = "2.6.0",
     .complexity = "O(1)",
     .acl = kTtlAcl,
     .tips = "nondeterministic_output"},
    {.name = "expiretime",
     .arity = 2,
     .flags = kReadOnly | kFast,
     .handler = expiretime,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Get the expiration Unix timestamp for a key",
     .since = "7.0.0",
     .complexity = "O(1)",
     .acl = kTtlAcl},
    {.name = "pexpiretime",
     .arity = 2,
     .flags = kReadOnly | kFast,
     .handler = pexpiretime,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Get the expiration Unix timestamp for a key in milliseconds",
     .since = "7.0.0",
     .complexity = "O(1)",
     .acl = kTtlAcl},
    {.name = "persist",
     .arity = 2,
     .flags = kWrite | kFast,
     .handler = persist,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .summary = "Remove the expiration from a key",
     .since = "2.2.0",
     .complexity = "O(1)",
     .acl = kExpireAcl},
};

}  // namespace

std::span<const CommandSpec> ttl_commands() { return kCommands; }

}  // namespace chronocached
