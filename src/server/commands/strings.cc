// String commands: GET SET SETNX SETEX PSETEX GETSET GETDEL GETEX MGET MSET MSETNX APPEND STRLEN
// GETRANGE SUBSTR SETRANGE INCR DECR INCRBY DECRBY INCRBYFLOAT LCS.
//
// Each handler follows Redis 7.0's t_string.c step for step, because the order of its checks is
// visible to clients: which error wins when two apply, whether a missing key answers before a
// bad argument is noticed (GETEX, GETRANGE), and which writes happen before a reply.
//
// TTL semantics, as Redis: a write that replaces the value (SET without KEEPTTL, GETSET, MSET)
// drops the deadline; an edit of the value (APPEND, SETRANGE, INCR...) keeps it. Edits happen in
// place (Db::find_mutable, then Db::edit, which reports the record's new size for maxmemory), so
// they keep the deadline without reading it, and the hot ones (GET, SET, INCR) build no
// std::string.
//
// Every value is read through lookup_string(): the one place that will answer WRONGTYPE once a
// key can hold another type (besides reply_old_value, for the old value SET ... GET, GETSET and
// GETDEL read inside their one-probe write).
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"
#include "server/commands/lcs.h"
#include "server/commands/upstream_read.h"
#include "server/store/unix_time.h"

