// Learning-rate schedules against torch.optim.lr_scheduler's formulas written here (the
// cosine one in torch's recursive (chainable) form, which the closed form must reproduce),
// 20+ steps each; the rate reaches the optimizer; changing it recompiles no kernel.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/lr_scheduler.hpp"
#include "tg/realize.hpp"
#include "tg/schedule.hpp"

using namespace tg;

namespace {

Tensor param() {
  Tensor w = Tensor::from_vector(std::vector<float>{1, -2, 3}).realize();
  w.requires_grad_(true);
  return w;
}

// Steps `s` n times; each rate (t = 0..n) must match want(t) and reach the optimizer.
void check_sequence(optim::LRScheduler& s, optim::Optimizer& opt,
                    const std::function<double(int64_t)>& want, int64_t n) {
  for (int64_t t = 0; t <= n; ++t) {
    if (t > 0) s.step();
    INFO("step " << t);
    CHECK(s.last_epoch() == t);
    const double w = want(t);
    CHECK(std::abs(s.get_last_lr() - w) <= 1e-12 * std::abs(w));
    CHECK(std::abs(opt.lr() - w) <= 1e-7 * std::abs(w)); // float32 in the optimizer
  }
}

} // namespace

TEST_SUITE("nn.lr") {
  TEST_CASE("StepLR: base * gamma^(t // step_size)") {
    optim::SGD opt({param()}, 0.125);
    optim::StepLR s(opt, 3, 0.5);
    CHECK(s.base_lr() == 0.125); // exact in float32, as every base rate here
    check_sequence(
        s, opt, [](int64_t t) { return 0.125 * std::pow(0.5, double(t / 3)); }, 20);
    CHECK_THROWS_AS(optim::StepLR(opt, 0), Error);
  }

  TEST_CASE("CosineAnnealingLR matches torch's recursive form, past T_max too") {
    optim::SGD opt({param()}, 0.25);
    const double base = 0.25, eta_min = 0.01;
    const int64_t tmax = 8;
    optim::CosineAnnealingLR s(opt, tmax, eta_min);
    // torch's get_lr(): chained from the last rate.
    std::vector<double> want{base};
    for (int64_t t = 1; t <= 24; ++t) {
      const double last = want.back(), pi = std::numbers::pi;
      double lr;
      if ((t - 1 - tmax) % (2 * tmax) == 0)
        lr = last + (base - eta_min) * (1 - std::cos(pi / double(tmax))) / 2;
      else
        lr = (1 + std::cos(pi * double(t) / double(tmax))) /
                 (1 + std::cos(pi * double(t - 1) / double(tmax))) * (last - eta_min) +
             eta_min;
      want.push_back(lr);
    }
    CHECK(want[tmax] == doctest::Approx(eta_min)); // the bottom at T_max
    check_sequence(
        s, opt, [&](int64_t t) { return want[static_cast<size_t>(t)]; }, 24);
    CHECK_THROWS_AS(optim::CosineAnnealingLR(opt, 0), Error);
  }

  TEST_CASE("LinearWarmup: ramp from start_factor, then hold or hand over") {
    {
      optim::SGD opt({param()}, 0.375);
      optim::LinearWarmup s(opt, 5, 0.1);
      check_sequence(
          s, opt, [](int64_t t) { return t < 5 ? 0.375 * (0.1 + 0.9 * double(t) / 5) : 0.375; },
          20);
    }
    {
      // torch: SequentialLR([LinearLR(opt, 0.25, 1.0, total_iters=4), StepLR(opt, 5, 0.5)],
      // milestones=[4]): the inner schedule starts at its step 0 at the milestone.
      optim::SGD opt({param()}, 0.5);
      auto after = std::make_unique<optim::StepLR>(opt, 5, 0.5);
      optim::LinearWarmup s(opt, 4, 0.25, std::move(after));
      check_sequence(
          s, opt,
          [](int64_t t) {
            return t < 4 ? 0.5 * (0.25 + 0.75 * double(t) / 4)
                         : 0.5 * std::pow(0.5, double((t - 4) / 5));
          },
          22);
    }
    optim::SGD opt({param()}, 0.1);
    CHECK_THROWS_AS(optim::LinearWarmup(opt, 3, 1.5), Error);
    CHECK_THROWS_AS(optim::LinearWarmup(opt, -1), Error);
    optim::SGD other({param()}, 0.1);
    CHECK_THROWS_AS(optim::LinearWarmup(opt, 3, 0.5, std::make_unique<optim::StepLR>(other, 2)),
                    Error);
  }

  TEST_CASE("OneCycleLR: cos and linear, two and three phases; past the end is refused") {
    // torch's OneCycleLR.get_lr, written out.
    auto torch_lr = [](double max_lr, int64_t total, double pct, bool cos, double div, double fdiv,
                       bool three, int64_t t) {
      const double initial = max_lr / div, min_lr = initial / fdiv;
      struct P {
        double end, a, b;
      };
      std::vector<P> ph;
      if (three)
        ph = {{pct * double(total) - 1, initial, max_lr},
              {2 * pct * double(total) - 2, max_lr, initial},
              {double(total) - 1, initial, min_lr}};
      else
        ph = {{pct * double(total) - 1, initial, max_lr}, {double(total) - 1, max_lr, min_lr}};
      double start = 0;
      for (size_t i = 0; i < ph.size(); ++i) {
        if (double(t) <= ph[i].end || i + 1 == ph.size()) {
          const double p = (double(t) - start) / (ph[i].end - start);
          return cos ? ph[i].b + (ph[i].a - ph[i].b) / 2 * (std::cos(std::numbers::pi * p) + 1)
                     : (ph[i].b - ph[i].a) * p + ph[i].a;
        }
        start = ph[i].end;
      }
      return 0.0;
    };
    struct Case {
      double max_lr;
      int64_t total;
      double pct;
      bool cos;
      double div, fdiv;
      bool three;
    };
    for (const Case c :
         {Case{0.5, 20, 0.3, true, 25, 1e4, false}, Case{0.1, 21, 0.25, false, 10, 100, false},
          Case{1.0, 24, 0.3, true, 20, 1e3, true}}) {
      INFO("total " << c.total << " pct " << c.pct << " cos " << c.cos << " three " << c.three);
      optim::SGD opt({param()}, 123.0); // replaced by max_lr / div_factor
      optim::OneCycleLR s(opt, c.max_lr, c.total, c.pct, c.cos ? "cos" : "linear", c.div, c.fdiv,
                          c.three);
      CHECK(opt.lr() == doctest::Approx(c.max_lr / c.div).epsilon(1e-6));
      check_sequence(
          s, opt,
          [&](int64_t t) {
            return torch_lr(c.max_lr, c.total, c.pct, c.cos, c.div, c.fdiv, c.three, t);
          },
          c.total);
      // torch raises on the step after total_steps; the count stays where it was.
      CHECK_THROWS_AS(s.step(), Error);
      CHECK(s.last_epoch() == c.total);
    }
    optim::SGD opt({param()}, 0.1);
    CHECK_THROWS_AS(optim::OneCycleLR(opt, 0.1, 10, 0.3, "exp"), Error);
    CHECK_THROWS_AS(optim::OneCycleLR(opt, 0.1, 0), Error);
    CHECK_THROWS_AS(optim::OneCycleLR(opt, 0.1, 10, 0.1), Error); // a phase without steps
  }

  TEST_CASE("a schedule changes the rate the update uses, and compiles no new kernel") {
    Tensor w = param();
    optim::SGD opt({w}, 0.1);
    optim::StepLR s(opt, 1, 0.5);
    std::vector<double> want{1, -2, 3};
    double lr = 0.1;
    int64_t compiled = -1;
    for (int step = 0; step < 5; ++step) {
      opt.zero_grad();
      (w * w).sum().backward(); // gradient 2w
      opt.step();
      for (double& v : want) v -= lr * 2 * v;
      s.step();
      lr *= 0.5;
      const std::vector<float> got = w.to_vector<float>();
      for (size_t i = 0; i < 3; ++i) CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-6));
      // After the first step every kernel exists: later rates reuse them.
      if (step == 1) compiled = compiled_kernel_count();
      if (step > 1) CHECK(compiled_kernel_count() == compiled);
    }
  }
}
