// Flag parsing and the rules that turn options into a run (see sim_options.h).
#include "sim/sim_options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace chronocache::sim {
namespace {

constexpr std::string_view kUsage =
    "usage: chronocache-sim TRACE [options]\n"
    "Replays TRACE through the engine's eviction policies and prints the hit ratio per policy\n"
    "and cache size. TRACE may be .gz, .xz or .zst compressed.\n"
    "\n"
    "  --format F            text | csv | oracleGeneral | lis | int32be (default: from the\n"
    "                        extension; .trace files are sniffed: LIRS text or cache2k binary)\n"
    "  --policies A,B        policies to run (default: all; see --list-policies)\n"
    "  --sizes N,M           cache sizes in objects\n"
    "  --size-fractions F,G  cache sizes as fractions of the trace's unique keys\n"
    "                        (default, without --sizes: 0.01,0.05,0.1,0.25)\n"
    "  --csv FILE            also write one CSV row per (policy, size); draw it with\n"
    "                        bench/report/plot_sim.py FILE --png OUT\n"
    "  --name NAME           the trace's name in the reports (default: the file name)\n"
    "  --threads N           parallel runs (default: one per hardware thread)\n"
    "  --progress auto|yes|no  progress bar on stderr (auto: on a terminal, for long runs)\n"
    "  --list-policies       print the compiled-in policies and exit\n"
    "  --help                this text\n";

std::vector<std::string_view> split_list(std::string_view list) {
  std::vector<std::string_view> items;
  while (!list.empty()) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    if (!item.empty()) items.push_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return items;
}

[[noreturn]] void reject(std::string_view flag, std::string_view value, std::string_view why) {
  std::string message(flag);
  message.append(" ");
  message.append(value);
  message.append(": ");
  message.append(why);
  throw std::invalid_argument(message);
}

template <class T>
T parse_number(std::string_view flag, std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) reject(flag, text, "not a number");
  return value;
}

}  // namespace

std::string_view sim_usage() { return kUsage; }

SimOptions parse_sim_options(std::span<const std::string_view> args) {
  SimOptions options;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    const auto value = [&]() -> std::string_view {
      if (i + 1 >= args.size()) reject(arg, "", "needs a value");
      return args[++i];
    };
    if (arg == "--help" || arg == "-h") {
      options.help = true;
    } else if (arg == "--list-policies") {
      options.list_policies = true;
    } else if (arg == "--format") {
      const std::string_view name = value();
      options.format = parse_trace_format(name);
      if (!options.format) reject(arg, name, "unknown format");
    } else if (arg == "--policies") {
      for (const std::string_view name : split_list(value())) options.policies.emplace_back(name);
    } else if (arg == "--sizes") {
      for (const std::string_view size : split_list(value()))
        options.sizes.push_back(parse_number<std::size_t>(arg, size));
    } else if (arg == "--size-fractions") {
      for (const std::string_view text : split_list(value())) {
        const double fraction = parse_number<double>(arg, text);
        if (!(fraction > 0 && fraction <= 1)) reject(arg, text, "must be in (0, 1]");
        options.size_fractions.push_back(fraction);
      }
    } else if (arg == "--csv") {
      options.csv_path = value();
    } else if (arg == "--name") {
      options.name = value();
    } else if (arg == "--threads") {
      options.threads = parse_number<unsigned>(arg, value());
    } else if (arg == "--progress") {
      const std::string_view mode = value();
      if (mode == "auto") {
        options.progress = ProgressMode::kAuto;
      } else if (mode == "yes") {
        options.progress = ProgressMode::kAlways;
      } else if (mode == "no") {
        options.progress = ProgressMode::kNever;
      } else {
        reject(arg, mode, "expected auto, yes or no");
      }
    } else if (arg.starts_with("-")) {
      reject(arg, "", "unknown option");
    } else if (options.trace_path.empty()) {
      options.trace_path = arg;
    } else {
      reject(arg, "", "only one trace per run");
    }
  }
  if (options.trace_path.empty() && !options.help && !options.list_policies)
    throw std::invalid_argument("no trace given");
  return options;
}

std::vector<std::size_t> resolve_sizes(const SimOptions& options, std::size_t unique_keys) {
  std::vector<std::size_t> sizes = options.sizes;
  std::vector<double> fractions = options.size_fractions;
  if (sizes.empty() && fractions.empty())
    fractions.assign(kDefaultSizeFractions.begin(), kDefaultSizeFractions.end());
  for (const double fraction : fractions) {
    // nearbyint rounds half to even in the default rounding mode (Python's round(), which the
    // reference sizes were computed with).
    const double size = std::nearbyint(fraction * static_cast<double>(unique_keys));
    sizes.push_back(std::max<std::size_t>(1, static_cast<std::size_t>(size)));
  }
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  return sizes;
}

std::vector<const PolicyEntry*> resolve_policies(const SimOptions& options) {
  std::vector<const PolicyEntry*> chosen;
  if (options.policies.empty() || (options.policies.size() == 1 && options.policies[0] == "all")) {
    for (const PolicyEntry& entry : all_policies()) chosen.push_back(&entry);
    return chosen;
  }
  for (const std::string& name : options.policies) {
    if (find_policy(name) == nullptr) {
      std::string known = "not compiled in (have: ";
      for (const PolicyEntry& entry : all_policies()) {
        if (!known.ends_with(": ")) known.append(", ");
        known.append(entry.name);
      }
      known.append(")");
      reject("--policies", name, known);
    }
  }
  // Registry order, whatever order the flag gave: columns and colours stay stable across runs.
  for (const PolicyEntry& entry : all_policies()) {
    if (std::find(options.policies.begin(), options.policies.end(), entry.name) !=
        options.policies.end())
      chosen.push_back(&entry);
  }
  return chosen;
}

std::string trace_display_name(const SimOptions& options) {
  if (!options.name.empty()) return options.name;
  const std::size_t slash = options.trace_path.find_last_of('/');
  return slash == std::string::npos ? options.trace_path : options.trace_path.substr(slash + 1);
}

}  // namespace chronocache::sim
