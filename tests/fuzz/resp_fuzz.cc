// libFuzzer target: arbitrary bytes from one client through resp::Parser and the command
// dispatch, as Session::process() runs them, on a fresh ServerState per input.
//
//   input = [chunk byte][request bytes ...]
//
// The first byte picks how the request bytes arrive: 0x80 and above all at once, else in pieces
// of 1 + (byte % 32) bytes, appended to the unread tail the way a socket read would (so partial
// commands, parser resumption and the session's buffer moves are exercised). Replies go to a
// std::string that is checked and dropped after each command: it must be one whole,
// well-formed reply or none (well_framed), or the run stops as on a crash. The run stops at a
// protocol error or QUIT, where the server would close the connection.
//
// What differs from the server, and why:
//   * the clock is fixed (the same input replays exactly); DEBUG is refused (the default
//     enable-debug-command no), so DEBUG SLEEP cannot stall the run;
//   * proto-max-bulk-len is held at 1 MB, even after a fuzzed CONFIG SET, so SETRANGE or APPEND
//     cannot ask for hundreds of megabytes (a limit the server enforces; not what is fuzzed);
//   * nothing needs the Server object (handlers see ServerState only), so no command is skipped;
//     SHUTDOWN and CLIENT KILL only set flags that the server's loop would act on;
//   * `dir` is a directory of the run's own, removed at exit, so a fuzzed SAVE writes its
//     snapshot there and not in the directory make runs from (CONFIG SET dir is refused: a
//     protected config).
//
//   make fuzz              FUZZ_SECONDS (default 60) of fuzzing into build/fuzz/corpus
//   make fuzz-smoke        10 s from the seeds in tests/fuzz/corpus (part of make test)
//   build/fuzz/resp_fuzz crash-<hash>      replays one input
#include <stdlib.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "server/commands/command.h"
#include "server/commands/command_table.h"
#include "server/resp/framed_batch.h"
#include "server/resp/parser.h"
#include "server/resp/reply_writer.h"
#include "server/server_state.h"

namespace {

using chronocached::ClientState;
using chronocached::CommandContext;
using chronocached::ServerConfig;
using chronocached::ServerState;

constexpr long long kFuzzMaxBulkLen = 1 << 20;

// The run's snapshot directory: made at the first input, removed when the process exits.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "resp_fuzz.XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};
constexpr std::int64_t kFixedUnixMs = 1'700'000'000'000;  // 2023-11-14, any fixed instant

// Runs every complete command at the front of `input`; false when the connection would close.
// Checks the session's framing ahead of the lock (resp::FramedBatch) against the parse that the
// command then gets: while the limits it was framed under hold, each framed command must be
// exactly the next parsed one. Stops the run (a crash libFuzzer reports) on any difference.
void check_framed(chronocached::resp::FramedBatch& framed,
                  const chronocached::resp::ParserLimits& framed_under,
                  const chronocached::resp::ParserLimits& limits,
                  const chronocached::resp::ParseResult& parsed,
                  const std::vector<std::string_view>& args) {
  if (framed.empty()) return;
  if (limits.max_bulk_len != framed_under.max_bulk_len ||
      limits.authenticated != framed_under.authenticated) {
    framed.clear();  // the session parses the rest under the new limits, as here
    return;
  }
  if (parsed.status != chronocached::resp::ParseStatus::kCommand) __builtin_trap();
  const chronocached::resp::FramedBatch::Command command = framed.next();
  if (command.consumed != parsed.consumed ||
      !std::equal(command.args.begin(), command.args.end(), args.begin(), args.end()))
    __builtin_trap();
}

// The length of the one RESP2 or RESP3 reply at the front of `out`, or 0 when it is not one
// whole, well-formed reply: a line (simple string, error, number, null, boolean, double, big
// number) holds no CR or LF before its CRLF, a blob has its length's bytes and a CRLF, an
// aggregate has its count of replies. What a client's reader would accept, so a reply that
// breaks framing (an error quoting an argument's CRLF, say) stops the run.
std::size_t one_reply(std::string_view out, int depth = 0) {
  if (out.empty() || depth > 64) return 0;
  const std::size_t eol = out.find("\r\n");
  if (eol == std::string_view::npos) return 0;
  const std::string_view line = out.substr(1, eol - 1);
  if (line.find_first_of("\r\n") != std::string_view::npos) return 0;
  std::size_t at = eol + 2;
  const auto count = [&]() -> long long {
    long long n = 0;
    const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), n);
    return ec == std::errc() && end == line.data() + line.size() && n >= -1 ? n : -2;
  };
  switch (out[0]) {
    case '+':
    case '-':
    case ':':
    case '_':
    case '#':
    case ',':
    case '(':
      return at;
    case '$':
    case '!':
    case '=': {
      const long long n = count();
      if (n == -1 && out[0] == '$') return at;
      if (n < 0 || out.size() < at + static_cast<std::size_t>(n) + 2) return 0;
      at += static_cast<std::size_t>(n);
      return out.substr(at, 2) == "\r\n" ? at + 2 : 0;
    }
    case '*':
    case '~':
    case '>':
    case '%':
    case '|': {
      const long long n = count();
      if (n == -1 && out[0] == '*') return at;
      if (n < 0) return 0;
      const long long elements = out[0] == '%' || out[0] == '|' ? 2 * n : n;
      for (long long i = 0; i < elements; ++i) {
        const std::size_t used = one_reply(out.substr(at), depth + 1);
        if (used == 0) return 0;
        at += used;
      }
      return at;
    }
    default:
      return 0;
  }
}

