// Applying an Opt (tinygrad's Scheduler.apply_opt, UPCAST and UNROLL): shift_to splits a
// RANGE into an outer loop and an inner Upcast/Unroll range.
#include "axes.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"

namespace tg {

using namespace opt_detail;

namespace {

struct ShiftCtx {
  const UOp* old = nullptr;
  UOpPtr repl, outer, inner;
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
             src.push_back(s.outer);
             src.push_back(s.inner);
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

std::string_view opt_op_name(OptOp op) {
  static constexpr std::string_view names[] = {"UPCAST", "UNROLL", "LOCAL", "GROUP", "GROUPTOP",
                                               "THREAD", "PADTO",  "SWAP",  "TC"};
  return names[static_cast<size_t>(op)];
}

std::string Opt::str() const {
  return "Opt(" + std::string(opt_op_name(op)) + ", " + std::to_string(axis) + ", " +
         std::to_string(amount) + ")";
}

std::vector<UOpPtr> opt_axes(const UOpPtr& ast, bool reduce) {
  std::vector<UOpPtr> out;
  for (const UOp* r : ranges_of(ast))
    if (reduce ? is_reduce_axis(rarg(r).type) : is_output_axis(rarg(r).type))
      out.push_back(r->ptr());
  return out;
}

UOpPtr apply_opt(const UOpPtr& ast, const Opt& opt) {
  auto fail = [&](const std::string& why) -> UOpPtr {
    throw Error("codegen: cannot apply " + opt.str() + ": " + why);
  };
  if (opt.op != OptOp::UPCAST && opt.op != OptOp::UNROLL)
    return fail("only UPCAST and UNROLL are implemented (the CPU has no local memory)");
  const bool reduce = opt.op == OptOp::UNROLL;
  const auto axes = opt_axes(ast, reduce);
  if (opt.axis < 0 || static_cast<size_t>(opt.axis) >= axes.size())
    return fail("the kernel has " + std::to_string(axes.size()) +
                (reduce ? " reduce axes" : " output axes") + ", no axis " +
                std::to_string(opt.axis));
  const UOpPtr& r = axes[static_cast<size_t>(opt.axis)];
  const int64_t n = const_size(r.get());
  if (n < 0) return fail("axis size " + r->src[0]->str() + " is not a constant");
  const int64_t amt = opt.amount == 0 ? n : opt.amount;
  if (amt <= 1) return fail("the amount must be at least 2");
  if (n % amt != 0)
    return fail("axis of size " + std::to_string(n) + " is not divisible by " +
                std::to_string(amt));
  if (amt > 256) return fail("an amount above 256 would make vectors too wide");
  int64_t next_id = 0;
  for (const UOp* x : ranges_of(ast)) next_id = std::max(next_id, rarg(x).id + 1);
  ShiftCtx ctx;
  ctx.old = r.get();
  ctx.inner = UOp::range(UOp::const_(r->src[0]->dtype, amt), next_id,
                         reduce ? AxisType::Unroll : AxisType::Upcast);
  if (n == amt) {
    ctx.repl = ctx.inner;
  } else {
    ctx.outer =
        UOp::range(UOp::const_(r->src[0]->dtype, n / amt), rarg(r.get()).id, rarg(r.get()).type);
    ctx.repl = ctx.outer * UOp::const_(r->dtype, amt) + ctx.inner;
  }
  return graph_rewrite(ast, pm_shift(), ctx, "shift_to");
}

UOpPtr optimize_kernel(const UOpPtr& ast, const std::vector<Opt>& opts) {
  if (opts.empty()) return ast;
  UOpPtr k = ast;
  for (const Opt& o : opts) k = apply_opt(k, o);
  return graph_rewrite(k, symbolic(), "simplify");
}

} // namespace tg
