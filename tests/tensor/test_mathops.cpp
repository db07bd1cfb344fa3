// Activations and elementwise math against C++ loops in double: every op over
// float32 (through every view), float16 and bfloat16 (views in rotation), integer inputs where
// the op takes them, zero-size and 0-d tensors, nan and inf.
//
// Tolerances: tests/tensor/ref.hpp's per dtype, scaled per op (the `tol` column) by the rounded
// steps it takes: ops built from exp2/log2/sin (silu, softplus, elu, ...) 4x as ref.hpp's
// exp, mish and tan (two such ops chained) 8x. erf, gelu and asin/acos/atan are polynomials:
// float32 keeps the default tolerance (atol 1e-5 covers A&S 7.1.26's 1.5e-7 and 4.4.46's 2e-8
// plus rounding; the test "erf: stated float32 error" measures it), float16/bfloat16 evaluate
// the polynomial in their own precision, so 8x.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tensor/ref.hpp"
#include "tg/error.hpp"

using namespace tgt;
using tg::Scalar;

namespace {

const DType kF32 = dtypes::float32, kF16 = dtypes::float16, kBF16 = dtypes::bfloat16,
            kI32 = dtypes::int32, kI8 = dtypes::int8, kU8 = dtypes::uint8, kBool = dtypes::bool_;
const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x, double beta, double threshold) {
  return x * beta > threshold ? x : std::log1p(std::exp(x * beta)) / beta;
}
double relu6(double x) { return std::clamp(x, 0.0, 6.0); }

struct Unary {
  const char* name;
  std::function<Tensor(const Tensor&)> t;
  std::function<double(double)> h;
  double lo, hi;
  std::vector<DType> dts;
  double tol = 1;           // scale of ref.hpp's float tolerance
  bool keeps_dtype = false; // integer inputs keep their dtype (else they compute in float32)
};

