#include "server/config/server_config.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <system_error>

#include "server/base/ascii.h"
#include "server/base/int64_text.h"
#include "server/base/words.h"
#include "server/config/maxmemory_policy.h"

namespace chronocached {
namespace {

std::optional<long long> parse_integer(std::string_view text) {
  long long value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty()) return std::nullopt;
  return value;
}

// strtoll over a whole field, as Redis's config setters read numbers: leading blanks and a sign
// are allowed, an empty field reads 0, and a value out of range saturates. nullopt when bytes
// are left over.
std::optional<long long> strtoll_field(std::string_view field) {
  const std::string text(field);
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return value;
}

// A parsed memory value as the config stores it: int64, which no real limit passes.
long long capped_memory(unsigned long long bytes) {
  return static_cast<long long>(
      std::min<unsigned long long>(bytes, std::numeric_limits<long long>::max()));
}

// An integer config, read as Redis reads one (string2ll: no "-0", "007" or "+1"), refused
// outside [Min, Max] and stored clamped to [Lowest, Highest]: hz takes any value Redis takes
// and runs at the nearest rate in [1, 500], which CONFIG GET then reports, as Redis's does.
template <auto Member, long long Min, long long Max, long long Lowest = Min,
          long long Highest = Max>
ConfigParam integer_param(std::string_view name, bool runtime) {
  return ConfigParam{name, [](const ServerConfig& c) { return std::to_string(c.*Member); },
                     [](ServerConfig& c, std::string_view v) -> std::optional<std::string> {
                       const auto n = parse_int64(v);
                       if (!n) return std::string("argument couldn't be parsed into an integer");
                       if (*n < Min || *n > Max)
                         return "argument must be between " + std::to_string(Min) + " and " +
                                std::to_string(Max) + " inclusive";
                       c.*Member = static_cast<std::remove_reference_t<decltype(c.*Member)>>(
                           std::clamp<long long>(*n, Lowest, Highest));
                       return std::nullopt;
                     },
                     runtime};
}

// A memory config within Redis's bounds for it. Min keeps a value from disabling the server:
// proto-max-bulk-len 0 would refuse every request, PING included, on every connection. Max is
// Redis's too; the stored value is capped at the int64 maximum, which no budget reaches.
template <auto Member, unsigned long long Min, unsigned long long Max>
ConfigParam memory_param(std::string_view name, bool runtime) {
  return ConfigParam{name, [](const ServerConfig& c) { return std::to_string(c.*Member); },
                     [](ServerConfig& c, std::string_view v) -> std::optional<std::string> {
                       const auto n = parse_memory(v);
                       if (!n) return std::string("argument must be a memory value");
                       if (*n < Min || *n > Max)
                         return "argument must be between " + std::to_string(Min) + " and " +
                                std::to_string(Max) + " inclusive";
                       c.*Member = capped_memory(*n);
                       return std::nullopt;
                     },
                     runtime};
}

template <auto Member>
ConfigParam string_param(std::string_view name, bool runtime) {
  return ConfigParam{name, [](const ServerConfig& c) { return std::string(c.*Member); },
                     [](ServerConfig& c, std::string_view v) -> std::optional<std::string> {
                       c.*Member = std::string(v);
                       return std::nullopt;
                     },
                     runtime};
}

template <auto Member>
ConfigParam bool_param(std::string_view name, bool runtime) {
  return ConfigParam{name,
                     [](const ServerConfig& c) { return std::string(c.*Member ? "yes" : "no"); },
                     [](ServerConfig& c, std::string_view v) -> std::optional<std::string> {
                       if (iequals(v, "yes")) {
                         c.*Member = true;
                       } else if (iequals(v, "no")) {
                         c.*Member = false;
                       } else {
                         return std::string("argument must be 'yes' or 'no'");
                       }
                       return std::nullopt;
                     },
                     runtime};
}

// An enum config: `v` (any case) as the matching choice in `out`, else Redis's error, which lists
// every accepted value.
std::optional<std::string> set_one_of(std::string& out, std::string_view v,
                                      std::initializer_list<std::string_view> choices) {
  std::string error = "argument(s) must be one of the following: ";
  for (std::string_view choice : choices) {
    if (iequals(v, choice)) {
      out = std::string(choice);
      return std::nullopt;
    }
    if (choice != *choices.begin()) error.append(", ");
    error.append(choice);
  }
  return error;
}

std::optional<std::string> set_loglevel(ServerConfig& c, std::string_view v) {
  return set_one_of(c.loglevel, v, {"debug", "verbose", "notice", "warning"});
}

std::optional<std::string> set_enable_protected_configs(ServerConfig& c, std::string_view v) {
  return set_one_of(c.enable_protected_configs, v, {"no", "yes", "local"});
}

// Redis's enum-config error lists every accepted value; ours follow Redis's eight.
std::optional<std::string> set_maxmemory_policy(ServerConfig& c, std::string_view v) {
  if (const MaxmemoryPolicyName* known = find_maxmemory_policy(v)) {
    c.maxmemory_policy = std::string(known->name);
    return std::nullopt;
  }
  std::string error = "argument(s) must be one of the following: ";
  for (const MaxmemoryPolicyName& entry : kMaxmemoryPolicies) {
    if (entry.name != kMaxmemoryPolicies[0].name) error.append(", ");
    error.append(entry.name);
  }
  return error;
}

// client-output-buffer-limit as Redis writes it: one or more "<class> <hard> <soft> <seconds>"
// groups (class: normal, replica or slave, pubsub). A bare memory value sets normal's hard limit.
std::string get_output_limits(const ServerConfig& c) {
  const auto group = [](const char* name, long long hard, long long soft, long long seconds) {
    return std::string(name) + " " + std::to_string(hard) + " " + std::to_string(soft) + " " +
           std::to_string(seconds);
  };
  std::string text = group("normal", c.client_output_buffer_limit,
                           c.client_output_buffer_soft_limit, c.client_output_buffer_soft_seconds);
  text += ' ';
  text += group("slave", c.replica_output_limits[0], c.replica_output_limits[1],
                c.replica_output_limits[2]);
  text += ' ';
  text += group("pubsub", c.pubsub_output_limits[0], c.pubsub_output_limits[1],
                c.pubsub_output_limits[2]);
  return text;
}

// Split as Redis splits it (config_fields_of: "" sets nothing, two spaces make an empty field).
std::optional<std::string> set_output_limits(ServerConfig& c, std::string_view v) {
  const std::vector<std::string_view> words = config_fields_of(v);
  if (words.size() % 4 != 0)
    return std::string("Wrong number of arguments in buffer limit configuration.");
  // Validate every group before applying any, as Redis does.
  ServerConfig updated = c;
  for (std::size_t i = 0; i < words.size(); i += 4) {
    long long* target[3];
    if (iequals(words[i], "normal")) {
      target[0] = &updated.client_output_buffer_limit;
      target[1] = &updated.client_output_buffer_soft_limit;
      target[2] = &updated.client_output_buffer_soft_seconds;
    } else if (iequals(words[i], "replica") || iequals(words[i], "slave")) {
      for (int k = 0; k < 3; ++k) target[k] = &updated.replica_output_limits[k];
    } else if (iequals(words[i], "pubsub")) {
      for (int k = 0; k < 3; ++k) target[k] = &updated.pubsub_output_limits[k];
    } else {
      return std::string("Invalid client class specified in buffer limit configuration.");
    }
    const auto hard = parse_memory(words[i + 1]);
    const auto soft = parse_memory(words[i + 2]);
    // Redis keeps the seconds in a C int: a value past it wraps, and negative is refused (as is
    // a field that is no number, read here as -1).
    const auto seconds_read = strtoll_field(words[i + 3]);
    const std::int32_t seconds =
        seconds_read ? static_cast<std::int32_t>(
                           static_cast<std::uint32_t>(static_cast<std::uint64_t>(*seconds_read)))
                     : -1;
    if (!hard || !soft || seconds < 0)
      return std::string(
          "Error in hard, soft or soft_seconds setting in buffer limit configuration.");
    *target[0] = capped_memory(*hard);
    *target[1] = capped_memory(*soft);
    *target[2] = seconds;
  }
  c = std::move(updated);
  return std::nullopt;
}

// "<seconds> <changes> ..." pairs, seconds at least 1 and changes at least 0, or empty (no save
// points), split and read as Redis's setConfigSaveOption: "0 1" would save on every tick, and
// "  900 1" has an empty first field, which reads 0 seconds.
std::optional<std::string> set_save(ServerConfig& c, std::string_view v) {
  const std::vector<std::string_view> fields = config_fields_of(v);
  if (fields.size() % 2 != 0) return std::string("Invalid save parameters");
  std::string normalised;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const auto n = strtoll_field(fields[i]);
    const bool seconds = i % 2 == 0;
    if (!n || *n < (seconds ? 1 : 0)) return std::string("Invalid save parameters");
    if (!normalised.empty()) normalised += ' ';
    normalised += std::to_string(*n);
  }
  c.save = std::move(normalised);
  return std::nullopt;
}

