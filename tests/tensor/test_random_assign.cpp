// rand / randn / randint with manual_seed (reproducible, in range, plausible moments over 100k
// samples, seeds differ) and assign (reads old values, seen through copies of the handle).
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>

#include "tensor/ref.hpp"
#include "tg/error.hpp"

using namespace tgt;

namespace {
std::pair<double, double> moments(const std::vector<double>& v) {
  double m = 0, s = 0;
  for (double x : v) m += x;
  m /= static_cast<double>(v.size());
  for (double x : v) s += (x - m) * (x - m);
  return {m, s / static_cast<double>(v.size())};
}

// threefry2x32-20 on the host (Salmon et al. 2011), an independent reference.
std::pair<uint32_t, uint32_t> threefry2x32(uint32_t k0, uint32_t k1, uint32_t x0, uint32_t x1) {
  static constexpr int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  x0 += ks[0];
  x1 += ks[1];
  for (uint32_t i = 0; i < 5; ++i) {
    for (int j = 0; j < 4; ++j) {
      const int r = rot[(i % 2) * 4 + static_cast<uint32_t>(j)];
      x0 += x1;
      x1 = (x1 << r) | (x1 >> (32 - r));
      x1 ^= x0;
    }
    x0 += ks[(i + 1) % 3];
    x1 += ks[(i + 2) % 3] + i + 1;
  }
  return {x0, x1};
}
} // namespace

