#include <doctest/doctest.h>

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
}
