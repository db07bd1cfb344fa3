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

NodeMap<RangeSet> live_ranges(const UOpPtr& root) {
  const std::vector<const UOp*>& topo = root->toposort();
  NodeMap<RangeSet> live(topo.size());
  RangeSet merged; // scratch: its buffer and s's trade places at each merge
  // toposort lists sources first, so every source's set is known when a node is reached.
  for (const UOp* u : topo) {
    RangeSet s;
    for (const auto& src : u->src) {
      const RangeSet& r = live.at(src.get());
      if (r.empty() || r == s) continue;
      if (s.empty()) {
        s = r;
        continue;
      }
      merged.clear();
      std::set_union(s.begin(), s.end(), r.begin(), r.end(), std::back_inserter(merged));
      s.swap(merged);
    }
    if (u->op == Ops::RANGE && !range_contains(s, u))
      s.insert(std::upper_bound(s.begin(), s.end(), u), u);
    if (u->op == Ops::END && !u->src.empty())
      std::erase(s, u->src[0].get()); // the loop is closed after its END
    live[u] = std::move(s);           // the last use of `r`: this insert may move the values
  }
  return live;
}

} // namespace tg::codegen_detail
