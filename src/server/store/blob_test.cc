// Blob: a key and its value in one block; what the server's memory per key rests on.
#include "server/store/blob.h"

#include <cstring>
#include <memory>
#include <new>
#include <random>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "chronocache/base/trivially_relocatable.h"

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

// The table relocates a segment of Blobs with one memcpy and forgets the bytes it copied from
// (chronocache/base/trivially_relocatable.h): the copy must own the record alone, so it reads
// the same and frees the record once (ASan reports a double free, LeakSanitizer a leak).
TEST(Blob, ACopyOfItsBytesIsTheBlobMoved) {
  static_assert(chronocache::is_trivially_relocatable_v<Blob>);
  alignas(Blob) unsigned char storage[sizeof(Blob)];
  {
    Blob original = Blob::record("key:1", std::string(100, 'v'));
    std::memcpy(storage, static_cast<const void*>(&original), sizeof(Blob));
    ::new (&original) Blob();  // forgotten, not destroyed
  }
  Blob* moved = std::launder(reinterpret_cast<Blob*>(storage));
  EXPECT_EQ(moved->key(), "key:1");
  EXPECT_EQ(moved->view(), std::string(100, 'v'));
  std::destroy_at(moved);
}

TEST(Blob, BytesAreBinarySafe) {
  const std::string key("k\0\r\n", 4);
  const std::string value("\0\xff\0", 3);
  const Blob b = Blob::record(key, value);
  EXPECT_EQ(b.key(), key);
  EXPECT_EQ(b.view(), value);
}

// On the heap, a 16-byte key and a 16-byte value fit one 48-byte glibc chunk (40 usable bytes):
// two one-byte lengths and 32 bytes. heap_bytes() is the whole chunk, header included.
TEST(Blob, SixteenByteKeyAndValueFitOneFortyEightByteChunk) {
  const Blob b = Blob::record("key:000000123456", "0123456789abcdef");
  EXPECT_FALSE(b.packed());
  EXPECT_LE(b.heap_bytes(), 48u);
  EXPECT_EQ(chronocache::HeapBytes<Blob>::of(b), b.heap_bytes());
}

// The memory claim of docs/design/memory.md: the server's benchmark record (a 14-byte key
// "key:%010d" and a 16-byte value) is 32 bytes, packed in the arena's 32-byte class.
TEST(Blob, ABenchmarkRecordTakesThirtyTwoBytesOfTheArena) {
  chronocache::RecordArena arena;
  {
    const Blob b = Blob::record("key:0000123456", "0123456789abcdef", &arena);
    EXPECT_TRUE(b.packed());
    EXPECT_EQ(b.heap_bytes(), 32u);
    EXPECT_EQ(arena.record_bytes(), 32u);
    EXPECT_EQ(b.key(), "key:0000123456");
    EXPECT_EQ(b.view(), "0123456789abcdef");
  }
  EXPECT_EQ(arena.records(), 0u);  // freed into the arena without the arena at hand
  EXPECT_EQ(arena.record_bytes(), 0u);
}

TEST(Blob, ARecordPastTheLargestClassLivesOnTheHeap) {
  chronocache::RecordArena arena;
  const Blob b = Blob::record("k", std::string(20000, 'v'), &arena);
  EXPECT_FALSE(b.packed());
  EXPECT_EQ(arena.records(), 0u);
  EXPECT_EQ(b.view(), std::string(20000, 'v'));
}

