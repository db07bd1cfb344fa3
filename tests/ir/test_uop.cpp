#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/node_set.hpp"
#include "tg/ir/uop.hpp"

using namespace tg;

namespace {

// Four threads build x*i + i%7 for i < 20000 over one variable named `var` at once, each
// keeping every third node (most die at once): every thread must get the same nodes.
void check_one_node_per_content_from_threads(const char* var) {
  constexpr int kThreads = 4, kN = 20000;
  std::vector<std::vector<UOpPtr>> got(kThreads);
  std::vector<std::thread> ts;
  for (int t = 0; t < kThreads; ++t)
    ts.emplace_back([&, t] {
      UOpPtr x = UOp::variable(var, 0, 1000);
      for (int i = 0; i < kN; ++i) {
        UOpPtr e = x * int64_t{i} + int64_t{i % 7};
        if (i % 3 == 0) got[t].push_back(e);
      }
    });
  for (auto& t : ts) t.join();
  for (int t = 1; t < kThreads; ++t) {
    REQUIRE(got[t].size() == got[0].size());
    size_t same = 0;
    for (size_t i = 0; i < got[0].size(); ++i) same += got[t][i] == got[0][i];
    CHECK(same == got[0].size());
  }
}

} // namespace

TEST_SUITE("ir.uop") {
  TEST_CASE("building the same node twice gives the same node") {
    UOpPtr a = UOp::variable("a", 0, 10);
    UOpPtr x = a + 3, y = a + 3;
    CHECK(x == y);
    CHECK(x.get() == y.get());
    CHECK(a + 4 != x);
    CHECK((a * 3) != x);
    CHECK(UOp::const_(dtypes::int32, int64_t{3}) != UOp::const_(dtypes::int64, int64_t{3}));
    // NaN constants intern (bitwise arg comparison), so identity still holds.
    UOpPtr n1 = UOp::const_(dtypes::float32, std::nan("")),
           n2 = UOp::const_(dtypes::float32, std::nan(""));
    CHECK(n1 == n2);
    // -0.0 and 0.0 are different constants.
    CHECK(UOp::const_(dtypes::float32, 0.0) != UOp::const_(dtypes::float32, -0.0));
  }

  TEST_CASE("args of every kind take part in identity") {
    UOpPtr c = UOp::const_(dtypes::index, int64_t{8});
    CHECK(UOp::range(c, 0) == UOp::range(c, 0));
    CHECK(UOp::range(c, 0) != UOp::range(c, 1));
    CHECK(UOp::range(c, 0, AxisType::Loop) != UOp::range(c, 0, AxisType::Reduce));
    CHECK(UOp::variable("a", 0, 10) != UOp::variable("a", 0, 11));
    CHECK(UOp::variable("a", 0, 10) != UOp::variable("b", 0, 10));
  }

  TEST_CASE("constants are converted to their dtype") {
    CHECK(std::get<int64_t>(UOp::const_(dtypes::int8, int64_t{300})->arg) == 44);
    CHECK(std::get<int64_t>(UOp::const_(dtypes::uint8, int64_t{-1})->arg) == 255);
    CHECK(std::get<bool>(UOp::const_(dtypes::bool_, int64_t{7})->arg) == true);
    CHECK(std::get<double>(UOp::const_(dtypes::float32, 0.1)->arg) == static_cast<double>(0.1f));
    CHECK(std::get<double>(UOp::const_(dtypes::float16, 65520.0)->arg) == INFINITY);
    CHECK(UOp::const_(dtypes::int32, int64_t{5})->is_const_value(5));
    CHECK(as_int(UOp::const_(dtypes::int32, 2.9)->const_value()) == 2);
  }

  TEST_CASE("int_const is const_ for integers, without the conversion where none is needed") {
    // Kept small constants, other values, a value its dtype cannot hold, a float dtype and
    // uint64's high values (held as int64 bits).
    for (const auto& [dt, v] : std::vector<std::pair<DType, int64_t>>{{dtypes::index, 7},
                                                                      {dtypes::int32, -64},
                                                                      {dtypes::index, 1 << 20},
                                                                      {dtypes::int32, 100000},
                                                                      {dtypes::int8, 300},
                                                                      {dtypes::uint8, -1},
                                                                      {dtypes::float32, 3},
                                                                      {dtypes::uint64, -1}}) {
      CAPTURE(dt.name());
      CAPTURE(v);
      CHECK(UOp::int_const(dt, v) == UOp::const_(dt, v));
    }
    CHECK(std::get<int64_t>(UOp::int_const(dtypes::int8, 300)->arg) == 44);
  }

  TEST_CASE("expression builders follow tinygrad's dtype rules") {
    UOpPtr a = UOp::variable("a", 0, 10, dtypes::int32);
    CHECK((a + 1)->dtype == dtypes::int32);
    CHECK(a->lt(a + 1)->dtype == dtypes::bool_);
    UOpPtr f = UOp::const_(dtypes::float32, 1.5);
    CHECK(a->lt(a)->where(f, f)->dtype == dtypes::float32);
    CHECK((a / 2)->op == Ops::IDIV);
    CHECK((f / f)->op == Ops::FDIV);
    CHECK((a % 2)->op == Ops::MOD);
    CHECK((-a)->op == Ops::NEG);
    CHECK(a->cast(dtypes::float32)->op == Ops::CAST);
    CHECK(a->cast(dtypes::int32) == a);
    CHECK((a + 1)->replace_src({a, a}) == a + a);
  }

  TEST_CASE("vmin and vmax are computed with the node") {
    UOpPtr a = UOp::variable("a", 2, 10);
    CHECK(a->ivmin() == 2);
    CHECK(a->ivmax() == 10);
    CHECK((a * 3 + 1)->ivmax() == 31);
    CHECK((a * -1)->ivmin() == -10);
    UOpPtr r = UOp::range(UOp::const_(dtypes::index, 16), 0);
    CHECK(r->ivmin() == 0);
    CHECK(r->ivmax() == 15);
    CHECK((r % 4)->ivmax() == 3);
    CHECK((r / 4)->ivmax() == 3);
  }

  TEST_CASE("vmin and vmax of a division at the edge of int64") {
    // INT64_MIN / -1 overflows 64 bits (a trap on x86): the bounds are computed wider, and the
    // quotient 2^63 leaves int64, so the node may wrap and gets the full range.
    UOpPtr x = UOp::variable("x", INT64_MIN, 0, dtypes::int64);
    UOpPtr m1 = UOp::variable("m", -1, -1, dtypes::int64);
    UOpPtr q = UOp::make(Ops::IDIV, dtypes::int64, {x, m1});
    CHECK(q->ivmin() == INT64_MIN);
    CHECK(q->ivmax() == INT64_MAX);
    UOpPtr two = UOp::variable("t", 2, 2, dtypes::int64);
    UOpPtr h = UOp::make(Ops::IDIV, dtypes::int64, {x, two});
    CHECK(h->ivmin() == INT64_MIN / 2);
    CHECK(h->ivmax() == 0);
    UOpPtr r = UOp::make(Ops::MOD, dtypes::int64, {x, m1});
    CHECK(r->ivmin() == 0);
    CHECK(r->ivmax() == 0);
  }

  TEST_CASE("vmin and vmax of sums and products that leave their dtype or int64") {
    const auto var = [](const char* name, int64_t lo, int64_t hi, DType dt) {
      return UOp::variable(name, lo, hi, dt);
    };
    const auto full = [](const UOpPtr& u, int64_t lo, int64_t hi) {
      return u->ivmin() == lo && u->ivmax() == hi;
    };
    // int64 bounds that overflow: computed wider, and the node may wrap (the full range).
    const UOpPtr big = var("big", 0, INT64_MAX, dtypes::int64);
    CHECK(full(big + big, INT64_MIN, INT64_MAX));
    CHECK(full(big * big, INT64_MIN, INT64_MAX));
    CHECK(full(var("neg", INT64_MIN, -1, dtypes::int64) - big, INT64_MIN, INT64_MAX));
    // Within int64 but outside int32: the int32 node's full range.
    const UOpPtr i32 = var("w", -70000, 70000, dtypes::int32);
    CHECK(full(i32 * i32, INT32_MIN, INT32_MAX));
    CHECK(full(i32 * 2, -140000, 140000));
    // Products take the extreme corners; MAX the larger bounds; SUB crosses them.
    const UOpPtr a = var("a", -3, 5, dtypes::index), b = var("b", -7, 2, dtypes::index);
    CHECK(full(a * b, -35, 21));
    CHECK(full(a->maximum(b), -3, 5));
    CHECK(full(a - b, -5, 12));
    // uint64 bounds are capped at INT64_MAX, and a sum of them is still a uint64 range.
    const UOpPtr u = var("u", 0, 10, dtypes::uint64);
    CHECK(full(u + u, 0, 20));
  }

  TEST_CASE("NodeSet and NodeMap keep every node through growth") {
    std::vector<UOpPtr> nodes;
    for (int i = 0; i < 1000; ++i) nodes.push_back(UOp::variable("v" + std::to_string(i), 0, i));
    NodeSet set;
    NodeMap<std::vector<int>> map(4); // grows many times
    for (int i = 0; i < 1000; ++i) {
      CHECK(set.insert(nodes[i].get()));
      map[nodes[i].get()].push_back(i);
    }
    CHECK(set.size() == 1000);
    CHECK(map.size() == 1000);
    for (int i = 0; i < 1000; ++i) {
      CHECK_FALSE(set.insert(nodes[i].get()));
      CHECK(set.contains(nodes[i].get()));
      const std::vector<int>* v = map.find(nodes[i].get());
      REQUIRE(v != nullptr);
      CHECK(*v == std::vector<int>{i});
    }
    UOpPtr other = UOp::variable("other", 0, 1);
    CHECK_FALSE(set.contains(other.get()));
    CHECK(map.find(other.get()) == nullptr);
  }

  TEST_CASE("toposort puts sources before users, each node once") {
    UOpPtr a = UOp::variable("a", 0, 10), b = UOp::variable("b", 0, 10);
    UOpPtr s = a + b, m = s * s, root = m + a;
    const auto& t = root->toposort();
    CHECK(t.size() == 5); // a, b, s, m, root
    CHECK(t.back() == root.get());
    auto pos = [&](const UOp* u) { return std::find(t.begin(), t.end(), u) - t.begin(); };
    CHECK(pos(a.get()) < pos(s.get()));
    CHECK(pos(s.get()) < pos(m.get()));
    CHECK(&root->toposort() == &t); // cached
    const auto& slice = root->backward_slice();
    CHECK(slice.count(a.get()) == 1);
    CHECK(slice.count(root.get()) == 0);
    CHECK(slice.size() == t.size() - 1);
  }

  TEST_CASE("shapes of tensor-level nodes") {
    UOpPtr buf = UOp::make(Ops::BUFFER, dtypes::float32, {}, int64_t{24});
    CHECK(*buf->shape() == Shape{24});
    UOpPtr r = UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, Shape{2, 3, 4});
    CHECK(*r->shape() == Shape{2, 3, 4});
    UOpPtr p = UOp::make(Ops::PERMUTE, dtypes::float32, {r}, Shape{2, 0, 1});
    CHECK(*p->shape() == Shape{4, 2, 3});
    UOpPtr pad = UOp::make(Ops::PAD, dtypes::float32, {p}, PadArg{{1, 1}, {0, 0}, {0, 2}});
    CHECK(*pad->shape() == Shape{6, 2, 5});
    UOpPtr sh = UOp::make(Ops::SHRINK, dtypes::float32, {pad}, PadArg{{0, 3}, {1, 2}, {0, 5}});
    CHECK(*sh->shape() == Shape{3, 1, 5});
    UOpPtr ex = UOp::make(Ops::EXPAND, dtypes::float32, {sh}, Shape{3, 7, 5});
    CHECK(*ex->shape() == Shape{3, 7, 5});
    CHECK(*(ex + ex)->shape() == Shape{3, 7, 5});
    UOpPtr red = UOp::make(Ops::REDUCE, dtypes::float32, {ex}, ReduceArg{Ops::ADD, {1}});
    CHECK(*red->shape() == Shape{3, 1, 5});
    CHECK_FALSE(UOp::variable("a", 0, 1)->shape().has_value());
  }

  TEST_CASE("bad movement ops and mismatched shapes raise errors naming the shapes") {
    UOpPtr buf = UOp::make(Ops::BUFFER, dtypes::float32, {}, int64_t{24});
    CHECK_THROWS_WITH_AS(UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, Shape{5, 5}),
                         doctest::Contains("cannot reshape (24,) (24 elements) to (5, 5)"), Error);
    UOpPtr r = UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, Shape{4, 6});
    CHECK_THROWS_WITH_AS(UOp::make(Ops::EXPAND, dtypes::float32, {r}, Shape{8, 6}),
                         doctest::Contains("cannot expand (4, 6) to (8, 6)"), Error);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::PERMUTE, dtypes::float32, {r}, Shape{0, 0}),
                         doctest::Contains("is not a permutation"), Error);
    CHECK_THROWS_WITH_AS(UOp::make(Ops::SHRINK, dtypes::float32, {r}, PadArg{{0, 5}, {0, 6}}),
                         doctest::Contains("outside 0..4"), Error);
    UOpPtr t = UOp::make(Ops::RESHAPE, dtypes::float32, {buf}, Shape{6, 4});
    CHECK_THROWS_WITH_AS(r + t, doctest::Contains("different shapes (4, 6) and (6, 4)"), Error);
    CHECK_THROWS_AS(UOp::make(Ops::ADD, dtypes::int32, {nullptr, nullptr}), Error);
  }

  TEST_CASE("nodes are freed when the last reference goes") {
    size_t before = UOp::live_count();
    {
      UOpPtr a = UOp::variable("freed_a", 0, 10);
      UOpPtr e = (a + 1) * 2;
      CHECK(UOp::live_count() > before);
    }
    CHECK(UOp::live_count() == before);
  }

  TEST_CASE("a graph built again after the last one went takes the same places in memory") {
    // Freed blocks are handed back last freed first, and a node lets go of its sources first
    // to last: the same graph built again gets its nodes where the first had them, in the
    // order it builds them, so a walk over it runs through memory as over a fresh graph.
#if defined(__SANITIZE_ADDRESS__)
    return; // nodes come from operator new under AddressSanitizer
#endif
    const auto build = [] {
      const UOpPtr x = UOp::variable("layout_x", 0, 100), y = UOp::variable("layout_y", 0, 100);
      std::vector<UOpPtr> roots;
      for (int64_t i = 0; i < 300; ++i) { // sources first, left to right, as named here
        const UOpPtr xc = x * (i + 1000), yc = y * (i + 2000);
        const UOpPtr sum = xc + yc, diff = x - y;
        const UOpPtr scaled = diff * (i + 3000);
        roots.push_back(sum + scaled);
      }
      return UOp::sink(std::move(roots));
    };
    std::vector<uintptr_t> first; // addresses only: the nodes are gone
    {
      const UOpPtr g = build();
      for (const UOp* u : g->toposort()) first.push_back(reinterpret_cast<uintptr_t>(u));
    }
    const UOpPtr again = build();
    const std::vector<const UOp*>& second = again->toposort();
    REQUIRE(second.size() == first.size());
    size_t same = 0;
    for (size_t i = 0; i < first.size(); ++i)
      same += reinterpret_cast<uintptr_t>(second[i]) == first[i];
    CHECK(same >= first.size() * 9 / 10);
  }

  TEST_CASE("a detached node is outside the table until enlist enters it or finds its twin") {
    const size_t before = UOp::live_count();
    {
      UOpPtr a = UOp::variable("detached_a", 0, 10), one = a->const_like(int64_t{1});
      const std::array<const UOp*, 2> src{a.get(), one.get()};
      UOpPtr d = UOp::make_detached(Ops::ADD, a->dtype, src);
      CHECK_FALSE(d->listed());
      CHECK(d->ivmin() == 1); // built like any node: bounds, hash
      CHECK(d->ivmax() == 11);
      UOpPtr m = a + 1; // not found in the table: a node of its own
      CHECK(m != d);
      CHECK(m->listed());
      CHECK(m->hash() == d->hash());
      CHECK(UOp::enlist(d) == m); // the twin wins; d goes with its last reference
      CHECK_FALSE(d->listed());
      m = nullptr;
      d = nullptr;
      // With no twin, enlist enters the node itself: building it again finds it.
      UOpPtr e = UOp::make_detached(Ops::ADD, a->dtype, src);
      const UOp* raw = e.get();
      UOpPtr entered = UOp::enlist(e);
      CHECK(entered.get() == raw);
      CHECK(entered->listed());
      CHECK((a + 1).get() == raw);
      CHECK_THROWS_WITH_AS(UOp::enlist(entered), doctest::Contains("detached node"), Error);
      // A detached node dropped without enlist leaves nothing behind.
      UOpPtr lone = UOp::make_detached(Ops::MUL, a->dtype, src);
      CHECK(lone->use_count() == 1);
      const std::array<const UOp*, 2> bad{a.get(), nullptr};
      CHECK_THROWS_WITH_AS(UOp::make_detached(Ops::ADD, a->dtype, bad),
                           doctest::Contains("source 1 is null"), SpecError);
    }
    CHECK(UOp::live_count() == before);
  }

  TEST_CASE("a node's sources read like a vector and are stored in the node") {
    UOpPtr a = UOp::variable("srcs_a", 0, 10), b = UOp::variable("srcs_b", 0, 10);
    UOpPtr c = a->lt(b), w = c->where(a, b);
    REQUIRE(w->src.size() == 3);
    CHECK_FALSE(w->src.empty());
    CHECK(w->src.front()->op == Ops::CMPLT);
    CHECK(w->src.back() == b);
    CHECK(w->src[1] == a);
    CHECK(w->src == std::vector<UOpPtr>{c, a, b});
    CHECK_FALSE(w->src == std::vector<UOpPtr>{c, b, a});
    std::vector<UOpPtr> copy(w->src);
    CHECK(copy.size() == 3);
    std::vector<const UOp*> reversed;
    for (auto it = w->src.rbegin(); it != w->src.rend(); ++it) reversed.push_back(it->get());
    CHECK(reversed == std::vector<const UOp*>{b.get(), a.get(), c.get()});
    // The array lies right after the node, in the node's block.
    CHECK(reinterpret_cast<const char*>(w->src.data()) ==
          reinterpret_cast<const char*>(w.get()) + sizeof(UOp));
    CHECK(a->src.empty());
    // A node with more sources than the pooled block sizes hold.
    std::vector<UOpPtr> many;
    for (int i = 0; i < 100; ++i) many.push_back(a + int64_t{i});
    UOpPtr sink = UOp::sink(many);
    CHECK(sink->src.size() == 100);
    CHECK(sink->src[99] == a + int64_t{99});
  }

  TEST_CASE("nodes built on a thread that exits are freed on another, and the reverse") {
    const size_t before = UOp::live_count();
    {
      UOpPtr x = UOp::variable("xthread", 0, 1000);
      std::vector<UOpPtr> from_thread;
      std::thread([&] {
        for (int64_t i = 0; i < 5000; ++i) from_thread.push_back(x * (i + 2) + i);
      }).join(); // the thread's free lists go to the shared ones as it exits
      std::vector<UOpPtr> from_main;
      for (int64_t i = 0; i < 5000; ++i) from_main.push_back(x * (i + 2) - i);
      std::thread([&] { from_main.clear(); }).join(); // freed by a thread that built none
      from_thread.clear();
      // Blocks freed on either thread are used again.
      for (int64_t i = 0; i < 5000; ++i) from_main.push_back(x * (i + 2) + (i + 1));
      CHECK(from_main[4999] == x * int64_t{5001} + int64_t{5000});
    }
    CHECK(UOp::live_count() == before);
  }

  // A table of more than about 66k nodes (64 shards of 4096 slots) takes new nodes into a small
  // array first and moves them to the large one in batches, looked up through a filter.
  TEST_CASE("a large table finds every node, whether it was kept, moved or dropped") {
    const size_t before = UOp::live_count();
    {
      const UOpPtr x = UOp::variable("large_x", 0, 1 << 20);
      constexpr int64_t kKept = 150000; // 300k nodes: an ADD and a CONST each
      std::vector<UOpPtr> kept;
      size_t found_while_growing = 0; // each node looked up just after it was entered, and later
      for (int64_t i = 0; i < kKept; ++i) {
        kept.push_back(x + i);
        if (i == 0) continue;
        found_while_growing += (x + (i - 1)).get() == kept[i - 1].get();
        found_while_growing += (x + i / 2).get() == kept[i / 2].get();
      }
      CHECK(found_while_growing == 2 * (kKept - 1));
      size_t found = 0;
      for (int64_t i = 0; i < kKept; ++i) found += (x + i).get() == kept[i].get();
      CHECK(found == kKept);
      // Nodes that come and go among them: built twice while alive, the same node.
      size_t twins = 0;
      for (int64_t i = 0; i < kKept; ++i) {
        const UOpPtr a = x * (i + 7), b = x * (i + 7);
        twins += a.get() == b.get();
      }
      CHECK(twins == kKept);
      // Half dropped: the other half is still found; a dropped node built again is one node.
      for (int64_t i = 0; i < kKept; i += 2) kept[i] = nullptr;
      size_t kept_found = 0, rebuilt_once = 0;
      for (int64_t i = 0; i < kKept; ++i) {
        if (i % 2 == 1) {
          kept_found += (x + i).get() == kept[i].get();
        } else {
          kept[i] = x + i;
          rebuilt_once += (x + i).get() == kept[i].get();
        }
      }
      CHECK(kept_found == kKept / 2);
      CHECK(rebuilt_once == kKept / 2);
      CHECK(UOp::live_count() >= before + kKept); // the ADDs at least (small constants exist)
    }
    CHECK(UOp::live_count() == before);
  }

  TEST_CASE("interning from many threads into a large table gives one node per content") {
    const UOpPtr y = UOp::variable("mt_large", 0, 1 << 20);
    std::vector<UOpPtr> ballast; // keeps the table large
    for (int64_t i = 0; i < 100000; ++i) ballast.push_back(y + i);
    check_one_node_per_content_from_threads("mt2");
  }

  TEST_CASE("interning from many threads gives one node per content") {
    check_one_node_per_content_from_threads("mt");
  }
}

TEST_SUITE("ir.stress") {
  TEST_CASE("10 million nodes created and dropped: the live count returns to its start") {
    size_t before = UOp::live_count();
    UOpPtr x = UOp::variable("s", 0, 1 << 20);
    size_t peak = 0;
    for (int round = 0; round < 10; ++round) {
      std::vector<UOpPtr> keep;
      keep.reserve(500000);
      for (int64_t i = 0; i < 1000000; ++i) {
        UOpPtr n = x + (round * 1000000 + i); // a new CONST and a new ADD: 2 nodes
        if (i % 2 == 0) keep.push_back(std::move(n));
      }
      peak = std::max(peak, UOp::live_count());
    }
    CHECK(peak > before + 1000000);
    x = nullptr;
    CHECK(UOp::live_count() == before);
  }

  TEST_CASE("dropping a 1M-node chain does not overflow the stack") {
    size_t before = UOp::live_count();
    {
      UOpPtr x = UOp::variable("c", 0, 10);
      for (int i = 0; i < 1000000; ++i) x = x * 1 + x->const_like(int64_t{i}); // deep and wide
    }
    CHECK(UOp::live_count() == before);
  }
}
