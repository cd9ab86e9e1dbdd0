// Pins the snapshot file (snapshot_format.h, snapshot_writer.h, snapshot_reader.h): what is
// written is read back exactly, with every codec; a file damaged anywhere (cut at any byte, any
// bit flipped, a hostile length under a valid checksum) is an error naming an offset, never a
// success, a crash or a huge allocation; and the file appears atomically.
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <xxhash.h>

#include "persistence/durable_file.h"
#include "persistence/snapshot_format.h"
#include "persistence/snapshot_reader.h"
#include "persistence/snapshot_writer.h"
#include "testing/numbered.h"
#include "testing/scratch_dir.h"

#include <gtest/gtest.h>

namespace chronocache::persistence {
namespace {

struct Owned {
  std::uint32_t db;
  std::string key;
  std::string value;
  std::int64_t expire;
  bool operator==(const Owned&) const = default;
};

constexpr std::int64_t kCreated = 1'700'000'000'000;

using test_support::numbered;

class SnapshotFileTest : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return scratch_.path(name); }
  std::size_t files_in_dir() const {
    return static_cast<std::size_t>(
        std::distance(std::filesystem::directory_iterator(scratch_.root()),
                      std::filesystem::directory_iterator()));
  }

  static bool write(const std::string& file, const std::vector<Owned>& entries,
                    WriterOptions options = {}) {
    options.sync = false;
    SnapshotError error;
    auto writer = SnapshotWriter::open(file, kCreated, "test-1.0", options, &error);
    if (!writer) return false;
    for (const Owned& e : entries)
      writer->add(SnapshotEntry{e.db, e.key, e.value, e.expire, kTypeString});
    return writer->commit(&error);
  }
  static bool read(const std::string& file, std::vector<Owned>& out, SnapshotError* error,
                   ReaderLimits limits = {}) {
    out.clear();
    auto reader = SnapshotReader::open(file, limits, error);
    return reader != nullptr &&
           reader->for_each(
               [&](const SnapshotEntry& e) {
                 out.push_back({e.db, std::string(e.key), std::string(e.value), e.expire_unix_ms});
               },
               error);
  }
  static std::string bytes_of(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  static void put_bytes(const std::string& file, const std::string& bytes) {
    std::ofstream(file, std::ios::binary | std::ios::trunc) << bytes;
  }

  test_support::ScratchDir scratch_;
};

std::vector<Owned> varied_entries() {
  std::vector<Owned> entries = {
      {0, "", "", kNoExpiryMs},
      {0, std::string("k\0ey\r\n", 6), std::string("\0\xff\r\n", 4), kCreated + 5},
      {3, "in db 3", "x", kCreated - 1000},                   // already expired: the caller decides
      {15, "far", "y", kCreated + 400LL * 24 * 3600 * 1000},  // beyond 49 days
      {0, "big", std::string(1 << 20, 'b'), kNoExpiryMs},     // a block larger than block_bytes
  };
  for (int i = 0; i < 20'000; ++i)
    entries.push_back({static_cast<std::uint32_t>(i % 2), numbered("key:", i),
                       numbered("value-", i * 7), i % 3 == 0 ? kNoExpiryMs : kCreated + i});
  return entries;
}

TEST_F(SnapshotFileTest, EveryCodecReadsBackExactlyWhatWasWritten) {
  const std::vector<Owned> entries = varied_entries();
  for (Codec codec : {Codec::kNone, Codec::kLz4, Codec::kZstd}) {
    for (bool worker : {true, false}) {
      const std::string file = path("round.snap");
      ASSERT_TRUE(write(file, entries, {.codec = codec, .worker_thread = worker}));
      std::vector<Owned> back;
      SnapshotError error;
      ASSERT_TRUE(read(file, back, &error)) << error.message();
      EXPECT_EQ(back, entries) << static_cast<int>(codec);
      auto reader = SnapshotReader::open(file, {}, &error);
      ASSERT_NE(reader, nullptr);
      EXPECT_EQ(reader->created_unix_ms(), kCreated);
      EXPECT_EQ(reader->engine_version(), "test-1.0");
      EXPECT_EQ(reader->entry_count_hint(), entries.size());
    }
  }
}

TEST_F(SnapshotFileTest, AnEmptySnapshotIsValid) {
  ASSERT_TRUE(write(path("empty.snap"), {}));
  std::vector<Owned> back{{0, "x", "y", 0}};
  SnapshotError error;
  EXPECT_TRUE(read(path("empty.snap"), back, &error)) << error.message();
  EXPECT_TRUE(back.empty());
}

// A small file with several blocks, cut at every length and with every bit flipped in turn.
class DamagedFileTest : public SnapshotFileTest {
 protected:
  void SetUp() override {
    SnapshotFileTest::SetUp();
    std::vector<Owned> entries;
    entries.reserve(60);
    for (int i = 0; i < 60; ++i)
      entries.push_back({static_cast<std::uint32_t>(i % 3), numbered("k", i),
                         std::string(40, static_cast<char>('a' + i % 26)), kCreated + i});
    ASSERT_TRUE(write(path("good.snap"), entries, {.block_bytes = 1024}));
    good_ = bytes_of(path("good.snap"));
    ASSERT_GT(good_.size(), 3u * 1024 / 4);  // more than one block even compressed
  }
  std::string good_;
};

TEST_F(DamagedFileTest, AFileCutAtAnyByteIsAnError) {
  for (std::size_t length = 0; length < good_.size(); ++length) {
    put_bytes(path("cut.snap"), good_.substr(0, length));
    std::vector<Owned> back;
    SnapshotError error;
    ASSERT_FALSE(read(path("cut.snap"), back, &error)) << "cut at " << length;
    EXPECT_TRUE(back.empty()) << "entries delivered from a file cut at " << length;
    EXPECT_FALSE(error.reason.empty());
    EXPECT_EQ(error.file, path("cut.snap"));
    EXPECT_LE(error.offset, good_.size());
  }
}

TEST_F(DamagedFileTest, AnyFlippedBitIsAnError) {
  for (std::size_t byte = 0; byte < good_.size(); ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good_;
      bad[byte] = static_cast<char>(bad[byte] ^ (1 << bit));
      put_bytes(path("flip.snap"), bad);
      std::vector<Owned> back;
      SnapshotError error;
      ASSERT_FALSE(read(path("flip.snap"), back, &error)) << "byte " << byte << " bit " << bit;
      EXPECT_FALSE(error.reason.empty());
    }
  }
}

TEST_F(DamagedFileTest, WrongMagicAndFutureVersionsAreNamed) {
  std::string bad = good_;
  bad[1] = 'R';  // "REDIS..." or anything else
  put_bytes(path("magic.snap"), bad);
  SnapshotError error;
  std::vector<Owned> back;
  EXPECT_FALSE(read(path("magic.snap"), back, &error));
  EXPECT_NE(error.reason.find("bad magic"), std::string::npos) << error.reason;

  put_bytes(path("redis.rdb"), "REDIS0010\xfa\x09redis-ver");
  EXPECT_FALSE(read(path("redis.rdb"), back, &error));
  EXPECT_NE(error.reason.find("bad magic"), std::string::npos) << error.reason;

  bad = good_;
  put_u32(bad.data() + 8, 7);  // a future version (its header checksum no longer matters)
  put_bytes(path("future.snap"), bad);
  EXPECT_FALSE(read(path("future.snap"), back, &error));
  EXPECT_NE(error.reason.find("unsupported format version 7"), std::string::npos) << error.reason;
  EXPECT_EQ(error.offset, 8u);

  put_bytes(path("empty.snap"), "");
  EXPECT_FALSE(read(path("empty.snap"), back, &error));
  EXPECT_FALSE(read(path("missing.snap"), back, &error));
  EXPECT_NE(error.reason.find("cannot open"), std::string::npos) << error.reason;
  EXPECT_FALSE(read(scratch_.root().string(), back, &error));  // a directory
}

// A hostile file whose checksums are all valid: the length checks themselves must hold.
TEST_F(SnapshotFileTest, AbsurdLengthsUnderValidChecksumsAreRefusedBeforeAllocating) {
  // Header + one uncompressed block holding one entry with a 2^40-byte key + a matching trailer.
  const std::string header = [this] {
    SnapshotError error;
    const std::string file = path("header-only.snap");
    auto writer = SnapshotWriter::open(file, kCreated, "v", {.sync = false}, &error);
    writer->commit(&error);
    const std::string bytes = bytes_of(file);
    return bytes.substr(0, bytes.size() - kTrailerBytes);
  }();
  // One block of `raw` stored as it is, unless a codec and the raw size it claims are given.
  const auto craft = [&](const std::string& raw, std::uint32_t entries, Codec codec = Codec::kNone,
                         std::uint64_t claimed_raw = 0) {
    std::string block(kBlockHeaderBytes, '\0');
    block[0] = kBlockTag;
    block[1] = static_cast<char>(codec);
    put_u32(block.data() + 2, entries);
    put_u32(block.data() + 6,
            static_cast<std::uint32_t>(codec == Codec::kNone ? raw.size() : claimed_raw));
    put_u32(block.data() + 10, static_cast<std::uint32_t>(raw.size()));
    std::string hashed = block.substr(0, 14) + raw;
    const std::uint64_t sum = XXH3_64bits(hashed.data(), hashed.size());
    put_u64(block.data() + 14, sum);
    char sums[8];
    put_u64(sums, sum);
    std::string trailer(kTrailerBytes, '\0');
    trailer[0] = kTrailerTag;
    put_u64(trailer.data() + 1, entries);
    put_u64(trailer.data() + 9, 1);
    put_u64(trailer.data() + 17, XXH3_64bits(sums, 8));
    std::memcpy(trailer.data() + 25, kEndMagic, 8);
    return header + block + raw + trailer;
  };
  const auto reason_for = [&](const std::string& raw, std::uint32_t entries) {
    put_bytes(path("hostile.snap"), craft(raw, entries));
    std::vector<Owned> back;
    SnapshotError error;
    EXPECT_FALSE(read(path("hostile.snap"), back, &error, {.max_key_bytes = 1 << 20}));
    return error.reason;
  };
  std::string raw(1, '\0');
  raw.resize(1 + 10);
  raw.resize(
      static_cast<std::size_t>(put_varint(raw.data() + 1, std::uint64_t{1} << 40) - raw.data()));
  EXPECT_NE(reason_for(raw, 1).find("key length 1099511627776 exceeds limit"), std::string::npos);

  raw = std::string(1, '\0') + '\x05' + "ab";  // a 5-byte key with 2 bytes left
  EXPECT_NE(reason_for(raw, 1).find("runs past the block"), std::string::npos);
  raw = std::string(1, '\x0e');  // an unknown type
  EXPECT_NE(reason_for(raw, 1).find("unknown entry type"), std::string::npos);
  raw = std::string(1, '\0') + '\x01' + "k" + '\x01' + "v";  // one entry, but the block says 2
  EXPECT_NE(reason_for(raw, 2).find("block ends early"), std::string::npos);
  EXPECT_NE(reason_for(raw + "zz", 1).find("bytes after its last entry"), std::string::npos);
  std::string ok_raw = raw;
  std::vector<Owned> back;
  SnapshotError error;
  put_bytes(path("hostile.snap"), craft(ok_raw, 1));
  EXPECT_TRUE(read(path("hostile.snap"), back, &error, {.max_key_bytes = 1 << 20}))
      << error.message();  // the craft itself is right

  // Under the default limits (up to 4 GiB a block), what bounds the decompression buffer is the
  // codec's ceiling: a few stored bytes claiming more raw bytes than they could expand to.
  for (const Codec codec : {Codec::kLz4, Codec::kZstd}) {
    const std::uint64_t claim = max_raw_bytes(codec, 8) + 1;
    put_bytes(path("hostile.snap"), craft("\x1f\x01\x02\x03\x04\x05\x06\x07", 1, codec, claim));
    EXPECT_FALSE(read(path("hostile.snap"), back, &error));
    EXPECT_NE(error.reason.find("block claims " + std::to_string(claim) + " raw bytes"),
              std::string::npos)
        << error.reason;
  }
}

// `bytes` zero bytes that occupy no memory until written (a read maps the shared zero page).
class ZeroPages {
 public:
  explicit ZeroPages(std::size_t bytes)
      : bytes_(bytes),
        at_(::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)) {
  }
  ~ZeroPages() {
    if (at_ != MAP_FAILED) ::munmap(at_, bytes_);
  }
  ZeroPages(const ZeroPages&) = delete;
  ZeroPages& operator=(const ZeroPages&) = delete;
  bool ok() const { return at_ != MAP_FAILED; }
  std::string_view view() const { return {static_cast<const char*>(at_), bytes_}; }

