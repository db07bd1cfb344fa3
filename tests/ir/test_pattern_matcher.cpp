#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/pattern_matcher.hpp"

using namespace tg;

namespace {
UOpPtr var(const char* n, int64_t lo = 0, int64_t hi = 100) { return UOp::variable(n, lo, hi); }
UOpPtr c(int64_t v) { return UOp::const_(dtypes::index, v); }

std::vector<std::string> captured(const UPat& p, const UOpPtr& n) {
  std::vector<std::string> out;
  Captures caps;
  upat_match(p, n, caps, [&](Captures& cs) {
    std::string s;
    for (auto& e : cs.entries)
      s += std::string(e.name) + "=" + std::string(op_name(e.node()->op)) + " ";
    out.push_back(s);
    return false; // keep enumerating
  });
  return out;
}
// Patterns of every kind the matcher handles: sources in order, in any order (2 and 3 of
// them), repeated, any length; constants by value, dtypes, op sets, repeated names, nesting.
std::vector<UPat> pattern_pool() {
  const UPat x = UPat::var("x"), y = UPat::var("y"), k = UPat::cvar("k");
  return {
      x + 0,
      x * k,
      UPat(Ops::ADD).with_src({UPat(Ops::MUL), x}),
      UPat(Ops::IDIV).with_src({x, k}),
      UPat(Ops::MOD).with_src({x, UPat::const_(1)}),
      UPat(Ops::SINK).with_src_repeated(UPat(Ops::DEFINE_VAR)),
      UPat(Ops::SINK).with_src({x, y}).allow_any_len(),
      UPat(),
      UPat(OpSet{Ops::ADD, Ops::MUL}, {dtypes::int32}),
      UPat::var("c").lt(y).where(UPat::var("a"), UPat::var("b")),
      x.maximum(x),
      UPat(Ops::ADD).with_src({UPat(), UPat(Ops::CONST)}),
      x.cast(),
      UPat(GroupOp::ALU).with_src_repeated(UPat(Ops::CONST)),
      -x,
      UPat(OpSet{Ops::ADD, Ops::SUB}).with_src({UPat(Ops::DEFINE_VAR), y}),
      UPat(Ops::WHERE).with_src_permuted({UPat(Ops::CONST), x, y}),
      UPat(Ops::ADD, {dtypes::index}).with_src({x, y}),
      (x * k) + y,
      UPat(Ops::SINK).with_src({UPat(Ops::CONST), x, y, UPat(), UPat()}),
  };
}

// A random value over a few leaves, of up to `depth` levels.
UOpPtr random_value(std::mt19937& rng, int depth) {
  std::uniform_int_distribution<int> pick(0, 10);
  const int what = depth == 0 ? pick(rng) % 4 : pick(rng);
  auto sub = [&] { return random_value(rng, depth - 1); };
  switch (what) {
  case 0:
    return var("a");
  case 1:
    return var("b");
  case 2:
    return c(pick(rng) % 3);
  case 3:
    return UOp::const_(dtypes::int32, int64_t{pick(rng) % 2});
  case 4: {
    UOpPtr l = sub(), r = sub();
    return l->dtype == r->dtype ? l + r : l + 1;
  }
  case 5: {
    UOpPtr l = sub(), r = sub();
    return l->dtype == r->dtype ? l * r : l * 2;
  }
  case 6:
    return sub() / 3;
  case 7:
    return sub() % 1;
  case 8: {
    UOpPtr a = sub();
    return a->lt(a->const_like(int64_t{1}))->where(a, a->maximum(a));
  }
  case 9:
    return -sub();
  default:
    return sub()->cast(dtypes::int32);
  }
}

// A random value, or a SINK of up to six of them (more sources than the matcher's masks take).
UOpPtr random_node(std::mt19937& rng, int depth) {
  if (rng() % 5 != 0) return random_value(rng, depth);
  std::vector<UOpPtr> srcs;
  for (size_t i = 0, n = rng() % 7; i < n; ++i) srcs.push_back(random_value(rng, depth - 1));
  return UOp::sink(std::move(srcs));
}
} // namespace

