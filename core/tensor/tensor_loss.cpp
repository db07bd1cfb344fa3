// Losses with PyTorch's reductions and semantics. Class-index targets are
// turned into a one-hot mask by comparing against an arange along the class dim, so the loss is
// elementwise + reduce ops that fuse.
#include <cmath>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

Tensor reduce_loss(const Tensor& l, const std::string& reduction, const std::string& op) {
  if (reduction == "none") return l;
  if (reduction == "sum") return l.sum();
  if (reduction == "mean") return l.mean();
  throw Error(op + ": reduction must be 'none', 'mean' or 'sum', got '" + reduction + "'");
}

void check_reduction(const std::string& reduction, const std::string& op) {
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    throw Error(op + ": reduction must be 'none', 'mean' or 'sum', got '" + reduction + "'");
}

void same_shape(const Tensor& input, const Tensor& target, const std::string& op) {
  if (input.shape() != target.shape())
    throw Error(op + ": target of shape " + shape_str(target.shape()) +
                " does not match input of shape " + shape_str(input.shape()));
}

// An optional elementwise weight broadcast to the loss's shape.
Tensor weighted(const Tensor& l, const Tensor::OptTensor& weight, const std::string& op) {
  if (!weight) return l;
  try {
    return l.mul(*weight);
  } catch (const Error&) {
    throw Error(op + ": weight of shape " + shape_str(weight->shape()) +
                " does not broadcast to the input's shape " + shape_str(l.shape()));
  }
}

// (N, C, d...) or (C,) input; the class dim and the shape a class-index target must have.
struct ClassLayout {
  int64_t cdim, classes;
  Shape target_shape;
};

ClassLayout class_layout(const Tensor& input, const std::string& op) {
  if (input.ndim() < 1)
    throw Error(op + ": input must be (C,), (N, C) or (N, C, d1, ...), got a scalar");
  ClassLayout c;
  c.cdim = input.ndim() == 1 ? 0 : 1;
  c.classes = input.shape()[static_cast<size_t>(c.cdim)];
  for (int64_t i = 0; i < input.ndim(); ++i)
    if (i != c.cdim) c.target_shape.push_back(input.shape()[static_cast<size_t>(i)]);
  return c;
}

// The input's log-probabilities at the target class (0 where ignored), the per-element weight
// w[target] (0 where ignored) and the not-ignored mask, each of the target's shape.
struct Picked {
  Tensor logp, w, keep;
};

Picked pick(const Tensor& logp, const Tensor& target, const Tensor::OptTensor& weight,
            int64_t ignore_index, const ClassLayout& c, const std::string& op) {
  if (!(target.dtype().is_int()))
    throw Error(op + ": class-index target must be an integer tensor, got " +
                target.dtype().name());
  if (target.shape() != c.target_shape)
    throw Error(op + ": target of shape " + shape_str(target.shape()) + " does not match input " +
                shape_str(logp.shape()) + " (expected target shape " + shape_str(c.target_shape) +
                ")");
  if (weight && (weight->ndim() != 1 || weight->shape()[0] != c.classes))
    throw Error(op + ": weight of shape " + shape_str(weight->shape()) + " does not match the " +
                std::to_string(c.classes) + " classes of input " + shape_str(logp.shape()));
  Shape cs(static_cast<size_t>(logp.ndim()), 1);
  cs[static_cast<size_t>(c.cdim)] = c.classes;
  Tensor t = target.cast(dtypes::int32).unsqueeze(c.cdim);
  Tensor onehot = Tensor::arange(c.classes, dtypes::int32, logp.device()).reshape(cs).eq(t);
  Tensor keep = target.ne(target.scalar_like(ignore_index));
  Picked p;
  p.logp = onehot.where(logp, 0).sum({c.cdim});
  if (weight) {
    Tensor wf = weight->cast(logp.dtype()).reshape(cs);
    p.w = keep.where(onehot.where(wf, 0).sum({c.cdim}), 0);
  } else {
    p.w = keep.cast(logp.dtype());
  }
  p.keep = keep;
  return p;
}

Tensor nll_from_logp(const Tensor& logp, const Tensor& target, const Tensor::OptTensor& weight,
                     int64_t ignore_index, const std::string& reduction, const ClassLayout& c,
                     const std::string& op, Tensor* wsum = nullptr) {
  Picked p = pick(logp, target, weight, ignore_index, c, op);
  Tensor l = p.logp.mul(p.w).neg();
  if (wsum) *wsum = p.w.sum();
  if (reduction == "none") return l;
  if (reduction == "sum") return l.sum();
  return l.sum().div(p.w.sum()); // PyTorch: normalized by the total weight of the targets
}

} // namespace

Tensor Tensor::nll_loss(const Tensor& target, const OptTensor& weight, int64_t ignore_index,
                        const std::string& reduction) const {
  check_reduction(reduction, "nll_loss");
  const ClassLayout c = class_layout(*this, "nll_loss");
  return nll_from_logp(cast(least_upper_float(dtype())), target, weight, ignore_index, reduction, c,
                       "nll_loss");
}

