// UPat matching and the PatternMatcher.
//
// A PatternMatcher flattens each rule's pattern into a Program: its nodes in pre-order, the
// sources of a node side by side, each capture name a slot number. A match is a walk of that
// array in which every permuted node (a commutative op) reads its source order from a digit
// of a small odometer; the walk that fails at the k-th permuted node rules out every setting
// of the digits after it, so the odometer steps there, and the walks offer the callback every
// way the pattern matches in the order a backtracking search would, without closures. A
// pattern the walk cannot follow (a permuted node under a repeated one or with more than four
// sources, more than eight permuted nodes or sixteen capture names) is matched by that
// backtracking search, driven by continuations: matching a node's sources calls the
// continuation once per way they match, and the callback is the last continuation.
#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <numeric>
#include <span>

#include "tg/ir/pattern_matcher.hpp"
#include "tg/knobs.hpp"

namespace tg {

struct UPat::Data {
  OpSet ops; // empty: any op
  std::vector<DType> dtypes;
  std::optional<Arg> arg;
  std::optional<double> const_value; // CONST whose value equals this numerically
  std::string name;
  enum class Src { Any, Ordered, Permuted, Repeated } src_mode = Src::Any;
  std::vector<UPat> src;
  bool any_len = false;
};

namespace {

// A non-owning callable reference: continuations are called while their frame is alive.
template <class Sig> class FnRef;
template <class R, class... A> class FnRef<R(A...)> {
public:
  template <class F>
  FnRef(F& f) : obj_(&f), call_([](void* o, A... a) -> R { return (*static_cast<F*>(o))(a...); }) {}
  R operator()(A... a) const { return call_(obj_, a...); }

private:
  void* obj_;
  R (*call_)(void*, A...);
};
using Cont = FnRef<bool(Captures&)>;

bool match(const UPat& p, const UOpPtr& n, Captures& caps, Cont cont);

// Matches pats[i..] against n's sources in the order `order` gives.
bool match_seq(std::span<const UPat* const> pats, const UOp& n, const size_t* order, size_t i,
               Captures& caps, Cont cont) {
  if (i == pats.size()) return cont(caps);
  auto next = [&](Captures& c) { return match_seq(pats, n, order, i + 1, c, cont); };
  return match(*pats[i], n.src[order[i]], caps, Cont(next));
}

bool match_src(const UPat::Data& d, const UOpPtr& n, Captures& caps, Cont cont) {
  using Src = UPat::Data::Src;
  const size_t ns = n->src.size();
  if (d.src_mode == Src::Any) return cont(caps);
  const size_t np = d.src_mode == Src::Repeated ? ns : d.src.size();
  if (d.src_mode != Src::Repeated && (d.any_len ? ns < np : ns != np)) return false;
  // Patterns have a handful of sources: keep the work arrays on the stack (matching runs for
  // every rule attempt); only a repeated pattern over a wide node needs the heap.
  constexpr size_t kInline = 8;
  std::array<const UPat*, kInline> pat_buf;
  std::array<size_t, kInline> order_buf;
  std::vector<const UPat*> pat_heap;
  std::vector<size_t> order_heap;
  const UPat** pats = pat_buf.data();
  size_t* order = order_buf.data();
  if (np > kInline) {
    pat_heap.resize(np);
    order_heap.resize(np);
    pats = pat_heap.data();
    order = order_heap.data();
  }
  for (size_t i = 0; i < np; ++i) {
    pats[i] = d.src_mode == Src::Repeated ? &d.src[0] : &d.src[i];
    order[i] = i;
  }
  std::span<const UPat* const> pspan(pats, np);
  if (d.src_mode != Src::Permuted) return match_seq(pspan, *n, order, 0, caps, cont);
  do {
    if (match_seq(pspan, *n, order, 0, caps, cont)) return true;
  } while (std::next_permutation(order, order + np));
  return false;
}

bool dtype_matches(const std::vector<DType>& want, DType have) {
  if (want.empty()) return true;
  for (const DType& w : want)
    if (w == have || w == have.scalar()) return true;
  return false;
}

// Necessary conditions on n's sources, checked before anything is captured: their count, and
// the op of every source a pattern source names (permuted: some source has one of its ops).
bool sources_may_match(const UPat::Data& d, const UOp& n) {
  using Src = UPat::Data::Src;
  const size_t ns = n.src.size(), np = d.src.size();
  switch (d.src_mode) {
  case Src::Any:
    return true;
  case Src::Repeated: {
    const OpSet& ops = d.src[0].data().ops;
    return ops.empty() || std::all_of(n.src.begin(), n.src.end(),
                                      [&](const UOpPtr& s) { return ops.contains(s->op); });
  }
  case Src::Ordered:
    if (d.any_len ? ns < np : ns != np) return false;
    for (size_t i = 0; i < np; ++i) {
      const OpSet& ops = d.src[i].data().ops;
      if (!ops.empty() && !ops.contains(n.src[i]->op)) return false;
    }
    return true;
  case Src::Permuted:
    if (d.any_len ? ns < np : ns != np) return false;
    for (const UPat& sp : d.src) {
      const OpSet& ops = sp.data().ops;
      if (!ops.empty() && std::none_of(n.src.begin(), n.src.end(),
                                       [&](const UOpPtr& s) { return ops.contains(s->op); }))
        return false;
    }
    return true;
  }
  return true;
}

bool match(const UPat& p, const UOpPtr& n, Captures& caps, Cont cont) {
  const UPat::Data& d = p.data();
  if (!d.ops.empty() && !d.ops.contains(n->op)) return false;
  if (!sources_may_match(d, *n)) return false;
  if (!dtype_matches(d.dtypes, n->dtype)) return false;
  if (d.arg && !arg_equal(*d.arg, n->arg)) return false;
  if (d.const_value && !n->is_const_value(*d.const_value)) return false;
  const size_t mark = caps.entries.size();
  if (!d.name.empty()) {
    auto it = std::find_if(caps.entries.begin(), caps.entries.end(),
                           [&](const Captures::Entry& e) { return e.name == d.name; });
    if (it != caps.entries.end()) {
      if (it->node() != n) return false; // the same name must capture the same node
    } else {
      caps.entries.push_back({d.name, &n});
    }
  }
  bool found = match_src(d, n, caps, cont);
  caps.entries.resize(mark);
  return found;
}

std::string dtypes_str(const std::vector<DType>& ds) {
  std::string r;
  for (const DType& d : ds) r += (r.empty() ? "" : "|") + d.name();
  return r;
}

// The orders of 2, 3 and 4 sources in std::next_permutation's (lexicographic) order.
struct PermTable {
  std::array<std::array<uint8_t, 4>, 2 + 6 + 24> orders{};
  std::array<uint8_t, 5> first{}, count{};
  constexpr PermTable() {
    size_t at = 0;
    for (uint8_t n = 2; n <= 4; ++n) {
      first[n] = static_cast<uint8_t>(at);
      std::array<uint8_t, 4> o{0, 1, 2, 3};
      do {
        orders[at++] = o;
        ++count[n];
      } while (std::next_permutation(o.begin(), o.begin() + n));
    }
  }
};
// Constant-initialized: matchers are built during static initialization too.
constexpr PermTable kPerms;

} // namespace

namespace {
OpSet source_ops(const UOp& n) {
  OpSet r;
  for (const UOpPtr& s : n.src) r = r | OpSet{s->op};
  return r;
}

// The ops of all of a node's sources, computed when a pattern first asks (only permuted and
// repeated ones do): most nodes a matcher is offered never need them.
class SourceOps {
public:
  explicit SourceOps(const UOp& n) : n_(n) {}
  const OpSet& get() {
    if (!known_) {
      ops_ = source_ops(n_);
      known_ = true;
    }
    return ops_;
  }

private:
  const UOp& n_;
  OpSet ops_;
  bool known_ = false;
};
} // namespace

struct PatternMatcher::Program {
  using Src = UPat::Data::Src;
  static constexpr size_t kMaxSlots = 16, kMaxPermuted = 8;
  struct Node {
    OpSet ops; // empty: any op
    const UPat::Data* d;
    Src mode;
    bool any_len, check_dtype, check_arg, check_const;
    uint8_t nsrc;         // pattern sources (Ordered, Permuted; 1 for Repeated)
    int8_t slot = -1;     // capture slot, -1: none
    uint16_t first_child; // index of the first source's node; the others follow it
    // Bit s: some dtype the pattern names has scalar type s. Most dtype checks fail (a rule
    // for bools offered an index), and fail on this bit without walking the list.
    uint64_t scalars = 0;
    static_assert(kNumScalarTypes <= 64);

