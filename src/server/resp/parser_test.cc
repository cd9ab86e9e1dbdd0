#include "server/resp/parser.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace chronocached::resp {
namespace {

using Args = std::vector<std::string>;

// One parse of `data`; the arguments copied out so they outlive the input.
struct Parsed {
  ParseResult result;
  Args args;
};

Parsed parse_once(Parser& parser, std::string_view data, const ParserLimits& limits = {}) {
  std::vector<std::string_view> views;
  Parsed p{parser.parse(data, limits, views), {}};
  if (p.result.status == ParseStatus::kCommand) p.args.assign(views.begin(), views.end());
  return p;
}

Parsed parse_once(std::string_view data, const ParserLimits& limits = {}) {
  Parser parser;
  return parse_once(parser, data, limits);
}

// The error text for `data`, or "" when it is not an error.
std::string error_for(std::string_view data, const ParserLimits& limits = {}) {
  Parser parser;  // the error may view the parser's own text: copied while it lives
  const Parsed p = parse_once(parser, data, limits);
  return p.result.status == ParseStatus::kError ? std::string(p.result.error) : std::string();
}

TEST(RespParser, MultibulkCommandViewsTheInput) {
  const std::string data = "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n";
  Parser parser;
  std::vector<std::string_view> args;
  const ParseResult r = parser.parse(data, {}, args);
  ASSERT_EQ(r.status, ParseStatus::kCommand);
  EXPECT_EQ(r.consumed, data.size());
  ASSERT_EQ(args.size(), 3u);
  EXPECT_EQ(args[2], "hello");
  // Zero copy: the argument points into the caller's bytes.
  EXPECT_GE(args[2].data(), data.data());
  EXPECT_LT(args[2].data(), data.data() + data.size());
}

TEST(RespParser, BulksAreBinarySafe) {
  const std::string value("a\0\r\n\xff", 5);
  const std::string data = "*2\r\n$4\r\nECHO\r\n$5\r\n" + value + "\r\n";
  const Parsed p = parse_once(data);
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.args, (Args{"ECHO", value}));
}

TEST(RespParser, EmptyBulkIsAnArgument) {
  const Parsed p = parse_once("*2\r\n$4\r\nECHO\r\n$0\r\n\r\n");
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.args, (Args{"ECHO", ""}));
}

TEST(RespParser, PipelinedCommandsComeOneAtATime) {
  const std::string data = "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$1\r\nx\r\nPING\r\n";
  Parser parser;
  std::string_view rest = data;
  std::vector<Args> commands;
  while (!rest.empty()) {
    const Parsed p = parse_once(parser, rest);
    ASSERT_EQ(p.result.status, ParseStatus::kCommand);
    commands.push_back(p.args);
    rest.remove_prefix(p.result.consumed);
  }
  EXPECT_EQ(commands, (std::vector<Args>{{"PING"}, {"ECHO", "x"}, {"PING"}}));
}

TEST(RespParser, ResumesACommandThatArrivesByteByByte) {
  const std::string data = "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$10\r\n0123456789\r\n";
  Parser parser;
  for (std::size_t n = 0; n < data.size(); ++n) {
    const Parsed p = parse_once(parser, std::string_view(data).substr(0, n));
    ASSERT_EQ(p.result.status, ParseStatus::kNeedMore) << "after " << n << " bytes";
  }
  const Parsed p = parse_once(parser, data);
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.result.consumed, data.size());
  EXPECT_EQ(p.args, (Args{"SET", "key", "0123456789"}));
}

TEST(RespParser, ResumesAfterTheCallerMovesTheUnparsedBytes) {
  const std::string data = "*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n";
  Parser parser;
  std::string first = data.substr(0, 16);
  ASSERT_EQ(parse_once(parser, first).result.status, ParseStatus::kNeedMore);
  // A different buffer, same bytes from the command's start: the copy is the point of the test.
  const std::string moved = data;  // NOLINT(performance-unnecessary-copy-initialization)
  const Parsed p = parse_once(parser, moved);
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.args, (Args{"ECHO", "hello"}));
}

TEST(RespParser, NeedMoreAnnouncesTheSizeOfAPendingBulk) {
  const Parsed p = parse_once("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1000000\r\nabc");
  ASSERT_EQ(p.result.status, ParseStatus::kNeedMore);
  // Header bytes (4 + 9 + 7 + 10) plus the value and its CRLF.
  EXPECT_EQ(p.result.wanted, 30u + 1000000u + 2u);
  EXPECT_EQ(parse_once("*1\r\n$4").result.wanted, 0u);  // not known yet
}

