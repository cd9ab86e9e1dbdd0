// SwitchablePolicy: an eviction policy chosen at run time among several compiled in.
//
//   using Policy = chronocache::SwitchablePolicy<chronocache::TtlOnly, chronocache::Lru,
//                                                chronocache::Lfu>;
//   chronocache::Cache<std::string, int, Policy> cache;  // starts with the first: TtlOnly
//   cache.policy().select<chronocache::Lru>();           // a user picked "allkeys-lru"
//   cache.reset_policy();                                // every entry joins the new order
//
// A host whose users choose the policy while it runs (the server's CONFIG SET maxmemory-policy)
// cannot make Cache's Policy parameter a run-time value, and a virtual call per hook would cost an
// indirect branch on every get. This class keeps the alternatives in a std::variant and dispatches
// each hook with a switch on its index (an if-chain the compiler folds into a jump or two, every
// body inlined), so the selected policy's hooks run as if it were the only one.
//
// Meta: every alternative's Meta is at most 4 bytes and trivially copyable (checked below), so one
// 4-byte word holds whichever is selected; a hook copies it out, lets the policy work on it and
// copies it back (memcpy of a few bytes: a register move once inlined). The word is needed only
// while the selected policy's Meta is not empty (needs_meta): Cache then keeps the words in a
// column beside its slots that it drops when a policy without one is selected (TtlOnly: the
// server's "noeviction"), so the switch costs no memory while no policy runs.
//
// Switching: select<P>() (or select_index) destroys the old policy, with its nodes and sketches,
// and default-constructs P. The metadata in the slots then means nothing to P: the host must call
// Cache::reset_policy() at once, which registers every stored entry with P (O(n)). Until it does,
// no other hook may run. The first alternative is selected at construction; a host that defaults
// to "no eviction" lists TtlOnly first and so allocates no policy structures at all until a
// policy is chosen.
//
// Adding a policy to a host is adding its type to the host's list of alternatives.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>

#include "chronocache/base/assert.h"
#include "chronocache/policy/eviction_policy.h"
#include "chronocache/policy/ttl_only.h"

namespace chronocache {

template <EvictionPolicy... Policies>
class SwitchablePolicy {
  static_assert(sizeof...(Policies) >= 1, "at least one policy to select");

 public:
  // The word every slot keeps for the selected policy.
  struct Meta {
    std::uint32_t word = 0;
  };
  static_assert(((sizeof(typename Policies::Meta) <= sizeof(Meta)) && ...),
                "each alternative's Meta must fit the shared 4-byte word");

  static constexpr std::size_t kAlternatives = sizeof...(Policies);

  // ---- Selection ---------------------------------------------------------------------------

  std::size_t index() const noexcept { return policies_.index(); }
  template <class P>
  bool holds() const noexcept {
    return std::holds_alternative<P>(policies_);
  }
  // The selected policy if it is a P (for policy-specific settings), else nullptr.
  template <class P>
  P* get_if() noexcept {
    return std::get_if<P>(&policies_);
  }
  template <class P>
  const P* get_if() const noexcept {
    return std::get_if<P>(&policies_);
  }

  // Whether the selected policy keeps a word per entry (its Meta is not empty).
  bool needs_meta() const noexcept {
    return visit([](const auto& p) {
      return !std::is_empty_v<typename std::remove_cvref_t<decltype(p)>::Meta>;
    });
  }

  // An entry's word as P's own Meta, for reading per-entry state of the selected P (get_if<P>()).
  template <class P>
  static typename P::Meta meta_as(const Meta& meta) noexcept {
    return unpack<P>(meta);
  }

  // Replaces the selected policy by a fresh P. The caller must then call Cache::reset_policy().
  template <class P>
  void select() {
    policies_.template emplace<P>();
  }
  // As select<P>() for the alternative at `index` (< kAlternatives).
  void select_index(std::size_t index) {
    CC_CHECK(index < kAlternatives, "no such policy alternative");
    select_at<0>(index);
  }

  // ---- The EvictionPolicy hooks, forwarded to the selected policy ----------------------------