    bool dtype_ok(DType have) const {
      return !check_dtype || (((scalars >> static_cast<unsigned>(have.scalar_type)) & 1) != 0 &&
                              dtype_matches(d->dtypes, have));
    }
  };
  UPat root;                                  // keeps the names the slots view alive
  std::vector<Node> nodes;                    // nodes[0] is the root
  std::vector<std::string_view> names;        // slot -> capture name
  size_t permuted = 0;                        // permuted nodes in the pattern
  std::array<uint8_t, kMaxPermuted> orders{}; // how many source orders each permuted node has
  bool walkable = true;                       // false: match with the backtracking search
  bool trivial = false; // the root alone, its sources unconstrained: no walk needed
  // A root whose sources are leaves (no sources of their own to match), in order or, for two,
  // in either order: most rules' shape (x+c, x//y, x<x). Matched by flat_walk, without the
  // general walk. The captures it makes (`flat_caps`: name, and the source index or -1 for
  // the root) and the positions a repeated name requires to hold one node (`flat_same`).
  bool flat = false;
  static constexpr size_t kMaxFlat = 4;
  struct FlatCapture {
    std::string_view name;
    int8_t at; // source index, -1: the root
  };
  std::array<FlatCapture, kMaxFlat + 1> flat_caps{};
  std::array<std::pair<int8_t, int8_t>, kMaxFlat> flat_same{};
  uint8_t n_flat_caps = 0, n_flat_same = 0;

  explicit Program(const UPat& pat) : root(pat) {
    nodes.push_back({});
    add(pat.data(), 0, false);
    const Node& r = nodes[0];
    trivial = walkable && r.mode == Src::Any && !r.check_arg && !r.check_const;
    plan_flat();
  }

