// Logger: where a module sends its log lines, without knowing who writes them.
//
// The server's Logger writes Redis-style lines to stdout or the logfile (Server::log); a module
// built alone (a unit test, the fuzzer) gets an empty one, which drops every line. Levels are
// Redis's names: "debug", "verbose", "notice", "warning".
#pragma once

#include <functional>
#include <string>
#include <utility>

namespace chronocached {

class Logger {
 public:
  using Sink = std::function<void(const char* level, const std::string& message)>;

  Logger() = default;  // drops every line
  explicit Logger(Sink sink) : sink_(std::move(sink)) {}

  void log(const char* level, const std::string& message) const {
    if (sink_) sink_(level, message);
  }

 private:
  Sink sink_;
};

}  // namespace chronocached
