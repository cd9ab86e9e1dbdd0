// Connection commands: PING ECHO QUIT RESET SELECT AUTH HELLO CLIENT.
#include <string>

#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"
#include "server/version.h"

namespace chronocached {
namespace {

void ping(CommandContext& ctx) {
  if (ctx.argc() > 2) return ctx.reply.error(errors::wrong_arity("ping"));
  if (ctx.argc() == 2) return ctx.reply.bulk(ctx.args[1]);
  ctx.reply.simple("PONG");
}

void echo(CommandContext& ctx) { ctx.reply.bulk(ctx.args[1]); }

void quit(CommandContext& ctx) {
  ctx.reply.ok();
  ctx.client.close_after_reply = true;
}

void select(CommandContext& ctx) {
  const auto index = parse_int64(ctx.args[1]);
  if (!index || *index < INT32_MIN || *index > INT32_MAX) return ctx.reply.error(errors::kNotInteger);
  if (*index < 0 || static_cast<std::size_t>(*index) >= ctx.server.keyspace.count())
    return ctx.reply.error(errors::kDbIndexOutOfRange);
  ctx.client.db = static_cast<std::size_t>(*index);
  ctx.reply.ok();
}

// Checks a username/password pair against requirepass (the only user is "default").
bool credentials_ok(const ServerState& server, std::string_view user, std::string_view password) {
  if (user != "default") return false;
  return server.config.requirepass.empty() || password == server.config.requirepass;
}

void auth(CommandContext& ctx) {
  if (ctx.argc() > 3) return ctx.reply.error(errors::kSyntax);
  if (ctx.argc() == 2 && ctx.server.config.requirepass.empty())
    return ctx.reply.error(errors::kAuthNoPassword);
  const std::string_view user = ctx.argc() == 3 ? ctx.args[1] : std::string_view("default");
  const std::string_view password = ctx.args[ctx.argc() - 1];
  if (!credentials_ok(ctx.server, user, password)) return ctx.reply.error(errors::kWrongPass);
  ctx.client.authenticated = true;
  ctx.reply.ok();
}

void hello(CommandContext& ctx) {
  int protocol = ctx.client.protocol;
  std::size_t i = 1;
  if (ctx.argc() >= 2) {
    const auto version = parse_int64(ctx.args[1]);
    if (!version) return ctx.reply.error("ERR Protocol version is not an integer or out of range");
    if (*version < 2 || *version > 3) return ctx.reply.error("NOPROTO unsupported protocol version");
    protocol = static_cast<int>(*version);
    i = 2;
  }
  std::string_view setname;
  bool has_setname = false;
  bool authenticated_now = false;
  for (; i < ctx.argc(); ++i) {
    const bool more = i + 1 < ctx.argc();
    if (iequals(ctx.args[i], "AUTH") && i + 2 < ctx.argc()) {
      if (!credentials_ok(ctx.server, ctx.args[i + 1], ctx.args[i + 2]))
        return ctx.reply.error(errors::kWrongPass);
      authenticated_now = true;
      i += 2;
    } else if (iequals(ctx.args[i], "SETNAME") && more) {
      setname = ctx.args[i + 1];
      has_setname = true;
      for (char c : setname)
        if (c < '!' || c > '~')
          return ctx.reply.error("ERR Client names cannot contain spaces, newlines or special characters.");
      ++i;
    } else {
      return ctx.reply.error("ERR Syntax error in HELLO option '" + std::string(ctx.args[i]) + "'");
    }
  }
  if (!ctx.client.authenticated && !authenticated_now && !ctx.server.config.requirepass.empty()) {
    return ctx.reply.error(
        "NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO "
        "<proto> AUTH <user> <pass> option can be used to authenticate the client and select the "
        "RESP protocol version at the same time");
  }
  if (authenticated_now) ctx.client.authenticated = true;
  if (has_setname) ctx.client.name = std::string(setname);
  ctx.client.protocol = protocol;
  ctx.reply.set_protocol(protocol);
  ctx.reply.map(7);
  ctx.reply.bulk("server");
  ctx.reply.bulk("redis");
  ctx.reply.bulk("version");
  ctx.reply.bulk(kRedisVersion);
  ctx.reply.bulk("proto");
  ctx.reply.integer(protocol);
  ctx.reply.bulk("id");
  ctx.reply.integer(static_cast<long long>(ctx.client.id));
  ctx.reply.bulk("mode");
  ctx.reply.bulk("standalone");
  ctx.reply.bulk("role");
  ctx.reply.bulk("master");
  ctx.reply.bulk("modules");
  ctx.reply.array(0);
}

void reset(CommandContext& ctx) {
  ClientState& c = ctx.client;
  c.in_multi = false;
  c.multi_error = false;
  c.queued.clear();
  if (c.watching) ctx.server.keyspace.watches().unwatch_all(c.id);
  c.watching = false;
  c.db = 0;
  c.protocol = 2;
  ctx.reply.set_protocol(2);
  c.reply_mode = ReplyMode::kOn;
  c.name.clear();
  c.no_evict = false;
  if (c.monitor) {
    c.monitor = false;
    std::erase(ctx.server.monitors, &c);
  }
  c.authenticated = ctx.server.config.requirepass.empty();
  ctx.reply.simple("RESET");
}

constexpr CommandSpec kCommands[] = {
    {.name = "ping", .arity = -1, .flags = kFast | kStale, .handler = ping, .group = "connection",
     .summary = "Returns the server's liveliness response.", .acl = "fast connection"},
    {.name = "echo", .arity = 2, .flags = kFast | kLoading | kStale, .handler = echo,
     .group = "connection", .summary = "Returns the given string.", .acl = "fast connection"},
    {.name = "quit", .arity = -1, .flags = kNoAuth | kNoMulti | kFast | kLoading | kStale,
     .handler = quit, .group = "connection", .summary = "Closes the connection.",
     .acl = "fast connection"},
    {.name = "reset", .arity = 1, .flags = kNoAuth | kNoMulti | kFast | kLoading | kStale,
     .handler = reset, .group = "connection", .summary = "Resets the connection.",
     .since = "6.2.0", .acl = "fast connection"},
    {.name = "select", .arity = 2, .flags = kFast | kLoading | kStale, .handler = select,
     .group = "connection", .summary = "Changes the selected database.", .acl = "fast connection"},
    {.name = "auth", .arity = -2, .flags = kNoAuth | kNoMulti | kFast | kLoading | kStale | kSkipMonitor,
     .handler = auth, .group = "connection", .summary = "Authenticates the connection.",
     .acl = "fast connection"},
    {.name = "hello", .arity = -1, .flags = kNoAuth | kNoMulti | kFast | kLoading | kStale | kSkipMonitor,
     .handler = hello, .group = "connection",
     .summary = "Handshakes with the Redis server.", .since = "6.0.0", .acl = "fast connection"},
};

}  // namespace

std::span<const CommandSpec> connection_commands() { return kCommands; }

}  // namespace chronocached
