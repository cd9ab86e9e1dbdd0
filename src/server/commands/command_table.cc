#include "server/commands/command_table.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "chronocache/base/assert.h"
#include "server/base/cycle_clock.h"
#include "server/commands/cluster_command.h"
#include "server/commands/cluster_routing.h"
#include "server/commands/errors.h"
#include "server/persist/snapshots.h"

namespace chronocached {
namespace {

std::uint32_t name_hash(std::string_view name) {
  std::uint32_t h = 2166136261u;
  for (char c : name) h = (h ^ static_cast<unsigned char>(ascii_lower(c))) * 16777619u;
  return h;
}

// Every command and subcommand, numbered, behind an open-addressing table over case-folded
// names: a lookup hashes the name once and compares it once (an unordered_map over lower-cased
// copies cost ~260 instructions per command, measured under callgrind).
class Registry {
 public:
  Registry() {
    for (auto family : {string_commands(), keyspace_commands(), ttl_commands(), admin_commands(),
                        connection_commands(), transaction_commands(), debug_commands(),
                        cluster_commands(), dump_restore_commands(), migrate_commands()}) {
      for (const CommandSpec& spec : family) add(spec);
    }
  }

  struct Entry {
    const CommandSpec* spec = nullptr;
    std::uint32_t ordinal = 0;      // the command's
    std::uint32_t sub_ordinal = 0;  // its first subcommand's; the rest follow in table order
  };

  const Entry* find(std::string_view name) const {
    if (name.empty() || name.size() > kMaxName) return nullptr;
    for (std::uint32_t i = name_hash(name) & kMask;; i = (i + 1) & kMask) {
      const Entry& e = table_[i];
      if (e.spec == nullptr) return nullptr;
      if (iequals_lower(name, e.spec->name)) return &e;
    }
  }

  std::span<const CommandSpec* const> all() const { return all_; }
  std::size_t ordinals() const { return names_.size(); }
  const std::string& name_of(std::uint32_t ordinal) const { return names_[ordinal]; }

 private:
  static constexpr std::size_t kSlots = 512;  // a power of two, at most half full
  static constexpr std::uint32_t kMask = kSlots - 1;
  static constexpr std::size_t kMaxName = 64;

  void add(const CommandSpec& spec) {
    Entry entry{&spec, static_cast<std::uint32_t>(names_.size()), 0};
    names_.emplace_back(spec.name);
    entry.sub_ordinal = static_cast<std::uint32_t>(names_.size());
    for (const CommandSpec& sub : spec.subcommands)
      names_.push_back(std::string(spec.name) + "|" + std::string(sub.name));
    std::uint32_t i = name_hash(spec.name) & kMask;
    while (table_[i].spec != nullptr) i = (i + 1) & kMask;
    table_[i] = entry;
    all_.push_back(&spec);
    CC_CHECK(all_.size() * 2 <= kSlots, "the command table is over half full: raise kSlots");
  }

