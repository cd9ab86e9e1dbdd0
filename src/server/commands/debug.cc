// DEBUG: test hooks, refused unless enable-debug-command is yes (as in Redis).
//   DEBUG ADVANCE-CLOCK <ms>   moves the server's clocks forward: expiry tests without sleeping
//   DEBUG SLEEP <seconds>      blocks the event loop (Redis's; for latency tests)
//   DEBUG SET-ACTIVE-EXPIRE 0|1
//   DEBUG SNAPSHOT-SLICE <slots>  slots a BGSAVE hands over per tick (0 pauses it, -1: default),
//                              so tests can write while a BGSAVE provably runs
//   DEBUG RELOAD               Redis's: save, empty the keyspace, load the file back
//   DEBUG PROTOCOL <type>      Redis's: one reply of a RESP type, for clients' tests
//   DEBUG HELP
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"

namespace chronocached {
namespace {

// What this server's DEBUG has (Redis's has many more, for its own internals).
void debug_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "ADVANCE-CLOCK <milliseconds>",
      "    Move the server's clocks forward: keys expire as if the time had passed.",
      "RELOAD",
      "    Save the RDB on disk, empty the keyspace and load the file back.",
      "PROTOCOL <type>",
      "    Reply with a sample of a RESP type: string, integer, double, bignum, null, array,",
      "    set, map, attrib, push, verbatim, true or false.",
      "SET-ACTIVE-EXPIRE <0|1>",
      "    Setting it to 0 disables expiring keys in background when they are not accessed.",
      "SLEEP <seconds>",
      "    Stop the server for <seconds>. Decimals allowed.",
      "SNAPSHOT-SLICE <slots>",
      "    Slots a BGSAVE captures per tick (0 pauses it, -1 the default).",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

// DEBUG PROTOCOL <type>: a sample reply of each RESP type, the bytes Redis sends, so that a
// client's tests of its reply reader pass against us too.
void debug_protocol(CommandContext& ctx, std::string_view type) {
  resp::ReplyWriter& reply = ctx.reply;
  const auto zero_one_two = [&] {
    for (int i = 0; i < 3; ++i) reply.integer(i);
  };
  if (option_is(type, "string")) return reply.bulk("Hello World");
  if (option_is(type, "integer")) return reply.integer(12345);
  if (option_is(type, "double")) return reply.double_value(3.141);
  if (option_is(type, "bignum")) return reply.big_number("1234567999999999999999999999999999999");
  if (option_is(type, "null")) return reply.null();
  if (option_is(type, "true") || option_is(type, "false"))
    return reply.boolean(option_is(type, "true"));
  if (option_is(type, "verbatim")) return reply.verbatim("This is a verbatim\nstring");
  if (option_is(type, "array")) {
    reply.array(3);
    return zero_one_two();
  }
  if (option_is(type, "set")) {
    reply.set(3);
    return zero_one_two();
  }
  if (option_is(type, "map")) {
    reply.map(3);
    for (int i = 0; i < 3; ++i) {
      reply.integer(i);
      reply.boolean(i == 1);
    }
    return;
  }
  if (option_is(type, "attrib")) {
    if (reply.resp3()) {  // an attribute annotates the reply after it, which RESP2 gets alone
      reply.attribute(1);
      reply.bulk("key-popularity");
      reply.array(2);
      reply.bulk("key:123");
      reply.integer(90);
    }
    return reply.bulk("Some real reply following the attribute");
  }
  if (option_is(type, "push")) {
    if (!reply.resp3()) return reply.error(errors::kResp2Unsupported);
    reply.push(2);
    reply.bulk("server-cpu-usage");
    reply.integer(42);
    return reply.bulk("Some real reply following the push reply");
  }
  reply.error(errors::kDebugProtocolType);
}

// Refused before it runs unless enable-debug-command is yes (kProtected, command_table.cc).
void debug(CommandContext& ctx) {
  const std::string_view sub = ctx.args[1];
  if (option_is(sub, "HELP") && ctx.argc() == 2) return debug_help(ctx);
  if (option_is(sub, "ADVANCE-CLOCK") && ctx.argc() == 3) {
    const auto ms = parse_int64(ctx.args[2]);
    if (!ms || *ms < 0) return ctx.reply.error(errors::kNotInteger);
    ctx.server.debug.clock_offset_ms += *ms;
    // The batch's clock readings move too, so the commands after this one in a pipeline see it.
    ctx.now += std::chrono::milliseconds(*ms);
    ctx.unix_ms += *ms;
    ctx.server.debug.clock_moved = true;
    return ctx.reply.ok();
  }
  if (option_is(sub, "SLEEP") && ctx.argc() == 3) {
    // Redis reads the seconds with strtod and checks nothing: what is no positive number sleeps
    // no time, nor does a count of microseconds past int64 (NaN, inf), which its conversion turns
    // negative.
    const std::string text(ctx.args[2]);
    const double micros = std::strtod(text.c_str(), nullptr) * 1e6;
    if (micros > 0 && micros < 9.2e18)
      std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(micros));
    return ctx.reply.ok();
  }
  if (option_is(sub, "PROTOCOL") && ctx.argc() == 3) return debug_protocol(ctx, ctx.args[2]);
  if (option_is(sub, "SET-ACTIVE-EXPIRE") && ctx.argc() == 3) {
    ctx.server.debug.active_expire = ctx.args[2] != "0";
    return ctx.reply.ok();
  }
  if (option_is(sub, "SNAPSHOT-SLICE") && ctx.argc() == 3) {
    const auto slots = parse_int64(ctx.args[2]);
    if (!slots || *slots < -1) return ctx.reply.error(errors::kNotInteger);
    ctx.server.snapshots.set_slice_slots(*slots < 0 ? Snapshots::kUnlimited
                                                    : static_cast<std::size_t>(*slots));
    return ctx.reply.ok();
  }
  if (option_is(sub, "RELOAD") && ctx.argc() == 2) {
    ServerState& server = ctx.server;
    if (server.snapshots.bgsave_in_progress()) return ctx.reply.error(errors::kBgsaveRunning);
    std::string load_error;
    switch (server.snapshots.reload(ctx.now, ctx.unix_ms, load_error)) {
      case Snapshots::Reload::kOk:
        return ctx.reply.ok();
      case Snapshots::Reload::kSaveFailed:
        return ctx.reply.error(errors::kDebugSaveFailed);
      case Snapshots::Reload::kLoadFailed:
        server.logger.log("warning", "DEBUG RELOAD: " + load_error);
        return ctx.reply.error(errors::kDebugLoadFailed);
    }
  }
  ctx.reply.error(errors::subcommand_syntax(sub, "DEBUG"));
}

constexpr CommandSpec kCommands[] = {
    {.name = "debug",
     .arity = -2,
     .flags = kAdmin | kNoScript | kLoading | kStale | kProtected,
     .handler = debug,
     .group = "server",
     .summary = "A container for debugging commands.",
     .acl = "admin slow dangerous"},
};

}  // namespace

std::span<const CommandSpec> debug_commands() { return kCommands; }

}  // namespace chronocached