  void plan_flat() {
    const Node& r = nodes[0];
    if (!walkable || r.any_len || r.nsrc == 0 || r.nsrc > kMaxFlat) return;
    if (r.mode != Src::Ordered && !(r.mode == Src::Permuted && r.nsrc == 2)) return;
    const Node* kids = nodes.data() + r.first_child;
    if (std::any_of(kids, kids + r.nsrc, [](const Node& k) { return k.mode != Src::Any; })) return;
    // Each slot's first position captures; a later one must hold the same node.
    std::array<int8_t, kMaxSlots + 1> first_at;
    first_at.fill(-2);
    const auto visit = [&](const Node& p, int8_t at) {
      if (p.slot < 0) return;
      auto& first = first_at[static_cast<size_t>(p.slot)];
      if (first == -2) {
        first = at;
        flat_caps[n_flat_caps++] = {names[static_cast<size_t>(p.slot)], at};
      } else {
        flat_same[n_flat_same++] = {first, at};
      }
    };
    visit(r, -1);
    for (size_t j = 0; j < r.nsrc; ++j) visit(kids[j], static_cast<int8_t>(j));
    flat = true;
  }

  // A constant the pattern node names by value (x+0, x*1: most such rules fail on it).
  static bool const_matches(const Node& p, const UOp& n) {
    if (!p.check_const) return true;
    if (n.op != Ops::CONST) return false;
    const auto* i = std::get_if<int64_t>(&n.arg); // most constants are integers
    return i ? static_cast<double>(*i) == *p.d->const_value : n.is_const_value(*p.d->const_value);
  }

  // Necessary conditions on the root, checked before a walk is set up (most rules a node is
  // offered fail here): the dtype, the source count, the ops of the sources (`src_ops`: the
  // ops of all of n's sources) and the constants named by value.
  [[gnu::always_inline]] bool may_match(const UOp& n, SourceOps& src_ops) const {
    return sources_fit(n, src_ops) && values_ok(n);
  }
  // may_match's checks of n's source count and source ops (what source-op dispatch reads off
  // its masks instead).
  bool sources_fit(const UOp& n, SourceOps& src_ops) const {
    const Node& r = nodes[0];
    const size_t ns = n.src.size();
    const Node* kids = nodes.data() + r.first_child;
    switch (r.mode) {
    case Src::Ordered:
      if (r.any_len ? ns < r.nsrc : ns != r.nsrc) return false;
      for (size_t j = 0; j < r.nsrc; ++j)
        if (!kids[j].ops.empty() && !kids[j].ops.contains(n.src[j]->op)) return false;
      return true;
    case Src::Permuted:
      if (r.any_len ? ns < r.nsrc : ns != r.nsrc) return false;
      for (size_t j = 0; j < r.nsrc; ++j)
        if (!kids[j].ops.empty() && (kids[j].ops - (kids[j].ops - src_ops.get())).empty())
          return false;
      return true;
    case Src::Repeated:
      return kids[0].ops.empty() || (src_ops.get() - kids[0].ops).empty();
    default:
      return true;
    }
  }

  // Whether values_ok below checks anything: a dtype, or a constant named by value.
  bool has_values() const {
    const Node& r = nodes[0];
    if (r.check_dtype) return true;
    if (r.mode != Src::Ordered && r.mode != Src::Permuted) return false;
    const Node* kids = nodes.data() + r.first_child;
    return std::any_of(kids, kids + r.nsrc, [](const Node& k) { return k.check_const; });
  }
  // may_match's checks that read more than the count and the ops of n's sources (what
  // source-op dispatch decides): the root's dtype and the constants named by value.
  bool values_ok(const UOp& n) const {
    const Node& r = nodes[0];
    if (!r.dtype_ok(n.dtype)) return false;
    const Node* kids = nodes.data() + r.first_child;
    if (r.mode == Src::Ordered) {
      for (size_t j = 0; j < r.nsrc; ++j)
        if (!const_matches(kids[j], *n.src[j])) return false;
    } else if (r.mode == Src::Permuted) {
      for (size_t j = 0; j < r.nsrc; ++j)
        if (kids[j].check_const && std::none_of(n.src.begin(), n.src.end(), [&](const UOpPtr& s) {
              return const_matches(kids[j], *s);
            }))
          return false;
    }
    return true;
  }

  // Fills nodes[at] from `d`, its sources' nodes after the current end, depth first, so that
  // permuted nodes and slots are numbered in the walk's (pre-)order.
  void add(const UPat::Data& d, size_t at, bool under_repeat) {
    Node n{d.ops,
           &d,
           d.src_mode,
           d.any_len,
           !d.dtypes.empty(),
           d.arg.has_value(),
           d.const_value.has_value(),
           static_cast<uint8_t>(std::min<size_t>(d.src.size(), 255)),
           -1,
           0,
           0};
    for (const DType& t : d.dtypes)
      n.scalars |= uint64_t{1} << static_cast<unsigned>(t.scalar_type);
    if (!d.name.empty()) {
      auto it = std::find(names.begin(), names.end(), std::string_view(d.name));
      if (it == names.end()) it = names.insert(names.end(), d.name);
      if (names.size() > kMaxSlots) walkable = false;
      n.slot = static_cast<int8_t>(std::min<size_t>(it - names.begin(), kMaxSlots));
    }
    if (d.src_mode == Src::Permuted) {
      if (under_repeat || d.src.size() > 4) walkable = false;
      if (walkable && permuted < kMaxPermuted) orders[permuted] = kPerms.count[d.src.size()];
      ++permuted;
    }
    if (permuted > kMaxPermuted || d.src.size() > 255 || nodes.size() + d.src.size() > 65535)
      walkable = false;
    if (d.src_mode == Src::Any || !walkable) {
      nodes[at] = n;
      return;
    }
    n.first_child = static_cast<uint16_t>(nodes.size());
    nodes[at] = n;
    nodes.resize(nodes.size() + d.src.size());
    for (size_t j = 0; j < d.src.size(); ++j)
      add(d.src[j].data(), n.first_child + j, under_repeat || d.src_mode == Src::Repeated);
  }
};

namespace {

using Program = PatternMatcher::Program;

// The checks of pattern node p on n, without the capture (Walk::here, flat_walk). Not
// Node::dtype_ok: a walk starts only after the root's prefilter passed, where the check mostly
// succeeds, and the larger check stops GCC inlining the walk's calls (measured: more
// instructions under tg_bench_rewrite).
[[gnu::always_inline]] inline bool leaf_ok(const Program::Node& p, const UOp& n) {
  if (!p.ops.empty() && !p.ops.contains(n.op)) return false;
  if (p.check_dtype && !dtype_matches(p.d->dtypes, n.dtype)) return false;
  if (p.check_arg && !arg_equal(*p.d->arg, n.arg)) return false;
  return Program::const_matches(p, n);
}

// One walk of a Program: the odometer's digits (which order each permuted node tries), and
// the captures made so far.
struct Walk {
  const Program& pr;
  explicit Walk(const Program& p) : pr(p) {}
  std::array<uint8_t, Program::kMaxPermuted> digit{};
  std::array<const UOpPtr*, Program::kMaxSlots> slot; // slot[i] is set when bit i of `have` is
  uint32_t have = 0;
  size_t permuted_seen = 0; // permuted nodes reached by the current walk

