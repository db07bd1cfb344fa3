// Grouped reduces (tinygrad's fix_group_for_reduce): a REDUCE over GroupReduce ranges (from the
// GROUP and GROUPTOP Opts) is finished by the work group together:
//
//   partial = REDUCE(value, the other reduce ranges)      each work item's share
//   STORE(INDEX(temp, slot(locals, groups) * W + lane), partial)     temp: DEFINE_LOCAL
//   BARRIER(that store)                                              the whole group wrote
//   REDUCE(LOAD(INDEX(AFTER(temp, barrier), slot(locals, g') * W + lane)), g')
//
// `temp` holds one partial result per upcast lane (W lanes) for every combination of the
// GroupReduce ranges and the Local ranges the value depends on; g' are new Reduce ranges of the
// GroupReduce sizes. Every work item of the group reads all partial results and finishes the
// reduce itself; gpudims gates the output's STORE so that only the work item whose GroupReduce
// index is 0 writes it. Runs after expansion (values may be vectors) and before reduce lowering,
// which turns both REDUCEs into accumulators.
#include <algorithm>

#include "tg/codegen.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"

namespace tg {

namespace {

struct GroupCtx {
  int64_t next_local = 0;
  int64_t next_range = 0;
};

const RangeArg& rarg(const UOp* r) { return std::get<RangeArg>(r->arg); }

// Row-major slot of `ranges` (outermost first) and the number of slots.
std::pair<UOpPtr, int64_t> slot_of(const std::vector<UOpPtr>& ranges) {
  UOpPtr slot = UOp::const_(dtypes::index, int64_t{0});
  int64_t n = 1;
  for (const UOpPtr& r : ranges) {
    const int64_t size = r->src[0]->ivmin();
    slot = slot * size + r;
    n *= size;
  }
  return {simplify(slot), n};
}

// INDEX of `width` consecutive elements from slot * width, as expansion builds vector accesses.
UOpPtr lanes_at(const UOpPtr& buf, const UOpPtr& slot, int64_t width) {
  if (width == 1) return UOp::make(Ops::INDEX, buf->dtype, {buf, slot});
  std::vector<UOpPtr> lanes;
  for (int64_t l = 0; l < width; ++l) lanes.push_back(simplify(slot * width + l));
  return UOp::make(Ops::INDEX, buf->dtype,
                   {buf, UOp::make(Ops::VECTORIZE, dtypes::index.vec(static_cast<uint16_t>(width)),
                                   std::move(lanes))});
}

UOpPtr fix_group_for_reduce(GroupCtx& ctx, const UOpPtr& red) {
  std::vector<UOpPtr> groups, rest;
  for (size_t i = 1; i < red->src.size(); ++i) {
    const UOpPtr& r = red->src[i];
    (r->op == Ops::RANGE && rarg(r.get()).type == AxisType::GroupReduce ? groups : rest)
        .push_back(r);
  }
  if (groups.empty()) return nullptr;
  const UOpPtr& value = red->src[0];
  const ReduceArg& arg = std::get<ReduceArg>(red->arg);

  // The Local ranges the partial results differ by: they index the temp too.
  std::vector<UOpPtr> locals;
  for (const UOp* u : value->toposort())
    if (u->op == Ops::RANGE && rarg(u).type == AxisType::Local) locals.push_back(u->ptr());
  auto by_id = [](const UOpPtr& a, const UOpPtr& b) { return rarg(a.get()).id < rarg(b.get()).id; };
  std::sort(locals.begin(), locals.end(), by_id);
  std::sort(groups.begin(), groups.end(), by_id);

  UOpPtr partial = value;
  if (!rest.empty()) {
    rest.insert(rest.begin(), value);
    partial = UOp::make(Ops::REDUCE, red->dtype, std::move(rest), red->arg);
  }
  const DType dt = red->dtype;
  const int64_t width = dt.count;
  std::vector<UOpPtr> store_axes = locals;
  store_axes.insert(store_axes.end(), groups.begin(), groups.end());
  const auto [store_slot, slots] = slot_of(store_axes);
  const UOpPtr temp = UOp::make(Ops::DEFINE_LOCAL, dt.scalar().ptr(slots * width, AddrSpace::Local),
                                {}, ctx.next_local++);
  const UOpPtr stored =
      UOp::make(Ops::STORE, dtypes::void_, {lanes_at(temp, store_slot, width), partial});
  const UOpPtr barrier = UOp::make(Ops::BARRIER, dtypes::void_, {stored});
  const UOpPtr written = UOp::make(Ops::AFTER, temp->dtype, {temp, barrier});

  // The group's partial results, reduced over new Reduce ranges of the group's sizes.
  std::vector<UOpPtr> finals;
  for (const UOpPtr& g : groups)
    finals.push_back(UOp::range(g->src[0], ctx.next_range++, AxisType::Reduce));
  std::vector<UOpPtr> load_axes = locals;
  load_axes.insert(load_axes.end(), finals.begin(), finals.end());
  const UOpPtr load =
      UOp::make(Ops::LOAD, dt, {lanes_at(written, slot_of(load_axes).first, width)});
  std::vector<UOpPtr> src{load};
  src.insert(src.end(), finals.begin(), finals.end());
  return UOp::make(Ops::REDUCE, dt, std::move(src), ReduceArg{arg.op, {}});
}

const PatternMatcher& pm_group() {
  static const PatternMatcher pm({
      {UPat(Ops::REDUCE, {}, std::nullopt, "red"),
       [](const Captures& c) { return fix_group_for_reduce(c.ctx<GroupCtx>(), c["red"]); }},
  });
  return pm;
}

} // namespace

UOpPtr group_reduces(const UOpPtr& ast) {
  GroupCtx ctx;
  bool any = false;
  for (const UOp* u : ast->toposort()) {
    if (u->op == Ops::RANGE) {
      ctx.next_range = std::max(ctx.next_range, rarg(u).id + 1);
      any |= rarg(u).type == AxisType::GroupReduce;
    }
    if (u->op == Ops::DEFINE_LOCAL)
      ctx.next_local = std::max(ctx.next_local, std::get<int64_t>(u->arg) + 1);
  }
  if (!any) return ast;
  return graph_rewrite(ast, pm_group(), ctx, "group_reduces");
}

} // namespace tg
