#pragma once
// The RANGEs each node depends on and that are still open there: a RANGE opens itself, an
// END closes its range (src[0]), everything else inherits its sources'. Reduce lowering uses
// it to find the loops an accumulator lives in, linearize to place nodes in loops.
#include <vector>

#include "tg/ir/node_set.hpp"
#include "tg/ir/uop.hpp"

namespace tg::codegen_detail {

using RangeSet = std::vector<const UOp*>; // sorted by address, no duplicates

RangeSet range_union(const RangeSet& a, const RangeSet& b);
bool range_contains(const RangeSet& s, const UOp* r);

// For every node reachable from `root` (root included).
NodeMap<RangeSet> live_ranges(const UOpPtr& root);

} // namespace tg::codegen_detail
