// Optimizers against reference updates written here in double (torch.optim's formulas) on a
// small least-squares problem, L = sum((w*x - y)^2), whose gradient 2(w*x - y)x the reference
// computes by hand; three steps each, float32 parameters, tolerance 1e-5 relative.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "nn/nn_test_util.hpp"
#include "tg/error.hpp"
#include "tg/optim.hpp"

using namespace tg;

namespace {

const std::vector<double> kX{0.5, -1.0, 2.0, 1.5}, kY{1.0, 0.25, -1.0, 2.0},
    kW0{0.3, -0.2, 0.1, 0.8};

std::vector<double> grad_of(const std::vector<double>& w) {
  std::vector<double> g(w.size());
  for (size_t i = 0; i < w.size(); ++i) g[i] = 2 * (w[i] * kX[i] - kY[i]) * kX[i];
  return g;
}

// Runs `steps` steps of the optimizer made by `make` and returns the parameters.
std::vector<double> run(const nn_test::MakeOptimizer& make, int steps) {
  auto f32 = [](const std::vector<double>& v) {
    return Tensor::from_vector(std::vector<float>(v.begin(), v.end())).realize();
  };
  return nn_test::least_squares_run(f32(kW0), f32(kX), f32(kY), make, steps);
}

void check_close(const std::vector<double>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i)
    CHECK(std::abs(got[i] - want[i]) <= 1e-6 + 1e-5 * std::abs(want[i]));
}

std::vector<double> ref_sgd(double lr, double mom, double wd, bool nesterov, double damp,
                            int steps) {
  std::vector<double> w = kW0, buf(w.size());
  for (int s = 0; s < steps; ++s) {
    std::vector<double> g = grad_of(w);
    for (size_t i = 0; i < w.size(); ++i) {
      double gi = g[i] + wd * w[i];
      if (mom != 0) {
        buf[i] = s == 0 ? gi : mom * buf[i] + (1 - damp) * gi;
        gi = nesterov ? gi + mom * buf[i] : buf[i];
      }
      w[i] -= lr * gi;
    }
  }
  return w;
}

std::vector<double> ref_adam(double lr, double b1, double b2, double eps, double wd, bool decoupled,
                             int steps) {
  std::vector<double> w = kW0, m(w.size()), v(w.size());
  for (int s = 1; s <= steps; ++s) {
    std::vector<double> g = grad_of(w);
    for (size_t i = 0; i < w.size(); ++i) {
      double gi = g[i];
      if (wd != 0) {
        if (decoupled)
          w[i] *= 1 - lr * wd;
        else
          gi += wd * w[i];
      }
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      const double mh = m[i] / (1 - std::pow(b1, s)), vh = v[i] / (1 - std::pow(b2, s));
      w[i] -= lr * mh / (std::sqrt(vh) + eps);
    }
  }
  return w;
}

} // namespace

TEST_SUITE("nn.optim") {
  TEST_CASE("SGD: plain, momentum, dampening, nesterov, weight decay") {
    struct Case {
      double lr, mom, wd, damp;
      bool nesterov;
    };
    for (const Case c : {Case{0.05, 0, 0, 0, false}, Case{0.05, 0.9, 0, 0, false},
                         Case{0.05, 0.9, 0.1, 0.3, false}, Case{0.02, 0.8, 0.05, 0, true}}) {
      INFO("lr " << c.lr << " momentum " << c.mom << " wd " << c.wd << " dampening " << c.damp
                 << " nesterov " << c.nesterov);
      check_close(run(
                      [&](Tensor w) {
                        return std::make_unique<optim::SGD>(std::vector<Tensor>{w}, c.lr, c.mom,
                                                            c.wd, c.nesterov, c.damp);
                      },
                      3),
                  ref_sgd(c.lr, c.mom, c.wd, c.nesterov, c.damp, 3));
    }
  }

  TEST_CASE("Adam and AdamW, with and without weight decay") {
    check_close(
        run([](Tensor w) { return std::make_unique<optim::Adam>(std::vector<Tensor>{w}, 0.1); }, 3),
        ref_adam(0.1, 0.9, 0.999, 1e-8, 0, false, 3));
    check_close(run(
                    [](Tensor w) {
                      return std::make_unique<optim::Adam>(std::vector<Tensor>{w}, 0.05, 0.8, 0.99,
                                                           1e-6, 0.1);
                    },
                    3),
                ref_adam(0.05, 0.8, 0.99, 1e-6, 0.1, false, 3));
    check_close(run(
                    [](Tensor w) {
                      return std::make_unique<optim::AdamW>(std::vector<Tensor>{w}, 0.05, 0.9,
                                                            0.999, 1e-8, 0.2);
                    },
                    3),
                ref_adam(0.05, 0.9, 0.999, 1e-8, 0.2, true, 3));
  }

  TEST_CASE("schedule_step is lazy; set_lr recompiles nothing; bad input") {
    Tensor w = Tensor::from_vector(std::vector<float>{1, 2}).realize();
    w.requires_grad_(true);
    optim::SGD opt({w}, 0.5);
    (w * w).sum().backward();
    std::vector<Tensor> pending = opt.schedule_step();
    CHECK(pending.size() == 2); // the step count and w
    CHECK(w.to_vector<float>() ==
          std::vector<float>{0, 0}); // reading realizes: 1 - 0.5*2, 2 - 0.5*4
    opt.set_lr(0.25);
    CHECK(opt.lr() == 0.25f);
    CHECK_THROWS_AS(optim::SGD({}, 0.1), Error);
    CHECK_THROWS_AS(optim::SGD({Tensor::zeros({2}, dtypes::int32)}, 0.1), Error);
    CHECK_THROWS_AS(optim::SGD({w}, 0.1, 0, 0, true), Error);
  }
}
