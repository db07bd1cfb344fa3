// Symbolic simplification: pattern tables in the shape of tinygrad's symbolic.py.
//
// symbolic_simple(): constant folding with exec_alu's exact semantics, identities and absorbing
// elements, bool algebra, WHERE and CAST folding. Rules that only hold for some dtypes say so.
//
// symbolic(): adds range analysis (vmin/vmax). Integer sums are kept in one canonical "linear"
// form: a left-nested chain of terms `node*coef` in order of first appearance, the constant last
// (x-y -> x+y*-1, -x -> x*-1, (x+c)*k -> x*k+c*k, like terms collected). Those are ring
// identities, so they hold under wrap-around too; they are applied to signed integers and index
// (on unsigned types x-y would turn into x+y*4294967295). Division, modulo and
// comparison rules additionally need the value not to wrap: they run on signed integers (and
// index) only, and on a numerator whose range is narrower than its dtype's (minmax.cpp gives a
// node that may wrap its dtype's full range, so a narrower range proves it did not), and most
// need a nonnegative numerator, where C's truncating division equals floor division.
#include "tg/ir/symbolic.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "tg/ir/exec_alu.hpp"
#include "tg/ir/rewrite.hpp"

#include "minmax.hpp"

namespace tg {
namespace {

__extension__ typedef __int128 i128;
using enum Ops;

// ---- dtype predicates ---------------------------------------------------------------------

bool value_dtype(DType d) { return !d.is_ptr && !d.is_void(); }
bool scalar_int(DType d) { return !d.is_ptr && d.count == 1 && d.is_int(); }
// Signed integers and index: where division, modulo and order rules apply.
bool is_sint(DType d) { return scalar_int(d) && !d.is_unsigned(); }
bool is_int_or_bool(DType d) { return !d.is_ptr && (d.is_int() || d.is_bool()); }
// vmin/vmax are exact bounds (uint64 ranges are capped at INT64_MAX, so they are not).
bool range_exact(DType d) {
  return !d.is_ptr && d.count == 1 && (d.is_bool() || d.is_int()) &&
         d.scalar_type != ScalarType::UInt64;
}
bool is_signed_scalar(ScalarType s) { return DType(s).is_int() && !DType(s).is_unsigned(); }

i128 dmin(DType d) { return int_dtype_min(d); }
i128 dmax(DType d) { return int_dtype_max(d); }
bool fits(i128 v, DType d) { return v >= dmin(d) && v <= dmax(d); }
// A node of a signed type whose range is narrower than the dtype's did not wrap (minmax.cpp).
bool no_wrap(const UOp& u) { return !(u.ivmin() == dmin(u.dtype) && u.ivmax() == dmax(u.dtype)); }
bool excludes_zero(const UOp& u) {
  return range_exact(u.dtype) && (u.ivmin() > 0 || u.ivmax() < 0);
}

// wrap_to for the types narrower than 64 bits and the others (out of line: rarely reached).
[[gnu::noinline]] int64_t wrap_to_narrow(int64_t u, DType d) {
  if (!d.is_ptr && d.is_int()) return wrap_int(u, d.scalar_type);
  return as_int(cast_const(u, d.scalar()));
}

// The value of `v` wrapped to integer dtype `d` (two's complement, as the op computes it):
// cast_const's result; integer types through wrap_int. The index arithmetic this file mostly
// sees is 64 bits wide, where the low word is the value: that case is inline, with no call.
inline int64_t wrap_to(i128 v, DType d) {
  const auto u = static_cast<int64_t>(static_cast<uint64_t>(v));
  const ScalarType s = d.scalar_type;
  if (!d.is_ptr && (s == ScalarType::Index || s == ScalarType::Int64 || s == ScalarType::UInt64))
    return u;
  return wrap_to_narrow(u, d);
}

i128 floordiv(i128 a, i128 b) {
  i128 q = div_trunc(a, b);
  if ((rem_trunc(a, b) != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
i128 ceildiv(i128 a, i128 b) { return -floordiv(-a, b); }
i128 floormod(i128 a, i128 b) { return a - floordiv(a, b) * b; }
i128 abs128(i128 a) { return a < 0 ? -a : a; }
i128 gcd128(i128 a, i128 b) {
  a = abs128(a), b = abs128(b);
  while (b != 0) a = std::exchange(b, rem_trunc(a, b));
  return a;
}

// An integer CONST's value (most constants here hold an int64_t; as_int converts the rest).
int64_t ival(const UOp& c) {
  if (const auto* i = std::get_if<int64_t>(&c.arg); i != nullptr && c.op == CONST) return *i;
  return as_int(c.const_value());
}
int64_t ival(const UOpPtr& c) { return ival(*c); }

// ---- node builders (dtype of the first source) --------------------------------------------

// UOp::const_(d, wrapped v); a scalar integer's wrapped value is already its CONST arg.
UOpPtr cst(DType d, i128 v) {
  if (scalar_int(d)) return UOp::int_const(d, wrap_to(v, d));
  return UOp::const_(d, wrap_to(v, d));
}
UOpPtr bin(Ops op, const UOp* a, const UOp* b) {
  const std::array<const UOp*, 2> src{a, b};
  return UOp::make_borrowed(op, a->dtype, src);
}
UOpPtr bin(Ops op, const UOpPtr& a, const UOpPtr& b) { return bin(op, a.get(), b.get()); }
UOpPtr bin(Ops op, const UOp* a, const UOpPtr& b) { return bin(op, a, b.get()); }
UOpPtr lt(const UOpPtr& a, const UOpPtr& b) { return a->lt(b); }

// ---- linear form --------------------------------------------------------------------------

// coef*node terms; most sums have a few, kept inline. A term borrows its node: it is a node of
// the graph the form was read from, which the caller holds (or one the form keeps, `keep`),
// so reading and dropping terms touches no reference count.
using Terms = boost::container::small_vector<std::pair<const UOp*, int64_t>, 8>;

// A sum of terms coef*node plus a constant, coefficients wrapped to the dtype.
struct Linear {
  DType dtype;
  Terms terms;
  int64_t k = 0;
  std::vector<UOpPtr> keep; // nodes built for this form whose parts its terms may borrow
  // node -> position in terms, made only for sums of more than kScan terms (a short sum is
  // searched linearly, and neither builds nor frees a map).
  static constexpr size_t kScan = 16;
  std::unique_ptr<std::unordered_map<const UOp*, size_t>> index;

  explicit Linear(DType d) : dtype(d) {}
  void add_term(const UOp& u, i128 coef) {
    if (size_t i = find(&u); i != terms.size()) {
      terms[i].second = wrap_to(i128{terms[i].second} + coef, dtype);
      return;
    }
    if (index) index->emplace(&u, terms.size());
    terms.emplace_back(&u, coef == 1 ? 1 : wrap_to(coef, dtype));
    if (terms.size() == kScan + 1) reindex();
  }
  void add_term(const UOp* u, i128 coef) { add_term(*u, coef); }
  // A term over a node built for this form: the form keeps it alive.
  void add_built(UOpPtr u, i128 coef) {
    add_term(*u, coef);
    keep.push_back(std::move(u));
  }
  void add_const(i128 v) { k = wrap_to(i128{k} + v, dtype); }
  // Removes zero terms (and any in `drop`), keeping the order.
  void compact(const std::vector<bool>& drop = {}) {
    size_t out = 0;
    for (size_t i = 0; i < terms.size(); ++i)
      if (terms[i].second != 0 && (drop.empty() || !drop[i])) {
        if (out != i) terms[out] = std::move(terms[i]);
        ++out;
      }
    terms.resize(out);
    reindex();
  }
  void drop_zeros() { compact(); }

private:
  size_t find(const UOp* u) const {
    if (!index) {
      for (size_t i = 0; i < terms.size(); ++i)
        if (terms[i].first == u) return i;
      return terms.size();
    }
    auto it = index->find(u);
    return it == index->end() ? terms.size() : it->second;
  }
  void reindex() {
    if (terms.size() <= kScan) {
      index.reset();
      return;
    }
    if (!index) index = std::make_unique<std::unordered_map<const UOp*, size_t>>();
    index->clear();
    for (size_t i = 0; i < terms.size(); ++i) index->emplace(terms[i].first, i);
  }
};

// Sums beyond this many nodes are left as they are: canonicalizing every prefix of a chain of
// n distinct terms costs O(n^2).
constexpr size_t kMaxLinearNodes = 512;

// Adds scale*u to `lin`, flattening ADD, SUB, NEG and MUL by a constant (iteratively, left
// to right). False when the sum is too large to canonicalize.
bool linearize(const UOpPtr& root, i128 scale, Linear& lin) {
  boost::container::small_vector<std::pair<const UOp*, i128>, 32> stack{{root.get(), scale}};
  size_t visited = 0;
  while (!stack.empty()) {
    auto [u, s] = stack.back();
    stack.pop_back();
    // A node's first source is taken next, so it goes on with it directly; only a sum's
    // second source waits on the stack.
    for (;;) {
      if (++visited > kMaxLinearNodes) return false;
      if (s != 1) s = wrap_to(s, lin.dtype); // 1 is itself in every integer type
      const bool same = u->dtype == lin.dtype;
      if (same && (u->op == ADD || u->op == SUB) && u->src.size() == 2) {
        stack.emplace_back(u->src[1].get(), u->op == SUB ? -s : s);
        u = u->src[0].get();
      } else if (same && u->op == NEG && u->src.size() == 1) {
        u = u->src[0].get(), s = -s;
      } else if (same && u->op == MUL && u->src.size() == 2 && u->src[1]->is_const()) {
        s = s * ival(u->src[1]), u = u->src[0].get();
      } else if (same && u->op == MUL && u->src.size() == 2 && u->src[0]->is_const()) {
        s = s * ival(u->src[0]), u = u->src[1].get();
      } else {
        if (u->op == CONST)
          lin.add_const(s * ival(*u));
        else
          lin.add_term(*u, s);
        break;
      }
    }
  }
  return true;
}

std::optional<Linear> linear_of(const UOpPtr& u) {
  Linear lin(u->dtype);
  if (!linearize(u, 1, lin)) return std::nullopt;
  lin.drop_zeros();
  return lin;
}

// build()'s layout: a term is the node itself for coefficient 1, else node * cst(coef); a sum
// is a left-nested chain of plain ADDs (no arg, the dtype of their first source).
bool plain_binary(const UOp& u, Ops op) {
  return u.op == op && u.src.size() == 2 && std::holds_alternative<std::monostate>(u.arg) &&
         u.dtype == u.src[0]->dtype;
}
bool is_term_of(const UOp& u, const UOp* node, int64_t coef, DType dt);

// The deepest sum inside `hint` that build() would make for lin's first terms, and how many
// terms it covers (0: none). A sum rebuilt after a change near its end (a constant, a term
// merged or appended) shares its prefix with the sum it came from: those nodes are taken from
// `hint` instead of being looked up again one by one.
std::pair<const UOpPtr*, size_t> shared_prefix(const Linear& lin, const UOpPtr& hint) {
  const UOpPtr* u = &hint;
  if (plain_binary(**u, ADD) && (*u)->src[1]->is_const()) u = &(*u)->src[0];
  boost::container::small_vector<const UOpPtr*, 16> levels; // outermost first
  while ((*u)->dtype == lin.dtype && plain_binary(**u, ADD)) {
    levels.push_back(u);
    u = &(*u)->src[0];
  }
  levels.push_back(u);
  // levels.back() would be term 0; levels[levels.size()-1-i] the sum of terms 0..i.
  const size_t n = std::min(levels.size(), lin.terms.size());
  size_t m = 0;
  for (; m < n; ++m) {
    const auto& [node, coef] = lin.terms[m];
    const UOp& level = **levels[levels.size() - 1 - m];
    const UOp& term = m == 0 ? level : *level.src[1];
    if (coef == 0 || !is_term_of(term, node, coef, lin.dtype)) break;
  }
  return {m == 0 ? nullptr : levels[levels.size() - m], m};
}

// The canonical node of a linear form: ((t0*c0 + t1) + t2*c2) + k. Nodes of `hint` that are
// sums of lin's first terms are reused (shared_prefix).
UOpPtr build(const Linear& lin, const UOpPtr* hint = nullptr) {
  UOpPtr acc;
  size_t first = 0;
  if (hint != nullptr) {
    const auto [prefix, covered] = shared_prefix(lin, *hint);
    if (prefix != nullptr) acc = *prefix;
    first = covered;
  }
  for (size_t i = first; i < lin.terms.size(); ++i) {
    const auto& [node, coef] = lin.terms[i];
    if (coef == 0) continue;
    UOpPtr t = coef == 1 ? node->ptr() : bin(MUL, node, cst(lin.dtype, coef));
    acc = acc ? bin(ADD, acc, t) : t;
  }
  if (!acc) return cst(lin.dtype, lin.k);
  return lin.k != 0 ? bin(ADD, acc, cst(lin.dtype, lin.k)) : acc;
}

Linear scaled(const Linear& lin, i128 num, i128 den = 1) { // coefficients * num / den, exactly
  Linear r(lin.dtype);
  r.keep = lin.keep;
  for (const auto& [n, c] : lin.terms) r.add_term(n, div_trunc(i128{c} * num, den));
  r.add_const(div_trunc(i128{lin.k} * num, den));
  r.drop_zeros();
  return r;
}

// Exact bounds of sum(coef*term) over the terms (i128, no wrap).
std::pair<i128, i128> terms_range(const Terms& terms) {
  i128 lo = 0, hi = 0;
  for (const auto& [n, c] : terms) {
    const i128 a = i128{c} * n->ivmin(), b = i128{c} * n->ivmax();
    lo += std::min(a, b), hi += std::max(a, b);
  }
  return {lo, hi};
}

// x%c*a + (x//c)*(a*c) -> x*a (C's identity (x/c)*c + x%c == x, also under wrap-around), and
// the unrolled-arange identity sum_{j<d} (x+j)//d == x for x >= 0 (Hermite's identity).
// Returns false when a sum grew too large to canonicalize.
// The position of the term IDIV(m's sources) (of m's dtype) in `lin`, or lin.terms.size().
size_t div_twin(const Linear& lin, const UOp& m) {
  for (size_t j = 0; j < lin.terms.size(); ++j) {
    const UOp& t = *lin.terms[j].first;
    if (t.op == IDIV && t.dtype == m.dtype && t.src.size() == 2 && t.src[0] == m.src[0] &&
        t.src[1] == m.src[1] && std::holds_alternative<std::monostate>(t.arg))
      return j;
  }
  return lin.terms.size();
}

bool merge_divmod(Linear& lin) {
  for (bool again = true; again;) {
    again = false;
    const auto is_div = [](const auto& t) { return t.first->op == IDIV; };
    if (std::none_of(lin.terms.begin(), lin.terms.end(), is_div)) return true;
    for (size_t i = 0; i < lin.terms.size() && !again; ++i) {
      const UOp* m = lin.terms[i].first; // a node of the graph, alive after its term goes
      if (m->op != MOD || !m->src[1]->is_const() || ival(m->src[1]) == 0) continue;
      const int64_t a = lin.terms[i].second;
      const size_t twin = div_twin(lin, *m);
      if (twin == lin.terms.size() ||
          lin.terms[twin].second != wrap_to(i128{a} * ival(m->src[1]), lin.dtype))
        continue;
      std::vector<bool> drop(lin.terms.size(), false);
      drop[i] = drop[twin] = true;
      lin.compact(drop);
      if (!linearize(m->src[0], a, lin)) return false;
      lin.drop_zeros();
      again = true;
    }
  }
  if (!is_sint(lin.dtype)) return true;
  // Hermite: IDIV terms grouped by (divisor, coefficient); a group of d terms (b+j)//d with
  // j = 0..d-1 over one b >= 0 is b. A group needs at least two terms.
  const auto const_div = [](const auto& t) {
    return t.first->op == IDIV && t.first->src[1]->is_const();
  };
  if (std::count_if(lin.terms.begin(), lin.terms.end(), const_div) < 2) return true;
  for (bool again = true; again;) {
    again = false;
    // (divisor node, term) of each IDIV-by-constant term. A group is the terms of one divisor,
    // taken in the order of their first term; most sums hold fewer terms of a divisor than the
    // divisor's value, and are ruled out by a count, without a map.
    boost::container::small_vector<std::pair<const UOp*, size_t>, 16> divs;
    for (size_t i = 0; i < lin.terms.size(); ++i) {
      const UOp* d = lin.terms[i].first;
      if (d->op == IDIV && d->src[1]->is_const()) divs.emplace_back(d->src[1].get(), i);
    }
    for (size_t first = 0; first < divs.size(); ++first) {
      const UOp* dnode = divs[first].first;
      const auto same_divisor = [&](const auto& e) { return e.first == dnode; };
      if (std::any_of(divs.begin(), divs.begin() + static_cast<std::ptrdiff_t>(first),
                      same_divisor))
        continue; // this divisor's group was tried at its first term
      const int64_t den = ival(*dnode);
      const auto count = static_cast<size_t>(std::count_if(
          divs.begin() + static_cast<std::ptrdiff_t>(first), divs.end(), same_divisor));
      if (den < 2 || den > 64 || count < static_cast<size_t>(den)) continue;
      std::vector<size_t> members;
      for (size_t j = first; j < divs.size(); ++j)
        if (divs[j].first == dnode) members.push_back(divs[j].second);
      // base -> the offsets j present over it, and their terms.
      std::unordered_map<const UOp*, std::vector<std::pair<int64_t, size_t>>> by_base;
      std::vector<UOpPtr> bases;
      for (size_t i : members) {
        auto l = linear_of(lin.terms[i].first->src[0]);
        if (!l || l->terms.empty() || !no_wrap(*lin.terms[i].first->src[0])) continue;
        const int64_t j = l->k;
        l->k = 0;
        UOpPtr base = build(*l);
        if (j < 0 || j >= den || base->ivmin() < 0 || !no_wrap(*base)) continue;
        by_base[base.get()].emplace_back(j, i);
        bases.push_back(base);
      }
      for (const UOpPtr& base : bases) {
        auto& offs = by_base[base.get()];
        if (offs.size() != static_cast<size_t>(den)) continue;
        std::vector<bool> seen(static_cast<size_t>(den), false);
        const int64_t coef = lin.terms[offs[0].second].second;
        bool ok = true;
        for (auto [j, i] : offs) {
          ok = ok && !seen[static_cast<size_t>(j)] && lin.terms[i].second == coef;
          seen[static_cast<size_t>(j)] = true;
        }
        if (!ok) continue;
        std::vector<bool> drop(lin.terms.size(), false);
        for (auto [j, i] : offs) drop[i] = true;
        lin.compact(drop);
        lin.keep.push_back(base);
        if (!linearize(base, coef, lin)) return false;
        lin.drop_zeros();
        again = true;
        break;
      }
      if (again) break;
    }
  }
  return true;
}

// The int64 value of a CONST of dtype `d` that cst(d, value) would build (the same node),
// or nullopt.
inline std::optional<int64_t> canonical_const(const UOp& c, DType d) {
  if (c.op != CONST || c.dtype != d || !c.src.empty()) return std::nullopt;
  const auto* v = std::get_if<int64_t>(&c.arg);
  if (v == nullptr || wrap_to(*v, d) != *v) return std::nullopt;
  return *v;
}

// Whether merge_divmod may change a sum of distinct atoms*coefs: an x%c whose x//c is also a
// term, with c times its coefficient, or at least d IDIV terms by one divisor node d (2 <= d
// <= 64), which may form a Hermite group. False means it changes nothing.
bool divmod_may_merge(std::span<const UOp* const> atoms, std::span<const int64_t> coefs, DType dt) {
  for (size_t i = 0; i < atoms.size(); ++i) {
    const UOp& m = *atoms[i];
    if (m.op != MOD || !m.src[1]->is_const() || ival(m.src[1]) == 0) continue;
    for (size_t j = 0; j < atoms.size(); ++j) {
      const UOp& t = *atoms[j];
      if (t.op == IDIV && t.dtype == m.dtype && t.src.size() == 2 && t.src[0] == m.src[0] &&
          t.src[1] == m.src[1] && std::holds_alternative<std::monostate>(t.arg)) {
        if (coefs[j] == wrap_to(i128{coefs[i]} * ival(m.src[1]), dt)) return true;
        break; // the one twin
      }
    }
  }
  const auto div_by = [](const UOp* t, const UOp* d) {
    return t->op == IDIV && t->src[1]->is_const() && (d == nullptr || t->src[1].get() == d);
  };
  for (const UOp* t : atoms) {
    if (!div_by(t, nullptr)) continue;
    const int64_t den = ival(t->src[1]);
    if (den < 2 || den > 64) continue;
    const auto count = std::count_if(atoms.begin(), atoms.end(),
                                     [&](const UOp* a) { return div_by(a, t->src[1].get()); });
    if (count >= den) return true;
  }
  return false;
}

// Whether `root` is already build()'s output for its own linear form, so canonical_sum would
// leave it: a left-nested chain of distinct terms `atom` or `atom*c` (c not 0 or 1), then a
// nonzero constant, all of root's dtype, where no atom is a sum, a product by a constant or a
// constant, and merge_divmod finds nothing to merge. Decided without building a node; false
// also for forms it does not try to recognise (canonical_sum then builds and compares).
bool already_canonical(const UOp& root) {
  const DType dt = root.dtype;
  const UOp* u = &root;
  if (u->op == ADD) {
    if (auto k = canonical_const(*u->src[1], dt)) {
      if (*k == 0) return false;
      u = u->src[0].get();
    }
  }
  std::array<const UOp*, 16> atoms;
  std::array<int64_t, 16> coefs;
  size_t n = 0, divs = 0, mods = 0;
  for (bool last = false; !last;) {
    const UOp* t = u;
    if (u->op == ADD && u->dtype == dt) {
      t = u->src[1].get();
      u = u->src[0].get();
    } else {
      last = true;
    }
    if (t->dtype != dt) return false;
    const UOp* atom = t;
    int64_t coef = 1;
    if (t->op == MUL && t->src[1]->is_const()) {
      auto c = canonical_const(*t->src[1], dt);
      if (!c || *c == 0 || *c == 1) return false;
      atom = t->src[0].get();
      coef = *c;
    }
    if (atom->dtype != dt || atom->op == ADD || atom->op == SUB || atom->op == NEG ||
        atom->op == CONST)
      return false;
    if (atom->op == MUL && (atom->src[0]->is_const() || atom->src[1]->is_const())) return false;
    divs += atom->op == IDIV;
    mods += atom->op == MOD;
    if (n == atoms.size()) return false;
    for (size_t i = 0; i < n; ++i)
      if (atoms[i] == atom) return false;
    coefs[n] = coef;
    atoms[n++] = atom;
  }
  if (divs == 0 || (divs == 1 && mods == 0)) return true;
  return !divmod_may_merge(std::span(atoms.data(), n), std::span(coefs.data(), n), dt);
}

// Whether build(lin) is `root`, decided without building: most sums a rewrite meets are
// canonical already, and building the form only to compare it interns a node per term.
bool is_term_of(const UOp& u, const UOp* node, int64_t coef, DType dt) {
  if (coef == 1) return &u == node;
  return plain_binary(u, MUL) && u.src[0].get() == node && canonical_const(*u.src[1], dt) == coef;
}

bool is_build_of(const Linear& lin, const UOp& root) {
  const DType dt = lin.dtype;
  size_t first = 0, last = lin.terms.size(); // the nonzero terms lie in [first, last)
  while (first < last && lin.terms[first].second == 0) ++first;
  while (last > first && lin.terms[last - 1].second == 0) --last;
  if (first == last) return canonical_const(root, dt) == lin.k;
  const UOp* u = &root;
  if (lin.k != 0) {
    if (!plain_binary(*u, ADD) || canonical_const(*u->src[1], dt) != lin.k) return false;
    u = u->src[0].get();
  }
  for (size_t i = last; i-- > first;) {
    const auto& [node, coef] = lin.terms[i];
    if (coef == 0) continue;
    if (i == first) return is_term_of(*u, node, coef, dt); // the innermost term is u itself
    if (!plain_binary(*u, ADD) || !is_term_of(*u->src[1], node, coef, dt)) return false;
    u = u->src[0].get();
  }
  return false;
}

// ADD/SUB/NEG/MUL-by-constant on integers -> the canonical linear form.
// Signed only: on unsigned types x-y would become x+y*4294967295, correct but unreadable.
UOpPtr canonical_sum(const UOpPtr& root) {
  if (!is_sint(root->dtype) || already_canonical(*root)) return nullptr;
  Linear lin(root->dtype);
  if (!linearize(root, 1, lin)) return nullptr;
  lin.drop_zeros();
  if (!merge_divmod(lin)) return nullptr;
  return is_build_of(lin, *root) ? nullptr : build(lin, &root);
}

// ---- constant folding ---------------------------------------------------------------------

// The ops folded when all their sources are constants (simplify_constant_op relies on this
// rule coming first).
constexpr OpSet kConstantFolded = GroupOp::ALU - OpSet{THREEFRY};

UOpPtr fold_constants(const UOpPtr& root) {
  if (!value_dtype(root->dtype)) return nullptr;
  std::vector<ConstValue> vals;
  for (const UOpPtr& s : root->src) vals.push_back(s->const_value());
  const DType operand = root->op == WHERE ? root->dtype : root->src[0]->dtype;
  if (!value_dtype(operand)) return nullptr;
  auto r = exec_alu(root->op, operand.scalar(), vals);
  if (!r) return nullptr; // undefined (division by zero, oversized shift): leave it
  return root->const_like(*r);
}

// ---- casts ---------------------------------------------------------------------------------

int int_width(ScalarType s) { return 8 * DType(s).itemsize(); }
int mantissa_bits(ScalarType s) {
  switch (s) {
  case ScalarType::FP8E4M3:
    return 4;
  case ScalarType::FP8E5M2:
    return 3;
  case ScalarType::Float16:
    return 11;
  case ScalarType::BFloat16:
    return 8;
  case ScalarType::Float32:
    return 24;
  case ScalarType::Float64:
    return 53;
  default:
    return 0;
  }
}
int float_rank(ScalarType s) { // a float converts exactly to every float of higher rank
  switch (s) {
  case ScalarType::FP8E4M3:
  case ScalarType::FP8E5M2:
    return 0;
  case ScalarType::Float16:
  case ScalarType::BFloat16:
    return 1;
  case ScalarType::Float32:
    return 2;
  default:
    return 3;
  }
}

// Whether every value of `from` converts to `to` and back unchanged.
bool can_safe_cast(DType from, DType to) {
  if (from == to) return true;
  if (from.count != to.count || !value_dtype(from) || !value_dtype(to)) return false;
  const ScalarType f = from.scalar_type, t = to.scalar_type;
  if (f == ScalarType::Bool) return true;
  if (to.is_bool()) return false;
  if (from.is_int() && to.is_int()) {
    const int fw = int_width(f), tw = int_width(t);
    const bool fs = is_signed_scalar(f), ts = is_signed_scalar(t);
    if (fs && !ts) return false;
    if (fs == ts) return tw >= fw;
    return tw > fw; // unsigned into a wider signed type
  }
  if (from.is_int() && to.is_float())
    return mantissa_bits(t) >= int_width(f) - (is_signed_scalar(f) ? 1 : 0);
  if (from.is_float() && to.is_float()) {
    if (f == ScalarType::Float16 && t == ScalarType::BFloat16) return false;
    if (f == ScalarType::BFloat16 && t == ScalarType::Float16) return false;
    return float_rank(t) > float_rank(f);
  }
  return false;
}

UOpPtr fold_cast_const(const UOpPtr& root, const UOpPtr& c) {
  if (!value_dtype(root->dtype) || !value_dtype(c->dtype)) return nullptr;
  const ConstValue v = c->const_value();
  if (c->dtype.is_float() && root->dtype.is_int()) {
    // float -> int of NaN, inf or an out-of-range value is undefined: leave it to run time.
    const double x = as_double(v);
    if (!std::isfinite(x)) return nullptr;
    const double t = std::trunc(x);
    const bool u64 = root->dtype.scalar_type == ScalarType::UInt64;
    const double lo = static_cast<double>(dmin(root->dtype)); // 0 for unsigned targets
    const double hi_excl = u64 ? 0x1p64 : static_cast<double>(dmax(root->dtype)) + 1.0;
    if (t < lo || t >= hi_excl) return nullptr;
  }
  return root->const_like(v);
}

// cast(cast(x, a), b): when a holds every value x can have, the inner cast is exact.
UOpPtr fold_double_cast(const UOpPtr& root, const UOpPtr& mid, const UOpPtr& x) {
  bool exact = can_safe_cast(x->dtype, mid->dtype);
  if (!exact && range_exact(x->dtype) && scalar_int(mid->dtype))
    exact = fits(x->ivmin(), mid->dtype) && fits(x->ivmax(), mid->dtype);
  if (!exact || x->dtype.count != root->dtype.count) return nullptr;
  return x->dtype == root->dtype ? x : x->cast(root->dtype);
}

UOpPtr fold_bitcast_const(const UOpPtr& root, const UOpPtr& c) {
  if (!value_dtype(root->dtype) || !value_dtype(c->dtype) || root->dtype.count != 1 ||
      c->dtype.count != 1 || root->dtype.itemsize() != c->dtype.itemsize())
    return nullptr;
  return UOp::const_(root->dtype, bitcast_const(c->const_value(), c->dtype, root->dtype));
}

// ---- division and modulo ------------------------------------------------------------------

UOpPtr simplify_rec(const UOpPtr& x);

// Whether linearize reads u, of dtype dt, as the single term u*1: neither a sum, a negation,
// a product (by a constant or not) nor a constant; nor a quotient or a remainder, which the
// division rules look into.
bool lone_atom(const UOp& u, DType dt) {
  if (u.dtype != dt) return false;
  switch (u.op) {
  case ADD:
  case SUB:
  case NEG:
  case MUL:
  case CONST:
  case IDIV:
  case MOD:
    return false;
  default:
    return true;
  }
}

// x//c and x%c for a signed integer x and a constant c.
UOpPtr fold_divmod_const(const UOpPtr& root) {
  const DType dt = root->dtype;
  if (!is_sint(dt)) return nullptr;
  const bool is_mod = root->op == MOD;
  const UOpPtr& x = root->src[0];
  const i128 c = ival(root->src[1]);
  if (c == 0) return nullptr;
  if (c == 1) return is_mod ? cst(dt, 0) : x;
  if (c == -1) return is_mod ? cst(dt, 0) : bin(MUL, x, cst(dt, -1));
  if (c < 0) {
    // x / -c == -(x / c) and x % -c == x % c in C (the remainder has the dividend's sign).
    if (!fits(-c, dt)) return nullptr;
    if (is_mod) return bin(MOD, x, cst(dt, -c));
    return bin(MUL, bin(IDIV, x, cst(dt, -c)), cst(dt, -1));
  }
  const i128 lo = x->ivmin(), hi = x->ivmax();
  // (x//a)//c -> x//(a*c) and (x%(a*k))%a -> x%a, for positive a: true for truncation too.
  if (!is_mod && x->op == IDIV && x->src[1]->is_const() && ival(x->src[1]) > 0 &&
      fits(c * ival(x->src[1]), dt))
    return bin(IDIV, x->src[0], cst(dt, c * ival(x->src[1])));
  if (is_mod && x->op == MOD && x->src[1]->is_const() && ival(x->src[1]) != 0 &&
      ival(x->src[1]) % c == 0)
    return bin(MOD, x->src[0], root->src[1]);
  // The quotient is one constant q over the whole range (truncation is monotone).
  if (div_trunc(lo, c) == div_trunc(hi, c)) {
    const i128 q = div_trunc(lo, c);
    if (!is_mod) return cst(dt, q);
    if (q == 0) return x;
    auto lin = linear_of(x);
    if (!lin) return nullptr;
    lin->add_const(-q * c);
    return build(*lin);
  }
  if (!no_wrap(*x)) return nullptr;
  // Most calls end here: x is one nonnegative atom (its linear form is x itself) that takes
  // at least three values, and root is in the form the last rule below would build. Then no
  // rule applies: the gcd of c and x's coefficient 1 is 1, the affine and congruence cases need
  // two values or a constant quotient, and the nested cases need x to be a quotient or a
  // remainder. Decided here without building the linear forms.
  if (lo >= 0 && hi - lo >= 2 && lone_atom(*x, dt) &&
      std::holds_alternative<std::monostate>(root->arg) && x->dtype == dt &&
      canonical_const(*root->src[1], dt) == c)
    return nullptr;
  auto lin_opt = linear_of(x);
  if (!lin_opt) return nullptr;
  const Linear& lin = *lin_opt;
  // Divide numerator and divisor by their gcd: (x*4+y*6)//2 -> x*2+y*3. Exact, any sign.
  i128 g = gcd128(c, lin.k);
  for (const auto& t : lin.terms) g = gcd128(g, t.second);
  if (g > 1) {
    UOpPtr m = build(scaled(lin, 1, g));
    if (c == g) return is_mod ? cst(dt, 0) : m;
    if (!is_mod) return bin(IDIV, m, cst(dt, c / g));
    return bin(MUL, bin(MOD, m, cst(dt, c / g)), cst(dt, g));
  }
  // A nonpositive numerator: x//c == -((-x)//c), x%c == -((-x)%c).
  if (hi <= 0) {
    if (!fits(-lo, dt)) return nullptr;
    UOpPtr neg = build(scaled(lin, -1));
    return bin(MUL, bin(root->op, neg, root->src[1]), cst(dt, -1));
  }
  if (lo < 0) return nullptr; // mixed signs: truncation is not floor division
  // From here x >= 0, so x//c is floor(x/c) and x%c is x mod c.
  const i128 k = lin.k;
  // x = g*y + r with g the terms' gcd, g | c and 0 <= r < g: x%c -> g*(y%(c/g)) + r and
  // x//c -> y//(c/g), so an unrolled lane's offset r stays outside and the IDIV/MOD pair over
  // y merges again ((32*b+1)%64 + (32*b+1)//64*64 -> 32*b+1).
  if (!lin.terms.empty()) {
    i128 gt = 0;
    for (const auto& t : lin.terms) gt = gcd128(gt, t.second);
    if (gt > 1 && c % gt == 0) {
      const i128 r = floormod(k, gt);
      Linear y = scaled(lin, 1, gt); // the terms divided; its constant is replaced below
      y.k = 0;
      y.add_const((k - r) / gt);
      const UOpPtr yn = build(y);
      if (c == gt) return is_mod ? cst(dt, r) : yn;
      if (!is_mod) return bin(IDIV, yn, cst(dt, c / gt));
      return bin(ADD, bin(MUL, bin(MOD, yn, cst(dt, c / gt)), cst(dt, gt)), cst(dt, r));
    }
  }
  // x = g*y + s with g dividing c and some terms' coefficients (y those terms divided by g)
  // and the other terms plus the constant, s, within [0, g): x%c -> g*(y%(c/g)) + s and
  // x//c -> y//(c/g), so the lanes of an unrolled reduce stay outside the modulo:
  // (8*a + u)%64 with 0 <= u < 8 -> 8*(a%8) + u, contiguous in u.
  if (lin.terms.size() >= 2) {
    boost::container::small_vector<i128, 8> candidates;
    for (const auto& t : lin.terms) {
      const i128 d = gcd128(c, abs128(t.second));
      if (d > 1 && std::find(candidates.begin(), candidates.end(), d) == candidates.end())
        candidates.push_back(d);
    }
    std::sort(candidates.begin(), candidates.end(), std::greater<>());
    for (const i128 d : candidates) {
      // s's range, read off lin's terms: most candidates fail here, before any form is built.
      bool any_y = false, any_s = false;
      i128 slo = k, shi = k;
      for (const auto& [t, f] : lin.terms) {
        if (f % d == 0) {
          any_y = true;
          continue;
        }
        any_s = true;
        const i128 a = i128{f} * t->ivmin(), b = i128{f} * t->ivmax();
        slo += std::min(a, b), shi += std::max(a, b);
      }
      if (!any_y || !any_s || slo < 0 || shi >= d) continue;
      Linear y(dt), s(dt);
      for (const auto& [t, f] : lin.terms) {
        if (f % d == 0)
          y.add_term(t, f / d);
        else
          s.add_term(t, f);
      }
      s.add_const(k);
      const UOpPtr yn = build(y), sn = build(s);
      if (!is_mod) return c == d ? yn : bin(IDIV, yn, cst(dt, c / d));
      if (c == d) return sn;
      return bin(ADD, bin(MUL, bin(MOD, yn, cst(dt, c / d)), cst(dt, d)), sn);
    }
  }
  // One term that takes two values: the result is affine in it.
  if (lin.terms.size() == 1 && lin.terms[0].first->ivmax() - lin.terms[0].first->ivmin() == 1) {
    const UOp* v = lin.terms[0].first;
    const i128 f = lin.terms[0].second;
    const i128 n1 = f * v->ivmin() + k, n2 = f * v->ivmax() + k;
    const i128 y1 = is_mod ? n1 % c : n1 / c, y2 = is_mod ? n2 % c : n2 / c;
    Linear r(dt);
    r.add_term(v, y2 - y1);
    r.add_const(y1 - (y2 - y1) * v->ivmin());
    r.drop_zeros();
    return build(r);
  }
  // Congruence: replace each coefficient by its residue closest to 0; when that remainder
  // expression stays within one multiple of c, x%c and x//c follow from it.
  {
    const auto residue = [c](i128 f) {
      i128 r = floormod(f, c);
      return abs128(r - c) < r ? r - c : r;
    };
    // The remainder expression's range, read off lin's terms (the forms are built only when
    // the rule applies).
    i128 rlo = floormod(k, c), rhi = rlo;
    for (const auto& [t, f] : lin.terms) {
      const i128 r = residue(f), a = r * t->ivmin(), b = r * t->ivmax();
      rlo += std::min(a, b), rhi += std::max(a, b);
    }
    if (fits(rlo, dt) && fits(rhi, dt) && floordiv(rlo, c) == floordiv(rhi, c)) {
      Linear rem(dt), quo(dt);
      for (const auto& [t, f] : lin.terms) {
        const i128 r = residue(f);
        rem.add_term(t, r);
        quo.add_term(t, (f - r) / c);
      }
      rem.add_const(floormod(k, c));
      quo.add_const(floordiv(k, c));
      rem.drop_zeros();
      quo.drop_zeros();
      const i128 q = floordiv(rlo, c);
      if (is_mod) {
        rem.add_const(-q * c);
        return build(rem);
      }
      quo.add_const(q);
      return build(quo);
    }
  }
  const auto mod_of_multiple = [c](const UOp* t) {
    return t->op == MOD && t->src[1]->is_const() && ival(t->src[1]) != 0 &&
           ival(t->src[1]) % c == 0;
  };
  if (is_mod && std::any_of(lin.terms.begin(), lin.terms.end(),
                            [&](const auto& t) { return mod_of_multiple(t.first); })) {
    // (a%(c*k) + b)%c -> (a+b)%c: a%(c*k) differs from a by a multiple of c.
    Linear stripped(dt);
    bool changed = false;
    for (const auto& [t, f] : lin.terms) {
      if (mod_of_multiple(t)) {
        changed = true;
        if (!linearize(t->src[0], f, stripped)) return nullptr;
      } else {
        stripped.add_term(t, f);
      }
    }
    stripped.add_const(k);
    stripped.drop_zeros();
    if (changed) {
      UOpPtr nx = build(stripped);
      if (nx->ivmin() >= 0 && no_wrap(*nx)) return bin(MOD, nx, root->src[1]);
    }
  } else if (!is_mod) {
    // (y//a + b)//c -> (y + b*a)//(a*c) for y >= 0, b >= 0, a > 0.
    if (lin.terms.size() == 1 && lin.terms[0].second == 1 && k >= 0) {
      const UOp* t = lin.terms[0].first;
      if (t->op == IDIV && t->src[1]->is_const() && ival(t->src[1]) > 0 &&
          t->src[0]->ivmin() >= 0 && no_wrap(*t->src[0])) {
        const i128 a = ival(t->src[1]);
        if (fits(a * c, dt) && fits(i128{t->src[0]->ivmax()} + k * a, dt)) {
          Linear num = *linear_of(t->src[0]);
          num.add_const(k * a);
          return bin(IDIV, build(num), cst(dt, a * c));
        }
      }
    }
    // Divide in two steps by the smallest factor of c that is also a coefficient, when the
    // first step simplifies: floor(floor(x/a)/b) == floor(x/(a*b)) for x >= 0.
    i128 div = c;
    for (const auto& t : lin.terms) {
      const i128 f = abs128(t.second);
      if (f > 1 && c % f == 0) div = std::min(div, f);
    }
    if (div > 1 && div < c) {
      UOpPtr first = bin(IDIV, x, cst(dt, div));
      UOpPtr s = simplify_rec(first);
      if (s != first && s->ivmin() >= 0) return bin(IDIV, s, cst(dt, c / div));
    }
  }
  // Take the multiples of c out of the coefficients: (x*4+y)//4 -> x + y//4,
  // (x*5+y)%4 -> (x+y)%4. (g, the common divisor of c and x's coefficients, is 1 here: a
  // larger one was divided out above.)
  //
  // Most calls get here with x's coefficients and constant reduced already: 0 <= k < c, and
  // each coefficient in [0, c) for x%c, or not a multiple of c for x//c. Then the remainder
  // form below is lin itself and the quotient has no term, so root is left as it is when it
  // has the form the rule builds and x is lin's canonical node: decided without the forms.
  if (k >= 0 && k < c && std::holds_alternative<std::monostate>(root->arg) &&
      root->dtype == x->dtype && canonical_const(*root->src[1], dt) == c &&
      std::all_of(lin.terms.begin(), lin.terms.end(), [&](const auto& t) {
        return is_mod ? t.second >= 0 && t.second < c : floormod(t.second, c) != 0;
      })) {
    auto [rlo, rhi] = terms_range(lin.terms);
    rlo += k, rhi += k;
    if (rlo < 0 || !fits(rhi, dt) || is_build_of(lin, *x)) return nullptr;
  }
  {
    Linear quo(dt), rem(dt);
    const i128 kr = floormod(k, c);
    quo.add_const(floordiv(k, c));
    rem.add_const(kr / g);
    for (const auto& [t, f] : lin.terms) {
      const i128 r = floormod(f, c), q = floordiv(f, c);
      if (!is_mod && r != 0) {
        rem.add_term(t, f / g);
      } else {
        rem.add_term(t, r / g);
        quo.add_term(t, q);
      }
    }
    rem.drop_zeros();
    quo.drop_zeros();
    auto [rlo, rhi] = terms_range(rem.terms);
    rlo += rem.k, rhi += rem.k;
    if (rlo < 0 || !fits(rhi, dt)) return nullptr;
    // Most calls that get here find x's coefficients reduced already: the result would be
    // root itself (rem builds x, and the quotient has no other term). Decide that without
    // building it.
    const auto lone_div = [&] {
      return quo.k == 0 && std::all_of(quo.terms.begin(), quo.terms.end(),
                                       [](const auto& t) { return t.second == 0; });
    };
    if (g == 1 && (is_mod || lone_div()) && std::holds_alternative<std::monostate>(root->arg) &&
        root->dtype == x->dtype && canonical_const(*root->src[1], dt) == c && is_build_of(rem, *x))
      return nullptr;
    UOpPtr rn = build(rem);
    const i128 cg = c / g;
    UOpPtr result;
    if (is_mod) {
      Linear out(dt);
      if (cg != 1) out.add_built(bin(MOD, rn, cst(dt, cg)), g);
      out.add_const(kr % g);
      out.drop_zeros();
      result = build(out);
    } else {
      if (cg == 1) {
        if (!linearize(rn, 1, quo)) return nullptr;
      } else {
        quo.add_built(bin(IDIV, rn, cst(dt, cg)), 1);
      }
      quo.drop_zeros();
      result = build(quo);
    }
    return result == root ? nullptr : result;
  }
}

// x//y and x%y for a divisor that is not a constant.
UOpPtr fold_divmod_var(const UOpPtr& root) {
  const DType dt = root->dtype;
  if (!is_sint(dt)) return nullptr;
  const bool is_mod = root->op == MOD;
  const UOpPtr &x = root->src[0], &y = root->src[1];
  // A loop variable divided by its own end: r < end, r >= 0.
  if (x->op == RANGE && !x->src.empty() && x->src[0] == y) return is_mod ? x : cst(dt, 0);
  if (!excludes_zero(*y) || !range_exact(x->dtype)) return nullptr;
  // (x*y)//y -> x and (x*y)%y -> 0 when x*y did not wrap.
  if (x->op == MUL && (x->src[0] == y || x->src[1] == y) && no_wrap(*x)) {
    if (is_mod) return cst(dt, 0);
    return x->src[0] == y ? x->src[1] : x->src[0];
  }
  // The quotient is one constant over the whole box (monotone in each argument).
  const i128 xl = x->ivmin(), xh = x->ivmax(), yl = y->ivmin(), yh = y->ivmax();
  const i128 q = xl / yl;
  if (xl / yh == q && xh / yl == q && xh / yh == q) {
    if (!is_mod) return cst(dt, q);
    if (q == 0) return x;
    return bin(ADD, x, bin(MUL, y, cst(dt, -q)));
  }
  return nullptr;
}

// ---- comparisons ----------------------------------------------------------------------------

// x < c for a signed integer x that does not wrap.
UOpPtr fold_lt_const(const UOpPtr& x, const UOpPtr& cnode) {
  if (!is_sint(x->dtype) || !no_wrap(*x)) return nullptr;
  const DType dt = x->dtype;
  const i128 c = ival(cnode);
  // y//d < c  ->  y < c*d (c > 0), y < c*d - (d-1) (c <= 0), truncating division, d > 0.
  if (x->op == IDIV && x->src[1]->is_const() && ival(x->src[1]) > 0) {
    const i128 d = ival(x->src[1]);
    const i128 bound = c > 0 ? c * d : c * d - (d - 1);
    if (fits(bound, dt)) return lt(x->src[0], cst(dt, bound));
    return nullptr;
  }
  auto lin_opt = linear_of(x);
  if (!lin_opt || lin_opt->terms.empty()) return nullptr;
  Linear lin = std::move(*lin_opt);
  const bool had_const = lin.k != 0;
  const i128 cp = c - lin.k; // sum(a_i t_i) < cp
  if (!fits(cp, dt)) return nullptr;
  lin.k = 0;
  if (lin.terms.size() == 1) {
    const UOpPtr t = lin.terms[0].first->ptr();
    const int64_t a = lin.terms[0].second;
    if (a == 1) return had_const ? lt(t, cst(dt, cp)) : nullptr;
    if (a > 0) return lt(t, cst(dt, ceildiv(cp, a))); // t*a < cp <=> t < ceil(cp/a)
    return lt(cst(dt, floordiv(cp, a)), t);           // a < 0: t > cp/a <=> floor(cp/a) < t
  }
  i128 g = 0;
  for (const auto& t : lin.terms) g = gcd128(g, t.second);
  if (g > 1) return lt(build(scaled(lin, 1, g)), cst(dt, ceildiv(cp, g)));
  // Terms with coefficient 1 whose sum stays in [0, d), where d divides cp and every other
  // coefficient: d*M + P < d*K <=> M < K.
  Terms small, rest;
  for (const auto& t : lin.terms) (t.second == 1 ? small : rest).push_back(t);
  if (!rest.empty() && !small.empty()) {
    i128 d = cp;
    for (const auto& t : rest) d = gcd128(d, t.second);
    auto [plo, phi] = terms_range(small);
    if (d > 1 && plo >= 0 && phi < d) {
      Linear m(dt);
      for (const auto& [t, a] : rest) m.add_term(t, a / d);
      return lt(build(m), cst(dt, cp / d));
    }
  }
  return had_const ? lt(build(lin), cst(dt, cp)) : nullptr;
}

// c < x for a signed integer x that does not wrap.
UOpPtr fold_const_lt(const UOpPtr& cnode, const UOpPtr& x) {
  if (!is_sint(x->dtype) || !no_wrap(*x)) return nullptr;
  const DType dt = x->dtype;
  auto lin_opt = linear_of(x);
  if (!lin_opt || lin_opt->terms.empty()) return nullptr;
  Linear lin = std::move(*lin_opt);
  const bool had_const = lin.k != 0;
  const i128 cp = i128{ival(cnode)} - lin.k; // cp < sum(a_i t_i)
  if (!fits(cp, dt)) return nullptr;
  lin.k = 0;
  if (lin.terms.size() == 1) {
    const UOpPtr t = lin.terms[0].first->ptr();
    const int64_t a = lin.terms[0].second;
    if (a == 1) return had_const ? lt(cst(dt, cp), t) : nullptr;
    if (a > 0) return lt(cst(dt, floordiv(cp, a)), t); // t > cp/a <=> floor(cp/a) < t
    return lt(t, cst(dt, ceildiv(cp, a)));             // a < 0: t < cp/a <=> t < ceil(cp/a)
  }
  i128 g = 0;
  for (const auto& t : lin.terms) g = gcd128(g, t.second);
  if (g > 1) return lt(cst(dt, floordiv(cp, g)), build(scaled(lin, 1, g)));
  return had_const ? lt(cst(dt, cp), build(lin)) : nullptr;
}

// x != c and x == c for an integer x.
UOpPtr fold_eq_const(const UOpPtr& root, const UOpPtr& x, const UOpPtr& cnode) {
  if (!scalar_int(x->dtype)) return nullptr;
  const DType dt = x->dtype;
  auto lin_opt = linear_of(x);
  if (!lin_opt || lin_opt->terms.empty()) return nullptr;
  Linear lin = std::move(*lin_opt);
  const i128 c = ival(cnode);
  // x + k == c <=> x == c - k holds in wrap-around arithmetic too.
  if (lin.k != 0) {
    const i128 ck = wrap_to(c - lin.k, dt);
    lin.k = 0;
    return UOp::make(root->op, dtypes::bool_, {build(lin), cst(dt, ck)});
  }
  if (!is_sint(dt) || !no_wrap(*x)) return nullptr;
  i128 g = 0;
  for (const auto& t : lin.terms) g = gcd128(g, t.second);
  if (lin.terms[0].second < 0) g = -g;
  if (g == 1) return nullptr;
  // g*M == c has no solution unless g divides c.
  if (c % g != 0) return root->const_like(root->op == CMPNE);
  return UOp::make(root->op, dtypes::bool_, {build(scaled(lin, 1, g)), cst(dt, c / g)});
}

// ---- the tables ------------------------------------------------------------------------------

PatternMatcher make_symbolic_simple() {
  const UPat x = UPat::var("x"), y = UPat::var("y");
  const UPat c = UPat::cvar("c");
  const std::vector<DType> bool_t = {dtypes::bool_};
  return PatternMatcher({
      // ** constant folding: every ALU op whose sources are all constants **
      {UPat(kConstantFolded).with_src_repeated(UPat(CONST)),
       [](const Captures& m) { return fold_constants(m.root()); }},

      // ** bool arithmetic is logic (exec_alu: ADD/MAX are OR, MUL is AND, SUB is XOR, NEG is
      // NOT); rewriting it first keeps the integer rules below off bools **
      {UPat(OpSet{ADD, MAX, MUL, SUB}, bool_t).with_src({x, y}),
       [](const Captures& m) -> UOpPtr {
         const Ops op = m.root()->op;
         const Ops to = op == MUL ? AND : op == SUB ? XOR : OR;
         return UOp::make(to, m.root()->dtype, {m["x"], m["y"]});
       }},
      {UPat(NEG, bool_t).with_src({x}), [](const Captures& m) { return m["x"]->logical_not(); }},

      // ** identities **
      // x+0 -> x. Exact for integers and bools; for floats only the sign of a zero can differ
      // (-0.0+0.0 == +0.0), which tinygrad accepts too.
      {x + 0,
       [](const Captures& m) -> UOpPtr { return value_dtype(m["x"]->dtype) ? m["x"] : nullptr; }},
      {x - 0,
       [](const Captures& m) -> UOpPtr { // exact for every dtype, -0.0 included
         return value_dtype(m["x"]->dtype) ? m["x"] : nullptr;
       }},
      {x * 1,
       [](const Captures& m) -> UOpPtr { // exact, NaN and inf included
         return value_dtype(m["x"]->dtype) ? m["x"] : nullptr;
       }},
      // x*0 -> 0 only without IEEE specials (inf*0 and nan*0 are nan).
      {x * 0,
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m["x"]->const_like(int64_t{0}) : nullptr;
       }},
      {UPat(FDIV).with_src({x, UPat::const_(1)}),
       [](const Captures& m) { return m["x"]; }}, // x/1 is exact
      {UPat(POW).with_src({x, UPat::const_(1)}), [](const Captures& m) { return m["x"]; }},
      {UPat(POW).with_src({x, UPat::const_(0)}), // pow(x, 0) == 1 for every x, nan too
       [](const Captures& m) { return m.root()->const_like(int64_t{1}); }},
      {x / 1,
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m["x"] : nullptr;
       }},
      // x//-1 -> -x (INT_MIN//-1 wraps to INT_MIN, and so does -INT_MIN).
      {x / -1,
       [](const Captures& m) -> UOpPtr { return is_sint(m["x"]->dtype) ? -m["x"] : nullptr; }},
      {x % 1,
       [](const Captures& m) -> UOpPtr {
         return m["x"]->dtype.is_int() ? m["x"]->const_like(int64_t{0}) : nullptr;
       }},
      {x % -1,
       [](const Captures& m) -> UOpPtr {
         return is_sint(m["x"]->dtype) ? m["x"]->const_like(int64_t{0}) : nullptr;
       }},
      // x//x -> 1 and x%x -> 0 only when x cannot be 0.
      {x / x,
       [](const Captures& m) -> UOpPtr {
         return excludes_zero(*m["x"]) ? m["x"]->const_like(int64_t{1}) : nullptr;
       }},
      {x % x,
       [](const Captures& m) -> UOpPtr {
         return excludes_zero(*m["x"]) ? m["x"]->const_like(int64_t{0}) : nullptr;
       }},
      // (x%y)%y -> x%y: |x%y| < |y| already, with the dividend's sign.
      {((UPat::var() % y).named("inner") % y),
       [](const Captures& m) -> UOpPtr {
         return m["inner"]->dtype.is_int() ? m["inner"] : nullptr;
       }},
      // x%c + (x//c)*c -> x (C's division identity, also under wrap-around).
      {(x % c) + (x / c) * c,
       [](const Captures& m) -> UOpPtr {
         return scalar_int(m["x"]->dtype) && ival(m["c"]) != 0 ? m["x"] : nullptr;
       }},
      // Idempotent ops: x&x, x|x, max(x,x) -> x (max(nan,nan) is nan).
      {UPat(GroupOp::Idempotent).with_src({x, x}), [](const Captures& m) { return m["x"]; }},
      {(x ^ x),
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m["x"]->const_like(int64_t{0}) : nullptr;
       }},
      // x<x is false for every dtype (nan<nan too); x!=x and x==x only without nan.
      {x.lt(x), [](const Captures& m) { return m.root()->const_like(false); }},
      {x.ne(x),
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m.root()->const_like(false) : nullptr;
       }},
      {x.eq(x),
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m.root()->const_like(true) : nullptr;
       }},
      // ** bitwise and boolean absorbing elements (ints and bools) **
      {(x ^ UPat::const_(0)),
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m["x"] : nullptr;
       }},
      {(x | UPat::cvar("c")),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr& v = m["x"];
         if (!is_int_or_bool(v->dtype) || !value_dtype(v->dtype)) return nullptr;
         const int64_t cv = ival(m["c"]);
         if (cv == 0) return v;                                                       // x|0 -> x
         if (cv == as_int(cast_const(int64_t{-1}, v->dtype.scalar()))) return m["c"]; // x|~0
         return nullptr;
       }},
      {(x & UPat::cvar("c")),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr& v = m["x"];
         if (!is_int_or_bool(v->dtype) || !value_dtype(v->dtype)) return nullptr;
         const int64_t cv = ival(m["c"]);
         if (cv == 0) return m["c"];                                             // x&0 -> 0
         if (cv == as_int(cast_const(int64_t{-1}, v->dtype.scalar()))) return v; // x&~0 -> x
         return nullptr;
       }},
      // bool x^true -> !x
      {(UPat::var("x", bool_t) ^ UPat::const_(1, bool_t)),
       [](const Captures& m) { return m["x"]->logical_not(); }},
      // absorption: x|(x&y) -> x, x&(x|y) -> x
      {(x | (x & y)),
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m["x"] : nullptr;
       }},
      {(x & (x | y)),
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m["x"] : nullptr;
       }},
      // ** bool comparisons with constants **
      {UPat::var("x", bool_t).ne(UPat::const_(0, bool_t)),
       [](const Captures& m) { return m["x"]; }}, // x != false -> x
      {UPat::var("x", bool_t).eq(UPat::const_(1, bool_t)),
       [](const Captures& m) { return m["x"]; }}, // x == true -> x
      {UPat::var("x", bool_t).eq(UPat::const_(0, bool_t)),
       [](const Captures& m) { return m["x"]->logical_not(); }}, // x == false -> !x
      {UPat::var("x", bool_t).ne(UPat::const_(1, bool_t)).ne(UPat::const_(1, bool_t)),
       [](const Captures& m) { return m["x"]; }}, // !!x -> x

      // ** WHERE **
      {UPat::cvar("g").where(UPat::var("a"), UPat::var("b")),
       [](const Captures& m) { return as_bool(m["g"]->const_value()) ? m["a"] : m["b"]; }},
      {UPat::var().where(UPat::var("a"), UPat::var("a")), [](const Captures& m) { return m["a"]; }},
      {UPat::var("s", bool_t).where(UPat::const_(1, bool_t), UPat::const_(0, bool_t)),
       [](const Captures& m) { return m["s"]; }},
      {UPat::var("s", bool_t).where(UPat::const_(0, bool_t), UPat::const_(1, bool_t)),
       [](const Captures& m) { return m["s"]->logical_not(); }},
      // where(!s, a, b) -> where(s, b, a)
      {UPat::var("s", bool_t).ne(UPat::const_(1, bool_t)).where(UPat::var("a"), UPat::var("b")),
       [](const Captures& m) { return m["s"]->where(m["b"], m["a"]); }},

      // ** casts **
      {UPat(CAST).with_src({c}),
       [](const Captures& m) { return fold_cast_const(m.root(), m["c"]); }},
      {UPat(OpSet{CAST, BITCAST}).with_src({x}),
       [](const Captures& m) -> UOpPtr {
         return m["x"]->dtype == m.root()->dtype ? m["x"] : nullptr;
       }},
      {UPat(BITCAST).with_src({c}),
       [](const Captures& m) { return fold_bitcast_const(m.root(), m["c"]); }},
      {UPat(CAST).with_src({UPat(CAST).with_src({x}).named("mid")}),
       [](const Captures& m) { return fold_double_cast(m.root(), m["mid"], m["x"]); }},
      // TRUNC of an integer or bool is the value itself.
      {UPat(TRUNC).with_src({x}),
       [](const Captures& m) -> UOpPtr {
         return is_int_or_bool(m["x"]->dtype) ? m["x"] : nullptr;
       }},
  });
}

