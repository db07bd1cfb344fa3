// Property test of the symbolic rules: random integer expressions over bounded variables are
// simplified, and the original and the simplified expression are evaluated by an independent
// tree walker (plain int64 C semantics, not exec_alu) on every corner of the variables' box and
// on random points. Every node's value must also lie within its vmin/vmax.
//
// TG_SYMBOLIC_PROPERTY_N sets the number of expressions (default 8000); the seed is fixed.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "tg/ir/print.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"
#include "tg/knobs.hpp"

namespace {

using namespace tg;

struct Var {
  UOpPtr node;
  int64_t lo, hi;
};

using Env = std::unordered_map<const UOp*, int64_t>;

// Two's-complement wrap of v to `bits` (0: no wrap).
int64_t wrap(int64_t v, int bits) {
  if (bits == 0) return v;
  const int64_t m = int64_t{1} << bits;
  v = ((v % m) + m) % m;
  return v >= m / 2 ? v - m : v;
}

// Evaluates every node of `root` under `env`, C semantics on int64, every integer result
// wrapped to `bits` (0: never). Returns the node values, or an error text (division by zero,
// an op this evaluator does not know).
std::optional<std::unordered_map<const UOp*, int64_t>> eval_all(const UOpPtr& root, const Env& env,
                                                                std::string& err, int bits = 0) {
  std::unordered_map<const UOp*, int64_t> val;
  for (const UOp* u : root->toposort()) {
    auto s = [&](size_t i) { return val.at(u->src[i].get()); };
    int64_t r = 0;
    switch (u->op) {
    case Ops::CONST:
      if (const auto* b = std::get_if<bool>(&u->arg))
        r = *b ? 1 : 0;
      else
        r = std::get<int64_t>(u->arg);
      break;
    case Ops::DEFINE_VAR:
      r = env.at(u);
      break;
    case Ops::ADD:
      r = s(0) + s(1);
      break;
    case Ops::SUB:
      r = s(0) - s(1);
      break;
    case Ops::MUL:
      r = s(0) * s(1);
      break;
    case Ops::NEG:
      r = -s(0);
      break;
    case Ops::IDIV:
    case Ops::MOD:
      if (s(1) == 0) {
        err = "division by zero in " + render_expr(u->ptr());
        return std::nullopt;
      }
      r = u->op == Ops::IDIV ? s(0) / s(1) : s(0) % s(1);
      break;
    case Ops::MAX:
      r = s(0) > s(1) ? s(0) : s(1);
      break;
    case Ops::CMPLT:
      r = s(0) < s(1);
      break;
    case Ops::CMPNE:
      r = s(0) != s(1);
      break;
    case Ops::CMPEQ:
      r = s(0) == s(1);
      break;
    case Ops::AND:
      r = s(0) & s(1);
      break;
    case Ops::OR:
      r = s(0) | s(1);
      break;
    case Ops::XOR:
      r = s(0) ^ s(1);
      break;
    case Ops::WHERE:
      r = s(0) ? s(1) : s(2);
      break;
    case Ops::CAST:
      r = u->dtype.is_bool() ? (s(0) != 0) : s(0);
      break;
    default:
      err = "evaluator does not know " + u->str();
      return std::nullopt;
    }
    val.emplace(u, u->dtype.is_bool() ? r : wrap(r, bits));
  }
  return val;
}

class ExprGen {
public:
  ExprGen(uint64_t seed) : rng_(seed) {}

  int64_t rnd(int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng_);
  }

  // `wide`: int8 variables over most of their range, so that sums and products wrap.
  void new_vars(DType dt, bool wide = false) {
    dt_ = dt;
    vars_.clear();
    const int n = static_cast<int>(rnd(2, 4));
    for (int i = 0; i < n; ++i) {
      int64_t lo = rnd(0, 2) == 0 ? rnd(-12, 4) : 0; // mostly index-like [0, n)
      int64_t hi = rnd(0, 3) == 0 ? lo + rnd(0, 2) : lo + rnd(1, 24);
      if (wide) {
        lo = rnd(-128, 127);
        hi = rnd(0, 1) ? rnd(lo, 127) : std::min<int64_t>(127, lo + rnd(0, 30));
      }
      vars_.push_back(
          {UOp::variable(std::string(1, static_cast<char>('a' + i)), lo, hi, dt), lo, hi});
    }
  }
  const std::vector<Var>& vars() const { return vars_; }

