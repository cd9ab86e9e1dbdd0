// Pins frame_peer_reply (peer_reply.h): each kind of reply it reads, nothing until a reply is
// whole, and a clear refusal (never an endless wait for more bytes) of what can never be one.
#include "server/cluster/peer_reply.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace chronocached {
namespace {

struct Framed {
  std::size_t used = 0;
  bool malformed = false;
  PeerReply reply;
};

Framed frame(std::string_view in) {
  Framed out;
  out.used = frame_peer_reply(in, out.reply, out.malformed);
  return out;
}

TEST(PeerReply, ReadsEachKindAndSaysHowManyBytesItTook) {
  const Framed simple = frame("+OK\r\n:7\r\n");
  EXPECT_EQ(simple.used, 5u);
  EXPECT_EQ(simple.reply.kind, PeerReply::Kind::kSimple);
  EXPECT_EQ(simple.reply.text, "OK");
  EXPECT_EQ(frame("-ERR no\r\n").reply.kind, PeerReply::Kind::kError);
  EXPECT_EQ(frame(":-2\r\n").reply.text, "-2");
  EXPECT_EQ(frame("$-1\r\n").reply.kind, PeerReply::Kind::kNil);
  EXPECT_EQ(frame("_\r\n").reply.kind, PeerReply::Kind::kNil);
  const Framed bulk = frame(std::string("$5\r\na\r\nb\0\r\n", 11));
  EXPECT_EQ(bulk.used, 11u);
  EXPECT_EQ(bulk.reply.kind, PeerReply::Kind::kBulk);
  EXPECT_EQ(bulk.reply.text, std::string("a\r\nb\0", 5));
  EXPECT_EQ(frame("=8\r\ntxt:abcd\r\n").reply.text, "abcd");
  const Framed array = frame("*2\r\n$1\r\na\r\n");
  EXPECT_EQ(array.reply.kind, PeerReply::Kind::kOther);
  EXPECT_EQ(array.used, 4u);  // its first line only
}

TEST(PeerReply, WaitsForTheRestOfAReply) {
  for (std::string_view part : {"", "+O", "+OK\r", "$5\r\nab", "$5\r\nabcde\r"}) {
    const Framed f = frame(part);
    EXPECT_EQ(f.used, 0u) << part;
    EXPECT_FALSE(f.malformed) << part;
  }
}

// `type` then `body` then `end`, built by appending (GCC 12 misreads "lit" + std::string as an
// overlapping copy under -Wrestrict).
std::string line(char type, std::string_view body, std::string_view end) {
  std::string out(1, type);
  out.append(body).append(end);
  return out;
}

TEST(PeerReply, RefusesWhatCanNeverBeAReply) {
  EXPECT_TRUE(frame("$x\r\n").malformed);
  EXPECT_TRUE(frame("$5y\r\n").malformed);
  EXPECT_TRUE(frame(line('$', std::to_string(kMaxPeerBulk + 1), "\r\n")).malformed);
  // A line with no end: refused past kMaxPeerLine, not buffered for ever.
  EXPECT_FALSE(frame(line('+', std::string(kMaxPeerLine - 1, 'a'), "")).malformed);
  EXPECT_TRUE(frame(line('+', std::string(kMaxPeerLine, 'a'), "")).malformed);
  EXPECT_TRUE(frame(line('+', std::string(kMaxPeerLine, 'a'), "\r\n")).malformed);
}

TEST(PeerReply, AnEmptyLineIsAnUnknownReplyNotACrash) {
  const Framed f = frame("\r\n+OK\r\n");
  EXPECT_EQ(f.used, 2u);
  EXPECT_EQ(f.reply.kind, PeerReply::Kind::kOther);
}

}  // namespace
}  // namespace chronocached