  // The checks of p on n itself, and its capture.
  bool here(const Program::Node& p, const UOpPtr& np) {
    if (!leaf_ok(p, *np)) return false;
    if (p.slot >= 0) {
      const uint32_t bit = uint32_t{1} << p.slot;
      if (!(have & bit)) {
        have |= bit;
        slot[static_cast<size_t>(p.slot)] = &np;
      } else if (*slot[static_cast<size_t>(p.slot)] != np) {
        return false; // the same name must capture the same node
      }
    }
    return true;
  }

  // A source: most patterns' leaves (a variable, a constant) take no recursive call.
  bool child(const Program::Node& p, const UOpPtr& np) {
    return p.mode == Program::Src::Any ? here(p, np) : node(p, np);
  }

  bool node(const Program::Node& p, const UOpPtr& np) {
    using Src = Program::Src;
    const UOp& n = *np;
    const size_t ns = n.src.size();
    if (p.mode == Src::Ordered || p.mode == Src::Permuted) {
      if (p.any_len ? ns < p.nsrc : ns != p.nsrc) return false;
    }
    if (!here(p, np)) return false;
    const Program::Node* kids = pr.nodes.data() + p.first_child;
    switch (p.mode) {
    case Src::Any:
      return true;
    case Src::Ordered:
      for (size_t j = 0; j < p.nsrc; ++j) // every source's op before any source's subtree
        if (!kids[j].ops.empty() && !kids[j].ops.contains(n.src[j]->op)) return false;
      for (size_t j = 0; j < p.nsrc; ++j)
        if (!child(kids[j], n.src[j])) return false;
      return true;
    case Src::Permuted: {
      const auto& order = kPerms.orders[kPerms.first[p.nsrc] + digit[permuted_seen++]];
      for (size_t j = 0; j < p.nsrc; ++j)
        if (!child(kids[j], n.src[order[j]])) return false;
      return true;
    }
    case Src::Repeated:
      for (const UOpPtr& s : n.src)
        if (!child(kids[0], s)) return false;
      return true;
    }
    return false;
  }