namespace chronocached {
namespace {

using chronocache::Duration;

// A Blob holds at most Blob::kMaxBytes. Redis's only bound is proto-max-bulk-len, which may be
// configured higher; past this we refuse with Redis's error.
constexpr std::uint64_t kMaxStringBytes = Blob::kMaxBytes;

// LCS fills an (N+1) x (M+1) table of 32-bit lengths (lcs.h). Redis refuses a table larger than
// proto-max-bulk-len, and one that malloc does not grant; we refuse past 512 MiB of table too
// (2^27 cells, two strings of about 11,500 bytes; the default proto-max-bulk-len) with Redis's
// allocation error, whatever proto-max-bulk-len says, so one command can neither exhaust memory
// nor stall the event loop for much more than a second (the time Redis itself takes to fill
// such a table).
constexpr std::uint64_t kMaxLcsCells = std::uint64_t{1} << 27;

// ---- Lookup ---------------------------------------------------------------------------------

// The live string at `key` in `value` (nullptr when missing). False, after replying `wrong_type`,
// when the key holds another type: not possible yet, as every value is a string. A `const Blob*`
// (GET, STRLEN, GETRANGE, LCS) is looked up through Db::find, which a running BGSAVE's capture
// need not wait for; a `Blob*` (APPEND, SETRANGE, ...) through find_mutable.
template <class BlobPtr>
bool lookup_string(CommandContext& ctx, std::string_view key, BlobPtr& value,
                   std::string_view wrong_type = errors::kWrongType) {
  static_cast<void>(wrong_type);
  if constexpr (std::is_const_v<std::remove_pointer_t<BlobPtr>>)
    value = ctx.db().find(key, ctx.now);
  else
    value = ctx.db().find_mutable(key, ctx.now);
  return true;
}

// Redis's checkStringLength: false, after replying, when a string of `offset + extra` bytes would
// pass proto-max-bulk-len. Both are below 2^63, so the sum cannot wrap.
bool fits_string_limit(CommandContext& ctx, std::uint64_t offset, std::uint64_t extra) {
  const std::uint64_t total = offset + extra;
  if (total > static_cast<std::uint64_t>(ctx.server.config.proto_max_bulk_len) ||
      total > kMaxStringBytes) {
    ctx.reply.error(errors::kStringTooLong);
    return false;
  }
  return true;
}

// ---- SET's and GETEX's options -------------------------------------------------------------

enum ExtendedFlag : std::uint32_t {
  kNx = 1u << 0,
  kXx = 1u << 1,
  kGet = 1u << 2,
  kKeepTtl = 1u << 3,
  kPersist = 1u << 4,
  kEx = 1u << 5,
  kPx = 1u << 6,
  kExAt = 1u << 7,
  kPxAt = 1u << 8,
};
constexpr std::uint32_t kAnyExpire = kEx | kPx | kExAt | kPxAt;

enum class OptionsOf { kSet, kGetEx };

struct ExtendedOptions {
  std::uint32_t flags = 0;
  std::string_view expire_amount;  // the argument after the last EX/PX/EXAT/PXAT
};

// Redis's parseExtendedStringArgumentsOrReply, condition for condition. NX/XX and the expire
// options exclude each other, but one option may repeat ("EX 1 EX 2" sets 2 s); the amount is
// read only after every option parsed, so a syntax error wins over a bad number.
bool parse_extended_options(CommandContext& ctx, OptionsOf command, ExtendedOptions& out) {
  const bool is_set = command == OptionsOf::kSet;
  std::uint32_t& flags = out.flags;
  for (std::size_t i = is_set ? 3 : 2; i < ctx.argc(); ++i) {
    const std::string_view opt = c_string(ctx.args[i]);
    const bool has_next = i + 1 < ctx.argc();
    // The expire options each exclude KEEPTTL, PERSIST and the other three.
    const auto expire_allowed = [&](std::uint32_t self) {
      return (flags & (kKeepTtl | kPersist | (kAnyExpire & ~self))) == 0 && has_next;
    };
    std::uint32_t expire_flag = 0;
    if (is_set && iequals(opt, "NX") && (flags & kXx) == 0) {
      flags |= kNx;
    } else if (is_set && iequals(opt, "XX") && (flags & kNx) == 0) {
      flags |= kXx;
    } else if (is_set && iequals(opt, "GET")) {
      flags |= kGet;
    } else if (is_set && iequals(opt, "KEEPTTL") && (flags & (kPersist | kAnyExpire)) == 0) {
      flags |= kKeepTtl;
    } else if (!is_set && iequals(opt, "PERSIST") && (flags & (kKeepTtl | kAnyExpire)) == 0) {
      flags |= kPersist;
    } else if (iequals(opt, "EX") && expire_allowed(kEx)) {
      expire_flag = kEx;
    } else if (iequals(opt, "PX") && expire_allowed(kPx)) {
      expire_flag = kPx;
    } else if (iequals(opt, "EXAT") && expire_allowed(kExAt)) {
      expire_flag = kExAt;
    } else if (iequals(opt, "PXAT") && expire_allowed(kPxAt)) {
      expire_flag = kPxAt;
    } else {
      ctx.reply.error(errors::kSyntax);
      return false;
    }
    if (expire_flag != 0) {
      flags |= expire_flag;
      out.expire_amount = ctx.args[++i];
    }
  }
  return true;
}

// Redis's getExpireMillisecondsOrReply, then the engine deadline. nullopt after replying.
// `command` names the command in "invalid expire time in '<command>' command".
std::optional<TimePoint> expire_deadline(CommandContext& ctx, std::uint32_t flags,
                                         std::string_view amount, std::string_view command) {
  const auto parsed = parse_int64(amount);
  if (!parsed) {
    ctx.reply.error(errors::kNotInteger);
    return std::nullopt;
  }
  const bool seconds = (flags & (kEx | kExAt)) != 0;
  const bool relative = (flags & (kEx | kPx)) != 0;
  std::int64_t ms = *parsed;
  // Zero or negative, or an overflow once in milliseconds or once made absolute.
  if (ms <= 0 || (seconds && ms > INT64_MAX / 1000)) {
    ctx.reply.error(errors::invalid_expire(command));
    return std::nullopt;
  }
  if (seconds) ms *= 1000;
  if (relative) {
    if (ms > INT64_MAX - ctx.unix_ms) {
      ctx.reply.error(errors::invalid_expire(command));
      return std::nullopt;
    }
    return deadline_after(ctx.now, ms);
  }
  // A past time is a deadline at or before `now`, which the engine treats as already expired.
  return deadline_at_unix_ms(ms, ctx.now, ctx.unix_ms);
}

// ---- SET and its older forms ------------------------------------------------------------------

enum class SetReply { kOkOrNull, kOneOrZero };  // SET, SETEX, PSETEX / SETNX

// The GET reply: the old value, or null. (SET ... GET reads the key inside Db::set, not through
// lookup_string: a WRONGTYPE check for other types belongs here.)
void reply_old_value(CommandContext& ctx, const Blob* old) {
  if (old != nullptr) {
    ctx.reply.bulk(old->view());
  } else {
    ctx.reply.null();
  }
}

// Redis's setGenericCommand, in one Db::set (one hash, one probe): the GET reply comes first (and
// stands even when NX/XX then declines); a declined write answers null (0 for SETNX); else the
// value replaces the old one, its deadline the new one, the old one (KEEPTTL) or none.
void set_generic(CommandContext& ctx, std::string_view key, std::string_view value,
                 const ExtendedOptions& options, std::string_view command, SetReply reply) {
  const std::uint32_t flags = options.flags;
  SetOptions how;
  if ((flags & kAnyExpire) != 0) {
    const auto parsed = expire_deadline(ctx, flags, options.expire_amount, command);
    if (!parsed) return;
    how.deadline = *parsed;
  }
  if ((flags & kNx) != 0) how.condition = SetOptions::Condition::kIfAbsent;
  if ((flags & kXx) != 0) how.condition = SetOptions::Condition::kIfPresent;
  how.keep_ttl = (flags & kKeepTtl) != 0;
  how.get = (flags & kGet) != 0;
  const SetOutcome outcome =
      ctx.db().set(key, value, how, ctx.now, [&](const Blob* old) { reply_old_value(ctx, old); });
  if (outcome == SetOutcome::kDeclined) {
    if ((flags & kGet) != 0) return;
    return reply == SetReply::kOneOrZero ? ctx.reply.integer(0) : ctx.reply.null();
  }
  if ((flags & kGet) != 0) return;
  if (reply == SetReply::kOneOrZero) return ctx.reply.integer(1);
  ctx.reply.ok();
}

// With --upstream, a miss reads through (upstream_read.h): one branch on a hit.
void get(CommandContext& ctx) {
  const Blob* value = nullptr;
  if (!lookup_string(ctx, ctx.args[1], value)) return;
  if (value == nullptr) [[unlikely]] {
    if (!ctx.server.config.upstream.empty()) return read_through_miss(ctx, ctx.args[1]);
    return ctx.reply.null();
  }
  if (ctx.client.upstream.state != UpstreamWait::State::kNone) [[unlikely]] {
    ctx.client.upstream = UpstreamWait{};  // the retry after a fetch found the key stored
  } else if (ctx.server.upstream_model) [[unlikely]] {
    note_upstream_read(ctx, ctx.args[1], true);
  }
  ctx.reply.bulk(value->view());
}

// SET key value [NX | XX] [GET] [EX s | PX ms | EXAT unix-s | PXAT unix-ms | KEEPTTL]
void set(CommandContext& ctx) {
  if (ctx.argc() == 3) {  // the common case: no options, so no lookup before the write
    ctx.db().put(ctx.args[1], ctx.args[2], kNoExpiry, ctx.now);
    return ctx.reply.ok();
  }
  ExtendedOptions options;
  if (!parse_extended_options(ctx, OptionsOf::kSet, options)) return;
  set_generic(ctx, ctx.args[1], ctx.args[2], options, "set", SetReply::kOkOrNull);
}

void setnx(CommandContext& ctx) {
  set_generic(ctx, ctx.args[1], ctx.args[2], ExtendedOptions{.flags = kNx, .expire_amount = {}},
              "setnx", SetReply::kOneOrZero);
}

void setex(CommandContext& ctx) {
  set_generic(ctx, ctx.args[1], ctx.args[3],
              ExtendedOptions{.flags = kEx, .expire_amount = ctx.args[2]}, "setex",
              SetReply::kOkOrNull);
}

void psetex(CommandContext& ctx) {
  set_generic(ctx, ctx.args[1], ctx.args[3],
              ExtendedOptions{.flags = kPx, .expire_amount = ctx.args[2]}, "psetex",
              SetReply::kOkOrNull);
}

// GETSET key value: SET key value GET, with Redis's own reply path.
void getset(CommandContext& ctx) {
  ctx.db().set(ctx.args[1], ctx.args[2], SetOptions{.get = true}, ctx.now,
               [&](const Blob* old) { reply_old_value(ctx, old); });
}

// GETDEL key: the value, then the key removed, in one probe (Db::erase_after).
void getdel(CommandContext& ctx) {
  const bool erased = ctx.db().erase_after(
      ctx.args[1], ctx.now, [&](const Blob& value) { ctx.reply.bulk(value.view()); });
  if (!erased) return ctx.reply.null();
}

// GETEX key [EX s | PX ms | EXAT unix-s | PXAT unix-ms | PERSIST]. As Redis: options are checked
// first, then a missing key answers null before the amount is read.
void getex(CommandContext& ctx) {
  ExtendedOptions options;
  if (!parse_extended_options(ctx, OptionsOf::kGetEx, options)) return;
  const std::string_view key = ctx.args[1];
  const Blob* value = nullptr;  // a read (a keyspace hit or miss, as Redis's GETEX counts)
  if (!lookup_string(ctx, key, value)) return;
  if (value == nullptr) return ctx.reply.null();
  Db& db = ctx.db();
  if ((options.flags & kAnyExpire) != 0) {
    const auto deadline = expire_deadline(ctx, options.flags, options.expire_amount, "getex");
    if (!deadline) return;
    ctx.reply.bulk(value->view());
    db.set_deadline(key, *deadline, ctx.now);  // at or before now (a past EXAT): deletes
    return;
  }
  ctx.reply.bulk(value->view());
  if ((options.flags & kPersist) != 0 && db.deadline(key, ctx.now) != kNoExpiry) {
    db.set_deadline(key, kNoExpiry, ctx.now);
  }
}

// ---- Several keys -------------------------------------------------------------------------------

void mget(CommandContext& ctx) {
  Db& db = ctx.db();
  ctx.reply.array(ctx.argc() - 1);
  for (std::size_t i = 1; i < ctx.argc(); ++i) {
    // A key of another type is a null here, not WRONGTYPE (Redis's MGET).
    const Blob* value = db.find(ctx.args[i], ctx.now);
    if (value == nullptr) {
      ctx.reply.null();
    } else {
      ctx.reply.bulk(value->view());
    }
  }
}

void mset(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) return ctx.reply.error(errors::wrong_arity("mset"));
  Db& db = ctx.db();
  for (std::size_t i = 1; i < ctx.argc(); i += 2)
    db.put(ctx.args[i], ctx.args[i + 1], kNoExpiry, ctx.now);
  ctx.reply.ok();
}

void msetnx(CommandContext& ctx) {
  if (ctx.argc() % 2 == 0) return ctx.reply.error(errors::wrong_arity("msetnx"));
  Db& db = ctx.db();
  for (std::size_t i = 1; i < ctx.argc(); i += 2)
    if (db.exists(ctx.args[i], ctx.now)) return ctx.reply.integer(0);
  for (std::size_t i = 1; i < ctx.argc(); i += 2)
    db.put(ctx.args[i], ctx.args[i + 1], kNoExpiry, ctx.now);
  ctx.reply.integer(1);
}

// ---- Editing in place ---------------------------------------------------------------------------

// APPEND key value: creates the key (even with an empty value) or grows it in place.
void append(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  const std::string_view more = ctx.args[2];
  Blob* value = nullptr;
  if (!lookup_string(ctx, key, value)) return;
  std::size_t total = more.size();
  if (value == nullptr) {
    ctx.db().put(key, more, kNoExpiry, ctx.now);
  } else {
    if (!fits_string_limit(ctx, value->size(), more.size())) return;
    ctx.db().edit(key, *value, [&](Blob& record) { return record.append(more); });
    total = value->size();
  }
  ctx.reply.integer(static_cast<long long>(total));
}

void strlen_command(CommandContext& ctx) {
  const Blob* value = nullptr;
  if (!lookup_string(ctx, ctx.args[1], value)) return;
  ctx.reply.integer(value == nullptr ? 0 : static_cast<long long>(value->size()));
}

// GETRANGE key start end (and SUBSTR): Redis 7.0's clamping, including its quirks (a range wholly
// before the string still yields the first byte: "GETRANGE k -100 -50" is "H").
void getrange(CommandContext& ctx) {
  const auto start_arg = parse_int64(ctx.args[2]);
  if (!start_arg) return ctx.reply.error(errors::kNotInteger);
  const auto end_arg = parse_int64(ctx.args[3]);
  if (!end_arg) return ctx.reply.error(errors::kNotInteger);
  const Blob* value = nullptr;
  if (!lookup_string(ctx, ctx.args[1], value)) return;
  if (value == nullptr) return ctx.reply.bulk("");
  const std::string_view bytes = value->view();
  const auto length = static_cast<std::int64_t>(bytes.size());  // below 2^31: no overflow below
  std::int64_t start = *start_arg;
  std::int64_t end = *end_arg;
  if (start < 0 && end < 0 && start > end) return ctx.reply.bulk("");
  if (start < 0) start += length;
  if (end < 0) end += length;
  if (start < 0) start = 0;
  if (end < 0) end = 0;
  if (end >= length) end = length - 1;
  if (start > end || length == 0) return ctx.reply.bulk("");
  ctx.reply.bulk(
      bytes.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(end - start + 1)));
}

