// Where a command's keys are, and how it uses each, as Redis 7's key specs say. The cluster's
// redirection check, COMMAND GETKEYS / GETKEYSANDFLAGS and COMMAND INFO read the same specs, so
// a client that asks which keys a command has is told the keys the server routes it by.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

#include "server/base/ascii.h"
#include "server/commands/command.h"

namespace chronocached {

// The key spec a command's first_key..last_key describe, with its key_flags (or, without them,
// "RW update" for a write and "RO access" for a read).
inline KeySpec range_key_spec(const CommandSpec& spec) {
  std::string_view flags = spec.key_flags;
  if (flags.empty()) flags = (spec.flags & kWrite) != 0 ? "RW update" : "RO access";
  return KeySpec{.flags = flags,
                 .index = spec.first_key,
                 .lastkey = spec.last_key >= 0 ? spec.last_key - spec.first_key : spec.last_key,
                 .keystep = spec.key_step};
}

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw | AUTH2 user pw] [KEYS key ...].
// Redis 7 reads its one key at 3 unless a KEYS word stands before the last argument (its second
// spec, searched for backwards, is incomplete). Then the keys are those after the first KEYS
// option (AUTH's and AUTH2's values are not options), or none when the key argument is not "":
// MIGRATE refuses that form itself.
struct MigrateKeys {
  std::size_t first;
  std::size_t count;
};
inline MigrateKeys migrate_keys(std::span<const std::string_view> args) {
  const std::size_t argc = args.size();
  bool keys_word = false;
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

// SET's key spec has variable flags: an overwrite, or a read as well with GET (Redis's
// setGetKeys).
inline std::string_view set_key_flags(std::span<const std::string_view> args) {
  for (std::size_t i = 3; i < args.size(); ++i)
    if (iequals(args[i], "get")) return "RW access update";
  return "OW update";
}

// The keys one spec finds in `args` (Redis's getKeysUsingKeySpecs, range specs only).
template <class Fn>
void for_each_spec_key(const KeySpec& ks, std::span<const std::string_view> args, Fn&& fn) {
  const int argc = static_cast<int>(args.size());
  int first = ks.index;
  if (!ks.keyword.empty()) {
    first = 0;
    const int start = ks.startfrom >= 0 ? ks.startfrom : argc + ks.startfrom;
    const int step = ks.startfrom >= 0 ? 1 : -1;
    // Forwards it stops before the last argument, backwards at the first (Redis's loop).
    for (int i = start; i >= 1 && i < argc && (step < 0 || i < argc - 1); i += step) {
      if (iequals(args[static_cast<std::size_t>(i)], ks.keyword)) {
        first = i + 1;
        break;
      }
    }
    if (first == 0) return;  // no keyword: this spec has no keys
  }
  const int last = ks.lastkey >= 0 ? first + ks.lastkey : argc + ks.lastkey;
  const int step = ks.keystep > 0 ? ks.keystep : 1;
  for (int i = first; i <= last && i < argc; i += step) fn(args[static_cast<std::size_t>(i)]);
}

// Calls fn(key, flags) for each key of `args` (the command name first), in order, with the
// flags of the spec that found it.
template <class Fn>
void for_each_key(const CommandSpec& spec, std::span<const std::string_view> args, Fn&& fn) {
  if (spec.name == "migrate") {
    const MigrateKeys keys = migrate_keys(args);
    for (std::size_t i = keys.first; i < keys.first + keys.count; ++i)
      fn(args[i], std::string_view("RW access delete"));
    return;
  }
  if (spec.first_key <= 0) return;
  if (spec.key_specs.empty()) {
    const KeySpec ks = range_key_spec(spec);
    for_each_spec_key(ks, args, [&](std::string_view key) { fn(key, ks.flags); });
    return;
  }
  const bool variable = spec.name == "set";
  for (const KeySpec& ks : spec.key_specs) {
    const std::string_view flags = variable ? set_key_flags(args) : ks.flags;
    for_each_spec_key(ks, args, [&](std::string_view key) { fn(key, flags); });
  }
}

}  // namespace chronocached
