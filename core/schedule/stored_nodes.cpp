// Which nodes of a normalized tensor graph get memory of their own, i.e. a kernel each; every
// other node fuses into the kernels that read it. This stays a walk, not a pattern table: a
// REDUCE is stored because of what lies above it on every path to a kernel (an EXPAND, another
// REDUCE, a second reader), a fact about its users that a rewrite of the node cannot see.
#include <algorithm>

#include "schedule_build.hpp"

namespace tg::sched {

namespace {

// True when `value` reads the buffer under `target` other than element for element through
// `target` itself (x.assign(x.flip(0)) must not read what it already overwrote).
bool assign_hazard(const UOpPtr& target, const UOpPtr& value) {
  UOpPtr base = base_buffer(target);
  std::vector<const UOp*> stack{value.get()};
  std::unordered_set<const UOp*> seen;
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (n == target.get() || !seen.insert(n).second) continue;
    if (n == base.get()) return true;
    if (GroupOp::ALU.contains(n->op) || n->op == Ops::CAST || n->op == Ops::BITCAST) {
      for (const UOpPtr& s : n->src) stack.push_back(s.get());
    } else if (n->backward_slice().count(base.get())) {
      return true;
    }
  }
  return false;
}

// The roots (unless already views of memory), CONTIGUOUS, SCATTER_ADD, COPY and its source,
// ASSIGN (and its value when it reads the target other than element for element).
void store_memory_effects(ScheduleBuild& b) {
  for (const UOpPtr& r : b.sink->src) {
    b.roots.insert(r.get());
    if (!is_buffer_view(r)) b.stored.insert(r.get());
  }
  for (const UOp* u : b.sink->toposort()) {
    if (u->op == Ops::COPY) {
      b.stored.insert(u);
      if (!is_contiguous_buffer_view(u->src[0])) b.stored.insert(u->src[0].get());
    } else if (u->op == Ops::CONTIGUOUS || u->op == Ops::ASSIGN || u->op == Ops::SCATTER_ADD) {
      b.stored.insert(u);
      if (u->op == Ops::ASSIGN && assign_hazard(u->src[0], u->src[1]))
        b.stored.insert(u->src[1].get());
    }
  }
}

// A REDUCE that is not stored is recomputed wherever it is read. Store it when that would
// repeat its work: read through an EXPAND (recomputed for every element it is expanded to),
// inside another REDUCE (recomputed for every step of that reduce: a batch norm's mean of a
// convolution), or by two or more kernels (each recomputes it).
// An elementwise node read through an EXPAND is stored too when recomputing it for every
// element the EXPAND makes is costly: when what fuses under it reads two or more inputs, or
// computes a transcendental (tinygrad stores every elementwise node under an expand). A weight
// gradient (x^T @ dy) reads dy expanded over the other operand's columns, and a backward pass's dy
// is a long chain (an activation's derivative, a norm's): BERT's FFN weight gradient recomputed a
// 30-input chain 768 times per element (0.45 GFLOP/s); the FFN's second matmul recomputed GELU for
// each of its 768 outputs. A cheap chain over one buffer still fuses: a quantized weight's
// dequantization stays inside the matmul that reads it (the weight stays quantized in memory), an
// index's normalization inside its gather. Walking down from the roots, per node:
// `expanded`/`reduced` say some path up to the kernel that reads it crosses an EXPAND/REDUCE;
// `readers` lists the kernels (stored nodes) that read it, up to two. Whether the elementwise chain
// rooted at `u` (down to stored nodes, buffers and REDUCEs, each an input read from memory) reads
// two or more inputs, or one and computes a transcendental: then recomputing it per element of an
// expand costs more than storing it once. A chain of index arithmetic alone (an avg pool's divisors
// from aranges) reads nothing and stays fused.
bool costly_to_recompute(const UOp* u, const std::unordered_set<const UOp*>& stored) {
  static constexpr OpSet kExpensive{Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::POW};
  std::unordered_set<const UOp*> inputs, seen;
  std::vector<const UOp*> stack{u};
  bool expensive = false;
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (!seen.insert(n).second) continue;
    if (n != u && (stored.count(n) || n->op == Ops::REDUCE)) {
      inputs.insert(n);
      continue;
    }
    if (n->op == Ops::BUFFER) {
      inputs.insert(n);
      continue;
    }
    expensive |= kExpensive.contains(n->op);
    for (const UOpPtr& s : n->src) stack.push_back(s.get());
  }
  return inputs.size() >= 2 || (expensive && !inputs.empty());
}

void store_recomputed_reduces(ScheduleBuild& b) {
  const std::vector<const UOp*>& topo = b.sink->toposort();
  std::unordered_map<const UOp*, std::vector<const UOp*>> users;
  for (const UOp* u : topo)
    for (const UOpPtr& s : u->src) users[s.get()].push_back(u);
  struct Reach {
    bool expanded = false, reduced = false;
    std::vector<const UOp*> readers;
  };
  std::unordered_map<const UOp*, Reach> reach;
  auto add_reader = [](Reach& r, const UOp* k) {
    if (r.readers.size() < 2 && std::find(r.readers.begin(), r.readers.end(), k) == r.readers.end())
      r.readers.push_back(k);
  };
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const UOp* u = *it;
    Reach r;
    if (auto us = users.find(u); us != users.end())
      for (const UOp* user : us->second) {
        if (b.stored.count(user)) { // a kernel reads u (a stored REDUCE reduces it there)
          add_reader(r, user);
          r.reduced |= user->op == Ops::REDUCE;
          continue;
        }
        const Reach& above = reach[user];
        r.expanded |= above.expanded || user->op == Ops::EXPAND;
        r.reduced |= above.reduced || user->op == Ops::REDUCE;
        for (const UOp* k : above.readers) add_reader(r, k);
      }
    const bool elementwise =
        GroupOp::ALU.contains(u->op) || u->op == Ops::CAST || u->op == Ops::BITCAST;
    if ((u->op == Ops::REDUCE && (r.expanded || r.reduced || r.readers.size() > 1)) ||
        (elementwise && r.expanded && costly_to_recompute(u, b.stored))) {
      b.stored.insert(u);
      r = Reach{};
    }
    reach[u] = std::move(r);
  }
}

} // namespace

void choose_stored_nodes(ScheduleBuild& b) {
  store_memory_effects(b);
  store_recomputed_reduces(b);
}

} // namespace tg::sched
