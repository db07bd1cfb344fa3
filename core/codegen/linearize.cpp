// Linearize: the kernel graph (after reduce lowering, gpudims and add_ends) to the flat list of
// docs/KERNEL_IR.md.
//
// Loops form a tree: a RANGE's parent is the innermost loop still open at its END (the END's
// live ranges). Each node goes into the innermost loop among its live ranges (so it is hoisted
// out of every loop it does not depend on), which must lie on one path of that tree. Each block
// (the kernel body or one loop's body) is then ordered on its own: its items are the nodes
// placed directly in it and, as single units, the loops nested in it (RANGE, body, END). An
// item goes after every item it reads from; that puts a value used inside a loop and after it
// before the loop, as the scoping rule requires. Ties go to the order of the graph's toposort,
// which keeps the output deterministic.
#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <unordered_set>

#include "live_ranges.hpp"
#include "tg/codegen.hpp"
#include "tg/error.hpp"
#include "tg/ir/node_set.hpp"

namespace tg {

namespace {

using codegen_detail::RangeSet;

bool is_head(const UOp* u) {
  return u->op == Ops::PARAM || u->op == Ops::DEFINE_VAR || u->op == Ops::DEFINE_REG ||
         u->op == Ops::DEFINE_LOCAL || u->op == Ops::SPECIAL ||
         (u->op == Ops::CONST && u->src.empty());
}

// The loop tree: parent and root-to-loop path of every RANGE.
class LoopTree {
public:
  LoopTree(const std::vector<const UOp*>& topo, const NodeMap<RangeSet>& live) : live_(live) {
    for (const UOp* u : topo) {
      if (u->op != Ops::END) continue;
      if (u->src.empty() || u->src[0]->op != Ops::RANGE)
        throw Error("codegen: linearize: END must close a RANGE (src[0]): " + u->str());
      if (!end_of_.emplace(u->src[0].get(), u).second)
        throw Error("codegen: linearize: a RANGE is closed by two ENDs: " + u->src[0]->str());
    }
    for (const UOp* u : topo)
      if (u->op == Ops::RANGE && !end_of_.count(u))
        throw Error("codegen: linearize: a RANGE is never closed by an END: " + u->str());
  }

  // The END that closes RANGE `r`.
  const UOp* end_of(const UOp* r) const { return end_of_.at(r); }

  // Root-to-`r` loops, `r` included.
  const std::vector<const UOp*>& path(const UOp* r) {
    auto it = paths_.find(r);
    if (it != paths_.end()) return it->second;
    if (!visiting_.insert(r).second)
      throw Error("codegen: linearize: loops enclose each other: " + r->str());
    const RangeSet& outer = live_.at(end_of_.at(r));
    const UOp* parent = nullptr;
    for (const UOp* p : outer)
      if (parent == nullptr || path(p).size() > path(parent).size()) parent = p;
    std::vector<const UOp*> p = parent ? path(parent) : std::vector<const UOp*>{};
    for (const UOp* o : outer)
      if (std::find(p.begin(), p.end(), o) == p.end())
        throw Error("codegen: linearize: the loops around " + r->str() +
                    " do not nest: " + o->str() + " is not on the path to " + parent->str());
    p.push_back(r);
    visiting_.erase(r);
    return paths_.emplace(r, std::move(p)).first->second;
  }

  // Where a node lives: the path of the innermost loop it depends on. For RANGE and END, the
  // path of their own loop.
  std::vector<const UOp*> place(const UOp* u) {
    if (u->op == Ops::RANGE) return check(u, path(u));
    if (u->op == Ops::END) return path(u->src[0].get());
    const UOp* inner = nullptr;
    for (const UOp* r : live_.at(u))
      if (inner == nullptr || path(r).size() > path(inner).size()) inner = r;
    return check(u, inner ? path(inner) : std::vector<const UOp*>{});
  }

private:
  std::vector<const UOp*> check(const UOp* u, std::vector<const UOp*> p) {
    for (const UOp* r : live_.at(u))
      if (std::find(p.begin(), p.end(), r) == p.end())
        throw Error("codegen: linearize: " + u->str() + " uses loops that do not nest (" +
                    r->str() + " does not enclose the others)");
    return p;
  }

