// String commands: GET SET ... (issue 3's list).
#include <string>

#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"

namespace chronocached {
namespace {

void get(CommandContext& ctx) {
  const Blob* value = ctx.db().find(ctx.args[1], ctx.now);
  if (value == nullptr) return ctx.reply.null();
  ctx.reply.bulk(value->view());
}

// SET key value [NX | XX] [GET] [EX s | PX ms | EXAT unix-s | PXAT unix-ms | KEEPTTL]
void set(CommandContext& ctx) {
  bool nx = false, xx = false, get_old = false, keepttl = false;
  bool has_expire = false;
  std::int64_t amount = 0;
  char unit = 0;  // 's' 'm' (ms), 'S' (unix s), 'M' (unix ms)
  for (std::size_t i = 3; i < ctx.argc(); ++i) {
    const std::string_view opt = ctx.args[i];
    const bool more = i + 1 < ctx.argc();
    if (iequals(opt, "NX") && !xx) {
      nx = true;
    } else if (iequals(opt, "XX") && !nx) {
      xx = true;
    } else if (iequals(opt, "GET")) {
      get_old = true;
    } else if (iequals(opt, "KEEPTTL") && !has_expire) {
      keepttl = true;
    } else if ((iequals(opt, "EX") || iequals(opt, "PX") || iequals(opt, "EXAT") ||
                iequals(opt, "PXAT")) &&
               !keepttl && !has_expire && more) {
      unit = iequals(opt, "EX") ? 's' : iequals(opt, "PX") ? 'm' : iequals(opt, "EXAT") ? 'S' : 'M';
      const auto n = parse_int64(ctx.args[++i]);
      if (!n) return ctx.reply.error(errors::kNotInteger);
      amount = *n;
      has_expire = true;
    } else {
      return ctx.reply.error(errors::kSyntax);
    }
  }
  TimePoint deadline = kNoExpiry;
  if (has_expire) {
    const bool seconds = unit == 's' || unit == 'S';
    if (amount <= 0 || (seconds && amount > INT64_MAX / 1000))
      return ctx.reply.error(errors::invalid_expire("set"));
    const std::int64_t ms = seconds ? amount * 1000 : amount;
    const std::int64_t relative = (unit == 'S' || unit == 'M') ? ms - ctx.unix_ms : ms;
    if (unit == 's' || unit == 'm') {
      if (ms > INT64_MAX - ctx.unix_ms) return ctx.reply.error(errors::invalid_expire("set"));
    }
    deadline = ctx.now + std::chrono::milliseconds(relative);
  }
  Db& db = ctx.db();
  const Blob* old = db.find(ctx.args[1], ctx.now);
  const bool exists = old != nullptr;
  if (get_old) {
    if (old != nullptr) {
      ctx.reply.bulk(old->view());
    } else {
      ctx.reply.null();
    }
  }
  if ((nx && exists) || (xx && !exists)) {
    if (!get_old) ctx.reply.null();
    return;
  }
  if (keepttl && exists) deadline = db.deadline(ctx.args[1], ctx.now).value_or(kNoExpiry);
  db.put(ctx.args[1], ctx.args[2], deadline, ctx.now);
  ++ctx.server.dirty;
  if (!get_old) ctx.reply.ok();
}

constexpr CommandSpec kCommands[] = {
    {.name = "get", .arity = 2, .flags = kReadOnly | kFast, .handler = get, .first_key = 1,
     .last_key = 1, .key_step = 1, .group = "string", .summary = "Returns the string value of a key.",
     .complexity = "O(1)", .acl = "read string fast"},
    {.name = "set", .arity = -3, .flags = kWrite | kDenyOom, .handler = set, .first_key = 1,
     .last_key = 1, .key_step = 1, .group = "string",
     .summary = "Sets the string value of a key, ignoring its type. The key is created if it "
                "doesn't exist.",
     .complexity = "O(1)", .acl = "write string slow"},
};

}  // namespace

std::span<const CommandSpec> string_commands() { return kCommands; }

}  // namespace chronocached
