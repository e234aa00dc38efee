// Instant and Duration: monotonic time as values. Pure code never reads a
// clock; the shell reads one and passes `now` in (docs/design.md invariant 4).
#pragma once

#include <compare>
#include <cstdint>

namespace rw {

// A span of time in nanoseconds.
struct Duration {
  std::int64_t ns = 0;

  static constexpr Duration nanoseconds(std::int64_t n) { return {n}; }
  static constexpr Duration microseconds(std::int64_t n) { return {n * 1000}; }
  static constexpr Duration milliseconds(std::int64_t n) { return {n * 1000 * 1000}; }
  static constexpr Duration seconds(std::int64_t n) { return {n * 1000 * 1000 * 1000}; }

  [[nodiscard]] constexpr std::int64_t to_ms() const { return ns / (1000 * 1000); }
  constexpr auto operator<=>(const Duration&) const = default;
  constexpr Duration operator+(Duration other) const { return {ns + other.ns}; }
  constexpr Duration operator-(Duration other) const { return {ns - other.ns}; }
};

// A point on a monotonic clock, in nanoseconds since an arbitrary origin.
struct Instant {
  std::int64_t ns = 0;

  constexpr auto operator<=>(const Instant&) const = default;
  constexpr Instant operator+(Duration d) const { return {ns + d.ns}; }
  constexpr Instant operator-(Duration d) const { return {ns - d.ns}; }
  constexpr Duration operator-(Instant other) const { return {ns - other.ns}; }
};

}  // namespace rw
