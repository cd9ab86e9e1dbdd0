// SlowLog: the latest commands that ran at least `slowlog-log-slower-than` microseconds, newest
// first, as Redis's SLOWLOG keeps them.
//
//   SlowLog log;
//   log.configure({.slower_than_usec = 10'000, .max_len = 128});
//   log.set_cycles_per_usec(rate);                 // the time-stamp counter's (cycle_clock.h)
//   if (cycles >= log.threshold_cycles() && log.wants(usec))   // one compare, then exact
//     log.push({args, redacted, usec, unix_seconds, "127.0.0.1:5000", "name"});
//   log.for_each_newest(10, [](const SlowLog::Entry& e) { ... });
//
// An entry keeps what Redis 7 keeps, cut as Redis cuts it, so the log's memory stays bounded by
// max_len entries of at most kMaxArgs arguments of kMaxArgBytes (plus a short note each):
//   * at most 32 arguments: a longer command keeps its first 31 and "... (N more arguments)";
//   * each argument at most 128 bytes, then "... (N more bytes)";
//   * arguments a command marked secret (AUTH's password, CONFIG SET requirepass's value) as
//     "(redacted)".
// Ids count every entry ever pushed; RESET empties the log without rewinding them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/store/cycle_threshold.h"

namespace chronocached {

class SlowLog {
 public:
  static constexpr std::size_t kMaxArgs = 32;
  static constexpr std::size_t kMaxArgBytes = 128;

  struct Settings {
    std::int64_t slower_than_usec = 10'000;  // negative: log nothing; 0: log every command
    std::size_t max_len = 128;
  };

  // What a command left behind: its arguments as sent (args[0] the name), which of them are
  // secret (bit i: args[i]), and who sent it.
  struct Command {
    std::span<const std::string_view> args = {};
    std::uint64_t redacted = 0;
    std::uint64_t usec = 0;
    std::int64_t unix_seconds = 0;
    std::string_view peer = {};  // "ip:port"
    std::string_view client_name = {};
  };

  struct Entry {
    std::uint64_t id = 0;
    std::int64_t unix_seconds = 0;
    std::uint64_t usec = 0;
    std::vector<std::string> args;
    std::string peer;
    std::string client_name;
  };

  void configure(const Settings& settings) {
    settings_ = settings;
    threshold_.set_usec(settings.slower_than_usec);
  }
  const Settings& settings() const noexcept { return settings_; }
  void set_cycles_per_usec(double rate) { threshold_.set_cycles_per_usec(rate); }

  // The threshold in time-stamp-counter cycles: a command that ran fewer is not wanted.
  std::uint64_t threshold_cycles() const noexcept { return threshold_.cycles(); }

  // Whether a command that ran `usec` belongs in the log.
  bool wants(std::uint64_t usec) const noexcept { return threshold_.reached_by(usec); }

  // Adds the command as the newest entry, then drops the oldest beyond max_len (Redis trims on
  // a push, so a smaller max_len set at run time takes effect at the next slow command).
  void push(const Command& command);

  std::size_t size() const noexcept { return entries_.size(); }
  void reset() noexcept { entries_.clear(); }

  // fn(const Entry&) for the newest `count` entries, newest first (count > size(): all).
  template <class Fn>
  void for_each_newest(std::size_t count, Fn&& fn) const {
    for (std::size_t i = 0; i < count && i < entries_.size(); ++i) fn(entries_[i]);
  }

 private:
  Settings settings_;
  CycleThreshold threshold_;
  std::deque<Entry> entries_;  // front: the newest
  std::uint64_t next_id_ = 0;
};

}  // namespace chronocached