std::vector<Unary> unary_ops() {
  const std::vector<DType> fl{kF32, kF16, kBF16};
  const std::vector<DType> fli{kF32, kF16, kBF16, kI32, kI8};
  const double selu_a = 1.6732632423543772848170429916717;
  const double selu_s = 1.0507009873554804934193349852946;
  return {
      {"gelu", [](const Tensor& x) { return x.gelu(); },
       [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }, -5, 5, fli, 8},
      {"gelu tanh", [](const Tensor& x) { return x.gelu("tanh"); },
       [](double x) {
         const double c = std::sqrt(2 / std::numbers::pi);
         return 0.5 * x * (1 + std::tanh(c * (x + 0.044715 * x * x * x)));
       },
       -5, 5, fli, 4},
      {"silu", [](const Tensor& x) { return x.silu(); }, [](double x) { return x * sigmoid(x); },
       -8, 8, fli, 4},
      {"swish",
       [](const Tensor& x) { return x.swish(); },
       [](double x) { return x * sigmoid(x); },
       -8,
       8,
       {kF32},
       4},
      {"softplus", [](const Tensor& x) { return x.softplus(); },
       [](double x) { return softplus(x, 1, 20); }, -30, 30, fli, 4},
      {"softplus beta 2 threshold 5", [](const Tensor& x) { return x.softplus(2, 5); },
       [](double x) { return softplus(x, 2, 5); }, -6, 6, fl, 4},
      {"mish", [](const Tensor& x) { return x.mish(); },
       [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }, -6, 6, fli, 8},
      {"elu", [](const Tensor& x) { return x.elu(); },
       [](double x) { return x > 0 ? x : std::expm1(x); }, -6, 6, fli, 4},
      {"elu alpha 1.5", [](const Tensor& x) { return x.elu(1.5); },
       [](double x) { return x > 0 ? x : 1.5 * std::expm1(x); }, -6, 100, fl, 4},
      {"celu alpha 0.7", [](const Tensor& x) { return x.celu(0.7); },
       [](double x) { return x > 0 ? x : 0.7 * std::expm1(x / 0.7); }, -6, 6, fli, 4},
      {"selu", [](const Tensor& x) { return x.selu(); },
       [=](double x) { return selu_s * (x > 0 ? x : selu_a * std::expm1(x)); }, -6, 6, fli, 4},
      {"leaky_relu", [](const Tensor& x) { return x.leaky_relu(); },
       [](double x) { return x > 0 ? x : 0.01 * x; }, -50, 50, fli},
      {"leaky_relu 0.2", [](const Tensor& x) { return x.leaky_relu(0.2); },
       [](double x) { return x > 0 ? x : 0.2 * x; }, -50, 50, fl},
      {"hardtanh", [](const Tensor& x) { return x.hardtanh(); },
       [](double x) { return std::clamp(x, -1.0, 1.0); }, -3, 3, fl, 1, true},
      {"hardtanh -2.5 3", [](const Tensor& x) { return x.hardtanh(-2.5, 3); },
       [](double x) { return std::clamp(x, -2.5, 3.0); }, -6, 6, fli, 1, true},
      {"relu6",
       [](const Tensor& x) { return x.relu6(); },
       relu6,
       -10,
       10,
       {kF32, kF16, kBF16, kI32, kI8, kU8},
       1,
       true},
      {"hardswish", [](const Tensor& x) { return x.hardswish(); },
       [](double x) { return x * relu6(x + 3) / 6; }, -6, 6, fli, 2},
      {"hardsigmoid", [](const Tensor& x) { return x.hardsigmoid(); },
       [](double x) { return relu6(x + 3) / 6; }, -6, 6, fli, 2},
      {"softsign", [](const Tensor& x) { return x.softsign(); },
       [](double x) { return x / (1 + std::abs(x)); }, -20, 20, fli, 2},
      {"logsigmoid", [](const Tensor& x) { return x.logsigmoid(); },
       [](double x) { return std::min(x, 0.0) - std::log1p(std::exp(-std::abs(x))); }, -30, 30, fli,
       4},
      {"erf", [](const Tensor& x) { return x.erf(); }, [](double x) { return std::erf(x); }, -4, 4,
       fli, 8},
      {"tan", [](const Tensor& x) { return x.tan(); }, [](double x) { return std::tan(x); }, -1.3,
       1.3, fl, 8},
      {"asin", [](const Tensor& x) { return x.asin(); }, [](double x) { return std::asin(x); }, -1,
       1, fl, 8},
      {"acos", [](const Tensor& x) { return x.acos(); }, [](double x) { return std::acos(x); }, -1,
       1, fl, 8},
      {"atan", [](const Tensor& x) { return x.atan(); }, [](double x) { return std::atan(x); }, -60,
       60, fli, 8},
      {"sinh", [](const Tensor& x) { return x.sinh(); }, [](double x) { return std::sinh(x); }, -5,
       5, fli, 4},
      {"cosh", [](const Tensor& x) { return x.cosh(); }, [](double x) { return std::cosh(x); }, -5,
       5, fli, 4},
      {"sign",
       [](const Tensor& x) { return x.sign(); },
       [](double x) { return static_cast<double>((x > 0) - (x < 0)); },
       -3,
       3,
       {kF32, kF16, kBF16, kI32, kI8, kU8, kBool},
       1,
       true},
  };
}

// Scale for the polynomial ops in half precision (see the header) and float32's own.
double op_tol(const Unary& op, DType out) {
  const std::string n = op.name;
  const bool poly = n == "gelu" || n == "erf" || n == "asin" || n == "acos" || n == "atan";
  if (poly && out == kF32) return 1;
  return op.tol;
}

} // namespace