// SETRANGE key offset value: zero-fills up to `offset`; an empty value changes nothing (and
// creates no key) but still answers the length.
void setrange(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  const std::string_view bytes = ctx.args[3];
  const auto offset = parse_int64(ctx.args[2]);
  if (!offset) return ctx.reply.error(errors::kNotInteger);
  if (*offset < 0) return ctx.reply.error(errors::kBitOffset);
  const auto at = static_cast<std::uint64_t>(*offset);
  Blob* value = nullptr;
  if (!lookup_string(ctx, key, value)) return;
  if (bytes.empty())
    return ctx.reply.integer(value == nullptr ? 0 : static_cast<long long>(value->size()));
  if (!fits_string_limit(ctx, at, bytes.size())) return;
  // A new key is created empty, then written in place: the block is sized and marked as an
  // edited ("raw") string, as Redis's SETRANGE makes it.
  if (value == nullptr) value = &ctx.db().insert_for_edit(key, ctx.now);
  ctx.db().edit(key, *value,
                [&](Blob& record) { return record.write_at(static_cast<std::size_t>(at), bytes); });
  const std::size_t total = value->size();
  ctx.reply.integer(static_cast<long long>(total));
}

// ---- Counters -----------------------------------------------------------------------------------

// Redis's incrDecrCommand: the value must read as a canonical int64 ("012", " 1", "1.0" do not),
// and the sum must not overflow. The result is rewritten in place, keeping the deadline.
void incr_by(CommandContext& ctx, std::int64_t increment) {
  const std::string_view key = ctx.args[1];
  Blob* value = nullptr;
  if (!lookup_string(ctx, key, value)) return;
  std::int64_t current = 0;
  if (value != nullptr) {
    const auto parsed = parse_int64(value->view());
    if (!parsed) return ctx.reply.error(errors::kNotInteger);
    current = *parsed;
  }
  if ((increment < 0 && current < 0 && increment < INT64_MIN - current) ||
      (increment > 0 && current > 0 && increment > INT64_MAX - current))
    return ctx.reply.error(errors::kOverflow);
  const std::int64_t result = current + increment;
  char digits[24];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof(digits), result);
  const std::string_view text(digits, static_cast<std::size_t>(end - digits));
  if (value == nullptr) {
    ctx.db().put(key, text, kNoExpiry, ctx.now);
  } else {
    // Keeps the key, its deadline and, if it fits, the block.
    ctx.db().edit(key, *value, [&](Blob& record) { return record.assign(text); });
  }
  ctx.reply.integer(result);
}