  std::array<Entry, kSlots> table_{};
  std::vector<const CommandSpec*> all_;
  std::vector<std::string> names_;  // by ordinal: "get", "config|get"
};

const Registry& registry() {
  static const Registry r;
  return r;
}

bool arity_ok(int arity, std::size_t argc) {
  return arity >= 0 ? argc == static_cast<std::size_t>(arity)
                    : argc >= static_cast<std::size_t>(-arity);
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - ('a' - 'A'));
  return u;
}

// Once after start and after each CONFIG RESETSTAT: out of line, so stats_of stays inline in
// execute_now (callgrind: 24 instructions a command when it did not).
[[gnu::noinline]] void size_command_stats(ServerStats& stats) {
  stats.commands.resize(registry().ordinals());
  stats.latency.resize(registry().ordinals());
}

CommandStats& stats_of(ServerStats& stats, std::uint32_t ordinal) {
  if (stats.commands.size() <= ordinal) [[unlikely]]
    size_command_stats(stats);
  return stats.commands[ordinal];
}

void feed_monitors(CommandContext& ctx);

// A command refused before it ran. Inside MULTI it dooms the transaction; a refused EXEC
// discards it, unwatches every key and says why, as Redis does ("ERR " dropped, other codes
// kept).
void reject(CommandContext& ctx, const ResolvedCommand* command, std::string_view text) {
  if (ctx.client.in_multi) ctx.client.multi_error = true;
  if (command != nullptr) ++stats_of(ctx.server.stats, command->ordinal).rejected_calls;
  if (command != nullptr && command->top->name == "exec") {
    leave_multi(ctx);  // Redis's discardTransaction: the watches go with the queue
    const std::string why = errors::exec_abort_because(text);
    ctx.reply.error(why);
    count_error_reply(ctx.server, why);
    // Monitors see the refused EXEC, arguments and all, as Redis's execCommandAbort shows it.
    if (!ctx.server.clients.monitors.empty()) feed_monitors(ctx);
    return;
  }
  ctx.reply.error(text);
  count_error_reply(ctx.server, text);
}

// After stats_of(ordinal), which sized the histograms too.
void record_latency(ServerStats& stats, std::uint32_t ordinal, std::uint64_t cycles) {
  std::unique_ptr<LatencyHistogram>& histogram = stats.latency[ordinal];
  if (histogram == nullptr) [[unlikely]]
    histogram = std::make_unique<LatencyHistogram>();
  __extension__ using U128 = unsigned __int128;
  histogram->record(
      static_cast<std::uint64_t>(static_cast<U128>(cycles) * stats.ns_per_cycle_q32 >> 32));
}

// A command that may have run past slowlog-log-slower-than or latency-monitor-threshold: logged
// and sampled if it did, in microseconds as the tick last calibrated the time-stamp counter.
// As Redis, EXEC (skip_slowlog) is sampled but not logged; the commands it ran are, one by one.
[[gnu::noinline]] void note_slow_command(const CommandContext& ctx, const ResolvedCommand& command,
                                         std::uint64_t cycles) {
  const auto usec =
      static_cast<std::uint64_t>(static_cast<double>(cycles) / ctx.server.stats.cycles_per_usec);
  ctx.server.latency_monitor.add_if_needed(
      (command.spec->flags & kFast) != 0 ? "fast-command" : "command", usec / 1000,
      ctx.unix_ms / 1000);
  if (!ctx.server.slow_log.wants(usec) || (command.top->flags & kSkipSlowlog) != 0) return;
  ctx.server.slow_log.push({.args = ctx.args,
                            .redacted = ctx.redacted_args,
                            .usec = usec,
                            .unix_seconds = ctx.unix_ms / 1000,
                            .peer = ctx.client.address,
                            .client_name = ctx.client.name});
}

// The batch's clock after a command that left it over a millisecond old (ServerState's
// kStaleClockUsec says why): this context's time (EXEC's next command) and, through clock_moved,
// the session's for the rest of its batch.
[[gnu::noinline]] void read_clock_again(CommandContext& ctx) {
  ServerState& server = ctx.server;
  server.set_clock_reading(BatchClock::system_now(), cycles_now());
  ctx.now = server.clock.now();
  ctx.unix_ms = server.clock.unix_ms();
  server.debug.clock_moved = true;
}

// MONITOR's line: +<unix seconds.micros> [<db> <addr>] "arg" "arg" ...
void feed_monitors(CommandContext& ctx) {
  char head[96];
  const std::int64_t unix_us = ctx.unix_us_now();
  std::snprintf(
      head, sizeof(head), "%lld.%06lld [%zu %s]", static_cast<long long>(unix_us / 1000000),
      static_cast<long long>(unix_us % 1000000), ctx.client.db, ctx.client.address.c_str());
  std::string line = head;
  for (std::size_t i = 0; i < ctx.args.size(); ++i) {
    // A secret the handler redacted (AUTH's, HELLO's) shows as Redis 7 shows it.
    const bool redacted = i < 64 && (ctx.redacted_args >> i & 1) != 0;
    const std::string_view a = redacted ? std::string_view("(redacted)") : ctx.args[i];
    line += " \"";
    for (unsigned char c : a) {
      if (c == '\\' || c == '"') {
        line += '\\';
        line += static_cast<char>(c);
      } else if (c == '\n') {
        line += "\\n";
      } else if (c == '\r') {
        line += "\\r";
      } else if (c == '\t') {
        line += "\\t";
      } else if (c == '\a') {
        line += "\\a";
      } else if (c == '\b') {
        line += "\\b";
      } else if (c < 32 || c >= 127) {
        char hex[8];
        std::snprintf(hex, sizeof(hex), "\\x%02x", c);
        line += hex;
      } else {
        line += static_cast<char>(c);
      }
    }
    line += '"';
  }
  // Appending runs no command, so nothing changes the list while we walk it: no copy needed.
  for (ClientState* monitor : ctx.server.clients.monitors) {
    // A monitor that silenced its replies (CLIENT REPLY OFF, or a SKIP in force) gets no
    // lines either: Redis writes them as replies.
    if (monitor->replies_silenced()) continue;
    // A monitor's own command: its line follows the command's reply, as in Redis, except inside
    // EXEC, whose array reply a line would break.
    if (monitor == &ctx.client) {
      if (!ctx.client.in_exec) ctx.reply.simple(line);
      continue;
    }
    resp::ReplyWriter w(monitor->monitor_feed);
    w.simple(line);
    ctx.server.clients.monitor_feed_pending = true;  // its loop sends it after this batch
  }
}

// The command carries `flag`, or it is an EXEC whose queue holds a command that does (Redis's
// is_denyoom_command and is_write_command, with mstate.cmd_flags).
bool carries_flag(const ClientState& client, const ResolvedCommand& command, std::uint32_t flag) {
  if ((command.spec->flags & flag) != 0) return true;
  if (command.top->name != "exec" || !client.in_multi) return false;
  for (const std::vector<std::string>& queued : client.queued) {
    const CommandSpec* spec = queued.empty() ? nullptr : find_command(queued[0]);
    if (spec != nullptr && (spec->flags & flag) != 0) return true;
  }
  return false;
}

// Redis's processCommand under maxmemory: evict first (store/memory_budget.h); when the budget
// is still passed and nothing could be evicted, refuse a command that may grow memory and,
// inside MULTI, any command but EXEC, DISCARD, QUIT and RESET (a queue grows memory too). A
// time slice that ran out is no refusal: the command runs and the server evicts on.
bool refused_for_memory(CommandContext& ctx, const ResolvedCommand& command) {
  MemoryBudget& memory = ctx.server.memory;
  if (memory.evict(ctx.now, ctx.client.db) != MemoryBudget::EvictResult::kFail) return false;
  const std::string_view name = command.top->name;
  const bool queue_grows = ctx.client.in_multi && name != "exec" && name != "discard" &&
                           name != "quit" && name != "reset";
  return queue_grows || carries_flag(ctx.client, command, kDenyOom);
}

// Redis's writeCommandsDeniedByDiskError: the last BGSAVE failed, save points are set and
// stop-writes-on-bgsave-error is yes. Writes are refused, and PING too (as Redis: a health check
// that pings sees the problem), until a save succeeds.
bool refused_for_disk(const CommandContext& ctx, const ResolvedCommand& command) {
  if (!ctx.server.config.stop_writes_on_bgsave_error || !ctx.server.snapshots.has_save_points())
    return false;
  return command.top->name == "ping" || carries_flag(ctx.client, command, kWrite);
}

// Redis's blockPostponeClient, while a CLIENT PAUSE runs: with PAUSE ALL every command waits;
// with PAUSE WRITE those that may change data (an EXEC with such a command queued, and queuing
// one in MULTI, too).
bool held_by_pause(const CommandContext& ctx, const ResolvedCommand& command) {
  return !ctx.server.clients.pause_writes_only || carries_flag(ctx.client, command, kWrite);
}

// Cluster mode: the command's keys, or for EXEC those of every queued command, checked together.
std::optional<std::string> redirection(const CommandContext& ctx, const ResolvedCommand& command,
                                       bool is_exec, bool asking) {
  if (!is_exec && one_key_served_here(*ctx.server.cluster, ctx.server.keyspace.db(0), *command.spec,
                                      ctx.args)) [[likely]]
    return std::nullopt;
  RedirectionQuery query;
  query.asking = asking || (command.spec->flags & kAsking) != 0;
  query.require_full_coverage = ctx.server.config.cluster_require_full_coverage;
  query.allow_reads_when_down = ctx.server.config.cluster_allow_reads_when_down;
  query.db = &ctx.server.keyspace.db(0);
  query.now = ctx.now;
  if (!is_exec) {
    const KeyedCommand keyed{command.spec, ctx.args};
    query.commands = std::span(&keyed, 1);
    return cluster_redirection(*ctx.server.cluster, query);
  }
  if (!ctx.client.in_multi) return std::nullopt;  // EXEC without MULTI: its own error
  std::vector<std::vector<std::string_view>> args;
  std::vector<KeyedCommand> queued;
  args.reserve(ctx.client.queued.size());
  for (const std::vector<std::string>& words : ctx.client.queued) {
    args.emplace_back(words.begin(), words.end());
    ResolvedCommand resolved;
    std::string ignored;
    if (resolve(args.back(), resolved, ignored)) queued.push_back({resolved.spec, args.back()});
  }
  query.commands = queued;
  return cluster_redirection(*ctx.server.cluster, query);
}

}  // namespace