PatternMatcher make_symbolic_extra() {
  const UPat x = UPat::var("x"), y = UPat::var("y");
  const UPat c = UPat::cvar("c");
  return PatternMatcher({
      // ** a node whose range is one value is that value (exact ranges only) **
      {UPat(GroupOp::ALU | OpSet{DEFINE_VAR}),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr& u = m.root();
         if (!range_exact(u->dtype) || !(u->vmin() == u->vmax())) return nullptr;
         return u->const_like(u->vmin());
       }},
      // ** canonical linear form of signed integer sums (ring identities, wrap-around included) **
      // The form is final (Rule::Final): its atoms come from final sources, no atom is a sum, a
      // product by a constant or a constant, and every prefix of its chain is itself canonical
      // (a subset of terms that merge_divmod left has nothing to merge). No rule of symbolic()
      // rewrites such a chain or a `term*c`, so graph_rewrite need not match each node built.
      {UPat(OpSet{ADD, SUB, NEG}), [](const Captures& m) { return canonical_sum(m.root()); },
       Rule::Final{}},
      {(x * c), [](const Captures& m) { return canonical_sum(m.root()); }, Rule::Final{}},
      // (x*c)*y -> (x*y)*c: constants move outwards (the operands keep their order)
      {UPat(MUL).with_src({x, y}),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr &a = m["x"], &b = m["y"];
         if (!scalar_int(a->dtype) || a->is_const() || b->is_const()) return nullptr;
         auto const_factor = [](const UOpPtr& u) {
           return u->op == MUL && u->src[1]->is_const() && !u->src[0]->is_const();
         };
         if (const_factor(a)) return bin(MUL, bin(MUL, a->src[0], b), a->src[1]);
         if (const_factor(b)) return bin(MUL, bin(MUL, a, b->src[0]), b->src[1]);
         return nullptr;
       }},
      // ** max by ranges **
      {x.maximum(y),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr &a = m["x"], &b = m["y"];
         if (!range_exact(a->dtype)) return nullptr;
         if (a->ivmin() >= b->ivmax()) return a;
         if (a->ivmax() <= b->ivmin()) return b;
         return nullptr;
       }},
      // ** (x op c1) op c2 -> x op (c1 op c2) for associative, commutative integer ops **
      {UPat(OpSet{AND, OR, XOR, MAX})
           .with_src_permuted({UPat(OpSet{AND, OR, XOR, MAX}).named("inner"), UPat::cvar("c2")}),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr &inner = m["inner"], &c2 = m["c2"];
         const Ops op = m.root()->op;
         if (inner->op != op || !is_int_or_bool(c2->dtype) || c2->dtype.count != 1) return nullptr;
         const UOpPtr *v = nullptr, *c1 = nullptr;
         if (inner->src[1]->is_const() && !inner->src[0]->is_const())
           v = &inner->src[0], c1 = &inner->src[1];
         else if (inner->src[0]->is_const() && !inner->src[1]->is_const())
           v = &inner->src[1], c1 = &inner->src[0];
         if (!v) return nullptr;
         const ConstValue ops[2] = {(*c1)->const_value(), c2->const_value()};
         auto r = exec_alu(op, c2->dtype, ops);
         if (!r) return nullptr;
         return UOp::make(op, m.root()->dtype, {*v, c2->const_like(*r)});
       }},
      // x & m -> x for 0 <= x <= m with m = 2^k-1
      {(x & c),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr& v = m["x"];
         if (!range_exact(v->dtype) || v->dtype.is_bool()) return nullptr;
         const int64_t mask = ival(m["c"]);
         if (mask < 0 || ((static_cast<uint64_t>(mask) + 1) & static_cast<uint64_t>(mask)) != 0)
           return nullptr;
         return v->ivmin() >= 0 && v->ivmax() <= mask ? v : nullptr;
       }},
      // ** division and modulo **
      {UPat(OpSet{IDIV, MOD}).with_src({x, c}),
       [](const Captures& m) { return fold_divmod_const(m.root()); }},
      {UPat(OpSet{IDIV, MOD}).with_src({x, y}),
       [](const Captures& m) { return fold_divmod_var(m.root()); }},
      // ** comparisons **
      {x.lt(c), [](const Captures& m) { return fold_lt_const(m["x"], m["c"]); }},
      {c.lt(x), [](const Captures& m) { return fold_const_lt(m["c"], m["x"]); }},
      {UPat(OpSet{CMPNE, CMPEQ}).with_src_permuted({x, c}),
       [](const Captures& m) -> UOpPtr {
         if (m["x"]->is_const()) return nullptr;
         return fold_eq_const(m.root(), m["x"], m["c"]);
       }},
      // x*-1 < y*-1 -> y < x when neither product wraps
      {(x * -1).named("nx").lt((y * -1).named("ny")),
       [](const Captures& m) -> UOpPtr {
         if (!is_sint(m["x"]->dtype) || !no_wrap(*m["nx"]) || !no_wrap(*m["ny"])) return nullptr;
         return lt(m["y"], m["x"]);
       }},
      // ** two WHEREs on one condition combine when a pair of branches is constant **
      {UPat(GroupOp::Binary - OpSet{THREEFRY})
           .with_src({UPat::var("s").where(UPat::var("t"), UPat::var("f")),
                      UPat::var("s").where(UPat::var("tt"), UPat::var("ff"))}),
       [](const Captures& m) -> UOpPtr {
         const UOpPtr &t = m["t"], &f = m["f"], &tt = m["tt"], &ff = m["ff"];
         if (!((t->is_const() && tt->is_const()) || (f->is_const() && ff->is_const())))
           return nullptr;
         const Ops op = m.root()->op;
         return m["s"]->where(t->alu(op, {tt}), f->alu(op, {ff}));
       }},
  });
}

