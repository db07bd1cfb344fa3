#pragma once
// Printing for debugging: one node per line for whole graphs, and a compact expression form
// for symbolic (index) arithmetic.
#include <string>

#include "tg/ir/uop.hpp"

namespace tg {

// Numbered dump, sources before users:  "  3 ADD  int32  (1, 2)"
std::string print_graph(const UOpPtr& root);
// Expression form: "((x*4)+y)//4", "(a<3)", "(c?x:y)". Nodes with no expression syntax are
// printed as OP(...).
std::string render_expr(const UOpPtr& x);

} // namespace tg
