#pragma once
// Evaluates ALU ops on constants with the exact semantics of the dtype: integer wrap-around
// at the dtype's width, IDIV truncating toward zero and MOD as C's remainder (tinygrad's
// cdiv/cmod), IEEE floats rounded to the dtype's precision. Used by constant folding and by
// tests as the reference semantics.
#include <optional>
#include <span>

#include "tg/ir/dtype.hpp"
#include "tg/ir/ops.hpp"

namespace tg {

// `dtype` is the dtype of the operands (for WHERE, of the two branches); comparisons return
// bool. Returns nullopt where the result is undefined and must not be folded: integer
// division or remainder by zero, a shift by a negative amount or by the bit width or more,
// THREEFRY (not a scalar op), and ops that are not ALU ops.
std::optional<ConstValue> exec_alu(Ops op, DType dtype, std::span<const ConstValue> operands);

} // namespace tg
