// Symbolic sizes: folding, simplification, evaluation and bindings (see tg/ir/sint.hpp).
#include "tg/ir/sint.hpp"

#include <algorithm>

#include "tg/error.hpp"
#include "tg/ir/exec_alu.hpp"
#include "tg/ir/symbolic.hpp"
#include "tg/ir/uop.hpp"

namespace tg {

namespace {

const VarVals& no_bindings() {
  static const VarVals none;
  return none;
}

std::shared_ptr<const VarVals> merged(const std::shared_ptr<const VarVals>& a,
                                      const std::shared_ptr<const VarVals>& b) {
  if (!a) return b;
  if (!b || a == b) return a;
  VarVals m = *a;
  merge_var_vals(m, *b);
  return std::make_shared<const VarVals>(std::move(m));
}

std::string var_name(const UOp* var) { return std::get<VarArg>(var->arg).name; }

int64_t eval_node(const UOp* u, const VarVals& own, const VarVals& given) {
  if (u->op == Ops::CONST) return as_int(u->const_value());
  if (u->op == Ops::DEFINE_VAR) {
    std::optional<int64_t> v = var_value(own, u);
    if (!v) v = var_value(given, u);
    if (!v)
      throw Error("symbolic size: variable '" + var_name(u) +
                  "' has no value; bind it (Variable(name, min, max).bind(value))");
    return *v;
  }
  std::vector<ConstValue> args;
  args.reserve(u->src.size());
  for (const UOpPtr& s : u->src) args.emplace_back(eval_node(s.get(), own, given));
  std::optional<ConstValue> r = exec_alu(u->op, u->dtype, args);
  if (!r) throw Error("symbolic size: cannot evaluate " + u->str());
  return as_int(*r);
}

std::string expr_str(const UOp* u) {
  switch (u->op) {
  case Ops::CONST:
    return std::to_string(as_int(u->const_value()));
  case Ops::DEFINE_VAR:
    return var_name(u);
  case Ops::ADD:
    return "(" + expr_str(u->src[0].get()) + "+" + expr_str(u->src[1].get()) + ")";
  case Ops::SUB:
    return "(" + expr_str(u->src[0].get()) + "-" + expr_str(u->src[1].get()) + ")";
  case Ops::MUL:
    return "(" + expr_str(u->src[0].get()) + "*" + expr_str(u->src[1].get()) + ")";
  case Ops::IDIV:
    return "(" + expr_str(u->src[0].get()) + "//" + expr_str(u->src[1].get()) + ")";
  case Ops::MOD:
    return "(" + expr_str(u->src[0].get()) + "%" + expr_str(u->src[1].get()) + ")";
  case Ops::MAX:
    return "max(" + expr_str(u->src[0].get()) + ", " + expr_str(u->src[1].get()) + ")";
  default:
    return u->str();
  }
}

sint binary(Ops op, const sint& a, const sint& b) {
  sint r = sint::expr(UOp::make(op, dtypes::index, {a.uop(), b.uop()}));
  return r; // bindings are added by the caller
}

} // namespace

void merge_var_vals(VarVals& into, const VarVals& from) {
  for (const VarBinding& b : from) {
    auto it =
        std::find_if(into.begin(), into.end(), [&](const VarBinding& x) { return x.var == b.var; });
    if (it == into.end()) {
      into.push_back(b);
    } else if (it->value != b.value) {
      throw Error("variable '" + var_name(b.var.get()) + "' is bound to " +
                  std::to_string(it->value) + " and to " + std::to_string(b.value) +
                  " in one computation; bind it to one value");
    }
  }
}

std::optional<int64_t> var_value(const VarVals& vals, const UOp* var) {
  for (const VarBinding& b : vals)
    if (b.var.get() == var) return b.value;
  return std::nullopt;
}

sint sint::expr(const UOpPtr& e) {
  if (!e || e->dtype != dtypes::index)
    throw Error("symbolic size: expected an index-typed expression, got " +
                (e ? e->str() : std::string("null")));
  UOpPtr s = simplify(e);
  sint r;
  if (s->op == Ops::CONST)
    r.value_ = as_int(s->const_value());
  else
    r.node_ = std::move(s);
  return r;
}

sint::operator int64_t() const {
  if (node_)
    throw Error("the symbolic size " + str() +
                " is used where an integer is needed; this operation does not support "
                "symbolic shapes (bind values first, or reshape to a concrete shape)");
  return value_;
}

UOpPtr sint::uop() const { return node_ ? node_ : UOp::const_(dtypes::index, value_); }
int64_t sint::vmin() const { return node_ ? node_->ivmin() : value_; }
int64_t sint::vmax() const { return node_ ? node_->ivmax() : value_; }

int64_t sint::eval(const VarVals& vals) const {
  if (!node_) return value_;
  return eval_node(node_.get(), bindings(), vals);
}

std::string sint::str() const {
  if (!node_) return std::to_string(value_);
  return expr_str(node_.get());
}

size_t sint::hash() const {
  return node_ ? node_->hash() : std::hash<int64_t>()(value_) * 0x9e3779b97f4a7c15ULL;
}

sint sint::bind(int64_t value) const {
  if (!node_ || node_->op != Ops::DEFINE_VAR)
    throw Error("bind: only a plain variable can be bound, not " + str());
  const auto& v = std::get<VarArg>(node_->arg);
  if (value < v.min || value > v.max)
    throw Error("bind: " + std::to_string(value) + " is outside the bounds [" +
                std::to_string(v.min) + ", " + std::to_string(v.max) + "] of variable '" + v.name +
                "'");
  sint r = unbound();
  r.binds_ = std::make_shared<const VarVals>(VarVals{{node_, value}});
  return r;
}

const VarVals& sint::bindings() const { return binds_ ? *binds_ : no_bindings(); }

sint sint::unbound() const {
  sint r = *this;
  r.binds_.reset();
  return r;
}

bool operator==(const sint& a, const sint& b) {
  return a.node_ == b.node_ && (a.node_ || a.value_ == b.value_);
}

#define TG_SINT_BINARY(NAME, OP, FOLD)                                                             \
  sint sint::NAME(const sint& a, const sint& b) {                                                  \
    sint r;                                                                                        \
    if (a.is_int() && b.is_int())                                                                  \
      r.value_ = FOLD;                                                                             \
    else                                                                                           \
      r = binary(Ops::OP, a, b);                                                                   \
    r.binds_ = merged(a.binds_, b.binds_);                                                         \
    return r;                                                                                      \
  }
TG_SINT_BINARY(add, ADD, a.value_ + b.value_)
TG_SINT_BINARY(sub, SUB, a.value_ - b.value_)
TG_SINT_BINARY(mul, MUL, a.value_* b.value_)
TG_SINT_BINARY(idiv, IDIV, b.value_ ? a.value_ / b.value_ : 0)
TG_SINT_BINARY(mod, MOD, b.value_ ? a.value_ % b.value_ : 0)
TG_SINT_BINARY(max, MAX, std::max(a.value_, b.value_))
#undef TG_SINT_BINARY

sint Variable(const std::string& name, int64_t min, int64_t max) {
  if (min < 0)
    throw Error("Variable '" + name + "': a size variable needs min >= 0, got " +
                std::to_string(min));
  return sint::expr(UOp::variable(name, min, max));
}

sint sint_prod(const std::vector<sint>& sizes) {
  sint r = 1;
  for (const sint& s : sizes) r = sint::mul(r, s);
  return r;
}

bool any_symbolic(const std::vector<sint>& sizes) {
  return std::any_of(sizes.begin(), sizes.end(), [](const sint& s) { return s.is_symbolic(); });
}

} // namespace tg
