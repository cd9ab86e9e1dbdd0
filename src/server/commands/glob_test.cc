// Pins glob_match to Redis 7.0's stringmatchlen, quirks included: every expectation here is what
// redis-server answers for KEYS <pattern> on a database holding the subject (checked by hand
// against the reference build; tests/integration/test_keyspace.py compares the two servers live).
#include "server/commands/glob.h"

#include <chrono>
#include <string>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

using namespace std::string_view_literals;

TEST(Glob, LiteralsMatchOnlyThemselves) {
  EXPECT_TRUE(glob_match("hello", "hello"));
  EXPECT_FALSE(glob_match("hello", "hell"));
  EXPECT_FALSE(glob_match("hello", "hello!"));
  EXPECT_FALSE(glob_match("hello", "Hello"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
}

TEST(Glob, StarMatchesAnyRunOfBytes) {
  EXPECT_TRUE(glob_match("h*o", "ho"));
  EXPECT_TRUE(glob_match("h*o", "hello"));
  EXPECT_FALSE(glob_match("h*o", "help"));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("a*", "a"));
  EXPECT_TRUE(glob_match("a**", "a"));
  EXPECT_TRUE(glob_match("*llo", "hello"));
  EXPECT_TRUE(glob_match("user:*:name", "user:42:name"));
  EXPECT_FALSE(glob_match("user:*:name", "user:42:age"));
}

TEST(Glob, StarAloneDoesNotMatchTheEmptySubject) {
  // The matcher needs a byte before it looks at '*'; KEYS and SCAN special-case the pattern "*".
  EXPECT_FALSE(glob_match("*", ""));
  EXPECT_FALSE(glob_match("**", ""));
  EXPECT_FALSE(glob_match("?", ""));
}

TEST(Glob, QuestionMarkMatchesExactlyOneByte) {
  EXPECT_TRUE(glob_match("h?llo", "hello"));
  EXPECT_TRUE(glob_match("h?llo", "hallo"));
  EXPECT_FALSE(glob_match("h?llo", "hllo"));
  EXPECT_FALSE(glob_match("h?llo", "heello"));
  EXPECT_TRUE(glob_match("??", "\xff\x00"sv));
}

TEST(Glob, ClassesMatchOneByteOfTheirSet) {
  EXPECT_TRUE(glob_match("h[ae]llo", "hello"));
  EXPECT_TRUE(glob_match("h[ae]llo", "hallo"));
  EXPECT_FALSE(glob_match("h[ae]llo", "hillo"));
  EXPECT_TRUE(glob_match("h[^e]llo", "hallo"));
  EXPECT_FALSE(glob_match("h[^e]llo", "hello"));
  EXPECT_TRUE(glob_match("h[a-b]llo", "hbllo"));
  EXPECT_FALSE(glob_match("h[a-b]llo", "hcllo"));
  EXPECT_TRUE(glob_match("[0-9][0-9]", "42"));
  EXPECT_FALSE(glob_match("[0-9][0-9]", "4x"));
}

TEST(Glob, ReversedRangesSwapTheirBounds) {
  EXPECT_TRUE(glob_match("[z-a]", "m"));
  EXPECT_FALSE(glob_match("[z-a]", "A"));
}

TEST(Glob, RangesCompareBytesAsSignedChars) {
  // [\x01-\xff] is [1..-1], swapped to [-1..1]: only 0xff, 0x00 and 0x01 are inside.
  EXPECT_TRUE(glob_match("[\x01-\xff]", "\xff"));
  EXPECT_TRUE(glob_match("[\x01-\xff]", "\x00"sv));
  EXPECT_TRUE(glob_match("[\x01-\xff]", "\x01"));
  EXPECT_FALSE(glob_match("[\x01-\xff]", "\x02"));
  EXPECT_FALSE(glob_match("[\x01-\xff]", "\x80"));
  EXPECT_TRUE(glob_match("[\x80-\xff]", "\x90"));
}

TEST(Glob, BackslashMakesTheNextByteLiteral) {
  EXPECT_TRUE(glob_match("a\\*b", "a*b"));
  EXPECT_FALSE(glob_match("a\\*b", "axb"));
  EXPECT_TRUE(glob_match("a\\?", "a?"));
  EXPECT_FALSE(glob_match("a\\?", "ab"));
  EXPECT_TRUE(glob_match("\\[x]", "[x]"));
  EXPECT_TRUE(glob_match("[\\]]", "]"));
  EXPECT_TRUE(glob_match("[\\^a]", "^"));
  EXPECT_TRUE(glob_match("[a\\-z]", "-"));
  EXPECT_FALSE(glob_match("[a\\-z]", "m"));
  // A trailing backslash is itself.
  EXPECT_TRUE(glob_match("a\\", "a\\"));
  EXPECT_FALSE(glob_match("a\\", "a"));
}

TEST(Glob, UnclosedClassEndsWithThePattern) {
  EXPECT_TRUE(glob_match("[abc", "b"));
  EXPECT_FALSE(glob_match("[abc", "d"));
  EXPECT_FALSE(glob_match("[abc", "bb"));
  // An empty unclosed class has no members: it never matches, and negated it matches any byte.
  EXPECT_FALSE(glob_match("x[", "x["));
  EXPECT_FALSE(glob_match("[", "\x00"sv));
  EXPECT_TRUE(glob_match("x[^", "xa"));
}

TEST(Glob, ClassBracketFirstIsAnEmptyClass) {
  // "[]" closes at once: a class with no members never matches, its negation always does.
  EXPECT_FALSE(glob_match("[]a]", "a"));
  EXPECT_FALSE(glob_match("[]a]", "]"));
  EXPECT_TRUE(glob_match("[^]a]", "xa]"));
}

TEST(Glob, NulBytesAreOrdinaryBytes) {
  EXPECT_TRUE(glob_match("a\0b"sv, "a\0b"sv));
  EXPECT_FALSE(glob_match("a\0b"sv, "a\0c"sv));
  EXPECT_TRUE(glob_match("a*"sv, "a\0\0"sv));
}

TEST(Glob, NocaseFoldsAsciiLettersOnly) {
  EXPECT_TRUE(glob_match("HeLLo", "hello", true));
  EXPECT_TRUE(glob_match("h[A-C]llo", "hbllo", true));
  EXPECT_TRUE(glob_match("h[a-c]llo", "hBllo", true));
  EXPECT_FALSE(glob_match("HeLLo", "hello", false));
  EXPECT_FALSE(glob_match("\xc3\x89", "\xc3\xa9", true));  // É is not é in the C locale
}

TEST(Glob, StarsStopAfterAThousandNestedRecursions) {
  const std::string subject(1100, 'a');
  std::string pattern;
  for (int i = 0; i < 1000; ++i) pattern += "*a";
  EXPECT_TRUE(glob_match(pattern, subject));
  pattern += "*a";  // the 1001st recursion: Redis gives up and answers "no match"
  EXPECT_FALSE(glob_match(pattern, subject));
}

TEST(Glob, AbusivePatternsFailFast) {
  // CVE-2022-36021's shape: without the skip-longer cut this takes exponential time.
  const std::string subject(64, 'a');
  const std::string pattern = "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b";
  const auto started = std::chrono::steady_clock::now();
  EXPECT_FALSE(glob_match(pattern, subject));
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(1));
}

}  // namespace
}  // namespace chronocached
