// Pins what the table needs from its hash (base/hash.h): the directory bits (top), the home-group
// fraction (bits 0..31, whose top bits pick the group) and the tag bits (0..6) each spread evenly,
// strings hash the same through every view of them, and every byte of a string counts without a
// read past its end.
#include "chronocache/base/hash.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace chronocache {
namespace {

// How much more often two keys share a bucket than under a perfectly even spread:
// buckets * sum(p_i^2) - 1, which is Pearson's chi-square divided by the key count. The table pays
// for it directly: segment and group imbalance, or extra key compares on tag matches. A random
// hash scores about buckets / keys (0.004 for 256 buckets and 65536 keys); structured inputs such
// as sequential integers may leave a visible pattern, so the bound is "within 5% of ideal".
double excess_collisions(const std::vector<std::uint64_t>& hashes, unsigned shift, unsigned bits) {
  std::vector<double> counts(std::size_t{1} << bits, 0);
  for (std::uint64_t h : hashes) ++counts[(h >> shift) & ((std::uint64_t{1} << bits) - 1)];
  const auto n = static_cast<double>(hashes.size());
  double sum_squares = 0;
  for (double c : counts) sum_squares += (c / n) * (c / n);
  return static_cast<double>(counts.size()) * sum_squares - 1;
}

constexpr double kMaxExcessCollisions = 0.05;

void expect_table_bits_uniform(const std::vector<std::uint64_t>& hashes) {
  EXPECT_LT(excess_collisions(hashes, 56, 8), kMaxExcessCollisions) << "top 8 bits (directory)";
  EXPECT_LT(excess_collisions(hashes, 63, 1), kMaxExcessCollisions) << "top bit (first split)";
  EXPECT_LT(excess_collisions(hashes, 24, 8), kMaxExcessCollisions) << "bits 24..31 (home group)";
  EXPECT_LT(excess_collisions(hashes, 0, 7), kMaxExcessCollisions) << "bits 0..6 (tag)";
  EXPECT_LT(excess_collisions(hashes, 32, 4), kMaxExcessCollisions) << "bits 32..35 (shard)";
}

std::size_t distinct(std::vector<std::uint64_t> hashes) {
  std::sort(hashes.begin(), hashes.end());
  return static_cast<std::size_t>(std::unique(hashes.begin(), hashes.end()) - hashes.begin());
}

std::uint64_t hash_of(std::string_view s) { return DefaultHash<std::string>{}(s); }

TEST(IntegerHash, SpreadsSequentialKeysOverEveryBitRangeTheTableUses) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(65'536);
  for (int i = 0; i < 65'536; ++i) hashes.push_back(DefaultHash<int>{}(i));
  expect_table_bits_uniform(hashes);
}

TEST(IntegerHash, SpreadsStridedAndNegativeKeys) {
  std::vector<std::uint64_t> strided;
  std::vector<std::uint64_t> negative;
  for (int i = 0; i < 65'536; ++i) {
    strided.push_back(DefaultHash<std::uint64_t>{}(std::uint64_t(i) << 20));
    negative.push_back(DefaultHash<int>{}(-i - 1));
  }
  {
    SCOPED_TRACE("keys i << 20");
    expect_table_bits_uniform(strided);
  }
  {
    SCOPED_TRACE("negative keys");
    expect_table_bits_uniform(negative);
  }
}

TEST(IntegerHash, HasNoCollisionsAmongAMillionSequentialKeys) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(1'000'000);
  for (int i = 0; i < 1'000'000; ++i) hashes.push_back(DefaultHash<int>{}(i));
  EXPECT_EQ(distinct(hashes), hashes.size());
}

TEST(IntegerHash, IsDeterministicAndAgreesAcrossIntegerWidths) {
  EXPECT_EQ(DefaultHash<int>{}(12345), DefaultHash<int>{}(12345));
  EXPECT_EQ(DefaultHash<int>{}(12345), DefaultHash<std::int64_t>{}(12345));
  EXPECT_EQ(DefaultHash<unsigned>{}(12345u), DefaultHash<std::uint64_t>{}(12345u));
  EXPECT_NE(DefaultHash<int>{}(1), DefaultHash<int>{}(2));
}

TEST(IntegerHash, EnumsHashLikeTheirValues) {
  enum class Color : int { kRed = 1, kBlue = 2 };
  EXPECT_EQ(DefaultHash<Color>{}(Color::kRed), DefaultHash<int>{}(1));
  EXPECT_NE(DefaultHash<Color>{}(Color::kRed), DefaultHash<Color>{}(Color::kBlue));
}

TEST(FallbackHash, RemixesStdHashSoDistinctValuesDiffer) {
  std::vector<std::uint64_t> hashes;
  hashes.reserve(4096);
  for (int i = 0; i < 4096; ++i) hashes.push_back(DefaultHash<double>{}(i * 0.5));
  EXPECT_EQ(distinct(hashes), hashes.size());
}

TEST(StringHash, IsTheSameForStringStringViewAndCString) {
  const std::string owned = "user:42";
  const std::uint64_t h = DefaultHash<std::string>{}(owned);
  EXPECT_EQ(DefaultHash<std::string>{}(std::string_view("user:42")), h);
  EXPECT_EQ(DefaultHash<std::string>{}("user:42"), h);
  EXPECT_EQ(DefaultHash<std::string_view>{}(std::string_view("user:42")), h);
  EXPECT_EQ(hash_bytes(owned.data(), owned.size()), h);
}

TEST(StringHash, EmbeddedZerosAndLengthsCount) {
  const std::vector<std::string_view> keys = {
      std::string_view(),           std::string_view("\0", 1),   std::string_view("\0\0", 2),
      std::string_view("a", 1),     std::string_view("a\0", 2),  std::string_view("\0a", 2),
      std::string_view("a\0b", 3),  std::string_view("a\0c", 3), std::string_view("ab", 2),
      std::string_view("abc\0", 4), std::string_view("abc", 3),  std::string_view("\0abc", 4)};
  std::vector<std::uint64_t> hashes;
  hashes.reserve(keys.size());
  for (std::string_view k : keys) hashes.push_back(hash_of(k));
  EXPECT_EQ(distinct(hashes), hashes.size());
}

TEST(StringHash, AllZeroStringsOfLengthsZeroToFortyAllDiffer) {
  std::vector<std::uint64_t> hashes;
  const std::string zeros(40, '\0');
  for (std::size_t n = 0; n <= 40; ++n)
    hashes.push_back(hash_of(std::string_view(zeros.data(), n)));
  EXPECT_EQ(distinct(hashes), hashes.size());
}

// Covers each tail path (1..3, 4..8, 9..16 bytes, and the 16-byte loop with every remainder).
// Each key sits in a heap block of exactly its length, so ASan catches any read past its end.
TEST(StringHash, EveryByteCountsForLengthsZeroToForty) {
  for (std::size_t n = 0; n <= 40; ++n) {
    SCOPED_TRACE(n);
    const auto bytes = std::make_unique<char[]>(n);
    for (std::size_t i = 0; i < n; ++i) bytes[i] = static_cast<char>('a' + i % 26);
    const std::uint64_t base = hash_bytes(bytes.get(), n);
    EXPECT_EQ(base, hash_bytes(bytes.get(), n));
    std::vector<std::uint64_t> variants = {base};
    for (std::size_t i = 0; i < n; ++i) {
      const char saved = bytes[i];
      for (char replacement : {'\0', static_cast<char>(saved ^ 1), static_cast<char>(0x80)}) {
        bytes[i] = replacement;
        variants.push_back(hash_bytes(bytes.get(), n));
      }
      bytes[i] = saved;
    }
    EXPECT_EQ(distinct(variants), variants.size());
  }
}

TEST(StringHash, SpreadsSimilarKeysOverEveryBitRangeTheTableUses) {
  std::vector<std::uint64_t> short_keys;
  std::vector<std::uint64_t> long_keys;
  for (int i = 0; i < 65'536; ++i) {
    short_keys.push_back(hash_of("key:" + std::to_string(i)));
    long_keys.push_back(hash_of("session:customer-account:" + std::to_string(i) + ":profile"));
  }
  {
    SCOPED_TRACE("key:N");
    expect_table_bits_uniform(short_keys);
  }
  {
    SCOPED_TRACE("long keys");
    expect_table_bits_uniform(long_keys);
  }
  EXPECT_EQ(distinct(short_keys), short_keys.size());
  EXPECT_EQ(distinct(long_keys), long_keys.size());
}

// The final multiply takes `tail ^ kMix1 ^ length` as one factor, so a 16-byte key whose second
// half equals kMix1 ^ 16 hashes to 0 whatever its first half: unlimited collisions that anyone can
// build from the public constants. In the table they share one segment that no split can divide.
TEST(StringHash, NoFixedSecondHalfMakesSixteenByteKeysCollide) {
  const std::uint64_t poisoned_tail = detail::kMix1 ^ 16;
  std::vector<std::uint64_t> hashes;
  for (std::uint64_t i = 0; i < 64; ++i) {
    char key[16];
    const std::uint64_t head = hash_integer(i);
    std::memcpy(key, &head, 8);
    std::memcpy(key + 8, &poisoned_tail, 8);
    hashes.push_back(hash_bytes(key, sizeof key));
  }
  EXPECT_EQ(distinct(hashes), hashes.size());
}

}  // namespace
}  // namespace chronocache
