// Reduce bounds: a sum whose terms are zero outside an interval of a reduce range runs only
// over that interval.
//
// A convolution over a padded view reads its input through a gate, the window tap inside the
// image: sum over ky of where(0 <= oy + ky - p < H, x[oy + ky - p], 0) * w[ky]. Where an output
// pixel lies near the border, some taps read only the padding, and a product with zero adds
// nothing. When each gate clause is affine in the tap (coefficient +1 or -1) and otherwise
// depends only on loops outside the reduce, the valid taps are one interval [lo, hi) per output
// pixel; the loop then runs over it (ky = lo + r, r < hi - lo) and the clause, true on it by
// construction, is dropped. For beautiful_mnist's input gradients, whose padded dy is up to 44%
// zeros, this removes that work, and the loads lose their gates so that they vectorize.
//
// Runs after the optimizer, before expansion: only a loop the optimizer left a Reduce loop (not
// unrolled) is bounded, and only by clauses on output loops it left whole (Global or Loop, not
// upcast), so that the bound is one scalar for every lane of the tile. Skipping a term assumes
// the other factor of the product is finite (inf * 0 would be NaN): as a convolution that does
// not multiply its padding (PyTorch's, oneDNN's) gives.
#include <optional>
#include <unordered_map>

#include "tg/codegen.hpp"
#include "tg/ir/pattern_matcher.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"

