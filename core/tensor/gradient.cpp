// Autograd: tinygrad's gradient.py. Each rule of pm_gradient() maps the gradient flowing into
// one primitive node (ctx.grad, the shape and dtype of the node) to the gradients of its
// sources, built as ordinary tensor-level UOps; compute_gradient() applies the rules from the
// root down to the targets. Composite Tensor ops (softmax, matmul, cat, ...) are graphs of
// these primitives, so they need no rules of their own.
#include "gradient.hpp"

#include <cmath>
#include <mutex>
#include <numbers>
#include <string>
#include <typeinfo>
#include <unordered_set>

#include "tensor_internal.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"

namespace tg::detail {

namespace {

using enum Ops;

std::mutex g_vjp_mu;
std::unordered_map<std::string, VjpRule>& vjp_rules() {
  static auto& rules = *new std::unordered_map<std::string, VjpRule>();
  return rules;
}

// The rewrite context of a derivative rule.
struct GradCtx {
  UOpPtr grad;             // d(root)/d(the matched node): tinygrad's `ctx`
  std::string device;      // the matched node's device, where new constants are made
  std::vector<UOpPtr> out; // filled by the rule: d(root)/d(each source); nullptr: none
};

// ---- tensor-level node builders (elementwise sources share one shape) ---------------------

UOpPtr bin(Ops op, const UOpPtr& a, const UOpPtr& b) { return UOp::make(op, a->dtype, {a, b}); }
UOpPtr un(Ops op, const UOpPtr& a) { return UOp::make(op, a->dtype, {a}); }
UOpPtr mul(const UOpPtr& a, const UOpPtr& b) { return bin(MUL, a, b); }
UOpPtr fdiv(const UOpPtr& a, const UOpPtr& b) { return bin(FDIV, a, b); }
UOpPtr neg(const UOpPtr& a) { return un(NEG, a); }
UOpPtr cmp(Ops op, const UOpPtr& a, const UOpPtr& b) {
  return UOp::make(op, dtypes::bool_, {a, b});
}
UOpPtr where(const UOpPtr& c, const UOpPtr& a, const UOpPtr& b) {
  return UOp::make(WHERE, a->dtype, {c, a, b});
}
UOpPtr cast(const UOpPtr& a, DType d) { return a->dtype == d ? a : UOp::make(CAST, d, {a}); }
// A constant of x's shape and dtype on the matched node's device.
UOpPtr like(const GradCtx& c, const UOpPtr& x, double v) {
  return const_node(v, x->dtype, c.device, *x->shape());
}
UOpPtr movement(Ops op, const UOpPtr& x, Arg arg) {
  return UOp::make(op, x->dtype, {x}, std::move(arg));
}
// Sums `x` over the axes where its shape differs from `to` (same rank): undoes an EXPAND. The
// sum runs in Tensor::sum's accumulator dtype (float32 for half types) and rounds once at the
// end, as tinygrad's and PyTorch's do: a 64x64 float16 matmul's gradients summed in float16
// were up to 0.009 off the exact sums, 0.0018 (half a float16 ulp) so.
UOpPtr sum_to(const UOpPtr& x, const Shape& to) {
  const Shape& from = *x->shape();
  std::vector<int64_t> axes;
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != to[i]) axes.push_back(static_cast<int64_t>(i));
  if (axes.empty()) return x;
  const DType acc = detail::sum_acc_dtype(x->dtype);
  return cast(UOp::make(REDUCE, acc, {cast(x, acc)}, ReduceArg{ADD, axes}), x->dtype);
}
// Expands a keepdim-shaped `x` to `to` (same rank): undoes a REDUCE.
UOpPtr expand_to(const UOpPtr& x, const Shape& to) {
  return *x->shape() == to ? x : movement(EXPAND, x, to);
}

// A rule: the gradients of the matched node's sources from the context.
using GradFn = std::vector<UOpPtr> (*)(GradCtx&, const UOp&);
Rule grad_rule(OpSet ops, GradFn f) {
  return Rule(UPat::ops(ops, "ret"), [f](const Captures& c) -> UOpPtr {
    auto& ctx = c.ctx<GradCtx>();
    ctx.out = f(ctx, *c.root());
    return c.root();
  });
}

std::vector<UOpPtr> none(GradCtx&, const UOp& r) {
  return std::vector<UOpPtr>(r.src.size(), nullptr);
}

std::vector<UOpPtr> reduce_grad(GradCtx& c, const UOp& r) {
  const UOpPtr& x = r.src[0];
  const Shape& in = *x->shape();
  const auto& ra = std::get<ReduceArg>(r.arg);
  const UOpPtr& g = c.grad;
  switch (ra.op) {
  case ADD:
    return {expand_to(g, in)};
  case MAX: {
    // Split equally among the positions that hold the maximum (tinygrad).
    UOpPtr mask = cast(cmp(CMPEQ, x, expand_to(r.ptr(), in)), g->dtype);
    UOpPtr count = UOp::make(REDUCE, g->dtype, {mask}, ReduceArg{ADD, ra.axes});
    return {mul(fdiv(mask, expand_to(count, in)), expand_to(g, in))};
  }
  case MUL: {
    // The product of the others, never 0/0 (PyTorch): prod / x where the axis holds no zero;
    // at the only zero of an axis the product of its other elements; 0 everywhere else.
    const UOpPtr zero = like(c, x, 0), one = like(c, x, 1);
    const UOpPtr is0 = cmp(CMPEQ, x, zero);
    auto over_axes = [&](Ops op, const UOpPtr& v) {
      return expand_to(UOp::make(REDUCE, v->dtype, {v}, ReduceArg{op, ra.axes}), in);
    };
    const UOpPtr zeros = over_axes(ADD, cast(is0, x->dtype));
    const UOpPtr nonzero_prod = over_axes(MUL, where(is0, one, x));
    const UOpPtr at_zero = where(cmp(CMPEQ, zeros, one), nonzero_prod, zero);
    const UOpPtr elsewhere = where(cmp(CMPEQ, zeros, zero), fdiv(nonzero_prod, x), zero);
    return {mul(where(is0, at_zero, elsewhere), expand_to(g, in))};
  }
  default:
    throw Error("autograd: no derivative for a REDUCE of " + std::string(op_name(ra.op)));
  }
}

PatternMatcher make_pm_gradient() {
  using G = GradCtx&;
  using U = const UOp&;
  constexpr double ln2 = std::numbers::ln2;
  return PatternMatcher({
      // Casts pass the gradient back in the source's dtype; nothing flows into integers.
      grad_rule({CAST},
                [](G c, U r) -> std::vector<UOpPtr> {
                  if (!r.src[0]->dtype.is_float()) return {nullptr};
                  return {cast(c.grad, r.src[0]->dtype)};
                }),
      grad_rule({RECIPROCAL},
                [](G c, U r) -> std::vector<UOpPtr> {
                  return {neg(mul(mul(c.grad, r.ptr()), r.ptr()))};
                }),
      grad_rule({SIN},
                [](G c, U r) -> std::vector<UOpPtr> {
                  const UOpPtr& x = r.src[0];
                  UOpPtr cos = un(SIN, bin(SUB, like(c, x, std::numbers::pi / 2), x));
                  return {mul(cos, c.grad)};
                }),
      grad_rule({LOG2},
                [](G c, U r) -> std::vector<UOpPtr> {
                  const UOpPtr& x = r.src[0];
                  return {fdiv(c.grad, mul(x, like(c, x, ln2)))};
                }),
      grad_rule({EXP2},
                [](G c, U r) -> std::vector<UOpPtr> {
                  return {mul(mul(r.ptr(), c.grad), like(c, c.grad, ln2))};
                }),
      grad_rule({SQRT},
                [](G c, U r) -> std::vector<UOpPtr> {
                  return {fdiv(c.grad, mul(r.ptr(), like(c, c.grad, 2)))};
                }),
      grad_rule({NEG}, [](G c, U) -> std::vector<UOpPtr> { return {neg(c.grad)}; }),
      // Piecewise constant: zero almost everywhere (PyTorch).
      grad_rule({TRUNC}, [](G c, U r) -> std::vector<UOpPtr> { return {like(c, r.src[0], 0)}; }),
      // Comparisons, bit operations, integer division, random bits, bitcasts: no gradient.
      grad_rule({CMPLT, CMPNE, CMPEQ, AND, OR, XOR, SHL, SHR, IDIV, MOD, THREEFRY, BITCAST}, none),
      grad_rule({ADD},
                [](G c, U) -> std::vector<UOpPtr> {
                  return {c.grad, c.grad};
                }),
      grad_rule({SUB},
                [](G c, U) -> std::vector<UOpPtr> {
                  return {c.grad, neg(c.grad)};
                }),
      grad_rule({MUL},
                [](G c, U r) -> std::vector<UOpPtr> {
                  return {mul(r.src[1], c.grad), mul(r.src[0], c.grad)};
                }),
      grad_rule({FDIV},
                [](G c, U r) -> std::vector<UOpPtr> {
                  // d(a/b)/db = -(a/b)/b
                  const UOpPtr& b = r.src[1];
                  return {fdiv(c.grad, b), neg(fdiv(mul(c.grad, r.ptr()), b))};
                }),
      grad_rule({POW},
                [](G c, U r) -> std::vector<UOpPtr> {
                  // tinygrad's rule: 0**0 has derivative 0 in the base; a zero base gives the
                  // exponent 0 (or -inf for a negative exponent), elsewhere ret * ln(b).
                  const UOpPtr &b = r.src[0], &e = r.src[1], &g = c.grad;
                  const UOpPtr zero = like(c, b, 0);
                  UOpPtr b0 = cmp(CMPEQ, b, zero);
                  UOpPtr both0 = UOp::make(AND, dtypes::bool_, {b0, cmp(CMPEQ, e, zero)});
                  UOpPtr db = where(both0, e, mul(e, bin(POW, b, bin(SUB, e, like(c, e, 1)))));
                  UOpPtr ln_b = mul(un(LOG2, b), like(c, b, ln2));
                  UOpPtr de = where(b0, where(cmp(CMPLT, e, zero), like(c, e, -INFINITY), zero),
                                    mul(r.ptr(), ln_b));
                  return {mul(g, db), mul(g, de)};
                }),
      grad_rule({MAX},
                [](G c, U r) -> std::vector<UOpPtr> {
                  // The larger source gets the gradient; ties split it in halves (tinygrad).
                  const UOpPtr &a = r.src[0], &b = r.src[1], &g = c.grad;
                  UOpPtr zero = like(c, g, 0), half = mul(g, like(c, g, 0.5));
                  UOpPtr tie = where(cmp(CMPNE, a, b), zero, half);
                  return {where(cmp(CMPLT, b, a), g, tie), where(cmp(CMPLT, a, b), g, tie)};
                }),
      grad_rule({WHERE},
                [](G c, U r) -> std::vector<UOpPtr> {
                  // No gradient to the condition.
                  const UOpPtr& cond = r.src[0];
                  UOpPtr zero = like(c, c.grad, 0);
                  return {nullptr, where(cond, c.grad, zero), where(cond, zero, c.grad)};
                }),
      grad_rule({MULACC},
                [](G c, U r) -> std::vector<UOpPtr> {
                  return {mul(r.src[1], c.grad), mul(r.src[0], c.grad), c.grad};
                }),
      grad_rule({REDUCE}, reduce_grad),
      grad_rule({CONTIGUOUS},
                [](G c, U r) -> std::vector<UOpPtr> {
                  std::vector<UOpPtr> out(r.src.size());
                  out[0] = c.grad;
                  return out;
                }),
      grad_rule({CUSTOM_VJP},
                [](G c, U r) -> std::vector<UOpPtr> {
                  // Nothing flows into src[0]: its graph only computes the value.
                  const auto& name = std::get<std::string>(r.arg);
                  VjpRule rule;
                  {
                    std::lock_guard lock(g_vjp_mu);
                    auto it = vjp_rules().find(name);
                    if (it == vjp_rules().end())
                      throw Error("autograd: no gradient rule registered as '" + name + "'");
                    rule = it->second;
                  }
                  std::vector<UOpPtr> out{nullptr};
                  std::vector<UOpPtr> g = rule(c.grad, std::span<const UOpPtr>(r.src).subspan(1));
                  out.insert(out.end(), g.begin(), g.end());
                  return out;
                }),
      grad_rule({CONTIGUOUS_BACKWARD},
                [](G c, U) -> std::vector<UOpPtr> { return {un(CONTIGUOUS, c.grad)}; }),
      grad_rule({RESHAPE},
                [](G c, U r) -> std::vector<UOpPtr> {
                  return {movement(RESHAPE, c.grad, *r.src[0]->shape())};
                }),
      grad_rule(
          {EXPAND},
          [](G c, U r) -> std::vector<UOpPtr> { return {sum_to(c.grad, *r.src[0]->shape())}; }),
      grad_rule({PAD},
                [](G c, U r) -> std::vector<UOpPtr> {
                  const Shape& s = *r.src[0]->shape();
                  const auto& p = std::get<PadArg>(r.arg);
                  PadArg keep;
                  for (size_t i = 0; i < s.size(); ++i)
                    keep.emplace_back(p[i].first, p[i].first + s[i]);
                  return {movement(SHRINK, c.grad, keep)};
                }),
      grad_rule({SHRINK},
                [](G c, U r) -> std::vector<UOpPtr> {
                  const Shape& s = *r.src[0]->shape();
                  const auto& k = std::get<PadArg>(r.arg);
                  PadArg pad;
                  for (size_t i = 0; i < s.size(); ++i)
                    pad.emplace_back(k[i].first, s[i] - k[i].second);
                  return {movement(PAD, c.grad, pad)};
                }),
      grad_rule({PERMUTE},
                [](G c, U r) -> std::vector<UOpPtr> {
                  const auto& order = std::get<Shape>(r.arg);
                  Shape inverse(order.size());
                  for (size_t i = 0; i < order.size(); ++i)
                    inverse[static_cast<size_t>(order[i])] = static_cast<int64_t>(i);
                  return {movement(PERMUTE, c.grad, inverse)};
                }),
      grad_rule({FLIP},
                [](G c, U r) -> std::vector<UOpPtr> { return {movement(FLIP, c.grad, r.arg)}; }),
      // Back to the source's device.
      grad_rule({COPY},
                [](G c, U r) -> std::vector<UOpPtr> {
                  std::vector<UOpPtr> out(r.src.size());
                  const std::string dev = node_device(r.src[0].get());
                  out[0] = UOp::make(COPY, c.grad->dtype, {c.grad, device_node(dev)});
                  return out;
                }),
      // tinygrad's (the walk does not enter ASSIGN or DETACH, so these only matter as roots).
      grad_rule({ASSIGN},
                [](G c, U) -> std::vector<UOpPtr> {
                  return {c.grad, c.grad};
                }),
      grad_rule({DETACH}, none),
  });
}

// The device of every node asked about, each chain of first sources walked once.
class DeviceOf {
public:
  const std::string& operator()(const UOp* u) {
    std::vector<const UOp*> chain;
    const std::string* found = nullptr;
    std::string dev;
    for (const UOp* n = u;; n = n->src[0].get()) {
      if (auto it = memo_.find(n); it != memo_.end()) {
        found = &it->second;
        break;
      }
      chain.push_back(n);
      if (n->op == BUFFER || n->op == COPY) {
        dev = std::get<std::string>(n->src[1]->arg);
        break;
      }
      if (n->op == CONST || n->op == IOTA) {
        dev = std::get<std::string>(n->src[0]->arg);
        break;
      }
      if (n->src.empty()) throw Error("autograd: no device under " + n->str());
    }
    if (found) dev = *found;
    for (const UOp* n : chain) memo_.emplace(n, dev);
    return memo_.at(u);
  }

private:
  std::unordered_map<const UOp*, std::string> memo_;
};

} // namespace

