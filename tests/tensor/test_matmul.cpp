// matmul against a triple loop: 2-D, batched with broadcasting, 1-D operands, transposed
// inputs, a long inner dimension, float16 / int32 operands, and shapes for tensor cores.
#include <doctest/doctest.h>

#include <array>
#include <cmath>

#include "tensor/ref.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/schedule.hpp"

using namespace tgt;

namespace {

// (..., n, k) @ (..., k, m) with numpy broadcasting of the batch axes.
Arr matmul_ref(const Arr& a, const Arr& b) {
  Shape ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
  const int64_t n = a.shape[a.shape.size() - 2], k = a.shape.back(), m = b.shape.back();
  Shape batch = broadcast(ab, bb);
  Shape out = batch;
  out.push_back(n);
  out.push_back(m);
  return generate(out, [&](const std::vector<int64_t>& idx) {
    std::vector<int64_t> bi(idx.begin(), idx.end() - 2);
    const int64_t i = idx[idx.size() - 2], j = idx.back();
    auto pick = [&](const Shape& s, std::vector<int64_t> tail) {
      std::vector<int64_t> r(s.size());
      for (size_t q = 0; q < s.size(); ++q) r[q] = s[q] == 1 ? 0 : bi[q + bi.size() - s.size()];
      r.insert(r.end(), tail.begin(), tail.end());
      return r;
    };
    double acc = 0;
    for (int64_t q = 0; q < k; ++q) acc += a.at(pick(ab, {i, q})) * b.at(pick(bb, {q, j}));
    return acc;
  });
}

// Kernels the schedule of `t` launches.
size_t kernels(const Tensor& t) {
  size_t n = 0;
  for (const tg::ScheduleItem& i : t.schedule()) n += i.kind == tg::ScheduleItem::Kind::Kernel;
  return n;
}

void matmul_2d(DType d) {
  INFO(d.name());
  Arr a = random_arr({7, 13}, -3, 3, d, 1), b = random_arr({13, 5}, -3, 3, d, 2);
  Tensor ta = to_tensor(a, d), tb = to_tensor(b, d);
  Arr want = matmul_ref(a, b);
  for (double& x : want.v) x = store(d, x);
  check_close(ta.matmul(tb), want, tol_for(d, 4), "a @ b", d);
  // The same product from transposed storage.
  Arr at = permute(a, {1, 0}), bt = permute(b, {1, 0});
  check_close(to_tensor(at, d).transpose().matmul(to_tensor(bt, d).transpose()), want,
              tol_for(d, 4), "a.T.T @ b.T.T", d);
}

} // namespace