void count_error_reply(ServerState& server, std::string_view text) {
  ++server.stats.total_error_replies;
  const std::string_view code = text.substr(0, text.find(' '));  // "ERR", "WRONGTYPE", ...
  auto it = server.stats.errors.find(code);
  if (it == server.stats.errors.end()) it = server.stats.errors.emplace(std::string(code), 0).first;
  ++it->second;
}

void unwatch_all(CommandContext& ctx) {
  if (ctx.client.watching) ctx.server.keyspace.watches().unwatch_all(ctx.client.id);
  ctx.client.watching = false;
  ctx.client.watched_live_keys.clear();
}

void leave_multi(CommandContext& ctx) {
  unwatch_all(ctx);
  ctx.client.in_multi = false;
  ctx.client.multi_error = false;
  ctx.client.queued.clear();
}

const CommandSpec* find_command(std::string_view name) {
  const Registry::Entry* e = registry().find(name);
  return e == nullptr ? nullptr : e->spec;
}

std::span<const CommandSpec* const> all_commands() { return registry().all(); }

bool resolve(std::span<const std::string_view> args, ResolvedCommand& out, std::string& error) {
  const Registry::Entry* e = registry().find(args[0]);
  if (e == nullptr) {
    error = errors::unknown_command(args[0], args.subspan(1));
    return false;
  }
  const CommandSpec& spec = *e->spec;
  out = ResolvedCommand{&spec, &spec, e->ordinal};
  if (!arity_ok(spec.arity, args.size())) {
    error = errors::wrong_arity(spec.name);
    return false;
  }
  if (spec.subcommands.empty() || args.size() < 2) return true;
  for (std::size_t i = 0; i < spec.subcommands.size(); ++i) {
    const CommandSpec& sub = spec.subcommands[i];
    if (!iequals_lower(args[1], sub.name)) continue;
    out.spec = &sub;
    out.ordinal = e->sub_ordinal + static_cast<std::uint32_t>(i);
    if (!arity_ok(sub.arity, args.size())) {
      error = errors::wrong_arity(std::string(spec.name) + "|" + std::string(sub.name));
      return false;
    }
    return true;
  }
  error = errors::unknown_subcommand(args[1], upper(spec.name));
  out.spec = nullptr;  // no command was found: Redis counts nothing for the container either
  return false;
}

