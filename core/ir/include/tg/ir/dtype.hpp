#pragma once
// Data types of the IR: scalars, vectors of them, and pointers with an address space.
// Mirrors tinygrad's dtypes, including its JAX-style promotion lattice.
#include <array>
#include <bit>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <variant>

namespace tg {

// Declaration order is tinygrad's priority order, which `least_upper_dtype` relies on.
enum class ScalarType : uint8_t {
  Void,
  Index, // symbolic index arithmetic; 64-bit integer semantics until lowered
  Bool,
  Int8,
  UInt8,
  Int16,
  UInt16,
  Int32,
  UInt32,
  Int64,
  UInt64,
  FP8E4M3, // OCP e4m3fn: no infinities, saturates at +-448
  FP8E5M2,
  Float16,
  BFloat16,
  Float32,
  Float64,
};
inline constexpr int kNumScalarTypes = static_cast<int>(ScalarType::Float64) + 1;

// Sets of scalar types as bit masks, for the inline predicates of DType.
namespace scalar_sets {
constexpr uint32_t bit(ScalarType s) { return uint32_t{1} << static_cast<int>(s); }
inline constexpr uint32_t kUnsignedTypes = bit(ScalarType::UInt8) | bit(ScalarType::UInt16) |
                                           bit(ScalarType::UInt32) | bit(ScalarType::UInt64);
inline constexpr uint32_t kIntTypes = kUnsignedTypes | bit(ScalarType::Index) |
                                      bit(ScalarType::Int8) | bit(ScalarType::Int16) |
                                      bit(ScalarType::Int32) | bit(ScalarType::Int64);
inline constexpr uint32_t kFloatTypes = bit(ScalarType::FP8E4M3) | bit(ScalarType::FP8E5M2) |
                                        bit(ScalarType::Float16) | bit(ScalarType::BFloat16) |
                                        bit(ScalarType::Float32) | bit(ScalarType::Float64);
constexpr bool scalar_in(ScalarType s, uint32_t set) { return (set & bit(s)) != 0; }
} // namespace scalar_sets

enum class AddrSpace : uint8_t { Global, Local, Reg };

// A value type: cheap to copy, compared and hashed by value.
struct DType {
  ScalarType scalar_type = ScalarType::Void;
  uint8_t reserved0_ = 0; // the padding, named and zero, so that == compares two words
  uint16_t count = 1;     // vector width of the element
  bool is_ptr = false;
  AddrSpace addrspace = AddrSpace::Global; // only meaningful for pointers
  uint16_t reserved1_ = 0;
  int64_t size = -1; // pointers: elements addressed, -1 when unknown

  constexpr DType() = default;
  constexpr DType(ScalarType s, uint16_t n = 1) : scalar_type(s), count(n) {}

  // The element type with vector width 1 (pointer-ness kept).
  constexpr DType scalar() const {
    DType d = *this;
    d.count = 1;
    return d;
  }
  // The pointee of a pointer (the type itself otherwise).
  constexpr DType base() const { return DType(scalar_type, count); }
  DType vec(uint16_t n) const;                                          // requires count == 1
  DType ptr(int64_t size = -1, AddrSpace as = AddrSpace::Global) const; // requires !is_ptr

  // Every node build and most rules compare dtypes: two 64-bit words, not five fields.
  constexpr bool operator==(const DType& o) const {
    const auto a = std::bit_cast<std::array<uint64_t, 2>>(*this);
    const auto b = std::bit_cast<std::array<uint64_t, 2>>(o);
    return ((a[0] ^ b[0]) | (a[1] ^ b[1])) == 0;
  }

  int itemsize() const; // bytes of one element (vector counted), pointers are 8
  int scalar_itemsize() const;
  // Inline bit tests: the symbolic rules and range analysis ask these at every node.
  constexpr bool is_float() const {
    return !is_ptr && scalar_sets::scalar_in(scalar_type, scalar_sets::kFloatTypes);
  }
  constexpr bool is_int() const {
    return !is_ptr && scalar_sets::scalar_in(scalar_type, scalar_sets::kIntTypes);
  } // signed, unsigned, index
  constexpr bool is_unsigned() const {
    return !is_ptr && scalar_sets::scalar_in(scalar_type, scalar_sets::kUnsignedTypes);
  }
  bool is_bool() const { return scalar_type == ScalarType::Bool && !is_ptr; }
  bool is_void() const { return scalar_type == ScalarType::Void && !is_ptr; }
  std::string name() const; // "float32", "int8.vec(4)", "float32.ptr(16, local)"
  size_t hash() const;
};

static_assert(sizeof(DType) == 16 && std::has_unique_object_representations_v<DType>,
              "DType::operator== compares its bytes: every byte must be a member");

namespace dtypes {
inline constexpr DType void_{ScalarType::Void}, index{ScalarType::Index}, bool_{ScalarType::Bool},
    int8{ScalarType::Int8}, uint8{ScalarType::UInt8}, int16{ScalarType::Int16},
    uint16{ScalarType::UInt16}, int32{ScalarType::Int32}, uint32{ScalarType::UInt32},
    int64{ScalarType::Int64}, uint64{ScalarType::UInt64}, fp8e4m3{ScalarType::FP8E4M3},
    fp8e5m2{ScalarType::FP8E5M2}, float16{ScalarType::Float16}, bfloat16{ScalarType::BFloat16},
    float32{ScalarType::Float32}, float64{ScalarType::Float64};
// Every scalar type a tensor can hold (all but void and index).
std::span<const DType> all();
} // namespace dtypes

// tinygrad's promotion lattice: the smallest type every argument promotes to.
// int8+uint8 -> int16, int32+float16 -> float16, bool+int8 -> int8, index+int32 -> int32.
DType least_upper_dtype(std::span<const DType> ds);
inline DType least_upper_dtype(std::initializer_list<DType> ds) {
  return least_upper_dtype(std::span<const DType>(ds.begin(), ds.size()));
}
// The smallest float type the argument promotes to (the type itself when it is a float).
DType least_upper_float(DType d);

// A constant's value. Integers of every width live in int64 (uint64 above INT64_MAX keeps its
// bit pattern), floats of every width in double (already rounded to their dtype).
using ConstValue = std::variant<bool, int64_t, double>;

double as_double(const ConstValue& v);
int64_t as_int(const ConstValue& v); // floats truncate toward zero
bool as_bool(const ConstValue& v);
std::string to_string(const ConstValue& v);
// Converts `v` to what a value of scalar dtype `d` holds: integer wrap-around, float rounding
// to the dtype's precision (float16, bfloat16, fp8 round to nearest even), bool is v != 0.
ConstValue cast_const(const ConstValue& v, DType d);
// `v` wrapped to the width and signedness of an integer scalar type (two's complement, as a C
// cast from int64 does); Int64, UInt64 and Index keep the bits.
int64_t wrap_int(int64_t v, ScalarType s);
// Bit-exact reinterpretation of `v` (stored as `from`) as dtype `to` of the same itemsize.
ConstValue bitcast_const(const ConstValue& v, DType from, DType to);

// Smallest and largest values of a scalar dtype (floats: -inf, +inf; uint64 max is INT64_MAX
// for range analysis, see ConstValue).
ConstValue dtype_min(DType d);
ConstValue dtype_max(DType d);

} // namespace tg

template <> struct std::hash<tg::DType> {
  size_t operator()(const tg::DType& d) const noexcept { return d.hash(); }
};
