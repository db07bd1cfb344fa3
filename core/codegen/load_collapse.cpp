// One-hot reduces become indexed loads (tinygrad's pm_load_collapse).
//
// Indexing a tensor by another tensor (an embedding lookup, gather, take_along_dim) is, in the
// tensor graph, a one-hot sum: out = sum over r in [0, N) of where(idx == r, x(r), 0), a
// compare and a select for every element of the indexed axis (BERT's word embeddings: 30522 per
// output, a 2048 x 768 lookup costing 48 G terms). The sum has at most one nonzero term, so it
// equals where(0 <= idx < N, x(idx), 0): the REDUCE over r goes and x is read at idx. The
// loads x makes at r are gated by that bound (an index outside the axis reads nothing and the
// result is 0, as the one-hot sum gives), and a REDUCE over other ranges too keeps those.
#include <unordered_map>

#include "tg/codegen.hpp"
#include "tg/ir/rewrite.hpp"

namespace tg {

namespace {

bool depends_on(const UOp* x, const UOp* r) {
  for (const UOp* u : x->toposort())
    if (u == r) return true;
  return false;
}

// `x` is `r` itself or an integer cast of it that holds every value of r.
bool is_range_value(const UOp* x, const UOp* r) {
  if (x == r) return true;
  if (x->op != Ops::CAST || x->src[0].get() != r || !x->dtype.is_int()) return false;
  return r->src[0]->ivmax() - 1 <= as_int(dtype_max(x->dtype));
}

// `value` with every use of `r` replaced by `i`; each buffer access whose address depended on
// r gets the gate `valid` (and its load the value 0 where the gate is false).
UOpPtr substitute_gated(const UOpPtr& value, const UOp* r, const UOpPtr& i, const UOpPtr& valid) {
  std::unordered_map<const UOp*, UOpPtr> done{{r, i}};
  for (const UOp* u : value->toposort()) {
    if (u == r) continue;
    bool changed = false;
    std::vector<UOpPtr> src;
    src.reserve(u->src.size() + 1);
    for (const UOpPtr& s : u->src) {
      auto it = done.find(s.get());
      changed |= it != done.end();
      src.push_back(it != done.end() ? it->second : s);
    }
    if (!changed) continue;
    if (u->op == Ops::INDEX && u->src[0]->op == Ops::PARAM) {
      if (src.size() >= 3)
        src[2] = src[2]->alu(Ops::AND, {valid});
      else
        src.push_back(valid);
    } else if (u->op == Ops::LOAD && src.size() == 1) {
      src.push_back(UOp::const_(u->dtype, 0));
    }
    done[u] = UOp::make(u->op, u->dtype, std::move(src), u->arg);
  }
  auto it = done.find(value.get());
  return it != done.end() ? it->second : value;
}

// REDUCE(ADD, where(idx == r, x, 0), ..., r, ...) -> where(0 <= idx < N, x at idx, 0), reduced
// over the other ranges when there are any. Also where(idx != r, 0, x).
UOpPtr collapse_one_hot(const UOpPtr& red) {
  if (std::get<ReduceArg>(red->arg).op != Ops::ADD) return nullptr;
  const UOpPtr& v = red->src[0];
  if (v->op != Ops::WHERE || v->dtype != red->dtype) return nullptr;
  const UOpPtr& cond = v->src[0];
  UOpPtr x;
  if (cond->op == Ops::CMPEQ && v->src[2]->is_const_value(0))
    x = v->src[1];
  else if (cond->op == Ops::CMPNE && v->src[1]->is_const_value(0))
    x = v->src[2];
  else
    return nullptr;
  for (size_t k = 1; k < red->src.size(); ++k) {
    const UOp* r = red->src[k].get();
    for (int side = 0; side < 2; ++side) {
      const UOpPtr& idx = cond->src[1 - side];
      if (!is_range_value(cond->src[side].get(), r) || !idx->dtype.is_int() ||
          depends_on(idx.get(), r))
        continue;
      const UOpPtr i = idx->dtype == dtypes::index ? idx : idx->cast(dtypes::index);
      const UOpPtr valid = UOp::const_(dtypes::index, -1)->lt(i)->alu(Ops::AND, {i->lt(r->src[0])});
      const UOpPtr picked =
          valid->where(substitute_gated(x, r, i, valid), UOp::const_(v->dtype, 0));
      std::vector<UOpPtr> rest{picked};
      for (size_t j = 1; j < red->src.size(); ++j)
        if (j != k) rest.push_back(red->src[j]);
      if (rest.size() == 1) return picked;
      return UOp::make(Ops::REDUCE, red->dtype, std::move(rest), red->arg);
    }
  }
  return nullptr;
}

} // namespace

UOpPtr collapse_one_hot_reduces(const UOpPtr& ast) {
  static const PatternMatcher pm({
      {UPat(Ops::REDUCE, {}, std::nullopt, "red"),
       [](const Captures& c) { return collapse_one_hot(c["red"]); }},
  });
  return graph_rewrite(ast, pm, "load_collapse");
}

} // namespace tg
