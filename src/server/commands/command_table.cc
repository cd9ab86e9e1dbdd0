#include "server/commands/command_table.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <string>
#include <unordered_map>
#include <vector>

#include "server/commands/errors.h"

namespace chronocached {
namespace {

struct Registry {
  std::unordered_map<std::string_view, const CommandSpec*> by_name;
  std::vector<const CommandSpec*> all;

  Registry() {
    for (auto family : {string_commands(), keyspace_commands(), ttl_commands(), admin_commands(),
                        connection_commands(), transaction_commands(), debug_commands()}) {
      for (const CommandSpec& spec : family) {
        by_name.emplace(spec.name, &spec);
        all.push_back(&spec);
      }
    }
  }
};

const Registry& registry() {
  static const Registry r;
  return r;
}

// Lower-cases a command name into `out`; false when it is too long to be any command's.
bool lower_name(std::string_view name, char (&out)[32], std::string_view& lowered) {
  if (name.size() >= sizeof(out)) return false;
  for (std::size_t i = 0; i < name.size(); ++i)
    out[i] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[i])));
  lowered = std::string_view(out, name.size());
  return true;
}

bool arity_ok(int arity, std::size_t argc) {
  return arity >= 0 ? argc == static_cast<std::size_t>(arity)
                    : argc >= static_cast<std::size_t>(-arity);
}

std::string upper(std::string_view s) {
  std::string u(s);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return u;
}

// "ERR" from "ERR syntax error": the counter INFO errorstats keys on.
std::string_view error_code(std::string_view reply) {
  const std::size_t space = reply.find(' ');
  return reply.substr(0, space);
}

void count_error(ServerState& server, std::string_view text) {
  ++server.stats.total_error_replies;
  auto code = error_code(text);
  auto it = server.stats.errors.find(code);
  if (it == server.stats.errors.end()) it = server.stats.errors.emplace(std::string(code), 0).first;
  ++it->second;
}

void reject(CommandContext& ctx, std::string_view text) {
  ctx.reply.error(text);
  count_error(ctx.server, text);
}

// MONITOR's line: +<unix seconds.micros> [<db> <addr>] "arg" "arg" ...
void feed_monitors(CommandContext& ctx) {
  if (ctx.server.monitors.empty()) return;
  std::string line;
  char head[96];
  std::snprintf(head, sizeof(head), "%lld.%06lld [%zu %s]",
                static_cast<long long>(ctx.unix_ms / 1000),
                static_cast<long long>((ctx.unix_ms % 1000) * 1000), ctx.client.db,
                ctx.client.address.c_str());
  line = head;
  for (std::string_view a : ctx.args) {
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
  for (ClientState* monitor : ctx.server.monitors) {
    if (monitor == &ctx.client || monitor->monitor_out == nullptr) continue;
    resp::ReplyWriter w(*monitor->monitor_out);
    w.simple(line);
  }
}

}  // namespace

const CommandSpec* find_command(std::string_view name) {
  char buf[32];
  std::string_view lowered;
  if (!lower_name(name, buf, lowered)) return nullptr;
  const auto& r = registry();
  const auto it = r.by_name.find(lowered);
  return it == r.by_name.end() ? nullptr : it->second;
}

std::span<const CommandSpec* const> all_commands() { return registry().all; }

const CommandSpec* resolve(std::span<const std::string_view> args, std::string& error) {
  const CommandSpec* spec = find_command(args[0]);
  if (spec == nullptr) {
    error = errors::unknown_command(args[0], args.subspan(1));
    return nullptr;
  }
  if (!arity_ok(spec->arity, args.size())) {
    error = errors::wrong_arity(spec->name);
    return nullptr;
  }
  if (spec->subcommands.empty() || args.size() < 2) return spec;
  char buf[32];
  std::string_view lowered;
  if (lower_name(args[1], buf, lowered)) {
    for (const CommandSpec& sub : spec->subcommands) {
      if (sub.name != lowered) continue;
      if (!arity_ok(sub.arity, args.size())) {
        error = errors::wrong_arity(std::string(spec->name) + "|" + std::string(sub.name));
        return nullptr;
      }
      return &sub;
    }
  }
  error = errors::unknown_subcommand(args[1], upper(spec->name));
  return nullptr;
}

void execute_now(CommandContext& ctx, const CommandSpec& spec) {
  feed_monitors(ctx);
  const std::size_t mark = ctx.reply.mark();
  const auto started = std::chrono::steady_clock::now();
  spec.handler(ctx);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  ++ctx.server.stats.commands_processed;
  ctx.client.last_command = &spec;
  // Stats key: "get", or "config|get" for a subcommand (the parent's name is args[0]).
  std::string_view key = spec.name;
  std::string composite;
  if (ctx.args.size() >= 2 && find_command(ctx.args[0]) != &spec) {
    const CommandSpec* parent = find_command(ctx.args[0]);
    composite =
        std::string(parent != nullptr ? parent->name : ctx.args[0]) + "|" + std::string(spec.name);
    key = composite;
  }
  auto it = ctx.server.stats.commands.find(key);
  if (it == ctx.server.stats.commands.end())
    it = ctx.server.stats.commands.emplace(std::string(key), CommandStats{}).first;
  ++it->second.calls;
  it->second.usec += static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(elapsed).count());
  const std::string_view written = std::string_view(ctx.reply.buffer()).substr(mark);
  if (!written.empty() && written[0] == '-') {
    ++it->second.failed_calls;
    count_error(ctx.server, written.substr(1, written.find('\r') - 1));
  }
}

void execute(CommandContext& ctx) {
  std::string error;
  const CommandSpec* spec = resolve(ctx.args, error);
  if (spec == nullptr) {
    if (ctx.client.in_multi) ctx.client.multi_error = true;
    return reject(ctx, error);
  }
  const CommandSpec* top = find_command(ctx.args[0]);
  if (!ctx.client.authenticated && !ctx.server.config.requirepass.empty() &&
      (top->flags & kNoAuth) == 0) {
    return reject(ctx, errors::kNoAuth);
  }
  if (ctx.client.in_multi && (top->flags & kNoMulti) == 0) {
    std::vector<std::string> copy(ctx.args.begin(), ctx.args.end());
    ctx.client.queued.push_back(std::move(copy));
    ctx.reply.simple("QUEUED");
    return;
  }
  execute_now(ctx, *spec);
}

}  // namespace chronocached
