#pragma once
// What the kernel optimizer's files share: the kinds of axes Opts count, a kernel's ranges in
// id order, and constant range sizes.
#include <algorithm>
#include <array>
#include <vector>

#include "tg/codegen_opt.hpp"
#include "tg/ir/uop.hpp"

namespace tg::opt_detail {

inline bool is_output_axis(AxisType t) {
  return t == AxisType::Global || t == AxisType::Loop || t == AxisType::Local ||
         t == AxisType::Thread;
}
inline bool is_reduce_axis(AxisType t) {
  return t == AxisType::Reduce || t == AxisType::GroupReduce;
}
inline bool is_upcast_axis(AxisType t) { return t == AxisType::Upcast || t == AxisType::Unroll; }

inline const RangeArg& rarg(const UOp* r) { return std::get<RangeArg>(r->arg); }

// A tensor core's warp (tinygrad's WARP axis, id -1 as there): a Local range that no Opt
// counts among the output axes, launched as the first local dimension (its index is the lane).
inline bool is_warp(const UOp* r) { return rarg(r).type == AxisType::Local && rarg(r).id < 0; }

// Every RANGE of the kernel, in id order.
inline std::vector<const UOp*> ranges_of(const UOpPtr& ast) {
  std::vector<const UOp*> out;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::RANGE) out.push_back(u);
  std::sort(out.begin(), out.end(),
            [](const UOp* a, const UOp* b) { return rarg(a).id < rarg(b).id; });
  return out;
}

// A range's size when it is a constant, else -1.
inline int64_t const_size(const UOp* r) { return r->src[0]->is_const() ? r->src[0]->ivmin() : -1; }

// The first range id the kernel does not use.
int64_t next_range_id(const UOpPtr& ast);

// tinygrad's shift_to (shift_to.cpp): range `r` (constant size N, divisible by `amount`) becomes
// outer * amount + inner, or with `top` inner * (N / amount) + outer; outer keeps r's id and
// kind (gone when N == amount), inner is a new range of `amount` and kind `inner_type`; REDUCEs
// that listed r list both, outermost first.
UOpPtr shift_to(const UOpPtr& ast, const UOpPtr& r, int64_t amount, AxisType inner_type, bool top);

// The ranges `root` depends on that are open where it is: a REDUCE closes the ranges it lists.
std::vector<const UOp*> open_ranges(const UOp* root);

// The TC Opt (tc_opt.cpp, tinygrad's _apply_tc_opt) applied to `ast`: the kernel and the
// outer N, M and K ranges left after the split (null where the tile took the whole axis).
// Raises OptError where the opt cannot apply.
struct TcApplied {
  UOpPtr ast;
  std::array<UOpPtr, 3> axes;
};
TcApplied apply_tc(const UOpPtr& ast, int axis, const TcArg& arg, const RendererCaps& caps);

// PADTO (padto.cpp): range `r` of constant size n becomes a range of `size` (> n) with the same
// id and kind; every buffer access that depends on it is gated by r < n (a gated load yields 0)
// and every REDUCE over it reduces its identity where r >= n.
UOpPtr pad_to(const UOpPtr& ast, const UOpPtr& r, int64_t size);

} // namespace tg::opt_detail
