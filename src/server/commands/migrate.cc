// MIGRATE host port key|"" destination-db timeout [COPY] [REPLACE] [AUTH password]
//         [AUTH2 username password] [KEYS key [key ...]]
//
// Moves keys to another server as Redis 7.0 does: each live key is sent as RESTORE (RESTORE-ASKING
// in cluster mode, so a node importing the slot takes it) with its remaining TTL and its DUMP
// payload (persistence/dump_payload.h), all in one write, and a key the target accepted is
// deleted here unless COPY. The call blocks the server until the target answers or `timeout`
// ms pass, as Redis's does; connections are kept for the next call to the same target (a
// reshard sends one MIGRATE per batch of keys), closed after 10 s unused or on any error.
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "persistence/dump_payload.h"
#include "server/cluster/peer_connection.h"
#include "server/commands/arguments.h"
#include "server/commands/command.h"
#include "server/commands/command_keys.h"
#include "server/commands/errors.h"

namespace chronocached {
namespace {

constexpr std::size_t kMaxCachedTargets = 64;  // Redis's MIGRATE_SOCKET_CACHE_ITEMS

struct MigrateRequest {
  std::string_view host;
  std::string_view port;
  std::int64_t db = 0;
  std::chrono::milliseconds timeout{1000};
  bool copy = false;
  bool replace = false;
  std::optional<std::string_view> username;
  std::optional<std::string_view> password;
  std::vector<std::string_view> keys;
};

// The options after the fifth argument, then the timeout and the database, in Redis's order.
std::optional<MigrateRequest> parse(CommandContext& ctx) {
  MigrateRequest request;
  request.host = ctx.args[1];
  request.port = ctx.args[2];
  std::size_t first_key = 3;
  std::size_t key_count = 1;
  for (std::size_t i = 6; i < ctx.argc(); ++i) {
    const std::size_t more = ctx.argc() - 1 - i;
    const std::string_view option = ctx.args[i];
    if (option_is(option, "COPY")) {
      request.copy = true;
    } else if (option_is(option, "REPLACE")) {
      request.replace = true;
    } else if (option_is(option, "AUTH") && more >= 1) {
      ctx.redact(++i);
      request.password = ctx.args[i];
    } else if (option_is(option, "AUTH2") && more >= 2) {
      ctx.redact(++i);
      request.username = ctx.args[i];
      ctx.redact(++i);
      request.password = ctx.args[i];
    } else if (option_is(option, "KEYS")) {
      if (!ctx.args[3].empty()) {
        ctx.reply.error(
            "ERR When using MIGRATE KEYS option, the key argument must be set to the empty "
            "string");
        return std::nullopt;
      }
      first_key = i + 1;
      key_count = ctx.argc() - first_key;
      break;
    } else {
      ctx.reply.error(errors::kSyntax);
      return std::nullopt;
    }
  }
  const std::optional<std::int64_t> timeout = parse_int64(ctx.args[5]);
  const std::optional<std::int64_t> db = parse_int64(ctx.args[4]);
  if (!timeout || !db) {
    ctx.reply.error(errors::kNotInteger);
    return std::nullopt;
  }
  request.timeout = std::chrono::milliseconds(*timeout <= 0 ? 1000 : *timeout);
  request.db = *db;
  for (std::size_t i = first_key; i < first_key + key_count; ++i)
    request.keys.push_back(ctx.args[i]);
  return request;
}

// The cached connection to the target, or a new one; nullptr when it cannot be reached.
ServerState::MigrateTarget* connect_target(CommandContext& ctx, const MigrateRequest& request,
                                           const std::string& name) {
  auto& targets = ctx.server.migrate_targets;
  if (auto it = targets.find(name); it != targets.end()) {
    if (!it->second.idle_too_long(ctx.unix_ms)) return &it->second;
    targets.erase(it);  // idle too long: the target may have closed it
  }
  // The port as Redis's atoi reads it (leading blanks, a sign, the digits up to anything else;
  // "7000abc" is 7000, "abc" is 0), then its low 16 bits; a negative one names no service, and
  // fails the connect.
  const int port = static_cast<int>(std::strtol(std::string(request.port).c_str(), nullptr, 10));
  std::string error;
  if (port < 0) {
    errno = EHOSTUNREACH;
    return nullptr;
  }
  std::optional<PeerConnection> connection =
      PeerConnection::open(std::string(request.host), port, request.timeout, error);
  if (!connection) return nullptr;
  if (targets.size() >= kMaxCachedTargets) targets.erase(targets.begin());
  return &targets
              .insert_or_assign(name,
                                ServerState::MigrateTarget{std::move(*connection), ctx.unix_ms, -1})
              .first->second;
}

// A live key as the target's RESTORE will receive it: built once, sent on each try.
struct Outgoing {
  std::string_view key;
  std::string ttl_ms;   // what is left of its TTL (at least 1 ms), 0 without one
  std::string payload;  // its DUMP payload
};

void migrate(CommandContext& ctx) {
  const std::optional<MigrateRequest> request = parse(ctx);
  if (!request) return;
  Db& db = ctx.db();
  std::vector<Outgoing> outgoing;
  for (const std::string_view key : request->keys) {
    const Blob* value = db.find(key, ctx.now);
    if (value == nullptr) continue;
    const TimePoint deadline = db.deadline(key, ctx.now).value_or(kNoExpiry);
    long long ttl_ms = 0;
    if (deadline != kNoExpiry)
      ttl_ms = std::max<long long>(
          1, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - ctx.now).count());
    outgoing.push_back(Outgoing{key, std::to_string(ttl_ms),
                                chronocache::persistence::encode_dump_payload(value->view())});
  }
  if (outgoing.empty()) return ctx.reply.simple("NOKEY");  // expired meanwhile, most often

