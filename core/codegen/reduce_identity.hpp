#pragma once
// The identity of a reduce's combining op: where reduce lowering starts an accumulator, and
// what PADTO reduces over the padding.
#include "tg/ir/uop.hpp"

namespace tg::codegen_detail {

inline UOpPtr reduce_identity(Ops op, DType d) {
  switch (op) {
  case Ops::ADD:
    return UOp::const_(d, int64_t{0});
  case Ops::MUL:
    return UOp::const_(d, int64_t{1});
  default: // MAX: -inf for floats, the smallest value otherwise
    return UOp::const_(d, dtype_min(d.scalar()));
  }
}

} // namespace tg::codegen_detail