Tensor Tensor::cross_entropy(const Tensor& target, const OptTensor& weight, int64_t ignore_index,
                             const std::string& reduction, double label_smoothing) const {
  const std::string op = "cross_entropy";
  check_reduction(reduction, op);
  if (!(label_smoothing >= 0 && label_smoothing <= 1))
    throw Error(op + ": label_smoothing must be in [0, 1], got " + std::to_string(label_smoothing));
  const ClassLayout c = class_layout(*this, op);
  Tensor logp = log_softmax(c.cdim);
  Shape cs(static_cast<size_t>(ndim()), 1);
  cs[static_cast<size_t>(c.cdim)] = c.classes;
  const double eps = label_smoothing, nc = static_cast<double>(c.classes);
  if (target.dtype().is_float()) {
    // Probability targets: -sum_c w_c * t'_c * logp_c, t' = t (1 - eps) + eps / C; the mean is
    // over the batch (and spatial) elements.
    same_shape(*this, target, op);
    if (weight && (weight->ndim() != 1 || weight->shape()[0] != c.classes))
      throw Error(op + ": weight of shape " + shape_str(weight->shape()) + " does not match the " +
                  std::to_string(c.classes) + " classes of input " + shape_str(shape()));
    Tensor t = target.cast(logp.dtype());
    if (eps > 0) t = t.mul(1 - eps).add(eps / nc);
    Tensor l = logp.mul(t);
    if (weight) l = l.mul(weight->cast(logp.dtype()).reshape(cs));
    return reduce_loss(l.sum({c.cdim}).neg(), reduction, op);
  }
  Tensor wsum;
  Tensor nll = nll_from_logp(logp, target, weight, ignore_index, reduction, c, op, &wsum);
  if (eps == 0) return nll;
  // PyTorch's label smoothing: (1 - eps) * nll + eps / C * smooth, smooth = -sum_c w_c logp_c
  // (0 where ignored), its mean normalized as nll's.
  Tensor lw = weight ? logp.mul(weight->cast(logp.dtype()).reshape(cs)) : logp;
  Tensor keep = target.ne(target.scalar_like(ignore_index));
  Tensor smooth = keep.where(lw.sum({c.cdim}).neg(), 0);
  Tensor sm;
  if (reduction == "none")
    sm = smooth;
  else if (reduction == "sum")
    sm = smooth.sum();
  else
    sm = smooth.sum().div(wsum);
  return nll.mul(1 - eps).add(sm.mul(eps / nc));
}

Tensor Tensor::sparse_categorical_crossentropy(const Tensor& target, int64_t ignore_index,
                                               double label_smoothing,
                                               const std::string& reduction) const {
  // tinygrad's: classes on the last dim, ignore_index -1 means none (no class is -1).
  const std::string op = "sparse_categorical_crossentropy";
  if (ndim() < 1) throw Error(op + ": input must have a class dim, got a scalar");
  Tensor x = *this;
  if (ndim() > 2) {
    // (N, d..., C) -> (N, C, d...): move the last dim to 1.
    Shape order{0, ndim() - 1};
    for (int64_t i = 1; i < ndim() - 1; ++i) order.push_back(i);
    x = permute(order);
  }
  return x.cross_entropy(target, {}, ignore_index, reduction, label_smoothing);
}

Tensor Tensor::binary_cross_entropy(const Tensor& target, const OptTensor& weight,
                                    const std::string& reduction) const {
  const std::string op = "binary_cross_entropy";
  check_reduction(reduction, op);
  same_shape(*this, target, op);
  const DType f = least_upper_float(dtype());
  Tensor x = cast(f), t = target.cast(f);
  // PyTorch clamps the logs at -100 so that 0 and 1 give finite losses.
  Tensor l = t.mul(x.log().maximum(-100.0))
                 .add(t.mul(-1).add(1).mul(x.mul(-1).add(1).log().maximum(-100.0)))
                 .neg();
  return reduce_loss(weighted(l, weight, op), reduction, op);
}

Tensor Tensor::binary_cross_entropy_with_logits(const Tensor& target, const OptTensor& weight,
                                                const std::string& reduction,
                                                const OptTensor& pos_weight) const {
  const std::string op = "binary_cross_entropy_with_logits";
  check_reduction(reduction, op);
  same_shape(*this, target, op);
  const DType f = least_upper_float(dtype());
  Tensor x = cast(f), t = target.cast(f);
  // Stable: log(1 + exp(-|x|)) + max(-x, 0) is -log(sigmoid(x)).
  Tensor softplus_neg = x.abs().neg().exp().add(1).log().add(x.neg().maximum(0.0));
  Tensor l;
  if (pos_weight) {
    Tensor lw;
    try {
      lw = pos_weight->cast(f).sub(1).mul(t).add(1);
    } catch (const Error&) {
      throw Error(op + ": pos_weight of shape " + shape_str(pos_weight->shape()) +
                  " does not broadcast to the input's shape " + shape_str(shape()));
    }
    l = t.mul(-1).add(1).mul(x).add(lw.mul(softplus_neg));
  } else {
    l = t.mul(-1).add(1).mul(x).add(softplus_neg);
  }
  return reduce_loss(weighted(l, weight, op), reduction, op);
}

Tensor Tensor::mse_loss(const Tensor& target, const std::string& reduction) const {
  check_reduction(reduction, "mse_loss");
  same_shape(*this, target, "mse_loss");
  return reduce_loss(sub(target).square(), reduction, "mse_loss");
}

Tensor Tensor::l1_loss(const Tensor& target, const std::string& reduction) const {
  check_reduction(reduction, "l1_loss");
  same_shape(*this, target, "l1_loss");
  return reduce_loss(sub(target).abs(), reduction, "l1_loss");
}

Tensor Tensor::smooth_l1_loss(const Tensor& target, const std::string& reduction,
                              double beta) const {
  const std::string op = "smooth_l1_loss";
  check_reduction(reduction, op);
  same_shape(*this, target, op);
  if (beta < 0) throw Error(op + ": beta must be non-negative, got " + std::to_string(beta));
  Tensor d = sub(target).abs();
  if (beta == 0) return reduce_loss(d, reduction, op);
  Tensor l = d.lt(beta).where(d.square().mul(0.5 / beta), d.sub(0.5 * beta));
  return reduce_loss(l, reduction, op);
}

} // namespace tg