TEST_SUITE("ir.pattern_matcher") {
  TEST_CASE("x + 0 -> x reads like tinygrad") {
    PatternMatcher pm({{UPat::var("x") + 0, [](const Captures& cs) { return cs["x"]; }}});
    UOpPtr a = var("a");
    CHECK(pm.rewrite(a + 0) == a);
    CHECK(pm.rewrite(c(0) + a) == a); // commutative: either order
    CHECK(pm.rewrite(a + 1) == nullptr);
    CHECK(pm.rewrite(a * 0) == nullptr);
  }

  TEST_CASE("named captures must agree when a name repeats") {
    UPat same = UPat::var("x") + UPat::var("x");
    UOpPtr a = var("a"), b = var("b");
    CHECK(captured(same, a + a).size() >= 1);
    CHECK(captured(same, a + b).empty());
  }

  TEST_CASE("commutative ops try both orders, others keep theirs") {
    UPat p = UPat::var("x") * UPat::cvar("k");
    UOpPtr a = var("a");
    CHECK(captured(p, a * 3).size() == 1);
    CHECK(captured(p, c(3) * a).size() == 1);
    UPat q = UPat::var("x") / UPat::cvar("k"); // IDIV: ordered
    CHECK(captured(q, a / 3).size() == 1);
    CHECK(captured(q, c(3) / a).empty());
    // Both orders match when both sources fit: two matches are enumerated.
    CHECK(captured(UPat::var("p") + UPat::var("q"), a + var("b")).size() == 2);
  }

  TEST_CASE("op sets, dtypes, args and constants") {
    UOpPtr a = var("a");
    UOpPtr i32 = UOp::variable("i", 0, 5, dtypes::int32);
    UPat ops = UPat::ops(OpSet{Ops::ADD, Ops::MUL}, "r");
    CHECK(captured(ops, a + 1).size() == 1);
    CHECK(captured(ops, a * 2).size() == 1);
    CHECK(captured(ops, a / 2).empty());
    CHECK(captured(UPat::var("x", {dtypes::int32}), i32).size() == 1);
    CHECK(captured(UPat::var("x", {dtypes::int32}), a).empty());
    CHECK(captured(UPat(Ops::DEFINE_VAR, {}, Arg(VarArg{"a", 0, 100})), a).size() == 1);
    CHECK(captured(UPat(Ops::DEFINE_VAR, {}, Arg(VarArg{"a", 0, 99})), a).empty());
    CHECK(captured(UPat::const_(2), c(2)).size() == 1);
    CHECK(captured(UPat::const_(2), UOp::const_(dtypes::float32, 2.0)).size() == 1);
    CHECK(captured(UPat::const_(2), c(3)).empty());
    CHECK(captured(UPat::cvar("k", {dtypes::float32}), c(3)).empty());
    // a vector dtype matches a pattern that names its scalar
    UOpPtr v = UOp::make(Ops::VECTORIZE, dtypes::int32.vec(2), {i32, i32});
    CHECK(captured(UPat::var("x", {dtypes::int32}), v).size() == 1);
  }

  TEST_CASE("src lists: ordered, repeated, any length") {
    UOpPtr a = var("a"), b = var("b");
    UOpPtr s = UOp::sink({a, b, a + 1});
    CHECK(captured(UPat(Ops::SINK).with_src({UPat::var("x"), UPat::var("y")}), s).empty());
    CHECK(captured(UPat(Ops::SINK).with_src({UPat::var("x"), UPat::var("y")}).allow_any_len(), s)
              .size() == 1);
    CHECK(captured(UPat(Ops::SINK).with_src_repeated(UPat(Ops::DEFINE_VAR)), s).empty());
    CHECK(captured(UPat(Ops::SINK).with_src_repeated(UPat(Ops::DEFINE_VAR)), UOp::sink({a, b}))
              .size() == 1);
  }

  TEST_CASE("a default UPat matches any node, as a source and as a rule's root") {
    UOpPtr a = var("a"), b = var("b");
    const UPat any_source = UPat(Ops::ADD, {}, std::nullopt, "x").with_src({UPat(), UPat()});
    CHECK(any_source.str() == "x:ADD(*, *)");
    PatternMatcher pm({{any_source, [](const Captures& cs) { return cs["x"]->src[0]; }},
                       {UPat(), [](const Captures&) -> UOpPtr { return nullptr; }}});
    CHECK(pm.rewrite(a + b) == a);
    CHECK(pm.rewrite(a * b) == nullptr);
    CHECK(UPat().str() == "*");
  }

  TEST_CASE("rules are tried in order and only for matching root ops") {
    int tried_mul = 0;
    PatternMatcher pm({
        {UPat::var("x") * 1,
         [&](const Captures& cs) {
           ++tried_mul;
           return cs["x"];
         }},
        {UPat::var("x") + UPat::var("y"), [](const Captures&) -> UOpPtr { return nullptr; }},
        {UPat::var("x") + 0, [](const Captures& cs) { return cs["x"]; }},
    });
    UOpPtr a = var("a");
    CHECK(pm.rewrite(a + 0) == a); // the second rule declines, the third rewrites
    CHECK(tried_mul == 0);
    CHECK(pm.rewrite(a * 1) == a);
    CHECK(tried_mul == 1);
  }

  TEST_CASE("matchers compose with +") {
    PatternMatcher p1({{UPat::var("x") + 0, [](const Captures& cs) { return cs["x"]; }}});
    PatternMatcher p2({{UPat::var("x") * 1, [](const Captures& cs) { return cs["x"]; }}});
    PatternMatcher both = p1 + p2;
    UOpPtr a = var("a");
    CHECK(both.size() == 2);
    CHECK(both.rewrite(a * 1) == a);
    CHECK(both.rewrite(a + 0) == a);
  }

  TEST_CASE("a rule asking for a capture it does not have raises an error naming it") {
    PatternMatcher pm({{UPat::var("x") + 0, [](const Captures& cs) { return cs["y"]; }}});
    CHECK_THROWS_WITH_AS(pm.rewrite(var("a") + 0),
                         doctest::Contains("capture 'y' but its pattern captures only [x]"), Error);
  }

  TEST_CASE("rule names say where the rule is and what it matches") {
    PatternMatcher pm({{UPat::var("x") + 0, [](const Captures& cs) { return cs["x"]; }}});
    CHECK(pm.rules()[0].name.find("test_pattern_matcher.cpp:") != std::string::npos);
    CHECK(pm.rules()[0].name.find("ADD{x:*, CONST=0.0}") != std::string::npos);
  }

  TEST_CASE("context reaches the callbacks, typed") {
    struct Counter {
      int n = 0;
    };
    PatternMatcher pm(
        {{UPat(Ops::DEFINE_VAR, {}, std::nullopt, "v"), [](const Captures& cs) -> UOpPtr {
            cs.ctx<Counter>().n++;
            return nullptr;
          }}});
    Counter k;
    pm.rewrite(var("a"), &k, &typeid(Counter));
    CHECK(k.n == 1);
    CHECK_THROWS_WITH_AS(pm.rewrite(var("a")), doctest::Contains("needs a rewrite context"), Error);
    int wrong = 0;
    CHECK_THROWS_AS(pm.rewrite(var("a"), &wrong, &typeid(int)), Error);
  }

  // The matcher picks rules by a node's source count and source ops before it tries them
  // (and falls back to checking each rule in turn for nodes of many sources or ops of many
  // rules). Whatever the route, the rule that rewrites a node must be the first, in table
  // order, whose pattern matches and whose callback accepts: what trying every rule in turn
  // with upat_match gives.
  TEST_CASE("the rule chosen is the first that matches and accepts, as trying each in turn") {
    const std::vector<UPat> pool = pattern_pool();
    std::mt19937 rng(7);
    for (int table = 0; table < 40; ++table) {
      // A table of random pool patterns; every table past the 30th holds more than 64 rules
      // for one op, where the matcher takes its plain loop.
      std::vector<size_t> picks;
      const size_t size = table < 30 ? 1 + rng() % 12 : 70;
      for (size_t i = 0; i < size; ++i) picks.push_back(rng() % pool.size());
      // A rule's callback accepts some nodes and declines others, the same way every time.
      auto accepts = [](const UOpPtr& n, size_t rule) { return (n->hash() >> 3) % 4 != rule % 4; };
      auto marker = [](size_t rule) { return c(1000 + static_cast<int64_t>(rule)); };
      std::vector<Rule> rules;
      for (size_t i = 0; i < picks.size(); ++i)
        rules.emplace_back(pool[picks[i]], [i, accepts, marker](const Captures& cs) -> UOpPtr {
          return accepts(cs.root(), i) ? marker(i) : nullptr;
        });
      const PatternMatcher pm(std::move(rules));
      for (int n = 0; n < 60; ++n) {
        const UOpPtr node = random_node(rng, 3);
        UOpPtr expected;
        for (size_t i = 0; i < picks.size() && !expected; ++i) {
          const UPat& pat = pool[picks[i]];
          if (!pat.root_ops().empty() && !pat.root_ops().contains(node->op)) continue;
          Captures caps;
          if (upat_match(pat, node, caps, [&](Captures&) { return accepts(node, i); }))
            expected = marker(i);
        }
        CAPTURE(node->str());
        CAPTURE(table);
        CHECK(pm.rewrite(node) == expected);
      }
    }
  }
}
