#pragma once
// Interval analysis (vmin/vmax) of one node from its sources' ranges, as tinygrad's
// UOp._min_max. Called once per node by UOp::make.
#include <cstdint>
#include <utility>
#include <vector>

#include "tg/ir/uop.hpp"

namespace tg {

// dtype_min / dtype_max as integers, the integer and bool types inline: range analysis and the
// symbolic rules ask for them at every node.
inline int64_t int_dtype_min(DType d) {
  if (!d.is_ptr) switch (d.scalar_type) {
    case ScalarType::Bool:
    case ScalarType::UInt8:
    case ScalarType::UInt16:
    case ScalarType::UInt32:
    case ScalarType::UInt64:
      return 0;
    case ScalarType::Int8:
      return INT8_MIN;
    case ScalarType::Int16:
      return INT16_MIN;
    case ScalarType::Int32:
      return INT32_MIN;
    case ScalarType::Int64:
    case ScalarType::Index:
      return INT64_MIN;
    default:
      break;
    }
  return as_int(dtype_min(d.scalar()));
}
inline int64_t int_dtype_max(DType d) {
  if (!d.is_ptr) switch (d.scalar_type) {
    case ScalarType::Bool:
      return 1;
    case ScalarType::Int8:
      return INT8_MAX;
    case ScalarType::UInt8:
      return UINT8_MAX;
    case ScalarType::Int16:
      return INT16_MAX;
    case ScalarType::UInt16:
      return UINT16_MAX;
    case ScalarType::Int32:
      return INT32_MAX;
    case ScalarType::UInt32:
      return UINT32_MAX;
    case ScalarType::Int64:
    case ScalarType::UInt64: // capped at INT64_MAX, as dtype_max says
    case ScalarType::Index:
      return INT64_MAX;
    default:
      break;
    }
  return as_int(dtype_max(d.scalar()));
}

// Truncating division and remainder of 128-bit integers, in 64 bits when both operands fit
// (bounds and coefficients almost always do; the 128-bit library call costs tens of
// instructions). INT64_MIN / -1 overflows 64 bits, so it takes the wide path.
__extension__ typedef __int128 i128;
inline bool fits_i64(i128 v) { return v >= INT64_MIN && v <= INT64_MAX; }
inline i128 div_trunc(i128 a, i128 b) {
  if (fits_i64(a) && fits_i64(b) && !(a == INT64_MIN && b == -1))
    return static_cast<int64_t>(a) / static_cast<int64_t>(b);
  return a / b;
}
inline i128 rem_trunc(i128 a, i128 b) {
  if (fits_i64(a) && fits_i64(b) && !(a == INT64_MIN && b == -1))
    return static_cast<int64_t>(a) % static_cast<int64_t>(b);
  return a % b;
}

std::pair<ConstValue, ConstValue> compute_vmin_vmax(Ops op, DType dtype,
                                                    std::span<const UOpPtr> src, const Arg& arg);

} // namespace tg
