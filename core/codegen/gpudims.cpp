// GPU dims (tinygrad's pm_add_gpudims, simplified): Global RANGEs become SPECIAL work-item
// indices. A device runs one work item per index, so the loop disappears from the kernel. On
// the CPU the runtime splits gidx0 over threads and loops gidx1/gidx2 inside the call.
//
// Only ranges with a constant size become SPECIALs (launch sizes are numbers); a Global range
// with a symbolic size, one beyond the renderer's dimensions, or one larger than its
// global_max stays a loop inside the work item. Merging or splitting dimensions to fit is the
// kernel optimizer's job.
#include <algorithm>

#include "tg/codegen.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg {

namespace {

using SpecialMap = std::unordered_map<const UOp*, UOpPtr>;

} // namespace

UOpPtr add_gpudims(const UOpPtr& ast, const RendererCaps& caps, std::array<int64_t, 3>& global) {
  global = {1, 1, 1};
  std::vector<const UOp*> globals;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::RANGE && std::get<RangeArg>(u->arg).type == AxisType::Global)
      globals.push_back(u);
  // Outermost first: the scheduler numbers output axes from the outside in.
  std::sort(globals.begin(), globals.end(), [](const UOp* a, const UOp* b) {
    return std::get<RangeArg>(a->arg).id < std::get<RangeArg>(b->arg).id;
  });
  SpecialMap specials;
  size_t dim = 0;
  for (const UOp* r : globals) {
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

} // namespace tg
