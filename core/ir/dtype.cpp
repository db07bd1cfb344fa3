// DType: names, sizes, predicates, tinygrad's promotion lattice, and exact constant casts.
#include "tg/ir/dtype.hpp"

#include <array>
#include <bit>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "tg/error.hpp"
#include "tg/ir/float_formats.hpp"

namespace tg {
namespace {

constexpr int idx(ScalarType s) { return static_cast<int>(s); }

struct ScalarInfo {
  const char* name;
  int itemsize;
};

constexpr std::array<ScalarInfo, kNumScalarTypes> kInfo{{
    {"void", 0},
    {"index", 8}, // 64-bit integer semantics until lowered
    {"bool", 1},
    {"int8", 1},
    {"uint8", 1},
    {"int16", 2},
    {"uint16", 2},
    {"int32", 4},
    {"uint32", 4},
    {"int64", 8},
    {"uint64", 8},
    {"fp8e4m3", 1},
    {"fp8e5m2", 1},
    {"float16", 2},
    {"bfloat16", 2},
    {"float32", 4},
    {"float64", 8},
}};

const ScalarInfo& info(ScalarType s) { return kInfo[static_cast<size_t>(idx(s))]; }

// ---- promotion lattice ----------------------------------------------------------------------
// tinygrad's lattice (JAX type promotion without weak types), edges child -> parents.
// index is not in tinygrad's lattice; here it sits between bool and the sized signed ints:
// bool -> index -> int8. So index+index = index, index+bool = index, index+int32 = int32,
// index+uint8 = int16 (as int8+uint8), index+float32 = float32. Index acts as a "weak" signed
// integer that adopts any sized type it meets, and bool never drags it down to a narrow type.
using Mask = uint32_t;
constexpr Mask bit(ScalarType s) { return Mask{1} << idx(s); }

constexpr std::array<Mask, kNumScalarTypes> kDirectParents = [] {
  using S = ScalarType;
  std::array<Mask, kNumScalarTypes> p{};
  auto set = [&](S s, Mask m) { p[static_cast<size_t>(idx(s))] = m; };
  set(S::Bool, bit(S::Int8) | bit(S::UInt8) | bit(S::Index));
  set(S::Index, bit(S::Int8));
  set(S::Int8, bit(S::Int16));
  set(S::Int16, bit(S::Int32));
  set(S::Int32, bit(S::Int64));
  set(S::Int64, bit(S::FP8E4M3) | bit(S::FP8E5M2));
  set(S::UInt8, bit(S::Int16) | bit(S::UInt16));
  set(S::UInt16, bit(S::Int32) | bit(S::UInt32));
  set(S::UInt32, bit(S::Int64) | bit(S::UInt64));
  set(S::UInt64, bit(S::FP8E4M3) | bit(S::FP8E5M2));
  set(S::FP8E5M2, bit(S::Float16) | bit(S::BFloat16));
  set(S::FP8E4M3, bit(S::Float16) | bit(S::BFloat16));
  set(S::Float16, bit(S::Float32));
  set(S::BFloat16, bit(S::Float32));
  set(S::Float32, bit(S::Float64));
  return p;
}();

// Reflexive-transitive closure: every type each type promotes to. Computed at compile time;
// least_upper_dtype is then an AND of masks and a scan.
constexpr std::array<Mask, kNumScalarTypes> kAncestors = [] {
  std::array<Mask, kNumScalarTypes> a{};
  for (int i = 0; i < kNumScalarTypes; ++i) a[size_t(i)] = Mask{1} << i;
  for (int round = 0; round < kNumScalarTypes; ++round) // longest chain < number of types
    for (int i = 0; i < kNumScalarTypes; ++i)
      for (int j = 0; j < kNumScalarTypes; ++j)
        if (kDirectParents[size_t(i)] & (Mask{1} << j)) a[size_t(i)] |= a[size_t(j)];
  return a;
}();

// Scan order for picking the minimum of an intersection: tinygrad's priority (the enum order)
// with index moved just above bool. Void never takes part.
constexpr std::array<ScalarType, kNumScalarTypes - 1> kPriority{
    ScalarType::Bool,    ScalarType::Index,    ScalarType::Int8,    ScalarType::UInt8,
    ScalarType::Int16,   ScalarType::UInt16,   ScalarType::Int32,   ScalarType::UInt32,
    ScalarType::Int64,   ScalarType::UInt64,   ScalarType::FP8E4M3, ScalarType::FP8E5M2,
    ScalarType::Float16, ScalarType::BFloat16, ScalarType::Float32, ScalarType::Float64};

// ---- constant conversion helpers --------------------------------------------------------------

constexpr double kTwo63 = 9223372036854775808.0; // 2^63, exact
constexpr double kTwo64 = 18446744073709551616.0;

// double -> int64 bits for integer targets: truncate toward zero; NaN -> 0; values outside
// [-2^63, 2^63) saturate to INT64_MIN / INT64_MAX. With `as_uint64` the upper range extends to
// 2^64 (saturating at UINT64_MAX), and the result is the uint64's bit pattern.
int64_t double_to_int_bits(double x, bool as_uint64) {
  if (std::isnan(x)) return 0;
  x = std::trunc(x);
  if (x < -kTwo63) return std::numeric_limits<int64_t>::min();
  if (as_uint64) {
    if (x >= kTwo64) return -1; // UINT64_MAX
    if (x >= kTwo63) return static_cast<int64_t>(static_cast<uint64_t>(x));
  } else if (x >= kTwo63) {
    return std::numeric_limits<int64_t>::max();
  }
  return static_cast<int64_t>(x);
}

// int64 -> double rounded to odd at 53 bits. A later rounding to any format with at most 51
// significand bits (float16, bfloat16, fp8) then equals a direct correctly rounded conversion,
// which a plain (double) conversion followed by a second rounding would not guarantee.
double int_to_double_round_odd(int64_t v) {
  const bool neg = v < 0;
  uint64_t mag = neg ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  const int width = std::bit_width(mag);
  int shift = 0;
  if (width > 53) {
    shift = width - 53;
    const bool sticky = (mag & ((uint64_t{1} << shift) - 1)) != 0;
    mag = (mag >> shift) | (sticky ? 1 : 0);
  }
  const double d = std::ldexp(static_cast<double>(mag), shift); // mag < 2^53: exact
  return neg ? -d : d;
}

// Rounds a double to a narrow float format (through its encoding).
double round_to(double x, ScalarType s) {
  switch (s) {
  case ScalarType::Float16:
    return half_to_float(float_to_half(x));
  case ScalarType::BFloat16:
    return bf16_to_float(float_to_bf16(x));
  case ScalarType::FP8E4M3:
    return fp8e4m3_to_float(float_to_fp8e4m3(x));
  case ScalarType::FP8E5M2:
    return fp8e5m2_to_float(float_to_fp8e5m2(x));
  case ScalarType::Float32:
    return static_cast<double>(static_cast<float>(x));
  default:
    return x;
  }
}

DType require_value_type(DType d, const char* what) {
  if (d.is_ptr)
    throw Error(std::string(what) + ": " + d.name() +
                " is a pointer type; constants need a scalar (or vector) value type");
  if (d.scalar_type == ScalarType::Void)
    throw Error(std::string(what) + ": " + d.name() + " holds no value; pass a value dtype");
  return d;
}

} // namespace

// Wraps an int64 to the width and signedness of an integer scalar type (two's complement, as a
// C cast from int64 does). uint64 keeps its bit pattern in int64 (see ConstValue).
int64_t wrap_int(int64_t v, ScalarType s) {
  const auto u = static_cast<uint64_t>(v);
  switch (s) {
  case ScalarType::Int8:
    return static_cast<int8_t>(static_cast<uint8_t>(u));
  case ScalarType::UInt8:
    return static_cast<uint8_t>(u);
  case ScalarType::Int16:
    return static_cast<int16_t>(static_cast<uint16_t>(u));
  case ScalarType::UInt16:
    return static_cast<uint16_t>(u);
  case ScalarType::Int32:
    return static_cast<int32_t>(static_cast<uint32_t>(u));
  case ScalarType::UInt32:
    return static_cast<uint32_t>(u);
  default:
    return v; // Int64, UInt64, Index
  }
}

// ---- DType ------------------------------------------------------------------------------------

DType DType::vec(uint16_t n) const {
  if (is_ptr)
    throw Error("vec(" + std::to_string(n) + ") of pointer type " + name() +
                ": vectorize the element type before calling ptr()");
  if (count != 1)
    throw Error("vec(" + std::to_string(n) + ") of " + name() +
                ", which is already a vector: call scalar() first");
  if (n == 0) throw Error("vec(0) of " + name() + ": vector width must be at least 1");
  // As in tinygrad: width 1 is the scalar itself, and void has no vector form.
  if (n == 1 || scalar_type == ScalarType::Void) return *this;
  return DType(scalar_type, n);
}

DType DType::ptr(int64_t sz, AddrSpace as) const {
  if (is_ptr)
    throw Error("ptr() of " + name() +
                ", which is already a pointer: pointers to pointers are not supported");
  if (sz < -1)
    throw Error("ptr(" + std::to_string(sz) + ") of " + name() +
                ": size must be the number of elements, or -1 when unknown");
  DType d = *this;
  d.is_ptr = true;
  d.size = sz;
  d.addrspace = as;
  return d;
}

int DType::scalar_itemsize() const { return info(scalar_type).itemsize; }

int DType::itemsize() const { return is_ptr ? 8 : scalar_itemsize() * count; }

std::string DType::name() const {
  std::string s = info(scalar_type).name;
  if (count != 1) s += ".vec(" + std::to_string(count) + ")";
  if (is_ptr) {
    s += ".ptr(" + std::to_string(size);
    if (addrspace == AddrSpace::Local) s += ", local";
    if (addrspace == AddrSpace::Reg) s += ", reg";
    s += ")";
  }
  return s;
}

size_t DType::hash() const {
  // All fields fit in 64 bits apart from size; mix size in with a multiplicative step so that
  // nearby sizes spread.
  const uint64_t packed = uint64_t(idx(scalar_type)) | (uint64_t(count) << 8) |
                          (uint64_t(is_ptr) << 24) | (uint64_t(addrspace) << 25);
  uint64_t h = packed * 0x9E3779B97F4A7C15ull;
  h ^= static_cast<uint64_t>(size) + 0x7F4A7C159E3779B9ull + (h << 6) + (h >> 2);
  h ^= h >> 31;
  return static_cast<size_t>(h);
}

std::span<const DType> dtypes::all() {
  static constexpr std::array<DType, kNumScalarTypes - 2> kAll{
      bool_,  int8,    uint8,   int16,   uint16,   int32,   uint32, int64,
      uint64, fp8e4m3, fp8e5m2, float16, bfloat16, float32, float64};
  return kAll;
}

// ---- promotion --------------------------------------------------------------------------------

DType least_upper_dtype(std::span<const DType> ds) {
  if (ds.empty()) throw Error("least_upper_dtype of no dtypes: pass at least one dtype");
  Mask common = ~Mask{0};
  for (const DType& d : ds) {
    if (d.scalar_type == ScalarType::Void)
      throw Error("least_upper_dtype: " + d.name() +
                  " takes no part in type promotion; pass value dtypes only");
    common &= kAncestors[size_t(idx(d.scalar_type))];
  }
  for (ScalarType s : kPriority)
    if (common & bit(s)) return DType(s);
  // Unreachable: float64 is above every non-void type.
  throw Error("least_upper_dtype: no common type (promotion lattice is broken)");
}

DType least_upper_float(DType d) {
  if (d.is_float()) return d;
  return least_upper_dtype({d, dtypes::float32});
}

// ---- constants --------------------------------------------------------------------------------

double as_double(const ConstValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

int64_t as_int(const ConstValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  return double_to_int_bits(std::get<double>(v), false);
}

bool as_bool(const ConstValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* i = std::get_if<int64_t>(&v)) return *i != 0;
  return std::get<double>(v) != 0.0; // NaN is true, as in C
}

std::string to_string(const ConstValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  const double d = std::get<double>(v);
  if (std::isnan(d)) return std::signbit(d) ? "-nan" : "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  // Shortest text that reads back to the same double; ".0" keeps floats visibly floats.
  std::array<char, 64> buf{};
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), d);
  std::string s(buf.data(), end);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

