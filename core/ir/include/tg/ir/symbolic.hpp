#pragma once
// Symbolic simplification as pattern tables, in the shape of tinygrad's symbolic.py.
#include "tg/ir/pattern_matcher.hpp"

namespace tg {

// Constant folding of every ALU op with the dtype's exact semantics, identities and
// absorbing elements, WHERE and CAST folding.
const PatternMatcher& symbolic_simple();
// symbolic_simple plus range analysis (vmin/vmax), collecting like terms, canonical order of
// constants, div/mod folding by ranges, comparisons decided by ranges.
const PatternMatcher& symbolic();

// graph_rewrite(x, symbolic()).
UOpPtr simplify(const UOpPtr& x);

// simplify(x + c), built directly when the rules' answer is known without a rewrite: x a
// constant (the constant x + c), or a signed integer sum that symbolic() left final (its mark,
// UOp::fixed_under), whose constant is replaced (the canonical sum's constant folding is the
// only rule that fires on x + c). Vector lanes ask this for every lane of every index.
UOpPtr simplify_add_const(const UOpPtr& x, int64_t c);

// simplify(n) for a node whose sources are all constants: the constant-folding rule's result
// (it is tried first, and a constant is final), or simplify(n) where it does not fold.
UOpPtr simplify_constant_op(const UOpPtr& n);

} // namespace tg
