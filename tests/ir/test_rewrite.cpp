#include <doctest/doctest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"
#include "tg/knobs.hpp"

using namespace tg;

namespace {
UOpPtr var(const char* n) { return UOp::variable(n, 0, 100); }

// A tiny folding table, independent of symbolic(), so these tests check the rewrite engine.
const PatternMatcher& fold() {
  static const PatternMatcher pm({
      {UPat::var("x") + 0, [](const Captures& c) { return c["x"]; }},
      {UPat::var("x") * 1, [](const Captures& c) { return c["x"]; }},
      {UPat::cvar("a") + UPat::cvar("b"),
       [](const Captures& c) { return c["a"]->const_like(c["a"]->ivmin() + c["b"]->ivmin()); }},
      {(UPat::var("x") + UPat::cvar("a")) + UPat::cvar("b"),
       [](const Captures& c) { return c["x"] + (c["a"]->ivmin() + c["b"]->ivmin()); }},
  });
  return pm;
}
// Nodes of `g` whose memo slot a rewrite still holds (none once every rewrite has returned).
size_t slots_taken(const UOpPtr& g) {
  size_t n = 0;
  for (const UOp* u : g->toposort()) n += memo_held_by_running_rewrite(*u);
  return n;
}
// Runs `run` `reps` times on each of four threads at once; how many runs returned true, by
// thread.
std::vector<int> runs_on_threads(int reps, const std::function<bool()>& run) {
  constexpr int kThreads = 4;
  std::vector<int> ok(kThreads, 0);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      for (int r = 0; r < reps; ++r) ok[static_cast<size_t>(t)] += run();
    });
  for (auto& t : ts) t.join();
  return ok;
}
} // namespace

