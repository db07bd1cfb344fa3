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

std::pair<ConstValue, ConstValue> compute_vmin_vmax(Ops op, DType dtype,
                                                    std::span<const UOpPtr> src, const Arg& arg);

} // namespace tg