// `out`, what one command wrote, is at most one whole reply. (No command here writes more: there
// is no pub/sub, and CLIENT REPLY OFF or SKIP write none.) One reply and no more, not merely
// whole replies, so that an error cut in two by a CRLF it quoted fails even when its tail reads
// as a reply of its own ("-ERR ... 'x" then "+y', ...). The one exception: a MONITOR client sees
// its own command too, a "+<time> [<db> <addr>] ..." line after the reply (its arguments quoted,
// so a CRLF in one still breaks the line and fails).
bool well_framed(std::string_view out, bool monitor) {
  if (out.empty()) return true;
  std::size_t at = one_reply(out);
  if (at == 0) return false;
  if (monitor && at < out.size() && out[at] == '+') {
    const std::size_t line = one_reply(out.substr(at));
    if (line == 0) return false;
    at += line;
  }
  return at == out.size();
}

bool process(std::string& input, chronocached::resp::Parser& parser, ServerState& state,
             ClientState& client, std::string& output) {
  std::vector<std::string_view> args;
  chronocached::resp::ReplyWriter writer(output);
  chronocached::resp::ParserLimits limits;
  limits.max_bulk_len = static_cast<std::size_t>(state.config.proto_max_bulk_len);
  limits.authenticated = client.authenticated;
  const chronocached::resp::ParserLimits framed_under = limits;
  chronocached::resp::FramedBatch framed;
  framed.frame(parser, input, framed_under);
  // What ran is erased from the input once the batch ends, as the session consumes it: erasing
  // command by command would move the bytes the framed views point to.
  std::string_view unread = input;
  struct EraseConsumed {
    std::string& input;
    std::size_t bytes = 0;
    ~EraseConsumed() { input.erase(0, bytes); }
  } consumed{input};
  while (true) {
    limits.max_bulk_len = static_cast<std::size_t>(state.config.proto_max_bulk_len);
    limits.authenticated = client.authenticated;
    const auto parsed = parser.parse(unread, limits, args);
    check_framed(framed, framed_under, limits, parsed, args);
    using chronocached::resp::ParseStatus;
    if (parsed.status == ParseStatus::kNeedMore) return true;
    if (parsed.status == ParseStatus::kError) {
      writer.error(parsed.error);
      return false;
    }
    if (parsed.status == ParseStatus::kCommand) {
      writer.set_protocol(client.protocol);
      const auto now = chronocache::TimePoint(chronocache::Duration(state.debug.clock_offset_ms)) +
                       std::chrono::hours(24);
      CommandContext ctx{args,  writer, client,
                         state, now,    kFixedUnixMs + state.debug.clock_offset_ms};
      writer.drop_silenced();
      writer.set_silenced(client.replies_silenced());
      chronocached::execute(ctx);
      state.debug.clock_moved = false;
      client.end_request();
      if (!well_framed(output, client.monitor)) __builtin_trap();
      state.config.proto_max_bulk_len = std::min(state.config.proto_max_bulk_len, kFuzzMaxBulkLen);
      state.clients.kill_list.clear();
      client.monitor_feed.clear();
      output.clear();
      if (client.close_after_reply) return false;
    }
    unread.remove_prefix(parsed.consumed);
    consumed.bytes += parsed.consumed;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  static const ScratchDir scratch;
  ServerConfig config;
  if (!scratch.path().empty()) config.dir = scratch.path();
  config.proto_max_bulk_len = kFuzzMaxBulkLen;
  config.threads = 1;
  ServerState state(config, /*hash_seed=*/0x9e3779b97f4a7c15ULL, chronocached::Logger());
  state.process.start_ms = kFixedUnixMs;
  ClientState client;
  client.id = 1;
  client.address = "127.0.0.1:50000";
  client.local_address = "127.0.0.1:6379";
  client.authenticated = config.requirepass.empty();
  std::string output;
  client.output = &output;
  state.clients.by_id.emplace(client.id, &client);

  const std::size_t chunk = data[0] >= 0x80 ? size : 1 + data[0] % 32;
  const std::string_view request(reinterpret_cast<const char*>(data) + 1, size - 1);
  chronocached::resp::Parser parser;
  std::string input;
  for (std::size_t at = 0; at < request.size(); at += chunk) {
    input.append(request.substr(at, chunk));
    if (!process(input, parser, state, client, output)) break;
  }

  // What ~Session does, so WATCH and MONITOR leave nothing dangling.
  state.clients.by_id.erase(client.id);
  std::erase(state.clients.monitors, &client);
  if (client.watching) state.keyspace.watches().unwatch_all(client.id);
  return 0;
}