TEST_SUITE("ir.rewrite") {
  TEST_CASE("rewrites to a fixed point, bottom of the graph first") {
    UOpPtr a = var("a");
    CHECK(graph_rewrite(((a + 0) * 1) + 0, fold()) == a);
    CHECK(graph_rewrite(((a + 1) + 2) + 3, fold()) == a + 6);
    UOpPtr s = UOp::sink({(a + 0) * 1, (a + 1) + 1});
    CHECK(graph_rewrite(s, fold()) == UOp::sink({a, a + 2}));
  }

  TEST_CASE("a wide graph where every node is rewritten (the node map grows while linking)") {
    std::vector<UOpPtr> wide, want;
    for (int i = 0; i < 5000; ++i) {
      UOpPtr v = UOp::variable("w" + std::to_string(i), 0, 9);
      wide.push_back((v + 0) * 1);
      want.push_back(v);
    }
    CHECK(graph_rewrite(UOp::sink(wide), fold()) == UOp::sink(want));
  }

  TEST_CASE("an unchanged graph comes back as the same node") {
    UOpPtr e = var("a") * 3 + var("b");
    CHECK(graph_rewrite(e, fold()) == e);
  }

  TEST_CASE("each node of a DAG is matched once") {
    int calls = 0;
    PatternMatcher count({{UPat::var("x"), [&](const Captures&) -> UOpPtr {
                             ++calls;
                             return nullptr;
                           }}});
    UOpPtr a = var("a");
    UOpPtr x = a + 1;
    for (int i = 0; i < 30; ++i) x = x + x; // 2^30 paths, 32 distinct nodes
    graph_rewrite(x, count);
    CHECK(calls == static_cast<int>(x->toposort().size()));
  }

  TEST_CASE("a rebuilt node that a rule rewrote is freed during the rewrite, not at its end") {
    // (a+1)+1+... : each level is rebuilt over its source's replacement, then folded by a rule;
    // the rebuilt node is garbage at once. Counted by a rule that watches the live nodes.
    size_t peak = 0;
    PatternMatcher watch = fold() + PatternMatcher({{UPat::var("x"), [&](const Captures&) {
                                                       peak = std::max(peak, UOp::live_count());
                                                       return UOpPtr();
                                                     }}});
    UOpPtr a = var("a");
    UOpPtr x = a;
    for (int i = 0; i < 2000; ++i) x = x + 1;
    const size_t before = UOp::live_count();
    CHECK(graph_rewrite(x, watch) == a + 2000);
    // Each level leaves its result a+k alive (and the constant k past the small ones built
    // once), but not its rebuilt node (a+(k-1))+1: about 3500 nodes, not 5500.
    INFO("peak ", peak - before, " nodes over the start");
    CHECK(peak < before + 2 * 2000 + 100);
    CHECK(peak > before);
  }

  TEST_CASE("a rule's result that another rule rewrote is freed during the rewrite") {
    // x*2 -> x+x -> x<<1 on 1000 independent products: each x+x is superseded as soon as its
    // replacement is linked, and nothing else holds it. Kept to the end, the 1000 x+x would be
    // alive together; the watch rule sees the live nodes when each x+x is matched.
    size_t peak = 0;
    const PatternMatcher rules({
        {UPat::var("x") * 2, [](const Captures& c) { return c["x"] + c["x"]; }},
        {UPat::var("x") + UPat::var("x"),
         [&](const Captures& c) {
           peak = std::max(peak, UOp::live_count());
           return c["x"]->alu(Ops::SHL, {c["x"]->const_like(int64_t{1})});
         }},
    });
    std::vector<UOpPtr> products, shifted;
    for (int i = 0; i < 1000; ++i) {
      const UOpPtr v = UOp::variable("v" + std::to_string(i), 0, 100);
      products.push_back(v * 2);
      shifted.push_back(v->alu(Ops::SHL, {v->const_like(int64_t{1})}));
    }
    const UOpPtr g = UOp::sink(products);
    const UOpPtr want = UOp::sink(shifted);
    shifted.clear();
    const size_t before = UOp::live_count();
    for (const RewriteOptions& opts : {RewriteOptions{}, RewriteOptions{.bottom_up = true}}) {
      peak = 0;
      CHECK(graph_rewrite(g, rules, opts) == want);
      INFO("bottom_up ", opts.bottom_up, ": peak ", peak - before, " nodes over the start");
      if (!opts.bottom_up) CHECK(peak < before + 100); // the x<<1 live in `want` already
      CHECK(slots_taken(g) == 0);
    }
    CHECK(UOp::live_count() == before);
  }

  TEST_CASE("a final node whose parent a rule rewrote away is freed during the rewrite") {
    // (-v)*0 on 1000 variables: -v -> 0-v, a final node, then the rebuilt (0-v)*0 -> 0. Once
    // its parent is rebuilt, 0-v is held only by the rewrite (its node -v has no other parent),
    // which lets go of it then instead of at the end. The watch sees the live nodes at each *0.
    size_t peak = 0;
    const std::vector<Rule> table{
        {UPat(Ops::NEG).with_src({UPat::var("x")}),
         [](const Captures& c) { return c["x"]->const_like(int64_t{0}) - c["x"]; }},
        {UPat::var("x") * 0,
         [&](const Captures& c) {
           peak = std::max(peak, UOp::live_count());
           return c["x"]->const_like(int64_t{0});
         }},
    };
    std::vector<UOpPtr> products, zeros;
    for (int i = 0; i < 1000; ++i) {
      const UOpPtr v = UOp::variable("v" + std::to_string(i), 0, 100);
      products.push_back(-v * 0);
      zeros.push_back(v->const_like(int64_t{0}));
    }
    const UOpPtr g = UOp::sink(products);
    const UOpPtr want = UOp::sink(zeros);
    const size_t before = UOp::live_count();
    const PatternMatcher plain(table), pure = plain.as_pure();
    for (const PatternMatcher* pm : {&plain, &pure}) {
      peak = 0;
      CHECK(graph_rewrite(g, *pm) == want);
      INFO("pure ", pm != &plain, ": peak ", peak - before, " nodes over the start");
      CHECK(peak < before + 100); // 1000 more when each 0-v lives to the end
      CHECK(slots_taken(g) == 0);
    }
    CHECK(UOp::live_count() == before);
  }

  TEST_CASE("a node met again after the rewrite let go of its replacement is rewritten again") {
    // sink((a+0)*2, max(a,a)): a+0 -> a, and once (a+0)*2 is rebuilt as a*2 the rewrite lets
    // go of a+0's replacement (a+0 has no other parent). Then max(a,a) -> a+0 builds a+0
    // again (the same node, still in the input graph): it is rewritten again, not taken as
    // done with a replacement that is gone.
    int plus_zero = 0;
    const std::vector<Rule> table{
        {UPat::var("x") + 0,
         [&](const Captures& c) {
           ++plus_zero;
           return c["x"];
         }},
        {UPat(Ops::MAX).with_src({UPat::var("x"), UPat::var("x")}),
         [](const Captures& c) { return c["x"] + 0; }},
    };
    const UOpPtr a = var("a");
    const UOpPtr g = UOp::sink({(a + 0) * 2, a->maximum(a)});
    const PatternMatcher plain(table), pure = plain.as_pure();
    for (const PatternMatcher* pm : {&plain, &pure}) {
      plus_zero = 0;
      CHECK(graph_rewrite(g, *pm) == UOp::sink({a * 2, a}));
      CHECK(plus_zero == 2);
      CHECK(slots_taken(g) == 0);
    }
  }

  TEST_CASE("under a pure matcher a rebuilt node is matched before it enters the node table") {
    // (a+1)+1+... : every level is rebuilt over its source's replacement and folded by a rule.
    // The pure matcher sees each rebuilt node detached; the result holds only interned nodes,
    // the same as the rules give without the shortcut (a context turns purity off).
    int detached = 0, matched = 0;
    const PatternMatcher watch = (PatternMatcher({{UPat::var("x"),
                                                   [&](const Captures& c) {
                                                     ++matched;
                                                     detached += !c.root()->listed();
                                                     return UOpPtr();
                                                   }}}) +
                                  fold())
                                     .as_pure();
    UOpPtr a = var("a");
    UOpPtr x = a;
    for (int i = 0; i < 300; ++i) x = x + 1;
    const size_t before = UOp::live_count();
    const UOpPtr out = graph_rewrite(x, watch);
    CHECK(out == a + 300);
    CHECK(detached == 298); // levels 3..300: the first two levels' sources do not change
    CHECK(detached < matched);
    int ctx = 0;
    CHECK(graph_rewrite(x, watch, ctx) == out);
    for (const UOp* u : out->toposort()) {
      CHECK(u->listed());
      CHECK(UOp::make(u->op, u->dtype, std::vector<UOpPtr>(u->src), u->arg).get() == u);
    }
    CHECK(slots_taken(x) == 0);
    CHECK(UOp::live_count() <= before + 2); // a+300 and the constant 300
    // A rebuilt node that no rule changes is interned and final.
    UOpPtr b = var("b");
    const UOpPtr y = graph_rewrite(((a + 0) * b) * 3, fold().as_pure());
    CHECK(y == (a * b) * 3);
    CHECK(y->listed());
    CHECK(y->src[0]->listed());
  }

  TEST_CASE("a pure rule whose result contains its rebuilt node still reports the cycle") {
    // MUL(x, 3) -> MAX(root, 0): the result holds the node it rewrote. The detached
    // candidate is entered in the table, and the rewrite reports the cycle as it would
    // without the shortcut.
    const PatternMatcher wrap =
        PatternMatcher({{UPat::var("x") * 3,
                         [](const Captures& c) {
                           return c.root()->maximum(c.root()->const_like(int64_t{0}));
                         }}}) +
        fold();
    UOpPtr a = var("a");
    const UOpPtr e = (a + 0) * 3; // rebuilt as a*3, then wrapped
    CHECK_THROWS_WITH_AS(graph_rewrite(e, wrap.as_pure()), doctest::Contains("contains itself"),
                         RewriteError);
    CHECK_THROWS_WITH_AS(graph_rewrite(e, wrap), doctest::Contains("contains itself"),
                         RewriteError);
    CHECK(slots_taken(e) == 0);
  }

  TEST_CASE("a node rebuilt again after it was freed gets the same replacement") {
    UOpPtr a = var("a"), b = var("b");
    // y + 1 is rebuilt (as a + 1) under both parents; it is freed after the first, so the
    // second builds and rewrites it anew.
    UOpPtr y = a + 0;
    UOpPtr p1 = ((y + 1) + 2) * b, p2 = ((y + 1) + 2) + b;
    UOpPtr out = graph_rewrite(UOp::sink({p1, p2, (y + 1) + 2}), fold());
    CHECK(out == UOp::sink({(a + 3) * b, (a + 3) + b, a + 3}));
    CHECK(slots_taken(out) == 0);
  }

  TEST_CASE("a rule's nested rewrite of the same nodes keeps both memos apart") {
    // The outer rewrite holds the memo slots of the graph's nodes; the nested one, run by a
    // rule on a subgraph the outer has seen, keeps its own entries for them elsewhere.
    UOpPtr a = var("a"), b = var("b");
    UOpPtr shared = (a + 0) * 1;
    int nested = 0, matched = 0;
    PatternMatcher outer({{UPat(Ops::MAX).named("m"),
                           [&](const Captures& c) -> UOpPtr {
                             ++nested;
                             UOpPtr l = graph_rewrite(c["m"]->src[0], fold());
                             UOpPtr r = graph_rewrite(c["m"]->src[1], fold());
                             return l == c["m"]->src[0] && r == c["m"]->src[1] ? nullptr
                                                                               : l->maximum(r);
                           }},
                          {UPat::var("x"), [&](const Captures&) -> UOpPtr {
                             ++matched;
                             return nullptr;
                           }}});
    // The outer rewrite visits `shared` before its user, so the nested rewrites meet claimed
    // nodes; the MAX's sources are left as built (outer has no rule for them).
    UOpPtr g = UOp::sink({shared, shared->maximum(shared + b), shared + 0});
    UOpPtr want = UOp::sink({shared, a->maximum(a + b), shared + 0});
    CHECK(graph_rewrite(g, outer) == want);
    CHECK(nested == 2); // the MAX it built, then the MAX of rewritten sources
    // Each node the outer rewrite met was matched once: the graph's nodes but the first MAX,
    // then the new MAX and its new source a+b.
    CHECK(matched == static_cast<int>(g->toposort().size()) + 1);
    CHECK(slots_taken(g) == 0);
    // Rewriting again from scratch: every slot was freed, nothing is taken as seen.
    CHECK(graph_rewrite(g, fold()) == UOp::sink({a, a->maximum(a + b), a}));
    CHECK(graph_rewrite(g, outer) == want);
  }

  TEST_CASE("an exception leaves no memo slot taken") {
    UOpPtr a = var("a");
    UOpPtr e = (a + 0) * 1 + 5;
    PatternMatcher boom(
        {{UPat::cvar("c"), [](const Captures&) -> UOpPtr { throw Error("boom"); }}});
    CHECK_THROWS_AS(graph_rewrite(e, boom), Error);
    CHECK(slots_taken(e) == 0);
    CHECK(graph_rewrite(e, fold()) == a + 5);
    CHECK(slots_taken(e) == 0);
  }

  TEST_CASE("bottom_up matches a node before its sources") {
    // Top-down folds (a+0)+0 from the inside; a bottom-up rule on the outer node sees the
    // original sources first.
    std::vector<std::string> seen;
    PatternMatcher log({{UPat(Ops::ADD).named("n"), [&](const Captures& c) -> UOpPtr {
                           seen.push_back(c["n"]->src[0]->op == Ops::ADD ? "outer" : "inner");
                           return nullptr;
                         }}});
    UOpPtr a = var("a");
    graph_rewrite((a + 0) + 0, log);
    CHECK(seen == std::vector<std::string>{"inner", "outer"});
    seen.clear();
    graph_rewrite((a + 0) + 0, log, RewriteOptions{.bottom_up = true});
    CHECK(seen == std::vector<std::string>{"outer", "inner"});
    CHECK(graph_rewrite((a + 0) + 0, fold(), RewriteOptions{.bottom_up = true}) == a);
  }

  TEST_CASE("context object reaches the rules") {
    struct Renames {
      int count = 0;
    };
    PatternMatcher pm({{UPat(Ops::DEFINE_VAR).named("v"), [](const Captures& c) -> UOpPtr {
                          c.ctx<Renames>().count++;
                          const auto& v = std::get<VarArg>(c["v"]->arg);
                          if (v.name.rfind("new_", 0) == 0) return nullptr;
                          return UOp::variable("new_" + v.name, v.min, v.max);
                        }}});
    Renames ctx;
    UOpPtr out = graph_rewrite(var("a") + var("b"), pm, ctx);
    CHECK(out == UOp::variable("new_a", 0, 100) + UOp::variable("new_b", 0, 100));
    CHECK(ctx.count == 4); // a, b, then new_a and new_b reach their fixed point
  }

  TEST_CASE("a rule that never stops producing new nodes raises RewriteError naming the node") {
    PatternMatcher grow({{UPat::cvar("c"), [](const Captures& c) {
                            return c["c"]->const_like(c["c"]->ivmin() + 1);
                          }}});
    UOpPtr e = var("a") + 5;
    CHECK_THROWS_WITH_AS(
        graph_rewrite(e, grow, RewriteOptions{.max_rewrites_per_node = 50}),
        doctest::Contains("did not reach a fixed point: UOp(Ops.CONST, index, arg="), RewriteError);
  }

  TEST_CASE("rules that cycle raise RewriteError") {
    PatternMatcher cycle({
        {UPat::var("x") * 2, [](const Captures& c) { return c["x"] + c["x"]; }},
        {UPat::var("x") + UPat::var("x"), [](const Captures& c) { return c["x"] * 2; }},
    });
    CHECK_THROWS_WITH_AS(graph_rewrite(var("a") * 2, cycle), doctest::Contains("fixed point"),
                         RewriteError);
    CHECK_THROWS_WITH_AS(graph_rewrite(var("a") * 2, cycle, RewriteOptions{.bottom_up = true}),
                         doctest::Contains("fixed point"), RewriteError);
  }

  TEST_CASE("a rule's claim of a final result is taken only by the pure table it was made for") {
    // x*2 -> x+0 claims to be final, falsely: the table's x+0 rule rewrites it.
    const PatternMatcher claims(
        {{UPat::var("x") * 2, [](const Captures& c) { return c["x"] + 0; }, Rule::Final{}},
         {UPat::var("x") + 0, [](const Captures& c) { return c["x"]; }}});
    const PatternMatcher trusting = claims.as_pure(PatternMatcher::FinalResults::Trusted);
    UOpPtr a = var("a");
    CHECK(trusting.trusts_final_results());
    // Taken at its word, the claimed result is left as it is.
    CHECK(graph_rewrite(a * 2, trusting) == a + 0);
    // Checked, the claim fails with the rule's name and what its result turned into.
    {
      Context check{{"REWRITE_CHECK_FINAL", 1}};
      CHECK_THROWS_WITH_AS(graph_rewrite(var("b") * 2, trusting),
                           doctest::Contains("claims its result final"), RewriteError);
    }
    // Every other way the claim is ignored and the rewrite reaches the fixed point: a table
    // that does not trust it, a table joined with another, a context (not pure), bottom-up.
    UOpPtr c = var("c");
    CHECK(graph_rewrite(c * 2, claims.as_pure()) == c);
    CHECK(graph_rewrite(c * 2, claims) == c);
    const PatternMatcher joined = trusting + PatternMatcher({});
    CHECK_FALSE(joined.trusts_final_results());
    CHECK(graph_rewrite(c * 2, joined.as_pure()) == c);
    int ctx = 0;
    CHECK(graph_rewrite(var("d") * 2, trusting, ctx) == var("d"));
    CHECK(graph_rewrite(var("e") * 2, trusting, RewriteOptions{.bottom_up = true}) == var("e"));
  }

  TEST_CASE("a rule returning a node of another dtype raises SpecError naming both") {
    PatternMatcher bad(
        {{UPat::var("x") + 0, [](const Captures& c) { return c["x"]->cast(dtypes::float32); }}});
    UOpPtr e = UOp::variable("a", 0, 9, dtypes::int32) + 0;
    CHECK_THROWS_WITH_AS(graph_rewrite(e, bad),
                         doctest::Contains("(dtype int32) into UOp(Ops.CAST, float32"), SpecError);
    CHECK(graph_rewrite(e, bad, RewriteOptions{.allow_dtype_change = true})->dtype ==
          dtypes::float32);
  }
}