void incr(CommandContext& ctx) { incr_by(ctx, 1); }
void decr(CommandContext& ctx) { incr_by(ctx, -1); }

void incrby(CommandContext& ctx) {
  const auto increment = parse_int64(ctx.args[2]);
  if (!increment) return ctx.reply.error(errors::kNotInteger);
  incr_by(ctx, *increment);
}

void decrby(CommandContext& ctx) {
  const auto decrement = parse_int64(ctx.args[2]);
  if (!decrement) return ctx.reply.error(errors::kNotInteger);
  if (*decrement == INT64_MIN)
    return ctx.reply.error(errors::kDecrementOverflow);  // cannot be negated
  incr_by(ctx, -*decrement);
}

// INCRBYFLOAT key increment: long double arithmetic, the result written as %.17Lf without
// trailing zeros (resp::format_long_double), the deadline kept.
void incrbyfloat(CommandContext& ctx) {
  const std::string_view key = ctx.args[1];
  Blob* value = nullptr;
  if (!lookup_string(ctx, key, value)) return;
  long double current = 0;
  if (value != nullptr) {
    const auto parsed = parse_long_double(value->view());
    if (!parsed) return ctx.reply.error(errors::kNotFloat);
    current = *parsed;
  }
  const auto increment = parse_long_double(ctx.args[2]);
  if (!increment) return ctx.reply.error(errors::kNotFloat);
  const long double result = current + *increment;
  if (std::isnan(result) || std::isinf(result)) return ctx.reply.error(errors::kIncrNanOrInfinity);
  const std::string text = resp::format_long_double(result);
  if (value == nullptr) {
    ctx.db().put(key, text, kNoExpiry, ctx.now);
  } else {
    // Keeps the key, its deadline and, if it fits, the block.
    ctx.db().edit(key, *value, [&](Blob& record) { return record.assign(text); });
  }
  ctx.reply.bulk(text);
}

