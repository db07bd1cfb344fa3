#pragma once
// The IR's spec: which source counts, dtypes and args each op accepts. Checked on every node
// built when SPEC=1 (or set_spec_checking(true)), and on demand with verify().
#include "tg/ir/uop.hpp"

namespace tg {

// Raises SpecError naming the node when it breaks the spec.
void verify_node(const UOp& u);
// verify_node on every node of the graph.
void verify_graph(const UOpPtr& root);

bool spec_checking();
void set_spec_checking(bool on); // overrides SPEC from the environment

} // namespace tg