 private:
  std::size_t bytes_;
  void* at_;
};

// The reader's default limits take back whatever the writer wrote: a value past 512 MiB (the
// server holds up to 2 GiB when proto-max-bulk-len allows) once failed to load.
TEST_F(SnapshotFileTest, AValueLargerThanHalfAGibibyteRoundTripsInABlockOfItsOwn) {
  const ZeroPages big(std::size_t{600} << 20);
  ASSERT_TRUE(big.ok());
  SnapshotError error;
  auto writer = SnapshotWriter::open(path("big.snap"), kCreated, "v", {.sync = false}, &error);
  writer->add({0, "before", "1", kNoExpiryMs, kTypeString});
  writer->add({0, "big", big.view(), kCreated + 5, kTypeString});
  writer->add({0, "after", "2", kNoExpiryMs, kTypeString});
  ASSERT_TRUE(writer->commit(&error)) << error.message();

  auto reader = SnapshotReader::open(path("big.snap"), {}, &error);
  ASSERT_NE(reader, nullptr) << error.message();
  std::vector<std::string> keys;
  std::size_t big_size = 0;
  bool all_zero = false;
  ASSERT_TRUE(reader->for_each(
      [&](const SnapshotEntry& e) {
        keys.emplace_back(e.key);
        if (e.key != "big") return;
        big_size = e.value.size();
        all_zero = e.value.find_first_not_of('\0') == std::string_view::npos;
        EXPECT_EQ(e.expire_unix_ms, kCreated + 5);
      },
      &error))
      << error.message();
  EXPECT_EQ(keys, (std::vector<std::string>{"before", "big", "after"}));
  EXPECT_EQ(big_size, big.view().size());
  EXPECT_TRUE(all_zero);
}

