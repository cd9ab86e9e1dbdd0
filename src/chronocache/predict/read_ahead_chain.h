// ReadAheadChain<K>: the keys one stream has read ahead of its last read, in the order it expects
// to read them, each with the confidence of the step that reached it from the key before.
//
//   chain: B (0.9) -> C (1.0) -> D (0.8)     after a read of A; the reader's next read is B
//   read B: advance_to(B) drops B; C and D are still coming, and the chain's probability from B
//           is 1.0 x 0.8; the reader extends it at D's end instead of predicting C and D again
//
// It lets a reader that follows its predictions take one read-ahead step per read (at the
// chain's far end) instead of `depth` of them, as a file system's read-ahead window moves with
// its reader. Not thread-safe: it belongs to its AccessStream. A ring over a vector: links keep
// their slots as the chain moves, so keys owning heap memory reuse their capacity (a warm chain
// of string keys no longer than before allocates nothing).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace chronocache {

template <class K>
class ReadAheadChain {
 public:
  struct Link {
    K key{};
    std::uint64_t hash = 0;
    float confidence = 0;  // of the step from the link before (or from the last read) to this one
  };

  bool empty() const noexcept { return size_ == 0; }
  std::size_t size() const noexcept { return size_; }
  // The key the reader is expected to read next. Precondition: !empty().
  const Link& front() const noexcept { return links_[head_]; }
  // The far end, where the chain grows. Precondition: !empty().
  const Link& back() const noexcept { return at(size_ - 1); }

  // If `key` is the front (the read followed the chain), drops it and returns true: the rest
  // is still ahead of the reader. Otherwise changes nothing and returns false.
  bool advance_to(const K& key) {
    if (size_ == 0 || !(links_[head_].key == key)) return false;
    head_ = wrap(head_ + 1);
    --size_;
    return true;
  }

  void push_back(const K& key, std::uint64_t hash, float confidence) {
    if (size_ == capacity_) {  // full: unroll the ring so that the new slot goes at its end
      std::rotate(links_.begin(), links_.begin() + static_cast<std::ptrdiff_t>(head_),
                  links_.end());
      head_ = 0;
      links_.emplace_back();
      capacity_ = links_.size();
    }
    Link& link = links_[wrap(head_ + size_)];
    link.key = key;
    link.hash = hash;
    link.confidence = confidence;
    ++size_;
  }

  // Forgets every link (the reader left the chain); slots and their capacity stay.
  void clear() noexcept {
    head_ = 0;
    size_ = 0;
  }

  // The chain's probability as the model estimates it: that the reader reads every link in
  // order, the product of the steps' confidences (1 when empty).
  double probability() const noexcept {
    double p = 1;
    for (std::size_t i = 0; i < size_; ++i) p *= at(i).confidence;
    return p;
  }

 private:
  const Link& at(std::size_t i) const noexcept { return links_[wrap(head_ + i)]; }
  // An index past the ring's end taken back to its start (indices stay below twice its size).
  // (capacity_ is links_.size(), kept apart so that the hot path does not divide by sizeof(Link)).
  std::size_t wrap(std::size_t i) const noexcept { return i >= capacity_ ? i - capacity_ : i; }

  std::vector<Link> links_;
  std::size_t capacity_ = 0;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace chronocache
