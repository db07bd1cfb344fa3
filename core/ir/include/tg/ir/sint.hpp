#pragma once
// sint: a size that is an integer or a symbolic expression over variables (tinygrad's
// `sint = int | UOp`). Tensor shapes, movement arguments and loop ends are sints, so a
// dimension may be a bound variable (a KV cache's length) and one compiled kernel serves
// every value of it.
//
// A symbolic sint holds an index-typed expression over DEFINE_VAR nodes. The values given to
// variables (Variable::bind) travel beside the expression, never inside it: the graph (and so
// the schedule cache key and the kernel) is the same for every value, and the values reach
// the kernel at launch.
//
// Code that works on concrete shapes reads a dimension as int64_t: the conversion is implicit,
// as Python's int(), and raises tg::Error on a symbolic size, so a path that does not handle
// symbols fails loudly instead of computing with a wrong size. Arithmetic that must stay
// symbolic goes through sint::add/mul/... (plain `+` on sints converts to integers).
#include <concepts>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tg/ir/uop_ptr.hpp"

namespace tg {

// The value given to one variable (a DEFINE_VAR node).
struct VarBinding {
  UOpPtr var;
  int64_t value = 0;
};
using VarVals = std::vector<VarBinding>;
// Adds the bindings of `from` to `into`; a variable bound to two values raises tg::Error.
void merge_var_vals(VarVals& into, const VarVals& from);
std::optional<int64_t> var_value(const VarVals& vals, const UOp* var);

class sint {
public:
  sint() = default;
  template <std::integral T>
  sint(T v) : value_(static_cast<int64_t>(v)) {} // NOLINT(google-explicit-constructor)

  // A symbolic size from an index expression over DEFINE_VARs, simplified; an integer when
  // the expression folds to a constant.
  static sint expr(const UOpPtr& e);

  bool is_int() const { return !node_; }
  bool is_symbolic() const { return static_cast<bool>(node_); }
  // The integer. A symbolic size raises tg::Error naming it.
  operator int64_t() const; // NOLINT(google-explicit-constructor): Python's int(dim)
  const UOpPtr& node() const { return node_; } // the expression; null for an integer
  UOpPtr uop() const;                          // index-typed node (a CONST for an integer)
  int64_t vmin() const;                        // bounds over every value of its variables
  int64_t vmax() const;
  // The value with each variable taken from `vals` (its own bindings first); a variable
  // with no value raises tg::Error.
  int64_t eval(const VarVals& vals = {}) const;
  std::string str() const; // "12", "i", "(i+1)"
  size_t hash() const;

  // This variable bound to `value` (tinygrad's Variable.bind): only a plain variable binds,
  // within its bounds.
  sint bind(int64_t value) const;
  // The bindings this size carries (from bind, through arithmetic).
  const VarVals& bindings() const;
  sint unbound() const; // the same size without bindings, as the graph stores it

  // The same integer, or the same (interned) expression. Bindings do not count.
  friend bool operator==(const sint& a, const sint& b);
  template <std::integral T> friend bool operator==(const sint& a, T b) {
    return a.is_int() && std::cmp_equal(a.value_, b);
  }

  // Arithmetic that stays symbolic; integers fold.
  static sint add(const sint& a, const sint& b);
  static sint sub(const sint& a, const sint& b);
  static sint mul(const sint& a, const sint& b);
  static sint idiv(const sint& a, const sint& b); // floor division of non-negative sizes
  static sint mod(const sint& a, const sint& b);
  static sint max(const sint& a, const sint& b);
  sint& operator+=(const sint& o) { return *this = add(*this, o); }
  sint& operator-=(const sint& o) { return *this = sub(*this, o); }
  sint& operator*=(const sint& o) { return *this = mul(*this, o); }

private:
  int64_t value_ = 0;
  UOpPtr node_;
  std::shared_ptr<const VarVals> binds_; // null when none
};

// tinygrad's Variable: a named integer with inclusive bounds. `Variable("i", 1, 10).bind(3)`
// is a size usable in shapes.
sint Variable(const std::string& name, int64_t min, int64_t max);

// The product of sizes (symbolic if any is).
sint sint_prod(const std::vector<sint>& sizes);
// True when any size is symbolic.
bool any_symbolic(const std::vector<sint>& sizes);

} // namespace tg