TEST_SUITE("ir.stress") {
  TEST_CASE("threads rewriting one shared graph at once each get the whole result") {
    // They contend for the same nodes' memo slots: each node is kept by one rewrite in the
    // node and by the others in their maps, and every thread must still see every node.
    UOpPtr a = var("a");
    std::vector<UOpPtr> roots, want;
    for (int i = 0; i < 3000; ++i) {
      UOpPtr v = UOp::variable("t" + std::to_string(i % 50), 0, 9);
      roots.push_back(((v + 0) * 1 + i % 7) + 1);
      want.push_back(v + (i % 7 + 1));
    }
    const UOpPtr g = UOp::sink(roots), expect = UOp::sink(want);
    for (int ok : runs_on_threads(20, [&] { return graph_rewrite(g, fold()) == expect; }))
      CHECK(ok == 20);
    CHECK(slots_taken(g) == 0);
  }

  TEST_CASE("threads simplifying one shared graph match rebuilt nodes detached and agree") {
    // symbolic() is pure: each thread matches its rebuilt nodes before interning them, and
    // threads entering equal nodes at once race in enlist (the one that comes second gets
    // the first one's node).
    std::vector<UOpPtr> vars, roots;
    for (int i = 0; i < 6; ++i) vars.push_back(UOp::variable("s" + std::to_string(i), 0, 20));
    for (int i = 0; i < 2000; ++i) {
      const UOpPtr &v = vars[static_cast<size_t>(i % 6)], &w = vars[static_cast<size_t>(i * 7 % 6)];
      roots.push_back((((v + 0) * (i % 4 + 1) + w) + i % 9) / (i % 3 + 1) +
                      ((w + 2) - 2) % (i % 5 + 2));
    }
    const UOpPtr g = UOp::sink(roots);
    int ctx = 0; // a context turns purity off: the plain path gives the reference
    const UOpPtr expect = graph_rewrite(g, symbolic(), ctx);
    CHECK(expect != g);
    for (int ok : runs_on_threads(10, [&] { return graph_rewrite(g, symbolic()) == expect; }))
      CHECK(ok == 10);
    CHECK(slots_taken(g) == 0);
  }

  TEST_CASE("a chain of 1,000,000 nodes rewrites without touching the stack") {
    UOpPtr a = var("a");
    UOpPtr x = a;
    for (int i = 0; i < 1000000; ++i) x = x + 1;
    CHECK(graph_rewrite(x, fold()) == a + 1000000);
    PatternMatcher none({});
    CHECK(graph_rewrite(x, none) == x);
    // Bottom-up peels the chain from the root: one node rewritten 200k times in a row.
    UOpPtr y = a;
    for (int i = 0; i < 200000; ++i) y = y + 1;
    CHECK(graph_rewrite(y, fold(), RewriteOptions{.bottom_up = true}) == a + 200000);
  }
}
