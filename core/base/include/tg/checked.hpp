#pragma once
// Checked integer arithmetic for the parsers of untrusted files (safetensors, IDX, manifests,
// GGUF): every count, size and offset read from a file is multiplied, added and narrowed
// through these, so a header cannot wrap a product past a bounds check or turn 2^63 into a
// negative offset. The optional-returning forms are for code that builds its own message; the
// `parse_*` forms throw a tg::Error that names the file, the field and the value.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "tg/error.hpp"

namespace tg {

// a * b, or nullopt when the product does not fit in 64 bits.
constexpr std::optional<uint64_t> checked_mul(uint64_t a, uint64_t b) noexcept {
  uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// a + b, or nullopt when the sum does not fit in 64 bits.
constexpr std::optional<uint64_t> checked_add(uint64_t a, uint64_t b) noexcept {
  uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// The number of elements of a shape, or nullopt when it overflows. A shape with a zero
// dimension holds nothing whatever its other dimensions, so it is 0 rather than an overflow
// (multiplying in order would wrap before reaching the zero).
constexpr std::optional<uint64_t> checked_numel(std::span<const uint64_t> dims) noexcept {
  for (uint64_t d : dims)
    if (d == 0) return uint64_t{0};
  uint64_t n = 1;
  for (uint64_t d : dims) {
    const std::optional<uint64_t> next = checked_mul(n, d);
    if (!next) return std::nullopt;
    n = *next;
  }
  return n;
}

// v as a To when To can hold it exactly, else nullopt (signed and unsigned mixed safely).
template <class To, class From> constexpr std::optional<To> checked_narrow(From v) noexcept {
  if (!std::in_range<To>(v)) return std::nullopt;
  return static_cast<To>(v);
}

// The error of a parser: "ORIGIN: FIELD = VALUE: WHY". `origin` is the file (or what the bytes
// came from), `field` the place in it, `value` what was found there.
[[noreturn]] inline void throw_parse_error(std::string_view origin, std::string_view field,
                                           std::string_view value, std::string_view why) {
  std::string msg(origin);
  msg += ": ";
  msg += field;
  if (!value.empty()) {
    msg += " = ";
    msg += value;
  }
  msg += ": ";
  msg += why;
  throw Error(msg);
}

// The throwing forms, for fields of a file.
inline uint64_t parse_mul(uint64_t a, uint64_t b, std::string_view origin, std::string_view field) {
  if (const auto r = checked_mul(a, b)) return *r;
  throw_parse_error(origin, field, std::to_string(a) + " * " + std::to_string(b),
                    "the product does not fit in 64 bits (the file is malformed)");
}

inline uint64_t parse_add(uint64_t a, uint64_t b, std::string_view origin, std::string_view field) {
  if (const auto r = checked_add(a, b)) return *r;
  throw_parse_error(origin, field, std::to_string(a) + " + " + std::to_string(b),
                    "the sum does not fit in 64 bits (the file is malformed)");
}

inline uint64_t parse_numel(std::span<const uint64_t> dims, std::string_view origin,
                            std::string_view field) {
  if (const auto n = checked_numel(dims)) return *n;
  std::string shape = "[";
  for (size_t i = 0; i < dims.size(); ++i) shape += (i ? ", " : "") + std::to_string(dims[i]);
  throw_parse_error(origin, field, shape + "]",
                    "the element count does not fit in 64 bits (the file is malformed)");
}

template <class To, class From>
To parse_narrow(From v, std::string_view origin, std::string_view field) {
  if (const auto r = checked_narrow<To>(v)) return *r;
  // An unsigned field cannot be below 0 whatever To could hold: say the range it really has.
  const auto lo = std::is_unsigned_v<From> ? To{0} : std::numeric_limits<To>::min();
  throw_parse_error(origin, field, std::to_string(v),
                    "out of range (must be between " + std::to_string(lo) + " and " +
                        std::to_string(std::numeric_limits<To>::max()) + ")");
}

} // namespace tg
