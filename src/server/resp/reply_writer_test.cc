#include "server/resp/reply_writer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace chronocached::resp {
namespace {

// The bytes one write produces in RESP2 and in RESP3.
template <class Write>
std::pair<std::string, std::string> both(Write write) {
  std::string out2, out3;
  ReplyWriter w2(out2), w3(out3);
  w3.set_protocol(3);
  write(w2);
  write(w3);
  return {out2, out3};
}

using Pair = std::pair<std::string, std::string>;

TEST(ReplyWriter, ScalarsAreTheSameInBothProtocols) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.simple("PONG"); }), Pair("+PONG\r\n", "+PONG\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.ok(); }), Pair("+OK\r\n", "+OK\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.error("ERR syntax error"); }),
            Pair("-ERR syntax error\r\n", "-ERR syntax error\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.integer(-42); }), Pair(":-42\r\n", ":-42\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.bulk(std::string_view("a\0b", 3)); }),
            Pair(std::string("$3\r\na\0b\r\n", 9), std::string("$3\r\na\0b\r\n", 9)));
  EXPECT_EQ(both([](ReplyWriter& w) { w.bulk(""); }), Pair("$0\r\n\r\n", "$0\r\n\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.array(2); }), Pair("*2\r\n", "*2\r\n"));
}

TEST(ReplyWriter, AnErrorStaysOneLine) {
  // An error that quotes an argument holding CR or LF: the reply is still one line, so the
  // argument's tail cannot be read as a reply of its own.
  EXPECT_EQ(
      both([](ReplyWriter& w) { w.error("ERR Unknown client type 'a\r\n+OK\nb'"); }),
      Pair("-ERR Unknown client type 'a  +OK b'\r\n", "-ERR Unknown client type 'a  +OK b'\r\n"));
}

TEST(ReplyWriter, IntegersAtTheLimits) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.integer(std::numeric_limits<long long>::min()); }).first,
            ":-9223372036854775808\r\n");
  EXPECT_EQ(both([](ReplyWriter& w) { w.integer(std::numeric_limits<long long>::max()); }).first,
            ":9223372036854775807\r\n");
  EXPECT_EQ(both([](ReplyWriter& w) { w.integer(0); }).first, ":0\r\n");
}

TEST(ReplyWriter, NullsDependOnTheProtocol) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.null(); }), Pair("$-1\r\n", "_\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.null_array(); }), Pair("*-1\r\n", "_\r\n"));
}

TEST(ReplyWriter, AggregatesDependOnTheProtocol) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.map(3); }), Pair("*6\r\n", "%3\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.map(0); }), Pair("*0\r\n", "%0\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.set(2); }), Pair("*2\r\n", "~2\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.push(3); }), Pair("*3\r\n", ">3\r\n"));
}

TEST(ReplyWriter, BooleansAndDoubles) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.boolean(true); }), Pair(":1\r\n", "#t\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.boolean(false); }), Pair(":0\r\n", "#f\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(1.5); }), Pair("$3\r\n1.5\r\n", ",1.5\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(0.1); }),
            Pair("$19\r\n0.10000000000000001\r\n", ",0.10000000000000001\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(INFINITY); }),
            Pair("$3\r\ninf\r\n", ",inf\r\n"));
  EXPECT_EQ(both([](ReplyWriter& w) { w.double_value(-INFINITY); }),
            Pair("$4\r\n-inf\r\n", ",-inf\r\n"));
}

TEST(ReplyWriter, VerbatimIsABulkInResp2) {
  EXPECT_EQ(both([](ReplyWriter& w) { w.verbatim("# Server\r\n"); }),
            Pair("$10\r\n# Server\r\n\r\n", "=14\r\ntxt:# Server\r\n\r\n"));
}

TEST(ReplyWriter, BigNumberIsABulkInResp2) {
  EXPECT_EQ(
      both([](ReplyWriter& w) { w.big_number("-123456789012345678901234567890"); }),
      Pair("$31\r\n-123456789012345678901234567890\r\n", "(-123456789012345678901234567890\r\n"));
}

TEST(ReplyWriter, AnAttributeCountsPairs) {
  std::string out;
  ReplyWriter w(out);
  w.set_protocol(3);
  w.attribute(2);
  EXPECT_EQ(out, "|2\r\n");
}

TEST(ReplyWriter, ProtocolCanChangeBetweenReplies) {
  std::string out;
  ReplyWriter w(out);
  EXPECT_FALSE(w.resp3());
  w.null();
  w.set_protocol(3);
  EXPECT_TRUE(w.resp3());
  w.null();
  w.set_protocol(2);
  w.null();
  EXPECT_EQ(out, "$-1\r\n_\r\n$-1\r\n");
}

TEST(ReplyWriter, MarkAndTruncateUndoAReply) {
  std::string out;
  ReplyWriter w(out);
  w.ok();
  const std::size_t mark = w.mark();
  w.array(2);
  w.bulk("a");
  w.bulk("b");
  w.truncate_to(mark);
  EXPECT_EQ(out, "+OK\r\n");
  w.integer(1);
  EXPECT_EQ(out, "+OK\r\n:1\r\n");
}

TEST(ReplyWriter, SilencedRepliesAreReadableButNeverReachTheOutput) {
  std::string out;
  ReplyWriter w(out);
  w.array(2);
  w.set_silenced(true);
  const std::size_t mark = w.mark();
  w.error("ERR dropped");
  EXPECT_EQ(w.buffer().substr(mark), "-ERR dropped\r\n") << "errors are still counted";
  w.set_silenced(false);
  w.bulk("kept");
  w.set_silenced(true);
  w.drop_silenced();
  EXPECT_EQ(w.mark(), 0u);
  EXPECT_EQ(out, "*2\r\n$4\r\nkept\r\n") << "an EXEC silenced halfway keeps its first parts";
}

TEST(ReplyWriter, AppendsToExistingOutput) {
  std::string out = "+QUEUED\r\n";
  ReplyWriter w(out);
  w.integer(7);
  EXPECT_EQ(out, "+QUEUED\r\n:7\r\n");
}

TEST(FormatDouble, MatchesRedis70) {
  EXPECT_EQ(format_double(0), "0");
  EXPECT_EQ(format_double(-0.0), "-0");
  EXPECT_EQ(format_double(3), "3");
  EXPECT_EQ(format_double(1e20), "1e+20");
  EXPECT_EQ(format_double(1.0 / 3), "0.33333333333333331");
  EXPECT_EQ(format_double(std::nan("")), "nan");
}

TEST(FormatLongDouble, MatchesIncrbyfloat) {
  EXPECT_EQ(format_long_double(10.5L), "10.5");
  EXPECT_EQ(format_long_double(3.0L), "3");
  EXPECT_EQ(format_long_double(0.1L), "0.1");
  EXPECT_EQ(format_long_double(-0.0L), "0");
  EXPECT_EQ(format_long_double(-1.25L), "-1.25");
  EXPECT_EQ(format_long_double(5.0e3L), "5000");
  EXPECT_EQ(format_long_double(1e20L), "100000000000000000000");
}

}  // namespace
}  // namespace chronocached::resp