TEST(RespParser, EmptyMultibulksAreSkipped) {
  for (std::string_view data : {"*0\r\n", "*-1\r\n", "*-5\r\n"}) {
    const Parsed p = parse_once(data);
    EXPECT_EQ(p.result.status, ParseStatus::kEmpty) << data;
    EXPECT_EQ(p.result.consumed, data.size()) << data;
  }
}

TEST(RespParser, BulkTrailerIsNotChecked) {
  // As Redis: the two bytes after a bulk are skipped unread.
  const Parsed p = parse_once("*1\r\n$4\r\nPINGxx");
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.args, (Args{"PING"}));
}

TEST(RespParser, LengthsFollowRedisString2ll) {
  EXPECT_EQ(error_for("*01\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("*+1\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("*-0\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("* 1\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("*1 \r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("*\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("*2147483648\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("*99999999999999999999\r\n"), "ERR Protocol error: invalid multibulk length");
  EXPECT_EQ(error_for("*1\r\n$01\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(error_for("*1\r\n$-1\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(error_for("*1\r\n$+4\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(error_for("*1\r\n$\r\n"), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(error_for("*1\r\n$0\r\n\r\n"), "");
}

TEST(RespParser, BulkOverProtoMaxBulkLenIsRefusedFromItsHeader) {
  ParserLimits limits;
  limits.max_bulk_len = 100;
  EXPECT_EQ(error_for("*1\r\n$101\r\n", limits), "ERR Protocol error: invalid bulk length");
  EXPECT_EQ(parse_once("*1\r\n$100\r\n", limits).result.status, ParseStatus::kNeedMore);
}

TEST(RespParser, ExpectedDollarQuotesTheByteOnceTheLineHasEnded) {
  // Redis judges the first byte only after the header line's CR has arrived.
  EXPECT_EQ(parse_once("*1\r\nx").result.status, ParseStatus::kNeedMore);
  EXPECT_EQ(error_for("*1\r\nxyz\r\n"), "ERR Protocol error: expected '$', got 'x'");
  EXPECT_EQ(error_for("*2\r\n$1\r\na\r\n:1\r\n"), "ERR Protocol error: expected '$', got ':'");
  // CR and LF are shown as spaces (Redis keeps error replies on one line).
  EXPECT_EQ(error_for("*1\r\n\r\n"), "ERR Protocol error: expected '$', got ' '");
  EXPECT_EQ(error_for("*1\r\n\n\r\n"), "ERR Protocol error: expected '$', got ' '");
  EXPECT_EQ(error_for("*1\r\n\xff\r\n"), "ERR Protocol error: expected '$', got '\xff'");
}

TEST(RespParser, LinesWithoutEndAreRefusedPast64KiB) {
  const std::string digits(64 * 1024, '1');
  EXPECT_EQ(parse_once("*" + digits.substr(1)).result.status, ParseStatus::kNeedMore);
  EXPECT_EQ(error_for("*" + digits), "ERR Protocol error: too big mbulk count string");
  EXPECT_EQ(error_for("*1\r\n$" + digits), "ERR Protocol error: too big bulk count string");
  EXPECT_EQ(parse_once(std::string(64 * 1024, 'x')).result.status, ParseStatus::kNeedMore);
  EXPECT_EQ(error_for(std::string(64 * 1024 + 1, 'x')),
            "ERR Protocol error: too big inline request");
  // A line that has ended is judged on its content, however long.
  EXPECT_EQ(error_for("*" + digits + "\r\n"), "ERR Protocol error: invalid multibulk length");
}

TEST(RespParser, NulBeforeTheLineEndStallsLikeRedisStrchr) {
  EXPECT_EQ(parse_once(std::string_view("*1\0\r\n", 5)).result.status, ParseStatus::kNeedMore);
  EXPECT_EQ(parse_once(std::string_view("ECHO a\0b\r\n", 10)).result.status,
            ParseStatus::kNeedMore);
  std::string stalled("ECHO \0", 6);
  stalled.append(64 * 1024, 'b');
  EXPECT_EQ(error_for(stalled), "ERR Protocol error: too big inline request");
  // After the line's end, NUL is ordinary data.
  const Parsed p = parse_once(std::string_view("*1\r\n$2\r\n\0\0\r\n", 12));
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.args, (Args{std::string(2, '\0')}));
}

TEST(RespParser, UnauthenticatedClientsGetTighterLimits) {
  ParserLimits limits;
  limits.authenticated = false;
  EXPECT_EQ(error_for("*11\r\n", limits), "ERR Protocol error: unauthenticated multibulk length");
  EXPECT_EQ(parse_once("*10\r\n", limits).result.status, ParseStatus::kNeedMore);
  EXPECT_EQ(error_for("*1\r\n$16385\r\n", limits),
            "ERR Protocol error: unauthenticated bulk length");
  EXPECT_EQ(parse_once("*1\r\n$16384\r\n", limits).result.status, ParseStatus::kNeedMore);
  // An invalid length is reported as such first, as Redis orders its checks.
  EXPECT_EQ(error_for("*1\r\n$abc\r\n", limits), "ERR Protocol error: invalid bulk length");
}

TEST(RespParser, InlineSplitsLikeSdssplitargs) {
  struct Case {
    std::string_view line;
    Args args;
  };
  const Case cases[] = {
      {"PING\r\n", {"PING"}},
      {"PING\n", {"PING"}},
      {"  SET  k   v  \r\n", {"SET", "k", "v"}},
      {"ECHO \"a b\"\r\n", {"ECHO", "a b"}},
      {"ECHO \"\\x41\\x4g\\n\\t\\r\\b\\a\\\\\\\"\\z\"\r\n", {"ECHO", "Ax4g\n\t\r\b\a\\\"z"}},
      {"ECHO 'it\\'s' 'a\\nb'\r\n", {"ECHO", "it's", "a\\nb"}},
      {"ECHO a\"b c\"\r\n", {"ECHO", "ab c"}},  // a quote may open mid-word
      {"ECHO \"\" ''\r\n", {"ECHO", "", ""}},
      {"ECHO a\vb\r\n", {"ECHO", "a\vb"}},  // \v ends no bare word
      {"ECHO \"a\"\v\r\n", {"ECHO", "a"}},  // but is a blank after a quote
      {"ECHO a\rb\r\n", {"ECHO", "a", "b"}},
  };
  for (const Case& c : cases) {
    const Parsed p = parse_once(c.line);
    ASSERT_EQ(p.result.status, ParseStatus::kCommand) << c.line;
    EXPECT_EQ(p.result.consumed, c.line.size()) << c.line;
    EXPECT_EQ(p.args, c.args) << c.line;
  }
}

TEST(RespParser, InlineQuotingErrors) {
  for (std::string_view line : {"SET a \"b\r\n", "SET a 'b\r\n", "SET a \"b\"c\r\n",
                                "SET a 'b'c\r\n", "ECHO \"a\\\"\r\n"}) {
    EXPECT_EQ(error_for(line), "ERR Protocol error: unbalanced quotes in request") << line;
  }
}

TEST(RespParser, BlankInlineLinesAreSkipped) {
  for (std::string_view line : {"\r\n", "\n", "   \t \r\n"}) {
    const Parsed p = parse_once(line);
    EXPECT_EQ(p.result.status, ParseStatus::kEmpty) << line;
    EXPECT_EQ(p.result.consumed, line.size());
  }
}

TEST(RespParser, InlineWaitsForItsNewline) {
  EXPECT_EQ(parse_once("PING").result.status, ParseStatus::kNeedMore);
  EXPECT_EQ(parse_once("ECHO \"open").result.status, ParseStatus::kNeedMore);
}

TEST(RespParser, ResetForgetsAPartialCommand) {
  Parser parser;
  ASSERT_EQ(parse_once(parser, "*2\r\n$4\r\nECHO\r\n").result.status, ParseStatus::kNeedMore);
  parser.reset();
  const Parsed p = parse_once(parser, "PING\r\n");
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.args, (Args{"PING"}));
}

TEST(RespParser, ErrorMidCommandLeavesTheParserReady) {
  Parser parser;
  ASSERT_EQ(parse_once(parser, "*2\r\n$4\r\nECHO\r\n").result.status, ParseStatus::kNeedMore);
  ASSERT_EQ(parse_once(parser, "*2\r\n$4\r\nECHO\r\n$x\r\n").result.status, ParseStatus::kError);
  const Parsed p = parse_once(parser, "*1\r\n$4\r\nPING\r\n");
  ASSERT_EQ(p.result.status, ParseStatus::kCommand);
  EXPECT_EQ(p.args, (Args{"PING"}));
}

}  // namespace
}  // namespace chronocached::resp
