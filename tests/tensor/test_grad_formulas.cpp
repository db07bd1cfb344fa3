// PyTorch's closed-form gradients where differentiating the forward graph goes wrong: sigmoid
// (and tanh, gelu, quick_gelu, silu through it) at extreme inputs, acosh and atanh outside their
// domain, softmax and softmin (rounding), sign and copysign (zero, not missing), the sum that
// undoes a float16 broadcast (accumulated in float32, rounded once). Checked against
// the formulas in float32 at the points that used to give nan, and by float64 finite
// differences where the functions are smooth (suite tensor.grad_formulas).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "tensor/gradcheck.hpp"
#include "tensor/ref.hpp"
#include "tg/tensor.hpp"

using namespace tgt;

namespace {

using Xs = std::vector<Tensor>;

// d(sum(f(x)))/dx in float32 at the given points.
std::vector<float> grad_at(const std::function<Tensor(const Tensor&)>& f,
                           const std::vector<float>& xs) {
  Tensor x = Tensor::from_vector(xs);
  return f(x).sum().gradient({x})[0].to_vector<float>();
}

} // namespace

TEST_SUITE("tensor.grad_formulas") {
  TEST_CASE("a float16 matmul's gradients sum in float32 and round once") {
    // d(sum(x @ y))/dy[k, j] = sum_i x[i, k]: 64 float16 values in [-2, 2) (tinygrad's
    // test_gemm_fp16). Summed in float16, every step rounds; in float32 (exact here) and rounded
    // once, each gradient is within half a float16 ulp of the exact column sum.
    const int64_t n = 64;
    std::vector<float> xs(static_cast<size_t>(n * n));
    for (size_t i = 0; i < xs.size(); ++i)
      xs[i] = static_cast<float>((i * 7919) % 4001) / 1000.0f - 2.0f;
    Tensor x = Tensor::from_vector(xs).reshape({n, n}).cast(dtypes::float16);
    xs = x.cast(dtypes::float32).to_vector<float>(); // the values the product sees
    Tensor y = Tensor::ones({n, n}, dtypes::float16);
    const std::vector<float> dy =
        x.matmul(y).sum().gradient({y})[0].cast(dtypes::float32).to_vector<float>();
    int64_t off = 0;
    double worst = 0;
    for (int64_t k = 0; k < n; ++k) {
      double exact = 0;
      for (int64_t i = 0; i < n; ++i) exact += xs[static_cast<size_t>(i * n + k)];
      const double half_ulp =
          exact == 0
              ? 0
              : std::ldexp(1.0, static_cast<int>(std::floor(std::log2(std::abs(exact)))) - 11);
      for (int64_t j = 0; j < n; ++j) {
        const double err = std::abs(dy[static_cast<size_t>(k * n + j)] - exact);
        worst = std::max(worst, err);
        off += err > half_ulp + 1e-7;
      }
    }
    MESSAGE("largest error of the float16 gradient: " << worst);
    CHECK(off == 0);
  }

  TEST_CASE("sigmoid-based activations have finite gradients at extreme inputs") {
    const std::vector<float> xs{-400, -300, -90, 90, 300, 400};
    for (float g : grad_at([](const Tensor& x) { return x.sigmoid(); }, xs)) CHECK(g == 0);
    for (float g : grad_at([](const Tensor& x) { return x.tanh(); }, xs)) CHECK(g == 0);
    // x * sigmoid(a x): 0 far below zero, 1 far above.
    const std::vector<float> want{0, 0, 0, 1, 1, 1};
    CHECK(grad_at([](const Tensor& x) { return x.quick_gelu(); }, xs) == want);
    CHECK(grad_at([](const Tensor& x) { return x.gelu("tanh"); }, xs) == want);
    CHECK(grad_at([](const Tensor& x) { return x.silu(); }, xs) == want);
    // Half inputs compute in float32 and round once: still finite.
    Tensor h = Tensor::from_vector(std::vector<float>{-300, 300}).cast(dtypes::float16);
    CHECK(h.sigmoid().sum().gradient({h})[0].cast(dtypes::float32).to_vector<float>() ==
          std::vector<float>{0, 0});
  }

  TEST_CASE("acosh and atanh: PyTorch's formulas outside the domain") {
    // acosh' = 1 / sqrt(x^2 - 1): finite below -1 (where the value is nan), nan in (-1, 1).
    const std::vector<float> a = grad_at([](const Tensor& x) { return x.acosh(); }, {-2, 0.5, 2});
    CHECK(a[0] == doctest::Approx(1 / std::sqrt(3.0)));
    CHECK(std::isnan(a[1]));
    CHECK(a[2] == doctest::Approx(1 / std::sqrt(3.0)));
    // atanh' = 1 / (1 - x^2): negative beyond 1.
    const std::vector<float> t = grad_at([](const Tensor& x) { return x.atanh(); }, {-300, 0.5, 2});
    CHECK(t[0] == doctest::Approx(1 / (1 - 90000.0)));
    CHECK(t[1] == doctest::Approx(1 / 0.75));
    CHECK(t[2] == doctest::Approx(-1 / 3.0));
    GradcheckOptions o;
    o.lo = 1.2;
    o.hi = 3;
    CHECK(gradcheck([](const Xs& x) { return x[0].acosh(); }, {{3, 4}}, o));
    o.lo = -0.9;
    o.hi = 0.9;
    CHECK(gradcheck([](const Xs& x) { return x[0].atanh(); }, {{3, 4}}, o));
  }

  TEST_CASE("softmax and softmin: y * (g - sum(g * y)) along the axis") {
    // The gradient of a sum is y * (1 - sum(y)): rounding noise, far below 1e-7.
    Arr a = random_arr({45, 65}, -2, 2, dtypes::float32, 7);
    Tensor x = to_tensor(a, dtypes::float32);
    for (float g : x.softmax(1).sum().gradient({x})[0].to_vector<float>())
      CHECK(std::abs(g) < 1e-7);
    for (float g : x.softmin(1).sum().gradient({x})[0].to_vector<float>())
      CHECK(std::abs(g) < 1e-7);
    // A 0-d softmax is 1 with gradient 0.
    Tensor s = Tensor::full({}, 0.5f);
    CHECK(s.softmax(0).item<float>() == 1);
    CHECK(s.softmax(-1).sum().gradient({s})[0].item<float>() == 0);
    CHECK(gradcheck([](const Xs& v) { return v[0].softmax(0).exp(); }, {{3, 4}}));
    CHECK(gradcheck([](const Xs& v) { return v[0].softmax(-1).exp(); }, {{3, 4}}));
    CHECK(gradcheck([](const Xs& v) { return v[0].softmin(1).square(); }, {{2, 5}}));
  }

  TEST_CASE("sign and copysign: zero gradients are gradients, not errors") {
    Tensor x = Tensor::from_vector(std::vector<float>{-1, 0, 1});
    CHECK(x.sign().sum().gradient({x})[0].to_vector<float>() == std::vector<float>{0, 0, 0});
    // d/dx copysign(x, y) = copysign(x, y) / x, 0 at x = 0; d/dy = 0.
    Tensor a = Tensor::from_vector(std::vector<float>{-1, -0.0f, 0, 1, 2, -3});
    Tensor b = Tensor::from_vector(std::vector<float>{1, -1, -0.0f, -2, 0, NAN});
    const std::vector<Tensor> g = a.copysign(b).sum().gradient({a, b});
    CHECK(g[0].to_vector<float>() == std::vector<float>{-1, 0, 0, -1, 1, -1});
    CHECK(g[1].to_vector<float>() == std::vector<float>{0, 0, 0, 0, 0, 0});
    // Broadcast operands get summed gradients of their own shape.
    Tensor c = Tensor::from_vector(std::vector<float>{2, -2}).reshape({2, 1});
    Tensor d = Tensor::from_vector(std::vector<float>{1, -1, 1});
    const std::vector<Tensor> gb = c.copysign(d).sum().gradient({c, d});
    CHECK(gb[0].to_vector<float>() == std::vector<float>{1, -1});
    CHECK(gb[1].shape() == Shape{3});
  }
}