// Random edits of a record against a std::string, packed and on the heap: the key, the value
// and the arena's exact count hold through every change of the sizes' encoding (127 -> 128
// bytes), of class, and from the arena to the heap (a record stays there once moved).
TEST(Blob, RandomEditsKeepKeyValueAndTheArenasCount) {
  for (const bool in_arena : {true, false}) {
    chronocache::RecordArena arena;
    std::mt19937_64 rng(in_arena ? 5 : 6);
    for (int round = 0; round < 200; ++round) {
      const std::string key(rng() % 40, static_cast<char>('a' + round % 26));
      std::string value(rng() % 200, 'v');
      Blob b = Blob::record(key, value, in_arena ? &arena : nullptr);
      for (int step = 0; step < 30; ++step) {
        const std::size_t length = rng() % 3 == 0 ? rng() % 20000 : rng() % 300;
        const std::string bytes(length, static_cast<char>('0' + step % 10));
        switch (rng() % 3) {
          case 0:
            b.assign(bytes);
            value = bytes;
            // An overwrite never leaves a block over twice its record (past 64-byte values).
            ASSERT_LE(b.heap_bytes(), 2 * (key.size() + bytes.size() + 6) + 160);
            break;
          case 1:
            b.append(bytes);
            value += bytes;
            break;
          default: {
            const std::size_t at = rng() % (value.size() + 10);
            b.write_at(at, bytes);
            if (at + bytes.size() > value.size()) value.resize(at + bytes.size(), '\0');
            value.replace(at, bytes.size(), bytes);
          }
        }
        if (value.size() > 60000) {
          b.assign("");
          value.clear();
        }
        ASSERT_EQ(b.key(), key);
        ASSERT_EQ(b.view(), value);
        ASSERT_EQ(b.size(), value.size());
        if (b.packed()) {
          ASSERT_TRUE(in_arena);
          ASSERT_EQ(arena.record_bytes(), b.heap_bytes());
        } else {
          ASSERT_EQ(arena.record_bytes(), 0u);
        }
      }
    }
    EXPECT_EQ(arena.records(), 0u);
  }
}

TEST(Blob, LongKeysUseAMultiByteLength) {
  chronocache::RecordArena arena;
  for (chronocache::RecordArena* where :
       {static_cast<chronocache::RecordArena*>(nullptr), &arena}) {
    const std::string key(300, 'k');
    const Blob b = Blob::record(key, "v", where);
    EXPECT_EQ(b.key(), key);
    EXPECT_EQ(b.view(), "v");
    EXPECT_EQ(b.packed(), where != nullptr);
  }
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

// Memory follows the value: an overwrite far smaller than the block gives the block back (as
// Redis's SET frees the old value), in the arena and on the heap, while one of the same size
// keeps it. The Resize it reports is what the keyspace's byte count hears.
TEST(Blob, AnOverwriteFarSmallerThanTheBlockReallocatesIt) {
  chronocache::RecordArena arena;
  for (chronocache::RecordArena* where :
       {static_cast<chronocache::RecordArena*>(nullptr), &arena}) {
    for (const std::size_t large : {std::size_t{300}, std::size_t{2'000'000}}) {
      Blob b = Blob::record("key", std::string(large, 'x'), where);
      const std::size_t large_bytes = b.heap_bytes();
      const Blob::Resize same = b.assign(std::string(large, 'y'));
      EXPECT_EQ(same.old_bytes, 0u);
      EXPECT_EQ(b.heap_bytes(), large_bytes);
      const Blob::Resize shrink = b.assign("z");
      EXPECT_EQ(shrink.old_bytes, large_bytes);
      EXPECT_EQ(shrink.new_bytes, b.heap_bytes());
      EXPECT_LT(b.heap_bytes(), 64u) << large;
      EXPECT_EQ(b.key(), "key");
      EXPECT_EQ(b.view(), "z");
    }
  }
  EXPECT_EQ(arena.records(), 0u);
}

// Shrinking step by step cannot keep a large block either: each step is checked against the
// block, not against the value before it.
TEST(Blob, ShrinkingInSmallStepsDoesNotKeepALargeBlock) {
  Blob b = Blob::record("k", std::string(100'000, 'x'));
  for (std::size_t size = 100'000; size > 0; size -= std::min<std::size_t>(size, 997)) {
    b.assign(std::string(size, 'x'));
    ASSERT_LE(b.heap_bytes(), 2 * size + 160) << size;
  }
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

// Cluster mode's hash carries the key's hash slot in its top 14 bits (so a slot's keys share a
// hash prefix), and keeps the seeded hash's bits below.
TEST(BlobHashAndEq, InClusterModeTheTopBitsAreTheKeysHashSlot) {
  const BlobHash plain(7);
  const BlobHash cluster(7, /*cluster_slots=*/true);
  for (const std::string_view key : {"foo", "{user1000}.following", "", "a{}b"}) {
    EXPECT_EQ(cluster(key) >> 50, key_hash_slot(key)) << key;
    EXPECT_EQ(cluster(key) & ((std::uint64_t{1} << 50) - 1), plain(key) >> 14) << key;
  }
  EXPECT_EQ(key_hash_slot("foo"), 12182u);  // redis-server's CLUSTER KEYSLOT foo
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
