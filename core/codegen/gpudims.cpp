// GPU dims (tinygrad's pm_add_gpudims): Global RANGEs become SPECIAL work-item indices, and on
// a renderer with work groups, Local and GroupReduce RANGEs become local indices. A device runs
// one work item per index, so those loops disappear from the kernel.
//
// Without work groups (the CPU) the outermost Global ranges with a constant size, up to the
// renderer's global dimensions and within their maxima, become gidx0..2 in order, outermost
// first (the CPU runtime splits gidx0 over threads); the rest stay loops.
//
// With work groups, every Global range of constant size is a global axis and every Local and
// GroupReduce range a local axis (a tensor core's warp, id -1, first); each kind is fitted into the
// device's three dimensions (grouped_dims.hpp: merged or split to fit global_max / local_max),
// globals innermost first so that gidx0 moves fastest, as tinygrad does. A global STORE whose
// address does not depend on some local axis (a grouped reduce's result, the same in every work
// item of the group) is gated so that only the work item with that local index 0 writes it.
//
// Only ranges with a constant size become SPECIALs (launch sizes are numbers); a Global range
// with a symbolic size stays a loop inside the work item.
#include <algorithm>

#include "grouped_dims.hpp"
#include "tg/codegen.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg {

namespace {

using SpecialMap = std::unordered_map<const UOp*, UOpPtr>;

const RangeArg& rarg(const UOp* r) { return std::get<RangeArg>(r->arg); }

std::vector<const UOp*> ranges_by_id(const UOpPtr& ast, std::initializer_list<AxisType> types) {
  std::vector<const UOp*> out;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::RANGE && std::find(types.begin(), types.end(), rarg(u).type) != types.end())
      out.push_back(u);
  // Outermost first: the scheduler numbers output axes from the outside in.
  std::sort(out.begin(), out.end(),
            [](const UOp* a, const UOp* b) { return rarg(a).id < rarg(b).id; });
  return out;
}

UOpPtr cpu_dims(const UOpPtr& ast, const RendererCaps& caps, std::array<int64_t, 3>& global) {
  SpecialMap specials;
  size_t dim = 0;
  for (const UOp* r : ranges_by_id(ast, {AxisType::Global})) {
    if (dim >= 3 || caps.global_max[dim] <= 0) break;
    const UOpPtr& end = r->src[0];
    if (!end->is_const() || end->ivmin() > caps.global_max[dim]) continue;
    const std::string name = "gidx" + std::to_string(dim);
    specials[r] = UOp::make(Ops::SPECIAL, r->dtype, {end}, name);
    global[dim++] = end->ivmin();
  }
  if (specials.empty()) return ast;
  return substitute(ast, specials);
}

std::string sizes_str(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) s += (s.empty() ? "" : "x") + std::to_string(x);
  return s;
}

UOpPtr work_group_dims(const UOpPtr& ast, const RendererCaps& caps, std::array<int64_t, 3>& global,
                       std::array<int64_t, 3>& local) {
  std::vector<const UOp*> globals;
  for (const UOp* r : ranges_by_id(ast, {AxisType::Global}))
    if (r->src[0]->is_const()) globals.push_back(r);
  const std::vector<const UOp*> locals =
      ranges_by_id(ast, {AxisType::Local, AxisType::GroupReduce});
  auto sizes = [](const std::vector<const UOp*>& rs) {
    std::vector<int64_t> out;
    for (const UOp* r : rs) out.push_back(r->src[0]->ivmin());
    return out;
  };
  SpecialMap subs;
  // Local axes must fit: the kernel optimizer checked them against the same limits.
  if (!locals.empty()) {
    auto l = codegen_detail::grouped_dims("lidx", sizes(locals), caps.local_max, false);
    if (!l)
      throw Error("codegen: local sizes " + sizes_str(sizes(locals)) +
                  " do not fit the device's local dimensions (RendererCaps::local_max)");
    // A tensor core's warp (a Local range with id -1, first by id) must be lidx0 on its own,
    // so that its index is the thread's lane; the kernel optimizer keeps it so.
    if (rarg(locals[0]).id < 0 && l->launch[0] != locals[0]->src[0]->ivmin())
      throw Error("codegen: local sizes " + sizes_str(sizes(locals)) +
                  " merge a tensor core's warp with other local axes");
    for (size_t i = 0; i < locals.size(); ++i) subs[locals[i]] = l->index[i];
    for (size_t i = 0; i < l->launch.size(); ++i) local[i] = l->launch[i];
  }
  // Global axes that cannot be fitted stay loops, outermost ones first.
  while (!globals.empty()) {
    auto g = codegen_detail::grouped_dims("gidx", sizes(globals), caps.global_max, true);
    if (g) {
      for (size_t i = 0; i < globals.size(); ++i) subs[globals[i]] = g->index[i];
      for (size_t i = 0; i < g->launch.size(); ++i) global[i] = g->launch[i];
      break;
    }
    globals.erase(globals.begin());
  }
  if (subs.empty()) return ast;

  // Gate global stores on the local axes their address does not use.
  for (const UOp* u : ast->toposort()) {
    if (u->op != Ops::STORE || u->src[0]->op != Ops::INDEX) continue;
    const UOp* index = u->src[0].get();
    if (index->src[0]->op != Ops::PARAM) continue;
    // An address a load shares (an update in place) stays ungated: every work item of the group
    // then writes the same value there.
    bool loaded = false;
    for (const UOp* v : ast->toposort()) loaded |= v->op == Ops::LOAD && v->src[0].get() == index;
    if (loaded) continue;
    UOpPtr gate;
    for (const UOp* l : locals)
      if (!index->src[1]->backward_slice().count(l) && index->src[1].get() != l) {
        const UOpPtr first = l->ptr()->eq(UOp::const_(l->dtype, int64_t{0}));
        gate = gate ? gate->alu(Ops::AND, {first}) : first;
      }
    if (!gate) continue;
    if (index->src.size() > 2) gate = index->src[2]->alu(Ops::AND, {gate});
    subs[index] = UOp::make(Ops::INDEX, index->dtype, {index->src[0], index->src[1], gate});
  }
  // The gates name ranges that become SPECIALs: substitute those inside the gates too.
  SpecialMap ranges_only;
  for (const UOp* r : locals) ranges_only[r] = subs.at(r);
  for (const UOp* r : globals) ranges_only[r] = subs.at(r);
  for (auto& [node, repl] : subs)
    if (node->op == Ops::INDEX) repl = substitute(repl, ranges_only);
  return substitute(ast, subs);
}

} // namespace

UOpPtr add_gpudims(const UOpPtr& ast, const RendererCaps& caps, std::array<int64_t, 3>& global,
                   std::array<int64_t, 3>& local) {
  global = {1, 1, 1};
  local = {1, 1, 1};
  if (!caps.has_local) return cpu_dims(ast, caps, global);
  return work_group_dims(ast, caps, global, local);
}

} // namespace tg
