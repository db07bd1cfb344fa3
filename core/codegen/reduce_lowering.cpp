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
//
// A sum of WMMAs (the TC opt's) accumulates in the WMMAs themselves (tinygrad's pm_wmma_add):
// acc + WMMA(a, b, c) is WMMA(a, b, c + acc), through the GEP/VECTORIZE that expansion puts
// around WMMAs to line their lanes up, so the accumulator is the tensor core's C operand.
#include <map>

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

UOpPtr gep(const UOpPtr& x, const std::vector<int64_t>& lanes) {
  const DType d = lanes.size() == 1 ? x->dtype.scalar()
                                    : x->dtype.scalar().vec(static_cast<uint16_t>(lanes.size()));
  return UOp::make(Ops::GEP, d, {x}, Shape(lanes));
}

UOpPtr add_into(const UOpPtr& wmma, const UOpPtr& acc) {
  const UOpPtr& c = wmma->src[2];
  const UOpPtr sum = c->is_const_value(0) ? acc : c + acc;
  return wmma->replace_src({wmma->src[0], wmma->src[1], sum});
}

// `acc` + `value` with the addition moved into the WMMAs `value`'s lanes come from: value is a
// WMMA, a GEP of one, or a VECTORIZE of single lanes of WMMAs that together use every lane of
// each. nullptr when `value` is not such a node.
UOpPtr fold_wmma_add(const UOpPtr& acc, const UOpPtr& value) {
  if (value->op == Ops::WMMA) return add_into(value, acc);
  // (WMMA, its lane) of each lane of value.
  std::vector<std::pair<UOpPtr, int64_t>> from;
  if (value->op == Ops::GEP && value->src[0]->op == Ops::WMMA) {
    for (int64_t l : std::vector<int64_t>(std::get<Shape>(value->arg)))
      from.emplace_back(value->src[0], l);
  } else if (value->op == Ops::VECTORIZE) {
    for (const UOpPtr& s : value->src) {
      if (s->op != Ops::GEP || s->src[0]->op != Ops::WMMA || s->dtype.count != 1) return nullptr;
      from.emplace_back(s->src[0], std::vector<int64_t>(std::get<Shape>(s->arg))[0]);
    }
  } else {
    return nullptr;
  }
  // For each WMMA, which lane of acc goes to each of its lanes.
  std::map<const UOp*, std::vector<int64_t>> acc_lanes;
  for (size_t l = 0; l < from.size(); ++l) {
    auto& v = acc_lanes[from[l].first.get()];
    v.resize(from[l].first->dtype.count, -1);
    if (v[static_cast<size_t>(from[l].second)] != -1) return nullptr; // a lane used twice
    v[static_cast<size_t>(from[l].second)] = static_cast<int64_t>(l);
  }
  std::map<const UOp*, UOpPtr> folded;
  for (const auto& [w, lanes] : acc_lanes) {
    if (std::find(lanes.begin(), lanes.end(), -1) != lanes.end()) return nullptr;
    folded[w] = add_into(w->ptr(), gep(acc, lanes));
  }
  if (value->op == Ops::GEP) return gep(folded.begin()->second, std::get<Shape>(value->arg));
  std::vector<UOpPtr> src;
  for (const auto& [w, l] : from) src.push_back(gep(folded.at(w.get()), {l}));
  return UOp::make(Ops::VECTORIZE, value->dtype, std::move(src));
}

// acc + value with acc moved to the start of value's left-leaning chain of additions, the
// chain expansion builds from an unrolled reduce's parts (((v0 + v1) + v2) + v3): the result
// is (((acc + v0) + v1) + v2) + v3, as tinygrad's reduce_to_acc orders it. Each part then adds
// straight into the register, so products contract into multiply-adds on the accumulator;
// summed apart first, the parts need one op more and a second register per accumulator, which
// a matmul's 16 vector accumulators do not have (they spill).
UOpPtr accumulate_sum(const UOpPtr& acc, const UOpPtr& value) {
  std::vector<const UOpPtr*> later;
  const UOpPtr* first = &value;
  while ((*first)->op == Ops::ADD && (*first)->dtype == value->dtype) {
    later.push_back(&(*first)->src[1]);
    first = &(*first)->src[0];
  }
  UOpPtr sum = acc + *first;
  for (auto it = later.rbegin(); it != later.rend(); ++it) sum = sum + **it;
  return sum;
}

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
  UOpPtr next = op == Ops::ADD ? fold_wmma_add(cur, value) : nullptr;
  if (!next) next = op == Ops::ADD ? accumulate_sum(cur, value) : cur->alu(op, {value});
  UOpPtr done = store(index(acc), next);
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