// Redis changes its working directory to `dir` (chdir) and reports the absolute path it reached:
// a relative value is taken from the current dir, and "sub/", "./sub" and "sub" all read back as
// the same absolute path. chronocached keeps its working directory and stores that path instead.
// The errors are chdir's.
std::optional<std::string> set_dir(ServerConfig& c, std::string_view v) {
  namespace fs = std::filesystem;
  const fs::path given(v);
  const fs::path path = given.is_absolute() ? given : fs::path(c.dir) / given;
  struct stat info {};
  if (v.empty() || ::stat(path.c_str(), &info) != 0)
    return std::generic_category().message(v.empty() ? ENOENT : errno);
  if (!S_ISDIR(info.st_mode)) return std::generic_category().message(ENOTDIR);
  if (::access(path.c_str(), X_OK) != 0) return std::generic_category().message(errno);
  std::error_code ec;
  const fs::path absolute = fs::canonical(path, ec);
  if (ec) return ec.message();
  c.dir = absolute.string();
  return std::nullopt;
}

std::optional<std::string> set_dbfilename(ServerConfig& c, std::string_view v) {
  if (v.find('/') != std::string_view::npos)
    return std::string("dbfilename can't be a path, just a filename");
  if (v.empty()) return std::string("dbfilename can't be empty");
  c.dbfilename = std::string(v);
  return std::nullopt;
}

