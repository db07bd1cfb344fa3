// Symbolic shapes: a bound variable in a dimension. One graph (and so one schedule cache entry
// and one compiled kernel) serves every value of the variable; the values reach the kernels at
// launch. Results are checked against C++ loops for several values.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>

#include "tensor/ref.hpp"
#include "tg/error.hpp"
#include "tg/realize.hpp"
#include "tg/schedule.hpp"

using namespace tgt;
using tg::sint;
using tg::Variable;

namespace {
std::vector<float> iota_values(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t k = 0; k < n; ++k) v[k] = std::sin(static_cast<float>(k) * scale);
  return v;
}
} // namespace

TEST_SUITE("tensor.symbolic") {
  TEST_CASE("shrink to a bound length: elementwise and sum, one kernel for every length") {
    const int64_t rows = 3, cols = 10;
    const std::vector<float> host = iota_values(rows * cols, 0.37f);
    Tensor a = Tensor::from_vector(host, Shape{rows, cols}).realize();
    const sint i = Variable("i", 1, cols);
    int64_t compiled_after_first = -1;
    for (int64_t v : {4, 1, 10, 7}) {
      Tensor b = a.shrink({{0, rows}, {0, i.bind(v)}});
      CHECK(b.shape()[1] == i); // the shape holds the variable, not its value
      CHECK(b.size(1) == v);
      CHECK(b.numel() == rows * v);
      Tensor y = b * 2 + 1;
      Tensor s = b.sum({1});
      const std::vector<float> got = y.to_vector<float>();
      const std::vector<float> sums = s.to_vector<float>();
      REQUIRE(got.size() == static_cast<size_t>(rows * v));
      for (int64_t r = 0; r < rows; ++r) {
        double want_sum = 0;
        for (int64_t c = 0; c < v; ++c) {
          const float x = host[static_cast<size_t>(r * cols + c)];
          CHECK(got[static_cast<size_t>(r * v + c)] == doctest::Approx(x * 2 + 1).epsilon(1e-6));
          want_sum += x;
        }
        CHECK(sums[static_cast<size_t>(r)] == doctest::Approx(want_sum).epsilon(1e-5));
      }
      const int64_t compiled = tg::compiled_kernel_count();
      if (compiled_after_first < 0)
        compiled_after_first = compiled;
      else
        CHECK(compiled == compiled_after_first); // no new kernel for a new length
    }
  }

  TEST_CASE("the schedule cache hits across values (bound values are not in the key)") {
    Tensor a = Tensor::rand({16}).realize();
    const sint n = Variable("n", 1, 16);
    (a.shrink({{0, n.bind(3)}}) + 1).realize();
    const auto before = tg::schedule_cache_stats();
    const int64_t before_compiled = tg::compiled_kernel_count();
    for (int64_t v : {5, 9, 16}) (a.shrink({{0, n.bind(v)}}) + 1).realize();
    const auto after = tg::schedule_cache_stats();
    const int64_t after_compiled = tg::compiled_kernel_count();
    CHECK(after.hits - before.hits == 3);
    CHECK(after_compiled == before_compiled);
  }

  TEST_CASE("reshape and expand with symbolic sizes") {
    const std::vector<float> host = iota_values(24, 0.5f);
    Tensor a = Tensor::from_vector(host, Shape{4, 6}).realize();
    const sint i = Variable("i", 1, 4);
    for (int64_t v : {1, 3, 4}) {
      Tensor b = a.shrink({{0, i.bind(v)}, {0, 6}}); // (i, 6)
      Tensor f = b.reshape({sint::mul(i, 6)});       // (i*6,)
      CHECK(f.shape()[0] == sint::mul(i, 6));
      Tensor g = f.reshape({i, 2, 3}).permute({1, 2, 0}); // (2, 3, i)
      const std::vector<float> got = g.to_vector<float>();
      REQUIRE(got.size() == static_cast<size_t>(6 * v));
      for (int64_t p = 0; p < 2; ++p)
        for (int64_t q = 0; q < 3; ++q)
          for (int64_t r = 0; r < v; ++r)
            CHECK(got[static_cast<size_t>((p * 3 + q) * v + r)] ==
                  host[static_cast<size_t>(r * 6 + p * 3 + q)]);
      // A 1 expanded to the symbolic length, summed: the length itself.
      Tensor ones = Tensor::ones({1, 6}).expand({i.bind(v), 6});
      CHECK(ones.sum().item<float>() == static_cast<float>(6 * v));
      // A constant of symbolic shape carries its binding.
      CHECK(Tensor::full({2, i.bind(v)}, 1.5f).sum().item<float>() == 3.0f * static_cast<float>(v));
    }
  }

  TEST_CASE("attention over a cache of bound length: matmul, softmax, matmul") {
    const int64_t max_len = 12, d = 8;
    const std::vector<float> kh = iota_values(max_len * d, 0.31f),
                             vh = iota_values(max_len * d, 0.77f), qh = iota_values(d, 1.3f);
    Tensor K = Tensor::from_vector(kh, Shape{max_len, d}).realize();
    Tensor V = Tensor::from_vector(vh, Shape{max_len, d}).realize();
    Tensor q = Tensor::from_vector(qh, Shape{1, d}).realize();
    const sint L = Variable("start_pos", 1, max_len);
    int64_t compiled_after_first = -1;
    for (int64_t len : {1, 5, 12, 8}) {
      Tensor k = K.shrink({{0, L.bind(len)}, {0, d}});
      Tensor v = V.shrink({{0, L.bind(len)}, {0, d}});
      Tensor p = q.matmul(k.transpose()).div(std::sqrt(static_cast<double>(d))).softmax(-1);
      CHECK(p.shape()[1] == L);
      const std::vector<float> out = p.matmul(v).to_vector<float>();
      // Host reference in double.
      std::vector<double> s(static_cast<size_t>(len));
      double mx = -1e300, den = 0;
      for (int64_t t = 0; t < len; ++t) {
        double dot = 0;
        for (int64_t c = 0; c < d; ++c)
          dot += double{qh[static_cast<size_t>(c)]} * kh[static_cast<size_t>(t * d + c)];
        s[static_cast<size_t>(t)] = dot / std::sqrt(static_cast<double>(d));
        mx = std::max(mx, s[static_cast<size_t>(t)]);
      }
      for (double& x : s) den += (x = std::exp(x - mx));
      REQUIRE(out.size() == static_cast<size_t>(d));
      for (int64_t c = 0; c < d; ++c) {
        double want = 0;
        for (int64_t t = 0; t < len; ++t)
          want += s[static_cast<size_t>(t)] / den * vh[static_cast<size_t>(t * d + c)];
        CHECK(std::abs(out[static_cast<size_t>(c)] - want) <= 1e-5 + 1e-5 * std::abs(want));
      }
      const int64_t compiled = tg::compiled_kernel_count();
      if (compiled_after_first < 0)
        compiled_after_first = compiled;
      else
        CHECK(compiled == compiled_after_first);
    }
  }

  TEST_CASE("errors: unbound, conflicting values, unsupported ops, out of range") {
    Tensor a = Tensor::rand({2, 10}).realize();
    const sint i = Variable("i", 1, 10);
    // No value for the variable.
    CHECK(error_of([&] {
            (void)(a.shrink({{0, 2}, {0, i}}) + 1).realize();
          }).find("needs a value for variable 'i'") != std::string::npos);
    // The same variable bound to two values in one computation.
    CHECK(error_of([&] {
            (void)(a.shrink({{0, 2}, {0, i.bind(3)}}) + a.shrink({{0, 2}, {0, i.bind(4)}}));
          }).find("bound to 3 and to 4") != std::string::npos);
    // The range must fit for every value of the variable.
    const sint j = Variable("j", 1, 11);
    CHECK(error_of([&] {
            (void)a.shrink({{0, 2}, {0, j.bind(3)}});
          }).find("out of range") != std::string::npos);
    // Shapes that differ symbolically do not broadcast, whatever the values.
    const sint k = Variable("k", 1, 10);
    CHECK(error_of([&] {
            (void)(a.shrink({{0, 2}, {0, i.bind(3)}}) + a.shrink({{0, 2}, {0, k.bind(3)}}));
          }).find("cannot broadcast") != std::string::npos);
    // An op that needs an integer size says so instead of guessing.
    CHECK(error_of([&] {
            (void)a.shrink({{0, 2}, {0, i.bind(3)}}).mean();
          }).find("symbolic size i") != std::string::npos);
  }
}