  Meta on_insert(SlotId id, std::uint64_t hash) {
    return visit([&](auto& p) { return pack(p.on_insert(id, hash)); });
  }
  // Every read and overwrite calls this. While the first alternative is selected and it is
  // TtlOnly (the server's noeviction), it returns inline. GCC compiled the whole switch out of
  // line in the server's SET path, saving three to six registers before finding nothing to do:
  // callgrind over the whole server at redis-benchmark -P 16, instructions a request: SET 1 724 ->
  // 1 705, GET of stored keys 1 438 -> 1 426; with allkeys-lru, which now pays the test, SET
  // 1 831 -> 1 824 and GET 1 497 -> 1 503.
  CC_ALWAYS_INLINE void on_access(Meta& meta) {
    if constexpr (std::is_same_v<std::tuple_element_t<0, std::tuple<Policies...>>, TtlOnly>) {
      if (policies_.index() == 0) return;
    }
    on_access_selected(meta);
  }
  void on_erase(Meta& meta) {
    visit([&](auto& p) {
      auto own = unpack<std::remove_reference_t<decltype(p)>>(meta);
      p.on_erase(own);
      meta = pack(own);
    });
  }
  void on_move(Meta& meta, SlotId id) {
    visit([&](auto& p) {
      auto own = unpack<std::remove_reference_t<decltype(p)>>(meta);
      p.on_move(own, id);
      meta = pack(own);
    });
  }
  std::optional<SlotId> pick_victim() {
    return visit([](auto& p) -> std::optional<SlotId> { return p.pick_victim(); });
  }
  void clear() {
    visit([](auto& p) { p.clear(); });
  }
  std::size_t memory_bytes() const noexcept {
    return visit([](const auto& p) -> std::size_t { return p.memory_bytes(); });
  }
  std::size_t growth_bytes_if_inserted() const noexcept {
    return visit([](const auto& p) -> std::size_t { return policy_growth_bytes(p); });
  }

 private:
  void on_access_selected(Meta& meta) {
    visit([&](auto& p) {
      auto own = unpack<std::remove_reference_t<decltype(p)>>(meta);
      p.on_access(own);
      meta = pack(own);
    });
  }

  template <class OwnMeta>
  static Meta pack(const OwnMeta& own) noexcept {
    static_assert(std::is_trivially_copyable_v<OwnMeta> && sizeof(OwnMeta) <= sizeof(Meta));
    Meta meta;
    if constexpr (!std::is_empty_v<OwnMeta>) std::memcpy(&meta.word, &own, sizeof(own));
    return meta;
  }
  template <class P>
  static typename P::Meta unpack(const Meta& meta) noexcept {
    typename P::Meta own{};
    if constexpr (!std::is_empty_v<typename P::Meta>)
      std::memcpy(static_cast<void*>(&own), &meta.word, sizeof(own));
    return own;
  }

  // fn(selected policy): an if-chain on the index, each branch calling fn on a concrete type.
  template <class Fn>
  CC_ALWAYS_INLINE decltype(auto) visit(Fn&& fn) {
    return visit_at<0>(fn, policies_);
  }
  template <class Fn>
  CC_ALWAYS_INLINE decltype(auto) visit(Fn&& fn) const {
    return visit_at<0>(fn, policies_);
  }
  template <std::size_t I, class Fn, class Variant>
  CC_ALWAYS_INLINE static decltype(auto) visit_at(Fn& fn, Variant& policies) {
    if constexpr (I + 1 == kAlternatives) {
      return fn(*std::get_if<I>(&policies));
    } else {
      if (policies.index() == I) return fn(*std::get_if<I>(&policies));
      return visit_at<I + 1>(fn, policies);
    }
  }

  template <std::size_t I>
  void select_at(std::size_t index) {
    if constexpr (I < kAlternatives) {
      if (index == I) {
        policies_.template emplace<I>();
        return;
      }
      select_at<I + 1>(index);
    }
  }

  std::variant<Policies...> policies_;
};

}  // namespace chronocache
