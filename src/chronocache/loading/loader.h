// Loader<K, V> and BulkLoader<K, V>: the user's functions LoadingCache calls on a miss, erased to
// one call shape at construction (a run-time choice made once, STYLE.md convention 7; loads are
// the slow path, so one indirect call there costs nothing measurable).
//
// Accepted forms of a Loader:
//   * synchronous:   (const K&) -> LoadResult<V>
//   * asynchronous:  (const K&) -> std::future<LoadResult<V>> (or std::shared_future)
// std::future has no continuation, so an asynchronous loader's future is waited on by the thread
// that would have run a synchronous one (the caller of get, or an executor thread for refreshes,
// prefetches and get_async). It lets the loader overlap its own I/O, not free that thread; a
// callback-completed form would (docs/design/loading.md, "Not done").
//
// A BulkLoader is (std::span<const K>) -> std::vector<LoadResult<V>>, one result per key in the
// same order. An empty BulkLoader makes get_all fall back to one Loader call per key.
//
// Exceptions: a loader may throw when the program is built with exceptions; the throw is caught
// here and becomes LoadError{kLoaderThrew, what()}, so nothing crosses the cache's API (as
// Caffeine catches a listener's exception). Built with -fno-exceptions there is nothing to catch.
#pragma once

#include <concepts>
#include <exception>
#include <functional>
#include <future>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "chronocache/loading/load_result.h"

namespace chronocache {

template <class F, class K, class V>
concept SyncLoaderFn =
    std::copy_constructible<F> && std::is_invocable_r_v<LoadResult<V>, F&, const K&>;

template <class F, class K, class V>
concept AsyncLoaderFn = std::copy_constructible<F> && requires(F& f, const K& key) {
  { f(key).get() } -> std::convertible_to<LoadResult<V>>;
};

namespace detail {

// Runs `fn`, turning a thrown exception into `on_error(LoadError)`.
template <class Fn, class OnError>
auto guard_loader_call(Fn&& fn, [[maybe_unused]] OnError&& on_error) {
#if defined(__cpp_exceptions)
  try {
    return std::forward<Fn>(fn)();
  } catch (const std::exception& e) {
    return on_error(LoadError{LoadErrorCode::kLoaderThrew, e.what()});
  } catch (...) {
    return on_error(LoadError{LoadErrorCode::kLoaderThrew, "non-standard exception"});
  }
#else
  return std::forward<Fn>(fn)();
#endif
}

}  // namespace detail

template <class K, class V>
class Loader {
 public:
  // The first test keeps these from being asked to copy a Loader (which would recurse into
  // copy_constructible<Loader> under Clang).
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, Loader> && SyncLoaderFn<F, K, V>)
      Loader(F fn)  // NOLINT(google-explicit-constructor): a lambda reads best
      : load_(std::move(fn)) {}

  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, Loader> && !SyncLoaderFn<F, K, V> &&
           AsyncLoaderFn<F, K, V>) Loader(F fn)  // NOLINT(google-explicit-constructor)
      : load_([fn = std::move(fn)](const K& key) mutable -> LoadResult<V> {
          return fn(key).get();
        }) {}

  // Blocks until the loader answers. Thread-safe if the user's function is.
  LoadResult<V> load(const K& key) const {
    return detail::guard_loader_call([&]() -> LoadResult<V> { return load_(key); },
                                     [](LoadError e) -> LoadResult<V> { return e; });
  }

 private:
  std::function<LoadResult<V>(const K&)> load_;
};

template <class K, class V>
class BulkLoader {
 public:
  using Fn = std::function<std::vector<LoadResult<V>>(std::span<const K>)>;

  BulkLoader() = default;  // none: get_all loads key by key
  template <class F>
  requires(!std::same_as<std::remove_cvref_t<F>, BulkLoader> &&
           std::is_invocable_r_v<std::vector<LoadResult<V>>, F&, std::span<const K>>)
      BulkLoader(F fn)
      : load_all_(std::move(fn)) {}  // NOLINT(google-explicit-constructor)

  explicit operator bool() const noexcept { return static_cast<bool>(load_all_); }

  // One result per key, in order; a loader that answers with another count fails every key with
  // kBulkMismatch, one that throws fails every key with kLoaderThrew.
  std::vector<LoadResult<V>> load_all(std::span<const K> keys) const {
    using Results = std::vector<LoadResult<V>>;
    Results results = detail::guard_loader_call(
        [&]() -> Results { return load_all_(keys); },
        [&](LoadError e) -> Results { return Results(keys.size(), LoadResult<V>(std::move(e))); });
    if (results.size() != keys.size()) {
      results.assign(keys.size(),
                     LoadResult<V>(LoadError{LoadErrorCode::kBulkMismatch,
                                             "bulk loader returned a result count unlike its key "
                                             "count"}));
    }
    return results;
  }

 private:
  Fn load_all_;
};

}  // namespace chronocache