std::string get_latency_percentiles(const ServerConfig& c) {
  std::string text;
  for (double p : c.latency_tracking_info_percentiles) {
    if (!text.empty()) text += ' ';
    text += percentile_text(p);
  }
  return text;
}

// Space-separated numbers in [0, 100], one space apart (Redis refuses "50  99"); "" for none.
std::optional<std::string> set_latency_percentiles(ServerConfig& c, std::string_view v) {
  std::vector<double> percentiles;
  while (!v.empty()) {
    const std::size_t space = v.find(' ');
    const std::string word(v.substr(0, space));
    char* end = nullptr;
    // strtod as Redis's string2d takes it: no leading blank, the whole word, not NaN.
    const bool blank = word.empty() || std::isspace(static_cast<unsigned char>(word[0])) != 0;
    const double p = blank ? 0.0 : std::strtod(word.c_str(), &end);
    if (blank || end != word.c_str() + word.size() || std::isnan(p))
      return std::string("Invalid latency-tracking-info-percentiles parameters");
    if (p < 0.0 || p > 100.0)
      return std::string(
          "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]");
    percentiles.push_back(p);
    if (space == std::string_view::npos) break;
    v.remove_prefix(space + 1);
    if (v.empty()) return std::string("Invalid latency-tracking-info-percentiles parameters");
  }
  c.latency_tracking_info_percentiles = std::move(percentiles);
  return std::nullopt;
}

std::optional<std::string> set_appendonly(ServerConfig& c, std::string_view v) {
  if (iequals(v, "no")) {
    c.appendonly = "no";
    return std::nullopt;
  }
  return std::string("argument must be 'no' (chronocached has no append-only file)");
}

ConfigParam secret(ConfigParam param) {
  param.secret = true;
  return param;
}

ConfigParam protect(ConfigParam param) {
  param.is_protected = true;
  return param;
}

// Redis's bounds for memory configs (config.c): a MiB, LONG_MAX and ULLONG_MAX.
constexpr unsigned long long kMiB = 1024 * 1024;
constexpr unsigned long long kInt64Max = std::numeric_limits<long long>::max();
constexpr unsigned long long kUint64Max = std::numeric_limits<unsigned long long>::max();

