#include "server/resp/framed_batch.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace chronocached::resp {
namespace {

using Args = std::vector<std::string>;

std::string multibulk(const Args& args) {
  std::string out = "*";  // appended piece by piece: GCC 12's -Wrestrict misfires on a + b + c
  out += std::to_string(args.size());
  out += "\r\n";
  for (const std::string& a : args) {
    out += "$";
    out += std::to_string(a.size());
    out += "\r\n";
    out += a;
    out += "\r\n";
  }
  return out;
}

Args copied(std::span<const std::string_view> args) { return Args(args.begin(), args.end()); }

// What parse() returns, command after command, as (args, consumed) pairs.
std::vector<std::pair<Args, std::size_t>> parsed_one_by_one(std::string_view data,
                                                            const ParserLimits& limits) {
  Parser parser;
  std::vector<std::string_view> views;
  std::vector<std::pair<Args, std::size_t>> out;
  while (true) {
    const ParseResult r = parser.parse(data, limits, views);
    if (r.status != ParseStatus::kCommand) return out;
    out.emplace_back(Args(views.begin(), views.end()), r.consumed);
    data.remove_prefix(r.consumed);
  }
}

TEST(FramedBatch, FramesEachCompleteCommandAsParseWould) {
  const std::string data = multibulk({"GET", "a"}) + multibulk({"SET", "b", "x y"}) +
                           multibulk({"PING"}) + "*2\r\n$3\r\nGET\r\n$1";  // the last is partial
  Parser parser;
  FramedBatch batch;
  batch.frame(parser, data, {});
  const auto expected = parsed_one_by_one(data, {});
  ASSERT_EQ(batch.size(), 3u);
  ASSERT_EQ(expected.size(), 3u);
  EXPECT_EQ(copied(batch.peek(1).args), (Args{"SET", "b", "x y"}));
  for (const auto& [args, consumed] : expected) {
    const FramedBatch::Command c = batch.next();
    EXPECT_EQ(copied(c.args), args);
    EXPECT_EQ(c.consumed, consumed);
  }
  EXPECT_TRUE(batch.empty());
}

TEST(FramedBatch, StopsAtWhatOnlyTheParserHandles) {
  Parser parser;
  FramedBatch batch;
  // An inline command, an empty multibulk and a malformed header end the batch before them.
  for (std::string_view rest : {"PING\r\n", "*0\r\n", "*1\r\n$x\r\n", "\r\n"}) {
    std::string data = multibulk({"GET", "a"});
    data += rest;
    data += multibulk({"GET", "b"});
    batch.frame(parser, data, {});
    EXPECT_EQ(batch.size(), 1u) << rest;
  }
}

TEST(FramedBatch, FramesNothingInsideAPartlyParsedCommand) {
  Parser parser;
  std::vector<std::string_view> views;
  ASSERT_EQ(parser.parse("*2\r\n$4\r\nECHO\r\n", {}, views).status, ParseStatus::kNeedMore);
  FramedBatch batch;
  batch.frame(parser, "*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n", {});
  EXPECT_TRUE(batch.empty());  // peek would misread the parser's resumed command
}

TEST(FramedBatch, KeepsItsBounds) {
  std::string data;
  for (int i = 0; i < 100; ++i) data += multibulk({"GET", std::to_string(i)});
  Parser parser;
  FramedBatch batch;
  batch.frame(parser, data, {});
  EXPECT_EQ(batch.size(), FramedBatch::kMaxCommands);

  // A command wider than the room left is not framed (nor its arguments built): it ends the batch.
  Args wide{"MSET"};
  for (std::size_t i = 0; i < FramedBatch::kMaxArgs; ++i) wide.push_back("v");
  batch.frame(parser, multibulk({"GET", "a"}) + multibulk(wide), {});
  EXPECT_EQ(batch.size(), 1u);
}

TEST(FramedBatch, AppliesTheLimitsItIsGiven) {
  Parser parser;
  FramedBatch batch;
  const std::string data = multibulk({"SET", "k", std::string(100, 'v')});
  ParserLimits limits;
  limits.max_bulk_len = 99;
  batch.frame(parser, data, limits);
  EXPECT_TRUE(batch.empty());  // the parser reports the error; framing never accepts it
  limits.max_bulk_len = 100;
  batch.frame(parser, data, limits);
  EXPECT_EQ(batch.size(), 1u);
}

TEST(FramedBatch, ClearDropsTheRest) {
  Parser parser;
  FramedBatch batch;
  batch.frame(parser, multibulk({"GET", "a"}) + multibulk({"GET", "b"}), {});
  (void)batch.next();
  batch.clear();
  EXPECT_TRUE(batch.empty());
  EXPECT_EQ(batch.size(), 0u);
}

}  // namespace
}  // namespace chronocached::resp