  // Steps the odometer past every setting the last walk ruled out; false when none is left.
  bool next() {
    size_t k = permuted_seen;
    while (k-- > 0) {
      if (++digit[k] < pr.orders[k]) {
        std::fill(digit.begin() + static_cast<std::ptrdiff_t>(k) + 1, digit.end(), 0);
        return true;
      }
      digit[k] = 0;
    }
    return false;
  }
};

// walk_program for a flat program (Program::flat): the same checks, captures and order of
// offers (a permuted pair tries its sources in order, then swapped), with no walk state.
template <class F>
bool flat_walk(const Program& pr, const UOpPtr& root, Captures& caps, F&& on_match) {
  const Program::Node& r = pr.nodes[0];
  const UOp& n = *root;
  if (n.src.size() != r.nsrc || !leaf_ok(r, n)) return false;
  const Program::Node* kids = pr.nodes.data() + r.first_child;
  // One offer with kids[j] matched to source j, or to source 1-j of a swapped pair.
  const auto offer = [&]<bool kSwapped>() {
    const auto at = [&](size_t j) -> const UOpPtr& { return n.src[kSwapped ? 1 - j : j]; };
    for (size_t j = 0; j < r.nsrc; ++j)
      if (!kids[j].ops.empty() && !kids[j].ops.contains(at(j)->op)) return false;
    for (size_t j = 0; j < r.nsrc; ++j)
      if (!leaf_ok(kids[j], *at(j))) return false;
    const auto node_at = [&](int8_t i) { return i < 0 ? &n : at(static_cast<size_t>(i)).get(); };
    for (size_t i = 0; i < pr.n_flat_same; ++i)
      if (node_at(pr.flat_same[i].first) != node_at(pr.flat_same[i].second)) return false;
    const size_t mark = caps.entries.size();
    for (size_t i = 0; i < pr.n_flat_caps; ++i) {
      const auto& c = pr.flat_caps[i];
      caps.entries.push_back({c.name, c.at < 0 ? &root : &at(static_cast<size_t>(c.at))});
    }
    const bool done = on_match(caps);
    caps.entries.resize(mark);
    return done;
  };
  if (offer.template operator()<false>()) return true;
  return r.mode == Program::Src::Permuted && offer.template operator()<true>();
}

// The walks of a pattern whose root check passed (kept out of line: most rules fail before).
template <class F>
[[gnu::noinline]] bool walk_program(const Program& pr, const UOpPtr& root, Captures& caps,
                                    F&& on_match) {
  Walk w(pr);
  const size_t slots = pr.names.size();
  for (;;) {
    w.have = 0;
    w.permuted_seen = 0;
    if (w.node(pr.nodes[0], root)) {
      const size_t mark = caps.entries.size();
      for (size_t i = 0; i < slots; ++i) caps.entries.push_back({pr.names[i], w.slot[i]});
      const bool done = on_match(caps);
      caps.entries.resize(mark);
      if (done) return true;
    }
    if (!w.next()) return false;
  }
}

// Offers `on_match` every way `pr` matches `root` until it returns true.
template <class F>
bool run_program(const Program& pr, const UOpPtr& root, SourceOps& src_ops, Captures& caps,
                 F&& on_match) {
  if (pr.trivial) {
    const Program::Node& r = pr.nodes[0];
    if (!r.ops.empty() && !r.ops.contains(root->op)) return false;
    if (!r.dtype_ok(root->dtype)) return false;
    const size_t mark = caps.entries.size();
    if (r.slot >= 0) caps.entries.push_back({pr.names[0], &root});
    const bool done = on_match(caps);
    caps.entries.resize(mark);
    return done;
  }
  return pr.may_match(*root, src_ops) && walk_program(pr, root, caps, on_match);
}

} // namespace

// ---- UPat ----

UPat::UPat() : d_(std::make_shared<Data>()) {}

UPat::UPat(OpSet ops, std::vector<DType> dts, std::optional<Arg> arg, std::string name)
    : d_(std::make_shared<Data>()) {
  d_->ops = ops;
  d_->dtypes = std::move(dts);
  d_->arg = std::move(arg);
  d_->name = std::move(name);
}

#define TG_UPAT_MODIFY(body)                                                                       \
  auto d = std::make_shared<Data>(*d_);                                                            \
  body;                                                                                            \
  return UPat(std::move(d))

UPat UPat::named(std::string name) const { TG_UPAT_MODIFY(d->name = std::move(name)); }
UPat UPat::with_src(std::vector<UPat> src) const {
  TG_UPAT_MODIFY(d->src = std::move(src); d->src_mode = Data::Src::Ordered);
}
UPat UPat::with_src_permuted(std::vector<UPat> src) const {
  TG_UPAT_MODIFY(d->src = std::move(src); d->src_mode = Data::Src::Permuted);
}
UPat UPat::with_src_repeated(UPat each) const {
  TG_UPAT_MODIFY(d->src = {std::move(each)}; d->src_mode = Data::Src::Repeated);
}
UPat UPat::allow_any_len() const { TG_UPAT_MODIFY(d->any_len = true); }
UPat UPat::with_dtypes(std::vector<DType> dts) const { TG_UPAT_MODIFY(d->dtypes = std::move(dts)); }
#undef TG_UPAT_MODIFY

UPat UPat::var(std::string name, std::vector<DType> dts) {
  return UPat(OpSet{}, std::move(dts), std::nullopt, std::move(name));
}
UPat UPat::cvar(std::string name, std::vector<DType> dts) {
  return UPat(Ops::CONST, std::move(dts), std::nullopt, std::move(name));
}
UPat UPat::const_(double value, std::vector<DType> dts) {
  UPat p(Ops::CONST, std::move(dts));
  p.d_->const_value = value;
  return p;
}

UPat UPat::alu(Ops op, std::vector<UPat> others) const {
  std::vector<UPat> src{*this};
  src.insert(src.end(), others.begin(), others.end());
  UPat p(op);
  return GroupOp::Commutative.contains(op) ? p.with_src_permuted(std::move(src))
                                           : p.with_src(std::move(src));
}

UPat UPat::cast(std::vector<DType> dts) const {
  return UPat(Ops::CAST, std::move(dts)).with_src({*this});
}

OpSet UPat::root_ops() const { return d_->ops; }

std::string UPat::str() const {
  const Data& d = *d_;
  std::string r;
  if (d.ops.empty())
    r = "*";
  else {
    for (int i = 0; i < kNumOps; ++i)
      if (d.ops.contains(static_cast<Ops>(i)))
        r += (r.empty() ? "" : "|") + std::string(op_name(static_cast<Ops>(i)));
  }
  if (!d.name.empty()) r = d.name + ":" + r;
  if (!d.dtypes.empty()) r += "." + dtypes_str(d.dtypes);
  if (d.const_value) r += "=" + to_string(ConstValue(*d.const_value));
  if (d.arg) r += "[" + arg_to_string(*d.arg) + "]";
  if (d.src_mode == Data::Src::Any) return r;
  r += d.src_mode == Data::Src::Permuted ? "{" : "(";
  for (size_t i = 0; i < d.src.size(); ++i) r += (i ? ", " : "") + d.src[i].str();
  if (d.src_mode == Data::Src::Repeated) r += "...";
  if (d.any_len) r += ", ...";
  return r + (d.src_mode == Data::Src::Permuted ? "}" : ")");
}

UPat operator+(const UPat& a, const UPat& b) { return a.alu(Ops::ADD, {b}); }
UPat operator-(const UPat& a, const UPat& b) { return a.alu(Ops::SUB, {b}); }
UPat operator*(const UPat& a, const UPat& b) { return a.alu(Ops::MUL, {b}); }
UPat operator/(const UPat& a, const UPat& b) { return a.alu(Ops::IDIV, {b}); }
UPat operator%(const UPat& a, const UPat& b) { return a.alu(Ops::MOD, {b}); }
UPat operator&(const UPat& a, const UPat& b) { return a.alu(Ops::AND, {b}); }
UPat operator|(const UPat& a, const UPat& b) { return a.alu(Ops::OR, {b}); }
UPat operator^(const UPat& a, const UPat& b) { return a.alu(Ops::XOR, {b}); }
UPat operator-(const UPat& a) { return a.alu(Ops::NEG, {}); }
UPat operator+(const UPat& a, double c) { return a + UPat::const_(c); }
UPat operator-(const UPat& a, double c) { return a - UPat::const_(c); }
UPat operator*(const UPat& a, double c) { return a * UPat::const_(c); }
UPat operator/(const UPat& a, double c) { return a / UPat::const_(c); }
UPat operator%(const UPat& a, double c) { return a % UPat::const_(c); }

// ---- Captures ----

const UOpPtr& Captures::operator[](std::string_view name) const {
  for (const Entry& e : entries)
    if (e.name == name) return e.node();
  std::string have;
  for (const Entry& e : entries) have += (have.empty() ? "" : ", ") + std::string(e.name);
  throw Error("pattern rule asked for capture '" + std::string(name) +
              "' but its pattern captures only [" + have + "]");
}

bool Captures::has(std::string_view name) const {
  return std::any_of(entries.begin(), entries.end(),
                     [&](const Entry& e) { return e.name == name; });
}

bool upat_match(const UPat& pat, const UOpPtr& node, Captures& caps,
                const std::function<bool(Captures&)>& on_match) {
  const PatternMatcher::Program pr(pat);
  if (pr.walkable) {
    SourceOps src_ops(*node);
    return run_program(pr, node, src_ops, caps, on_match);
  }
  auto call = [&](Captures& c) { return on_match(c); };
  return match(pat, node, caps, Cont(call));
}

// ---- statistics ----

int track_match_stats() { return static_cast<int>(knobs::TRACK_MATCH_STATS.get()); }

namespace {

// Keeps every matcher's statistics alive until exit, then prints them (TRACK_MATCH_STATS=2).
struct StatsRegistry {
  struct Entry {
    std::vector<std::string> names;
    std::shared_ptr<std::vector<RuleStats>> stats;
  };
  std::mutex mu;
  std::vector<Entry> entries;