static void activation_test(bool bf16) {
  const std::vector<std::string>& views = view_names();
  size_t k = 0;
  for (const Unary& op : unary_ops())
    for (DType d : op.dts) {
      if ((d == kBF16) != bf16) continue;
      std::vector<std::string> vs;
      if (d == kF32)
        vs = views;
      else
        vs = {views[k++ % views.size()]};
      for (const std::string& v : vs) {
        double lo = op.lo, hi = op.hi;
        if (d == kU8) lo = std::max(lo, 0.0);
        if (d == kI8) lo = std::max(lo, -128.0), hi = std::min(hi, 127.0);
        auto [t, a] = view_input(v, {5, 7}, d, lo, hi, static_cast<uint32_t>(k * 29 + 11));
        ++k;
        const DType out = d.is_float() || op.keeps_dtype ? d : kF32;
        Arr want = map(a, op.h);
        for (double& x : want.v) x = store(out, x);
        check_close(op.t(t), want, tol_for(out, op_tol(op, out)),
                    std::string(op.name) + " " + d.name() + " " + v, out);
      }
    }
}

TEST_SUITE("tensor.mathops") {
  TEST_CASE("activations and math against C++ loops: dtypes and views") { activation_test(false); }
  TEST_CASE("activations and math in bfloat16") { activation_test(true); }

  TEST_CASE("erf: stated float32 error (A&S 7.1.26, |error| <= 5e-7 measured on a grid)") {
    // 20001 points over [-6, 6]: the polynomial's 1.5e-7 plus float32 rounding of its steps.
    Arr a = generate({20001}, [](const std::vector<int64_t>& i) {
      return -6.0 + 12.0 * static_cast<double>(i[0]) / 20000;
    });
    std::vector<double> got = to_tensor(a, kF32).erf().to_vector<double>();
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i)
      worst = std::max(worst, std::abs(got[i] - std::erf(a.v[i])));
    MESSAGE("erf float32 max |error| = " << worst);
    CHECK(worst <= 5e-7);
    // Odd, saturates, exact at 0.
    CHECK(Tensor::from_vector<float>({0.0f}).erf().item<float>() == 0.0f);
    CHECK(Tensor::from_vector<float>({30.0f}).erf().item<float>() == 1.0f);
    CHECK(Tensor::from_vector<float>({-30.0f}).erf().item<float>() == -1.0f);
    CHECK(std::isnan(Tensor::from_vector<float>({NAN}).erf().item<float>()));
  }

  TEST_CASE("asin, acos, atan: ends, nan outside [-1, 1], atan of large and infinite x") {
    Tensor e = Tensor::from_vector<float>({-1, 1, 0});
    std::vector<float> as = e.asin().to_vector<float>(), ac = e.acos().to_vector<float>();
    CHECK(as[0] == doctest::Approx(-M_PI / 2).epsilon(1e-6));
    CHECK(as[1] == doctest::Approx(M_PI / 2).epsilon(1e-6));
    CHECK(as[2] == 0.0f);
    CHECK(ac[0] == doctest::Approx(M_PI).epsilon(1e-6));
    CHECK(std::abs(ac[1]) < 1e-6);
    std::vector<float> bad = Tensor::from_vector<float>({1.5f, -2.0f}).asin().to_vector<float>();
    CHECK(std::isnan(bad[0]));
    CHECK(std::isnan(bad[1]));
    // tinygrad's atan(x) = asin(x / sqrt(1 + x^2)) is off by 1e-4 at 1e4 and 0 above 1.8e19;
    // the reduction atan(x) = pi/2 - atan(1/x) keeps float32 precision.
    Arr big{{8}, {1e4, -1e4, 3e5, 1e19, 1e30, -3e38, kInf, -kInf}};
    check_close(to_tensor(big, kF32).atan(), map(big, [](double x) { return std::atan(x); }),
                tol_for(kF32), "atan of large x", kF32);
  }

  TEST_CASE("softplus, logsigmoid, elu, gelu: no overflow at the extremes") {
    Arr x{{6}, {-1000, -90, -20, 20, 90, 1000}};
    Tensor t = to_tensor(x, kF32);
    check_close(t.softplus(), map(x, [](double v) { return softplus(v, 1, 20); }), tol_for(kF32, 4),
                "softplus extremes");
    check_close(t.softplus(1, 1e9), map(x, [](double v) { return softplus(v, 1, 1e9); }),
                tol_for(kF32, 4), "softplus without threshold (stable form)");
    check_close(
        t.logsigmoid(),
        map(x, [](double v) { return std::min(v, 0.0) - std::log1p(std::exp(-std::abs(v))); }),
        tol_for(kF32, 4), "logsigmoid extremes");
    check_close(t.elu(), map(x, [](double v) { return v > 0 ? v : std::expm1(v); }),
                tol_for(kF32, 4), "elu extremes");
    check_close(t.gelu(), map(x, [](double v) { return v > 0 ? v : 0.0; }), tol_for(kF32),
                "gelu extremes");
    check_close(t.mish(), map(x, [](double v) { return v > 0 ? v : 0.0; }), tol_for(kF32, 8),
                "mish extremes");
    check_close(t.silu(), map(x, [](double v) { return v > 0 ? v : 0.0; }), tol_for(kF32, 4),
                "silu extremes");
  }

  TEST_CASE("isnan, isinf, isfinite, nan_to_num over dtypes") {
    Arr special{{2, 4}, {kNaN, kInf, -kInf, 0, -2.5, 1e30, -kNaN, 3}};
    for (DType d : {kF32, kF16, kBF16}) {
      Arr a = special;
      Tensor t = to_tensor(a, d).permute({1, 0}).permute({1, 0});
      const std::string n = d.name();
      check_close(t.isnan(), map(a, [](double x) { return std::isnan(x) ? 1.0 : 0.0; }), {},
                  "isnan " + n, kBool);
      check_close(t.isinf(), map(a, [](double x) { return std::isinf(x) ? 1.0 : 0.0; }), {},
                  "isinf " + n, kBool);
      check_close(t.isinf(true, false), map(a, [](double x) { return x == kInf ? 1.0 : 0.0; }), {},
                  "isinf positive only " + n, kBool);
      check_close(t.isinf(false, true), map(a, [](double x) { return x == -kInf ? 1.0 : 0.0; }), {},
                  "isinf negative only " + n, kBool);
      check_close(t.isinf(false, false), map(a, [](double) { return 0.0; }), {}, "isinf none " + n,
                  kBool);
      check_close(t.isfinite(), map(a, [](double x) { return std::isfinite(x) ? 1.0 : 0.0; }), {},
                  "isfinite " + n, kBool);
      const double big = d == kF32   ? std::numeric_limits<float>::max()
                         : d == kF16 ? 65504.0
                                     : 3.3895313892515355e38;
      check_close(t.nan_to_num(),
                  map(a,
                      [&](double x) {
                        return std::isnan(x) ? 0.0 : x == kInf ? big : x == -kInf ? -big : x;
                      }),
                  {}, "nan_to_num defaults " + n, d);
      check_close(t.nan_to_num(7, 100, -200),
                  map(a,
                      [&](double x) {
                        return std::isnan(x) ? 7.0 : x == kInf ? 100.0 : x == -kInf ? -200.0 : x;
                      }),
                  {}, "nan_to_num(7, 100, -200) " + n, d);
    }
    for (DType d : {kI32, kI8, kU8, kBool}) {
      Arr a = random_arr({3, 4}, 0, 9, d, 5);
      Tensor t = to_tensor(a, d);
      check_close(t.isnan(), map(a, [](double) { return 0.0; }), {}, "isnan int", kBool);
      check_close(t.isinf(), map(a, [](double) { return 0.0; }), {}, "isinf int", kBool);
      check_close(t.isfinite(), map(a, [](double) { return 1.0; }), {}, "isfinite int", kBool);
      check_close(t.nan_to_num(), a, {}, "nan_to_num int (unchanged)", d);
    }
  }

  TEST_CASE("sign: nan gives 0 (PyTorch), -0.0 gives 0, infinities") {
    Arr a{{6}, {kNaN, -0.0, kInf, -kInf, 1e-30, -1e-30}};
    check_close(to_tensor(a, kF32).sign(), Arr{{6}, {0, 0, 1, -1, 1, -1}}, {}, "sign specials",
                kF32);
    CHECK(to_tensor(a, kF32).erf().to_vector<float>()[2] == 1.0f);
  }

  TEST_CASE("lerp: tensor and scalar weights, broadcasting, exact ends, promotion") {
    size_t k = 0;
    for (DType d : {kF32, kF16, kBF16}) {
      const std::string v = view_names()[k % view_names().size()];
      auto [ts, s] = view_input(v, {5, 7}, d, -10, 10, static_cast<uint32_t>(k + 3));
      Arr e = random_arr({7}, -10, 10, d, static_cast<uint32_t>(k + 50));
      Arr w = random_arr({5, 1}, -0.5, 1.5, d, static_cast<uint32_t>(k + 80));
      w.v[0] = 0, w.v[1] = 1, w.v[2] = 0.5;
      ++k;
      Tensor te = to_tensor(e, d), tw = to_tensor(w, d);
      Arr want = generate({5, 7}, [&](const std::vector<int64_t>& i) {
        const double a = s.at(i), b = e.v[static_cast<size_t>(i[1])],
                     wt = w.v[static_cast<size_t>(i[0])];
        return store(d, a + wt * (b - a));
      });
      check_close(ts.lerp(te, tw), want, tol_for(d, 4), "lerp tensor weight " + v, d);
      // weight 0 and 1 are exact (PyTorch's two-sided formula).
      std::vector<double> got = ts.lerp(te, tw).to_vector<double>();
      for (int64_t j = 0; j < 7; ++j) {
        CHECK(got[static_cast<size_t>(j)] == s.at({0, j}));
        CHECK(got[static_cast<size_t>(7 + j)] == e.v[static_cast<size_t>(j)]);
      }
      Arr want2 = zip(s, e, [&](double a, double b) { return store(d, a + 0.25 * (b - a)); });
      check_close(ts.lerp(te, 0.25), want2, tol_for(d, 4), "lerp scalar weight " + v, d);
    }
    // Integers promote to float32.
    Tensor i = Tensor::from_vector<int32_t>({0, 10});
    CHECK(i.lerp(Tensor::from_vector<int32_t>({10, 20}), 0.5).to_vector<float>() ==
          std::vector<float>{5, 15});
    CHECK(i.lerp(Tensor::from_vector<int32_t>({10, 20}), 0.5).dtype() == kF32);
  }

  TEST_CASE("logical_and, logical_or, logical_xor over dtypes and broadcasting") {
    size_t k = 0;
    for (DType d : {kBool, kI32, kI8, kU8, kF32, kF16}) {
      const std::string v = view_names()[k % view_names().size()];
      auto [ta, a] = view_input(v, {4, 6}, d, 0, 2, static_cast<uint32_t>(k + 7));
      Arr b = random_arr({6}, 0, 2, d, static_cast<uint32_t>(k + 70));
      if (d.is_float())
        for (double& x : b.v) x = std::round(x) - 1; // -1, 0, 1
      ++k;
      Tensor tb = to_tensor(b, d);
      const std::string n = std::string(d.name()) + " " + v;
      check_close(ta.logical_and(tb),
                  zip(a, b, [](double x, double y) { return (x != 0) && (y != 0) ? 1.0 : 0.0; }),
                  {}, "logical_and " + n, kBool);
      check_close(ta.logical_or(tb),
                  zip(a, b, [](double x, double y) { return (x != 0) || (y != 0) ? 1.0 : 0.0; }),
                  {}, "logical_or " + n, kBool);
      check_close(ta.logical_xor(tb),
                  zip(a, b, [](double x, double y) { return (x != 0) != (y != 0) ? 1.0 : 0.0; }),
                  {}, "logical_xor " + n, kBool);
    }
  }

  TEST_CASE("copysign: signed zeros, nan's sign bit, integers, scalars") {
    for (DType d : {kF32, kF16, kBF16}) {
      Arr a = random_arr({4, 5}, -10, 10, d, 3);
      a.v[0] = kNaN, a.v[1] = -0.0, a.v[2] = kInf;
      Arr b = random_arr({5}, -3, 3, d, 4);
      b.v[0] = -0.0, b.v[1] = 0.0, b.v[2] = -kNaN, b.v[3] = kNaN, b.v[4] = -kInf;
      Tensor ta = to_tensor(a, d).flip({0}), tb = to_tensor(b, d);
      Arr af = flip(a, {0});
      Arr want = zip(af, b, [](double x, double y) { return std::copysign(x, y); });
      const std::string n = d.name();
      check_close(ta.copysign(tb), want, {}, "copysign " + n, d);
      // Signs are compared bit for bit: -0.0 and 0.0, -nan and nan.
      std::vector<double> got = ta.copysign(tb).to_vector<double>();
      for (size_t i = 0; i < got.size(); ++i)
        CHECK_MESSAGE(std::signbit(got[i]) == std::signbit(want.v[i]), n << " element " << i);
      check_close(ta.copysign(-1.0), map(af, [](double x) { return -std::abs(x); }), {},
                  "copysign scalar " + n, d);
    }
    Tensor i = Tensor::from_vector<int32_t>({3, -4, 5});
    CHECK(i.copysign(Tensor::from_vector<int32_t>({-1, 1, 0})).to_vector<float>() ==
          std::vector<float>{-3, 4, 5});
    CHECK(i.copysign(Tensor::from_vector<int32_t>({-1, 1, 0})).dtype() == kF32);
  }

  TEST_CASE("zero-size and 0-d inputs keep their shapes") {
    Tensor z = Tensor::ones({0, 3}, kF32), s = Tensor::full({}, 0.5, kF32);
    for (auto f : std::vector<std::function<Tensor(const Tensor&)>>{
             [](const Tensor& x) { return x.gelu(); }, [](const Tensor& x) { return x.mish(); },
             [](const Tensor& x) { return x.erf(); }, [](const Tensor& x) { return x.atan(); },
             [](const Tensor& x) { return x.sign(); }, [](const Tensor& x) { return x.isfinite(); },
             [](const Tensor& x) { return x.nan_to_num(); },
             [](const Tensor& x) { return x.hardswish(); }}) {
      CHECK(f(z).shape() == Shape{0, 3});
      CHECK(f(z).to_vector<double>().empty());
      CHECK(f(s).shape() == Shape{});
    }
    CHECK(s.erf().item<float>() == doctest::Approx(std::erf(0.5)).epsilon(1e-6));
    CHECK(s.gelu("tanh").item<float>() == doctest::Approx(0.3457140).epsilon(1e-5));
    CHECK(s.atan().item<float>() == doctest::Approx(std::atan(0.5)).epsilon(1e-6));
  }

  TEST_CASE("bad arguments raise tg::Error naming the value") {
    Tensor t = Tensor::ones({2, 3});
    CHECK_THROWS_WITH_AS(t.gelu("fast"), doctest::Contains("\"fast\""), tg::Error);
    CHECK_THROWS_WITH_AS(t.hardtanh(2, 1), doctest::Contains("min_val (2"), tg::Error);
    CHECK_THROWS_WITH_AS(t.softplus(0), doctest::Contains("beta"), tg::Error);
    CHECK_THROWS_WITH_AS(t.celu(0), doctest::Contains("alpha"), tg::Error);
    CHECK_THROWS_WITH_AS(t.lerp(Tensor::ones({4}), 0.5), doctest::Contains("broadcast"), tg::Error);
    CHECK_THROWS_WITH_AS(t.logical_and(Tensor::ones({2})), doctest::Contains("broadcast"),
                         tg::Error);
  }
}
