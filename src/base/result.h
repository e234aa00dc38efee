// Result<T, E>: the return type of everything that can fail on untrusted
// input (docs/style.md §5). An alias over tl::expected, which builds under g++ 12
// and clang 14 alike.
#pragma once

#include <tl/expected.hpp>

#include <utility>

namespace rw {

template <class T, class E>
using Result = tl::expected<T, E>;

// Builds the error side of a Result: `return fail(DecodeError::kTooShort);`.
template <class E>
[[nodiscard]] constexpr tl::unexpected<std::decay_t<E>> fail(E&& error) {
  return tl::unexpected<std::decay_t<E>>(std::forward<E>(error));
}

}  // namespace rw