ConstValue cast_const(const ConstValue& v, DType d) {
  require_value_type(d, "cast_const");
  const ScalarType s = d.scalar_type;
  if (s == ScalarType::Bool) return as_bool(v);
  if (DType(s).is_int()) {
    int64_t i;
    if (const auto* dv = std::get_if<double>(&v))
      i = double_to_int_bits(*dv, s == ScalarType::UInt64);
    else
      i = as_int(v);
    return wrap_int(i, s);
  }
  // Floats. Integers convert with a single rounding to the target precision.
  if (const auto* iv = std::get_if<int64_t>(&v)) {
    if (s == ScalarType::Float64) return static_cast<double>(*iv);
    if (s == ScalarType::Float32) return static_cast<double>(static_cast<float>(*iv));
    return round_to(int_to_double_round_odd(*iv), s);
  }
  return round_to(as_double(v), s);
}

ConstValue bitcast_const(const ConstValue& v, DType from, DType to) {
  require_value_type(from, "bitcast_const");
  require_value_type(to, "bitcast_const");
  if (from.count != 1 || to.count != 1)
    throw Error("bitcast_const from " + from.name() + " to " + to.name() +
                ": only scalar constants can be bitcast; bitcast each element");
  if (from.itemsize() != to.itemsize())
    throw Error("bitcast_const from " + from.name() + " (" + std::to_string(from.itemsize()) +
                " bytes) to " + to.name() + " (" + std::to_string(to.itemsize()) +
                " bytes): a bitcast needs types of the same size");
  // Normalize to what `from` holds, then take its bits (zero-extended to 64).
  const ConstValue src = cast_const(v, from);
  uint64_t bits = 0;
  switch (from.scalar_type) {
  case ScalarType::Float64:
    bits = std::bit_cast<uint64_t>(std::get<double>(src));
    break;
  case ScalarType::Float32:
    bits = std::bit_cast<uint32_t>(static_cast<float>(std::get<double>(src)));
    break;
  case ScalarType::Float16:
    bits = float_to_half(std::get<double>(src));
    break;
  case ScalarType::BFloat16:
    bits = float_to_bf16(std::get<double>(src));
    break;
  case ScalarType::FP8E4M3:
    bits = float_to_fp8e4m3(std::get<double>(src));
    break;
  case ScalarType::FP8E5M2:
    bits = float_to_fp8e5m2(std::get<double>(src));
    break;
  case ScalarType::Bool:
    bits = std::get<bool>(src) ? 1 : 0;
    break;
  default: {
    const int width = 8 * from.itemsize();
    bits = static_cast<uint64_t>(std::get<int64_t>(src));
    if (width < 64) bits &= (uint64_t{1} << width) - 1;
  }
  }
  switch (to.scalar_type) {
  case ScalarType::Float64:
    return std::bit_cast<double>(bits);
  case ScalarType::Float32:
    return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
  case ScalarType::Float16:
    return half_to_float(static_cast<uint16_t>(bits));
  case ScalarType::BFloat16:
    return bf16_to_float(static_cast<uint16_t>(bits));
  case ScalarType::FP8E4M3:
    return fp8e4m3_to_float(static_cast<uint8_t>(bits));
  case ScalarType::FP8E5M2:
    return fp8e5m2_to_float(static_cast<uint8_t>(bits));
  case ScalarType::Bool:
    return bits != 0; // any nonzero byte reads as true
  default:
    return wrap_int(static_cast<int64_t>(bits), to.scalar_type);
  }
}

