// What every command handler sees: its arguments, a reply writer, the client and the server.
//
// A command is data (CommandSpec: name, arity, flags, key positions, handler) in one table per
// family (strings.cc, keyspace.cc, ...). Dispatch (command_table.cc) checks arity, auth and
// transaction state once for every command; handlers only parse their own options, call the
// engine through Db, and write the reply.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "chronocache/clock/clock.h"
#include "server/resp/reply_writer.h"
#include "server/server_state.h"

namespace chronocached {

enum CommandFlag : std::uint32_t {
  kWrite = 1u << 0,     // may change the keyspace
  kReadOnly = 1u << 1,  // reads the keyspace
  kDenyOom = 1u << 2,   // may grow memory: refused under maxmemory noeviction when full
  kAdmin = 1u << 3,
  kNoAuth = 1u << 4,   // allowed before AUTH (AUTH, HELLO, QUIT, RESET)
  kNoMulti = 1u << 5,  // runs at once inside MULTI instead of being queued
  kFast = 1u << 6,
  kLoading = 1u << 7,
  kStale = 1u << 8,
  kPubSub = 1u << 9,
  kNoScript = 1u << 10,
  kAllowBusy = 1u << 11,
  // Redis's protected: DEBUG, refused before it runs unless enable-debug-command allows it.
  // Redis 7.0's COMMAND INFO does not list it, so ours does not either.
  kProtected = 1u << 13,
  kSkipSlowlog = 1u << 14,  // not logged by SLOWLOG (EXEC: the commands it ran are, one by one)
  kAsking = 1u << 15,       // served as if the client had sent ASKING (RESTORE-ASKING, MIGRATE's)
  kMovableKeys = 1u << 16,  // keys beyond first..last (MIGRATE's KEYS): found by the command
  kRefusedInMulti = 1u << 17,  // Redis's no_multi: refused inside MULTI (SAVE, SHUTDOWN)
  // Redis's no_async_loading: refused while a replica loads its data in the background. We never
  // load so; COMMAND INFO reports it as Redis does.
  kNoAsyncLoading = 1u << 18,
};

// Where the keys of a command whose key specs cannot say it are (Redis's getkeys_proc): the
// first key's index, how many follow it one by one, and what the command does to them.
struct KeyRange {
  std::size_t first = 0;
  std::size_t count = 0;
  std::string_view flags;
};
using KeyRangeFinder = KeyRange (*)(std::span<const std::string_view> args);

// One of a command's key specs, as Redis 7 declares them (COMMAND INFO, GETKEYSANDFLAGS): where
// its keys begin (an argument's index, or the argument after a keyword searched for from
// `startfrom`, backwards when negative) and how many follow (lastkey: relative to the first
// key, or from the end when negative).
struct KeySpec {
  std::string_view flags;  // Redis's words, in its order: "RW access delete"
  int index = 0;
  std::string_view keyword = "";  // set: begin_search by keyword, not by index
  int startfrom = 0;
  int lastkey = 0;
  int keystep = 1;
  int limit = 0;
  std::string_view notes = "";
};

struct CommandContext {
  std::span<const std::string_view> args;  // args[0] is the command name as sent
  resp::ReplyWriter& reply;
  ClientState& client;
  ServerState& server;
  chronocache::TimePoint now;  // the engine clock, read once per batch (or per command after
                               // DEBUG ADVANCE-CLOCK)
  std::int64_t unix_ms;        // wall clock at the same moment
  // Arguments the handler asked to keep secret (bit i: args[i]), which SLOWLOG shows as
  // "(redacted)": AUTH's password, CONFIG SET requirepass's value, as Redis 7 hides them.
  std::uint64_t redacted_args = 0;
  // --upstream: the handler missed and waits for an upstream fetch; execute() then postpones
  // the command, which the session retries when the fetch ends (upstream_read.h).
  bool wait_upstream = false;

  Db& db() { return server.keyspace.db(client.db); }
  std::size_t argc() const { return args.size(); }
  // The wall clock in microseconds, read now, for what Redis shows at that grain (INFO's
  // server_time_usec, MONITOR's lines); unix_ms is the batch's reading, in ms. DEBUG
  // ADVANCE-CLOCK moves both.
  std::int64_t unix_us_now() const {
    const auto since_epoch = std::chrono::system_clock::now().time_since_epoch();
    return std::chrono::duration_cast<std::chrono::microseconds>(since_epoch).count() +
           server.debug.clock_offset_ms * 1000;
  }
  void redact(std::size_t i) {
    if (i < 64) redacted_args |= std::uint64_t{1} << i;
  }
};

using CommandHandler = void (*)(CommandContext&);

struct CommandSpec {
  std::string_view name;  // lower case, as COMMAND reports it
  int arity;              // Redis's convention: N exact, -N at least N (name included)
  std::uint32_t flags;
  CommandHandler handler;
  int first_key = 0;  // key positions, as COMMAND INFO reports them
  int last_key = 0;
  int key_step = 0;
  std::string_view group = "generic";  // COMMAND DOCS group
  std::string_view summary = "";
  std::string_view since = "1.0.0";
  std::string_view complexity = "";
  std::string_view acl = "";                      // space-separated categories, without '@'
  std::span<const CommandSpec> subcommands = {};  // CONFIG GET, CLIENT LIST, ...
  std::string_view arguments = "";  // COMMAND DOCS arguments, one token per word (see docs)
  // The flags of the one key spec that first_key..last_key describe; "" reads as "RW update"
  // for a write and "RO access" otherwise (command_keys.h).
  std::string_view key_flags = "";
  // The key specs, where first_key..last_key cannot say them (COPY's two keys with two access
  // kinds, MIGRATE's KEYS, a spec with notes): they replace the one derived from the range.
  std::span<const KeySpec> key_specs = {};
  // Set when the keys or their flags depend on the arguments (MIGRATE's KEYS, SET's GET): the
  // keys are what it finds, as Redis's getkeys_proc decides over an incomplete or variable spec.
  KeyRangeFinder key_range = nullptr;
  // COMMAND INFO's tips, space-separated in Redis's order: what a cluster client reads to route
  // a keyless or multi-key command (request_policy:all_shards, response_policy:agg_sum, ...).
  std::string_view tips = "";
};

// Every family's table; command_table.cc joins them.
std::span<const CommandSpec> string_commands();
std::span<const CommandSpec> keyspace_commands();
std::span<const CommandSpec> ttl_commands();
std::span<const CommandSpec> admin_commands();
std::span<const CommandSpec> connection_commands();
std::span<const CommandSpec> transaction_commands();
std::span<const CommandSpec> debug_commands();
std::span<const CommandSpec> dump_restore_commands();
std::span<const CommandSpec> migrate_commands();

}  // namespace chronocached