void execute_now(CommandContext& ctx, const ResolvedCommand& command) {
  const std::size_t mark = ctx.reply.mark();
  const std::string* const written_to = &ctx.reply.buffer();  // CLIENT REPLY may switch it
  const std::uint64_t started = cycles_now();
  command.spec->handler(ctx);
  const std::uint64_t ended = cycles_now();
  const std::uint64_t cycles = ended - started;
  if (ended - ctx.server.clock_read_cycles >= ctx.server.stale_clock_cycles) [[unlikely]]
    read_clock_again(ctx);
  ++ctx.server.stats.commands_processed;
  CommandStats& stats = stats_of(ctx.server.stats, command.ordinal);
  ++stats.calls;
  stats.cycles += cycles;
  if (ctx.server.config.latency_tracking) [[likely]]
    record_latency(ctx.server.stats, command.ordinal, cycles);
  const std::string_view written =
      &ctx.reply.buffer() == written_to ? std::string_view(*written_to).substr(mark) : "";
  if (!written.empty() && written[0] == '-') [[unlikely]] {
    ++stats.failed_calls;
    count_error_reply(ctx.server, written.substr(1, written.find('\r') - 1));
  }
  // After the command ran, as Redis; never admin commands. Secrets show as "(redacted)".
  if (!ctx.server.clients.monitors.empty() && (command.spec->flags & kAdmin) == 0)
    feed_monitors(ctx);
  if (cycles >= ctx.server.slow_command_cycles) [[unlikely]]
    note_slow_command(ctx, command, cycles);
}

