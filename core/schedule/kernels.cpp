// One kernel per stored node: where each stored node's memory is (an input, an output or a
// temporary), and the kernel AST that computes it (rangeify.cpp), in topological order. A
// SCATTER_ADD gets two kernels writing its memory, one after the other: its base, then the
// additions (skipped when there are no rows).
#include "rangeify.hpp"
#include "schedule_build.hpp"

namespace tg::sched {

namespace {

// Every stored node gets memory: an output (a root), an input (ASSIGN writes its target's
// buffer) or a temporary.
void assign_memory(ScheduleBuild& b) {
  for (const UOp* u : b.sink->toposort()) {
    if (u->op == Ops::BUFFER) {
      b.memory[u] = {BufRef::Kind::Input, placeholder_number(u)};
      continue;
    }
    if (!b.stored.count(u)) continue;
    if (u->op == Ops::ASSIGN) {
      b.memory[u] = b.memory.at(base_buffer(u->src[0]).get());
    } else if (b.roots.count(u)) {
      b.memory[u] = {BufRef::Kind::Output, static_cast<int64_t>(b.tmpl.outputs.size())};
      b.tmpl.outputs.push_back({node_device(u), u->dtype, shape_numel_max(*u->shape())});
    } else {
      b.memory[u] = {BufRef::Kind::Temp, static_cast<int64_t>(b.unplanned.size())};
      b.unplanned.push_back({node_device(u), u->dtype, shape_numel_max(*u->shape())});
    }
  }
}

} // namespace

void build_kernels(ScheduleBuild& b) {
  assign_memory(b);
  auto is_stored = [&](const UOp* u) { return b.stored.count(u) > 0; };
  for (const UOp* u : b.sink->toposort()) {
    if (!b.stored.count(u) || u->op == Ops::BUFFER) continue;
    if (shape_numel_max(*u->shape()) == 0) continue; // nothing to compute
    TemplateItem item;
    item.device = node_device(u);
    std::vector<const UOp*> loads;
    if (u->op == Ops::COPY) {
      item.kind = ScheduleItem::Kind::Copy;
      const UOpPtr& src = u->src[0];
      const UOp* from = b.stored.count(src.get()) ? src.get() : base_buffer(src).get();
      item.bufs = {b.memory.at(u), b.memory.at(from)};
      loads = {from};
    } else {
      KernelSlots slots;
      item.ast = build_kernel(u->ptr(), is_stored, slots);
      for (const UOp* n : slots.nodes) item.bufs.push_back(b.memory.at(n));
      loads.assign(slots.nodes.begin() + 1, slots.nodes.end());
    }
    b.tmpl.items.push_back(item);
    b.writes.push_back(u);
    b.reads.push_back(std::move(loads));
    if (u->op == Ops::SCATTER_ADD && shape_numel_max(*u->src[1]->shape()) > 0) {
      KernelSlots slots;
      item.ast = build_scatter_add_kernel(u->ptr(), is_stored, slots);
      item.bufs.clear();
      for (const UOp* n : slots.nodes) item.bufs.push_back(b.memory.at(n));
      b.tmpl.items.push_back(std::move(item));
      b.writes.push_back(u);
      b.reads.emplace_back(slots.nodes.begin() + 1, slots.nodes.end());
    }
  }
}

} // namespace tg::sched