  static StatsRegistry& get() {
    static StatsRegistry r;
    return r;
  }
  void add(const std::vector<Rule>& rules, std::shared_ptr<std::vector<RuleStats>> stats) {
    std::vector<std::string> names;
    for (const Rule& r : rules) names.push_back(r.name);
    std::lock_guard lock(mu);
    entries.push_back({std::move(names), std::move(stats)});
  }
  ~StatsRegistry() {
    if (track_match_stats() < 2) return;
    struct Row {
      uint64_t matches, attempts, ns;
      const std::string* name;
    };
    std::vector<Row> rows;
    for (const Entry& e : entries)
      for (size_t i = 0; i < e.names.size(); ++i) {
        const RuleStats& s = (*e.stats)[i];
        if (s.attempts > 0) rows.push_back({s.matches, s.attempts, s.time_ns, &e.names[i]});
      }
    std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });
    uint64_t tm = 0, ta = 0, tns = 0;
    std::fprintf(stderr, "%10s / %10s %10s  rule\n", "matches", "attempts", "ms");
    for (const Row& r : rows) {
      std::fprintf(stderr, "%10llu / %10llu %10.3f  %s\n", (unsigned long long)r.matches,
                   (unsigned long long)r.attempts, r.ns / 1e6, r.name->c_str());
      tm += r.matches, ta += r.attempts, tns += r.ns;
    }
    std::fprintf(stderr, "%10llu / %10llu %10.3f  total over %zu rules\n", (unsigned long long)tm,
                 (unsigned long long)ta, tns / 1e6, rows.size());
  }
};

} // namespace

// ---- PatternMatcher ----

namespace {
std::string where(const std::source_location& loc) {
  std::string file = loc.file_name();
  if (auto slash = file.rfind('/'); slash != std::string::npos) file = file.substr(slash + 1);
  return file + ":" + std::to_string(loc.line());
}
} // namespace

PatternMatcher::PatternMatcher(std::vector<Rule> rules, std::source_location loc)
    : rules_(std::move(rules)), where_(where(loc)) {
  for (size_t i = 0; i < rules_.size(); ++i)
    if (rules_[i].name.empty())
      rules_[i].name = where_ + " #" + std::to_string(i) + " " + rules_[i].pat.str();
  index_rules();
}

PatternMatcher::PatternMatcher(const PatternMatcher& o)
    : rules_(o.rules_), where_(o.where_), pure_id_(o.pure_id_), trust_final_(o.trust_final_) {
  index_rules();
}

PatternMatcher::~PatternMatcher() = default;