  UOpPtr c(int64_t v) { return UOp::const_(dt_, v); }
  UOpPtr var() {
    return vars_[static_cast<size_t>(rnd(0, static_cast<int64_t>(vars_.size()) - 1))].node;
  }

  // Free-form expressions: any op mix, depth up to `depth`.
  UOpPtr expr(int depth) {
    if (depth <= 0 || rnd(0, 9) < 2) return rnd(0, 5) == 0 ? c(rnd(-10, 10)) : var();
    switch (rnd(0, 14)) {
    case 13: // a divisor that may be negative, or a variable one that cannot be 0
      return expr(depth - 1) / (rnd(0, 1) ? c(rnd(-9, -1)) : nonzero());
    case 14:
      return expr(depth - 1) % (rnd(0, 1) ? c(rnd(-9, -1)) : nonzero());
    case 0:
    case 1:
      return expr(depth - 1) + expr(depth - 1);
    case 2:
      return expr(depth - 1) - expr(depth - 1);
    case 3:
      return expr(depth - 1) * c(rnd(-6, 6));
    case 4:
      return c(rnd(-4, 6)) * expr(depth - 1);
    case 5:
      return expr(depth - 1) + c(rnd(-10, 10));
    case 6:
      return -expr(depth - 1);
    case 7:
    case 8:
      return expr(depth - 1) / c(rnd(1, 9));
    case 9:
    case 10:
      return expr(depth - 1) % c(rnd(1, 9));
    case 11:
      return expr(depth - 1)->maximum(expr(depth - 1));
    default:
      return cond(depth - 1)->where(expr(depth - 1), expr(depth - 1));
    }
  }

  // A variable shifted so that its range excludes 0 (positive, or negative when it is below 0).
  UOpPtr nonzero() {
    const Var& v = vars_[static_cast<size_t>(rnd(0, static_cast<int64_t>(vars_.size()) - 1))];
    if (v.lo > 0 || v.hi < 0) return v.node;
    if (dt_ == dtypes::int8 && v.hi > 120) return v.node->maximum(c(1));
    return v.node + c(1 - v.lo);
  }

  UOpPtr cond(int depth) {
    UOpPtr a = expr(depth);
    UOpPtr b = rnd(0, 1) ? c(rnd(-12, 30)) : expr(depth);
    switch (rnd(0, 3)) {
    case 0:
      return a->lt(b);
    case 1:
      return b->lt(a);
    case 2:
      return a->ne(b);
    default:
      return a->eq(b);
    }
  }

  // Index-style expressions: sums of var*coef + const, divided and reduced by constants and
  // nested, the shapes the div/mod rules are written for.
  UOpPtr linear(int depth) {
    UOpPtr acc = c(rnd(-3, 12));
    const int terms = static_cast<int>(rnd(1, 3));
    for (int i = 0; i < terms; ++i) {
      UOpPtr t = depth > 0 && rnd(0, 2) == 0 ? structured(depth - 1) : var();
      const int64_t coef = rnd(0, 3) == 0 ? rnd(-4, 4) : rnd(1, 3) * (rnd(0, 1) ? 4 : rnd(1, 6));
      acc = rnd(0, 1) ? acc + t * c(coef) : t * c(coef) + acc;
    }
    return acc;
  }

  UOpPtr structured(int depth) {
    UOpPtr n = depth > 0 && rnd(0, 1) ? structured(depth - 1) : linear(depth);
    switch (rnd(0, 5)) {
    case 0:
    case 1:
      return n / c(rnd(1, 3) == 1 ? rnd(2, 12) : int64_t{4} << rnd(0, 2));
    case 2:
    case 3:
      return n % c(rnd(1, 3) == 1 ? rnd(2, 12) : int64_t{4} << rnd(0, 2));
    case 4:
      return n->lt(c(rnd(-5, 40)))->where(n, c(rnd(-3, 3)));
    default:
      return n + linear(0);
    }
  }

  std::vector<Env> assignments(int n_random) {
    std::vector<Env> out;
    const size_t nv = vars_.size();
    for (size_t mask = 0; mask < (size_t{1} << nv); ++mask) {
      Env e;
      for (size_t i = 0; i < nv; ++i)
        e[vars_[i].node.get()] = (mask >> i) & 1 ? vars_[i].hi : vars_[i].lo;
      out.push_back(std::move(e));
    }
    for (int k = 0; k < n_random; ++k) {
      Env e;
      for (const Var& v : vars_) e[v.node.get()] = rnd(v.lo, v.hi);
      out.push_back(std::move(e));
    }
    return out;
  }

private:
  std::mt19937_64 rng_;
  std::vector<Var> vars_;
  DType dt_ = dtypes::index;
};

