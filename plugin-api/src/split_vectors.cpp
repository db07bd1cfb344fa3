// The vector-ALU split shared by the C dialects (see split_vectors.hpp).
#include "tg/plugin/split_vectors.hpp"

#include <algorithm>

namespace tg {

namespace {

UOpPtr lane(const UOpPtr& x, int64_t l) {
  if (x->dtype.count == 1) return x;
  return UOp::make(Ops::GEP, x->dtype.scalar(), {x}, Shape{l});
}

UOpPtr split_alu(const UOpPtr& x) {
  int64_t w = x->dtype.count;
  for (const auto& s : x->src) w = std::max<int64_t>(w, s->dtype.count);
  if (w == 1) return nullptr;
  std::vector<UOpPtr> lanes;
  for (int64_t l = 0; l < w; ++l) {
    std::vector<UOpPtr> src;
    for (const auto& s : x->src) src.push_back(lane(s, l));
    lanes.push_back(UOp::make(x->op, x->dtype.scalar(), std::move(src), x->arg));
  }
  return UOp::make(Ops::VECTORIZE, x->dtype.scalar().vec(static_cast<uint16_t>(w)),
                   std::move(lanes));
}

UOpPtr fold_gep(const UOpPtr& g) {
  const auto& lanes = std::get<Shape>(g->arg);
  const UOpPtr& x = g->src[0];
  auto pick = [&](std::span<const UOpPtr> from) -> UOpPtr {
    if (lanes.size() == 1) return from[static_cast<size_t>(static_cast<int64_t>(lanes[0]))];
    std::vector<UOpPtr> src;
    for (int64_t l : lanes) src.push_back(from[static_cast<size_t>(l)]);
    return UOp::make(Ops::VECTORIZE, g->dtype, std::move(src));
  };
  if (x->op == Ops::VECTORIZE) return pick(x->src);
  if (x->is_const()) return UOp::const_(g->dtype, x->const_value());
  if (x->op == Ops::GEP) {
    const auto& inner = std::get<Shape>(x->arg);
    Shape composed;
    for (int64_t l : lanes) composed.push_back(inner[static_cast<size_t>(l)]);
    return UOp::make(Ops::GEP, g->dtype, {x->src[0]}, composed);
  }
  return nullptr;
}

UOpPtr fold_vectorize(const UOpPtr& v) {
  const UOpPtr* base = nullptr;
  for (size_t i = 0; i < v->src.size(); ++i) {
    const UOpPtr& s = v->src[i];
    if (s->op != Ops::GEP || std::get<Shape>(s->arg).size() != 1 ||
        static_cast<int64_t>(std::get<Shape>(s->arg)[0]) != static_cast<int64_t>(i))
      return nullptr;
    if (base && s->src[0] != *base) return nullptr;
    base = &s->src[0];
  }
  if (base == nullptr || (*base)->dtype != v->dtype) return nullptr;
  return *base;
}

} // namespace

const PatternMatcher& split_vector_alu() {
  static const PatternMatcher pm({
      {UPat(GroupOp::ALU | OpSet{Ops::CAST, Ops::BITCAST}, {}, std::nullopt, "x"),
       [](const Captures& c) { return split_alu(c["x"]); }},
      {UPat(Ops::GEP, {}, std::nullopt, "g"), [](const Captures& c) { return fold_gep(c["g"]); }},
      {UPat(Ops::VECTORIZE, {}, std::nullopt, "v"),
       [](const Captures& c) { return fold_vectorize(c["v"]); }},
  });
  return pm;
}

} // namespace tg
