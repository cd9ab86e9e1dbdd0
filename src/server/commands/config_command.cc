#include "server/commands/config_command.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "server/base/fd_limit.h"
#include "server/commands/errors.h"
#include "server/commands/glob.h"
#include "server/commands/info.h"
#include "server/config/server_config.h"

namespace chronocached {
namespace {

// CONFIG GET parameter [parameter ...]: each a name or a glob; a name answers under the
// spelling it was asked with, a glob under the setting's own name (as Redis does).
void config_get(CommandContext& ctx) {
  const auto params = config_params();
  std::vector<bool> taken(params.size(), false);
  std::vector<std::pair<std::string_view, const ConfigParam*>> matches;
  for (std::size_t i = 2; i < ctx.argc(); ++i) {
    const std::string_view pattern = ctx.args[i];
    const bool is_glob = pattern.find_first_of("[*?") != std::string_view::npos;
    for (std::size_t p = 0; p < params.size(); ++p) {
      if (taken[p]) continue;
      const bool hit = is_glob ? glob_match(pattern, params[p].name, true)
                               : &params[p] == find_config_param(pattern);
      if (!hit) continue;
      taken[p] = true;
      matches.emplace_back(is_glob ? params[p].name : pattern, &params[p]);
    }
  }
  ctx.reply.map(matches.size());
  for (const auto& [name, param] : matches) {
    ctx.reply.bulk(name);
    ctx.reply.bulk(param->get(ctx.server.config));
  }
}

// Redis 7's enable-protected-configs: "yes", or "local" for a client on this host.
bool may_set_protected(const CommandContext& ctx) {
  const std::string& allowed = ctx.server.config.enable_protected_configs;
  return allowed == "yes" || (allowed == "local" && ctx.client.on_this_host);
}

// CONFIG SET parameter value [parameter value ...]: all or nothing, checked in Redis's order
// (unknown name, immutable or protected, repeated, then each value), the first problem reported.
void config_set(CommandContext& ctx) {
  if ((ctx.argc() & 1) != 0) return ctx.reply.error(errors::kSyntax);
  // Every pair is looked at, even after the first error (the reply), so that each secret among
  // them is redacted from SLOWLOG and MONITOR, as Redis's configSetCommand does.
  std::vector<const ConfigParam*> chosen;
  std::optional<std::string> error;
  for (std::size_t i = 2; i < ctx.argc(); i += 2) {
    const std::string_view name = ctx.args[i];
    const ConfigParam* param = find_config_param(name);
    if (param == nullptr) {
      if (!error) error = errors::config_set_unknown(name);
      continue;
    }
    if (param->secret) ctx.redact(i + 1);
    if (error) continue;
    std::string problem;
    if (!param->runtime) {
      problem = "can't set immutable config";
    } else if (param->is_protected && !may_set_protected(ctx)) {
      problem = "can't set protected config";
    } else if (std::find(chosen.begin(), chosen.end(), param) != chosen.end()) {
      problem = "duplicate parameter";
    }
    if (!problem.empty()) {
      error = errors::config_set_failed(name, problem);
      continue;
    }
    chosen.push_back(param);
  }
  if (error) return ctx.reply.error(*error);
  ServerConfig updated = ctx.server.config;
  for (std::size_t i = 0; i < chosen.size(); ++i) {
    if (auto problem = chosen[i]->set(updated, ctx.args[3 + 2 * i])) {
      return ctx.reply.error(errors::config_set_failed(ctx.args[2 + 2 * i], *problem));
    }
  }
  // More clients need more descriptors: raised now if the hard limit allows, else Redis's error.
  if (updated.maxclients != ctx.server.config.maxclients) {
    const long long wanted = updated.maxclients + kReservedFds;
    if (const auto limit = raise_fd_limit(wanted); limit && limit->usable < wanted) {
      return ctx.reply.error(errors::config_set_failed(
          "maxclients",
          "The operating system is not able to handle the specified number of clients, try "
          "with " +
              std::to_string(std::max(1LL, limit->usable - kReservedFds))));
    }
  }
  ctx.server.config = std::move(updated);
  // maxmemory and its policy act at once: a smaller budget starts the background eviction, a
  // policy with another order re-registers every key with it; dir, dbfilename and save points
  // hold from the next save.
  ctx.server.apply_config();
  ctx.reply.ok();
}

void config_resetstat(CommandContext& ctx) {
  reset_stats(ctx.server);
  ctx.reply.ok();
}

// Writes the settings to the file the server was started with: to a temporary file first, then
// renamed over it, so a crash mid-write never leaves half a config.
void config_rewrite(CommandContext& ctx) {
  const std::string& path = ctx.server.config.config_file;
  if (path.empty()) return ctx.reply.error(errors::kNoConfigFile);
  const std::string text = render_config(ctx.server.config);
  std::string temporary = path;
  temporary.append(".tmp-").append(std::to_string(getpid()));
  std::FILE* file = std::fopen(temporary.c_str(), "w");
  bool written = file != nullptr && std::fwrite(text.data(), 1, text.size(), file) == text.size();
  const int write_errno = errno;
  if (file != nullptr) written = (std::fclose(file) == 0) && written;
  if (!written || std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = written ? errno : write_errno;
    std::remove(temporary.c_str());
    return ctx.reply.error(errors::config_rewrite_failed(std::strerror(error)));
  }
  ctx.reply.ok();
}

void config_help(CommandContext& ctx) {
  static constexpr std::string_view kLines[] = {
      "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
      "GET <pattern>",
      "    Return parameters matching the glob-like <pattern> and their values.",
      "SET <directive> <value>",
      "    Set the configuration <directive> to <value>.",
      "RESETSTAT",
      "    Reset statistics reported by the INFO command.",
      "REWRITE",
      "    Rewrite the configuration file.",
      "HELP",
      "    Prints this help.",
  };
  ctx.reply.simple_lines(kLines);
}

constexpr std::uint32_t kConfigFlags = kAdmin | kNoScript | kLoading | kStale;

constexpr CommandSpec kSubcommands[] = {
    {.name = "get",
     .arity = -3,
     .flags = kConfigFlags,
     .handler = config_get,
     .summary = "Get the values of configuration parameters",
     .since = "2.0.0",
     .complexity = "O(N) when N is the number of configuration parameters provided",
     .acl = "admin slow dangerous",
     .arguments = "parameter{parameter:string}..."},
    {.name = "set",
     .arity = -4,
     .flags = kConfigFlags,
     .handler = config_set,
     .summary = "Set configuration parameters to the given values",
     .since = "2.0.0",
     .complexity = "O(N) when N is the number of configuration parameters provided",
     .acl = "admin slow dangerous",
     .arguments = "parameter-value{parameter:string,value:string}...",
     .tips = "request_policy:all_nodes response_policy:all_succeeded"},
    {.name = "resetstat",
     .arity = 2,
     .flags = kConfigFlags,
     .handler = config_resetstat,
     .summary = "Reset the stats returned by INFO",
     .since = "2.0.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous"},
    {.name = "rewrite",
     .arity = 2,
     .flags = kConfigFlags,
     .handler = config_rewrite,
     .summary = "Rewrite the configuration file with the in memory configuration",
     .since = "2.8.0",
     .complexity = "O(1)",
     .acl = "admin slow dangerous"},
    {.name = "help",
     .arity = 2,
     .flags = kLoading | kStale,
     .handler = config_help,
     .summary = "Show helpful text about the different subcommands",
     .since = "5.0.0",
     .complexity = "O(1)",
     .acl = "slow"},
};

}  // namespace

std::span<const CommandSpec> config_subcommands() { return kSubcommands; }

}  // namespace chronocached