// An entry past the format's 4 GiB block fails the save with the reason; the old file stays.
TEST_F(SnapshotFileTest, AnEntryNoBlockCanHoldFailsTheSaveAndKeepsTheOldFile) {
  ASSERT_TRUE(write(path("s.snap"), {{0, "old", "1", kNoExpiryMs}}));
  const ZeroPages huge(std::size_t{kMaxBlockBytes} + 1);  // never touched: no memory used
  ASSERT_TRUE(huge.ok());
  SnapshotError error;
  auto writer = SnapshotWriter::open(path("s.snap"), kCreated, "v", {.sync = false}, &error);
  writer->add({0, "k", "v", kNoExpiryMs, kTypeString});
  writer->add({0, "huge", huge.view(), kNoExpiryMs, kTypeString});
  EXPECT_FALSE(writer->commit(&error));
  EXPECT_NE(error.reason.find("larger than a block can hold"), std::string::npos) << error.reason;
  std::vector<Owned> back;
  ASSERT_TRUE(read(path("s.snap"), back, &error)) << error.message();
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].key, "old");
  EXPECT_EQ(files_in_dir(), 1u);
}

TEST_F(SnapshotFileTest, CommitReplacesTheOldFileAtomicallyAndLeavesNoTemporaryFile) {
  ASSERT_TRUE(write(path("s.snap"), {{0, "old", "1", kNoExpiryMs}}));
  SnapshotError error;
  auto writer = SnapshotWriter::open(path("s.snap"), kCreated, "v", {.sync = false}, &error);
  writer->add({0, "new", "2", kNoExpiryMs, kTypeString});
  std::vector<Owned> back;
  ASSERT_TRUE(read(path("s.snap"), back, &error));  // before commit: still the old file
  EXPECT_EQ(back[0].key, "old");
  EXPECT_EQ(files_in_dir(), 2u);  // the old file and the temporary one
  ASSERT_TRUE(writer->commit(&error)) << error.message();
  ASSERT_TRUE(read(path("s.snap"), back, &error));
  EXPECT_EQ(back[0].key, "new");
  EXPECT_EQ(files_in_dir(), 1u);
}

