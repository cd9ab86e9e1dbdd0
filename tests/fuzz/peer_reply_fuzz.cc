// libFuzzer target for the reply framing of PeerConnection (server/cluster/peer_reply.h), which
// reads what a cluster peer or an --upstream server sends: any bytes, taken reply by reply as
// read_reply does. Checks: a framed reply never claims more bytes than there are, a bulk is never
// over kMaxPeerBulk, and what is left waiting for more is never past kMaxPeerLine unless it is a
// bulk's body (the framing refuses a longer line instead of buffering it).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "server/cluster/peer_reply.h"

using chronocached::frame_peer_reply;
using chronocached::kMaxPeerBulk;
using chronocached::kMaxPeerLine;
using chronocached::PeerReply;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  for (;;) {
    PeerReply reply;
    bool malformed = false;
    const std::size_t used = frame_peer_reply(in, reply, malformed);
    if (used > in.size()) std::abort();
    if (used == 0) {
      if (malformed) return 0;
      const std::size_t line_end = in.find("\r\n");
      const bool bulk_body =
          !in.empty() && (in[0] == '$' || in[0] == '=') && line_end != std::string_view::npos;
      if (!bulk_body && in.size() > kMaxPeerLine) std::abort();  // would wait without end
      return 0;
    }
    if (malformed) std::abort();
    if (reply.kind == PeerReply::Kind::kBulk && reply.text.size() > kMaxPeerBulk) std::abort();
    in.remove_prefix(used);
  }
}