TEST_SUITE("tensor.random") {
  TEST_CASE(
      "rand is threefry2x32-20: known answers, a host reference, the same on every renderer") {
    // Random123's known-answer vectors (counter, key -> output).
    CHECK(threefry2x32(0, 0, 0, 0) == std::pair<uint32_t, uint32_t>{0x6b200159u, 0x99ba4efeu});
    CHECK(threefry2x32(0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu) ==
          std::pair<uint32_t, uint32_t>{0x1cb996fcu, 0xbb002be7u});
    CHECK(threefry2x32(0x13198a2eu, 0x03707344u, 0x243f6a88u, 0x85a308d3u) ==
          std::pair<uint32_t, uint32_t>{0xc4923a9cu, 0x483df7a0u});
    // Tensor::rand: key (seed folded to 32 bits, call number), counter (index, 0x6a09e667),
    // 23 bits of the first word under exponent 0, minus one.
    const uint64_t seed = 0x123456789ull;
    Tensor::manual_seed(seed);
    std::vector<float> got = Tensor::rand({1000}, dtypes::float32, "CPU").to_vector<float>();
    for (uint32_t i = 0; i < 1000; ++i) {
      const uint32_t bits =
          threefry2x32(static_cast<uint32_t>(seed ^ (seed >> 32)), 0, i, 0x6a09e667u).first;
      float one;
      const uint32_t pattern = (bits >> 9) | 0x3F800000u;
      std::memcpy(&one, &pattern, sizeof one);
      REQUIRE(got[i] == one - 1.0f);
    }
    Tensor::manual_seed(seed);
    CHECK(Tensor::rand({1000}, dtypes::float32, "CPU:C").to_vector<float>() == got);
  }

  TEST_CASE("rand: reproducible, in [0, 1), uniform moments, seeds differ") {
    Tensor::manual_seed(42);
    std::vector<double> a = Tensor::rand({100000}).to_vector<double>();
    std::vector<double> a2 = Tensor::rand({100000}).to_vector<double>();
    Tensor::manual_seed(42);
    CHECK(Tensor::rand({100000}).to_vector<double>() == a);
    CHECK(a2 != a); // the next call draws new numbers
    Tensor::manual_seed(43);
    std::vector<double> b = Tensor::rand({100000}).to_vector<double>();
    CHECK(b != a);
    size_t same = 0;
    for (size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
    CHECK(same < 100);
    for (double x : a) {
      REQUIRE(x >= 0);
      REQUIRE(x < 1);
    }
    auto [m, var] = moments(a);
    CHECK(m == doctest::Approx(0.5).epsilon(0.01));        // sd of the mean ~0.001
    CHECK(var == doctest::Approx(1.0 / 12).epsilon(0.02)); // 1/12
    // Deciles hold ~10% each.
    std::vector<int> hist(10);
    for (double x : a) ++hist[static_cast<size_t>(x * 10)];
    for (int h : hist) CHECK(std::abs(h - 10000) < 500);
    Tensor h = Tensor::rand({1000}, dtypes::float16);
    CHECK(h.dtype() == dtypes::float16);
    for (double x : h.to_vector<double>()) REQUIRE((x >= 0 && x <= 1));
    CHECK(Tensor::rand({2, 0}).shape() == Shape{2, 0});
    CHECK(Tensor::rand({3, 4}).shape() == Shape{3, 4});
    CHECK_THROWS_AS(Tensor::rand({2}, dtypes::int32), tg::Error);
    // *_like: the shape, a float dtype, the same numbers as rand under the same seed.
    Tensor like = Tensor::zeros({50, 40}, dtypes::float16);
    Tensor::manual_seed(5);
    Tensor rl = Tensor::rand_like(like);
    CHECK(rl.shape() == Shape{50, 40});
    CHECK(rl.dtype() == dtypes::float16);
    Tensor::manual_seed(5);
    CHECK(rl.to_vector<double>() == Tensor::rand({50, 40}, dtypes::float16).to_vector<double>());
    Tensor rn = Tensor::randn_like(Tensor::zeros({2000}, dtypes::int32));
    CHECK(rn.dtype() == dtypes::float32);
    auto [mn, vn] = moments(rn.to_vector<double>());
    CHECK(std::abs(mn) < 0.1);
    CHECK(vn == doctest::Approx(1.0).epsilon(0.15));
  }

  TEST_CASE("rand fused into an upcast reduce: the same numbers, compiled in reasonable time") {
    // threefry's rounds reuse each value twice; taking lanes through that graph without a memo
    // walked it once per path (exponential), so this kernel never finished compiling.
    Tensor thresholds = Tensor::from_vector(std::vector<float>{0.1f, 0.3f, 0.5f, 0.7f, 0.9f, 0.2f,
                                                               0.4f, 0.6f, 0.8f, 1.0f},
                                            Shape{1, 2, 5})
                            .realize();
    Tensor::manual_seed(11);
    const std::vector<float> counts =
        Tensor::rand({512, 2, 1}).lt(thresholds).sum({2}).to_vector<float>();
    Tensor::manual_seed(11);
    const std::vector<float> r = Tensor::rand({512, 2, 1}).to_vector<float>();
    REQUIRE(counts.size() == 1024);
    const float th[2][5] = {{0.1f, 0.3f, 0.5f, 0.7f, 0.9f}, {0.2f, 0.4f, 0.6f, 0.8f, 1.0f}};
    for (size_t i = 0; i < 1024; ++i) {
      int want = 0;
      for (float t : th[i % 2]) want += r[i] < t;
      REQUIRE(counts[i] == static_cast<float>(want));
    }
  }

  TEST_CASE("rand padded: gated vector loads of an upcast kernel (devectorize regression)") {
    Tensor::manual_seed(12);
    const std::vector<float> padded =
        Tensor::rand({7}).pad({{0, 1}}, 0.0).realize().to_vector<float>();
    Tensor::manual_seed(12);
    std::vector<float> want = Tensor::rand({7}).to_vector<float>();
    want.push_back(0);
    CHECK(padded == want);
  }

  TEST_CASE("randn: reproducible, standard normal moments") {
    Tensor::manual_seed(7);
    std::vector<double> a = Tensor::randn({100000}).to_vector<double>();
    Tensor::manual_seed(7);
    CHECK(Tensor::randn({100000}).to_vector<double>() == a);
    Tensor::manual_seed(8);
    CHECK(Tensor::randn({100000}).to_vector<double>() != a);
    for (double x : a) REQUIRE(std::isfinite(x));
    auto [m, var] = moments(a);
    CHECK(std::abs(m) < 0.02); // sd of the mean ~0.003
    CHECK(var == doctest::Approx(1.0).epsilon(0.03));
    size_t within1 = 0;
    for (double x : a) within1 += std::abs(x) < 1;
    CHECK(std::abs(static_cast<double>(within1) / 1e5 - 0.6827) < 0.01);
  }

  TEST_CASE("randint: reproducible, in [low, high), every value drawn") {
    Tensor::manual_seed(3);
    Tensor r = Tensor::randint({100000}, -5, 7);
    CHECK(r.dtype() == dtypes::int32);
    std::vector<int32_t> v = r.to_vector<int32_t>();
    Tensor::manual_seed(3);
    CHECK(Tensor::randint({100000}, -5, 7).to_vector<int32_t>() == v);
    std::vector<int> hist(12);
    for (int32_t x : v) {
      REQUIRE(x >= -5);
      REQUIRE(x < 7);
      ++hist[static_cast<size_t>(x + 5)];
    }
    for (int h : hist) CHECK(std::abs(h - 100000 / 12) < 400);
    std::vector<double> d(v.begin(), v.end());
    auto [m, var] = moments(d);
    CHECK(m == doctest::Approx(0.5).epsilon(0.05));
    CHECK(var == doctest::Approx((144.0 - 1) / 12).epsilon(0.02));
    Tensor u = Tensor::randint({1000}, 0, 256, dtypes::uint8);
    CHECK(u.dtype() == dtypes::uint8);
    CHECK_THROWS_AS(Tensor::randint({2}, 3, 3), tg::Error);
  }
}

TEST_SUITE("tensor.assign") {
  TEST_CASE("assign a new value, a scalar, a broadcast value") {
    Tensor x = Tensor::from_vector<float>({1, 2, 3, 4}, Shape{2, 2});
    x.assign(Tensor::from_vector<float>({5, 6, 7, 8}, Shape{2, 2}));
    CHECK(x.to_vector<float>() == std::vector<float>{5, 6, 7, 8});
    x.assign(3.0);
    CHECK(x.to_vector<float>() == std::vector<float>{3, 3, 3, 3});
    x.assign(Tensor::from_vector<float>({1, 2}));
    CHECK(x.to_vector<float>() == std::vector<float>{1, 2, 1, 2});
    // The value is cast to the target's dtype.
    Tensor i = Tensor::zeros({3}, dtypes::int32).contiguous().realize();
    i.assign(Tensor::from_vector<float>({1.7f, -2.7f, 3}));
    CHECK(i.dtype() == dtypes::int32);
    CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{1, -2, 3});
    CHECK_THROWS_AS(x.assign(Tensor::ones({3})), tg::Error);
  }

  TEST_CASE("a pending assign read by another computation: the new values, and they land") {
    Tensor v = Tensor::from_vector(std::vector<float>{1, 2, 3, 4}).realize();
    Tensor x = Tensor::from_vector(std::vector<float>{10, 20, 30, 40}).realize();
    Tensor alias = v;
    v.assign(v * 0.5f);
    CHECK((x * v).to_vector<float>() == std::vector<float>{5, 20, 45, 80});
    CHECK(alias.to_vector<float>() == std::vector<float>{0.5f, 1, 1.5f, 2});
    // Read through a reshape and an expand, as batch_norm reads running statistics.
    Tensor w = Tensor::from_vector(std::vector<float>{1, 4}).realize();
    w.assign(w.mul(0.5f).add(1.0f));
    Tensor m = Tensor::ones({2, 2, 3});
    CHECK(m.sub(w.reshape({1, 2, 1})).to_vector<float>() ==
          std::vector<float>{-0.5f, -0.5f, -0.5f, -2, -2, -2, -0.5f, -0.5f, -0.5f, -2, -2, -2});
    CHECK(w.to_vector<float>() == std::vector<float>{1.5f, 3});
  }

  TEST_CASE("realized together, a reader of the old contents runs before the assign") {
    for (bool reader_first : {true, false}) {
      Tensor b = Tensor::from_vector(std::vector<float>{1, 2, 3}).realize();
      Tensor old = b * 10; // built before the assign: reads b's memory as it is now
      b.assign(b + 1);
      if (reader_first)
        Tensor::realize_all({old, b});
      else
        Tensor::realize_all({b, old});
      CHECK(old.to_vector<float>() == std::vector<float>{10, 20, 30});
      CHECK(b.to_vector<float>() == std::vector<float>{2, 3, 4});
    }
  }

  TEST_CASE("x.assign(x + 1) reads the old values; repeated steps accumulate") {
    Tensor x = Tensor::from_vector<float>({1, 2, 3});
    for (int k = 0; k < 3; ++k) x.assign(x + 1).realize();
    CHECK(x.to_vector<float>() == std::vector<float>{4, 5, 6});
    // Lazy chains of assigns, realized once.
    Tensor y = Tensor::from_vector<int32_t>({10, 20});
    y.assign(y * 2);
    y.assign(y + 1);
    CHECK(y.to_vector<int32_t>() == std::vector<int32_t>{21, 41});
  }

  TEST_CASE("x.assign(x.flip(0)) reads every old value before writing") {
    for (DType d : {dtypes::float32, dtypes::int8, dtypes::float16}) {
      INFO(d.name());
      Arr a = random_arr({9, 5}, -50, 50, d, 2);
      Tensor x = to_tensor(a, d);
      x.assign(x.flip({0})).realize();
      check_close(x, flip(a, {0}), {}, "flip(0)", d);
      Arr sq = random_arr({6, 6}, -50, 50, d, 3);
      Tensor y = to_tensor(sq, d);
      y.assign(y.transpose()).realize();
      check_close(y, permute(sq, {1, 0}), {}, "transpose", d);
      Arr s = random_arr({10}, -50, 50, d, 4);
      Tensor z = to_tensor(s, d);
      // Shift right by one: z[i] = z[i-1] (old values), z[0] = 0.
      z.assign(z.shrink({{0, 9}}).pad({{1, 0}})).realize();
      check_close(z, pad(shrink(s, {{0, 9}}), {{1, 0}}, 0), {}, "shift", d);
    }
  }

  TEST_CASE("assign is seen through every copy of the handle") {
    Tensor x = Tensor::from_vector<float>({1, 2});
    Tensor alias = x;
    x.assign(Tensor::from_vector<float>({7, 8}));
    CHECK(alias.to_vector<float>() == std::vector<float>{7, 8});
    alias.assign(alias + 1);
    CHECK(x.to_vector<float>() == std::vector<float>{8, 9});
    Tensor after = x * 10;
    CHECK(after.to_vector<float>() == std::vector<float>{80, 90});
  }

  TEST_CASE("assign to a lazy tensor and to a view of a buffer") {
    Tensor a = Tensor::ones({4}) * 2; // lazy: realized first, then written
    a.assign(a + Tensor::arange(4).cast(dtypes::float32));
    CHECK(a.to_vector<float>() == std::vector<float>{2, 3, 4, 5});
    Tensor e = Tensor::from_vector<float>({1}).expand({4});
    CHECK_THROWS_AS(e.assign(Tensor::zeros({4})), tg::Error);
  }
}

TEST_SUITE("tensor.assign") {
  TEST_CASE("assign through a shrunk, a permuted and a flipped view of a buffer") {
    Tensor x = Tensor::zeros({6}, dtypes::int32).contiguous().realize();
    Tensor v = x.shrink({{1, 4}});
    v.assign(Tensor::from_vector<int32_t>({7, 8, 9})).realize();
    CHECK(x.to_vector<int32_t>() == std::vector<int32_t>{0, 7, 8, 9, 0, 0});
    Tensor m = Tensor::arange(6).reshape({2, 3}).contiguous().realize();
    Tensor p = m.permute({1, 0});
    p.assign(p * 10).realize();
    CHECK(m.to_vector<int32_t>() == std::vector<int32_t>{0, 10, 20, 30, 40, 50});
    Tensor f = m.flip({1});
    f.assign(Tensor::from_vector<int32_t>({1, 2, 3})).realize();
    CHECK(m.to_vector<int32_t>() == std::vector<int32_t>{3, 2, 1, 3, 2, 1});
  }
}
