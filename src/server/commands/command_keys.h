// Where a command's keys are, as Redis's getKeysFromCommand finds them: the cluster's redirection
// check and COMMAND GETKEYS read the same positions, so a client that asks which keys a command
// has is told the keys the server routes it by.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "server/base/ascii.h"
#include "server/commands/command.h"

namespace chronocached {

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user pw] [KEYS key ...].
// Redis 7 reads its one key at 3 unless a KEYS word stands before the last argument. Then the
// keys are those after the first KEYS option (AUTH's and AUTH2's values are not options), or
// none when the key argument is not "": MIGRATE refuses that form itself.
struct MigrateKeys {
  std::size_t first;
  std::size_t count;
};
inline MigrateKeys migrate_keys(std::span<const std::string_view> args) {
  const std::size_t argc = args.size();
  bool keys_word = false;  // the key spec's backward search, from the next-to-last argument
  for (std::size_t i = 1; i + 1 < argc && !keys_word; ++i) keys_word = iequals(args[i], "keys");
  if (!keys_word) return {3, argc > 3 ? 1u : 0u};
  for (std::size_t i = 6; i < argc; ++i) {
    if (iequals(args[i], "keys")) {
      if (!args[3].empty()) return {3, 0};
      return {i + 1, argc - i - 1};
    }
    if (iequals(args[i], "auth")) {
      i += 1;
    } else if (iequals(args[i], "auth2")) {
      i += 2;
    }
  }
  return {3, 1};
}

// Calls fn(key) for each key of `args` (the command name first), in order.
template <class Fn>
void for_each_key(const CommandSpec& spec, std::span<const std::string_view> args, Fn&& fn) {
  if (spec.name == "migrate") {
    const MigrateKeys keys = migrate_keys(args);
    for (std::size_t i = keys.first; i < keys.first + keys.count; ++i) fn(args[i]);
    return;
  }
  if (spec.first_key <= 0) return;
  const int argc = static_cast<int>(args.size());
  const int last = spec.last_key < 0 ? argc + spec.last_key : spec.last_key;
  const int step = spec.key_step > 0 ? spec.key_step : 1;
  for (int i = spec.first_key; i <= last && i < argc; i += step)
    fn(args[static_cast<std::size_t>(i)]);
}

}  // namespace chronocached
