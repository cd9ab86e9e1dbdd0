// KeyHashHints: the table hashes a pipelined batch's prefetch already computed, so the commands
// that follow do not hash their keys again. Used in cluster mode, where the hash carries the key's
// slot: a GET at pipeline 16 computed the slot's CRC three times (prefetch, cluster check,
// lookup), and with the hints once (make bench-cluster: 1486 -> 1307 instructions a request).
//
// A hint is found by the key's address and length, not its bytes: the batch's keys are views
// into the connection's read buffer, which does not move or change while the batch runs, so the
// same view is the same key. Anything else hashed meanwhile (a record's key, a copy) lies
// elsewhere and finds no hint. The session fills the hints for one batch and clears them before
// its buffer may move (KeyHashHints::Batch).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace chronocached {

class KeyHashHints {
 public:
  static constexpr std::size_t kMax = 32;  // a framed batch's commands at most (FramedBatch)

  bool empty() const noexcept { return count_ == 0; }
  void add(std::string_view key, std::uint64_t hash) noexcept {
    if (count_ < kMax) hints_[count_++] = Hint{key.data(), key.size(), hash};
  }
  void clear() noexcept {
    count_ = 0;
    next_ = 0;
  }
  // The hash hinted for this very view of a key, or nullptr. Commands use their keys in batch
  // order, each perhaps several times (the cluster check, then the lookup), so the search starts
  // at the last hint found: found again at once, and the next command's a step further.
  const std::uint64_t* find(std::string_view key) noexcept {
    std::size_t i = next_;
    for (std::size_t tried = 0; tried < count_; ++tried) {
      if (hints_[i].data == key.data() && hints_[i].size == key.size()) {
        next_ = i;
        return &hints_[i].hash;
      }
      i = i + 1 < count_ ? i + 1 : 0;
    }
    return nullptr;
  }

 private:
  struct Hint {
    const char* data;
    std::size_t size;
    std::uint64_t hash;
  };
  std::array<Hint, kMax> hints_{};
  std::size_t count_ = 0;
  std::size_t next_ = 0;
};

}  // namespace chronocached