// ---- LCS ----------------------------------------------------------------------------------------

// LCS key1 key2 [LEN] [IDX] [MINMATCHLEN len] [WITHMATCHLEN]. A missing key is an empty string.
void lcs(CommandContext& ctx) {
  // The sizes first, so that a table past its bounds is refused before a byte is copied.
  const Blob* first = nullptr;
  if (!lookup_string(ctx, ctx.args[1], first, errors::kLcsWrongType)) return;
  const std::size_t a_size = first == nullptr ? 0 : first->size();
  const Blob* second = nullptr;
  if (!lookup_string(ctx, ctx.args[2], second, errors::kLcsWrongType)) return;
  const std::size_t b_size = second == nullptr ? 0 : second->size();

  bool want_len = false, want_idx = false, with_match_len = false;
  std::int64_t min_match_len = 0;
  for (std::size_t i = 3; i < ctx.argc(); ++i) {
    const std::string_view opt = c_string(ctx.args[i]);
    if (iequals(opt, "IDX")) {
      want_idx = true;
    } else if (iequals(opt, "LEN")) {
      want_len = true;
    } else if (iequals(opt, "WITHMATCHLEN")) {
      with_match_len = true;
    } else if (iequals(opt, "MINMATCHLEN") && i + 1 < ctx.argc()) {
      const auto parsed = parse_int64(ctx.args[++i]);
      if (!parsed) return ctx.reply.error(errors::kNotInteger);
      min_match_len = *parsed < 0 ? 0 : *parsed;
    } else {
      return ctx.reply.error(errors::kSyntax);
    }
  }
  if (want_idx && want_len) return ctx.reply.error(errors::kLcsIdxAndLen);
  if (a_size >= UINT32_MAX - 1 || b_size >= UINT32_MAX - 1)
    return ctx.reply.error(errors::kLcsTooLong);

  // Both below 2^32, so the cell count fits; its size in bytes may not (Redis then reports the
  // allocation's failure, as here).
  const std::uint64_t cells = std::uint64_t{a_size + 1} * (b_size + 1);
  std::uint64_t table_bytes = 0;
  if (__builtin_mul_overflow(cells, sizeof(std::uint32_t), &table_bytes))
    return ctx.reply.error(errors::kLcsNoMemory);
  if (table_bytes > static_cast<std::uint64_t>(ctx.server.config.proto_max_bulk_len))
    return ctx.reply.error(errors::kLcsOverProtoMaxBulkLen);
  if (cells > kMaxLcsCells) return ctx.reply.error(errors::kLcsNoMemory);

  // Now the bytes. The second lookup may have moved entries (it removes an expired key), so the
  // first value is looked up again and copied; neither lookup can remove anything this time
  // (the same `now`, and an expired key is already gone), so the second view stays valid. These
  // looks are not reads of their own: each key counted its keyspace hit or miss above.
  first = ctx.db().peek(ctx.args[1], ctx.now);
  const std::string a(first == nullptr ? std::string_view() : first->view());
  second = ctx.db().peek(ctx.args[2], ctx.now);
  const std::string_view b = second == nullptr ? std::string_view() : second->view();
  const auto table = LcsTable::compute(a, b, kMaxLcsCells);
  if (!table) return ctx.reply.error(errors::kLcsNoMemory);
  if (want_len) return ctx.reply.integer(table->length());
  if (!want_idx) return ctx.reply.bulk(table->backtrack(nullptr, 0));

  std::vector<LcsMatch> matches;
  table->backtrack(&matches, static_cast<std::uint64_t>(min_match_len));
  ctx.reply.map(2);
  ctx.reply.bulk("matches");
  ctx.reply.array(matches.size());
  for (const LcsMatch& m : matches) {
    ctx.reply.array(with_match_len ? 3 : 2);
    ctx.reply.array(2);
    ctx.reply.integer(m.a_start);
    ctx.reply.integer(m.a_end);
    ctx.reply.array(2);
    ctx.reply.integer(m.b_start);
    ctx.reply.integer(m.b_end);
    if (with_match_len) ctx.reply.integer(m.length());
  }
  ctx.reply.bulk("len");
  ctx.reply.integer(table->length());
}