std::string env_str(const Env& env, const std::vector<Var>& vars) {
  std::string s;
  for (const Var& v : vars)
    s += std::get<VarArg>(v.node->arg).name + "=" + std::to_string(env.at(v.node.get())) + " ";
  return s;
}

struct Stats {
  int64_t evaluations = 0, reduced = 0, grown = 0, nodes_before = 0, nodes_after = 0;
  int failures = 0;
};

// Simplifies `n_exprs` random expressions and checks each against the evaluator. `wide`: int8
// variables over their whole range, evaluated with 8-bit wrap-around; else index/int32 with
// small bounds, where nothing wraps.
Stats run_property(int64_t n_exprs, uint64_t seed, bool wide) {
  ExprGen gen(seed);
  Stats st;
  const int bits = wide ? 8 : 0;
  for (int64_t i = 0; i < n_exprs && st.failures < 5; ++i) {
    gen.new_vars(wide ? dtypes::int8 : i % 2 ? dtypes::int32 : dtypes::index, wide);
    const UOpPtr e = i % 3 == 2 ? gen.structured(2) : gen.expr(static_cast<int>(gen.rnd(2, 5)));
    UOpPtr s;
    try {
      s = simplify(e);
    } catch (const Error& ex) {
      FAIL_CHECK("simplify threw on " << render_expr(e) << ": " << ex.what());
      ++st.failures;
      continue;
    }
    const size_t before = e->toposort().size(), after = s->toposort().size();
    st.nodes_before += static_cast<int64_t>(before);
    st.nodes_after += static_cast<int64_t>(after);
    st.reduced += after < before;
    st.grown += after > before;
    // symbolic() is pure, so graph_rewrite matches rebuilt nodes before interning them and
    // takes its sums' claims of a final result at their word; with a context it takes the
    // plain path, which matches every node. Both must give the same graph, of interned nodes.
    int no_purity = 0;
    if (graph_rewrite(e, symbolic(), no_purity) != s) {
      FAIL_CHECK("matching rebuilt nodes detached changed the result on " << render_expr(e));
      ++st.failures;
    }
    if (!std::all_of(s->toposort().begin(), s->toposort().end(),
                     [](const UOp* u) { return u->listed(); })) {
      FAIL_CHECK("a detached node was left in " << render_expr(s));
      ++st.failures;
    }
    if (simplify(s) != s) {
      FAIL_CHECK("simplify is not idempotent on " << render_expr(e) << ": " << render_expr(s)
                                                  << " -> " << render_expr(simplify(s)));
      ++st.failures;
    }
    for (const Env& env : gen.assignments(20)) {
      ++st.evaluations;
      std::string err;
      auto ve = eval_all(e, env, err, bits);
      auto vs = ve ? eval_all(s, env, err, bits) : std::nullopt;
      if (!ve || !vs) {
        FAIL_CHECK(err << " evaluating " << render_expr(e) << " / " << render_expr(s));
        ++st.failures;
        break;
      }
      const int64_t want = ve->at(e.get()), got = vs->at(s.get());
      if (want != got) {
        FAIL_CHECK("value changed: " << render_expr(e) << " = " << want << " but simplified "
                                     << render_expr(s) << " = " << got << " at "
                                     << env_str(env, gen.vars()));
        ++st.failures;
        break;
      }
      // Interval analysis must bound every node it was computed for.
      bool range_ok = true;
      for (const auto* vals : {&*ve, &*vs}) {
        for (const auto& [u, val] : *vals) {
          if (val >= u->ivmin() && val <= u->ivmax()) continue;
          FAIL_CHECK("vmin/vmax unsound: " << render_expr(u->ptr()) << " = " << val << " outside ["
                                           << u->ivmin() << ", " << u->ivmax() << "] at "
                                           << env_str(env, gen.vars()) << " in " << render_expr(e));
          range_ok = false;
          break;
        }
        if (!range_ok) break;
      }
      if (!range_ok) {
        ++st.failures;
        break;
      }
    }
  }
  MESSAGE(n_exprs << " expressions, " << st.evaluations << " evaluations; smaller after simplify: "
                  << st.reduced << ", larger: " << st.grown << ", nodes " << st.nodes_before
                  << " -> " << st.nodes_after);
  return st;
}

} // namespace