PatternMatcher PatternMatcher::as_pure(FinalResults final_results) const {
  static std::atomic<uint64_t> next_id{1}; // 0: not pure
  PatternMatcher r(*this);
  r.pure_id_ = next_id.fetch_add(1, std::memory_order_relaxed);
  r.trust_final_ = final_results == FinalResults::Trusted;
  return r;
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& o) const {
  std::vector<Rule> all = rules_;
  all.insert(all.end(), o.rules_.begin(), o.rules_.end());
  PatternMatcher r(std::move(all));
  r.where_ = where_ + "+" + o.where_;
  return r;
}

void PatternMatcher::index_rules() {
  programs_.clear();
  for (const Rule& r : rules_) programs_.push_back(std::make_shared<const Program>(r.pat));
  by_op_.assign(kNumOps, {});
  for (size_t i = 0; i < rules_.size(); ++i) {
    OpSet ops = rules_[i].pat.root_ops();
    const Program& pr = *programs_[i];
    for (int op = 0; op < kNumOps; ++op)
      if (ops.empty() || ops.contains(static_cast<Ops>(op)))
        by_op_[static_cast<size_t>(op)].candidates.push_back(
            {&rules_[i], &pr, static_cast<uint32_t>(i), pr.walkable && !pr.trivial});
  }
  index_sources();
  stats_ = std::make_shared<std::vector<RuleStats>>(rules_.size());
  if (track_match_stats() > 0) StatsRegistry::get().add(rules_, stats_);
}

// Source-op dispatch. A pattern's root says which ops may stand at its sources. The masks of
// a root op, indexed by the class of the op found at each source, AND-ed over a node's
// sources (or, for a node of two sources, one mask read for the pair), leave the rules whose
// may_match passes on the sources' count and ops. Only what the masks cannot see is checked
// per rule: the dtype and the constants named by value, and a permuted pattern's source ops
// for nodes of other than two sources. The ops some pattern names at a source get a class
// each; every other op shares class 0, which no such pattern accepts.
void PatternMatcher::index_sources() {
  using Src = Program::Src;
  const auto checks_sources = [](const Candidate& c) { // else every mask lets it through
    return c.prefilter && c.program->nodes[0].mode != Src::Any;
  };
  op_class_.fill(0);
  std::vector<Ops> named; // class k > 0 is named[k - 1]
  for (const OpRules& rules : by_op_)
    for (const Candidate& c : rules.candidates) {
      if (!checks_sources(c)) continue;
      const Program::Node& r = c.program->nodes[0];
      for (size_t j = 0; j < r.nsrc; ++j)
        for (int op = 0; op < kNumOps; ++op)
          if (c.program->nodes[r.first_child + j].ops.contains(static_cast<Ops>(op)) &&
              op_class_[static_cast<size_t>(op)] == 0) {
            named.push_back(static_cast<Ops>(op));
            op_class_[static_cast<size_t>(op)] = static_cast<uint8_t>(named.size());
          }
    }
  classes_ = named.size() + 1;
  // Whether a pattern node accepts a source of class k.
  const auto accepts = [&](const Program::Node& kid, size_t k) {
    return kid.ops.empty() || (k != 0 && kid.ops.contains(named[k - 1]));
  };
  // may_match's verdict on sources of classes `ks`, from their count and ops alone.
  const auto fits = [&](const Candidate& c, std::span<const size_t> ks) {
    if (!checks_sources(c)) return true;
    const Program::Node& r = c.program->nodes[0];
    const Program::Node* kids = c.program->nodes.data() + r.first_child;
    const size_t n = ks.size();
    if (r.mode == Src::Repeated)
      return std::all_of(ks.begin(), ks.end(), [&](size_t k) { return accepts(kids[0], k); });
    if (r.any_len ? n < r.nsrc : n != r.nsrc) return false;
    for (size_t j = 0; j < r.nsrc; ++j) {
      const bool ok =
          r.mode == Src::Ordered
              ? accepts(kids[j], ks[j])
              : std::any_of(ks.begin(), ks.end(), [&](size_t k) { return accepts(kids[j], k); });
      if (!ok) return false;
    }
    return true;
  };
  for (OpRules& rules : by_op_) {
    if (rules.candidates.empty() || rules.candidates.size() > 64) continue;
    rules.dispatch = true;
    rules.by_count.fill(0);
    rules.by_source.assign(OpRules::kMaxSources * classes_, 0);
    rules.by_pair.assign(classes_ * classes_, 0);
    for (size_t i = 0; i < rules.candidates.size(); ++i) {
      Candidate& c = rules.candidates[i];
      const uint64_t bit = uint64_t{1} << i;
      const Program::Node& r = c.program->nodes[0];
      const Program::Node* kids = c.program->nodes.data() + r.first_child;
      // By position, a permuted pattern passes: may_match decides for it.
      const bool by_position = checks_sources(c) && r.mode != Src::Permuted;
      for (size_t n = 0; n <= OpRules::kMaxSources; ++n)
        if (!by_position || r.mode == Src::Repeated || (r.any_len ? n >= r.nsrc : n == r.nsrc))
          rules.by_count[n] |= bit;
      for (size_t j = 0; j < OpRules::kMaxSources; ++j)
        for (size_t k = 0; k < classes_; ++k) {
          bool ok = true;
          if (by_position && r.mode == Src::Repeated)
            ok = accepts(kids[0], k);
          else if (by_position && j < r.nsrc)
            ok = accepts(kids[j], k);
          if (ok) rules.by_source[j * classes_ + k] |= bit;
        }
      for (size_t k0 = 0; k0 < classes_; ++k0)
        for (size_t k1 = 0; k1 < classes_; ++k1) {
          const std::array<size_t, 2> ks{k0, k1};
          if (fits(c, ks)) rules.by_pair[k0 * classes_ + k1] |= bit;
        }
      c.permuted = c.prefilter && r.mode == Src::Permuted;
      c.values = c.prefilter && c.program->has_values();
    }
  }
}

