// LAMB and Muon (see tg/optim.hpp): updates as tensor graphs written back with assign, in the
// Optimizer base's schedule_step (nothing here realizes).
#include <cmath>
#include <string>

#include "tg/error.hpp"
#include "tg/ir/shape.hpp"
#include "tg/optim.hpp"

namespace tg::optim {

namespace {
Tensor zeros_like_realized(const Tensor& p) {
  return Tensor::zeros(p.shape(), p.dtype(), p.device()).realize();
}
} // namespace

// ---- LAMB -----------------------------------------------------------------------------------

LAMB::LAMB(std::vector<Tensor> params, double lr, double beta1, double beta2, double eps,
           double weight_decay, bool adam)
    : Optimizer(std::move(params), lr), b1_(beta1), b2_(beta2), eps_(eps),
      weight_decay_(weight_decay), adam_(adam) {
  if (!(b1_ >= 0 && b1_ < 1) || !(b2_ >= 0 && b2_ < 1))
    throw Error("LAMB: betas must be in [0, 1), got (" + std::to_string(b1_) + ", " +
                std::to_string(b2_) + ")");
  if (!(eps_ >= 0)) throw Error("LAMB: eps must be non-negative, got " + std::to_string(eps_));
  for (const Tensor& p : params_) {
    m_.push_back(zeros_like_realized(p));
    v_.push_back(zeros_like_realized(p));
  }
}

Tensor LAMB::update(size_t i, const Tensor& p, const Tensor& g, std::vector<Tensor>& touched) {
  const DType d = p.dtype();
  m_[i].assign(m_[i].detach() * b1_ + g * (1 - b1_));
  v_[i].assign(v_[i].detach() * b2_ + g.square() * (1 - b2_));
  touched.push_back(m_[i]);
  touched.push_back(v_[i]);
  // The new moments, read through their assigns (see SGD in optim.cpp).
  const Tensor m = m_[i].detach(), v = v_[i].detach();
  Tensor t = step_.detach().cast(d);
  Tensor c1 = 1 - Tensor::full({}, b1_, d, p.device()).pow(t);
  Tensor c2 = 1 - Tensor::full({}, b2_, d, p.device()).pow(t);
  Tensor up = (m / c1) / ((v / c2).sqrt() + eps_);
  if (weight_decay_ != 0) up = up + p * weight_decay_;
  Tensor lr = lr_.detach().cast(d);
  if (!adam_) {
    // Trust ratio per parameter tensor: ||w|| / ||u||, 1 where either is 0.
    Tensor r1 = p.square().sum().sqrt(), r2 = up.square().sum().sqrt();
    Tensor ratio = r1.gt(0).where(r2.gt(0).where(r1 / r2, 1.0), 1.0);
    lr = lr * ratio;
  }
  return p - lr * up;
}

// ---- Muon -----------------------------------------------------------------------------------

Tensor zeropower_via_newtonschulz5(const Tensor& g, int64_t steps) {
  if (g.ndim() != 2)
    throw Error("zeropower_via_newtonschulz5: needs a 2-D matrix, got shape " +
                shape_str(g.shape()));
  if (steps < 0) throw Error("zeropower_via_newtonschulz5: steps must be >= 0");
  constexpr double a = 3.4445, b = -4.7750, c = 2.0315;
  const bool tall = g.shape()[0] > g.shape()[1];
  Tensor x = g.cast(least_upper_float(g.dtype()));
  if (tall) x = x.transpose();
  x = x / (x.square().sum().sqrt() + 1e-7); // spectral norm at most 1
  for (int64_t s = 0; s < steps; ++s) {
    Tensor am = x.matmul(x.transpose());
    Tensor bm = am * b + am.matmul(am) * c;
    x = x * a + bm.matmul(x);
  }
  return tall ? x.transpose() : x;
}

Muon::Muon(std::vector<Tensor> params, double lr, double momentum, double weight_decay,
           bool nesterov, int64_t ns_steps)
    : Optimizer(std::move(params), lr), momentum_(momentum), weight_decay_(weight_decay),
      nesterov_(nesterov), ns_steps_(ns_steps) {
  if (!(momentum_ >= 0 && momentum_ < 1))
    throw Error("Muon: momentum must be in [0, 1), got " + std::to_string(momentum_));
  if (ns_steps_ < 0) throw Error("Muon: ns_steps must be >= 0, got " + std::to_string(ns_steps_));
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].ndim() < 2)
      throw Error("Muon: parameter " + std::to_string(i) + " has shape " +
                  shape_str(params_[i].shape()) +
                  "; Muon orthogonalises matrices (2 or more dimensions): optimise biases, "
                  "gains and other vectors with Adam or AdamW");
    buf_.push_back(zeros_like_realized(params_[i]));
  }
}

Tensor Muon::update(size_t i, const Tensor& p, const Tensor& g, std::vector<Tensor>& touched) {
  const DType d = p.dtype();
  buf_[i].assign(buf_[i].detach() * momentum_ + g * (1 - momentum_)); // momentum.lerp_(g, 1-b)
  touched.push_back(buf_[i]);
  const Tensor b = buf_[i].detach(); // the new buffer, through its assign
  Tensor u = nesterov_ ? g * (1 - momentum_) + b * momentum_ : b; // g.lerp_(buf, b)
  const int64_t rows = p.shape()[0], cols = p.numel() / std::max<int64_t>(rows, 1);
  u = zeropower_via_newtonschulz5(u.reshape({rows, cols}), ns_steps_);
  const double scale =
      std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols)));
  u = (u * scale).reshape(p.shape()).cast(d);
  Tensor lr = lr_.detach().cast(d);
  Tensor w = weight_decay_ != 0 ? p * (1 - lr * weight_decay_) : p;
  return w - lr * u;
}

} // namespace tg::optim
