// Blob: a key and its value in one block; what the server's memory per key rests on.
#include "server/store/blob.h"

#include <string>
#include <utility>

#include <gtest/gtest.h>

namespace chronocached {
namespace {

TEST(Blob, RecordKeepsKeyAndValueApart) {
  const Blob b = Blob::record("key:1", "value");
  EXPECT_EQ(b.key(), "key:1");
  EXPECT_EQ(b.view(), "value");
  EXPECT_EQ(b.size(), 5u);
  EXPECT_FALSE(b.grown());
}

TEST(Blob, PlainBytesHaveAnEmptyKeyAndTheEmptyBlobOwnsNothing) {
  EXPECT_EQ(Blob("abc").key(), "");
  EXPECT_EQ(Blob("abc").view(), "abc");
  const Blob empty;
  EXPECT_EQ(empty.view(), "");
  EXPECT_EQ(empty.heap_bytes(), 0u);
  EXPECT_EQ(Blob::record("", "").key(), "");  // Redis allows the empty key
}

TEST(Blob, BytesAreBinarySafe) {
  const std::string key("k\0\r\n", 4);
  const std::string value("\0\xff\0", 3);
  const Blob b = Blob::record(key, value);
  EXPECT_EQ(b.key(), key);
  EXPECT_EQ(b.view(), value);
}

// The memory claim of docs/design/server.md: a 16-byte key and a 16-byte value fit one
// 48-byte glibc chunk (40 usable bytes): 4 header + 1 key length + 32 bytes. heap_bytes() is the
// whole chunk, header included: what the record takes from the heap.
TEST(Blob, SixteenByteKeyAndValueFitOneFortyEightByteChunk) {
  const Blob b = Blob::record("key:000000123456", "0123456789abcdef");
  EXPECT_LE(b.heap_bytes(), 48u);
  EXPECT_EQ(chronocache::HeapBytes<Blob>::of(b), b.heap_bytes());
}

TEST(Blob, LongKeysUseAMultiByteLength) {
  const std::string key(300, 'k');
  const Blob b = Blob::record(key, "v");
  EXPECT_EQ(b.key(), key);
  EXPECT_EQ(b.view(), "v");
}

TEST(Blob, AssignKeepsTheKeyAndReusesTheBlockWhenTheValueFits) {
  Blob b = Blob::record("key", "0123456789");
  const std::size_t bytes = b.heap_bytes();
  b.assign("abc");
  EXPECT_EQ(b.key(), "key");
  EXPECT_EQ(b.view(), "abc");
  EXPECT_EQ(b.heap_bytes(), bytes);
  b.assign(std::string(1000, 'x'));
  EXPECT_EQ(b.key(), "key");
  EXPECT_EQ(b.view(), std::string(1000, 'x'));
  EXPECT_FALSE(b.grown());
}

TEST(Blob, AppendGrowsGeometricallyAndMarksGrown) {
  Blob b = Blob::record("k", "");
  std::string expected;
  std::size_t reallocations = 0;
  std::size_t last_bytes = b.heap_bytes();
  for (int i = 0; i < 10000; ++i) {
    b.append("ab");
    expected += "ab";
    if (b.heap_bytes() != last_bytes) ++reallocations;
    last_bytes = b.heap_bytes();
  }
  EXPECT_EQ(b.view(), expected);
  EXPECT_EQ(b.key(), "k");
  EXPECT_TRUE(b.grown());
  EXPECT_LT(reallocations, 30u);  // doubling: about log2(20000)
}

TEST(Blob, AppendToTheEmptyBlobMakesAPlainString) {
  Blob b;
  b.append("xyz");
  EXPECT_EQ(b.view(), "xyz");
  EXPECT_EQ(b.key(), "");
}

TEST(Blob, WriteAtOverwritesExtendsAndZeroFillsGaps) {
  Blob b = Blob::record("k", "Hello World");
  b.write_at(6, "Redis");
  EXPECT_EQ(b.view(), "Hello Redis");
  b.write_at(14, "!");
  EXPECT_EQ(b.view(), std::string("Hello Redis\0\0\0!", 15));
  EXPECT_EQ(b.key(), "k");
  EXPECT_TRUE(b.grown());
}

TEST(Blob, CopiesAreDeepAndMovesLeaveAnEmptyBlob) {
  Blob a = Blob::record("k", "v");
  Blob copy = a;
  copy.assign("w");
  EXPECT_EQ(a.view(), "v");
  Blob moved = std::move(a);
  EXPECT_EQ(moved.view(), "v");
  EXPECT_EQ(a.heap_bytes(), 0u);  // NOLINT(bugprone-use-after-move): moved-from is empty
}

TEST(BlobHashAndEq, CompareAndHashByKeyOnly) {
  const BlobHash hash{12345};
  const BlobEq eq;
  const Blob a = Blob::record("key", "one");
  const Blob b = Blob::record("key", "two");
  EXPECT_TRUE(eq(a, b));
  EXPECT_TRUE(eq(a, std::string_view("key")));
  EXPECT_FALSE(eq(a, std::string_view("one")));
  EXPECT_EQ(hash(a), hash(std::string_view("key")));
  EXPECT_NE(BlobHash{1}(std::string_view("key")), BlobHash{2}(std::string_view("key")));
}

}  // namespace
}  // namespace chronocached
