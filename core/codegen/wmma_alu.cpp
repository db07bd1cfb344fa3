// A WMMA of a single-thread tensor core (threads 1: no lanes to exchange, as tinygrad's AMX on
// the CPU) written as the multiply-adds it stands for: D(m, n) = C(m, n) + sum over k of
// A(m, k) * B(k, n), each operand's lane read where tensor_core_layout puts that element. A
// renderer without a WMMA rule runs such a kernel as plain vector arithmetic.
#include <algorithm>

#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg {

namespace {

struct WmmaCtx {
  const RendererCaps* caps = nullptr;
};

UOpPtr lane(const UOpPtr& x, int64_t i) {
  if (x->dtype.count == 1) return x;
  return UOp::make(Ops::GEP, x->dtype.scalar(), {x}, Shape(std::vector<int64_t>{i}));
}

int64_t element_at(const std::vector<std::array<int64_t, 2>>& layout, int64_t row, int64_t col) {
  const auto it = std::find(layout.begin(), layout.end(), std::array<int64_t, 2>{row, col});
  if (it == layout.end())
    throw Error("codegen: a single-thread tensor core's fragment lacks element (" +
                std::to_string(row) + ", " + std::to_string(col) + ")");
  return it - layout.begin();
}

UOpPtr multiply_adds(const TensorCore& tc, const UOpPtr& wmma) {
  const TensorCoreLayout l = tensor_core_layout(tc, 0);
  const UOpPtr &a = wmma->src[0], &b = wmma->src[1], &c = wmma->src[2];
  const DType out = tc.dtype_out;
  std::vector<UOpPtr> lanes;
  for (int64_t e = 0; e < static_cast<int64_t>(l.c.size()); ++e) {
    const auto [m, n] = l.c[static_cast<size_t>(e)];
    UOpPtr acc = lane(c, e);
    for (int64_t k = 0; k < tc.dims[2]; ++k) {
      const UOpPtr x = lane(a, element_at(l.a, m, k))->cast(out);
      const UOpPtr y = lane(b, element_at(l.b, k, n))->cast(out);
      acc = acc + x * y;
    }
    lanes.push_back(acc);
  }
  if (lanes.size() == 1) return lanes[0];
  return UOp::make(Ops::VECTORIZE, wmma->dtype, std::move(lanes));
}

const PatternMatcher& pm_wmma_alu() {
  static const PatternMatcher pm({
      {UPat(Ops::WMMA, {}, std::nullopt, "w"),
       [](const Captures& cap) -> UOpPtr {
         const UOpPtr& w = cap["w"];
         const auto* name = std::get_if<std::string>(&w->arg);
         if (name == nullptr) return nullptr;
         for (const TensorCore& tc : cap.ctx<WmmaCtx>().caps->tensor_cores)
           if (tc.threads == 1 && tc.name() == *name) return multiply_adds(tc, w);
         return nullptr;
       }},
  });
  return pm;
}

} // namespace

UOpPtr lower_single_thread_wmma(const UOpPtr& ast, const RendererCaps& caps) {
  if (std::none_of(caps.tensor_cores.begin(), caps.tensor_cores.end(),
                   [](const TensorCore& tc) { return tc.threads == 1; }))
    return ast;
  WmmaCtx ctx{&caps};
  return graph_rewrite(ast, pm_wmma_alu(), ctx, "single_thread_wmma");
}

} // namespace tg
