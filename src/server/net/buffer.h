// net::Buffer: a connection's input bytes, read into in place and consumed from the front.
//
//   [ consumed | unread (begin..end) | free space (end..capacity) ]
//
// Unlike std::string it does not zero the space a read is about to fill. compact() moves the
// unread bytes to the front (a parser resumes a partial command from the same relative offset).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>

namespace chronocached::net {

class Buffer {
 public:
  std::string_view unread() const noexcept { return {data_.get() + begin_, end_ - begin_}; }
  std::size_t unread_size() const noexcept { return end_ - begin_; }
  std::size_t capacity() const noexcept { return capacity_; }

  void consume(std::size_t n) noexcept {
    begin_ += n;
    if (begin_ == end_) begin_ = end_ = 0;
  }

  // Free space of at least `min_free` bytes after the unread ones. Invalidates unread() views.
  char* prepare(std::size_t min_free) {
    if (capacity_ - end_ >= min_free) return data_.get() + end_;
    compact();
    if (capacity_ - end_ < min_free) {
      // Exactly what is asked: the caller asks for at least the unread size when the final size
      // is unknown (so growth doubles, linear overall) and for the exact rest of a bulk whose
      // size was announced (so a 100 MB value costs 100 MB, not the next power of two).
      const std::size_t grown = std::max(kInitial, end_ + min_free);
      auto fresh = std::make_unique_for_overwrite<char[]>(grown);
      if (end_ > 0) std::memcpy(fresh.get(), data_.get(), end_);
      data_ = std::move(fresh);
      capacity_ = grown;
    }
    return data_.get() + end_;
  }
  void commit(std::size_t n) noexcept { end_ += n; }
  std::size_t free_space() const noexcept { return capacity_ - end_; }

  void compact() noexcept {
    if (begin_ == 0) return;
    std::memmove(data_.get(), data_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }

  // Gives memory back after a burst (a big request): called when idle.
  void shrink() {
    if (unread_size() == 0 && capacity_ > kInitial * 4) {
      data_.reset();
      capacity_ = begin_ = end_ = 0;
    }
  }

 private:
  static constexpr std::size_t kInitial = 16 * 1024;
  std::unique_ptr<char[]> data_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
};

}  // namespace chronocached::net
