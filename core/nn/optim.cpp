// Optimizers (see tg/optim.hpp): updates as tensor graphs written back with assign.
#include "tg/optim.hpp"

#include "tg/error.hpp"

namespace tg::optim {

namespace {
Tensor state_like(const Tensor& p) {
  return Tensor::zeros(p.shape(), p.dtype(), p.device()).realize();
}
Tensor scalar(double v, DType d, const std::string& device) {
  return Tensor::full({}, v, d, device).contiguous().realize();
}
} // namespace

Optimizer::Optimizer(std::vector<Tensor> params, double lr) : params_(std::move(params)) {
  if (params_.empty()) throw Error("optimizer: no parameters to optimize");
  for (size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].defined())
      throw Error("optimizer: parameter " + std::to_string(i) + " is undefined");
    if (!params_[i].dtype().is_float())
      throw Error("optimizer: parameter " + std::to_string(i) + " is " + params_[i].dtype().name() +
                  "; only float tensors can be optimized");
  }
  lr_ = scalar(lr, dtypes::float32, params_[0].device());
  step_ = scalar(0, dtypes::int32, params_[0].device());
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.set_grad(Tensor());
}

void Optimizer::set_lr(double lr) {
  // The value comes as data (a host buffer copied in), not as a constant in the kernel: assign
  // of a scalar would compile a new kernel for every distinct rate.
  lr_.assign(Tensor::from_vector(std::vector<float>{static_cast<float>(lr)}, Shape{}, lr_.device()))
      .realize();
}
double Optimizer::lr() const { return lr_.item<float>(); }

std::vector<Tensor> Optimizer::schedule_step() {
  std::vector<Tensor> out;
  Tensor next = step_.detach() + 1;
  step_.assign(next);
  out.push_back(step_);
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor g = params_[i].grad();
    if (!g.defined()) continue; // no gradient reached it: left as it is (PyTorch)
    Tensor p = params_[i];
    Tensor v = update(i, p.detach(), g.detach().cast(p.dtype()), out);
    p.assign(v.cast(p.dtype()));
    out.push_back(p);
  }
  return out;
}

void Optimizer::step() { Tensor::realize_all(schedule_step()); }

// ---- SGD ------------------------------------------------------------------------------------

SGD::SGD(std::vector<Tensor> params, double lr, double momentum, double weight_decay, bool nesterov,
         double dampening)
    : Optimizer(std::move(params), lr), momentum_(momentum), weight_decay_(weight_decay),
      dampening_(dampening), nesterov_(nesterov) {
  if (nesterov_ && (momentum_ <= 0 || dampening_ != 0))
    throw Error("SGD: nesterov needs momentum > 0 and dampening 0 (as torch.optim.SGD)");
  if (momentum_ != 0)
    for (const Tensor& p : params_) buf_.push_back(state_like(p));
}

Tensor SGD::update(size_t i, const Tensor& p, const Tensor& g0, std::vector<Tensor>& touched) {
  Tensor g = weight_decay_ != 0 ? g0 + p * weight_decay_ : g0;
  if (momentum_ != 0) {
    // torch: the first step's buffer is g itself; later momentum*buf + (1-dampening)*g.
    Tensor first = step_.detach().eq(1);
    Tensor b = buf_[i].detach();
    buf_[i].assign(first.where(g, b * momentum_ + g * (1 - dampening_)));
    touched.push_back(buf_[i]);
    // Read the new buffer through its assign (as tinygrad's optimizers do): recomputing the
    // value from the old buffer in another kernel could run after the buffer was written.
    const Tensor nb = buf_[i].detach();
    g = nesterov_ ? g + nb * momentum_ : nb;
  }
  return p - g * lr_.detach().cast(p.dtype());
}

// ---- Adam / AdamW -------------------------------------------------------------------------

Adam::Adam(std::vector<Tensor> params, double lr, double beta1, double beta2, double eps,
           double weight_decay, bool decoupled)
    : Optimizer(std::move(params), lr), b1_(beta1), b2_(beta2), eps_(eps),
      weight_decay_(weight_decay), decoupled_(decoupled) {
  for (const Tensor& p : params_) {
    m_.push_back(state_like(p));
    v_.push_back(state_like(p));
  }
}

Tensor Adam::update(size_t i, const Tensor& p0, const Tensor& g0, std::vector<Tensor>& touched) {
  const Tensor lr = lr_.detach().cast(p0.dtype());
  Tensor p = p0, g = g0;
  if (weight_decay_ != 0) {
    if (decoupled_)
      p = p * (1 - lr * weight_decay_); // AdamW: decay the weights, not the gradient
    else
      g = g + p * weight_decay_;
  }
  m_[i].assign(m_[i].detach() * b1_ + g * (1 - b1_));
  v_[i].assign(v_[i].detach() * b2_ + g.square() * (1 - b2_));
  touched.push_back(m_[i]);
  touched.push_back(v_[i]);
  // The new moments, read through their assigns (see SGD).
  const Tensor m = m_[i].detach(), v = v_[i].detach();
  // Bias corrections from the step count (a tensor: no recompile per step).
  Tensor t = step_.detach().cast(p.dtype());
  Tensor c1 = 1 - Tensor::full({}, b1_, p.dtype(), p.device()).pow(t);
  Tensor c2 = 1 - Tensor::full({}, b2_, p.dtype(), p.device()).pow(t);
  return p - lr * (m / c1) / ((v / c2).sqrt() + eps_);
}

} // namespace tg::optim