const std::vector<ConfigParam>& params() {
  static const std::vector<ConfigParam> table = {
      integer_param<&ServerConfig::port, 0, 65535>("port", false),
      integer_param<&ServerConfig::metrics_port, -1, 65535>("metrics-port", false),
      string_param<&ServerConfig::bind>("bind", false),
      bool_param<&ServerConfig::protected_mode>("protected-mode", true),
      secret(string_param<&ServerConfig::requirepass>("requirepass", true)),
      // Redis's range, to 2^32 - 1. CONFIG SET then checks that the descriptor limit allows the
      // count (config_command.cc); at start-up the server lowers it to fit.
      integer_param<&ServerConfig::maxclients, 1, 4294967295LL>("maxclients", true),
      integer_param<&ServerConfig::timeout, 0, 2147483647>("timeout", true),
      integer_param<&ServerConfig::databases, 1, 2147483647>("databases", false),
      memory_param<&ServerConfig::proto_max_bulk_len, kMiB, kInt64Max>("proto-max-bulk-len", true),
      memory_param<&ServerConfig::client_query_buffer_limit, kMiB, kInt64Max>(
          "client-query-buffer-limit", true),
      ConfigParam{"client-output-buffer-limit", get_output_limits, set_output_limits, true},
      integer_param<&ServerConfig::tcp_backlog, 0, 65535>("tcp-backlog", false),
      integer_param<&ServerConfig::hz, 0, 2147483647, 1, 500>("hz", true),
      integer_param<&ServerConfig::threads, 0, 1024>("threads", false),
      integer_param<&ServerConfig::threads, 0, 1024>("io-threads", false),  // Redis's name
      bool_param<&ServerConfig::realtime_loops>("realtime-loops", false),
      memory_param<&ServerConfig::maxmemory, 0, kUint64Max>("maxmemory", true),
      ConfigParam{"maxmemory-policy", [](const ServerConfig& c) { return c.maxmemory_policy; },
                  set_maxmemory_policy, true},
      integer_param<&ServerConfig::maxmemory_samples, 1, 2147483647>("maxmemory-samples", true),
      integer_param<&ServerConfig::maxmemory_eviction_tenacity, 0, 100>(
          "maxmemory-eviction-tenacity", true),
      bool_param<&ServerConfig::activedefrag>("activedefrag", true),
      memory_param<&ServerConfig::active_defrag_ignore_bytes, 1, kInt64Max>(
          "active-defrag-ignore-bytes", true),
      integer_param<&ServerConfig::active_defrag_threshold_lower, 0, 1000>(
          "active-defrag-threshold-lower", true),
      integer_param<&ServerConfig::slowlog_log_slower_than, -1, 9223372036854775807LL>(
          "slowlog-log-slower-than", true),
      integer_param<&ServerConfig::slowlog_max_len, 0, 9223372036854775807LL>("slowlog-max-len",
                                                                              true),
      bool_param<&ServerConfig::latency_tracking>("latency-tracking", true),
      integer_param<&ServerConfig::latency_monitor_threshold, 0, 9223372036854775807LL>(
          "latency-monitor-threshold", true),
      ConfigParam{"latency-tracking-info-percentiles", get_latency_percentiles,
                  set_latency_percentiles, true},
      ConfigParam{"loglevel", [](const ServerConfig& c) { return c.loglevel; }, set_loglevel, true},
      string_param<&ServerConfig::logfile>("logfile", false),
      protect(ConfigParam{"dir", [](const ServerConfig& c) { return c.dir; }, set_dir, true}),
      protect(ConfigParam{"dbfilename", [](const ServerConfig& c) { return c.dbfilename; },
                          set_dbfilename, true}),
      ConfigParam{"enable-protected-configs",
                  [](const ServerConfig& c) { return c.enable_protected_configs; },
                  set_enable_protected_configs, false},
      ConfigParam{"save", [](const ServerConfig& c) { return c.save; }, set_save, true},
      bool_param<&ServerConfig::ignore_snapshot_errors>("ignore-snapshot-errors", true),
      bool_param<&ServerConfig::stop_writes_on_bgsave_error>("stop-writes-on-bgsave-error", true),
      ConfigParam{"appendonly", [](const ServerConfig& c) { return c.appendonly; }, set_appendonly,
                  true},
      bool_param<&ServerConfig::enable_debug_command>("enable-debug-command", false),
      bool_param<&ServerConfig::cluster_enabled>("cluster-enabled", false),
      string_param<&ServerConfig::cluster_config_file>("cluster-config-file", false),
      bool_param<&ServerConfig::cluster_require_full_coverage>("cluster-require-full-coverage",
                                                               true),
      bool_param<&ServerConfig::cluster_allow_reads_when_down>("cluster-allow-reads-when-down",
                                                               true),
      string_param<&ServerConfig::upstream>("upstream", false),
      integer_param<&ServerConfig::upstream_max_ttl_ms, 1, 9223372036854775807LL>(
          "upstream-max-ttl-ms", true),
      integer_param<&ServerConfig::upstream_timeout_ms, 1, 3600000>("upstream-timeout-ms", true),
      bool_param<&ServerConfig::upstream_prefetch>("upstream-prefetch", false),
      integer_param<&ServerConfig::upstream_prefetch_depth, 1, 64>("upstream-prefetch-depth", true),
  };
  return table;
}

}  // namespace

