#include "bench/loop/request_handler.h"

#include <array>
#include <charconv>

namespace chronocache::loop_bench {
namespace {

// Limits of this benchmark's parser, not of RESP: redis-benchmark's GET and SET stay far below.
constexpr std::size_t kMaxArgs = 8;                 // SET key value plus options, with room
constexpr std::size_t kMaxBulkBytes = 1024 * 1024;  // 1 MiB: larger values are not measured here

enum class ParseState : unsigned char { kComplete, kNeedMore, kBad };

struct Command {
  std::array<std::string_view, kMaxArgs> args;
  std::size_t argc = 0;
  std::size_t length = 0;  // bytes of input the command spans
};

// Reads "<prefix><decimal>\r\n" at data[pos]; advances pos past it.
ParseState read_header(std::string_view data, std::size_t& pos, char prefix, long& value) {
  if (pos >= data.size()) return ParseState::kNeedMore;
  if (data[pos] != prefix) return ParseState::kBad;
  const std::size_t end = data.find("\r\n", pos + 1);
  if (end == std::string_view::npos) {
    return data.size() - pos > 32 ? ParseState::kBad : ParseState::kNeedMore;
  }
  const auto [ptr, ec] = std::from_chars(data.data() + pos + 1, data.data() + end, value);
  if (ec != std::errc() || ptr != data.data() + end) return ParseState::kBad;
  pos = end + 2;
  return ParseState::kComplete;
}

// Parses one RESP array of bulk strings at the front of data. The views point into data.
ParseState parse_command(std::string_view data, Command& command) {
  std::size_t pos = 0;
  long count = 0;
  if (ParseState s = read_header(data, pos, '*', count); s != ParseState::kComplete) return s;
  if (count < 1 || static_cast<std::size_t>(count) > kMaxArgs) return ParseState::kBad;
  command.argc = static_cast<std::size_t>(count);
  for (std::size_t i = 0; i < command.argc; ++i) {
    long length = 0;
    if (ParseState s = read_header(data, pos, '$', length); s != ParseState::kComplete) return s;
    if (length < 0 || static_cast<std::size_t>(length) > kMaxBulkBytes) return ParseState::kBad;
    const auto bytes = static_cast<std::size_t>(length);
    if (data.size() - pos < bytes + 2) return ParseState::kNeedMore;
    if (data[pos + bytes] != '\r' || data[pos + bytes + 1] != '\n') return ParseState::kBad;
    command.args[i] = data.substr(pos, bytes);
    pos += bytes + 2;
  }
  command.length = pos;
  return ParseState::kComplete;
}

bool is_command(std::string_view arg, std::string_view upper) {
  if (arg.size() != upper.size()) return false;
  for (std::size_t i = 0; i < arg.size(); ++i) {
    char c = arg[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

void append_bulk(std::string& output, std::string_view bytes) {
  std::array<char, 24> digits;
  const auto [end, ec] = std::to_chars(digits.data(), digits.data() + digits.size(), bytes.size());
  (void)ec;  // 24 characters hold any size_t
  output.push_back('$');
  output.append(digits.data(), end);
  output.append("\r\n");
  output.append(bytes);
  output.append("\r\n");
}

}  // namespace

std::size_t RequestHandler::run_commands(std::string_view data, std::string& output) {
  std::size_t consumed = 0;
  Command command;
  while (consumed < data.size()) {
    const ParseState state = parse_command(data.substr(consumed), command);
    if (state == ParseState::kNeedMore) break;
    if (state == ParseState::kBad) return kBadInput;
    const std::string_view name = command.args[0];
    if (is_command(name, "GET") && command.argc == 2) {
      const auto it = store_.find(command.args[1]);
      if (it == store_.end()) {
        output.append("$-1\r\n");
      } else {
        append_bulk(output, it->second);
      }
    } else if (is_command(name, "SET") && command.argc == 3) {
      const auto it = store_.find(command.args[1]);
      if (it == store_.end()) {
        store_.emplace(command.args[1], command.args[2]);
      } else {
        it->second.assign(command.args[2]);
      }
      output.append("+OK\r\n");
    } else if (is_command(name, "PING") && command.argc <= 2) {
      if (command.argc == 1) {
        output.append("+PONG\r\n");
      } else {
        append_bulk(output, command.args[1]);
      }
    } else {
      output.append("-ERR unknown command or wrong number of arguments\r\n");
    }
    consumed += command.length;
  }
  return consumed;
}

FeedOutcome RequestHandler::feed(ClientBuffers& client, std::string_view received) {
  // The common case at pipeline 1: nothing pending, the whole command in this receive. Parse it
  // where it lies and copy only an incomplete tail.
  if (client.input.empty()) {
    const std::size_t consumed = run_commands(received, client.output);
    if (consumed == kBadInput) return FeedOutcome::kProtocolError;
    client.input.assign(received.substr(consumed));
    return FeedOutcome::kOk;
  }
  client.input.append(received);
  const std::size_t consumed = run_commands(client.input, client.output);
  if (consumed == kBadInput) return FeedOutcome::kProtocolError;
  client.input.erase(0, consumed);
  return FeedOutcome::kOk;
}

}  // namespace chronocache::loop_bench
