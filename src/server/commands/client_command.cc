#include "server/commands/client_command.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/arguments.h"
#include "server/commands/command_docs.h"
#include "server/commands/errors.h"

namespace chronocached {

bool valid_client_name(std::string_view name) {
  for (char c : name)
    if (c < '!' || c > '~') return false;
  return true;
}

namespace {

void client_id(CommandContext& ctx) { ctx.reply.integer(static_cast<long long>(ctx.client.id)); }

void client_setname(CommandContext& ctx) {
  if (!valid_client_name(ctx.args[2])) return ctx.reply.error(errors::kBadClientName);
  ctx.client.name = std::string(ctx.args[2]);
  ctx.reply.ok();
}

void client_getname(CommandContext& ctx) {
  if (ctx.client.name.empty()) return ctx.reply.null();
  ctx.reply.bulk(ctx.client.name);
}

// Redis's client types; every chronocached client is "normal" (no replicas, no masters, and
// MONITOR clients count as normal in Redis too).
enum class ClientType { kNormal, kReplica, kMaster, kPubSub, kUnknown };

ClientType client_type_by_name(std::string_view name) {
  if (option_is(name, "normal")) return ClientType::kNormal;
  if (option_is(name, "slave") || option_is(name, "replica")) return ClientType::kReplica;
  if (option_is(name, "master")) return ClientType::kMaster;
  if (option_is(name, "pubsub")) return ClientType::kPubSub;
  return ClientType::kUnknown;
}

// One CLIENT LIST line (with its "\n"), fields and order as Redis 7.0's catClientInfoString.
// `running` names the command the asking client is running: Redis shows it as that client's cmd.
//
// The buffer figures are our buffers', read as Redis reads its own:
//   qbuf       the query buffer's bytes: for the asking client, the whole batch its command came
//              in, commands already run and still to run included (Redis trims its buffer only
//              after the batch), so a CLIENT LIST sent alone counts itself: 26 bytes
//   qbuf-free  the query buffer's capacity past qbuf (Redis's is a jemalloc size class, ours
//              the read buffer's size: the two differ)
//   argv-mem   the bytes of the running command's arguments, the asking client's only (others
//              are between commands: 0); inside EXEC, EXEC's own 4, as in Redis
//   multi-mem  what the queued commands hold: their bytes and a std::string each (Redis counts
//              a pointer each, so the two differ)
//   rbs, rbp   the reply buffer's capacity, and its bytes in use (we keep no peak)
//   obl, omem  Redis keeps a client's first 16 KB of replies in a fixed buffer (obl) and the
//              rest in a list (oll, omem: what client-output-buffer-limit weighs). Our one
//              buffer has no such split: obl is all its unsent bytes, omem those past 16 KB,
//              so both read as Redis's for small replies and omem still shows a client
//              falling behind; oll is always 0
//   tot-mem    the buffers we own for the client: query and reply buffers' capacities and the
//              queued commands
void append_client_line(std::string& out, const CommandContext& ctx, const ClientState& c,
                        std::string_view running) {
  std::string flags;
  if (c.monitor) flags.push_back('O');
  const bool in_transaction = c.in_multi || c.in_exec;  // Redis keeps MULTI's flag until EXEC ends
  if (in_transaction) flags.push_back('x');
  if (c.blocked) flags.push_back('b');
  if (c.watching && ctx.server.keyspace.watches().dirty(c.id)) flags.push_back('d');
  if (c.close_after_reply) flags.push_back('c');
  if (c.no_evict) flags.push_back('e');
  if (flags.empty()) flags.push_back('N');
  const bool asking = &c == &ctx.client;
  std::size_t argv_mem = 0;
  if (asking && c.in_exec) {
    argv_mem = 4;  // EXEC takes no argument: its request is its name
  } else if (asking) {
    for (std::string_view a : ctx.args) argv_mem += a.size();
  }
  std::size_t multi_mem = 0;
  for (const auto& command : c.queued)
    for (const std::string& a : command) multi_mem += a.size() + sizeof(std::string);
  std::string cmd = "NULL";
  if (asking) {
    cmd = c.in_exec ? "exec" : running;  // Redis names the request, EXEC, not the queued one
  } else if (c.last_command != nullptr) {
    cmd = full_command_name(*c.last_command);
  }
  const long long multi = in_transaction ? static_cast<long long>(c.queued.size()) : -1;
  const std::size_t qbuf = c.query_buffer_bytes.load(std::memory_order_relaxed);
  const std::size_t qbuf_capacity = c.query_buffer_capacity.load(std::memory_order_relaxed);
  const std::size_t qbuf_free = qbuf_capacity > qbuf ? qbuf_capacity - qbuf : 0;
  // The reply buffer now: the asking client's batch may have answered commands before this one.
  // Another client's, as its loop last noted it (that loop may be writing it right now).
  std::size_t rbs = c.output_buffer_capacity.load(std::memory_order_relaxed);
  std::size_t obl = c.output_buffer_bytes.load(std::memory_order_relaxed);
  const std::size_t sent = c.output_sent_bytes.load(std::memory_order_relaxed);
  if (asking && c.output != nullptr) {
    rbs = c.output->capacity();
    if (c.output->size() >= sent) obl = c.output->size() - sent;
  }
  const std::size_t tot_mem = qbuf_capacity + rbs + multi_mem;
  const std::size_t omem = reply_list_bytes(obl);
  char line[512];
  std::snprintf(line, sizeof(line), " fd=%d name=", c.fd);
  out.append("id=").append(std::to_string(c.id));
  out.append(" addr=").append(c.address);
  out.append(" laddr=").append(c.local_address);
  out.append(line).append(c.name);
  std::snprintf(line, sizeof(line),
                " age=%lld idle=%lld flags=%s db=%zu sub=0 psub=0 ssub=0 multi=%lld qbuf=%zu "
                "qbuf-free=%zu argv-mem=%zu multi-mem=%zu rbs=%zu rbp=%zu obl=%zu oll=0 omem=%zu "
                "tot-mem=%zu events=r%s cmd=",
                static_cast<long long>((ctx.unix_ms - c.created_ms) / 1000),
                static_cast<long long>((ctx.unix_ms - c.last_active_ms) / 1000), flags.c_str(),
                c.db, multi, qbuf, qbuf_free, argv_mem, multi_mem, rbs, obl, obl, omem, tot_mem,
                c.output_buffer_bytes.load(std::memory_order_relaxed) > 0 ? "w" : "");
  out.append(line).append(cmd);
  std::snprintf(line, sizeof(line), " user=default redir=-1 resp=%d\n", c.protocol);
  out.append(line);
}

// A killed client is gone for CLIENT LIST and KILL, although its loop has yet to close it: Redis
// frees it inside CLIENT KILL.
std::vector<const ClientState*> clients_by_id(const ServerState& server) {
  std::vector<const ClientState*> clients;
  clients.reserve(server.clients.by_id.size());
  for (const auto& [id, client] : server.clients.by_id)
    if (!client->killed) clients.push_back(client);
  std::sort(clients.begin(), clients.end(),
            [](const ClientState* a, const ClientState* b) { return a->id < b->id; });
  return clients;
}

// CLIENT LIST [TYPE type] [ID id [id ...]]
void client_list(CommandContext& ctx) {
  std::string text;
  if (ctx.argc() == 4 && option_is(ctx.args[2], "TYPE")) {
    const ClientType type = client_type_by_name(ctx.args[3]);
    if (type == ClientType::kUnknown)
      return ctx.reply.error(errors::unknown_client_type(ctx.args[3]));
    if (type == ClientType::kNormal)
      for (const ClientState* c : clients_by_id(ctx.server))
        append_client_line(text, ctx, *c, "client|list");
  } else if (ctx.argc() > 3 && option_is(ctx.args[2], "ID")) {
    for (std::size_t i = 3; i < ctx.argc(); ++i) {
      const auto id = parse_int64(ctx.args[i]);
      if (!id) return ctx.reply.error(errors::kInvalidClientId);
      const auto it = ctx.server.clients.by_id.find(static_cast<std::uint64_t>(*id));
      if (it != ctx.server.clients.by_id.end() && !it->second->killed)
        append_client_line(text, ctx, *it->second, "client|list");
    }
  } else if (ctx.argc() != 2) {
    return ctx.reply.error(errors::kSyntax);
  } else {
    for (const ClientState* c : clients_by_id(ctx.server))
      append_client_line(text, ctx, *c, "client|list");
  }
  ctx.reply.verbatim(text);
}

void client_info(CommandContext& ctx) {
  std::string text;
  append_client_line(text, ctx, ctx.client, "client|info");
  ctx.reply.verbatim(text);
}

// CLIENT KILL ip:port (the old form: +OK or an error, and it may kill the caller), or
// CLIENT KILL <filter> <value> ... (the new form: the number killed; SKIPME yes by default).
void client_kill(CommandContext& ctx) {
  std::string_view addr, laddr;
  bool has_addr = false, has_laddr = false, has_user = false, has_type = false;
  std::string_view user;
  ClientType type = ClientType::kNormal;
  std::uint64_t id = 0;
  bool skip_me = true;
  const bool old_form = ctx.argc() == 3;
  if (old_form) {
    addr = ctx.args[2];
    has_addr = true;
    skip_me = false;
  } else {
    for (std::size_t i = 2; i < ctx.argc(); i += 2) {
      const std::string_view opt = ctx.args[i];
      if (i + 1 >= ctx.argc()) return ctx.reply.error(errors::kSyntax);
      const std::string_view value = ctx.args[i + 1];
      if (option_is(opt, "ID")) {
        const auto n = parse_int64(value);
        if (!n || *n < 1) return ctx.reply.error(errors::kClientIdNotPositive);
        id = static_cast<std::uint64_t>(*n);
      } else if (option_is(opt, "TYPE")) {
        type = client_type_by_name(value);
        if (type == ClientType::kUnknown)
          return ctx.reply.error(errors::unknown_client_type(value));
        has_type = true;
      } else if (option_is(opt, "ADDR")) {
        addr = value;
        has_addr = true;
      } else if (option_is(opt, "LADDR")) {
        laddr = value;
        has_laddr = true;
      } else if (option_is(opt, "USER")) {
        if (value != "default") {
          return ctx.reply.error(errors::no_such_user(value));
        }
        user = value;
        has_user = true;
      } else if (option_is(opt, "SKIPME")) {
        if (option_is(value, "YES")) {
          skip_me = true;
        } else if (option_is(value, "NO")) {
          skip_me = false;
        } else {
          return ctx.reply.error(errors::kSyntax);
        }
      } else {
        return ctx.reply.error(errors::kSyntax);
      }
    }
  }
  long long killed = 0;
  for (const ClientState* c : clients_by_id(ctx.server)) {
    if (has_addr && c->address != addr) continue;
    if (has_laddr && c->local_address != laddr) continue;
    if (has_type && type != ClientType::kNormal) continue;
    if (id != 0 && c->id != id) continue;
    if (has_user && user != "default") continue;
    if (c == &ctx.client) {
      if (skip_me) continue;
      ctx.client.close_after_reply = true;  // after this reply
    } else {
      ctx.server.clients.by_id.at(c->id)->killed = true;  // runs nothing more from now
      ctx.server.clients.kill_list.push_back(c->id);
    }
    ++killed;
  }
  if (!old_form) return ctx.reply.integer(killed);
  if (killed == 0) return ctx.reply.error(errors::kNoSuchClient);
  ctx.reply.ok();
}

void client_no_evict(CommandContext& ctx) {
  if (option_is(ctx.args[2], "ON")) {
    ctx.client.no_evict = true;
  } else if (option_is(ctx.args[2], "OFF")) {
    ctx.client.no_evict = false;
  } else {
    return ctx.reply.error(errors::kSyntax);
  }
  ctx.reply.ok();
}

// CLIENT REPLY ON|OFF|SKIP, as Redis: OFF silences every reply after it, SKIP the next
// request's (ClientState::end_request), and ON ends both and is answered. SKIP while OFF does
// nothing, and ON leaves a SKIP given earlier in the same EXEC pending, so the request after
// that EXEC is silenced. Replies are silenced where they are written (ReplyWriter::set_silenced),
// so in an EXEC that switches, the parts before and after the switch go their own ways.
void client_reply(CommandContext& ctx) {
  ClientState& c = ctx.client;
  if (option_is(ctx.args[2], "ON")) {
    c.reply_off = false;
    c.reply_skip = false;
    ctx.reply.set_silenced(false);
    ctx.reply.ok();
  } else if (option_is(ctx.args[2], "OFF")) {
    c.reply_off = true;
    ctx.reply.set_silenced(true);
  } else if (option_is(ctx.args[2], "SKIP")) {
    if (!c.reply_off) c.reply_skip_next = true;
  } else {
    ctx.reply.error(errors::kSyntax);
  }
}

// CLIENT PAUSE timeout [WRITE|ALL]: commands from every client (ALL), or those that may write
// (WRITE), wait until the timeout or CLIENT UNPAUSE (command_table.cc: held_by_pause). As Redis,
// a second pause never shortens the first nor relaxes ALL to WRITE while both are in force.
void client_pause(CommandContext& ctx) {
  if (ctx.argc() > 4) {
    return ctx.reply.error(errors::subcommand_syntax(ctx.args[1], "CLIENT"));
  }
  if (ctx.argc() == 4 && !option_is(ctx.args[3], "WRITE") && !option_is(ctx.args[3], "ALL"))
    return ctx.reply.error(errors::kPauseMode);
  const auto timeout = parse_int64(ctx.args[2]);
  if (!timeout) return ctx.reply.error(errors::kTimeoutNotInteger);
  if (*timeout < 0) return ctx.reply.error(errors::kTimeoutNegative);
  if (*timeout > INT64_MAX - ctx.unix_ms) return ctx.reply.error(errors::kTimeoutOutOfRange);
  ClientRegistry& clients = ctx.server.clients;
  const bool writes_only = ctx.argc() == 4 && option_is(ctx.args[3], "WRITE");
  const bool in_force = clients.paused(ctx.unix_ms);
  clients.pause_writes_only = writes_only && (!in_force || clients.pause_writes_only);
  clients.pause_until_ms = std::max(in_force ? clients.pause_until_ms : 0, ctx.unix_ms + *timeout);
  ctx.reply.ok();
}

void client_unpause(CommandContext& ctx) {
  ClientRegistry& clients = ctx.server.clients;
  if (clients.pause_until_ms != 0) {
    clients.pause_until_ms = 0;
    clients.pause_lifted = true;  // every loop runs what waited (loop.cc)
  }
  ctx.reply.ok();
}

void client_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "CACHING (YES|NO)",
      "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
      "GETREDIR",
      "    Return the client ID we are redirecting to when tracking is enabled.",
      "GETNAME",
      "    Return the name of the current connection.",
      "ID",
      "    Return the ID of the current connection.",
      "INFO",
      "    Return information about the current client connection.",
      "KILL <ip:port>",
      "    Kill connection made from <ip:port>.",
      "KILL <option> <value> [<option> <value> [...]]",
      "    Kill connections. Options are:",
      "    * ADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made from the specified address",
      "    * LADDR (<ip:port>|<unixsocket>:0)",
      "      Kill connections made to specified local address",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Kill connections by type.",
      "    * USER <username>",
      "      Kill connections authenticated by <username>.",
      "    * SKIPME (YES|NO)",
      "      Skip killing current connection (default: yes).",
      "LIST [options ...]",
      "    Return information about client connections. Options:",
      "    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)",
      "      Return clients of specified type.",
      "UNPAUSE",
      "    Stop the current client pause, resuming traffic.",
      "PAUSE <timeout> [WRITE|ALL]",
      "    Suspend all, or just write, clients for <timeout> milliseconds.",
      "REPLY (ON|OFF|SKIP)",
      "    Control the replies sent to the current connection.",
      "SETNAME <name>",
      "    Assign the name <name> to the current connection.",
      "UNBLOCK <clientid> [TIMEOUT|ERROR]",
      "    Unblock the specified blocked client.",
      "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
      "         [OPTIN] [OPTOUT] [NOLOOP]",
      "    Control server assisted client side caching.",
      "TRACKINGINFO",
      "    Report tracking status for the current connection.",
      "NO-EVICT (ON|OFF)",
      "    Protect current client connection from eviction.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

constexpr std::uint32_t kClientFlags = kNoScript | kLoading | kStale;
constexpr std::uint32_t kClientAdminFlags = kAdmin | kClientFlags;

// CLIENT SETINFO (Redis 7.2) is left out on purpose: we answer as 7.0.15, which we report as our
// version, so a client probing for it gets the same unknown-subcommand error it would get from
// that Redis (redis-py 5 sends it on connect and ignores the error).
constexpr CommandSpec kClientSubcommands[] = {
    {.name = "getname",
     .arity = 2,
     .flags = kClientFlags,
     .handler = client_getname,
     .summary = "Get the current connection name",
     .since = "2.6.9",
     .complexity = "O(1)",
     .acl = "slow connection"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = client_help,
     .summary = "Show helpful text about the different subcommands",
     .since = "5.0.0",
     .complexity = "O(1)",
     .acl = "slow connection"},
    {.name = "id",
     .arity = 2,
     .flags = kClientFlags,
     .handler = client_id,
     .summary = "Returns the client ID for the current connection",
     .since = "5.0.0",
     .complexity = "O(1)",
     .acl = "slow connection"},
    {.name = "info",
     .arity = 2,
     .flags = kClientFlags,
     .handler = client_info,
     .summary = "Returns information about the current client connection.",
     .since = "6.2.0",
     .complexity = "O(1)",
     .acl = "slow connection",
     .tips = "nondeterministic_output"},
    {.name = "kill",
     .arity = -3,
     .flags = kClientAdminFlags,
     .handler = client_kill,
     .summary = "Kill the connection of a client",
     .since = "2.4.0",
     .complexity = "O(N) where N is the number of client connections",
     .acl = "admin slow dangerous connection",
     .arguments = "filter(ip:port:string|new-format(?ID=client-id:integer|"
                  "?TYPE=normal_master_slave_pubsub(NORMAL|MASTER|SLAVE|REPLICA|PUBSUB)|"
                  "?USER=username:string|?ADDR=ip:port:string|?LADDR=ip:port:string|"
                  "?SKIPME=yes/no:string)...)"},
    {.name = "list",
     .arity = -2,
     .flags = kClientAdminFlags,
     .handler = client_list,
     .summary = "Get the list of client connections",
     .since = "2.4.0",
     .complexity = "O(N) where N is the number of client connections",
     .acl = "admin slow dangerous connection",
     .arguments = "?TYPE=normal_master_replica_pubsub(NORMAL|MASTER|REPLICA|PUBSUB) "
                  "?ID=client-id:integer...",
     .tips = "nondeterministic_output"},
    {.name = "no-evict",
     .arity = 3,
     .flags = kClientAdminFlags,
     .handler = client_no_evict,
     .summary = "Set client eviction mode for the current connection",
     .since = "7.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous connection",
     .arguments = "enabled(ON|OFF)"},
    {.name = "pause",
     .arity = -3,
     .flags = kClientAdminFlags,
     .handler = client_pause,
     .summary = "Stop processing commands from clients for some time",
     .since = "2.9.50",
     .complexity = "O(1)",
     .acl = "admin slow dangerous connection",
     .arguments = "timeout:integer ?mode(WRITE|ALL)"},
    {.name = "reply",
     .arity = 3,
     .flags = kClientFlags,
     .handler = client_reply,
     .summary = "Instruct the server whether to reply to commands",
     .since = "3.2.0",
     .complexity = "O(1)",
     .acl = "slow connection",
     .arguments = "on_off_skip(ON|OFF|SKIP)"},
    {.name = "setname",
     .arity = 3,
     .flags = kClientFlags,
     .handler = client_setname,
     .summary = "Set the current connection name",
     .since = "2.6.9",
     .complexity = "O(1)",
     .acl = "slow connection",
     .arguments = "connection-name:string"},
    {.name = "unpause",
     .arity = 2,
     .flags = kClientAdminFlags,
     .handler = client_unpause,
     .summary = "Resume processing of clients that were paused",
     .since = "6.2.0",
     .complexity = "O(N) Where N is the number of paused clients",
     .acl = "admin slow dangerous connection"},
};

}  // namespace

std::span<const CommandSpec> client_subcommands() { return kClientSubcommands; }

}  // namespace chronocached
