#pragma once
// What the nn test files share: the message of the tg::Error a call raises, and an optimizer
// run on the least-squares problem L = sum((w*x - y)^2) the optimizer tests check by hand.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/optim.hpp"

namespace tg::nn_test {

// The message of the tg::Error `f` raises, or "(no error)".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

inline bool has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

using MakeOptimizer = std::function<std::unique_ptr<optim::Optimizer>(Tensor)>;

// `steps` steps of the optimizer `make` builds over w (realized, float32) on
// L = sum((w*x - y)^2); returns w after them.
inline std::vector<double> least_squares_run(Tensor w, const Tensor& x, const Tensor& y,
                                             const MakeOptimizer& make, int steps) {
  w.requires_grad_(true);
  auto opt = make(w);
  for (int s = 0; s < steps; ++s) {
    opt->zero_grad();
    (w * x - y).square().sum().backward();
    opt->step();
  }
  const std::vector<float> r = w.to_vector<float>();
  return {r.begin(), r.end()};
}

} // namespace tg::nn_test
