// tinygrad's Scheduler.shift_to: one RANGE split into an outer loop and an inner range of the
// Opt's kind, the REDUCEs that listed it listing both.
#include "axes.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg::opt_detail {

namespace {

struct ShiftCtx {
  const UOp* old = nullptr;
  UOpPtr repl;          // what the old range's value is now
  UOpPtr first, second; // the ranges a REDUCE lists instead, outermost first (second may be null)
};

const PatternMatcher& pm_shift() {
  static const PatternMatcher pm({
      {UPat(Ops::RANGE, {}, std::nullopt, "r"),
       [](const Captures& c) -> UOpPtr {
         const auto& s = c.ctx<ShiftCtx>();
         return c["r"].get() == s.old ? s.repl : nullptr;
       }},
      // A REDUCE lists its ranges: the split range becomes the outer and the inner range.
      {UPat(Ops::REDUCE, {}, std::nullopt, "red"),
       [](const Captures& c) -> UOpPtr {
         const auto& s = c.ctx<ShiftCtx>();
         const UOpPtr& red = c["red"];
         if (s.repl->op == Ops::RANGE) return nullptr;
         std::vector<UOpPtr> src{red->src[0]};
         bool changed = false;
         for (size_t i = 1; i < red->src.size(); ++i) {
           if (red->src[i] == s.repl) {
             src.push_back(s.first);
             if (s.second) src.push_back(s.second);
             changed = true;
           } else {
             src.push_back(red->src[i]);
           }
         }
         return changed ? red->replace_src(std::move(src)) : nullptr;
       }},
  });
  return pm;
}

} // namespace

int64_t next_range_id(const UOpPtr& ast) {
  int64_t next = 0;
  for (const UOp* x : ranges_of(ast)) next = std::max(next, rarg(x).id + 1);
  return next;
}

UOpPtr shift_to(const UOpPtr& ast, const UOpPtr& r, int64_t amount, AxisType inner_type, bool top) {
  const int64_t n = const_size(r.get());
  const DType dt = r->src[0]->dtype;
  ShiftCtx ctx;
  ctx.old = r.get();
  const UOpPtr inner = UOp::range(UOp::const_(dt, amount), next_range_id(ast), inner_type);
  if (n == amount) {
    ctx.repl = inner;
  } else {
    const UOpPtr outer =
        UOp::range(UOp::const_(dt, n / amount), rarg(r.get()).id, rarg(r.get()).type);
    ctx.repl = top ? inner * UOp::const_(r->dtype, n / amount) + outer
                   : outer * UOp::const_(r->dtype, amount) + inner;
    ctx.first = top ? inner : outer;
    ctx.second = top ? outer : inner;
  }
  return graph_rewrite(ast, pm_shift(), ctx, "shift_to");
}

} // namespace tg::opt_detail
