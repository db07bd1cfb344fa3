// The scheduler's first stage, as a pattern table: every BUFFER becomes a numbered placeholder
// (so a repeated step over other buffers is the same graph: the schedule cache's key),
// autograd-only nodes go, CONTIGUOUS of memory that already is contiguous goes, and a large
// reduce into few outputs is split in two kernels.
#include <unordered_set>

#include "rangeify.hpp"
#include "schedule_build.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg::sched {

namespace {

struct NormalizeCtx {
  std::vector<const UOp*>& buffers_in_order;
  std::unordered_set<UOpPtr> split; // reduces split_reduce made: never split again
};

// tinygrad's split_reduceop: a reduce of many elements into few outputs would run on one
// thread, so its largest reduced axis of size d is split as (k, d/k): a first kernel reduces
// d/k elements into k partials in parallel (stored), a second reduces the k partials. k is the
// largest power of two from 256 down to 8 that leaves at least 32 rows a partial, so a batch
// of 512 splits too (beautiful_mnist's per-channel batch norm sums over 512 x 20 x 20: 2.5 ->
// 2.0 ms each on 2 cores). Returns null when the reduce is small or no axis splits evenly.
UOpPtr split_reduce(const UOp& u, const UOpPtr& src, NormalizeCtx& ctx) {
  const auto& ra = std::get<ReduceArg>(u.arg);
  const Shape& in = *src->shape();
  if (any_symbolic(in)) return nullptr; // a split needs known sizes
  const int64_t out_n = shape_numel(*u.shape());
  if (out_n == 0 || shape_numel(in) / out_n < (int64_t{1} << 15) || out_n > 64) return nullptr;
  int64_t axis = -1, k = 0;
  for (int64_t a : ra.axes) {
    const int64_t d = in[static_cast<size_t>(a)];
    for (int64_t f = 256; f >= 8; f /= 2)
      if (d % f == 0 && d / f >= 32 && (axis < 0 || f > k)) {
        axis = a, k = f;
        break;
      }
  }
  if (axis < 0) return nullptr;
  const auto ax = static_cast<size_t>(axis);
  Shape split = in;
  split[ax] = in[ax] / k;
  split.insert(split.begin() + axis, k);
  std::vector<int64_t> inner_axes; // every reduced axis but the k partials (axis stays)
  for (int64_t a : ra.axes) inner_axes.push_back(a < axis ? a : a + 1);
  UOpPtr x = UOp::make(Ops::RESHAPE, src->dtype, {src}, split);
  UOpPtr partial = UOp::make(Ops::REDUCE, u.dtype, {x}, ReduceArg{ra.op, inner_axes});
  UOpPtr total = UOp::make(Ops::REDUCE, u.dtype, {UOp::make(Ops::CONTIGUOUS, u.dtype, {partial})},
                           ReduceArg{ra.op, {axis}});
  ctx.split.insert(partial);
  ctx.split.insert(total);
  return UOp::make(Ops::RESHAPE, u.dtype, {total}, *u.shape());
}

const PatternMatcher& pm_normalize() {
  static const PatternMatcher pm({
      // A real buffer (UNIQUE id >= 0) becomes placeholder -1-k, k in order of first appearance.
      {UPat(Ops::BUFFER, {}, std::nullopt, "b"),
       [](const Captures& c) -> UOpPtr {
         const UOpPtr& b = c["b"];
         if (std::get<int64_t>(b->src[0]->arg) < 0) return nullptr; // already a placeholder
         auto& order = c.ctx<NormalizeCtx>().buffers_in_order;
         const auto k = static_cast<int64_t>(order.size());
         order.push_back(b.get());
         return UOp::make(Ops::BUFFER, b->dtype,
                          {UOp::make(Ops::UNIQUE, dtypes::void_, {}, -1 - k), b->src[1]}, b->arg);
       }},
      // Only autograd sees these.
      {UPat(OpSet{Ops::DETACH, Ops::CONTIGUOUS_BACKWARD, Ops::CUSTOM_VJP}, {}, std::nullopt, "x"),
       [](const Captures& c) { return c["x"]->src[0]; }},
      {UPat(Ops::CONTIGUOUS, {}, std::nullopt, "x").with_src({UPat::var("src")}),
       [](const Captures& c) -> UOpPtr {
         return is_contiguous_buffer_view(c["src"]) ? c["src"] : nullptr;
       }},
      {UPat(Ops::REDUCE, {}, std::nullopt, "r"),
       [](const Captures& c) -> UOpPtr {
         auto& ctx = c.ctx<NormalizeCtx>();
         const UOpPtr& r = c["r"];
         if (ctx.split.count(r)) return nullptr;
         return split_reduce(*r, r->src[0], ctx);
       }},
  });
  return pm;
}

} // namespace

int64_t placeholder_number(const UOp* buffer) {
  return -1 - std::get<int64_t>(buffer->src[0]->arg);
}

UOpPtr normalize(const UOpPtr& sink, std::vector<const UOp*>& buffers_in_order) {
  NormalizeCtx ctx{buffers_in_order, {}};
  return graph_rewrite(sink, pm_normalize(), ctx, "normalize");
}

} // namespace tg::sched