  const std::string name = std::string(request->host) + ":" + std::string(request->port);
  const std::string_view restore = ctx.server.cluster ? "RESTORE-ASKING" : "RESTORE";
  // A cached connection the target closed fails at once: one more try on a fresh one.
  for (bool may_retry = true;; may_retry = false) {
    ServerState::MigrateTarget* target = connect_target(ctx, *request, name);
    // Redis's blocking connect reports a timeout, and a host or port it cannot look up; a refused
    // connection fails at the write.
    if (target == nullptr && (errno == ETIMEDOUT || errno == EHOSTUNREACH))
      return ctx.reply.error("IOERR error or timeout connecting to the client");
    if (target == nullptr)
      return ctx.reply.error("IOERR error or timeout writing to target instance");
    std::string out;
    if (request->password) {
      std::vector<std::string_view> auth = {"AUTH"};
      if (request->username) auth.push_back(*request->username);
      auth.push_back(*request->password);
      append_request(out, auth);
    }
    const bool select = target->selected_db != request->db;
    const std::string db_text = std::to_string(request->db);
    if (select) {
      const std::string_view words[] = {"SELECT", db_text};
      append_request(out, words);
    }
    for (const Outgoing& key : outgoing) {
      const std::string_view words[] = {restore, key.key, key.ttl_ms, key.payload, "REPLACE"};
      append_request(out, std::span(words, request->replace ? 5 : 4));
    }

    // A socket error closes the cached connection (erased from migrate_targets first).
    std::string error;
    const auto fail = [&](bool writing) {
      ctx.reply.error(std::string("IOERR error or timeout ") + (writing ? "writing" : "reading") +
                      " to target instance");
    };
    if (!target->connection.send(out, request->timeout, error)) {
      const bool timed_out = errno == ETIMEDOUT;
      ctx.server.migrate_targets.erase(name);
      if (may_retry && !timed_out) continue;
      return fail(true);
    }
    // The first error the target gave is the reply; a key whose RESTORE succeeded is deleted
    // here all the same (unless AUTH or SELECT failed, which fails every RESTORE after them).
    std::optional<std::string> target_error;
    const auto note = [&](const PeerReply& reply) {
      if (reply.kind == PeerReply::Kind::kError && !target_error) target_error = reply.text;
    };
    std::size_t read = 0;
    bool socket_error = false;
    const int preamble = (request->password ? 1 : 0) + (select ? 1 : 0);
    for (int i = 0; i < preamble && !socket_error; ++i) {
      const std::optional<PeerReply> reply = target->connection.read_reply(request->timeout, error);
      socket_error = !reply;
      if (reply) note(*reply);
    }
    const bool preamble_failed = target_error.has_value();
    for (; read < outgoing.size() && !socket_error; ++read) {
      const std::optional<PeerReply> reply = target->connection.read_reply(request->timeout, error);
      if (!reply) {
        socket_error = true;
        break;
      }
      note(*reply);
      if (reply->kind != PeerReply::Kind::kError && !preamble_failed && !request->copy)
        db.erase(outgoing[read].key, ctx.now);
    }
    if (socket_error) {
      const bool timed_out = errno == ETIMEDOUT;
      ctx.server.migrate_targets.erase(name);
      if (read == 0 && !target_error && may_retry && !timed_out) continue;  // nothing was taken
      if (!target_error) return fail(false);
    }
    if (target_error) {
      if (auto it = ctx.server.migrate_targets.find(name); it != ctx.server.migrate_targets.end())
        it->second.selected_db = -1;
      return ctx.reply.error("ERR Target instance replied with error: " + *target_error);
    }
    target->selected_db = request->db;
    target->last_used_ms = ctx.unix_ms;
    return ctx.reply.ok();
  }
}

// The key argument, then the keys after KEYS: an incomplete spec (AUTH's password could read
// as KEYS), so the keys themselves are found by migrate_key_range.
constexpr KeySpec kMigrateKeys[] = {
    {.flags = "RW access delete", .index = 3},
    {.flags = "RW access delete incomplete", .keyword = "KEYS", .startfrom = -2, .lastkey = -1}};

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user pw] [KEYS key ...]:
// as Redis 7 finds them, the key argument unless the second spec finds a KEYS word; then the
// keys after the first KEYS option (AUTH's and AUTH2's values are not options), or none when
// the key argument is not "" (MIGRATE refuses that form itself).
KeyRange migrate_key_range(std::span<const std::string_view> args) {
  const std::string_view flags = kMigrateKeys[0].flags;
  bool keys_word = false;
  for_each_spec_key(kMigrateKeys[1], args, [&](std::string_view) { keys_word = true; });
  if (!keys_word) return {3, args.size() > 3 ? 1u : 0u, flags};
  for (std::size_t i = 6; i < args.size(); ++i) {
    if (option_is(args[i], "keys")) {
      if (!args[3].empty()) return {3, 0, flags};
      return {i + 1, args.size() - i - 1, flags};
    }
    if (option_is(args[i], "auth")) {
      i += 1;
    } else if (option_is(args[i], "auth2")) {
      i += 2;
    }
  }
  return {3, 1, flags};
}

constexpr CommandSpec kCommands[] = {
    {.name = "migrate",
     .arity = -6,
     .flags = kWrite | kMovableKeys,
     .handler = migrate,
     .first_key = 3,
     .last_key = 3,
     .key_step = 1,
     .summary = "Atomically transfer a key from a Redis instance to another one.",
     .since = "2.6.0",
     .complexity = "This command actually executes a DUMP+DEL in the source instance, and a "
                   "RESTORE in the target instance. See the pages of these commands for time "
                   "complexity. Also an O(N) data transfer between the two instances is "
                   "performed.",
     .acl = "keyspace write slow dangerous",
     .arguments = "host:string port:integer key-selector(key:key|EMPTY_STRING) "
                  "destination-db:integer timeout:integer ?COPY ?REPLACE "
                  "?authentication(AUTH=password:string|"
                  "auth2{AUTH2,username:string,password:string}) ?KEYS=key:key...",
     .key_specs = kMigrateKeys,
     .key_range = migrate_key_range,
     .tips = "nondeterministic_output"},
};

}  // namespace

std::span<const CommandSpec> migrate_commands() { return kCommands; }

}  // namespace chronocached