// ---- The table (COMMAND DOCS fields as Redis 7.0.15 reports them) ------------------------------

constexpr std::string_view kGetRangeComplexity =
    "O(N) where N is the length of the returned string. The complexity is ultimately determined "
    "by the returned length, but because creating a substring from an existing string is very "
    "cheap, it can be considered O(1) for small strings.";

// Key specs with Redis's notes: SET's flags vary with GET (set_key_range); GETEX writes the TTL
// it reads past.
constexpr KeySpec kSetKeys[] = {{.flags = "RW access update variable_flags",
                                 .index = 1,
                                 .notes = "RW and ACCESS due to the optional `GET` argument"}};
constexpr KeySpec kGetexKeys[] = {
    {.flags = "RW access update", .index = 1, .notes = "RW and UPDATE because it changes the TTL"}};

// SET's key: an overwrite, or a read as well with GET (Redis's setGetKeys).
KeyRange set_key_range(std::span<const std::string_view> args) {
  for (std::size_t i = 3; i < args.size(); ++i)
    if (option_is(args[i], "get")) return {1, 1, "RW access update"};
  return {1, 1, "OW update"};
}

constexpr CommandSpec kCommands[] = {
    {.name = "get",
     .arity = 2,
     .flags = kReadOnly | kFast,
     .handler = get,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Get the value of a key",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "read string fast",
     .arguments = "key:key"},
    {.name = "set",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = set,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Set the string value of a key",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "write string slow",
     .arguments = "key:key value:string ?condition(NX|XX) ?GET "
                  "?expiration(EX=seconds:integer|PX=milliseconds:integer|EXAT=unix-time-seconds:"
                  "unix-time|PXAT=unix-time-milliseconds:unix-time|KEEPTTL)",
     .key_specs = kSetKeys,
     .key_range = set_key_range},
    {.name = "setnx",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = setnx,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Set the value of a key, only if the key does not exist",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key value:string",
     .key_flags = "OW insert"},
    {.name = "setex",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = setex,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Set the value and expiration of a key",
     .since = "2.0.0",
     .complexity = "O(1)",
     .acl = "write string slow",
     .arguments = "key:key seconds:integer value:string",
     .key_flags = "OW update"},
    {.name = "psetex",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = psetex,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Set the value and expiration in milliseconds of a key",
     .since = "2.6.0",
     .complexity = "O(1)",
     .acl = "write string slow",
     .arguments = "key:key milliseconds:integer value:string",
     .key_flags = "OW update"},
    {.name = "getset",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = getset,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Set the string value of a key and return its old value",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key value:string",
     .key_flags = "RW access update"},
    {.name = "getdel",
     .arity = 2,
     .flags = kWrite | kFast,
     .handler = getdel,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Get the value of a key and delete the key",
     .since = "6.2.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key",
     .key_flags = "RW access delete"},
    {.name = "getex",
     .arity = -2,
     .flags = kWrite | kFast,
     .handler = getex,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Get the value of a key and optionally set its expiration",
     .since = "6.2.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key "
                  "?expiration(EX=seconds:integer|PX=milliseconds:integer|EXAT=unix-time-seconds:"
                  "unix-time|PXAT=unix-time-milliseconds:unix-time|PERSIST)",
     .key_specs = kGetexKeys},
    {.name = "mget",
     .arity = -2,
     .flags = kReadOnly | kFast,
     .handler = mget,
     .first_key = 1,
     .last_key = -1,
     .key_step = 1,
     .group = "string",
     .summary = "Get the values of all the given keys",
     .since = "1.0.0",
     .complexity = "O(N) where N is the number of keys to retrieve.",
     .acl = "read string fast",
     .arguments = "key:key...",
     .tips = "request_policy:multi_shard"},
    {.name = "mset",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = mset,
     .first_key = 1,
     .last_key = -1,
     .key_step = 2,
     .group = "string",
     .summary = "Set multiple keys to multiple values",
     .since = "1.0.1",
     .complexity = "O(N) where N is the number of keys to set.",
     .acl = "write string slow",
     .arguments = "key_value{key:key,value:string}...",
     .key_flags = "OW update",
     .tips = "request_policy:multi_shard response_policy:all_succeeded"},
    {.name = "msetnx",
     .arity = -3,
     .flags = kWrite | kDenyOom,
     .handler = msetnx,
     .first_key = 1,
     .last_key = -1,
     .key_step = 2,
     .group = "string",
     .summary = "Set multiple keys to multiple values, only if none of the keys exist",
     .since = "1.0.1",
     .complexity = "O(N) where N is the number of keys to set.",
     .acl = "write string slow",
     .arguments = "key_value{key:key,value:string}...",
     .key_flags = "OW insert",
     .tips = "request_policy:multi_shard response_policy:agg_min"},
    {.name = "append",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = append,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Append a value to a key",
     .since = "2.0.0",
     .complexity =
         "O(1). The amortized time complexity is O(1) assuming the appended value is small and "
         "the already present value is of any size, since the dynamic string library used by "
         "Redis will double the free space available on every reallocation.",
     .acl = "write string fast",
     .arguments = "key:key value:string",
     .key_flags = "RW insert"},
    {.name = "strlen",
     .arity = 2,
     .flags = kReadOnly | kFast,
     .handler = strlen_command,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Get the length of the value stored in a key",
     .since = "2.2.0",
     .complexity = "O(1)",
     .acl = "read string fast",
     .arguments = "key:key",
     .key_flags = "RO"},
    {.name = "getrange",
     .arity = 4,
     .flags = kReadOnly,
     .handler = getrange,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Get a substring of the string stored at a key",
     .since = "2.4.0",
     .complexity = kGetRangeComplexity,
     .acl = "read string slow",
     .arguments = "key:key start:integer end:integer"},
    // Deprecated since 2.0.0 in favour of GETRANGE; still served by Redis 7.0.
    {.name = "substr",
     .arity = 4,
     .flags = kReadOnly,
     .handler = getrange,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Get a substring of the string stored at a key",
     .since = "1.0.0",
     .complexity = kGetRangeComplexity,
     .acl = "read string slow",
     .arguments = "key:key start:integer end:integer"},
    {.name = "setrange",
     .arity = 4,
     .flags = kWrite | kDenyOom,
     .handler = setrange,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Overwrite part of a string at key starting at the specified offset",
     .since = "2.2.0",
     .complexity =
         "O(1), not counting the time taken to copy the new string in place. Usually, this "
         "string is very small so the amortized complexity is O(1). Otherwise, complexity is "
         "O(M) with M being the length of the value argument.",
     .acl = "write string slow",
     .arguments = "key:key offset:integer value:string"},
    {.name = "incr",
     .arity = 2,
     .flags = kWrite | kDenyOom | kFast,
     .handler = incr,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Increment the integer value of a key by one",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key",
     .key_flags = "RW access update"},
    {.name = "decr",
     .arity = 2,
     .flags = kWrite | kDenyOom | kFast,
     .handler = decr,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Decrement the integer value of a key by one",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key",
     .key_flags = "RW access update"},
    {.name = "incrby",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = incrby,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Increment the integer value of a key by the given amount",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key increment:integer",
     .key_flags = "RW access update"},
    {.name = "decrby",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = decrby,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Decrement the integer value of a key by the given number",
     .since = "1.0.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key decrement:integer",
     .key_flags = "RW access update"},
    {.name = "incrbyfloat",
     .arity = 3,
     .flags = kWrite | kDenyOom | kFast,
     .handler = incrbyfloat,
     .first_key = 1,
     .last_key = 1,
     .key_step = 1,
     .group = "string",
     .summary = "Increment the float value of a key by the given amount",
     .since = "2.6.0",
     .complexity = "O(1)",
     .acl = "write string fast",
     .arguments = "key:key increment:double",
     .key_flags = "RW access update"},
    {.name = "lcs",
     .arity = -3,
     .flags = kReadOnly,
     .handler = lcs,
     .first_key = 1,
     .last_key = 2,
     .key_step = 1,
     .group = "string",
     .summary = "Find longest common substring",
     .since = "7.0.0",
     .complexity = "O(N*M) where N and M are the lengths of s1 and s2, respectively",
     .acl = "read string slow",
     .arguments = "key1:key key2:key ?LEN ?IDX ?MINMATCHLEN=len:integer ?WITHMATCHLEN"},
};

}  // namespace

std::span<const CommandSpec> string_commands() { return kCommands; }

}  // namespace chronocached
