// Where PyTorch's semantics and tinygrad's differ, we follow PyTorch: NaN through relu and
// clamp, integer pow, the gradient at ties (max_dim, max_pool, clamp at its bounds), integer
// sums in int64, prod's gradient at zeros, half transcendentals rounded once from float32.
// Each expected value is what torch 2.x returns for the same call.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/float_formats.hpp"
#include "tg/tensor.hpp"

using tg::Shape;
using tg::Tensor;
namespace dtypes = tg::dtypes;

namespace {

Tensor f32(const std::vector<float>& v, const Shape& s) { return Tensor::from_vector(v, s); }
Tensor i32(const std::vector<int32_t>& v, const Shape& s) { return Tensor::from_vector(v, s); }
std::vector<float> grad_of(const Tensor& y, const Tensor& x) {
  return y.sum().gradient({x})[0].to_vector<float>();
}
const float kNan = std::numeric_limits<float>::quiet_NaN();

} // namespace

TEST_SUITE("tensor.torch_semantics") {
  TEST_CASE("relu and clamp keep NaN") {
    const std::vector<float> r = f32({kNan, -1, 0, 2}, {4}).relu().to_vector<float>();
    CHECK(std::isnan(r[0]));
    CHECK(r[1] == 0);
    CHECK(r[2] == 0);
    CHECK(r[3] == 2);
    const std::vector<float> c = f32({kNan, -5, 5}, {3}).clamp(-1, 1).to_vector<float>();
    CHECK(std::isnan(c[0]));
    CHECK(c[1] == -1);
    CHECK(c[2] == 1);
    // min above max: max everywhere, as torch.clamp.
    CHECK(f32({0, 3}, {2}).clamp(2, 1).to_vector<float>() == std::vector<float>{1, 1});
    // An integer tensor clamped by float bounds becomes float.
    CHECK(i32({-3, 4}, {2}).clamp(-0.5, 2.5).dtype() == dtypes::float32);
  }

  TEST_CASE("relu's gradient at 0 is 0; clamp's at its bounds is 1") {
    Tensor x = f32({-1, 0, 0.5, 2}, {4}).requires_grad_();
    CHECK(grad_of(x.relu(), x) == std::vector<float>{0, 0, 1, 1});
    Tensor y = f32({-2, -1, 0, 1, 2}, {5}).requires_grad_();
    CHECK(grad_of(y.clamp(-1, 1), y) == std::vector<float>{0, 1, 1, 1, 0});
    CHECK(grad_of(y.clamp(std::nullopt, 0), y) == std::vector<float>{1, 1, 1, 0, 0});
  }

  TEST_CASE("pow of integer tensors is integer and wraps as integer multiplication") {
    Tensor b = i32({2, -3, 0, 7, 1, -1, -1, 5}, {8});
    Tensor e = i32({10, 3, 0, 1, -4, -3, -2, -1}, {8});
    Tensor r = b.pow(e);
    CHECK(r.dtype() == dtypes::int32);
    // Negative exponents: 1 for base 1, +-1 for base -1, 0 otherwise (torch's integer pow).
    CHECK(r.to_vector<int32_t>() == std::vector<int32_t>{1024, -27, 1, 7, 1, -1, 1, 0});
    CHECK(b.pow(2).to_vector<int32_t>() == std::vector<int32_t>{4, 9, 0, 49, 1, 1, 1, 25});
    // 3^21 = 10460353203 wraps to 1870418611 in 32 bits, as torch.int32 does.
    CHECK(i32({3}, {1}).pow(21).to_vector<int32_t>() == std::vector<int32_t>{1870418611});
    CHECK(Tensor::from_vector(std::vector<int64_t>{3}, {1}).pow(39).to_vector<int64_t>() ==
          std::vector<int64_t>{4052555153018976267});
    CHECK(Tensor::from_vector(std::vector<uint8_t>{3, 2}, {2}).pow(5).to_vector<uint8_t>() ==
          std::vector<uint8_t>{243, 32});
    // An integer tensor to a float power is float; to a negative integer scalar an error.
    CHECK(i32({4}, {1}).pow(0.5).to_vector<float>() == std::vector<float>{2});
    CHECK_THROWS_WITH_AS(i32({4}, {1}).pow(-1).realize(),
                         doctest::Contains("negative integer powers"), tg::Error);
  }

  TEST_CASE("max_dim's values send the whole gradient to the returned index") {
    Tensor x = f32({1, 3, 3, 2, 5, 5, 5, 0}, {2, 4}).requires_grad_();
    auto [v, idx] = x.max_dim(1);
    CHECK(idx.to_vector<int32_t>() == std::vector<int32_t>{1, 0});
    CHECK(grad_of(v, x) == std::vector<float>{0, 1, 0, 0, 1, 0, 0, 0});
    auto [mv, midx] = x.min_dim(1);
    CHECK(midx.to_vector<int32_t>() == std::vector<int32_t>{0, 3});
    CHECK(grad_of(mv, x) == std::vector<float>{1, 0, 0, 0, 0, 0, 0, 1});
    // amax-style max() still splits among ties (torch.amax and torch.max without a dim).
    CHECK(grad_of(x.max({1}), x) ==
          std::vector<float>{0, 0.5, 0.5, 0, 1.0f / 3, 1.0f / 3, 1.0f / 3, 0});
  }

  TEST_CASE("max_pool2d sends the gradient to the first maximum of each window") {
    // One 2x4 plane, 2x2 windows: ties in both windows.
    Tensor x = f32({1, 1, 4, 2, 1, 0, 4, 4}, {1, 1, 2, 4}).requires_grad_();
    Tensor y = x.max_pool2d(2);
    CHECK(y.to_vector<float>() == std::vector<float>{1, 4});
    CHECK(grad_of(y, x) == std::vector<float>{1, 0, 1, 0, 0, 0, 0, 0});
    auto [v, i] = x.max_pool2d_with_indices(2);
    CHECK(i.to_vector<int32_t>() == std::vector<int32_t>{0, 2});
    CHECK(grad_of(v, x) == std::vector<float>{1, 0, 1, 0, 0, 0, 0, 0});
    // Overlapping windows add up at a shared first maximum.
    Tensor z = f32({5, 5, 5, 5, 5, 5}, {1, 1, 1, 6}).requires_grad_();
    CHECK(grad_of(z.max_pool2d({1, 2}, tg::Tensor::IntOrTuple{1, 1}), z) ==
          std::vector<float>{1, 1, 1, 1, 1, 0});
  }

  TEST_CASE("sums of integers and bools are int64 and do not wrap") {
    Tensor big = Tensor::full({4}, 2000000000, dtypes::int32);
    Tensor s = big.sum();
    CHECK(s.dtype() == dtypes::int64);
    CHECK(s.item<int64_t>() == 8000000000);
    CHECK(Tensor::full({300}, 1, dtypes::bool_).sum().item<int64_t>() == 300);
    CHECK(Tensor::full({300}, 200, dtypes::uint8).sum().item<int64_t>() == 60000);
    CHECK(Tensor::full({3}, 100000, dtypes::int32).prod().item<int64_t>() == 1000000000000000);
    CHECK(i32({2000000000, 2000000000}, {2}).cumsum(0).to_vector<int64_t>() ==
          std::vector<int64_t>{2000000000, 4000000000});
    // Float sums keep their dtype.
    CHECK(Tensor::full({3}, 1.5).sum().dtype() == dtypes::float32);
  }

  TEST_CASE("prod's gradient is the product of the others, also at zeros") {
    Tensor x = f32({2, 0, 3, 0, 0, 4, 5, 6, 7}, {3, 3}).requires_grad_();
    // Row 0 has one zero, row 1 two, row 2 none.
    CHECK(grad_of(x.prod({1}), x) == std::vector<float>{0, 6, 0, 0, 0, 0, 42, 35, 30});
    Tensor y = f32({3, 0, 2}, {3}).requires_grad_();
    CHECK(grad_of(y.prod(), y) == std::vector<float>{0, 6, 0});
  }

  TEST_CASE("half transcendentals are float32 results rounded once") {
    // Every half in [-10, 10] (6,000 values): exp, log, sigmoid and tanh within 1 ulp of the
    // correctly rounded value (the half-precision scaling of exp2/log2 cost up to 6 ulp).
    std::vector<float> xs;
    for (uint16_t h = 0; h < 0x7c00; ++h) {
      const double v = tg::half_to_float(h);
      if (v >= 1e-3 && v <= 10) {
        xs.push_back(static_cast<float>(v));
        xs.push_back(static_cast<float>(-v));
      }
    }
    const Tensor x =
        Tensor::from_vector(xs, {static_cast<int64_t>(xs.size())}).cast(dtypes::float16);
    struct Case {
      const char* name;
      Tensor got;
      double (*ref)(double);
    };
    const Case cases[] = {
        {"exp", x.exp(), [](double v) { return std::exp(v); }},
        {"log", x.abs().log(), [](double v) { return std::log(std::fabs(v)); }},
        {"sigmoid", x.sigmoid(), [](double v) { return 1 / (1 + std::exp(-v)); }},
        {"tanh", x.tanh(), [](double v) { return std::tanh(v); }},
    };
    for (const Case& c : cases) {
      CAPTURE(c.name);
      const std::vector<uint16_t> got = c.got.bitcast(dtypes::uint16).to_vector<uint16_t>();
      int worst = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const uint16_t want = tg::float_to_half(c.ref(xs[i]));
        if ((want & 0x7c00) == 0x7c00 || want == 0) continue; // overflow to inf, underflow
        worst = std::max(
            worst, std::abs(static_cast<int>(got[i] & 0x7fff) - static_cast<int>(want & 0x7fff)));
      }
      CHECK(worst <= 1);
    }
  }
}
