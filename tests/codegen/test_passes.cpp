// The passes one by one: names, the structure of the flat list, and malformed ASTs.
#include <doctest/doctest.h>

#include <algorithm>
#include <unordered_map>

#include "codegen_test_util.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"
#include "tg/ir/pattern_matcher.hpp"
#include "tg/kernel_estimates.hpp"

using namespace tg;
using namespace tg::codegen_test;

namespace {
// Position of each node in the list, and a check that sources come first and loops nest.
std::unordered_map<const UOp*, size_t> check_list(const std::vector<UOpPtr>& uops) {
  std::unordered_map<const UOp*, size_t> pos;
  std::vector<const UOp*> open;
  for (size_t i = 0; i < uops.size(); ++i) {
    const UOp* u = uops[i].get();
    for (const auto& s : u->src) REQUIRE_MESSAGE(pos.count(s.get()), u->str());
    if (u->op == Ops::RANGE) open.push_back(u);
    if (u->op == Ops::END) {
      REQUIRE(!open.empty());
      REQUIRE(open.back() == u->src[0].get());
      open.pop_back();
    }
    CHECK(u->op != Ops::SINK);
    pos[u] = i;
  }
  CHECK(open.empty());
  return pos;
}

const UOp* find(const std::vector<UOpPtr>& uops, Ops op, int64_t range_id) {
  for (const auto& u : uops)
    if (u->op == op) {
      const UOp* r = op == Ops::END ? u->src[0].get() : u.get();
      if (std::get<RangeArg>(r->arg).id == range_id) return u.get();
    }
  return nullptr;
}

RendererCaps one_dim_caps() {
  RendererCaps c;
  c.global_max = {1024, 0, 0};
  return c;
}
} // namespace

TEST_SUITE("codegen.names") {
  TEST_CASE("E for elementwise, r with a reduce, loop sizes with reduce sizes last") {
    auto out = buf(0, dtypes::float32, 32), x = buf(1, dtypes::float32, 32);
    auto i = rng(4, 0), j = rng(8, 1), k = rng(8, 2, AxisType::Reduce);
    CHECK(kernel_name(UOp::sink({st(out, i * 8 + j, ld(x, i * 8 + j))})) == "E_4_8");
    CHECK(kernel_name(UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * 8 + k), {k}))})) == "r_4_8");
    auto k16 = rng(16, 0, AxisType::Reduce), i32 = rng(32, 5);
    CHECK(kernel_name(UOp::sink({st(out, i32, reduce(Ops::MAX, ld(x, k16), {k16}))})) == "r_32_16");
    CHECK(kernel_name(UOp::sink({st(out, i, ld(x, i)), st(x, i, ld(out, i))})) == "E2_4");
    auto v = UOp::variable("n", 1, 32);
    CHECK(kernel_name(UOp::sink({st(out, UOp::range(v, 0), ld(x, idx_const(0)))})) == "E_n");
  }
}

