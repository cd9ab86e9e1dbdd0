#include "persistence/snapshot_writer.h"

#include <algorithm>
#include <cerrno>
#include <string>
#include <utility>

#include <lz4.h>
#include <sched.h>
#include <sys/resource.h>
#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack: no allocation per block
#include <xxhash.h>
#include <zstd.h>

namespace chronocache::persistence {

namespace {

// Makes the calling thread background work: out of a real-time class it inherited, then
// `steps` nice values below where it was created (Linux keeps nice per thread, and a thread
// starts at its creator's). Lowering priority needs no permission; failures are ignored.
void become_background(int steps) {
  const int policy = sched_getscheduler(0);
  if (policy == SCHED_FIFO || policy == SCHED_RR) {
    const sched_param normal{};
    sched_setscheduler(0, SCHED_OTHER, &normal);
  }
  errno = 0;
  const int nice = getpriority(PRIO_PROCESS, 0);  // -1 is a valid niceness: errno tells
  if (errno != 0) return;
  setpriority(PRIO_PROCESS, 0, std::min(nice + steps, 19));
}

}  // namespace

std::unique_ptr<SnapshotWriter> SnapshotWriter::open(const std::string& path,
                                                     std::int64_t created_unix_ms,
                                                     std::string_view engine_version,
                                                     const WriterOptions& options,
                                                     SnapshotError* error) {
  std::string reason;
  std::unique_ptr<DurableFile> file = DurableFile::create(path, &reason);
  if (!file) {
    if (error != nullptr) *error = SnapshotError{path, 0, reason};
    return nullptr;
  }
  // The header: magic, version, its own size, creation time, engine version, checksum.
  const std::string_view version = engine_version.substr(0, 255);
  std::string header(kHeaderFixedBytes + version.size() + 8, '\0');
  std::memcpy(header.data(), kMagic, sizeof(kMagic));
  put_u32(header.data() + 8, kFormatVersion);
  put_u32(header.data() + 12, static_cast<std::uint32_t>(header.size()));
  put_u64(header.data() + 16, static_cast<std::uint64_t>(created_unix_ms));
  header[24] = static_cast<char>(version.size());
  std::memcpy(header.data() + kHeaderFixedBytes, version.data(), version.size());
  const std::size_t checked = header.size() - 8;
  put_u64(header.data() + checked, XXH3_64bits(header.data(), checked));
  if (!file->write(header.data(), header.size(), &reason)) {
    if (error != nullptr) *error = SnapshotError{path, 0, reason};
    return nullptr;
  }
  return std::unique_ptr<SnapshotWriter>(
      new SnapshotWriter(path, std::move(file), options, created_unix_ms));
}

SnapshotWriter::SnapshotWriter(std::string path, std::unique_ptr<DurableFile> file,
                               const WriterOptions& options, std::int64_t created_unix_ms)
    : path_(std::move(path)),
      file_(std::move(file)),
      options_(options),
      created_unix_ms_(created_unix_ms) {
  options_.block_bytes = std::clamp<std::size_t>(options_.block_bytes, 1 << 10, 16 << 20);
  current_.raw.reserve(options_.block_bytes + 64);
  bytes_written_.store(file_->bytes_written(), std::memory_order_relaxed);
  if (options_.worker_thread) worker_ = std::thread([this] { worker_loop(); });
}

SnapshotWriter::~SnapshotWriter() { abandon(); }

void SnapshotWriter::add(const SnapshotEntry& entry) {
  // Flags, db, two lengths, expiry: at most 1 + 5 + 10 + 10 + 10 bytes besides key and value.
  const std::uint64_t most = std::uint64_t{36} + entry.key.size() + entry.value.size();
  if (most > kMaxBlockBytes) {  // no reader could take it back: the save fails, saying why
    if (rejected_.empty())
      rejected_ = "an entry of " + std::to_string(most) + " bytes is larger than a block can hold";
    return;
  }
  // An entry that would overflow the block starts the next one: a block is at most block_bytes
  // unless it holds a single larger entry.
  if (current_.raw.size() + most > options_.block_bytes) seal_block();
  std::string& raw = current_.raw;
  const std::size_t at = raw.size();
  raw.resize(at + most);
  char* p = raw.data() + at;
  const bool has_expiry = entry.expire_unix_ms != kNoExpiryMs;
  *p++ = static_cast<char>((entry.type & kTypeMask) | (has_expiry ? kHasExpiry : 0) |
                           (entry.db != 0 ? kHasDb : 0));
  if (entry.db != 0) p = put_varint(p, entry.db);
  p = put_varint(p, entry.key.size());
  std::memcpy(p, entry.key.data(), entry.key.size());
  p += entry.key.size();
  p = put_varint(p, entry.value.size());
  std::memcpy(p, entry.value.data(), entry.value.size());
  p += entry.value.size();
  if (has_expiry) p = put_varint(p, zigzag(entry.expire_unix_ms - created_unix_ms_));
  raw.resize(static_cast<std::size_t>(p - raw.data()));
  ++current_.entries;
  ++entries_;
}

void SnapshotWriter::seal_block() {
  if (current_.entries == 0) return;
  if (!options_.worker_thread) {
    write_block(current_);
    current_.raw.clear();
    current_.entries = 0;
    return;
  }
  MutexLock lock(mu_);
  while (in_flight_ >= kBlocksInFlight && !stopping_) slot_free_.wait(mu_);
  queue_.push_back(std::move(current_));
  ++in_flight_;
  if (!spare_.empty()) {
    current_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    current_ = Block{};
    current_.raw.reserve(options_.block_bytes + 64);
  }
  lock.unlock();
  work_ready_.notify_one();
}

void SnapshotWriter::write_block(Block& block) {
  if (!failure_.empty()) return;
  const std::string& raw = block.raw;
  Codec codec = options_.codec;
  std::string_view stored = raw;
  if (codec == Codec::kLz4) {
    stored_.resize(static_cast<std::size_t>(LZ4_compressBound(static_cast<int>(raw.size()))));
    const int n = LZ4_compress_fast(raw.data(), stored_.data(), static_cast<int>(raw.size()),
                                    static_cast<int>(stored_.size()),
                                    options_.level != 0 ? options_.level : 2);
    stored = std::string_view(stored_.data(), n > 0 ? static_cast<std::size_t>(n) : 0);
  } else if (codec == Codec::kZstd) {
    stored_.resize(ZSTD_compressBound(raw.size()));
    const std::size_t n = ZSTD_compress(stored_.data(), stored_.size(), raw.data(), raw.size(),
                                        options_.level != 0 ? options_.level : 1);
    stored = std::string_view(stored_.data(), ZSTD_isError(n) ? 0 : n);
  }
  // Incompressible (or a codec failure): store the raw bytes.
  if (codec != Codec::kNone && (stored.empty() || stored.size() >= raw.size())) {
    codec = Codec::kNone;
    stored = raw;
  }
  char header[kBlockHeaderBytes];
  header[0] = kBlockTag;
  header[1] = static_cast<char>(codec);
  put_u32(header + 2, block.entries);
  put_u32(header + 6, static_cast<std::uint32_t>(raw.size()));
  put_u32(header + 10, static_cast<std::uint32_t>(stored.size()));
  XXH3_state_t state;
  XXH3_64bits_reset(&state);
  XXH3_64bits_update(&state, header, 14);
  XXH3_64bits_update(&state, stored.data(), stored.size());
  const std::uint64_t checksum = XXH3_64bits_digest(&state);
  put_u64(header + 14, checksum);
  std::string reason;
  if (!file_->write(header, sizeof(header), &reason) ||
      !file_->write(stored.data(), stored.size(), &reason)) {
    fail(reason);
    return;
  }
  checksums_.push_back(checksum);
  bytes_written_.store(file_->bytes_written(), std::memory_order_relaxed);
}

bool SnapshotWriter::finish(SnapshotError* error) {
  if (!rejected_.empty()) fail(rejected_);  // add() wrote it before start_commit()
  if (current_.entries != 0) write_block(current_);
  current_.raw.clear();
  current_.entries = 0;
  if (failure_.empty()) {
    std::string sums(checksums_.size() * 8, '\0');
    for (std::size_t i = 0; i < checksums_.size(); ++i) put_u64(sums.data() + 8 * i, checksums_[i]);
    char trailer[kTrailerBytes];
    trailer[0] = kTrailerTag;
    put_u64(trailer + 1, entries_);
    put_u64(trailer + 9, checksums_.size());
    put_u64(trailer + 17, XXH3_64bits(sums.data(), sums.size()));
    std::memcpy(trailer + 25, kEndMagic, sizeof(kEndMagic));
    std::string reason;
    if (!file_->write(trailer, sizeof(trailer), &reason) ||
        !file_->commit(options_.sync, &reason)) {
      fail(reason);
    }
    bytes_written_.store(file_->bytes_written(), std::memory_order_relaxed);
  }
  committed_ = failure_.empty();
  if (!committed_) file_->abandon();
  if (!committed_ && error != nullptr)
    *error = SnapshotError{path_, file_->bytes_written(), failure_};
  return committed_;
}

void SnapshotWriter::fail(std::string reason) {
  if (failure_.empty()) failure_ = std::move(reason);
}

void SnapshotWriter::worker_loop() {
  if (options_.background_priority) become_background(kBackgroundNiceSteps);
  MutexLock lock(mu_);
  for (;;) {
    while (queue_.empty() && !stopping_ && !commit_requested_) work_ready_.wait(mu_);
    if (stopping_) return;
    if (queue_.empty()) {  // commit requested and every block written
      lock.unlock();
      commit_ok_ = finish(nullptr);
      commit_done_.store(true, std::memory_order_release);
      return;
    }
    Block block = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    write_block(block);
    block.raw.clear();
    block.entries = 0;
    lock.lock();
    spare_.push_back(std::move(block));
    --in_flight_;
    slot_free_.notify_one();
  }
}

void SnapshotWriter::start_commit() {
  if (!options_.worker_thread) {
    commit_ok_ = finish(nullptr);
    commit_done_.store(true, std::memory_order_release);
    return;
  }
  {
    MutexLock lock(mu_);
    commit_requested_ = true;  // the worker writes current_ (the last block) after the queue
  }
  work_ready_.notify_one();
}

bool SnapshotWriter::commit_result(SnapshotError* error) {
  if (worker_.joinable()) worker_.join();
  if (!commit_ok_ && error != nullptr)
    *error =
        SnapshotError{path_, file_->bytes_written(), failure_.empty() ? "abandoned" : failure_};
  return commit_ok_;
}

bool SnapshotWriter::commit(SnapshotError* error) {
  start_commit();
  return commit_result(error);
}

void SnapshotWriter::stop_worker() {
  if (!worker_.joinable()) return;
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  work_ready_.notify_one();
  slot_free_.notify_all();
  worker_.join();
}

void SnapshotWriter::abandon() {
  stop_worker();
  if (!committed_) file_->abandon();
}

}  // namespace chronocache::persistence
