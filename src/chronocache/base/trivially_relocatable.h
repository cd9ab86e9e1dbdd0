// is_trivially_relocatable_v<T>: whether a T may be moved by copying its bytes to the new place
// and forgetting the old ones, with no move constructor and no destructor run. The table moves
// whole segments of such entries with one memcpy (a rebuild in the segment's own pages).
//
// Every trivially copyable type is. A type that owns something only through pointers, and holds
// no pointer into itself nor is pointed at by anything it owns, may say so by declaring
// `using trivially_relocatable = std::true_type;` (the server's Blob does: it is the address of
// its record). std::string is not (its short-string buffer points into itself).
#pragma once

#include <type_traits>

namespace chronocache {

template <class T>
inline constexpr bool is_trivially_relocatable_v = [] {
  if constexpr (requires { typename T::trivially_relocatable; })
    return T::trivially_relocatable::value;
  else
    return std::is_trivially_copyable_v<T>;
}();

}  // namespace chronocache