namespace {
// The Captures of one rewrite attempt, reused per thread and nesting level (a rule may run a
// graph_rewrite of its own), so that matching allocates nothing once a thread has warmed up.
struct CapturesPool {
  std::vector<std::unique_ptr<Captures>> levels;
  size_t depth = 0;
};
thread_local CapturesPool t_captures; // internal linkage: one TLS lookup per use
} // namespace

CapturesLease::CapturesLease() {
  CapturesPool& pool = t_captures;
  if (pool.depth == pool.levels.size()) pool.levels.push_back(std::make_unique<Captures>());
  caps_ = pool.levels[pool.depth++].get();
}

CapturesLease::~CapturesLease() {
  caps_->entries.clear(); // a throwing callback leaves its captures behind
  caps_->root_ = nullptr;
  --t_captures.depth;
}

namespace {

// One rule on `node` whose root check passed (or has none): its rewrite, or null.
UOpPtr attempt(const Rule& rule, const Program& pr, const UOpPtr& node, Captures& caps) {
  UOpPtr result;
  auto on_match = [&](Captures& c) {
    result = rule.fn(c);
    return static_cast<bool>(result);
  };
  if (!pr.walkable) {
    match(rule.pat, node, caps, Cont(on_match));
  } else if (pr.trivial) {
    const Program::Node& r = pr.nodes[0];
    if (!r.dtype_ok(node->dtype)) return nullptr;
    if (r.slot >= 0) caps.entries.push_back({pr.names[0], &node});
    on_match(caps);
    caps.entries.clear();
  } else if (pr.flat) {
    flat_walk(pr, node, caps, on_match);
  } else {
    walk_program(pr, node, caps, on_match);
  }
  return result;
}

} // namespace

UOpPtr PatternMatcher::rewrite(const UOpPtr& node, void* ctx, const std::type_info* ctx_type,
                               const Rule** which) const {
  if (by_op_[static_cast<size_t>(node->op)].candidates.empty()) return nullptr;
  CapturesLease lease;
  return rewrite(node, lease.get(), ctx, ctx_type, which);
}

UOpPtr PatternMatcher::rewrite(const UOpPtr& node, Captures& caps, void* ctx,
                               const std::type_info* ctx_type, const Rule** which) const {
  const OpRules& rules = by_op_[static_cast<size_t>(node->op)];
  const std::vector<Candidate>& candidates = rules.candidates;
  if (candidates.empty()) return nullptr;
  caps.entries.clear(); // a callback that threw may have left its captures behind
  caps.root_ = &node;
  caps.ctx_ = ctx;
  caps.ctx_type_ = ctx_type;
  if (track_match_stats() > 0) [[unlikely]]
    return rewrite_tracked(node, caps, which);
  SourceOps src_ops(*node);
  const size_t ns = node->src.size();
  if (rules.dispatch && ns <= OpRules::kMaxSources) {
    const auto cls = [&](size_t j) { return op_class_[static_cast<size_t>(node->src[j]->op)]; };
    const bool pair = ns == 2; // one mask decides every pattern's source ops
    uint64_t left = 0;
    if (pair) {
      left = rules.by_pair[cls(0) * classes_ + cls(1)];
    } else {
      left = rules.by_count[ns];
      for (size_t j = 0; j < ns; ++j) left &= rules.by_source[j * classes_ + cls(j)];
    }
    for (; left != 0; left &= left - 1) {
      const Candidate& c = candidates[static_cast<size_t>(std::countr_zero(left))];
      if (c.permuted && !pair) {
        if (!c.program->may_match(*node, src_ops)) continue;
      } else if (c.values && !c.program->values_ok(*node)) {
        continue;
      }
      if (UOpPtr result = attempt(*c.rule, *c.program, node, caps)) {
        if (which) *which = c.rule;
        return result;
      }
    }
    return nullptr;
  }
  for (const Candidate& c : candidates) {
    if (c.prefilter && !c.program->may_match(*node, src_ops)) continue;
    if (UOpPtr result = attempt(*c.rule, *c.program, node, caps)) {
      if (which) *which = c.rule;
      return result;
    }
  }
  return nullptr;
}

// rewrite() with each rule's attempts, matches and time counted (TRACK_MATCH_STATS).
UOpPtr PatternMatcher::rewrite_tracked(const UOpPtr& node, Captures& caps,
                                       const Rule** which) const {
  SourceOps src_ops(*node);
  for (const Candidate& c : by_op_[static_cast<size_t>(node->op)].candidates) {
    UOpPtr result;
    auto t0 = std::chrono::steady_clock::now();
    if (!c.prefilter || c.program->may_match(*node, src_ops))
      result = attempt(*c.rule, *c.program, node, caps);
    auto dt = std::chrono::steady_clock::now() - t0;
    RuleStats& s = (*stats_)[c.index];
    s.attempts.fetch_add(1, std::memory_order_relaxed);
    s.time_ns.fetch_add(static_cast<uint64_t>(dt.count()), std::memory_order_relaxed);
    if (result) {
      s.matches.fetch_add(1, std::memory_order_relaxed);
      if (which) *which = c.rule;
      return result;
    }
  }
  return nullptr;
}

} // namespace tg
