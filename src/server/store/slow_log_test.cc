// Pins SlowLog (slow_log.h): the threshold, the order and bound of the entries, and the cuts
// and redactions Redis 7 makes to what it keeps.
#include "server/store/slow_log.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

std::vector<std::string> args_of(const SlowLog& log, std::size_t index) {
  std::vector<std::string> args;
  std::size_t i = 0;
  log.for_each_newest(index + 1, [&](const SlowLog::Entry& e) {
    if (i++ == index) args = e.args;
  });
  return args;
}

TEST(SlowLog, TheThresholdIsInclusiveZeroTakesAllAndNegativeNone) {
  SlowLog log;
  log.configure({.slower_than_usec = 100, .max_len = 10});
  EXPECT_FALSE(log.wants(99));
  EXPECT_TRUE(log.wants(100));
  log.configure({.slower_than_usec = 0, .max_len = 10});
  EXPECT_TRUE(log.wants(0));
  log.configure({.slower_than_usec = -1, .max_len = 10});
  EXPECT_FALSE(log.wants(1'000'000'000));
}

TEST(SlowLog, EntriesComeNewestFirstBoundedByMaxLenWithIdsThatNeverRewind) {
  SlowLog log;
  log.configure({.slower_than_usec = 0, .max_len = 2});
  const std::string_view names[] = {"a", "b", "c"};
  for (std::string_view name : names)
    log.push({.args = std::span(&name, 1), .usec = 7, .unix_seconds = 1000, .peer = "p:1"});
  ASSERT_EQ(log.size(), 2u);
  std::vector<std::uint64_t> ids;
  log.for_each_newest(10, [&](const SlowLog::Entry& e) {
    ids.push_back(e.id);
    EXPECT_EQ(e.usec, 7u);
    EXPECT_EQ(e.unix_seconds, 1000);
    EXPECT_EQ(e.peer, "p:1");
  });
  EXPECT_EQ(ids, (std::vector<std::uint64_t>{2, 1}));
  EXPECT_EQ(args_of(log, 0), std::vector<std::string>{"c"});
  log.reset();
  EXPECT_EQ(log.size(), 0u);
  log.push({.args = std::span(&names[0], 1)});
  log.for_each_newest(1, [](const SlowLog::Entry& e) { EXPECT_EQ(e.id, 3u); });
}

TEST(SlowLog, LongCommandsAndArgumentsAreCutAsRedisCutsThem) {
  SlowLog log;
  log.configure({.slower_than_usec = 0, .max_len = 10});
  std::vector<std::string> words;
  words.reserve(40);
  for (int i = 0; i < 40; ++i) words.push_back(std::string(1, 'w').append(std::to_string(i)));
  words[1] = std::string(200, 'x');
  std::vector<std::string_view> args(words.begin(), words.end());
  log.push({.args = args});
  const std::vector<std::string> kept = args_of(log, 0);
  ASSERT_EQ(kept.size(), SlowLog::kMaxArgs);
  EXPECT_EQ(kept[0], "w0");
  std::string cut(128, 'x');
  cut.append("... (72 more bytes)");
  EXPECT_EQ(kept[1], cut);
  EXPECT_EQ(kept[30], "w30");
  EXPECT_EQ(kept[31], "... (9 more arguments)");  // 40 - 32 + 1: w31 .. w39

  std::vector<std::string_view> exactly(args.begin(), args.begin() + 32);
  log.push({.args = exactly});
  EXPECT_EQ(args_of(log, 0)[31], "w31");  // 32 fit whole
}

TEST(SlowLog, RedactedArgumentsAreKeptAsRedacted) {
  SlowLog log;
  log.configure({.slower_than_usec = 0, .max_len = 10});
  const std::string_view args[] = {"HELLO", "3", "AUTH", "user", "secret"};
  log.push({.args = args, .redacted = 1u << 3 | 1u << 4, .client_name = "app"});
  EXPECT_EQ(args_of(log, 0),
            (std::vector<std::string>{"HELLO", "3", "AUTH", "(redacted)", "(redacted)"}));
  log.for_each_newest(1, [](const SlowLog::Entry& e) { EXPECT_EQ(e.client_name, "app"); });
}

}  // namespace
}  // namespace chronocached
