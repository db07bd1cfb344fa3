#include "live_ranges.hpp"

#include <algorithm>
#include <iterator>

namespace tg::codegen_detail {

RangeSet range_union(const RangeSet& a, const RangeSet& b) {
  RangeSet out;
  out.reserve(a.size() + b.size());
  std::set_union(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(out));
  return out;
}

bool range_contains(const RangeSet& s, const UOp* r) {
  return std::binary_search(s.begin(), s.end(), r);
}

std::unordered_map<const UOp*, RangeSet> live_ranges(const UOpPtr& root) {
  std::unordered_map<const UOp*, RangeSet> live;
  // toposort lists sources first, so every source's set is known when a node is reached.
  for (const UOp* u : root->toposort()) {
    RangeSet s;
    for (const auto& src : u->src) s = range_union(s, live.at(src.get()));
    if (u->op == Ops::RANGE) s = range_union(s, RangeSet{u});
    if (u->op == Ops::END && !u->src.empty())
      std::erase(s, u->src[0].get()); // the loop is closed after its END
    live.emplace(u, std::move(s));
  }
  return live;
}

} // namespace tg::codegen_detail
