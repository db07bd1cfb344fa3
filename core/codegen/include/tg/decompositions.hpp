#pragma once
// Codegen decompositions: rewrites of a kernel AST into ops every renderer has, for what the
// renderer lacks (transcendentals), what is faster as other ops (integer division by a
// constant) and what has no arithmetic of its own (bfloat16, float16 without half support).
// lower_kernel() runs them after simplify_kernel and before lower_reduces, in the order below.
#include "tg/ir/uop.hpp"
#include "tg/plugin/device.hpp"

namespace tg {

// Every ALU on bfloat16, and on float16 when !caps.supports_half, casts its sources to float32,
// computes in float32 and casts the result back (comparisons keep their bool result; WHERE,
// which only selects, stays narrow). A REDUCE over such a type accumulates in float32 and is
// cast back once. Loads and stores stay narrow.
UOpPtr promote_half_float(const UOpPtr& ast, const RendererCaps& caps);

// EXP2, LOG2 and SIN become polynomial approximations built from ADD, MUL, FDIV, WHERE,
// comparisons, CAST, BITCAST and integer SHL/SHR/AND/OR/XOR (tinygrad's xexp2, xlog2, xsin),
// when the renderer lacks them (!caps.has_transcendentals) or TRANSCENDENTAL>=2 forces it.
// float32 and float64 are computed in their own type, float16 and bfloat16 in float32. SQRT is
// left to the hardware.
UOpPtr decompose_transcendentals(const UOpPtr& ast, const RendererCaps& caps);

// IDIV and MOD of an integer by a positive constant become a multiply by a magic number and a
// shift (tinygrad's fast_idiv), where the operand's value range proves the product fits in the
// dtype or in the next wider one (the operand is cast to it and the quotient cast back). C's
// truncation toward zero is kept for negative numerators. DISABLE_FAST_IDIV=1 turns it off.
UOpPtr decompose_int_division(const UOpPtr& ast, const RendererCaps& caps);

// DOT4 (int32: src[0] plus four products of src[1]'s bytes read unsigned with src[2]'s read
// signed) becomes shifts, masks, multiplies and adds where the renderer does not spell it
// (!caps.has_dot4).
UOpPtr decompose_dot4(const UOpPtr& ast, const RendererCaps& caps);

// The approximations themselves, on a float32 or float64 value (scalar or vector); exposed for
// tests. Accuracy and special values: docs/KERNEL_IR.md, "Decompositions".
UOpPtr xexp2(const UOpPtr& d);
UOpPtr xlog2(const UOpPtr& d);
UOpPtr xsin(const UOpPtr& d);

} // namespace tg
