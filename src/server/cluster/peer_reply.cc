#include "server/cluster/peer_reply.h"

#include <algorithm>
#include <charconv>
#include <system_error>

namespace chronocached {

std::size_t frame_peer_reply(std::string_view in, PeerReply& reply, bool& malformed) {
  const std::size_t line_end = in.find("\r\n");
  if (line_end == std::string_view::npos) {
    malformed = in.size() > kMaxPeerLine;
    return 0;
  }
  if (line_end > kMaxPeerLine) {
    malformed = true;
    return 0;
  }
  const std::string_view line = line_end == 0 ? std::string_view() : in.substr(1, line_end - 1);
  switch (line_end == 0 ? '\0' : in[0]) {
    case '+':
      reply = {PeerReply::Kind::kSimple, std::string(line)};
      return line_end + 2;
    case '-':
      reply = {PeerReply::Kind::kError, std::string(line)};
      return line_end + 2;
    case ':':
      reply = {PeerReply::Kind::kInteger, std::string(line)};
      return line_end + 2;
    case '_':
      reply = {PeerReply::Kind::kNil, ""};
      return line_end + 2;
    case '$':
    case '=': {
      if (line == "-1") {
        reply = {PeerReply::Kind::kNil, ""};
        return line_end + 2;
      }
      std::size_t length = 0;
      const auto [end, ec] = std::from_chars(line.data(), line.data() + line.size(), length);
      if (ec != std::errc() || end != line.data() + line.size() || length > kMaxPeerBulk) {
        malformed = true;
        return 0;
      }
      if (in.size() < line_end + 2 + length + 2) return 0;
      std::string_view text = in.substr(line_end + 2, length);
      if (in[0] == '=') text.remove_prefix(std::min<std::size_t>(4, text.size()));  // "txt:"
      reply = {PeerReply::Kind::kBulk, std::string(text)};
      return line_end + 2 + length + 2;
    }
    default:
      reply = {PeerReply::Kind::kOther, std::string(in.substr(0, line_end))};
      return line_end + 2;
  }
}

}  // namespace chronocached