TEST_F(SnapshotFileTest, AnAbandonedWriterLeavesNothingAndTheOldFileIntact) {
  ASSERT_TRUE(write(path("s.snap"), {{0, "old", "1", kNoExpiryMs}}));
  SnapshotError error;
  {
    auto writer = SnapshotWriter::open(path("s.snap"), kCreated, "v", {}, &error);
    for (int i = 0; i < 100'000; ++i) writer->add({0, "k", "v", kNoExpiryMs, kTypeString});
  }  // destroyed without commit
  EXPECT_EQ(files_in_dir(), 1u);
  std::vector<Owned> back;
  ASSERT_TRUE(read(path("s.snap"), back, &error));
  EXPECT_EQ(back.size(), 1u);

  auto async = SnapshotWriter::open(path("s.snap"), kCreated, "v", {}, &error);
  async->add({0, "k", "v", kNoExpiryMs, kTypeString});
  async->abandon();
  EXPECT_EQ(files_in_dir(), 1u);
}

TEST_F(SnapshotFileTest, AnAsynchronousCommitIsPolledToCompletion) {
  SnapshotError error;
  auto writer = SnapshotWriter::open(path("a.snap"), kCreated, "v", {}, &error);
  for (int i = 0; i < 50'000; ++i)
    writer->add({0, numbered("key:", i), "0123456789abcdef", kCreated + i, kTypeString});
  writer->start_commit();
  while (!writer->commit_done()) {
  }
  ASSERT_TRUE(writer->commit_result(&error)) << error.message();
  EXPECT_EQ(writer->entries(), 50'000u);
  EXPECT_EQ(writer->bytes_written(), std::filesystem::file_size(path("a.snap")));
  EXPECT_TRUE(SnapshotReader::verify(path("a.snap"), {}, &error)) << error.message();
}

TEST_F(SnapshotFileTest, FailuresToOpenAreReportedAndStaleTemporaryFilesCanBeCleared) {
  SnapshotError error;
  EXPECT_EQ(SnapshotWriter::open(path("no/such/dir/x.snap"), kCreated, "v", {}, &error), nullptr);
  EXPECT_NE(error.reason.find("No such file or directory"), std::string::npos) << error.reason;

  const pid_t gone = ::fork();  // a writer's pid whose process has ended
  if (gone == 0) ::_exit(0);
  ASSERT_GT(gone, 0);
  ::waitpid(gone, nullptr, 0);
  put_bytes(path("s.snap.tmp-" + std::to_string(gone) + "-0"), "left by a killed writer");
  put_bytes(path("s.snap.tmp-" + std::to_string(gone) + "-9"), "and another");
  put_bytes(path("s.snap.tmp-x-1"), "no pid: stale too");
  put_bytes(path("other.snap.tmp-1-1"), "not ours");
  // A running writer's file stays: another process may be saving to the same path.
  const pid_t running = ::fork();
  if (running == 0) {
    ::pause();
    ::_exit(0);
  }
  ASSERT_GT(running, 0);
  put_bytes(path("s.snap.tmp-" + std::to_string(running) + "-0"), "a save under way");
  EXPECT_EQ(remove_stale_temp_files(path("s.snap")), 3u);
  EXPECT_EQ(files_in_dir(), 2u);
  ::kill(running, SIGKILL);
  ::waitpid(running, nullptr, 0);
}

// ---- The worker thread's scheduling (WriterOptions::background_priority) ----------------------

// The ids of this process's threads (/proc/self/task).
std::set<pid_t> thread_ids() {
  std::set<pid_t> ids;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/task"))
    ids.insert(static_cast<pid_t>(std::stoi(entry.path().filename().string())));
  return ids;
}

// The one thread in `after` that is not in `before`.
pid_t new_thread(const std::set<pid_t>& before, const std::set<pid_t>& after) {
  pid_t found = 0;
  for (pid_t id : after) {
    if (before.count(id) == 0) {
      EXPECT_EQ(found, 0) << "more than one new thread";
      found = id;
    }
  }
  return found;
}

int nice_of(pid_t thread) {
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, static_cast<id_t>(thread));
  EXPECT_EQ(errno, 0);
  return nice;
}

// The worker sets its own priority when it starts: waits (bounded) until `thread` has `nice`.
bool reaches_nice(pid_t thread, int nice) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (nice_of(thread) != nice) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST_F(SnapshotFileTest, ABackgroundWorkerRunsFiveNiceStepsBelowItsCreatorUnderSchedOther) {
  const int ours = nice_of(static_cast<pid_t>(gettid()));
  ASSERT_LE(ours, 19 - SnapshotWriter::kBackgroundNiceSteps) << "run the test at a lower nice";
  SnapshotError error;
  {
    const WriterOptions options{.sync = false, .background_priority = true};
    const std::set<pid_t> before = thread_ids();
    auto writer = SnapshotWriter::open(path("bg.snap"), kCreated, "v", options, &error);
    ASSERT_NE(writer, nullptr) << error.message();
    const pid_t worker = new_thread(before, thread_ids());
    ASSERT_NE(worker, 0);
    EXPECT_TRUE(reaches_nice(worker, ours + SnapshotWriter::kBackgroundNiceSteps))
        << "nice " << nice_of(worker);
    EXPECT_EQ(sched_getscheduler(worker), SCHED_OTHER);  // never SCHED_IDLE: it starves
    writer->add({0, "k", "v", kNoExpiryMs, kTypeString});
    ASSERT_TRUE(writer->commit(&error)) << error.message();
  }
  EXPECT_EQ(nice_of(static_cast<pid_t>(gettid())), ours);  // only the worker moved
}

TEST_F(SnapshotFileTest, AWorkerWithoutBackgroundPriorityRunsAsItsCreator) {
  const int ours = nice_of(static_cast<pid_t>(gettid()));
  SnapshotError error;
  const std::set<pid_t> before = thread_ids();
  auto writer = SnapshotWriter::open(path("fg.snap"), kCreated, "v", {.sync = false}, &error);
  ASSERT_NE(writer, nullptr) << error.message();
  const pid_t worker = new_thread(before, thread_ids());  // alive until commit: it waits for work
  ASSERT_NE(worker, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // past its start, were it to move
  EXPECT_EQ(nice_of(worker), ours);
  EXPECT_EQ(sched_getscheduler(worker), sched_getscheduler(0));
  writer->add({0, "k", "v", kNoExpiryMs, kTypeString});
  ASSERT_TRUE(writer->commit(&error)) << error.message();
}

// The regression behind background_priority: a 1 M-key BGSAVE took 11 s instead of 0.4 s while
// a compile ran beside the server, its SCHED_IDLE worker starved (~0.3 % of a CPU that a nice-0
// thread wants) and add() waited for it. Here the writer, its worker and a nice-0 spinning
// thread share one CPU. With 300 K entries the commit took 0.05 s at nice +5 and 8.1 s at
// SCHED_IDLE; these 500 K took 0.39 s at nice +5 with two CPU burners and builds beside it
// (5.4 s for 1 M at a load average of 15, hence not more entries).
TEST_F(SnapshotFileTest, ABackgroundWorkerSharingItsCpuWithABusyThreadStillFinishes) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);  // threads started below inherit it
  std::atomic<bool> spin{true};
  std::thread spinner([&spin] {
    while (spin.load(std::memory_order_relaxed)) {
    }
  });
  const auto start = std::chrono::steady_clock::now();
  SnapshotError error;
  auto writer = SnapshotWriter::open(path("busy.snap"), kCreated, "v",
                                     {.sync = false, .background_priority = true}, &error);
  bool committed = false;
  if (writer != nullptr) {
    for (int i = 0; i < 500'000; ++i)
      writer->add({0, numbered("key:", i), "0123456789abcdef", kNoExpiryMs, kTypeString});
    committed = writer->commit(&error);
  }
  const auto seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  spin.store(false, std::memory_order_relaxed);
  spinner.join();
  ASSERT_EQ(sched_setaffinity(0, sizeof(original), &original), 0);
  ASSERT_TRUE(committed) << error.message();
  EXPECT_LT(seconds, 8.0);  // about 13 s at SCHED_IDLE
  EXPECT_TRUE(SnapshotReader::verify(path("busy.snap"), {}, &error)) << error.message();
}

}  // namespace
}  // namespace chronocache::persistence