TEST_SUITE("codegen.linearize") {
  TEST_CASE("defines and constants first, then SPECIALs, loops nested with ENDs") {
    auto out = buf(0, dtypes::float32, 4), x = buf(1, dtypes::float32, 32);
    auto i = rng(4, 0), k = rng(8, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * 8 + k), {k}))});
    auto lk = lower_kernel_with_opts(ast, target_caps(), {});
    auto pos = check_list(lk.uops);
    size_t first_other = lk.uops.size();
    for (size_t p = 0; p < lk.uops.size(); ++p) {
      const Ops op = lk.uops[p]->op;
      const bool head = op == Ops::PARAM || op == Ops::DEFINE_REG || op == Ops::CONST ||
                        op == Ops::SPECIAL || op == Ops::DEFINE_VAR;
      if (!head)
        first_other = std::min(first_other, p);
      else
        CHECK(p < first_other);
    }
    CHECK(lk.uops[0]->op == Ops::PARAM);
    CHECK(std::get<int64_t>(lk.uops[0]->arg) == 0);
    REQUIRE(lk.params.size() == 2);
    CHECK(lk.params[1].slot == 1);
    // The accumulator is initialized before its loop and read after it through AFTER.
    const UOp* r = find(lk.uops, Ops::RANGE, 1);
    const UOp* e = find(lk.uops, Ops::END, 1);
    REQUIRE(r);
    REQUIRE(e);
    size_t stores_before = 0, after_loads = 0;
    for (const auto& u : lk.uops) {
      if (u->op == Ops::STORE && u->src[0]->src[0]->dtype.addrspace == AddrSpace::Reg &&
          pos[u.get()] < pos[r])
        ++stores_before;
      if (u->op == Ops::LOAD && u->src[0]->src[0]->op == Ops::AFTER && pos[u.get()] > pos[e])
        ++after_loads;
    }
    CHECK(stores_before == 1);
    CHECK(after_loads == 1);
  }

  TEST_CASE("a reduce that does not depend on a loop is hoisted out of it") {
    auto out = buf(0, dtypes::float32, 64), x = buf(1, dtypes::float32, 64);
    auto i = rng(8, 0), j = rng(8, 1), mx = rng(8, 2, AxisType::Reduce),
         s = rng(8, 3, AxisType::Reduce);
    // max over mx depends on i only; the sum over s on i (not on j) too.
    auto m = reduce(Ops::MAX, ld(x, i * 8 + mx), {mx});
    auto sum = reduce(Ops::ADD, ld(x, i * 8 + s) - m, {s});
    auto ast = UOp::sink({st(out, i * 8 + j, ld(x, i * 8 + j) / sum)});
    auto lk = lower_kernel_with_opts(ast, one_dim_caps(), {});
    CHECK(lk.global == std::array<int64_t, 3>{8, 1, 1});
    auto pos = check_list(lk.uops);
    const UOp* rj = find(lk.uops, Ops::RANGE, 1);
    const UOp* rm = find(lk.uops, Ops::RANGE, 2);
    const UOp* em = find(lk.uops, Ops::END, 2);
    const UOp* rs = find(lk.uops, Ops::RANGE, 3);
    const UOp* es = find(lk.uops, Ops::END, 3);
    REQUIRE((rj && rm && em && rs && es));
    CHECK(pos[em] < pos[rs]); // the max's loop ends before the sum's starts
    CHECK(pos[es] < pos[rj]); // both before the output loop over j
  }

  TEST_CASE("a value used in a loop and after it is listed before the loop") {
    auto out = buf(0, dtypes::float32, 4), x = buf(1, dtypes::float32, 32);
    // A Loop axis stays a RANGE, so the load below is still this node after lowering.
    auto i = rng(4, 0, AxisType::Loop), k = rng(8, 1, AxisType::Reduce);
    auto xi = ld(x, i);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * 8 + k) * xi, {k}) + xi)});
    auto lk = lower_kernel_with_opts(ast, target_caps(), {});
    auto pos = check_list(lk.uops);
    const UOp* r = find(lk.uops, Ops::RANGE, 1);
    REQUIRE(r);
    REQUIRE(pos.count(xi.get()));
    CHECK(pos[xi.get()] < pos[r]);
    CHECK(pos[find(lk.uops, Ops::RANGE, 0)] < pos[xi.get()]);
  }
}

