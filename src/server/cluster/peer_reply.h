// PeerReply: one reply a peer or an upstream sent to a PeerConnection, and the framing that cuts
// it from the bytes received. Only the replies the commands that talk to a peer get are read in
// full: a simple string, an error, an integer, a nil, a bulk or verbatim string. Arrays and the
// rest are kOther, their first line only, and a caller that meets one cannot trust what follows
// (the rest of the array) and drops the connection.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace chronocached {

struct PeerReply {
  enum class Kind : std::uint8_t { kSimple, kError, kInteger, kBulk, kNil, kOther };
  Kind kind = Kind::kOther;
  std::string text;  // the line without its type byte, or the bulk's bytes ("txt:" dropped)
};

// Redis's proto-max-bulk-len: a longer bulk is refused, not buffered.
inline constexpr std::size_t kMaxPeerBulk = std::size_t{512} << 20;
// The longest line (type byte to CRLF) waited for: a peer sending more without a CRLF is
// refused rather than buffered without end.
inline constexpr std::size_t kMaxPeerLine = std::size_t{64} << 10;

// The length of the first complete reply in `in`, which it stores in `reply`; 0 while more bytes
// must come, or (with `malformed` set) when they never can make one: a bulk length that is no
// number or over kMaxPeerBulk, or a line past kMaxPeerLine.
std::size_t frame_peer_reply(std::string_view in, PeerReply& reply, bool& malformed);

}  // namespace chronocached