  const NodeMap<RangeSet>& live_;
  std::unordered_map<const UOp*, const UOp*> end_of_;
  std::unordered_map<const UOp*, std::vector<const UOp*>> paths_;
  std::unordered_set<const UOp*> visiting_;
};

struct Block {
  std::vector<const UOp*> items; // in order of first appearance in the toposort
  NodeMap<uint32_t> index;       // item -> its position in items
  // By item position: the positions of the items that go before it (repeats allowed: they
  // are counted and released as many times).
  std::vector<std::vector<uint32_t>> after;
};

} // namespace

std::vector<UOpPtr> linearize(const UOpPtr& sink) {
  const std::vector<const UOp*>& topo = sink->toposort();
  const auto live = codegen_detail::live_ranges(sink);
  NodeMap<size_t> pos(topo.size());
  for (size_t i = 0; i < topo.size(); ++i) pos[topo[i]] = i;

  // Defines, constants and work-item indices come first, in a fixed order.
  std::vector<const UOp*> head;
  for (const UOp* u : topo)
    if (is_head(u)) head.push_back(u);
  auto rank = [](const UOp* u) {
    switch (u->op) {
    case Ops::PARAM:
      return 0;
    case Ops::DEFINE_VAR:
      return 1;
    case Ops::DEFINE_REG:
      return 2;
    case Ops::DEFINE_LOCAL:
      return 3;
    case Ops::CONST:
      return 4;
    default:
      return 5; // SPECIAL, after the constant that is its size
    }
  };
  auto key = [&](const UOp* u) -> std::pair<int, int64_t> {
    if (u->op == Ops::PARAM || u->op == Ops::DEFINE_REG)
      return {rank(u), std::get<int64_t>(u->arg)};
    if (u->op == Ops::SPECIAL) {
      const auto& n = std::get<std::string>(u->arg);
      // gidx before lidx, then by dimension.
      return {rank(u), (n.rfind("gidx", 0) == 0 ? 0 : 10) + (n.empty() ? 0 : n.back() - '0')};
    }
    return {rank(u), static_cast<int64_t>(*pos.find(u))};
  };
  std::stable_sort(head.begin(), head.end(),
                   [&](const UOp* a, const UOp* b) { return key(a) < key(b); });

  LoopTree tree(topo, live);
  NodeMap<std::vector<const UOp*>> where(topo.size()); // a placed node's loop path
  std::map<const UOp*, Block> blocks;                  // nullptr: the kernel body
  auto item_at = [&](const UOp* u, size_t level) {
    const auto& p = *where.find(u);
    return level < p.size() ? p[level] : u;
  };
  for (const UOp* u : topo) {
    if (u->op == Ops::SINK || is_head(u)) continue;
    auto& p = where[u];
    p = tree.place(u);
    // u is an item (itself or the loop holding it) of every block on its path.
    const bool is_loop_node = u->op == Ops::RANGE || u->op == Ops::END;
    for (size_t level = 0; level <= p.size(); ++level) {
      if (is_loop_node && level == p.size()) break; // RANGE and END frame their block
      Block& b = blocks[level == 0 ? nullptr : p[level - 1]];
      const UOp* item = item_at(u, level);
      if (b.index.find(item) == nullptr) {
        b.index[item] = static_cast<uint32_t>(b.items.size());
        b.items.push_back(item);
      }
    }
  }
  for (auto& [frame, b] : blocks) b.after.resize(b.items.size());
  // Dependencies, recorded in the outermost block where a node and its source part ways.
  for (const UOp* u : topo) {
    if (!where.contains(u)) continue;
    const auto& pu = *where.find(u);
    for (const auto& sp : u->src) {
      const UOp* s = sp.get();
      if (!where.contains(s)) continue; // defines and constants are listed first
      size_t level = 0;
      while (item_at(u, level) == item_at(s, level)) ++level;
      const UOp* frame = level == 0 ? nullptr : pu[level - 1];
      const UOp* iu = item_at(u, level);
      const UOp* is = item_at(s, level);
      // The RANGE and END of a block are fixed at its ends.
      auto framing = [&](const UOp* x) {
        return frame != nullptr && (x == frame || (x->op == Ops::END && x->src[0].get() == frame));
      };
      if (framing(iu) || framing(is)) continue;
      Block& b = blocks[frame];
      const uint32_t *at = b.index.find(iu), *first = b.index.find(is);
      if (at == nullptr || first == nullptr)
        throw Error("codegen: linearize: internal error, " + u->str() +
                    " and its source are not items of the block where they part");
      b.after[*at].push_back(*first);
    }
  }

  std::vector<UOpPtr> out;
  for (const UOp* u : head) out.push_back(u->ptr());
  std::function<void(const UOp*)> emit = [&](const UOp* frame) {
    Block& b = blocks[frame]; // std::map: stays valid while nested blocks are added
    const size_t n = b.items.size();
    // Items by position, which is their order of first appearance: the tie-break.
    std::vector<uint32_t> waiting(n);
    std::vector<std::vector<uint32_t>> users(n);
    for (uint32_t i = 0; i < n; ++i) {
      waiting[i] = static_cast<uint32_t>(b.after[i].size());
      for (const uint32_t dep : b.after[i]) users[dep].push_back(i);
    }
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    for (uint32_t i = 0; i < n; ++i)
      if (waiting[i] == 0) ready.push(i);
    size_t done = 0;
    while (!ready.empty()) {
      const uint32_t i = ready.top();
      ready.pop();
      ++done;
      const UOp* it = b.items[i];
      out.push_back(it->ptr());
      if (it->op == Ops::RANGE) { // a loop: RANGE, its body, END
        emit(it);
        out.push_back(tree.end_of(it)->ptr());
      }
      for (const uint32_t user : users[i])
        if (--waiting[user] == 0) ready.push(user);
    }
    if (done != n)
      throw Error("codegen: linearize: the nodes of a block depend on each other in a cycle");
  };
  emit(nullptr);
  return out;
}

} // namespace tg