const char* const kUsage =
    "Usage: chronocached [/path/to/chronocached.conf] [options]\n"
    "       chronocached --config FILE [options]\n"
    "       chronocached -v or --version\n"
    "       chronocached -h or --help\n"
    "\n"
    "Options are config-file directives with two leading dashes, for example:\n"
    "       chronocached --port 7777\n"
    "       chronocached --bind 127.0.0.1 --requirepass secret --maxclients 100\n"
    "\n"
    "Settings: port metrics-port bind protected-mode requirepass maxclients timeout databases\n"
    "          proto-max-bulk-len client-query-buffer-limit client-output-buffer-limit\n"
    "          tcp-backlog hz threads (io-threads) realtime-loops maxmemory maxmemory-policy "
    "loglevel\n"
    "          logfile dir dbfilename\n"
    "          activedefrag active-defrag-ignore-bytes active-defrag-threshold-lower\n"
    "          slowlog-log-slower-than slowlog-max-len latency-tracking\n"
    "          latency-tracking-info-percentiles latency-monitor-threshold\n"
    "          save stop-writes-on-bgsave-error ignore-snapshot-errors appendonly\n"
    "          enable-debug-command enable-protected-configs cluster-enabled\n"
    "          cluster-config-file cluster-require-full-coverage\n"
    "          cluster-allow-reads-when-down\n"
    "          upstream upstream-max-ttl-ms upstream-timeout-ms upstream-prefetch\n"
    "          upstream-prefetch-depth\n";

std::span<const ConfigParam> config_params() { return params(); }

std::string percentile_text(double p) {
  std::string text = std::to_string(p);  // "%f"
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

const ConfigParam* find_config_param(std::string_view name) {
  for (const ConfigParam& p : params())
    if (iequals(p.name, name)) return &p;
  return nullptr;
}

std::optional<unsigned long long> parse_memory(std::string_view text) {
  // memtoull: digits (none reads as 0), then a unit; a sign of either kind is refused.
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits >= 128) return std::nullopt;  // memtoull copies the digits into 128 bytes
  const std::string_view unit = text.substr(digits);
  unsigned long long multiplier = 1;
  if (unit.empty() || iequals(unit, "b")) {
    multiplier = 1;
  } else if (iequals(unit, "k")) {
    multiplier = 1000;
  } else if (iequals(unit, "kb")) {
    multiplier = 1024;
  } else if (iequals(unit, "m")) {
    multiplier = 1000 * 1000;
  } else if (iequals(unit, "mb")) {
    multiplier = 1024 * 1024;
  } else if (iequals(unit, "g")) {
    multiplier = 1000ULL * 1000 * 1000;
  } else if (iequals(unit, "gb")) {
    multiplier = 1024ULL * 1024 * 1024;
  } else {
    return std::nullopt;
  }
  // strtoull saturates at the uint64 maximum, and so does the product here (Redis's wraps).
  constexpr unsigned long long kSaturated = std::numeric_limits<unsigned long long>::max();
  unsigned long long number = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const auto digit = static_cast<unsigned long long>(text[i] - '0');
    if (number > (kSaturated - digit) / 10) return kSaturated;
    number = number * 10 + digit;
  }
  unsigned long long bytes = 0;
  return __builtin_mul_overflow(number, multiplier, &bytes) ? kSaturated : bytes;
}

std::optional<std::vector<std::string>> split_config_line(std::string_view line) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
    if (i >= line.size()) return words;
    std::string word;
    char quote = 0;
    while (i < line.size()) {
      const char c = line[i];
      if (quote != 0) {
        if (c == '\\' && i + 1 < line.size()) {
          word.push_back(line[i + 1]);
          i += 2;
          continue;
        }
        if (c == quote) {
          quote = 0;
          ++i;
          continue;
        }
        word.push_back(c);
        ++i;
      } else if (c == '"' || c == '\'') {
        quote = c;
        ++i;
      } else if (std::isspace(static_cast<unsigned char>(c))) {
        break;
      } else {
        word.push_back(c);
        ++i;
      }
    }
    if (quote != 0) return std::nullopt;
    words.push_back(std::move(word));
  }
}