TEST_SUITE("codegen.errors") {
  TEST_CASE("malformed kernel ASTs raise tg::Error naming the node") {
    auto out = buf(0, dtypes::float32, 4), x = buf(1, dtypes::float32, 4);
    auto i = rng(4, 0);
    auto bad_reduce = UOp::make(Ops::REDUCE, dtypes::float32, {ld(x, i)}, ReduceArg{Ops::ADD, {}});
    CHECK_THROWS_WITH_AS(lower_kernel(UOp::sink({st(out, i, bad_reduce)}), target_caps()),
                         doctest::Contains("Ops.REDUCE"), Error);
    // A STORE to a register, not to INDEX(PARAM, ...).
    auto reg = UOp::make(Ops::DEFINE_REG, dtypes::float32.ptr(1, AddrSpace::Reg), {}, int64_t{0});
    auto to_reg = UOp::make(Ops::STORE, dtypes::void_, {at(reg, idx_const(0)), ld(x, i)});
    CHECK_THROWS_WITH_AS(lower_kernel(UOp::sink({to_reg}), target_caps()),
                         doctest::Contains("Ops.STORE"), Error);
    auto direct = UOp::make(Ops::STORE, dtypes::void_, {out, ld(x, i)});
    CHECK_THROWS_WITH_AS(lower_kernel(UOp::sink({direct}), target_caps()),
                         doctest::Contains("INDEX(PARAM, idx)"), Error);
    CHECK_THROWS_WITH_AS(lower_kernel(UOp::sink({ld(x, i)}), target_caps()),
                         doctest::Contains("Ops.LOAD"), Error);
    CHECK_THROWS_WITH_AS(lower_kernel(st(out, i, ld(x, i)), target_caps()),
                         doctest::Contains("SINK"), Error);
    // (With SPEC=1 the spec refuses this node already when it is built, with the same words.)
    auto bad_op = [&] {
      auto red = UOp::make(Ops::REDUCE, dtypes::float32, {ld(x, i), rng(4, 1, AxisType::Reduce)},
                           ReduceArg{Ops::SUB, {}});
      return lower_kernel(UOp::sink({st(out, i, red)}), target_caps());
    };
    CHECK_THROWS_WITH_AS(bad_op(), doctest::Contains("ADD, MUL or MAX"), Error);
  }

  TEST_CASE("a RANGE reduced by two REDUCEs is refused") {
    auto out = buf(0, dtypes::float32, 4), x = buf(1, dtypes::float32, 16);
    auto i = rng(4, 0), k = rng(4, 1, AxisType::Reduce);
    auto a = reduce(Ops::ADD, ld(x, i * 4 + k), {k});
    auto b = reduce(Ops::MAX, ld(x, i * 4 + k), {k});
    CHECK_THROWS_WITH_AS(lower_kernel(UOp::sink({st(out, i, a + b)}), target_caps()),
                         doctest::Contains("Ops.RANGE"), Error);
  }
}