namespace {

bool dispatch(CommandContext& ctx) {
  ResolvedCommand command;
  std::string error;
  const bool resolved = resolve(ctx.args, command, error);
  // CLIENT LIST's cmd: what was asked, run or not (a command refused for its arity, or queued in
  // MULTI), as Redis's lastcmd; none for an unknown command or subcommand.
  ctx.client.last_command = command.spec;
  if (!resolved) [[unlikely]] {
    reject(ctx, command.spec != nullptr ? &command : nullptr, error);
    return true;
  }
  // DEBUG off (enable-debug-command no) is refused before it runs, as Redis's protected commands
  // are: a rejected call, before the authentication check.
  if ((command.top->flags & kProtected) != 0 && !ctx.server.config.enable_debug_command)
      [[unlikely]] {
    reject(ctx, &command, errors::kDebugNotAllowed);
    return true;
  }
  if (!ctx.client.authenticated && (command.top->flags & kNoAuth) == 0 &&
      !ctx.server.config.requirepass.empty()) [[unlikely]] {
    reject(ctx, &command, errors::kNoAuth);
    return true;
  }
  if (ctx.client.in_multi && (command.spec->flags & kRefusedInMulti) != 0) [[unlikely]] {
    reject(ctx, &command, errors::kNotInTransaction);  // after auth, as Redis's processCommand
    return true;
  }
  // Cluster mode: a command whose keys live elsewhere is redirected, as Redis's processCommand
  // does after the auth check. Keyless commands run whatever the map says.
  if (ctx.server.cluster) [[unlikely]] {
    const bool is_exec = command.top->name == "exec";
    const bool asking = ctx.client.cluster_asking;  // execute() spends it after the command
    if (std::optional<std::string> elsewhere = redirection(ctx, command, is_exec, asking)) {
      ++stats_of(ctx.server.stats, command.ordinal).rejected_calls;
      if (is_exec) {
        leave_multi(ctx);  // the whole transaction goes, and the reply is the redirection
      } else if (ctx.client.in_multi) {
        ctx.client.multi_error = true;
      }
      ctx.reply.error(*elsewhere);
      count_error_reply(ctx.server, *elsewhere);
      return true;
    }
    const Db& db = ctx.server.keyspace.db(0);
    if ((command.spec->flags & (kWrite | kDenyOom)) != 0 && db.slot_crowded()) [[unlikely]] {
      const KeyedCommand keyed{command.spec, ctx.args};
      if (std::optional<std::string> full = slot_full_refusal(db, keyed, ctx.now)) {
        reject(ctx, &command, *full);
        return true;
      }
    }
  }
  // --upstream: a lazily filled read-only replica, which refuses writes as Redis's replica does
  // (replica-read-only): nothing tells the upstream, or this cache, of the other's writes.
  if (!ctx.server.config.upstream.empty() && (command.spec->flags & kWrite) != 0) [[unlikely]] {
    reject(ctx, &command, errors::kReadOnlyReplica);
    return true;
  }
  // Under a budget (one load and a branch otherwise), before commands that may change the
  // keyspace or queue in MULTI. Redis evicts before reads too, but a read grows nothing the
  // budget counts except an output buffer, and summing the databases' bytes costs ~200
  // instructions a command (memory_budget.h); a read only continues an eviction under way (a
  // flag test), and the server tick's background_step() continues it between commands.
  MemoryBudget& memory = ctx.server.memory;
  if (memory.settings().maxmemory != 0) [[unlikely]] {
    if ((command.spec->flags & (kWrite | kDenyOom)) != 0 || ctx.client.in_multi ||
        command.top->name == "exec") {
      if (refused_for_memory(ctx, command)) {
        reject(ctx, &command, errors::kOom);
        return true;
      }
    } else if (memory.pending()) {
      memory.background_step(ctx.now);
    }
  }
  if (!ctx.server.snapshots.last_bgsave_ok()) [[unlikely]] {
    if (refused_for_disk(ctx, command)) {
      reject(ctx, &command, errors::kMisconf);
      return true;
    }
  }
  // A monitor counts as a replica in Redis (CLIENT_SLAVE), which processCommand keeps away from
  // the keyspace: reads, writes and EXECs of either are refused.
  if (ctx.client.monitor && (carries_flag(ctx.client, command, kReadOnly) ||
                             carries_flag(ctx.client, command, kWrite))) [[unlikely]] {
    reject(ctx, &command, errors::kReplicaKeyspace);
    return true;
  }
  // Redis 7 pauses expiry with either kind of pause: a read meanwhile leaves expired keys stored.
  const bool paused = ctx.server.clients.paused(ctx.unix_ms);
  ctx.server.keyspace.pause_expiry(paused);
  if (paused && held_by_pause(ctx, command)) [[unlikely]]
    return false;
  if (ctx.client.in_multi && (command.top->flags & kNoMulti) == 0) {
    // A doomed transaction keeps nothing more (transaction.cc says why).
    if (!transaction_doomed(ctx)) ctx.client.queued.emplace_back(ctx.args.begin(), ctx.args.end());
    ctx.reply.simple("QUEUED");
    return true;
  }
  execute_now(ctx, command);
  return !ctx.wait_upstream;  // a GET miss waits for its upstream fetch (upstream_read.h)
}

}  // namespace