UOpPtr simplify_rec(const UOpPtr& x) { return graph_rewrite(x, symbolic()); }

} // namespace

const PatternMatcher& symbolic_simple() {
  static const PatternMatcher pm = make_symbolic_simple().as_pure();
  return pm;
}

const PatternMatcher& symbolic() {
  static const PatternMatcher pm =
      (symbolic_simple() + make_symbolic_extra()).as_pure(PatternMatcher::FinalResults::Trusted);
  return pm;
}

UOpPtr simplify(const UOpPtr& x) { return graph_rewrite(x, symbolic()); }

UOpPtr simplify_add_const(const UOpPtr& x, int64_t c) {
  const DType dt = x->dtype;
  if (!is_sint(dt)) return simplify(x + c);
  // k + c as a constant of dt, when it stays in dt's range (else the rewrite decides).
  auto shifted = [&](const UOp& k) -> std::optional<int64_t> {
    int64_t v = 0;
    if (!k.is_const() || __builtin_add_overflow(ival(k), c, &v) || !fits(v, dt))
      return std::nullopt;
    return v;
  };
  if (x->is_const()) {
    if (auto v = shifted(*x)) return cst(dt, *v);
  } else if (x->fixed_under().load(std::memory_order_relaxed) == symbolic().pure_id()) {
    if (!plain_binary(*x, ADD) || !x->src[1]->is_const())
      return c == 0 ? x : bin(ADD, x, cst(dt, c)); // x + 0 -> x
    if (auto v = shifted(*x->src[1])) return *v == 0 ? x->src[0] : bin(ADD, x->src[0], cst(dt, *v));
  }
  return simplify(x + c);
}

UOpPtr simplify_constant_op(const UOpPtr& n) {
  const bool folds =
      kConstantFolded.contains(n->op) && !n->src.empty() &&
      std::all_of(n->src.begin(), n->src.end(), [](const UOpPtr& s) { return s->op == CONST; });
  if (folds)
    if (UOpPtr r = fold_constants(n)) return r;
  return simplify(n);
}

} // namespace tg