TEST_SUITE("ir.symbolic_property") {
  TEST_CASE("simplify keeps the value of random integer expressions") {
    const int64_t n_exprs = knobs::TG_SYMBOLIC_PROPERTY_N;
    const Stats st = run_property(n_exprs, 0x5eed1234abcdULL, false);
    CHECK(st.failures == 0);
    // The rules must actually do something on these expressions.
    CHECK(st.reduced * 10 >= n_exprs * 4);
    CHECK(st.nodes_after * 10 <= st.nodes_before * 8);
  }

  TEST_CASE("simplify_add_const and simplify_constant_op agree with simplify") {
    ExprGen gen(0xadd5eedULL);
    int checked = 0, failures = 0;
    for (int i = 0; i < 600 && failures < 5; ++i) {
      gen.new_vars(i % 3 == 0   ? dtypes::int8
                   : i % 3 == 1 ? dtypes::int32
                                : dtypes::index,
                   i % 3 == 0);
      const UOpPtr e = gen.expr(static_cast<int>(gen.rnd(1, 4)));
      const UOpPtr simplified = simplify(e);
      // A final sum or atom takes the shortcut, an unsimplified one the rewrite.
      for (const UOpPtr& x : {simplified, e}) {
        for (const int64_t c : {-128, -5, -1, 0, 1, 3, 127}) {
          ++checked;
          const UOpPtr want = simplify(x + c), got = simplify_add_const(x, c);
          if (want == got) continue;
          FAIL_CHECK("simplify_add_const(" << render_expr(x) << ", " << c
                                           << ") = " << render_expr(got) << ", simplify gives "
                                           << render_expr(want));
          ++failures;
        }
      }
    }
    // Every binary op over constants, division by zero and oversized shifts included (those
    // do not fold, and the rewrite decides).
    std::mt19937_64 rng(7);
    for (const DType dt : {dtypes::index, dtypes::int32, dtypes::int8, dtypes::uint8}) {
      for (const Ops op : {Ops::ADD, Ops::SUB, Ops::MUL, Ops::IDIV, Ops::MOD, Ops::MAX, Ops::AND,
                           Ops::OR, Ops::XOR, Ops::SHL, Ops::SHR, Ops::CMPLT, Ops::CMPNE}) {
        for (int k = 0; k < 20; ++k) {
          const int64_t a = static_cast<int64_t>(rng() % 41) - 20;
          const int64_t b = k < 2 ? 0 : static_cast<int64_t>(rng() % 41) - 20;
          const UOpPtr n = UOp::const_(dt, a)->alu(op, {UOp::const_(dt, b)});
          ++checked;
          const UOpPtr want = simplify(n), got = simplify_constant_op(n);
          if (want == got) continue;
          FAIL_CHECK("simplify_constant_op(" << render_expr(n) << ") = " << render_expr(got)
                                             << ", simplify gives " << render_expr(want));
          ++failures;
        }
      }
    }
    CHECK(failures == 0);
    CHECK(checked > 8000);
  }

  TEST_CASE("every sum symbolic() claims final is final (REWRITE_CHECK_FINAL)") {
    // Each claim is checked by rewriting its result again, which must leave it unchanged.
    // Variables of random bounds make most expressions new, so marks left by earlier ones
    // seldom answer for the check.
    Context check{{"REWRITE_CHECK_FINAL", 1}};
    ExprGen gen(0xf17a15eedULL);
    int failures = 0;
    for (int i = 0; i < 1500 && failures < 5; ++i) {
      gen.new_vars(i % 3 == 0   ? dtypes::int8
                   : i % 3 == 1 ? dtypes::int32
                                : dtypes::index,
                   i % 3 == 0);
      const UOpPtr e = i % 3 == 2 ? gen.structured(2) : gen.expr(static_cast<int>(gen.rnd(2, 6)));
      try {
        int no_purity = 0;
        if (simplify(e) != graph_rewrite(e, symbolic(), no_purity)) {
          FAIL_CHECK("the checked rewrite differs from the plain one on " << render_expr(e));
          ++failures;
        }
      } catch (const Error& ex) {
        FAIL_CHECK(std::string(ex.what()));
        ++failures;
      }
    }
    CHECK(failures == 0);
  }

  TEST_CASE("simplify keeps the value of int8 expressions that wrap around") {
    const int64_t n_exprs = knobs::TG_SYMBOLIC_PROPERTY_N / 2;
    const Stats st = run_property(n_exprs, 0x8b175eedULL, true);
    CHECK(st.failures == 0);
  }
}