bool execute(CommandContext& ctx) {
  if (!ctx.client.cluster_asking) [[likely]]
    return dispatch(ctx);
  const bool done = dispatch(ctx);
  // ASKING lasts one command, whatever became of it (refused, unknown, run), or to the end of a
  // transaction it precedes: Redis's resetClient clears it after any command but ASKING that
  // leaves the client outside MULTI. A command held by CLIENT PAUSE is not done yet.
  const CommandSpec* last = ctx.client.last_command;
  const bool was_asking = last != nullptr && last->name == "asking";
  if (done && !ctx.client.in_multi && !was_asking) ctx.client.cluster_asking = false;
  return done;
}

void for_each_command_stats(
    const ServerStats& stats,
    const std::function<void(std::uint32_t, std::string_view, const CommandStats&)>& fn) {
  const Registry& r = registry();
  std::vector<std::uint32_t> called;
  for (std::uint32_t i = 0; i < stats.commands.size(); ++i) {
    const CommandStats& s = stats.commands[i];
    if (s.calls != 0 || s.failed_calls != 0 || s.rejected_calls != 0) called.push_back(i);
  }
  std::sort(called.begin(), called.end(),
            [&](std::uint32_t a, std::uint32_t b) { return r.name_of(a) < r.name_of(b); });
  for (std::uint32_t i : called) fn(i, r.name_of(i), stats.commands[i]);
}

std::vector<std::uint32_t> ordinals_named(std::string_view name) {
  const std::size_t bar = name.find('|');
  const Registry::Entry* e = registry().find(name.substr(0, bar));
  if (e == nullptr) return {};
  const std::span<const CommandSpec> subs = e->spec->subcommands;
  if (bar != std::string_view::npos) {
    const std::string_view sub = name.substr(bar + 1);
    for (std::size_t i = 0; i < subs.size(); ++i)
      if (iequals_lower(sub, subs[i].name)) return {e->sub_ordinal + static_cast<std::uint32_t>(i)};
    return {};
  }
  std::vector<std::uint32_t> ordinals{e->ordinal};
  for (std::size_t i = 0; i < subs.size(); ++i)
    ordinals.push_back(e->sub_ordinal + static_cast<std::uint32_t>(i));
  return ordinals;
}

const std::string& command_name(std::uint32_t ordinal) { return registry().name_of(ordinal); }

std::uint64_t command_usec(const CommandStats& stats, const ServerStats& server_stats) {
  return static_cast<std::uint64_t>(static_cast<double>(stats.cycles) /
                                    server_stats.cycles_per_usec);
}

}  // namespace chronocached
