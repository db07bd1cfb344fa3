// Hand-built kernel ASTs lowered by codegen and run on the target (the CPU through both
// renderers, or DEV's device), against plain C++ loops.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "codegen_test_util.hpp"

using namespace tg;
using namespace tg::codegen_test;

namespace {
std::vector<float> pattern(size_t n, int mod, float offset) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 7 + 3) % mod) - offset;
  return v;
}
} // namespace

TEST_SUITE("codegen.lower") {

  TEST_CASE("elementwise over a 2-D range with a broadcast input") {
    const int64_t R = 4, C = 8;
    auto out = buf(0, dtypes::float32, R * C), a = buf(1, dtypes::float32, R * C),
         b = buf(2, dtypes::float32, C);
    auto i = rng(R, 0), j = rng(C, 1);
    auto ast = UOp::sink({st(out, i * C + j, ld(a, i * C + j) + ld(b, j))});
    auto av = pattern(R * C, 13, 6), bv = pattern(C, 5, 2);
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(R * C), HostBuf::of(av), HostBuf::of(bv)};
      auto k = run_ast(ast, r, bufs);
      // The heuristic upcasts the contiguous last axis by 4 (float4 stores); NOOPT=1 does not.
      if (on_cpu()) {
        CHECK(k.name == (noopt() ? "E_4_8" : "E_4_2_4"));
        CHECK(k.global == std::array<int64_t, 3>{R, noopt() ? C : C / 4, 1});
      }
      auto o = bufs[0].as<float>();
      for (int64_t x = 0; x < R; ++x)
        for (int64_t y = 0; y < C; ++y) REQUIRE(o[x * C + y] == av[x * C + y] + bv[y]);
    }
  }

  TEST_CASE("row sums") {
    const int64_t R = 37, C = 53;
    auto out = buf(0, dtypes::float32, R), x = buf(1, dtypes::float32, R * C);
    auto i = rng(R, 0), j = rng(C, 1, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * C + j), {j}))});
    auto xv = pattern(R * C, 11, 5);
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(R), HostBuf::of(xv)};
      auto k = run_ast(ast, r, bufs);
      if (on_cpu()) CHECK(k.name == "r_37_53");
      auto o = bufs[0].as<float>();
      for (int64_t y = 0; y < R; ++y) {
        float ref = 0;
        for (int64_t t = 0; t < C; ++t) ref += xv[y * C + t];
        REQUIRE(o[y] == ref);
      }
    }
  }

  TEST_CASE("max reduce starts from the dtype's minimum") {
    const MaxReduceCase m = max_reduce_case(6, 9);
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs = m.buffers();
      auto k = run_ast(m.ast, r, bufs);
      if (on_cpu()) CHECK(k.name == "r2_6_9_9");
      m.check(bufs);
    }
  }

  TEST_CASE("sum over two reduce axes, and a product") {
    const int64_t A = 5, B = 6, C = 7;
    auto out = buf(0, dtypes::float32, A), x = buf(1, dtypes::float32, A * B * C);
    auto prod = buf(2, dtypes::int32, A), y = buf(3, dtypes::int32, A * B);
    auto i = rng(A, 0), j = rng(B, 1, AxisType::Reduce), k = rng(C, 2, AxisType::Reduce);
    auto j2 = rng(B, 3, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * (B * C) + j * C + k), {j, k})),
                          st(prod, i, reduce(Ops::MUL, ld(y, i * B + j2), {j2}))});
    auto xv = pattern(A * B * C, 9, 4);
    std::vector<int32_t> yv(A * B);
    for (int64_t t = 0; t < A * B; ++t) yv[t] = static_cast<int32_t>(t % 4) - 1;
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(A), HostBuf::of(xv),
                                HostBuf::zeros<int32_t>(A), HostBuf::of(yv)};
      run_ast(ast, r, bufs);
      auto o = bufs[0].as<float>();
      auto p = bufs[2].as<int32_t>();
      for (int64_t a = 0; a < A; ++a) {
        float ref = 0;
        for (int64_t b = 0; b < B; ++b)
          for (int64_t c = 0; c < C; ++c) ref += xv[a * B * C + b * C + c];
        REQUIRE(o[a] == ref);
        int32_t pr = 1;
        for (int64_t b = 0; b < B; ++b) pr *= yv[a * B + b];
        REQUIRE(p[a] == pr);
      }
    }
  }

  TEST_CASE("small matmul") {
    const int64_t M = 9, N = 7, K = 13;
    auto out = buf(0, dtypes::float32, M * N), a = buf(1, dtypes::float32, M * K),
         b = buf(2, dtypes::float32, K * N);
    auto i = rng(M, 0), j = rng(N, 1), k = rng(K, 2, AxisType::Reduce);
    auto ast =
        UOp::sink({st(out, i * N + j, reduce(Ops::ADD, ld(a, i * K + k) * ld(b, k * N + j), {k}))});
    auto av = pattern(M * K, 5, 2), bv = pattern(K * N, 3, 0);
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(M * N), HostBuf::of(av), HostBuf::of(bv)};
      auto lk = run_ast(ast, r, bufs);
      if (on_cpu()) {
        CHECK(lk.name == "r_9_7_13");
        CHECK(lk.global == std::array<int64_t, 3>{M, N, 1});
      }
      auto o = bufs[0].as<float>();
      for (int64_t x = 0; x < M; ++x)
        for (int64_t y = 0; y < N; ++y) {
          float ref = 0;
          for (int64_t t = 0; t < K; ++t) ref += av[x * K + t] * bv[t * N + y];
          REQUIRE(o[x * N + y] == ref);
        }
    }
  }

  TEST_CASE("two reduces, one feeding the other") {
    // out[i] = sum_j (x[i,j] - max_k x[i,k]) + sum_j x[i,j]: the max's loop does not depend
    // on j, so it runs once per row before the sum's loop.
    const int64_t R = 8, C = 10;
    auto out = buf(0, dtypes::float32, R), x = buf(1, dtypes::float32, R * C);
    auto i = rng(R, 0), j = rng(C, 1, AxisType::Reduce), k = rng(C, 2, AxisType::Reduce),
         j2 = rng(C, 3, AxisType::Reduce);
    auto mx = reduce(Ops::MAX, ld(x, i * C + k), {k});
    auto s = reduce(Ops::ADD, ld(x, i * C + j) - mx, {j});
    auto s2 = reduce(Ops::ADD, ld(x, i * C + j2), {j2});
    auto ast = UOp::sink({st(out, i, s + s2)});
    auto xv = pattern(R * C, 17, 8);
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(R), HostBuf::of(xv)};
      run_ast(ast, r, bufs);
      auto o = bufs[0].as<float>();
      for (int64_t y = 0; y < R; ++y) {
        float m = -INFINITY, a = 0, b = 0;
        for (int64_t t = 0; t < C; ++t) m = std::max(m, xv[y * C + t]);
        for (int64_t t = 0; t < C; ++t) a += xv[y * C + t] - m;
        for (int64_t t = 0; t < C; ++t) b += xv[y * C + t];
        REQUIRE(o[y] == a + b);
      }
    }
  }

  TEST_CASE("a loop whose end is a DEFINE_VAR") {
    const int64_t R = 5, cap = 32;
    auto out = buf(0, dtypes::int32, R), x = buf(1, dtypes::int32, R * cap);
    auto out2 = buf(2, dtypes::int32, cap);
    auto n = UOp::variable("n", 1, cap);
    auto i = rng(R, 0), j = UOp::range(n, 1, AxisType::Reduce);
    // A Global range of symbolic size stays a loop inside the work item.
    auto g = UOp::range(n, 2, AxisType::Global);
    auto ast = UOp::sink({st(out, i, reduce(Ops::ADD, ld(x, i * cap + j), {j})),
                          st(out2, g, ld(x, g)->alu(Ops::MUL, {UOp::const_(dtypes::int32, 3)}))});
    std::vector<int32_t> xv(R * cap);
    for (int64_t t = 0; t < R * cap; ++t) xv[t] = static_cast<int32_t>(t * 5 % 23) - 11;
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(R), HostBuf::of(xv),
                                HostBuf::zeros<int32_t>(cap)};
      auto k = run_ast(ast, r, bufs, {19});
      if (on_cpu()) {
        CHECK(k.name == "r2_5_n_n");
        CHECK(k.global == std::array<int64_t, 3>{R, 1, 1});
      }
      REQUIRE(k.vars.size() == 1);
      CHECK(k.vars[0].name == "n");
      auto o = bufs[0].as<int32_t>();
      auto o2 = bufs[2].as<int32_t>();
      for (int64_t y = 0; y < R; ++y) {
        int32_t ref = 0;
        for (int64_t t = 0; t < 19; ++t) ref += xv[y * cap + t];
        REQUIRE(o[y] == ref);
      }
      for (int64_t t = 0; t < cap; ++t) REQUIRE(o2[t] == (t < 19 ? xv[t] * 3 : 0));
    }
  }

  TEST_CASE("more global axes than dimensions: the rest loop inside the work item") {
    const int64_t A = 2, B = 3, C = 4, D = 5;
    auto out = buf(0, dtypes::int32, A * B * C * D), x = buf(1, dtypes::int32, D);
    auto a = rng(A, 0), b = rng(B, 1), c = rng(C, 2), d = rng(D, 3),
         e = rng(3, 4, AxisType::Reduce);
    auto flat = ((a * B + b) * C + c) * D + d;
    auto ast = UOp::sink(
        {st(out, flat, ld(x, d) + flat->cast(dtypes::int32) + reduce(Ops::ADD, ld(x, e), {e}))});
    std::vector<int32_t> xv{3, -1, 4, 1, -5};
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<int32_t>(A * B * C * D), HostBuf::of(xv)};
      auto k = run_ast(ast, r, bufs);
      if (on_cpu()) CHECK(k.global == std::array<int64_t, 3>{A, B, C});
      auto o = bufs[0].as<int32_t>();
      for (int64_t t = 0; t < A * B * C * D; ++t)
        REQUIRE(o[t] == xv[t % D] + static_cast<int32_t>(t) + (3 - 1 + 4));
    }
  }

  TEST_CASE("a kernel with no loops") {
    auto out = buf(0, dtypes::float32, 1), x = buf(1, dtypes::float32, 4);
    auto ast =
        UOp::sink({st(out, idx_const(0), ld(x, idx_const(2)) * UOp::const_(dtypes::float32, 2.0))});
    std::vector<float> xv{1, 2, 3.5f, 4};
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(1), HostBuf::of(xv)};
      auto k = run_ast(ast, r, bufs);
      CHECK(k.name == "E");
      CHECK(bufs[0].as<float>()[0] == 7.0f);
    }
  }
}

TEST_SUITE("codegen.lower") {
  TEST_CASE("loops of size one and empty reductions") {
    auto out = buf(0, dtypes::float32, 3), x = buf(1, dtypes::float32, 3);
    auto out2 = buf(2, dtypes::float32, 3);
    auto i = rng(3, 0), one = rng(1, 1, AxisType::Reduce), g1 = rng(1, 2),
         none = rng(0, 3, AxisType::Reduce);
    auto ast = UOp::sink({st(out, i + g1, reduce(Ops::ADD, ld(x, i + one), {one})),
                          st(out2, i, reduce(Ops::MUL, ld(x, i + none), {none}) + ld(x, i))});
    std::vector<float> xv{1.5f, -2, 4};
    for (const std::string& r : renderers()) {
      CAPTURE(r);
      std::vector<HostBuf> bufs{HostBuf::zeros<float>(3), HostBuf::of(xv),
                                HostBuf::zeros<float>(3)};
      run_ast(ast, r, bufs);
      CHECK(bufs[0].as<float>() == xv);
      auto o2 = bufs[2].as<float>();
      for (int t = 0; t < 3; ++t) CHECK(o2[t] == 1.0f + xv[t]);
    }
  }
}