TEST_SUITE("tensor.matmul") {
  TEST_CASE("2-D, transposed operands, dtypes") {
    for (DType d : {dtypes::float32, dtypes::float16, dtypes::int32, dtypes::int8}) matmul_2d(d);
  }
  // Skipped until codegen computes bfloat16 arithmetic in float32 (the LLVM and C renderers
  // refuse bfloat16 ALU ops; that decomposition pass is being written).
  TEST_CASE("2-D in bfloat16") { matmul_2d(dtypes::bfloat16); }

  // Shapes a tensor core's tile divides (CUDA's m16n8k16: M 16, N 8, K 16), and one padded to
  // it at TC_OPT=2: on DEV=CUDA (sm_80+) the heuristic puts them on mma.sync, elsewhere they
  // are plain matmuls.
  TEST_CASE("tensor-core shapes in float16 and bfloat16") {
    for (DType d : {dtypes::float16, dtypes::bfloat16}) {
      INFO(d.name());
      for (auto [n, k, m] : {std::array<int64_t, 3>{64, 32, 48}, {30, 40, 20}}) {
        tg::Context pad{{"TC_OPT", n == 64 ? 0 : 2}};
        // Small integers: products and sums are exact in every order and precision, so a
        // fragment element in the wrong place shows.
        Arr a = random_arr({n, k}, -3, 3, d, 5), b = random_arr({k, m}, -3, 3, d, 6);
        for (Arr* x : {&a, &b})
          for (double& v : x->v) v = std::round(v);
        Arr want = matmul_ref(a, b);
        for (double& x : want.v) x = store(d, x);
        check_close(to_tensor(a, d).matmul(to_tensor(b, d)), want, tol_for(d, 4), "a @ b", d);
      }
    }
  }

  TEST_CASE("batched with broadcasting, 1-D cases") {
    const DType f = dtypes::float32;
    Arr a = random_arr({2, 1, 3, 4}, -2, 2, f, 3), b = random_arr({5, 4, 6}, -2, 2, f, 4);
    Tensor ta = to_tensor(a, f), tb = to_tensor(b, f);
    Tensor r = ta.matmul(tb);
    CHECK(r.shape() == Shape{2, 5, 3, 6});
    check_close(r, matmul_ref(a, b), tol_for(f, 4), "(2,1,3,4) @ (5,4,6)");
    Arr v = random_arr({4}, -2, 2, f, 5), w = random_arr({6}, -2, 2, f, 6);
    Tensor tv = to_tensor(v, f), tw = to_tensor(w, f);
    Arr m = random_arr({4, 6}, -2, 2, f, 7);
    Tensor tm = to_tensor(m, f);
    check_close(tv.matmul(tm), reshape(matmul_ref(reshape(v, {1, 4}), m), {6}), tol_for(f, 4),
                "1-D @ 2-D");
    check_close(tm.matmul(tw), reshape(matmul_ref(m, reshape(w, {6, 1})), {4}), tol_for(f, 4),
                "2-D @ 1-D");
    Tensor dot = tv.matmul(tv);
    CHECK(dot.shape() == Shape{});
    check_close(dot, reshape(matmul_ref(reshape(v, {1, 4}), reshape(v, {4, 1})), {}), tol_for(f, 4),
                "1-D @ 1-D");
    check_close(tv.matmul(tb), reshape(matmul_ref(reshape(v, {1, 4}), b), {5, 6}), tol_for(f, 4),
                "1-D @ 3-D");
    check_close(ta.matmul(tw.reshape({6, 1}).shrink({{0, 4}, {0, 1}}).reshape({4})),
                reshape(matmul_ref(a, reshape(shrink(w, {{0, 4}}), {4, 1})), {2, 1, 3}),
                tol_for(f, 4), "4-D @ 1-D");
    CHECK_THROWS_AS(tm.matmul(tm), tg::Error);
    CHECK_THROWS_AS(Tensor::full({}, 1.0).matmul(tv), tg::Error);
  }

  TEST_CASE("long inner dimension and zero-size") {
    const DType f = dtypes::float32;
    Arr a = random_arr({3, 4096}, -1, 1, f, 8), b = random_arr({4096, 2}, -1, 1, f, 9);
    check_close(to_tensor(a, f).matmul(to_tensor(b, f)), matmul_ref(a, b), {1e-3, 1e-4},
                "K=4096 (atol 1e-3 for 4096 rounded adds)");
    Tensor z = Tensor::ones({3, 0}).matmul(Tensor::ones({0, 2}));
    CHECK(z.to_vector<float>() == std::vector<float>(6, 0));
    CHECK(Tensor::ones({0, 3}).matmul(Tensor::ones({3, 2})).shape() == Shape{0, 2});
  }

  // On a CPU a float32 a @ b with at least 64 rows copies b into column panels as wide as the
  // register tile first (CPU_MATMUL_PACK): one more kernel, the same products. n = 256 is at
  // least four panels of every vector width (32 floats with AVX-512, 16 with AVX2, 8 with SSE);
  // 250 and 130 are padded to whole panels with zero columns, cut off after.
  TEST_CASE("b packed into column panels: shapes, batches, transposed b, gradients") {
    const DType f = dtypes::float32;
    const bool cpu = Tensor::zeros({1}).device().rfind("CPU", 0) == 0;
    struct Case {
      Shape a, b;
      bool bt; // b from transposed storage
    };
    for (const Case& c : {Case{{96, 40}, {40, 256}, false}, Case{{2, 48, 24}, {24, 256}, false},
                          Case{{3, 64, 20}, {3, 20, 256}, false}, Case{{64, 32}, {32, 256}, true},
                          Case{{96, 40}, {40, 250}, false}, Case{{64, 24}, {24, 130}, true}}) {
      CAPTURE(c.a.size());
      CAPTURE(c.bt);
      Arr a = random_arr(c.a, -2, 2, f, 11), b = random_arr(c.b, -2, 2, f, 12);
      Tensor ta = to_tensor(a, f);
      Arr b_rows = c.bt ? permute(b, {1, 0}) : b; // b, or b.T stored row by row
      Tensor tb = c.bt ? to_tensor(b_rows, f).transpose() : to_tensor(b, f);
      const Tensor packed = ta.matmul(tb);
      const size_t packed_kernels = kernels(packed);
      check_close(packed, matmul_ref(a, b), tol_for(f, 4), "packed a @ b");
      tg::Context off{{"CPU_MATMUL_PACK", 0}};
      const Tensor in_place = ta.matmul(tb);
      if (cpu) CHECK(packed_kernels == kernels(in_place) + 1);
      check_close(in_place, matmul_ref(a, b), tol_for(f, 4), "a @ b read in place");
    }
    // Fewer than 64 rows, or n under four panels: b is read in place.
    auto count = [](int64_t m, int64_t n) {
      return kernels(Tensor::rand({m, 64}).realize().matmul(Tensor::rand({64, n}).realize()));
    };
    const size_t few_rows = count(8, 256), narrow = count(128, 8), packs = count(128, 256);
    {
      tg::Context off{{"CPU_MATMUL_PACK", 0}};
      CHECK(count(8, 256) == few_rows);
      CHECK(count(128, 8) == narrow);
      if (cpu) CHECK(count(128, 256) + 1 == packs);
    }
    // The gradients (g @ b.T and a.T @ g, summed over broadcast batch axes) equal those of the
    // product read in place, for batches on either side and on both.
    for (const auto& [as, bs] : {std::pair<Shape, Shape>{{64, 24}, {24, 256}},
                                 {{2, 48, 24}, {24, 256}},
                                 {{64, 24}, {2, 24, 256}},
                                 {{2, 1, 64, 24}, {3, 24, 256}},
                                 {{64, 24}, {24, 250}}}) {
      CAPTURE(as.size());
      CAPTURE(bs.size());
      Arr a = random_arr(as, -1, 1, f, 13), b = random_arr(bs, -1, 1, f, 14);
      auto grads = [&] {
        Tensor ta = to_tensor(a, f).requires_grad_(), tb = to_tensor(b, f).requires_grad_();
        Tensor y = ta.matmul(tb);
        y.mul(Tensor::rand(y.shape())).sum().backward();
        return std::pair{ta.grad().to_vector<float>(), tb.grad().to_vector<float>()};
      };
      Tensor::manual_seed(3);
      const auto [ga, gb] = grads();
      tg::Context off{{"CPU_MATMUL_PACK", 0}};
      Tensor::manual_seed(3);
      const auto [ga0, gb0] = grads();
      REQUIRE(ga.size() == ga0.size());
      REQUIRE(gb.size() == gb0.size());
      for (size_t i = 0; i < ga.size(); ++i) CHECK(ga[i] == doctest::Approx(ga0[i]).epsilon(1e-5));
      for (size_t i = 0; i < gb.size(); ++i) CHECK(gb[i] == doctest::Approx(gb0[i]).epsilon(1e-5));
    }
  }
}