ConstValue dtype_min(DType d) {
  require_value_type(d, "dtype_min");
  switch (d.scalar_type) {
  case ScalarType::Bool:
    return false;
  case ScalarType::Int8:
    return int64_t{INT8_MIN};
  case ScalarType::Int16:
    return int64_t{INT16_MIN};
  case ScalarType::Int32:
    return int64_t{INT32_MIN};
  case ScalarType::Int64:
  case ScalarType::Index:
    return std::numeric_limits<int64_t>::min();
  case ScalarType::UInt8:
  case ScalarType::UInt16:
  case ScalarType::UInt32:
  case ScalarType::UInt64:
    return int64_t{0};
  default:
    return -std::numeric_limits<double>::infinity();
  }
}

ConstValue dtype_max(DType d) {
  require_value_type(d, "dtype_max");
  switch (d.scalar_type) {
  case ScalarType::Bool:
    return true;
  case ScalarType::Int8:
    return int64_t{INT8_MAX};
  case ScalarType::UInt8:
    return int64_t{UINT8_MAX};
  case ScalarType::Int16:
    return int64_t{INT16_MAX};
  case ScalarType::UInt16:
    return int64_t{UINT16_MAX};
  case ScalarType::Int32:
    return int64_t{INT32_MAX};
  case ScalarType::UInt32:
    return int64_t{UINT32_MAX};
  // uint64's true maximum does not fit the int64 a ConstValue holds; INT64_MAX keeps range
  // analysis (which compares as signed) sound for the values it can reason about.
  case ScalarType::Int64:
  case ScalarType::UInt64:
  case ScalarType::Index:
    return std::numeric_limits<int64_t>::max();
  default:
    return std::numeric_limits<double>::infinity();
  }
}

} // namespace tg
