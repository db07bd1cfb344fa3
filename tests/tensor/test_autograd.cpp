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

using Fn = std::function<Tensor(const std::vector<Tensor>&)>;
Fn unary(Tensor (Tensor::*op)() const) {
  return [op](const std::vector<Tensor>& x) { return (x[0].*op)(); };
}

int64_t kernels(const std::vector<tg::ScheduleItem>& items) {
  int64_t n = 0;
  for (const tg::ScheduleItem& i : items) n += i.kind == tg::ScheduleItem::Kind::Kernel;
  return n;
}

bool has_op(const tg::UOpPtr& root, tg::Ops op) {
  for (const tg::UOp* u : root->toposort())
    if (u->op == op) return true;
  return false;
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

  TEST_CASE("gradcheck: unary elementwise ops") {
    const Shape s{2, 3};
    const std::vector<std::pair<const char*, Tensor (Tensor::*)() const>> anywhere{
        {"neg", &Tensor::neg},   {"exp", &Tensor::exp},       {"exp2", &Tensor::exp2},
        {"sin", &Tensor::sin},   {"cos", &Tensor::cos},       {"sigmoid", &Tensor::sigmoid},
        {"tanh", &Tensor::tanh}, {"square", &Tensor::square},
    };
    for (const auto& [name, op] : anywhere) {
      INFO(name);
      CHECK(gradcheck(unary(op), {s}));
    }
    const std::vector<std::pair<const char*, Tensor (Tensor::*)() const>> positive{
        {"log", &Tensor::log},
        {"log2", &Tensor::log2},
        {"sqrt", &Tensor::sqrt},
        {"rsqrt", &Tensor::rsqrt},
        {"reciprocal", &Tensor::reciprocal},
    };
    for (const auto& [name, op] : positive) {
      INFO(name);
      CHECK(gradcheck(unary(op), {s}, {.lo = 0.2, .hi = 3}));
    }
    // Kinks at 0 (relu, abs, reciprocal's pole), jumps at integers and halves (trunc, floor,
    // ceil, round: zero gradient): checked away from them.
    const std::vector<std::pair<const char*, Tensor (Tensor::*)() const>> kinked{
        {"relu", &Tensor::relu},   {"abs", &Tensor::abs},     {"reciprocal", &Tensor::reciprocal},
        {"trunc", &Tensor::trunc}, {"floor", &Tensor::floor}, {"ceil", &Tensor::ceil},
        {"round", &Tensor::round},
    };
    for (const auto& [name, op] : kinked) {
      INFO(name);
      CHECK(gradcheck_at(
          unary(op),
          {away_from({3, 4}, -3, 3, 5, {-2.5, -2, -1.5, -1, -0.5, 0, 0.5, 1, 1.5, 2, 2.5})}));
    }
  }

  TEST_CASE("gradcheck: binary elementwise ops, broadcasting, scalars") {
    const std::vector<std::pair<const char*, Fn>> ops{
        {"add", [](const std::vector<Tensor>& x) { return x[0] + x[1]; }},
        {"sub", [](const std::vector<Tensor>& x) { return x[0] - x[1]; }},
        {"mul", [](const std::vector<Tensor>& x) { return x[0] * x[1]; }},
        {"div", [](const std::vector<Tensor>& x) { return x[0] / (x[1].square() + 0.5); }},
        {"maximum", [](const std::vector<Tensor>& x) { return x[0].maximum(x[1]); }},
        {"minimum", [](const std::vector<Tensor>& x) { return x[0].minimum(x[1]); }},
    };
    // Same shape, then numpy broadcasting both ways (with a 0-d operand).
    const std::vector<std::vector<Shape>> shapes{
        {{2, 3}, {2, 3}}, {{3, 1, 4}, {2, 1}}, {{4}, {2, 3, 4}}, {{}, {2, 2}}};
    for (const auto& [name, f] : ops)
      for (const auto& sh : shapes) {
        INFO(name << " " << shape_s(sh[0]) << " with " << shape_s(sh[1]));
        CHECK(gradcheck(f, sh));
      }
    // Tensor op scalar and scalar op tensor.
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) { return 3.0 - x[0] * 2.5 + 1.0 / (x[0] + 4); }, {{5}}));
    // pow: positive base, any exponent; a scalar exponent; a scalar base.
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].pow(x[1]); }, {{2, 3}, {2, 3}},
                    {.lo = 0.3, .hi = 2.5}));
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].pow(3.0); }, {{2, 3}}));
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].pow(0.5); }, {{2, 3}},
                    {.lo = 0.3, .hi = 2.5}));
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].scalar_like(1.7).pow(x[0]); },
                    {{4}}));
    // Float modulo (x - floor(x / y) * y): away from its jumps.
    Arr a{{4}, {0.3, 2.2, -1.4, 5.1}}, b{{4}, {0.7, 1.5, 0.9, -2.0}};
    CHECK(gradcheck_at([](const std::vector<Tensor>& x) { return x[0].mod(x[1]); }, {a, b}));
    // Float floor and truncating division: piecewise constant, zero gradient away from jumps.
    CHECK(
        gradcheck_at([](const std::vector<Tensor>& x) { return x[0].idiv(x[1]) + x[0]; }, {a, b}));
    CHECK(gradcheck_at([](const std::vector<Tensor>& x) { return x[0].div_trunc(x[1]) * x[1]; },
                       {a, b}));
  }

  TEST_CASE("gradcheck: where, clamp, cast") {
    // The condition (a comparison of x[0], or a fixed mask) gets no gradient; the values do,
    // broadcast.
    CHECK(gradcheck_at(
        [](const std::vector<Tensor>& x) { return (x[0] > 0).where(x[0], x[1] * 2); },
        {away_from({3, 4}, -2, 2, 4, {0}), random_arr({4}, -2, 2, dtypes::float64, 5)}));
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          Tensor mask = Tensor::from_vector(std::vector<bool>{true, false, true}, Shape{3, 1});
          return mask.where(x[0].exp(), x[1]);
        },
        {{3, 4}, {4}}));
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return (x[0] < 0.5).where(x[0], 7.0); },
                    {{6}}));
    CHECK(gradcheck_at([](const std::vector<Tensor>& x) { return x[0].clamp(-1.0, 1.5); },
                       {away_from({3, 4}, -3, 3, 9, {-1, 1.5})}));
    CHECK(gradcheck_at([](const std::vector<Tensor>& x) { return x[0].clamp({}, 0.5); },
                       {away_from({7}, -3, 3, 10, {0.5})}));
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].cast(dtypes::float64) * 3; },
                    {{5}}));
    // Through float32 and back: the gradient is cast back too (checked loosely: f32 rounding).
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          return x[0].cast(dtypes::float32).cast(dtypes::float64);
        },
        {{5}}, {.h = 1e-2, .rtol = 1e-4, .atol = 1e-4}));
  }

  TEST_CASE("gradcheck: reductions with and without keepdim") {
    using R = Tensor (Tensor::*)(std::vector<int64_t>, bool) const;
    const std::vector<std::pair<const char*, R>> ops{{"sum", &Tensor::sum},
                                                     {"prod", &Tensor::prod},
                                                     {"max", &Tensor::max},
                                                     {"min", &Tensor::min},
                                                     {"mean", &Tensor::mean}};
    const std::vector<std::vector<int64_t>> axes{{}, {0}, {1}, {-1}, {0, 2}};
    for (const auto& [name, op] : ops)
      for (const auto& ax : axes)
        for (bool keepdim : {false, true}) {
          INFO(name << " axes " << shape_s(ax) << " keepdim " << keepdim);
          CHECK(gradcheck(
              [op, ax, keepdim](const std::vector<Tensor>& x) { return (x[0].*op)(ax, keepdim); },
              {{2, 3, 2}}, {.lo = 0.5, .hi = 2}));
        }
    // A 0-size input: the gradient has its shape (and no elements).
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].sum({0}); }, {{0, 3}}));
    // Non-contiguous inputs to a reduce.
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          return x[0].permute({1, 0}).flip({0}).max({1});
        },
        {{4, 3}}));
  }

  TEST_CASE("max and min split the gradient among ties as tinygrad") {
    Tensor x = f64({1, 3, 3, 2, 5, 5, 5, 0}, {2, 4}).requires_grad_();
    Tensor g = x.max({1}).sum().gradient({x})[0];
    CHECK(g.to_vector<double>() ==
          std::vector<double>{0, 0.5, 0.5, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0});
    g = x.max().gradient({x})[0];
    CHECK(g.to_vector<double>() == std::vector<double>{0, 0, 0, 0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0});
    g = x.min({1}).sum().gradient({x})[0];
    CHECK(g.to_vector<double>() == std::vector<double>{1, 0, 0, 0, 0, 0, 0, 1});
    // Elementwise maximum/minimum of equal values: half to each side.
    Tensor y = f64({1, 3, 0, 2, 7, 5, 4, 0}, {2, 4}).requires_grad_();
    auto gs = x.maximum(y).sum().gradient({x, y});
    CHECK(gs[0].to_vector<double>() == std::vector<double>{0.5, 0.5, 1, 0.5, 0, 0.5, 1, 0.5});
    CHECK(gs[1].to_vector<double>() == std::vector<double>{0.5, 0.5, 0, 0.5, 1, 0.5, 0, 0.5});
    gs = x.minimum(y).sum().gradient({x, y});
    CHECK(gs[0].to_vector<double>() == std::vector<double>{0.5, 0.5, 0, 0.5, 1, 0.5, 0, 0.5});
  }

  TEST_CASE("gradcheck: movement ops and slicing") {
    const std::vector<std::pair<const char*, Fn>> ops{
        {"reshape",
         [](const std::vector<Tensor>& x) {
           return x[0].reshape({4, -1}) * x[0].reshape({4, 6});
         }},
        {"permute",
         [](const std::vector<Tensor>& x) {
           return x[0].permute({2, 0, 1}).reshape({4, 6}) * Tensor::arange(6).cast(dtypes::float64);
         }},
        {"transpose", [](const std::vector<Tensor>& x) { return x[0].transpose(0, 2).exp(); }},
        {"expand",
         [](const std::vector<Tensor>& x) {
           return x[0].reshape({2, 3, 4, 1}).expand({2, 3, 4, 5}).sin();
         }},
        {"expand new axes",
         [](const std::vector<Tensor>& x) {
           return x[0].expand({3, 2, 3, 4}) * Tensor::arange(4).cast(dtypes::float64);
         }},
        {"pad",
         [](const std::vector<Tensor>& x) {
           return x[0].pad({{1, 2}, {0, 1}, {2, 0}}).square();
         }},
        {"pad with a value",
         [](const std::vector<Tensor>& x) {
           return x[0].pad({{1, 0}, {0, 0}, {0, 3}}, 1.5) * x[0].pad({{0, 1}, {0, 0}, {1, 2}});
         }},
        {"negative pad",
         [](const std::vector<Tensor>& x) {
           return x[0].pad({{-1, 0}, {1, -1}, {0, 0}});
         }},
        {"shrink",
         [](const std::vector<Tensor>& x) {
           return x[0].shrink({{0, 1}, {1, 3}, {1, 4}}).exp();
         }},
        {"flip",
         [](const std::vector<Tensor>& x) {
           return x[0].flip({0, 2}) * x[0];
         }},
        {"flatten", [](const std::vector<Tensor>& x) { return x[0].flatten(1).sin(); }},
        {"squeeze/unsqueeze",
         [](const std::vector<Tensor>& x) {
           return x[0].unsqueeze(1).unsqueeze(-1).exp().squeeze();
         }},
        {"slice with steps",
         [](const std::vector<Tensor>& x) {
           return x[0].slice({Slice{}, Slice{std::nullopt, std::nullopt, 2}, Slice{1, 4, 2}}).exp();
         }},
        {"slice with negative steps",
         [](const std::vector<Tensor>& x) {
           return x[0].slice({Slice{std::nullopt, std::nullopt, -1}, Slice{2, 0, -1},
                              Slice{std::nullopt, std::nullopt, -3}}) *
                  2.0;
         }},
        {"index", [](const std::vector<Tensor>& x) { return x[0].index(-1, 1).square(); }},
        {"contiguous",
         [](const std::vector<Tensor>& x) {
           return x[0].permute({1, 0, 2}).contiguous() * 3.0;
         }},
    };
    for (const auto& [name, f] : ops) {
      INFO(name);
      CHECK(gradcheck(f, {{2, 3, 4}}));
    }
  }

  TEST_CASE("gradcheck: cat and stack") {
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          return Tensor::cat({x[0], x[1].exp(), x[0]}, 1);
        },
        {{2, 3}, {2, 1}}));
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          return Tensor::cat({x[0].square(), x[1]}, -1);
        },
        {{2, 3, 2}, {2, 3, 1}}));
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          return Tensor::stack({x[0], x[1] * x[0]}, 1);
        },
        {{3, 2}, {3, 2}}));
  }

  TEST_CASE("gradcheck: matmul 2-D, batched, broadcast, vectors") {
    const Fn mm = [](const std::vector<Tensor>& x) { return x[0].matmul(x[1]); };
    const std::vector<std::vector<Shape>> shapes{
        {{3, 4}, {4, 2}}, {{2, 3, 4}, {2, 4, 5}}, {{3, 4}, {2, 4, 5}}, {{2, 1, 3, 4}, {3, 4, 2}},
        {{4}, {4, 3}},    {{3, 4}, {4}},          {{4}, {4}}};
    for (const auto& sh : shapes) {
      INFO(shape_s(sh[0]) << " @ " << shape_s(sh[1]));
      CHECK(gradcheck(mm, sh));
    }
    // A transposed (non-contiguous) operand.
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].transpose().matmul(x[1]); },
                    {{4, 3}, {4, 2}}));
  }

  TEST_CASE("gradcheck: softmax and a small network") {
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].softmax(-1); }, {{3, 5}}));
    CHECK(gradcheck([](const std::vector<Tensor>& x) { return x[0].softmax(0); }, {{3, 5}}));
    // log-softmax cross-entropy against fixed targets through a 2-layer net.
    CHECK(gradcheck_at(
        [](const std::vector<Tensor>& x) {
          Tensor h = x[0].matmul(x[1]).relu().matmul(x[2]);
          Tensor m = h.max({1}, true);
          Tensor lse = (h - m).exp().sum({1}, true).log() + m;
          return ((h - lse) * Tensor::eye(4, 3, dtypes::float64)).sum().neg() / 4;
        },
        {random_arr({4, 5}, -1, 1, dtypes::float64, 1),
         random_arr({5, 6}, -1, 1, dtypes::float64, 2),
         random_arr({6, 3}, -1, 1, dtypes::float64, 3)}));
  }

  TEST_CASE("gradients keep the input's float dtype") {
    for (DType d : {dtypes::float16, dtypes::bfloat16, dtypes::float32, dtypes::float64}) {
      INFO(d.name());
      Arr a = random_arr({2, 5}, -2, 2, d, 11);
      Tensor x = to_tensor(a, d).requires_grad_();
      // d/dx sum(x * x * 0.5 + exp(x)) = x + exp(x), accumulated in float32 for half types.
      (x * x * 0.5 + x.exp()).sum().backward();
      REQUIRE(x.grad().dtype() == d);
      check_close(x.grad(), map(a, [](double v) { return v + std::exp(v); }), tol_for(d, 4),
                  "x + exp(x)", d);
    }
  }

  TEST_CASE("a non-contiguous leaf (a permuted view) gets a gradient of its own shape") {
    Tensor base = f64({1, 2, 3, 4, 5, 6}, {2, 3});
    Tensor x = base.permute({1, 0}).requires_grad_(); // realized into its own buffer
    CHECK(x.shape() == Shape{3, 2});
    (x * Tensor::arange(2).cast(dtypes::float64)).sum().backward();
    CHECK(x.grad().shape() == Shape{3, 2});
    CHECK(x.grad().to_vector<double>() == std::vector<double>{0, 1, 0, 1, 0, 1});
    CHECK_FALSE(base.grad().defined());
  }

  TEST_CASE("backward accumulates into grad; gradient() leaves grad alone") {
    Arr a = random_arr({4}, -2, 2, dtypes::float32, 3);
    Tensor x = to_tensor(a, dtypes::float32).requires_grad_();
    CHECK_FALSE(x.grad().defined());
    // gradient(): values, and no grad stored.
    CHECK((x * 3).sum().gradient({x})[0].to_vector<float>() == std::vector<float>(4, 3));
    CHECK_FALSE(x.grad().defined());
    (x * 3).sum().backward();
    CHECK(x.grad().to_vector<float>() == std::vector<float>(4, 3));
    Tensor held = x.grad(); // a handle to the grad sees the accumulation (in place)
    x.square().sum().backward();
    std::vector<float> want(4);
    for (size_t i = 0; i < 4; ++i) want[i] = 3 + 2 * static_cast<float>(a.v[i]);
    CHECK(x.grad().to_vector<float>() == want);
    CHECK(held.to_vector<float>() == want);
    x.set_grad({}); // zero_grad
    CHECK_FALSE(x.grad().defined());
    (x * 2).sum().backward();
    CHECK(x.grad().to_vector<float>() == std::vector<float>(4, 2));
  }

  TEST_CASE("backward with an explicit gradient (vector-Jacobian product)") {
    Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
    Tensor v = f64({1, 0, -1, 2, 0.5, 3}, {2, 3});
    // y = x * x: dL/dx = 2 x v; the gradient tensor is not modified by a second backward.
    (x * x).backward(v);
    (x * x).backward(v);
    CHECK(x.grad().to_vector<double>() == std::vector<double>{4, 0, -12, 32, 10, 72});
    CHECK(v.to_vector<double>() == std::vector<double>{1, 0, -1, 2, 0.5, 3});
    // Identity: the gradient is the given tensor; accumulating twice must not write into it.
    Tensor w = f64({1, 2}, {2}).requires_grad_();
    Tensor u = f64({5, 7}, {2});
    w.backward(u);
    w.backward(u);
    CHECK(w.grad().to_vector<double>() == std::vector<double>{10, 14});
    CHECK(u.to_vector<double>() == std::vector<double>{5, 7});
  }

  TEST_CASE("requires_grad propagates; detach stops it and the gradient") {
    Tensor x = f64({1, 2, 3}, {3});
    CHECK_FALSE(x.requires_grad());
    CHECK_FALSE((x * 2).requires_grad());
    x.requires_grad_();
    CHECK(x.requires_grad());
    Tensor y = (x * 2).exp().sum({0}, true);
    CHECK(y.requires_grad());
    CHECK(y.reshape({1}).permute({0}).requires_grad());
    CHECK_FALSE(x.detach().requires_grad());
    CHECK_FALSE((x > 1).requires_grad()); // bool results carry no gradient
    CHECK_FALSE(x.cast(dtypes::int32).requires_grad());
    // Through detach nothing flows: d/dx (x * detach(x)) = detach(x).
    Tensor z = (x * x.detach()).sum();
    CHECK(z.gradient({x})[0].to_vector<double>() == std::vector<double>{1, 2, 3});
    z.backward();
    CHECK(x.grad().to_vector<double>() == std::vector<double>{1, 2, 3});
    // Only through detach: not in the graph.
    CHECK_THROWS_WITH_AS(x.detach().sum().gradient({x}), doctest::Contains("not in the graph"),
                         Error);
    // A non-leaf cannot stop requiring grad; a leaf can.
    CHECK_THROWS_WITH_AS((x * 2).requires_grad_(false), doctest::Contains("detach()"), Error);
    x.requires_grad_(false);
    CHECK_FALSE((x * 2).requires_grad());
  }

  TEST_CASE("a realized parameter gets its grad; a lazy leaf is realized into its own buffer") {
    // Tensor::ones twice is one graph node; as leaves they must stay two parameters.
    Tensor a = Tensor::ones({2, 3}, dtypes::float32).requires_grad_();
    Tensor b = Tensor::ones({2, 3}, dtypes::float32).requires_grad_();
    CHECK(tg::is_buffer_view(a.uop()));
    CHECK(a.uop() != b.uop());
    Tensor x = Tensor::arange(6).cast(dtypes::float32).reshape({2, 3});
    (a * x + b * 5).sum().backward();
    CHECK(a.grad().to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
    CHECK(b.grad().to_vector<float>() == std::vector<float>(6, 5));
    // A parameter realized after the loss was built (its node becomes a BUFFER in the graph),
    // and a realized intermediate: the gradient still flows through the graph it was computed
    // by, d/dp (2p * p) = 4p.
    Tensor p = (Tensor::arange(3).cast(dtypes::float32) + 1).requires_grad_();
    Tensor q = (p * 2).contiguous().realize();
    CHECK(tg::is_buffer_view(q.uop()));
    Tensor loss = (q * p).sum();
    p.realize();
    loss.backward();
    CHECK(p.grad().to_vector<float>() == std::vector<float>{4, 8, 12});
    // The loss read (realized) before backward: as in PyTorch, backward still works.
    p.set_grad({});
    Tensor loss2 = (p * p * p).sum();
    CHECK(loss2.item<float>() == 36);
    loss2.backward();
    CHECK(p.grad().to_vector<float>() == std::vector<float>{3, 12, 27});
    // Two steps of SGD on the realized parameter: grads keep reaching it.
    Tensor w = Tensor::from_vector(std::vector<float>{1, -2}).requires_grad_();
    for (int step = 0; step < 2; ++step) {
      w.set_grad({});
      (w * w).sum().backward();
      w.assign(w - w.grad() * 0.25).realize();
    }
    CHECK(w.to_vector<float>() == std::vector<float>{0.25f, -0.5f});
    CHECK(w.requires_grad());
  }

  TEST_CASE("contiguous_backward: identity forward, contiguous gradient") {
    Tensor x = f64({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
    Tensor y = x.permute({1, 0}).contiguous_backward();
    Tensor g = (y * y).sum().gradient({x})[0];
    CHECK(has_op(g.uop(), tg::Ops::CONTIGUOUS));
    CHECK(y.to_vector<double>() == x.permute({1, 0}).to_vector<double>());
    CHECK_FALSE(has_op((x.permute({1, 0}) * x.permute({1, 0})).sum().gradient({x})[0].uop(),
                       tg::Ops::CONTIGUOUS));
    CHECK(g.to_vector<double>() == std::vector<double>{2, 4, 6, 8, 10, 12});
    CHECK(gradcheck(
        [](const std::vector<Tensor>& v) { return v[0].flip({1}).contiguous_backward().exp(); },
        {{2, 3}}));
  }

  TEST_CASE("gradients cross devices back to the source (COPY)") {
    Tensor x = f64({1, 2, 3}, {3}).requires_grad_();
    Tensor loss = (x.to("NULL") * 2).sum();
    Tensor g = loss.gradient({x})[0];
    CHECK(g.device() == x.device());
    CHECK(g.uop()->op == tg::Ops::COPY);
  }

  TEST_CASE("training mode: Tensor::training and the tg::Train guard") {
    CHECK_FALSE(Tensor::training);
    {
      tg::Train t;
      CHECK(Tensor::training);
      {
        tg::Train off(false);
        CHECK_FALSE(Tensor::training);
      }
      CHECK(Tensor::training);
    }
    CHECK_FALSE(Tensor::training);
  }

  TEST_CASE("setitem with autograd: an out-of-place update that both sides differentiate") {
    using tg::Slice;
    // A slice, a stepped slice, an int with a slice, an integer-tensor index.
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          Tensor y = x[0] * 1.0;
          y.setitem({Slice{1, 3}}, x[1]);
          return y;
        },
        {{4, 3}, {2, 3}}));
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          Tensor y = x[0].exp();
          y.setitem({Slice{std::nullopt, std::nullopt, 2}, 1}, x[1].sin());
          return y * x[0];
        },
        {{5, 3}, {3}}));
    CHECK(gradcheck(
        [](const std::vector<Tensor>& x) {
          Tensor y = x[0] + 0.0;
          y.setitem({Tensor::from_vector(std::vector<int32_t>{2, 0})}, x[1]);
          return y;
        },
        {{4, 2}, {2, 2}}));
    // The values are the update's, seen through every copy of the handle.
    Tensor a = Tensor::from_vector(std::vector<double>{1, 2, 3, 4});
    a.requires_grad_(true);
    Tensor y = a * 2.0, alias = y;
    y.setitem({Slice{0, 2}}, Tensor::from_vector(std::vector<double>{-1, -2}));
    CHECK(alias.to_vector<double>() == std::vector<double>{-1, -2, 6, 8});
    y.sum().backward();
    CHECK(a.grad().to_vector<double>() == std::vector<double>{0, 0, 2, 2});
    // A marked leaf cannot be written in place (PyTorch's rule).
    CHECK(error_of([&] { a.setitem({0}, 5.0); }).find("leaf tensor that requires grad") !=
          std::string::npos);
  }

  TEST_CASE("errors name what is wrong") {
    Tensor x = f64({1, 2, 3, 4}, {2, 2}).requires_grad_();
    CHECK_THROWS_WITH_AS((x * 2).backward(), doctest::Contains("shape (2, 2) (4 elements)"), Error);
    CHECK_THROWS_WITH_AS(
        (x * 2).backward(f64({1, 2}, {2})),
        doctest::Contains("gradient has shape (2,) but the tensor has shape (2, 2)"), Error);
    Tensor other = f64({1}, {1}).requires_grad_();
    CHECK_THROWS_WITH_AS(x.sum().gradient({x, other}),
                         doctest::Contains("target 1 Tensor(shape=(1,), dtype=float64"), Error);
    CHECK_THROWS_WITH_AS(x.sum().gradient({x, other}), doctest::Contains("not in the graph"),
                         Error);
    Tensor i = Tensor::arange(4).reshape({2, 2});
    CHECK_THROWS_WITH_AS(i.requires_grad_(), doctest::Contains("only floating-point"), Error);
    CHECK_THROWS_WITH_AS((x + i).sum().gradient({i}), doctest::Contains("dtype=int32"), Error);
    CHECK_THROWS_WITH_AS(x.sum().cast(dtypes::int32).gradient({x}),
                         doctest::Contains("only floating-point tensors have gradients"), Error);
    CHECK_THROWS_WITH_AS(f64({1}, {1}).sum().backward(), doctest::Contains("does not require grad"),
                         Error);
    CHECK_THROWS_WITH_AS(x.set_grad(f64({1}, {1})), doctest::Contains("shape (1,)"), Error);
  }

  // The forward and backward of x(32,784) @ w1(784,128) -> relu -> @ w2(128,10) -> sum, with
  // both gradients, scheduled together on NULL. Measured: 6 kernels: h = relu(x @ w1) (stored,
  // 32x128), h @ w2 (stored: a reduce read inside another reduce is its own kernel), loss =
  // its sum, d/dh = ones @ w2^T (32x128), d/dw1 = x^T @ (d/dh masked by h > 0), d/dw2 =
  // h^T @ ones. The bound is what we measure: more is a fusion regression.
  TEST_CASE("kernel count of a 2-layer MLP forward + backward on NULL") {
    auto empty = [](const Shape& s) { return Tensor::empty(s, dtypes::float32, "NULL"); };
    Tensor x = empty({32, 784});
    Tensor w1 = empty({784, 128}).requires_grad_(), w2 = empty({128, 10}).requires_grad_();
    Tensor loss = x.matmul(w1).relu().matmul(w2).sum();
    loss.backward();
    REQUIRE(w1.grad().shape() == Shape{784, 128});
    REQUIRE(w2.grad().shape() == Shape{128, 10});
    const int64_t n = kernels(Tensor::schedule_all({loss, w1.grad(), w2.grad()}));
    MESSAGE("MLP forward + backward: " << n << " kernels");
    CHECK(n <= 6);
  }
}
