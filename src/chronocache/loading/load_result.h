// LoadResult<V>: what a loader answers and what LoadingCache::get returns: a value, "not found",
// or an error. Errors are values (STYLE.md, convention 2): the engine works without exceptions,
// so a loader reports failure by returning LoadError, and one that throws anyway is caught at the
// loader's edge (loader.h) and turned into kLoaderThrew.
//
//   LoadResult<std::string> load(const int& id) {
//     if (!db.reachable()) return LoadError{LoadErrorCode::kLoaderFailed, "db down"};
//     if (auto row = db.find(id)) return *row;   // a value
//     return NotFound{};                          // cached for negative_ttl, if that is on
//   }
//
// Why not std::optional<V> plus a flag: "not found" is an answer that may be cached (negative
// caching) while an error never is, so the two must stay apart all the way to the waiter.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

#include "chronocache/base/assert.h"

namespace chronocache {

enum class LoadErrorCode : std::uint8_t {
  kLoaderFailed,  // the loader returned an error
  kLoaderThrew,   // the loader threw; the exception's what() is the message
  kShutDown,      // the cache was destroyed before the queued load could run
  kBulkMismatch,  // a bulk loader returned a number of results unlike its number of keys
};

struct LoadError {
  LoadErrorCode code = LoadErrorCode::kLoaderFailed;
  std::string message;
  friend bool operator==(const LoadError&, const LoadError&) = default;
};

// The loader's "there is no such key". Cached only when LoadingOptions::negative_ttl is set.
struct NotFound {
  friend bool operator==(NotFound, NotFound) = default;
};

enum class LoadStatus : std::uint8_t { kValue, kNotFound, kError };

template <class V>
class [[nodiscard]] LoadResult {
 public:
  // Implicit on purpose, so that a loader can `return value;`, `return NotFound{};` or
  // `return LoadError{...};`.
  LoadResult(V value) : state_(std::in_place_index<0>, std::move(value)) {}
  LoadResult(NotFound) : state_(std::in_place_index<1>) {}
  LoadResult(LoadError error) : state_(std::in_place_index<2>, std::move(error)) {}

  LoadStatus status() const noexcept { return static_cast<LoadStatus>(state_.index()); }
  bool has_value() const noexcept { return state_.index() == 0; }
  bool is_not_found() const noexcept { return state_.index() == 1; }
  bool is_error() const noexcept { return state_.index() == 2; }

  // Preconditions: has_value() (value) and is_error() (error); checked, not undefined.
  const V& value() const& {
    CC_CHECK(has_value(), "LoadResult::value() on a result without one");
    return *std::get_if<0>(&state_);
  }
  V&& value() && {
    CC_CHECK(has_value(), "LoadResult::value() on a result without one");
    return std::move(*std::get_if<0>(&state_));
  }
  const LoadError& error() const& {
    CC_CHECK(is_error(), "LoadResult::error() on a result that is not an error");
    return *std::get_if<2>(&state_);
  }

  friend bool operator==(const LoadResult&, const LoadResult&) = default;

 private:
  std::variant<V, NotFound, LoadError> state_;
};

}  // namespace chronocache
