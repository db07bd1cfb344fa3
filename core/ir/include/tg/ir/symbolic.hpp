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

} // namespace tg
