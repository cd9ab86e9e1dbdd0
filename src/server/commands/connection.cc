// Connection commands: PING ECHO QUIT RESET SELECT AUTH HELLO, and the CLIENT container (its
// subcommands are in client_command.cc).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "server/base/version.h"
#include "server/commands/arguments.h"
#include "server/commands/client_command.h"
#include "server/commands/command.h"
#include "server/commands/errors.h"

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
  if (!index) return ctx.reply.error(errors::kNotInteger);
  if (*index < INT32_MIN || *index > INT32_MAX) return ctx.reply.error(errors::kNotInt32);
  if (ctx.server.cluster && *index != 0)
    return ctx.reply.error("ERR SELECT is not allowed in cluster mode");
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
  for (std::size_t i = 1; i < ctx.argc(); ++i) ctx.redact(i);  // whatever follows, as Redis
  if (ctx.argc() == 2 && ctx.server.config.requirepass.empty())
    return ctx.reply.error(errors::kAuthNoPassword);
  const std::string_view user = ctx.argc() == 3 ? ctx.args[1] : std::string_view("default");
  const std::string_view password = ctx.args[ctx.argc() - 1];
  if (!credentials_ok(ctx.server, user, password)) return ctx.reply.error(errors::kWrongPass);
  ctx.client.authenticated = true;
  ctx.reply.ok();
}

// HELLO [protover [AUTH username password] [SETNAME clientname]], as Redis's helloCommand: each
// option takes effect as it is read (AUTH logs in, SETNAME names the client), and the first one
// that fails ends the command, the options before it kept. Then the client must be
// authenticated, and only then does the protocol switch.
void hello(CommandContext& ctx) {
  int protocol = ctx.client.protocol;
  std::size_t i = 1;
  if (ctx.argc() >= 2) {
    const auto version = parse_int64(ctx.args[1]);
    if (!version) return ctx.reply.error(errors::kBadProtocolVersion);
    if (*version < 2 || *version > 3) return ctx.reply.error(errors::kNoProto);
    protocol = static_cast<int>(*version);
    i = 2;
  }
  for (; i < ctx.argc(); ++i) {
    const std::size_t more = ctx.argc() - 1 - i;
    if (option_is(ctx.args[i], "AUTH") && more >= 2) {
      ctx.redact(i + 1);
      ctx.redact(i + 2);
      if (!credentials_ok(ctx.server, ctx.args[i + 1], ctx.args[i + 2]))
        return ctx.reply.error(errors::kWrongPass);
      ctx.client.authenticated = true;
      i += 2;
    } else if (option_is(ctx.args[i], "SETNAME") && more >= 1) {
      const std::string_view name = ctx.args[++i];
      if (!valid_client_name(name)) return ctx.reply.error(errors::kBadClientName);
      ctx.client.name = std::string(name);
    } else {
      return ctx.reply.error(errors::hello_option(ctx.args[i]));
    }
  }
  if (!ctx.client.authenticated && !ctx.server.config.requirepass.empty()) {
    return ctx.reply.error(errors::kHelloNoAuth);
  }
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
  ctx.reply.bulk(ctx.server.cluster ? "cluster" : "standalone");
  ctx.reply.bulk("role");
  ctx.reply.bulk("master");
  ctx.reply.bulk("modules");
  ctx.reply.array(0);
}

// RESET: the connection as it was when it opened (Redis's clearClientConnectionState).
void reset(CommandContext& ctx) {
  ClientState& c = ctx.client;
  c.in_multi = false;
  c.multi_error = false;
  c.queued.clear();
  if (c.watching) ctx.server.keyspace.watches().unwatch_all(c.id);
  c.watching = false;
  c.watched_live_keys.clear();
  c.db = 0;
  c.protocol = 2;
  ctx.reply.set_protocol(2);
  // As Redis: OFF and a pending SKIP end, a SKIP in force still silences this RESET's reply.
  c.reply_off = false;
  c.reply_skip_next = false;
  ctx.reply.set_silenced(c.replies_silenced());
  c.name.clear();
  c.no_evict = false;
  if (c.monitor) {
    c.monitor = false;
    std::erase(ctx.server.clients.monitors, &c);
  }
  c.authenticated = ctx.server.config.requirepass.empty();
  ctx.reply.simple("RESET");
}

// The CLIENT handler itself never runs: arity -2 means a subcommand is always resolved.
void client_container(CommandContext& ctx) {
  ctx.reply.error(errors::unknown_subcommand(ctx.args[1], "CLIENT"));
}

// Not constexpr: CLIENT's subcommand table lives in client_command.cc.
const CommandSpec kCommands[] = {
    {.name = "ping",
     .arity = -1,
     .flags = kFast,
     .handler = ping,
     .group = "connection",
     .summary = "Ping the server",
     .complexity = "O(1)",
     .acl = "fast connection",
     .arguments = "?message:string",
     .tips = "request_policy:all_shards response_policy:all_succeeded"},
    {.name = "echo",
     .arity = 2,
     .flags = kFast | kLoading | kStale,
     .handler = echo,
     .group = "connection",
     .summary = "Echo the given string",
     .complexity = "O(1)",
     .acl = "fast connection",
     .arguments = "message:string"},
    {.name = "quit",
     .arity = -1,
     .flags = kNoAuth | kNoMulti | kNoScript | kFast | kLoading | kStale | kAllowBusy,
     .handler = quit,
     .group = "connection",
     .summary = "Close the connection",
     .complexity = "O(1)",
     .acl = "fast connection"},
    {.name = "reset",
     .arity = 1,
     .flags = kNoAuth | kNoMulti | kNoScript | kFast | kLoading | kStale | kAllowBusy,
     .handler = reset,
     .group = "connection",
     .summary = "Reset the connection",
     .since = "6.2.0",
     .complexity = "O(1)",
     .acl = "fast connection"},
    {.name = "select",
     .arity = 2,
     .flags = kFast | kLoading | kStale,
     .handler = select,
     .group = "connection",
     .summary = "Change the selected database for the current connection",
     .complexity = "O(1)",
     .acl = "fast connection",
     .arguments = "index:integer"},
    // AUTH and HELLO are queued inside MULTI like any command, as Redis 7.0 does.
    {.name = "auth",
     .arity = -2,
     .flags = kNoAuth | kFast | kLoading | kStale | kNoScript | kAllowBusy,
     .handler = auth,
     .group = "connection",
     .summary = "Authenticate to the server",
     .complexity = "O(N) where N is the number of passwords defined for the user",
     .acl = "fast connection",
     .arguments = "?username:string password:string"},
    {.name = "hello",
     .arity = -1,
     .flags = kNoAuth | kFast | kLoading | kStale | kNoScript | kAllowBusy,
     .handler = hello,
     .group = "connection",
     .summary = "Handshake with Redis",
     .since = "6.0.0",
     .complexity = "O(1)",
     .acl = "fast connection",
     .arguments = "?arguments{protover:integer,?AUTH=username-password{username:string,"
                  "password:string},?SETNAME=clientname:string}"},
    {.name = "client",
     .arity = -2,
     .flags = 0,
     .handler = client_container,
     .group = "connection",
     .summary = "A container for client connection commands",
     .since = "2.4.0",
     .complexity = "Depends on subcommand.",
     .acl = "slow",
     .subcommands = client_subcommands()},
};

}  // namespace

std::span<const CommandSpec> connection_commands() { return kCommands; }

}  // namespace chronocached
