// Reduce lowering (tinygrad's reduce_to_acc): REDUCE(value, ranges...) becomes
//
//   acc  = DEFINE_REG(T.ptr(1, reg))
//   init = STORE(INDEX(AFTER(acc, outer ranges...), 0), identity)     before the reduce loops
//   upd  = STORE(INDEX(acc, 0), LOAD(INDEX(AFTER(acc, init, ranges...), 0)) op value)
//   done = END(r_outer, END(..., END(r_inner, upd)))
//   out  = LOAD(INDEX(AFTER(acc, done), 0))                            after them
//
// The AFTER nodes carry the ordering a register needs but data flow does not show: the init
// depends on the loops the value lives in (so it runs once per output element, not once per
// kernel), the load in the loop on the init and the reduce ranges, and the load after the loop
// on its END. They also make those loads distinct nodes, which hash-consing would otherwise
// merge into one.
#include "live_ranges.hpp"
#include "reduce_identity.hpp"
#include "tg/codegen.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg {

namespace {

struct ReduceCtx {
  int64_t acc_num = 0;
};

UOpPtr reduce_to_acc(ReduceCtx& ctx, const UOpPtr& red) {
  const Ops op = std::get<ReduceArg>(red->arg).op;
  const UOpPtr& value = red->src[0];
  // symbolic may have folded a loop of size one to its only index; that point is the value.
  std::vector<UOpPtr> ranges;
  for (size_t i = 1; i < red->src.size(); ++i)
    if (red->src[i]->op == Ops::RANGE) ranges.push_back(red->src[i]);
  if (ranges.empty()) return value;
  const DType d = red->dtype;

  // The loops the value lives in besides the reduced ones: the accumulator is reset per
  // iteration of those.
  const auto live = codegen_detail::live_ranges(value);
  std::vector<UOpPtr> outer;
  for (const UOp* u : value->toposort())
    if (u->op == Ops::RANGE && codegen_detail::range_contains(live.at(value.get()), u)) {
      bool reduced = false;
      for (const auto& r : ranges) reduced |= r.get() == u;
      if (!reduced) outer.push_back(u->ptr());
    }

  const UOpPtr zero = UOp::const_(dtypes::index, int64_t{0});
  // A vector REDUCE (from expansion) keeps one element per lane; its LOADs and STOREs read and
  // write them all from element 0 (devectorize splits them where the renderer asks).
  const UOpPtr acc =
      UOp::make(Ops::DEFINE_REG, d.scalar().ptr(d.count, AddrSpace::Reg), {}, ctx.acc_num++);
  auto after = [&](std::vector<UOpPtr> deps) {
    if (deps.empty()) return acc;
    deps.insert(deps.begin(), acc);
    return UOp::make(Ops::AFTER, acc->dtype, std::move(deps));
  };
  auto index = [&](const UOpPtr& buf) { return UOp::make(Ops::INDEX, buf->dtype, {buf, zero}); };
  auto store = [](const UOpPtr& idx, const UOpPtr& v) {
    return UOp::make(Ops::STORE, dtypes::void_, {idx, v});
  };

  const UOpPtr init = store(index(after(outer)), codegen_detail::reduce_identity(op, d));
  std::vector<UOpPtr> in_loop{init};
  in_loop.insert(in_loop.end(), ranges.begin(), ranges.end());
  const UOpPtr cur = UOp::make(Ops::LOAD, d, {index(after(in_loop))});
  UOpPtr done = store(index(acc), cur->alu(op, {value}));
  // Innermost loop (the last range listed) closes first.
  for (auto it = ranges.rbegin(); it != ranges.rend(); ++it)
    done = UOp::make(Ops::END, dtypes::void_, {*it, done});
  return UOp::make(Ops::LOAD, d, {index(after({done}))});
}

const PatternMatcher& pm_reduce() {
  static const PatternMatcher pm({
      {UPat(Ops::REDUCE, {}, std::nullopt, "red"),
       [](const Captures& c) { return reduce_to_acc(c.ctx<ReduceCtx>(), c["red"]); }},
  });
  return pm;
}

} // namespace

UOpPtr lower_reduces(const UOpPtr& ast) {
  ReduceCtx ctx;
  return graph_rewrite(ast, pm_reduce(), ctx, "lower_reduces");
}

} // namespace tg
