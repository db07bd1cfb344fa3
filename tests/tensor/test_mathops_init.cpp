// Creation ops: linspace against C++ loops with exact ends; the random
// initializers by statistics of 100000 samples with stated bounds (several standard errors
// wide, so a correct generator fails them with probability far below 1e-6), reproducibility
// under manual_seed, randperm is a permutation, multinomial never draws a zero-weight class.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "tensor/ref.hpp"
#include "tg/error.hpp"

using namespace tgt;

namespace {

const DType kF32 = dtypes::float32, kF16 = dtypes::float16, kBF16 = dtypes::bfloat16,
            kI32 = dtypes::int32;

struct Moments {
  double mean, sd, lo, hi;
};
Moments moments(const std::vector<double>& v) {
  double s = 0, lo = v[0], hi = v[0];
  for (double x : v) s += x, lo = std::min(lo, x), hi = std::max(hi, x);
  const double m = s / static_cast<double>(v.size());
  double q = 0;
  for (double x : v) q += (x - m) * (x - m);
  return {m, std::sqrt(q / static_cast<double>(v.size() - 1)), lo, hi};
}

} // namespace

TEST_SUITE("tensor.mathops") {
  TEST_CASE("linspace: values, exact ends, steps 0 to 1000, dtypes") {
    struct Case {
      double start, end;
      int64_t steps;
    };
    for (const Case& c : {Case{0, 1, 5}, Case{-3.7, 11.3, 7}, Case{1, 0, 1000}, Case{2.5, 2.5, 4},
                          Case{0.1, 0.7, 2}, Case{-1e3, 1e-3, 999}, Case{3, 100, 1}}) {
      for (DType d : {kF32, kF16, kBF16, dtypes::float64}) {
        if (d != kF32 && d != dtypes::float64 && std::abs(c.start) > 100) continue;
        Tensor t = Tensor::linspace(c.start, c.end, c.steps, d);
        const std::string what = "linspace(" + std::to_string(c.start) + ", " +
                                 std::to_string(c.end) + ", " + std::to_string(c.steps) + ") " +
                                 d.name();
        Arr want = generate({c.steps}, [&](const std::vector<int64_t>& i) {
          if (c.steps == 1) return store(d, c.start);
          return store(d, c.start + (c.end - c.start) * static_cast<double>(i[0]) /
                                        static_cast<double>(c.steps - 1));
        });
        // Computed in float32 (float64 for float64): step and i*step each round once.
        check_close(t, want, d == dtypes::float64 ? Tol{1e-12, 1e-12} : tol_for(d, 2), what, d);
        std::vector<double> got = t.to_vector<double>();
        CHECK_MESSAGE(got.front() == store(d, c.start), what << ": first element exact");
        CHECK_MESSAGE(got.back() == store(d, c.steps == 1 ? c.start : c.end),
                      what << ": last element exact");
      }
    }
    CHECK(Tensor::linspace(0, 1, 0).shape() == Shape{0});
    CHECK(Tensor::linspace(0, 10, 6, kI32).to_vector<int32_t>() ==
          std::vector<int32_t>{0, 2, 4, 6, 8, 10});
    CHECK_THROWS_WITH_AS(Tensor::linspace(0, 1, -2), doctest::Contains("-2"), tg::Error);
  }

  TEST_CASE("uniform and normal: range, mean and sd of 100000 samples, reproducible") {
    Tensor::manual_seed(11);
    std::vector<double> u = Tensor::uniform({100, 1000}, -2, 5).to_vector<double>();
    Tensor::manual_seed(11);
    CHECK(Tensor::uniform({100, 1000}, -2, 5).to_vector<double>() == u);
    Moments mu = moments(u);
    // U(-2, 5): mean 1.5 (standard error 0.0064), sd 7/sqrt(12) = 2.0207.
    CHECK(mu.lo >= -2);
    CHECK(mu.hi < 5);
    CHECK(std::abs(mu.mean - 1.5) < 0.04);
    CHECK(std::abs(mu.sd - 7 / std::sqrt(12.0)) < 0.02);
    Tensor::manual_seed(12);
    std::vector<double> n = Tensor::normal({100000}, 3, 0.5).to_vector<double>();
    Moments mn = moments(n);
    // N(3, 0.5): standard error of the mean 0.0016, of the sd 0.0011.
    CHECK(std::abs(mn.mean - 3) < 0.01);
    CHECK(std::abs(mn.sd - 0.5) < 0.008);
    for (DType d : {kF16, kBF16, dtypes::float64}) {
      CHECK(Tensor::uniform({10}, 0, 1, d).dtype() == d);
      CHECK(Tensor::normal({10}, 0, 1, d).dtype() == d);
    }
    CHECK(Tensor::uniform({0, 4}).shape() == Shape{0, 4});
    CHECK(Tensor::normal({}, 1, 0).item<float>() == 1.0f);
    CHECK_THROWS_WITH_AS(Tensor::uniform({3}, 2, 1), doctest::Contains("low (2"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::normal({3}, 0, -1), doctest::Contains("-1"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::uniform({3}, 0, 1, kI32), doctest::Contains("int32"), tg::Error);
  }

  TEST_CASE("kaiming_uniform, kaiming_normal, glorot_uniform: PyTorch's bounds and sd") {
    // (out, in, kh, kw) = (250, 20, 4, 5): fan_in 400, fan_out 5000; 100000 samples.
    const Shape s{250, 20, 4, 5};
    Tensor::manual_seed(5);
    Moments ku = moments(Tensor::kaiming_uniform(s).to_vector<double>());
    const double b0 = std::sqrt(3.0) * std::sqrt(2.0) / std::sqrt(400.0); // a = 0, leaky_relu
    CHECK(ku.lo >= -b0);
    CHECK(ku.hi <= b0);
    CHECK(ku.hi > 0.99 * b0);
    CHECK(std::abs(ku.mean) < 0.01 * b0);
    CHECK(std::abs(ku.sd - b0 / std::sqrt(3.0)) < 0.01 * b0);
    Moments ku2 =
        moments(Tensor::kaiming_uniform(s, 0.5, "fan_out", "leaky_relu").to_vector<double>());
    const double b1 = std::sqrt(3.0) * std::sqrt(2.0 / 1.25) / std::sqrt(5000.0);
    CHECK(ku2.hi <= b1);
    CHECK(ku2.hi > 0.99 * b1);
    Moments kt = moments(Tensor::kaiming_uniform(s, 0, "fan_in", "tanh").to_vector<double>());
    CHECK(kt.hi <= std::sqrt(3.0) * 5.0 / 3 / 20);
    CHECK(kt.hi > 0.99 * std::sqrt(3.0) * 5.0 / 3 / 20);
    Moments kn = moments(Tensor::kaiming_normal(s, 0, "fan_in", "relu").to_vector<double>());
    const double sd = std::sqrt(2.0) / 20;
    CHECK(std::abs(kn.mean) < 0.01 * sd);
    CHECK(std::abs(kn.sd - sd) < 0.01 * sd);
    Moments g = moments(Tensor::glorot_uniform({400, 250}).to_vector<double>());
    const double gb = std::sqrt(6.0 / 650);
    CHECK(g.lo >= -gb);
    CHECK(g.hi <= gb);
    CHECK(g.hi > 0.99 * gb);
    CHECK(std::abs(g.sd - gb / std::sqrt(3.0)) < 0.01 * gb);
    Moments g2 = moments(Tensor::glorot_uniform({400, 250}, 2.0).to_vector<double>());
    CHECK(g2.hi <= 2 * gb);
    CHECK(g2.hi > 1.98 * gb);
    CHECK_THROWS_WITH_AS(Tensor::kaiming_uniform({5}), doctest::Contains("(5,)"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::kaiming_normal({5, 5}, 0, "fan_avg"),
                         doctest::Contains("\"fan_avg\""), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::kaiming_uniform({5, 5}, 0, "fan_in", "swish"),
                         doctest::Contains("\"swish\""), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::glorot_uniform({7}), doctest::Contains("(7,)"), tg::Error);
    // scaled_uniform: U(-1, 1) / sqrt(numel).
    Moments su = moments(Tensor::scaled_uniform({400, 25}).to_vector<double>());
    CHECK(su.lo >= -0.01);
    CHECK(su.hi <= 0.01);
    CHECK(su.hi > 0.0099);
    CHECK_THROWS_AS(Tensor::scaled_uniform({2, -3}), tg::Error);
  }

  TEST_CASE("randperm: a permutation, reproducible, uniform first element") {
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      Tensor::manual_seed(static_cast<uint64_t>(n) + 1);
      Tensor p = Tensor::randperm(n);
      CHECK(p.dtype() == kI32);
      std::vector<int32_t> v = p.to_vector<int32_t>();
      std::vector<int32_t> sorted = v;
      std::sort(sorted.begin(), sorted.end());
      std::vector<int32_t> iota(static_cast<size_t>(n));
      std::iota(iota.begin(), iota.end(), 0);
      CHECK_MESSAGE(sorted == iota, "randperm(" << n << ") is a permutation");
      Tensor::manual_seed(static_cast<uint64_t>(n) + 1);
      CHECK(Tensor::randperm(n).to_vector<int32_t>() == v);
      if (n == 1000) {
        CHECK(v != iota);
        Tensor::manual_seed(77);
        CHECK(Tensor::randperm(n).to_vector<int32_t>() != v);
      }
    }
    // 40 draws of randperm(4): every value comes first at least once (a correct generator
    // misses one with probability 4 * 0.75^40 = 4e-5).
    Tensor::manual_seed(3);
    std::vector<int> first(4);
    for (int r = 0; r < 40; ++r) {
      std::vector<int32_t> v = Tensor::randperm(4).to_vector<int32_t>();
      ++first[static_cast<size_t>(v[0])];
    }
    for (int c : first) CHECK(c > 0);
    CHECK(Tensor::randperm(5, dtypes::int64).dtype() == dtypes::int64);
    CHECK_THROWS_WITH_AS(Tensor::randperm(-3), doctest::Contains("-3"), tg::Error);
  }

  TEST_CASE("multinomial: frequencies, zero-weight classes, without replacement, 1-D and 2-D") {
    Tensor::manual_seed(9);
    // Row 0: weights 0, 1, 0, 3, 0 (unnormalized); row 1: 2, 0, 2, 0, 4.
    Tensor w = Tensor::from_vector<float>({0, 1, 0, 3, 0, 2, 0, 2, 0, 4}, Shape{2, 5});
    Tensor s = w.multinomial(20000, true);
    CHECK(s.shape() == Shape{2, 20000});
    CHECK(s.dtype() == kI32);
    std::vector<int32_t> v = s.to_vector<int32_t>();
    std::vector<std::vector<int>> hist(2, std::vector<int>(5));
    for (size_t i = 0; i < v.size(); ++i) ++hist[i / 20000][static_cast<size_t>(v[i])];
    CHECK(hist[0][0] == 0);
    CHECK(hist[0][2] == 0);
    CHECK(hist[0][4] == 0);
    CHECK(hist[1][1] == 0);
    CHECK(hist[1][3] == 0);
    // Expected 5000 / 15000 and 5000 / 5000 / 10000; binomial sd <= 71: bound 400.
    CHECK(std::abs(hist[0][1] - 5000) < 400);
    CHECK(std::abs(hist[0][3] - 15000) < 400);
    CHECK(std::abs(hist[1][0] - 5000) < 400);
    CHECK(std::abs(hist[1][2] - 5000) < 400);
    CHECK(std::abs(hist[1][4] - 10000) < 400);
    // Edge classes with zero weight at both ends, one sample, 1-D.
    Tensor e = Tensor::from_vector<float>({0, 0, 1, 0});
    Tensor one = e.multinomial();
    CHECK(one.shape() == Shape{1});
    CHECK(one.to_vector<int32_t>() == std::vector<int32_t>{2});
    std::vector<int32_t> many = e.multinomial(1000, true).to_vector<int32_t>();
    CHECK(std::all_of(many.begin(), many.end(), [](int32_t x) { return x == 2; }));
    // Without replacement: distinct indices, zero weights never while positive ones remain.
    for (int r = 0; r < 5; ++r) {
      std::vector<int32_t> nr = w.multinomial(2, false).to_vector<int32_t>();
      CHECK(std::set<int32_t>{nr[0], nr[1]} == std::set<int32_t>{1, 3});
      std::set<int32_t> row1{nr[2], nr[3]};
      CHECK(row1.size() == 2);
      CHECK(!row1.count(1));
      CHECK(!row1.count(3));
    }
    // The heavier class comes first more often: weights 1, 9 -> P(first = 1) = 0.9.
    int heavy_first = 0;
    Tensor w2 = Tensor::from_vector<float>({1, 9});
    std::vector<int32_t> firsts =
        w2.unsqueeze(0).expand({2000, 2}).multinomial(2, false).to_vector<int32_t>();
    for (size_t i = 0; i < firsts.size(); i += 2) heavy_first += firsts[i] == 1;
    CHECK(std::abs(heavy_first - 1800) < 100); // binomial sd 13
    Tensor::manual_seed(4);
    std::vector<int32_t> a = w.multinomial(50, true).to_vector<int32_t>();
    Tensor::manual_seed(4);
    CHECK(w.multinomial(50, true).to_vector<int32_t>() == a);
    CHECK_THROWS_WITH_AS(Tensor::ones({2, 2, 2}).multinomial(), doctest::Contains("(2, 2, 2)"),
                         tg::Error);
    CHECK_THROWS_WITH_AS(w.multinomial(6, false), doctest::Contains("6 samples"), tg::Error);
    CHECK_THROWS_WITH_AS(w.multinomial(0), doctest::Contains("got 0"), tg::Error);
    CHECK_THROWS_WITH_AS(Tensor::ones({3}, kI32).multinomial(), doctest::Contains("int32"),
                         tg::Error);
  }
}
