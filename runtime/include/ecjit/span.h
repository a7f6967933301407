// Span<T>: a pointer and a count, the way ecjit's API takes arrays of shard pointers (C++17).
#pragma once

#include <cstddef>
#include <type_traits>

namespace ecjit {

// A non-owning view of `size` elements. Built from a pointer and a count, or implicitly
// from any container with data() and size() (std::vector, std::array). For shard arrays:
// Span<const uint8_t *const> (read-only shards) and Span<uint8_t *const> (written shards).
template <typename T>
struct Span {
  T *data = nullptr;
  size_t size = 0;

  constexpr Span() = default;
  constexpr Span(T *d, size_t n) : data(d), size(n) {}
  template <typename C,
            typename = std::enable_if_t<std::is_convertible_v<decltype(std::declval<C &>().data()), T *>>>
  constexpr Span(C &c) : data(c.data()), size(c.size()) {}

  constexpr T &operator[](size_t i) const { return data[i]; }
  constexpr T *begin() const { return data; }
  constexpr T *end() const { return data + size; }
};

}  // namespace ecjit