namespace tg {

namespace {

const RangeArg& rarg(const UOp* r) { return std::get<RangeArg>(r->arg); }

bool depends_on(const UOp* x, const UOp* r) { return x == r || x->backward_slice().count(r) != 0; }

// The coefficient c of `x` = c * r + (terms without r), when x is affine in r through ADD, SUB,
// NEG and products with a constant.
std::optional<int64_t> coefficient(const UOp* x, const UOp* r) {
  if (x == r) return 1;
  if (!depends_on(x, r)) return 0;
  switch (x->op) {
  case Ops::ADD:
  case Ops::SUB: {
    const auto a = coefficient(x->src[0].get(), r), b = coefficient(x->src[1].get(), r);
    if (!a || !b) return {};
    return x->op == Ops::ADD ? *a + *b : *a - *b;
  }
  case Ops::NEG: {
    const auto a = coefficient(x->src[0].get(), r);
    if (!a) return {};
    return -*a;
  }
  case Ops::MUL:
    for (int s = 0; s < 2; ++s)
      if (x->src[1 - s]->is_const()) {
        const auto a = coefficient(x->src[s].get(), r);
        if (!a) return {};
        return *a * x->src[1 - s]->ivmin();
      }
    return {};
  default:
    return {};
  }
}

// The gate g for which `v` is zero wherever g is false: v is where(g, x, 0), or a product (or
// cast) with such a factor.
const UOp* zero_gate(const UOp* v) {
  if (v->op == Ops::CAST) return zero_gate(v->src[0].get());
  if (v->op == Ops::WHERE && v->src[2]->is_const_value(0)) return v->src[0].get();
  if (v->op == Ops::MUL)
    for (const UOpPtr& s : v->src)
      if (const UOp* g = zero_gate(s.get())) return g;
  return nullptr;
}

void clauses_of(const UOp* g, std::vector<const UOp*>& out) {
  if (g->op == Ops::AND && g->dtype.scalar() == dtypes::bool_) {
    for (const UOpPtr& s : g->src) clauses_of(s.get(), out);
    return;
  }
  out.push_back(g);
}

// Whether `x` reads only loops outside every reduce that are not split into lanes: a bound
// built from it is one scalar per iteration of those loops.
bool outer_scalar(const UOp* x) {
  for (const UOp* u : x->toposort())
    if (u->op == Ops::RANGE && rarg(u).type != AxisType::Global && rarg(u).type != AxisType::Loop)
      return false;
  return true;
}

struct Bounds {
  std::vector<UOpPtr> lo, hi;      // r >= each lo, r < each hi
  std::vector<const UOp*> clauses; // the clauses they replace
};

// The clauses of `gate` that bound r to an interval: a < b with a - b = c * r + rest, c = +-1
// and rest reading only outer loops. c = 1 gives r < -rest, c = -1 gives r > rest.
Bounds bounds_of(const std::vector<const UOp*>& clauses, const UOp* r) {
  Bounds b;
  for (const UOp* cl : clauses) {
    if (cl->op != Ops::CMPLT || cl->src[0]->dtype != r->dtype) continue; // index arithmetic
    const UOpPtr diff = cl->src[0] - cl->src[1];
    const auto c = coefficient(diff.get(), r);
    if (!c || (*c != 1 && *c != -1)) continue;
    const UOpPtr rest = simplify(substitute(diff, {{r, r->const_like(int64_t{0})}}));
    if (!outer_scalar(rest.get())) continue;
    if (*c == 1)
      b.hi.push_back(simplify(-rest));
    else
      b.lo.push_back(simplify(rest + 1));
    b.clauses.push_back(cl);
  }
  return b;
}

UOpPtr bound_reduce(const UOpPtr& red, const std::unordered_map<const UOp*, int>& reduces_of) {
  const auto& ra = std::get<ReduceArg>(red->arg);
  if (ra.op != Ops::ADD) return nullptr;
  const UOp* gate = zero_gate(red->src[0].get());
  if (!gate) return nullptr;
  for (const UOp* u : red->src[0]->toposort())
    if (u->op == Ops::REDUCE) return nullptr; // a nested reduce is rebuilt from the old one
  std::vector<const UOp*> clauses;
  clauses_of(gate, clauses);
  std::unordered_map<const UOp*, UOpPtr> subst;
  std::vector<UOpPtr> src{red->src[0]};
  bool changed = false;
  for (size_t i = 1; i < red->src.size(); ++i) {
    const UOpPtr& r = red->src[i];
    src.push_back(r);
    if (r->op != Ops::RANGE || rarg(r.get()).type != AxisType::Reduce || !r->src[0]->is_const() ||
        reduces_of.at(r.get()) != 1)
      continue;
    Bounds b = bounds_of(clauses, r.get());
    if (b.clauses.empty()) continue;
    UOpPtr lo = r->const_like(int64_t{0}), hi = r->src[0];
    for (const UOpPtr& l : b.lo) lo = lo->maximum(l);
    for (const UOpPtr& h : b.hi) hi = -((-hi)->maximum(-h));
    lo = simplify(lo), hi = simplify(hi);
    const UOpPtr nr = UOp::range(simplify(hi - lo), rarg(r.get()).id, AxisType::Reduce);
    subst[r.get()] = lo + nr;
    for (const UOp* cl : b.clauses) subst[cl] = UOp::const_(cl->dtype, true);
    src.back() = nr;
    changed = true;
  }
  if (!changed) return nullptr;
  src[0] = substitute(red->src[0], subst);
  return red->replace_src(std::move(src));
}

// A gate the bounds made true leaves its load: INDEX(b, i, true) is INDEX(b, i), whose load
// needs no value for the lanes it skips.
const PatternMatcher& pm_true_gates() {
  static const PatternMatcher pm({
      {UPat(Ops::INDEX, {}, std::nullopt, "x")
           .with_src({UPat::var("b"), UPat::var("i"), UPat::const_(1, {dtypes::bool_})}),
       [](const Captures& c) {
         return c["x"]->replace_src({c["b"], c["i"]});
       }},
      {UPat(Ops::LOAD, {}, std::nullopt, "x")
           .with_src(
               {UPat(Ops::INDEX, {}, std::nullopt, "idx").with_src({UPat::var(), UPat::var()}),
                UPat::var()}),
       [](const Captures& c) { return c["x"]->replace_src({c["idx"]}); }},
  });
  return pm;
}

} // namespace

UOpPtr bound_reduce_ranges(const UOpPtr& ast) {
  // How many REDUCEs list each range: a range shared by two is bounded for neither.
  std::unordered_map<const UOp*, int> reduces_of;
  std::vector<UOpPtr> reds;
  for (const UOp* u : ast->toposort())
    if (u->op == Ops::REDUCE) {
      reds.push_back(u->ptr());
      for (size_t i = 1; i < u->src.size(); ++i) ++reduces_of[u->src[i].get()];
    }
  std::unordered_map<const UOp*, UOpPtr> done;
  for (const UOpPtr& red : reds)
    if (UOpPtr b = bound_reduce(red, reduces_of)) done[red.get()] = b;
  if (done.empty()) return ast;
  return graph_rewrite(simplify_kernel(substitute(ast, done)), pm_true_gates(), "true_gates");
}

} // namespace tg