namespace {

// Applies one directive; returns an error message for the user, empty on success.
std::string apply_directive(ServerConfig& config, const std::vector<std::string>& words) {
  const ConfigParam* param = find_config_param(words[0]);
  if (param == nullptr) return "Bad directive or wrong number of arguments";
  std::string value;
  for (std::size_t i = 1; i < words.size(); ++i) {
    if (i > 1) value += ' ';
    value += words[i];
  }
  if (auto error = param->set(config, value)) return *error;
  return "";
}

// A directive from the config file or the command line. `save` directives there accumulate, as
// in Redis: the first replaces the default, each later one adds its points and `save ""` clears
// those before it. (CONFIG SET save replaces.)
std::string apply_startup_directive(ServerConfig& config, const std::vector<std::string>& words,
                                    bool& save_seen) {
  if (!iequals(words[0], "save")) return apply_directive(config, words);
  const std::string earlier = save_seen ? config.save : std::string();
  std::string problem = apply_directive(config, words);
  if (!problem.empty()) return problem;
  save_seen = true;
  if (!earlier.empty() && !config.save.empty()) config.save = earlier + ' ' + config.save;
  return "";
}

}  // namespace

ConfigLoad load_config(const std::vector<std::string>& args) {
  ConfigLoad load;
  std::size_t i = 0;
  std::vector<std::vector<std::string>> flags;
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "-h" || a == "--help") {
      load.show_help = true;
      return load;
    }
    if (a == "-v" || a == "--version") {
      load.show_version = true;
      return load;
    }
    if (a == "--config") {
      if (i + 1 >= args.size()) {
        load.error = "--config needs a file name";
        return load;
      }
      load.config.config_file = args[++i];
      continue;
    }
    if (a.rfind("--", 0) == 0) {
      std::vector<std::string> words{a.substr(2)};
      while (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0) words.push_back(args[++i]);
      flags.push_back(std::move(words));
      continue;
    }
    if (i == 0) {
      load.config.config_file = a;
      continue;
    }
    load.error = "unexpected argument '" + a + "' (try --help)";
    return load;
  }
  bool save_seen = false;
  if (!load.config.config_file.empty()) {
    std::ifstream in(load.config.config_file);
    if (!in) {
      load.error = "Fatal error, can't open config file '" + load.config.config_file + "'";
      return load;
    }
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      const auto words = split_config_line(line);
      std::string problem;
      if (!words) {
        problem = "Unbalanced quotes in configuration line";
      } else if (words->empty() || (*words)[0][0] == '#') {
        continue;
      } else {
        problem = apply_startup_directive(load.config, *words, save_seen);
      }
      if (!problem.empty()) {
        load.error =
            "\n*** FATAL CONFIG FILE ERROR (chronocached) ***\nReading the configuration file '" +
            load.config.config_file + "', at line " + std::to_string(number) + "\n>>> '" + line +
            "'\n" + problem;
        return load;
      }
    }
  }
  for (const auto& words : flags) {
    if (words.size() < 2 && words[0] != "save") {
      load.error = "option --" + words[0] + " needs a value";
      return load;
    }
    const std::string problem = apply_startup_directive(load.config, words, save_seen);
    if (!problem.empty()) {
      load.error = "option --" + words[0] + ": " + problem;
      return load;
    }
  }
  // The default dir ("."), as every dir set above, reads back as an absolute path (set_dir).
  std::error_code ec;
  if (const auto absolute = std::filesystem::canonical(load.config.dir, ec); !ec)
    load.config.dir = absolute.string();
  return load;
}

std::vector<SavePoint> save_points(const ServerConfig& config) {
  std::vector<SavePoint> points;
  const std::vector<std::string_view> words = words_of(config.save);
  for (std::size_t i = 0; i + 1 < words.size(); i += 2)
    points.push_back(
        {parse_integer(words[i]).value_or(0), parse_integer(words[i + 1]).value_or(0)});
  return points;
}

std::string snapshot_path(const ServerConfig& config) {
  return (std::filesystem::path(config.dir) / config.dbfilename).string();
}

std::string render_config(const ServerConfig& config) {
  const ServerConfig defaults;
  std::ostringstream out;
  out << "# Written by chronocached (CONFIG REWRITE): settings that differ from the defaults.\n";
  for (const ConfigParam& p : params()) {
    const std::string value = p.get(config);
    if (value == p.get(defaults)) continue;
    out << p.name << " \"";
    for (char c : value) {
      if (c == '"' || c == '\\') out << '\\';
      out << c;
    }
    out << "\"\n";
  }
  return out.str();
}

}  // namespace chronocached
