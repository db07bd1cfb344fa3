#pragma once
// gradcheck: analytic gradients (Tensor::gradient) against central finite differences, both in
// float64, as torch.autograd.gradcheck does.
//
//   CHECK(tgt::gradcheck([](const std::vector<Tensor>& x) { return x[0].exp() * x[1]; },
//                        {{3, 4}, {4}}));
//
// f gets float64 tensors of the given shapes, filled with uniform values in [lo, hi] from fixed
// seeds (or the given host arrays, to stay away from points where f is not differentiable). The
// scalar checked is L = sum(f(x) * W) with fixed random weights W, so every output element
// counts with a different weight; dL/dx comes from gradient() in one backward graph, and from
// (L(x + h e_j) - L(x - h e_j)) / 2h for every element j, with h = 1e-6. Each element must agree
// within |analytic - numeric| <= atol + rtol * |numeric| (rtol 1e-5, atol 1e-6 by default: the
// rounding of L, about 1e-16 |L| / h, stays far below). The first mismatches are reported with
// the input and element, and gradcheck returns false.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tensor/ref.hpp"
#include "tg/tensor.hpp"

namespace tgt {

// Host values in [lo, hi] (float64) at least `gap` away from each point of `avoid`: inputs for
// ops with kinks or jumps there.
inline Arr away_from(const Shape& s, double lo, double hi, uint32_t seed,
                     const std::vector<double>& avoid, double gap = 0.05) {
  Arr a = random_arr(s, lo, hi, tg::dtypes::float64, seed);
  for (double& x : a.v)
    for (double p : avoid)
      if (std::abs(x - p) < gap) x = p + (x < p ? -gap : gap);
  return a;
}

struct GradcheckOptions {
  double lo = -2, hi = 2; // the range of the random inputs
  double h = 1e-6;        // the finite-difference step
  double rtol = 1e-5, atol = 1e-6;
  uint32_t seed = 1234;
  std::string device; // default device when empty
};

using GradFn = std::function<Tensor(const std::vector<Tensor>&)>;

namespace detail {
// L = sum(f(x) * W) on the host, from f's output.
inline double weighted_sum(const GradFn& f, std::vector<Arr> xs, const Arr& w,
                           const std::string& device) {
  std::vector<Tensor> ts;
  for (Arr& a : xs) ts.push_back(to_tensor(a, dtypes::float64, device));
  const std::vector<double> out = f(ts).cast(dtypes::float64).to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < out.size(); ++i) s += out[i] * w.v[i];
  return s;
}
} // namespace detail

// Checks f's gradient at the given inputs.
inline bool gradcheck_at(const GradFn& f, std::vector<Arr> inputs, const GradcheckOptions& o = {}) {
  std::vector<Tensor> xs;
  for (Arr& a : inputs) {
    xs.push_back(to_tensor(a, dtypes::float64, o.device));
    xs.back().requires_grad_();
  }
  const Tensor out = f(xs);
  if (!out.requires_grad()) {
    FAIL_CHECK("gradcheck: f's output does not require grad although its inputs do");
    return false;
  }
  Arr w = random_arr(out.shape(), -1, 1, dtypes::float64, o.seed + 7919);
  const Tensor loss = (out * to_tensor(w, out.dtype(), o.device)).sum();
  const std::vector<Tensor> grads = loss.gradient(xs);

  bool ok = true;
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFO("gradcheck input " << i << " of shape " << shape_s(inputs[i].shape));
    if (grads[i].shape() != inputs[i].shape) {
      FAIL_CHECK("gradient shape " << shape_s(grads[i].shape()) << " != input shape "
                                   << shape_s(inputs[i].shape));
      ok = false;
      continue;
    }
    const std::vector<double> analytic = grads[i].cast(dtypes::float64).to_vector<double>();
    int bad = 0;
    for (size_t j = 0; j < inputs[i].v.size(); ++j) {
      std::vector<Arr> plus = inputs, minus = inputs;
      plus[i].v[j] += o.h;
      minus[i].v[j] -= o.h;
      const double num = (detail::weighted_sum(f, plus, w, o.device) -
                          detail::weighted_sum(f, minus, w, o.device)) /
                         (2 * o.h);
      const double a = analytic[j];
      if (std::abs(a - num) <= o.atol + o.rtol * std::abs(num)) continue;
      ok = false;
      if (++bad <= 4)
        FAIL_CHECK("d/dx at " << shape_s(unravel(static_cast<int64_t>(j), inputs[i].shape))
                              << ": analytic " << a << ", numeric " << num);
    }
    if (bad > 4) FAIL_CHECK(bad << " elements differ in all");
  }
  return ok;
}

// Checks f's gradient at random inputs of `shapes` (uniform in [o.lo, o.hi], seeds o.seed + i).
inline bool gradcheck(const GradFn& f, const std::vector<Shape>& shapes,
                      const GradcheckOptions& o = {}) {
  std::vector<Arr> inputs;
  for (size_t i = 0; i < shapes.size(); ++i)
    inputs.push_back(
        random_arr(shapes[i], o.lo, o.hi, dtypes::float64, o.seed + static_cast<uint32_t>(i)));
  return gradcheck_at(f, std::move(inputs), o);
}

} // namespace tgt