TEST_SUITE("codegen.pipeline") {
  TEST_CASE("a one-hot sum (an embedding lookup) becomes a gated gather, no vocabulary loop") {
    // out[t, h] = sum over r < V of where(ids[t] == r, table[r, h], 0), as Tensor indexing
    // builds it; and out2[t] = sum over r, h of where(ids[t] != r, 0, table[r, h]), a reduce
    // that keeps its h loop. Indices outside 0..V-1 select nothing: 0.
    const int64_t V = 50, H = 32, T = 8;
    auto out = buf(0, dtypes::float32, T * H), out2 = buf(1, dtypes::float32, T),
         ids = buf(2, dtypes::int32, T), table = buf(3, dtypes::float32, V * H);
    auto t = rng(T, 0), h = rng(H, 1), r = rng(V, 2, AxisType::Reduce);
    auto id = ld(ids, t), zero = UOp::const_(dtypes::float32, 0.0);
    auto row = id->eq(r->cast(dtypes::int32))->where(ld(table, r * H + h), zero);
    auto t2 = rng(T, 3), r2 = rng(V, 4, AxisType::Reduce), h2 = rng(H, 5, AxisType::Reduce);
    auto sum = ld(ids, t2)->ne(r2->cast(dtypes::int32))->where(zero, ld(table, r2 * H + h2));
    auto ast = UOp::sink({st(out, t * H + h, reduce(Ops::ADD, row, {r})),
                          st(out2, t2, reduce(Ops::ADD, sum, {r2, h2}))});
    const std::vector<int32_t> iv{3, 0, 49, 7, -1, 50, 7, 1000};
    std::vector<float> tv(V * H);
    for (size_t i = 0; i < tv.size(); ++i) tv[i] = static_cast<float>(i % 97) - 40.0f;
    for (const auto& renderer : renderers()) {
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(T * H), HostBuf::zeros<float>(T),
                                HostBuf::of(iv), HostBuf::of(tv)};
      const LoweredKernel k = run_ast(ast, renderer, bufs);
      for (const auto& u : k.uops)
        CHECK_MESSAGE(!(u->op == Ops::RANGE && u->src[0]->is_const_value(double(V))),
                      "a loop over the vocabulary is left: " << k.name);
      auto o = bufs[0].as<float>(), o2 = bufs[1].as<float>();
      for (int64_t i = 0; i < T; ++i) {
        const bool in = iv[i] >= 0 && iv[i] < V;
        float ref2 = 0;
        for (int64_t j = 0; j < H; ++j) {
          const float ref = in ? tv[iv[i] * H + j] : 0.0f;
          REQUIRE_MESSAGE(o[i * H + j] == ref, renderer << " t " << i << " h " << j);
          ref2 += ref;
        }
        REQUIRE_MESSAGE(o2[i] == doctest::Approx(ref2), renderer << " t " << i);
      }
    }
  }

  // A 1-D convolution over a padded view, as conv2d builds it: out[n, o] = sum over k < K of
  // where(0 <= o + k - P < W, x[n, o + k - P], 0) * w[k], the load gated by the same bound.
  struct PaddedConv {
    int64_t N = 4, W = 8, K = 5, P = 4, O = W + 2 * P - K + 1;
    UOpPtr ast;
    std::vector<float> xv, wv, ref;
    PaddedConv() {
      auto out = buf(0, dtypes::float32, N * O), x = buf(1, dtypes::float32, N * W),
           w = buf(2, dtypes::float32, K);
      auto n = rng(N, 0), o = rng(O, 1), k = rng(K, 2, AxisType::Reduce);
      auto pos = o + k - P;
      auto valid = idx_const(-1)->lt(pos)->alu(Ops::AND, {pos->lt(idx_const(W))});
      auto zero = UOp::const_(dtypes::float32, 0.0);
      auto xi = UOp::make(Ops::INDEX, x->dtype, {x, n * W + pos, valid});
      auto tap = valid->where(UOp::make(Ops::LOAD, dtypes::float32, {xi, zero}), zero);
      ast = UOp::sink({st(out, n * O + o, reduce(Ops::ADD, tap * ld(w, k), {k}))});
      for (int64_t i = 0; i < N * W; ++i) xv.push_back(static_cast<float>(i % 11) - 5.0f);
      for (int64_t i = 0; i < K; ++i) wv.push_back(0.5f * static_cast<float>(i) - 1.0f);
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < O; ++j) {
          float acc = 0;
          for (int64_t t = 0; t < K; ++t)
            if (j + t - P >= 0 && j + t - P < W) acc += xv[i * W + j + t - P] * wv[t];
          ref.push_back(acc);
        }
    }
    // Runs `k` and checks every output against the direct loop.
    void check(const LoweredKernel& k, const std::string& renderer) const {
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(N * O), HostBuf::of(xv), HostBuf::of(wv)};
      run_kernel(renderer, k, bufs);
      auto out = bufs[0].as<float>();
      for (int64_t i = 0; i < N * O; ++i)
        REQUIRE_MESSAGE(out[i] == doctest::Approx(ref[i]), renderer << " " << k.name << " " << i);
    }
  };

  bool has_gated_load(const LoweredKernel& k) {
    for (const auto& u : k.uops)
      if (u->op == Ops::INDEX && u->src.size() > 2) return true;
    return false;
  }

  TEST_CASE("a sum over a padded view loops over the taps inside the input only") {
    const PaddedConv c;
    for (const auto& renderer : renderers()) {
      const LoweredKernel k = lower_kernel_with_opts(c.ast, target_caps(), {});
      c.check(k, renderer);
      CHECK_MESSAGE(!has_gated_load(k), "the tap's gate is left in the loop");
      int bounded = 0;
      for (const auto& u : k.uops) bounded += u->op == Ops::RANGE && !u->src[0]->is_const();
      CHECK(bounded == 1);
      // The estimate counts the taps that run: a multiply and an add for each valid one.
      int64_t valid_taps = 0;
      for (int64_t j = 0; j < c.O; ++j)
        for (int64_t t = 0; t < c.K; ++t) valid_taps += j + t - c.P >= 0 && j + t - c.P < c.W;
      CHECK(estimate_kernel(k).ops == doctest::Approx(2.0 * double(c.N * valid_taps)));
    }
  }

  TEST_CASE("a padded view's gate stays where its bound would differ across a tile's lanes") {
    // The output axis upcast by 4 (its lanes need different taps) and the tap unrolled: no
    // Reduce loop is left to bound, and the gated loads give the same sums.
    const PaddedConv c;
    for (const auto& renderer : renderers()) {
      for (const auto& opts :
           std::vector<std::vector<Opt>>{{{OptOp::UPCAST, 1, 4}}, {{OptOp::UNROLL, 0, 0}}}) {
        const LoweredKernel k = lower_kernel_with_opts(c.ast, cpu_caps(), opts);
        c.check(k, renderer);
        CHECK(has_gated_load(k));
      }
    }
  }

  TEST_CASE("the back half is a table of named passes") {
    std::vector<std::string_view> names;
    for (const auto& p : codegen_passes()) names.push_back(p.name);
    CHECK(names == std::vector<std::string_view>{
                       "simplify", "load_collapse", "optimize", "reduce_bounds", "expand",
                       "promote_half_float", "transcendentals", "fast_idiv", "dot4",
                       "renderer_decompositions", "group_reduces", "lower_reduces",
                       "single_thread_wmma", "devectorize", "renderer_rules", "gpudims", "add_ends",
                       "linearize"});
  }

  // A copy of the table with one pass replaced.
  std::vector<Pass<KernelLowering>> with_pass(std::string_view name, void (*run)(KernelLowering&)) {
    std::vector<Pass<KernelLowering>> passes(codegen_passes().begin(), codegen_passes().end());
    for (auto& p : passes)
      if (p.name == name) p.run = run;
    return passes;
  }

  UOpPtr elementwise_ast() {
    auto out = buf(0, dtypes::float32, 64), x = buf(1, dtypes::float32, 64);
    auto i = rng(64, 0);
    return UOp::sink({st(out, i, ld(x, i) + UOp::const_(dtypes::float32, 1.0))});
  }

  TEST_CASE("SPEC=1 names the pass that built a bad node") {
    // devectorize, broken: it adds an ADD with one source to the kernel.
    auto broken = with_pass("devectorize", [](KernelLowering& c) {
      UOpPtr bad = UOp::make(Ops::ADD, dtypes::float32, {UOp::const_(dtypes::float32, 1.0)});
      c.sink = UOp::sink({c.sink->src[0], bad});
    });
    const UOpPtr ast = elementwise_ast();
    tg::Context spec{{"SPEC", 1}};
    CHECK_THROWS_WITH_AS(lower_kernel_with_passes(ast, one_dim_caps(), broken),
                         doctest::Contains("pass codegen/devectorize produced a node that breaks "
                                           "the spec: spec: UOp(Ops.ADD"),
                         SpecError);
    // Unbroken, the same kernel lowers under SPEC=1.
    CHECK(!lower_kernel(ast, one_dim_caps()).uops.empty());
  }

  TEST_CASE("SPEC=1 checks each pass's result, also nodes built before the check was on") {
    static UOpPtr premade; // a malformed node built while SPEC was off
    premade = UOp::make(Ops::ADD, dtypes::int32, {UOp::const_(dtypes::int32, 1)});
    auto broken = with_pass("gpudims", [](KernelLowering& c) {
      c.sink = UOp::sink({c.sink->src[0], premade});
    });
    tg::Context spec{{"SPEC", 1}};
    CHECK_THROWS_WITH_AS(lower_kernel_with_passes(elementwise_ast(), one_dim_caps(), broken),
                         doctest::Contains("pass codegen/gpudims produced a node that breaks"),
                         SpecError);
    premade = nullptr;
  }

  TEST_CASE("the driver times every pass while TRACK_MATCH_STATS is on") {
    tg::Context stats{{"TRACK_MATCH_STATS", 1}};
    lower_kernel(elementwise_ast(), one_dim_caps());
    std::vector<std::string> names;
    for (const PassStats& s : pass_stats()) names.push_back(s.name);
    for (const char* want :
         {"codegen/simplify", "codegen/expand", "codegen/linearize", "graph_rewrite devectorize"})
      CHECK_MESSAGE(std::find(names.begin(), names.end(), want) != names.end(), want);
  }

  TEST_CASE("PRINT_AFTER names passes by name or pipeline/name") {
    {
      tg::Context c{{"PRINT_AFTER", "expand,schedule/memory_plan"}};
      CHECK(print_after("codegen", "expand"));
      CHECK(print_after("schedule", "memory_plan"));
      CHECK(!print_after("codegen", "devectorize"));
      CHECK(!print_after("codegen", "memory_plan"));
    }
    tg::Context all{{"PRINT_AFTER", "all"}};
    CHECK(print_after("codegen", "linearize"));
  }

  TEST_CASE("a renderer's extra rules and decompositions are applied by codegen") {
    // A test renderer without MAX (its decomposition: a < b ? b : a) that spells x*2 as x+x.
    static const PatternMatcher decompositions({
        {UPat::var("a").maximum(UPat::var("b")),
         [](const Captures& c) { return c["a"]->lt(c["b"])->where(c["b"], c["a"]); }},
    });
    static const PatternMatcher extra({
        {UPat::var("x", {dtypes::float32}) * 2.0,
         [](const Captures& c) { return c["x"] + c["x"]; }},
    });
    RendererCaps caps = target_caps();
    caps.decompositions = &decompositions;
    caps.extra_matcher = &extra;
    const int64_t n = 64;
    auto out = buf(0, dtypes::float32, n), x = buf(1, dtypes::float32, n),
         y = buf(2, dtypes::float32, n);
    auto i = rng(n, 0);
    auto two = UOp::const_(dtypes::float32, 2.0);
    const UOpPtr ast = UOp::sink({st(out, i, ld(x, i)->alu(Ops::MAX, {ld(y, i)}) * two)});
    std::vector<float> xv(n), yv(n);
    for (int64_t t = 0; t < n; ++t) xv[t] = float(t % 7) - 3, yv[t] = float(t % 5) - 2;
    for (const std::string& renderer : renderers()) {
      CAPTURE(renderer);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(n), HostBuf::of(xv), HostBuf::of(yv)};
      const LoweredKernel k = run_ast_opts(ast, renderer, bufs, {}, caps);
      bool float_mul = false, max = false, where = false;
      for (const UOpPtr& u : k.uops) {
        float_mul |= u->op == Ops::MUL && u->dtype.is_float();
        max |= u->op == Ops::MAX;
        where |= u->op == Ops::WHERE;
      }
      CHECK(!max);
      CHECK(where);
      CHECK(!float_mul);
      auto o = bufs[0].as<float>();
      for (int64_t t = 0; t < n; ++t) REQUIRE(o[t] == std::max(xv[t], yv[t]) * 2);
    }
  }
}
