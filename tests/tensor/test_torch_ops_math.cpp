// PyTorch's elementwise math beyond tinygrad's (log1p ... isclose): forward against <cmath>
// in double over float32 (plus float16 and integer inputs where the op takes them), edge values
// (nan, +-inf, +-0, poles), and gradients by float64 finite differences (gradcheck.hpp).
//
// Tolerances: ref.hpp's float32 one scaled by the op's steps (4x for one exp/log, 8x for two);
// the stated accuracies (log1p/expm1 near 0, erfc's tail, erfinv, lgamma) get their own checks.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "tensor/gradcheck.hpp"
#include "tensor/torch_ops_check.hpp"
#include "tg/error.hpp"

using namespace tgt;
using tg::Scalar;

namespace {

const DType kF32 = dtypes::float32, kF64 = dtypes::float64;
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// erfinv by Newton's method on std::erf, in double.
double erfinv_ref(double y) {
  if (y <= -1) return y == -1 ? -kInf : kNaN;
  if (y >= 1) return y == 1 ? kInf : kNaN;
  if (std::isnan(y)) return kNaN;
  double x = 0;
  for (int i = 0; i < 100; ++i) {
    const double step = (std::erf(x) - y) / (2 / std::sqrt(std::numbers::pi) * std::exp(-x * x));
    x -= step;
    if (std::abs(step) < 1e-17 * std::max(1.0, std::abs(x))) break;
  }
  return x;
}

double logaddexp_ref(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return kNaN;
  if (a == b) return a + std::log(2.0);
  const double m = std::max(a, b);
  return m + std::log1p(std::exp(-std::abs(a - b)));
}

double xlogy_ref(double x, double y) {
  if (std::isnan(y)) return kNaN;
  if (x == 0) return 0;
  return x * std::log(y);
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> t;
  std::function<double(double)> h;
  double lo, hi;
  double tol;
  std::vector<double> edges; // extra inputs: nan, infinities, zeros, poles
};

std::vector<UnaryCase> unary_cases() {
  const std::vector<double> common{kNaN, kInf, -kInf, 0.0, -0.0};
  return {
      {"log1p",
       [](const Tensor& x) { return x.log1p(); },
       [](double x) { return std::log1p(x); },
       -0.99,
       20,
       4,
       {kNaN, kInf, -kInf, 0.0, -1.0, -2.0, 1e-30}},
      {"expm1",
       [](const Tensor& x) { return x.expm1(); },
       [](double x) { return std::expm1(x); },
       -10,
       10,
       4,
       {kNaN, kInf, -kInf, 0.0, 88.0, -100.0, 1e-30}},
      {"erfc", [](const Tensor& x) { return x.erfc(); }, [](double x) { return std::erfc(x); }, -4,
       9, 8, common},
      {"erfinv",
       [](const Tensor& x) { return x.erfinv(); },
       erfinv_ref,
       -0.999,
       0.999,
       8,
       {kNaN, 1.0, -1.0, 0.0, 1.5, -1.5}},
      {"lgamma",
       [](const Tensor& x) { return x.lgamma(); },
       [](double x) { return std::lgamma(x); },
       -6.5,
       12,
       8,
       {kNaN, kInf, -kInf, 0.0, -1.0, -2.0, 1.0, 2.0, 0.5, -0.5}},
      {"log10",
       [](const Tensor& x) { return x.log10(); },
       [](double x) { return std::log10(x); },
       1e-3,
       1e4,
       4,
       {kNaN, kInf, -kInf, 0.0, -1.0}},
      {"asinh",
       [](const Tensor& x) { return x.asinh(); },
       [](double x) { return std::asinh(x); },
       -30,
       30,
       4,
       {kNaN, kInf, -kInf, 0.0, 1e30, -1e30, 1e-20}},
      {"atanh",
       [](const Tensor& x) { return x.atanh(); },
       [](double x) { return std::atanh(x); },
       -0.999,
       0.999,
       4,
       {kNaN, 1.0, -1.0, 0.0, 2.0, -2.0, 1e-20}},
      {"frac", [](const Tensor& x) { return x.frac(); }, [](double x) { return x - std::trunc(x); },
       -50, 50, 1, common},
      {"logit",
       [](const Tensor& x) { return x.logit(); },
       [](double x) { return std::log(x / (1 - x)); },
       0.001,
       0.999,
       4,
       {kNaN, 0.0, 1.0, -1.0, 2.0}},
      {"logit eps",
       [](const Tensor& x) { return x.logit(0.01); },
       [](double x) {
         const double c = std::clamp(x, 0.01, 0.99);
         return std::isnan(x) ? x : std::log(c / (1 - c));
       },
       -1,
       2,
       4,
       {kNaN, 0.0, 1.0}},
  };
}

} // namespace

