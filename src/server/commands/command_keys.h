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

// The keys one spec finds in `args` (Redis's getKeysUsingKeySpecs, for range specs). A keyword
// is searched for from `startfrom`: forwards up to the next-to-last argument, backwards down to
// the second, never the command's first argument (Redis's loop bounds).
template <class Fn>
void for_each_spec_key(const KeySpec& ks, std::span<const std::string_view> args, Fn&& fn) {
  const int argc = static_cast<int>(args.size());
  int first = ks.index;
  if (!ks.keyword.empty()) {
    first = 0;
    const bool forwards = ks.startfrom > 0;
    const int start = forwards ? ks.startfrom : argc + ks.startfrom;
    const int end = forwards ? argc - 1 : 1;  // not examined
    for (int i = start; i != end && i >= 1 && i < argc; i += forwards ? 1 : -1) {
      if (option_is(args[static_cast<std::size_t>(i)], ks.keyword)) {
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

// Calls fn(key, flags) for each key of `args` (the command name first; its arity checked), in
// order, with what the command does to it.
template <class Fn>
void for_each_key(const CommandSpec& spec, std::span<const std::string_view> args, Fn&& fn) {
  if (spec.key_range != nullptr) {
    const KeyRange range = spec.key_range(args);
    for (std::size_t i = range.first; i < range.first + range.count && i < args.size(); ++i)
      fn(args[i], range.flags);
    return;
  }
  if (spec.first_key <= 0) return;
  if (spec.key_specs.empty()) {
    const KeySpec ks = range_key_spec(spec);
    for_each_spec_key(ks, args, [&](std::string_view key) { fn(key, ks.flags); });
    return;
  }
  for (const KeySpec& ks : spec.key_specs)
    for_each_spec_key(ks, args, [&](std::string_view key) { fn(key, ks.flags); });
}

}  // namespace chronocached