void register_vjp(const std::string& name, VjpRule rule) {
  std::lock_guard lock(g_vjp_mu);
  vjp_rules().try_emplace(name, std::move(rule));
}

UOpPtr custom_vjp(const UOpPtr& value, const std::vector<UOpPtr>& inputs, const std::string& name) {
  std::vector<UOpPtr> src{value};
  src.insert(src.end(), inputs.begin(), inputs.end());
  return UOp::make(CUSTOM_VJP, value->dtype, std::move(src), name);
}

const PatternMatcher& pm_gradient() {
  static const PatternMatcher pm = make_pm_gradient();
  return pm;
}

std::unordered_map<UOpPtr, UOpPtr> compute_gradient(const UOpPtr& root, const UOpPtr& root_grad,
                                                    const std::vector<UOpPtr>& targets) {
  // The nodes with a target below them (tinygrad's _deepwalk).
  std::unordered_set<const UOp*> target_set;
  for (const UOpPtr& t : targets) target_set.insert(t.get());
  std::unordered_map<const UOp*, bool> on_path;
  for (const UOp* u : root->toposort()) {
    bool p = false;
    for (const UOpPtr& s : u->src) p = p || target_set.count(s.get()) || on_path[s.get()];
    on_path[u] = p;
  }
  // Those reachable from the root without passing DETACH or ASSIGN, sources first.
  auto gate = [&](const UOp* u) { return u->op != DETACH && u->op != ASSIGN && on_path[u]; };
  std::vector<const UOp*> order;
  std::unordered_set<const UOp*> done;
  std::vector<std::pair<const UOp*, bool>> stack{{root.get(), false}};
  while (!stack.empty()) {
    auto [u, visited] = stack.back();
    stack.pop_back();
    if (done.count(u)) continue;
    if (visited) {
      done.insert(u);
      order.push_back(u);
    } else if (gate(u)) {
      stack.emplace_back(u, true);
      for (auto it = u->src.rbegin(); it != u->src.rend(); ++it)
        stack.emplace_back(it->get(), false);
    }
  }

  std::unordered_map<UOpPtr, UOpPtr> grads{{root, root_grad}};
  DeviceOf device_of;
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    const UOpPtr node = (*it)->ptr();
    auto g = grads.find(node);
    if (g == grads.end()) continue;
    GradCtx ctx{g->second, device_of(node.get()), {}};
    if (!pm_gradient().rewrite(node, &ctx, &typeid(GradCtx)))
      throw Error("autograd: no derivative rule for " + std::string(op_name(node->op)) + " in " +
                  node->str());
    if (ctx.out.size() != node->src.size())
      throw Error("autograd: the rule for " + std::string(op_name(node->op)) + " gave " +
                  std::to_string(ctx.out.size()) + " gradients for " +
                  std::to_string(node->src.size()) + " sources");
    for (size_t i = 0; i < ctx.out.size(); ++i) {
      const UOpPtr& v = ctx.out[i];
      if (!v) continue;
      const UOpPtr& k = node->src[i];
      if (v->dtype != k->dtype || !v->shape() || *v->shape() != *k->shape())
        throw Error("autograd: the rule for " + std::string(op_name(node->op)) +
                    " gave a gradient " + v->str() + " that does not match its source " + k->str());
      auto [slot, fresh] = grads.try_emplace(k, v);
      if (!fresh) slot->second = bin(ADD, slot->second, v);
    }
  }
  return grads;
}

} // namespace tg::detail
