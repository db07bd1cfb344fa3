#pragma once
// Optimizers as tinygrad's nn.optim and torch.optim: each keeps handles on the parameters
// (tg::Tensor copies share state) and its own state tensors, and an update is a set of assigns.
// schedule_step() returns those assigns unrealized, so a whole training step (loss, backward,
// update) can be one realize; step() realizes them. The learning rate lives in a realized 0-d
// tensor, so changing it (set_lr, a schedule) recompiles nothing.
#include <vector>

#include "tg/tensor.hpp"

namespace tg::optim {

class Optimizer {
public:
  Optimizer(std::vector<Tensor> params, double lr);
  virtual ~Optimizer() = default;
  void zero_grad();                    // every parameter's grad cleared
  void step();                         // realizes schedule_step()
  std::vector<Tensor> schedule_step(); // the parameters and state after the update, unrealized
  void set_lr(double lr);
  double lr() const;
  const std::vector<Tensor>& params() const { return params_; }

protected:
  // The new value of parameter i from its gradient `g` (both detached); writes its own state
  // with assign and lists the state it touched in `touched`.
  virtual Tensor update(size_t i, const Tensor& p, const Tensor& g,
                        std::vector<Tensor>& touched) = 0;
  std::vector<Tensor> params_;
  Tensor lr_;   // 0-d float32, realized
  Tensor step_; // 0-d int32 count of steps taken (updated by schedule_step)
};

// SGD with momentum, dampening, Nesterov and L2 weight decay (torch.optim.SGD).
class SGD : public Optimizer {
public:
  SGD(std::vector<Tensor> params, double lr, double momentum = 0, double weight_decay = 0,
      bool nesterov = false, double dampening = 0);

private:
  Tensor update(size_t i, const Tensor& p, const Tensor& g, std::vector<Tensor>& touched) override;
  double momentum_, weight_decay_, dampening_;
  bool nesterov_;
  std::vector<Tensor> buf_;
};

// Adam (L2 weight decay added to the gradient) and AdamW (decoupled weight decay), as torch.
class Adam : public Optimizer {
public:
  Adam(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-8, double weight_decay = 0, bool decoupled = false);

private:
  Tensor update(size_t i, const Tensor& p, const Tensor& g, std::vector<Tensor>& touched) override;
  double b1_, b2_, eps_, weight_decay_;
  bool decoupled_;
  std::vector<Tensor> m_, v_;
};

class AdamW : public Adam {
public:
  AdamW(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
        double eps = 1e-8, double weight_decay = 0.01)
      : Adam(std::move(params), lr, beta1, beta2, eps, weight_decay, true) {}
};

// LAMB as tinygrad's nn.optim.LAMB (You et al., arXiv:1904.00962): Adam moments with bias
// correction, the update u = m_hat / (sqrt(v_hat) + eps) + weight_decay * w (decoupled,
// AdamW-style), scaled per parameter tensor by the trust ratio ||w|| / ||u|| (1 where either
// norm is 0): w -= lr * ratio * u. With `adam` the ratio is 1 (tinygrad's AdamW).
class LAMB : public Optimizer {
public:
  LAMB(std::vector<Tensor> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-6, double weight_decay = 0, bool adam = false);

private:
  Tensor update(size_t i, const Tensor& p, const Tensor& g, std::vector<Tensor>& touched) override;
  double b1_, b2_, eps_, weight_decay_;
  bool adam_;
  std::vector<Tensor> m_, v_;
};

// Newton-Schulz orthogonalisation of a 2-D matrix as Keller Jordan's
// zeropower_via_newtonschulz5 (github.com/KellerJordan/Muon, muon.py): X = G / (||G||_F + 1e-7)
// (transposed when it has more rows than columns), then `steps` times
// X = a X + (b A + c A A) X with A = X X^T, (a, b, c) = (3.4445, -4.7750, 2.0315). The result
// is close to U V^T of G's SVD (singular values roughly in [0.5, 1.5]). Computed in G's float
// dtype (the reference uses bfloat16 on GPUs).
Tensor zeropower_via_newtonschulz5(const Tensor& g, int64_t steps = 5);

// Muon as Keller Jordan's SingleDeviceMuon (github.com/KellerJordan/Muon, muon.py): momentum
// buf = momentum * buf + (1 - momentum) * g; the update is (1 - momentum) * g + momentum * buf
// with nesterov (the reference's default), else buf; it is viewed as (shape[0], rest) for
// parameters of more than 2 dimensions, orthogonalised by zeropower_via_newtonschulz5, scaled
// by sqrt(max(1, rows / cols)) of that 2-D view (the reference reads the original gradient's
// last two dims there, kh / kw for a conv filter; the same for matrices), and applied
// AdamW-style:
// w = w * (1 - lr * weight_decay) - lr * update. Only for parameters of 2 or more dimensions
// (use Adam/AdamW for biases and gains, as the reference says).
class Muon : public Optimizer {
public:
  Muon(std::vector<Tensor> params, double lr = 0.02, double momentum = 0.95,
       double weight_decay = 0, bool nesterov = true, int64_t ns_steps = 5);

private:
  Tensor update(size_t i, const Tensor& p, const Tensor& g, std::vector<Tensor>& touched) override;
  double momentum_, weight_decay_;
  bool nesterov_;
  int64_t ns_steps_;
  std::vector<Tensor> buf_;
};

} // namespace tg::optim