TEST_SUITE("tensor.torch_ops") {
  TEST_CASE("unary math: log1p, expm1, erfc, erfinv, lgamma, log10, asinh, atanh, frac, logit") {
    CheckBatch b;
    for (const UnaryCase& c : unary_cases()) {
      Arr a = random_arr({40}, c.lo, c.hi, kF32, 17);
      a.v.insert(a.v.end(), c.edges.begin(), c.edges.end());
      a.shape = {static_cast<int64_t>(a.v.size())};
      Tensor t = to_tensor(a, kF32); // (rounds a to what float32 holds, before the reference)
      b.add(c.t(t), map(a, c.h), tol_for(kF32, c.tol), c.name, kF32);
      // Through a view (flipped, 2-D) and from float16 (its result rounded to float16).
      Arr m = random_arr({3, 4}, c.lo, c.hi, kF32, 29);
      Tensor tm = to_tensor(m, kF32).flip({0, 1});
      b.add(c.t(tm), map(flip(m, {0, 1}), c.h), tol_for(kF32, c.tol),
            std::string(c.name) + " flipped view");
      Arr h = random_arr({8}, c.lo, c.hi, dtypes::float16, 31);
      Tensor th = to_tensor(h, dtypes::float16);
      b.add(c.t(th), map(h, c.h), tol_for(dtypes::float16, c.tol), std::string(c.name) + " float16",
            dtypes::float16);
    }
    // Integer inputs compute in float32 (as exp does); frac refuses them.
    Arr ints{{4}, {0, 1, 2, 9}};
    Tensor ti = to_tensor(ints, dtypes::int32);
    b.add(ti.log1p(), map(ints, [](double x) { return std::log1p(x); }), tol_for(kF32, 4),
          "log1p int32", kF32);
    b.add(ti.lgamma(), map(ints, [](double x) { return std::lgamma(x); }), tol_for(kF32, 8),
          "lgamma int32 (poles at 0)", kF32);
    b.run();
    CHECK_THROWS_WITH_AS(ti.frac(), doctest::Contains("frac"), tg::Error);
  }

  TEST_CASE("stated accuracy: log1p and expm1 near 0, erfc's tail, erfinv, lgamma") {
    CheckBatch b;
    // Relative error only (atol 0): where log(1 + x) and exp(x) - 1 lose every digit.
    Arr small{{8}, {1e-10, -1e-10, 3e-8, -3e-8, 1e-5, -1e-5, 2e-3, -2e-3}};
    Tensor ts = to_tensor(small, kF32);
    b.add(ts.log1p(), map(small, [](double x) { return std::log1p(x); }), {0, 1e-6}, "log1p ~0");
    b.add(ts.expm1(), map(small, [](double x) { return std::expm1(x); }), {0, 1e-6}, "expm1 ~0");
    // erfc's tail keeps relative precision where 1 - erf(x) is 0 in float32 (float32 rounds
    // the exponent -x^2 + p(t) to 2e-6 absolute near x = 5: that bounds it).
    Arr tail{{4}, {3, 5, 7, 9}};
    Tensor tt = to_tensor(tail, kF32);
    b.add(tt.erfc(), map(tail, [](double x) { return std::erfc(x); }), {0, 1e-5}, "erfc tail");
    // The approximations in float64 show their own error (not float32 rounding).
    Arr mid = random_arr({50}, -0.99, 0.99, kF64, 5);
    b.add(to_tensor(mid, kF64).erfinv(), map(mid, erfinv_ref), {1e-7, 1e-6}, "erfinv float64");
    Arr g = random_arr({50}, -8, 30, kF64, 6);
    b.add(to_tensor(g, kF64).lgamma(), map(g, [](double x) { return std::lgamma(x); }),
          {1e-10, 1e-10}, "lgamma float64 (Lanczos)");
    b.run();
  }

  TEST_CASE("binary math: atan2, fmod, logaddexp, hypot, xlogy (broadcast, edges, dtypes)") {
    CheckBatch b;
    const std::vector<double> e{kNaN, kInf, -kInf, 0.0, -0.0, 1.0, -1.0, 2.5};
    Arr ea{{8, 1}, e}, eb{{1, 8}, e};
    Tensor ta = to_tensor(ea, kF32), tb = to_tensor(eb, kF32);
    auto atan2_ref = [](double y, double x) { return std::atan2(y, x); };
    auto fmod_ref = [](double a, double d) { return std::fmod(a, d); };
    auto hypot_ref = [](double a, double d) { return std::hypot(a, d); };
    b.add(ta.atan2(tb), zip(ea, eb, atan2_ref), tol_for(kF32), "atan2 edges (all quadrants)");
    b.add(ta.fmod(tb), zip(ea, eb, fmod_ref), tol_for(kF32), "fmod edges");
    b.add(ta.logaddexp(tb), zip(ea, eb, logaddexp_ref), tol_for(kF32, 4), "logaddexp edges");
    b.add(ta.hypot(tb), zip(ea, eb, hypot_ref), tol_for(kF32), "hypot edges");
    b.add(ta.xlogy(tb), zip(ea, eb, xlogy_ref), tol_for(kF32, 4), "xlogy edges");
    // Random values, broadcast (3, 1) with (4).
    Arr ra = random_arr({3, 1}, -9, 9, kF32, 3), rb = random_arr({4}, -9, 9, kF32, 4);
    Tensor xa = to_tensor(ra, kF32), xb = to_tensor(rb, kF32);
    b.add(xa.atan2(xb), zip(ra, rb, atan2_ref), tol_for(kF32), "atan2 random");
    b.add(xa.fmod(xb), zip(ra, rb, fmod_ref), tol_for(kF32, 4), "fmod random");
    b.add(xa.logaddexp(xb), zip(ra, rb, logaddexp_ref), tol_for(kF32, 4), "logaddexp random");
    b.add(xa.hypot(xb), zip(ra, rb, hypot_ref), tol_for(kF32), "hypot random");
    b.add(xa.abs().xlogy(xb.abs()),
          zip(map(ra, [](double v) { return std::abs(v); }),
              map(rb, [](double v) { return std::abs(v); }), xlogy_ref),
          tol_for(kF32, 4), "xlogy random");
    // No overflow in the squares or the exponentials.
    Arr big{{3}, {1e30, 3e38, -1e38}}, big2{{3}, {1e30, 1e38, 3e38}};
    Tensor tbig = to_tensor(big, kF32), tbig2 = to_tensor(big2, kF32);
    b.add(tbig.hypot(tbig2), zip(big, big2, hypot_ref), tol_for(kF32), "hypot without overflow");
    b.add(tbig.logaddexp(tbig2), zip(big, big2, logaddexp_ref), tol_for(kF32),
          "logaddexp without overflow");
    // fmod on integers: C's truncation (the sign of the dividend), int32 kept; a scalar divisor.
    Arr ia{{6}, {7, -7, 7, -7, 0, 5}}, ib{{6}, {3, 3, -3, -3, 4, 5}};
    Tensor tia = to_tensor(ia, dtypes::int32), tib = to_tensor(ib, dtypes::int32);
    b.exact(tia.fmod(tib), zip(ia, ib, [](double a, double d) { return std::fmod(a, d); }),
            "fmod int32", dtypes::int32);
    b.exact(tia.fmod(Scalar(-4)), map(ia, [](double a) { return std::fmod(a, -4.0); }),
            "fmod int32 by a scalar", dtypes::int32);
    b.add(xa.fmod(Scalar(2.5)), map(ra, [](double a) { return std::fmod(a, 2.5); }),
          tol_for(kF32, 4), "fmod by a float scalar");
    b.add(xa.xlogy(Scalar(3.0)), map(ra, [](double a) { return xlogy_ref(a, 3.0); }),
          tol_for(kF32, 4), "xlogy by a scalar");
    // Integer operands promote to float32.
    b.add(tia.atan2(tib), zip(ia, ib, atan2_ref), tol_for(kF32), "atan2 int32", kF32);
    b.add(tia.hypot(tib), zip(ia, ib, hypot_ref), tol_for(kF32), "hypot int32", kF32);
    b.run();
    CHECK_THROWS_AS(tb.atan2(Tensor::zeros({3, 3})), tg::Error); // (1, 8) and (3, 3)
  }

  TEST_CASE("clamp with tensor bounds, isclose and allclose") {
    CheckBatch b;
    Arr x = random_arr({3, 4}, -3, 3, kF32, 8), lo = random_arr({4}, -2, 0, kF32, 9),
        hi = random_arr({3, 1}, 0, 2, kF32, 10);
    x.v[0] = kNaN;
    lo.v[1] = kNaN; // a nan bound gives nan, as PyTorch
    Tensor tx = to_tensor(x, kF32), tlo = to_tensor(lo, kF32), thi = to_tensor(hi, kF32);
    auto cl = [](double v, double l, double h) {
      if (std::isnan(v) || std::isnan(l) || std::isnan(h)) return kNaN;
      return std::min(std::max(v, l), h);
    };
    Arr both = generate({3, 4}, [&](const std::vector<int64_t>& i) {
      return cl(x.v[static_cast<size_t>(i[0] * 4 + i[1])], lo.v[static_cast<size_t>(i[1])],
                hi.v[static_cast<size_t>(i[0])]);
    });
    b.add(tx.clamp(tlo, thi), both, {}, "clamp(min, max) tensors");
    b.add(tx.clamp(std::nullopt, thi),
          zip(x, hi, [&](double v, double h) { return cl(v, -kInf, h); }), {}, "clamp(max only)");
    b.add(tx.clamp(tlo, std::nullopt),
          zip(x, lo, [&](double v, double l) { return cl(v, l, kInf); }), {}, "clamp(min only)");
    // min > max gives max (PyTorch's min(max(x, lo), hi)); integer self with float bounds
    // promotes.
    Arr xi{{4}, {-5, 0, 3, 9}};
    Tensor txi = to_tensor(xi, dtypes::int32);
    Arr l2{{1}, {2.5}}, h2{{1}, {1.0}};
    b.add(txi.clamp(to_tensor(l2, kF32), to_tensor(h2, kF32)), map(xi, [](double) { return 1.0; }),
          {}, "clamp min > max", kF32);
    // isclose: PyTorch's |a - b| <= atol + rtol |b|, equal infinities, nan.
    Arr a{{8}, {1.0, 1.0, kInf, kInf, -kInf, kNaN, 0.0, 1e-9}};
    Arr c{{8}, {1.0 + 1e-6, 1.1, kInf, -kInf, -kInf, kNaN, 1e-9, 0.0}};
    Tensor ta = to_tensor(a, kF32), tc = to_tensor(c, kF32);
    b.exact(ta.isclose(tc), Arr{{8}, {1, 0, 1, 0, 1, 0, 1, 1}}, "isclose", dtypes::bool_);
    b.exact(ta.isclose(tc, 1e-5, 1e-8, true), Arr{{8}, {1, 0, 1, 0, 1, 1, 1, 1}},
            "isclose equal_nan", dtypes::bool_);
    b.exact(ta.isclose(tc, 0.2, 0), Arr{{8}, {1, 1, 1, 0, 1, 0, 0, 0}}, "isclose rtol only");
    Arr ia{{3}, {5, 100, -7}}, ib{{3}, {5, 101, 7}};
    b.exact(to_tensor(ia, dtypes::int32).isclose(to_tensor(ib, dtypes::int32), 0.01, 0),
            Arr{{3}, {1, 1, 0}}, "isclose int32");
    b.run();
    CHECK(tx.allclose(tx, 1e-5, 1e-8, true));
    CHECK_FALSE(tx.allclose(tx)); // the nan at [0, 0]
    CHECK_FALSE(ta.allclose(tc));
    CHECK_THROWS_WITH_AS(tx.clamp(std::nullopt, std::optional<Tensor>{}),
                         doctest::Contains("at least one"), tg::Error);
    CHECK_THROWS_WITH_AS(ta.isclose(tc, -1), doctest::Contains("non-negative"), tg::Error);
  }

  TEST_CASE("gradients of the elementwise math (float64 finite differences)") {
    auto one = [](std::function<Tensor(const Tensor&)> f) {
      return [f](const std::vector<Tensor>& x) { return f(x[0]); };
    };
    GradcheckOptions o;
    o.lo = -0.8, o.hi = 3;
    CHECK(gradcheck(one([](const Tensor& x) { return x.log1p(); }), {{2, 3}}, o));
    o.lo = -3, o.hi = 3;
    CHECK(gradcheck(one([](const Tensor& x) { return x.expm1(); }), {{2, 3}}, o));
    CHECK(gradcheck(one([](const Tensor& x) { return x.erfc(); }), {{2, 3}}, o));
    CHECK(gradcheck(one([](const Tensor& x) { return x.asinh(); }), {{2, 3}}, o));
    CHECK(gradcheck(one([](const Tensor& x) { return x.log1p(); }), {{6}},
                    {.lo = -1e-3, .hi = 1e-3, .h = 1e-9})); // near 0 (the u == 1 branch nearby)
    o.lo = -0.9, o.hi = 0.9;
    CHECK(gradcheck(one([](const Tensor& x) { return x.erfinv(); }), {{2, 3}}, o));
    CHECK(gradcheck(one([](const Tensor& x) { return x.atanh(); }), {{2, 3}}, o));
    o.lo = 0.6, o.hi = 9;
    CHECK(gradcheck(one([](const Tensor& x) { return x.lgamma(); }), {{2, 3}}, o));
    CHECK(gradcheck(one([](const Tensor& x) { return x.log10(); }), {{2, 3}}, o));
    CHECK(gradcheck_at(one([](const Tensor& x) { return x.lgamma(); }),
                       {away_from({2, 3}, -4, 0.4, 3, {-4, -3, -2, -1, 0}, 0.1)}));
    CHECK(gradcheck_at(one([](const Tensor& x) { return x.frac(); }),
                       {away_from({2, 3}, -3, 3, 4, {-3, -2, -1, 0, 1, 2, 3})}));
    o.lo = 0.1, o.hi = 0.9;
    CHECK(gradcheck(one([](const Tensor& x) { return x.logit(); }), {{2, 3}}, o));
    auto two = [](std::function<Tensor(const Tensor&, const Tensor&)> f) {
      return [f](const std::vector<Tensor>& x) { return f(x[0], x[1]); };
    };
    o.lo = -3, o.hi = 3;
    CHECK(gradcheck(two([](const Tensor& a, const Tensor& c) { return a.atan2(c); }), {{2, 3}, {3}},
                    o));
    CHECK(gradcheck(two([](const Tensor& a, const Tensor& c) { return a.logaddexp(c); }),
                    {{2, 3}, {2, 3}}, o));
    CHECK(gradcheck(two([](const Tensor& a, const Tensor& c) { return a.hypot(c); }),
                    {{2, 3}, {2, 1}}, o));
    // fmod away from its jumps (a / b an integer): a in [0.2, 0.8] + k, b in [1.1, 1.9] * sign.
    CHECK(gradcheck_at(two([](const Tensor& a, const Tensor& c) { return a.fmod(c); }),
                       {Arr{{4}, {2.3, -2.3, 5.6, -0.4}}, Arr{{4}, {1.5, 1.5, -1.7, -1.3}}}));
    o.lo = 0.2, o.hi = 3;
    CHECK(gradcheck(two([](const Tensor& a, const Tensor& c) { return a.xlogy(c); }),
                    {{2, 3}, {2, 3}}, o));
    // clamp with tensor bounds: gradient to x inside, to the bound outside.
    CHECK(gradcheck_at([](const std::vector<Tensor>& x) { return x[0].clamp(x[1], x[2]); },
                       {Arr{{5}, {-2.0, -0.5, 0.3, 1.7, 3.0}},
                        Arr{{5}, {-1.0, -1.0, -1.0, -1.0, -1.0}}, Arr{{1}, {1.0}}}));
  }
}
