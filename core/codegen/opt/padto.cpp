// PADTO (tinygrad's OptOps.PADTO): a range padded up to a multiple, so that a later split
// divides it. The extra iterations must not touch memory or change a reduce: every buffer
// access that depends on the range is gated by r < n (a gated load yields 0, a gated store is
// skipped) and every REDUCE over the range reduces its op's identity there.
#include "../reduce_identity.hpp"
#include "axes.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg::opt_detail {

namespace {

struct PadCtx {
  UOpPtr old, padded, valid; // the range, its padded replacement, padded < old size
};

bool depends_on(const UOpPtr& u, const UOpPtr& r) {
  return u == r || u->backward_slice().count(r.get()) != 0;
}

// Whether `gate` already holds the padding's condition (a rule applied once).
bool has_valid(const UOpPtr& gate, const UOpPtr& valid) {
  return gate == valid || (gate->op == Ops::AND && gate->src[0] == valid);
}

const PatternMatcher& pm_pad() {
  static const PatternMatcher pm({
      {UPat(Ops::RANGE, {}, std::nullopt, "r"),
       [](const Captures& c) -> UOpPtr {
         const auto& p = c.ctx<PadCtx>();
         return c["r"] == p.old ? p.padded : nullptr;
       }},
      // Buffer accesses along the padded range get its condition in their gate.
      {UPat(Ops::INDEX, {}, std::nullopt, "x"),
       [](const Captures& c) -> UOpPtr {
         const auto& p = c.ctx<PadCtx>();
         const UOpPtr& x = c["x"];
         if (x->src[0]->op != Ops::PARAM || !depends_on(x, p.padded)) return nullptr;
         if (x->src.size() > 2 && has_valid(x->src[2], p.valid)) return nullptr;
         const UOpPtr gate = x->src.size() > 2 ? p.valid->alu(Ops::AND, {x->src[2]}) : p.valid;
         return UOp::make(Ops::INDEX, x->dtype, {x->src[0], x->src[1], gate});
       }},
      // A load that became gated yields 0 in the padding.
      {UPat(Ops::LOAD, {}, std::nullopt, "ld"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& ld = c["ld"];
         if (ld->src.size() != 1 || ld->src[0]->op != Ops::INDEX || ld->src[0]->src.size() < 3)
           return nullptr;
         return UOp::make(Ops::LOAD, ld->dtype, {ld->src[0], UOp::const_(ld->dtype, int64_t{0})});
       }},
      // A reduce over the padded range reduces its identity there.
      {UPat(Ops::REDUCE, {}, std::nullopt, "red"),
       [](const Captures& c) -> UOpPtr {
         const auto& p = c.ctx<PadCtx>();
         const UOpPtr& red = c["red"];
         bool over = false;
         for (size_t i = 1; i < red->src.size(); ++i) over |= red->src[i] == p.padded;
         const UOpPtr& v = red->src[0];
         if (!over || (v->op == Ops::WHERE && v->src[0] == p.valid)) return nullptr;
         std::vector<UOpPtr> src(red->src.begin(), red->src.end());
         src[0] = p.valid->where(
             v, codegen_detail::reduce_identity(std::get<ReduceArg>(red->arg).op, v->dtype));
         return red->replace_src(std::move(src));
       }},
  });
  return pm;
}

} // namespace

UOpPtr pad_to(const UOpPtr& ast, const UOpPtr& r, int64_t size) {
  PadCtx ctx;
  ctx.old = r;
  ctx.padded =
      UOp::range(UOp::const_(r->src[0]->dtype, size), rarg(r.get()).id, rarg(r.get()).type);
  ctx.valid = ctx.padded->lt(r->src[0]);
  return graph_rewrite(ast, pm_pad(), ctx, "padto");
}

} // namespace tg::opt_detail
