// torch.nn.functional ops beyond tensor_nn.cpp / tensor_loss.cpp: cosine_similarity, normalize,
// pixel_shuffle/unshuffle, softmin, glu, prelu, kl_div, huber_loss. Composed of the ops above.
#include <string>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using detail::normalize_axis;

Tensor reduce_loss(const Tensor& l, const std::string& reduction, const std::string& op,
                   bool batchmean = false) {
  if (reduction == "none") return l;
  if (reduction == "sum") return l.sum();
  if (reduction == "mean") return l.mean();
  if (batchmean && reduction == "batchmean")
    return l.ndim() == 0 ? l.sum() : l.sum().div(static_cast<double>(l.size(0)));
  throw Error(op + ": reduction must be 'none', 'mean', " +
              std::string(batchmean ? "'batchmean' " : "") + "or 'sum', got '" + reduction + "'");
}

void check_same_shape(const Tensor& a, const Tensor& b, const std::string& op) {
  if (a.shape() != b.shape())
    throw Error(op + ": input " + shape_str(a.shape()) + " and target " + shape_str(b.shape()) +
                " must have the same shape");
}

} // namespace

Tensor Tensor::cosine_similarity(const Tensor& x2, int64_t dim, double eps) const {
  // PyTorch's: each input divided by max(its 2-norm, eps), then the dot product along dim.
  const DType dt = least_upper_float(least_upper_dtype({dtype(), x2.dtype()}));
  Tensor a = cast(dt), b = x2.cast(dt);
  const int64_t nd = std::max(a.ndim(), b.ndim());
  const int64_t ax = normalize_axis(dim, nd, "cosine_similarity");
  Shape bs = a.add(b).shape(); // the broadcast shape (checked with the add's error)
  a = a.expand(bs), b = b.expand(bs);
  Tensor na = a.vector_norm(2, {ax}, true).maximum(eps);
  Tensor nb = b.vector_norm(2, {ax}, true).maximum(eps);
  return a.div(na).mul(b.div(nb)).sum({ax});
}

Tensor Tensor::normalize(double p, int64_t dim, double eps) const {
  Tensor x = cast(least_upper_float(dtype()));
  const int64_t ax = normalize_axis(dim, ndim(), "normalize");
  if (ndim() == 0) return x.div(x.abs().maximum(eps));
  return x.div(x.vector_norm(p, {ax}, true).maximum(eps));
}

Tensor Tensor::pixel_shuffle(int64_t upscale_factor) const {
  const int64_t r = upscale_factor;
  if (r <= 0)
    throw Error("pixel_shuffle: upscale_factor must be positive, got " + std::to_string(r));
  if (ndim() < 3 || size(-3) % (r * r) != 0)
    throw Error("pixel_shuffle: input must be (*, C * r^2, H, W) with C * r^2 divisible by " +
                std::to_string(r * r) + ", got shape " + shape_str(shape()));
  const int64_t c = size(-3) / (r * r), h = size(-2), w = size(-1), nb = ndim() - 3;
  Shape lead(shape().begin(), shape().end() - 3);
  Shape s1 = lead, order, out = lead;
  for (int64_t v : {c, r, r, h, w}) s1.push_back(v);
  for (int64_t i = 0; i < nb; ++i) order.push_back(i);
  for (int64_t i : {0, 3, 1, 4, 2}) order.push_back(nb + i); // (C, H, r, W, r)
  for (int64_t v : {c, h * r, w * r}) out.push_back(v);
  return reshape(s1).permute(order).reshape(out);
}

Tensor Tensor::pixel_unshuffle(int64_t downscale_factor) const {
  const int64_t r = downscale_factor;
  if (r <= 0)
    throw Error("pixel_unshuffle: downscale_factor must be positive, got " + std::to_string(r));
  if (ndim() < 3 || size(-2) % r != 0 || size(-1) % r != 0)
    throw Error("pixel_unshuffle: input must be (*, C, H, W) with H and W divisible by " +
                std::to_string(r) + ", got shape " + shape_str(shape()));
  const int64_t c = size(-3), h = size(-2) / r, w = size(-1) / r, nb = ndim() - 3;
  Shape lead(shape().begin(), shape().end() - 3);
  Shape s1 = lead, order, out = lead;
  for (int64_t v : {c, h, r, w, r}) s1.push_back(v);
  for (int64_t i = 0; i < nb; ++i) order.push_back(i);
  for (int64_t i : {0, 2, 4, 1, 3}) order.push_back(nb + i); // (C, r, r, H, W)
  for (int64_t v : {c * r * r, h, w}) out.push_back(v);
  return reshape(s1).permute(order).reshape(out);
}

Tensor Tensor::softmin(int64_t dim) const {
  return cast(least_upper_float(dtype())).neg().softmax(dim);
}

Tensor Tensor::glu(int64_t dim) const {
  if (ndim() == 0) throw Error("glu: does not take a 0-d tensor");
  const int64_t ax = normalize_axis(dim, ndim(), "glu");
  if (size(ax) % 2 != 0)
    throw Error("glu: the halved dimension " + std::to_string(dim) +
                " must have an even size, got " + std::to_string(size(ax)) + " (shape " +
                shape_str(shape()) + ")");
  Tensor x = cast(least_upper_float(dtype()));
  const int64_t h = size(ax) / 2;
  return x.narrow(ax, 0, h).mul(x.narrow(ax, h, h).sigmoid());
}

Tensor Tensor::prelu(const Tensor& weight) const {
  const int64_t channels = ndim() >= 2 ? size(1) : 1;
  const int64_t nw = weight.numel();
  if (weight.ndim() > 1 || (nw != 1 && nw != channels))
    throw Error(
        "prelu: weight must have 1 element or one per channel (dim 1: " + std::to_string(channels) +
        "), got shape " + shape_str(weight.shape()) + " for input " + shape_str(shape()));
  Tensor w = weight.reshape({nw});
  if (nw > 1) {
    Shape s(static_cast<size_t>(ndim() - 1), 1);
    s[0] = nw;
    w = w.reshape(s);
  } else {
    w = w.reshape({});
  }
  return gt(0).where(*this, w.mul(*this));
}

Tensor Tensor::kl_div(const Tensor& target, const std::string& reduction, bool log_target) const {
  // PyTorch's pointwise loss: target * (log(target) - input), 0 where target is 0 (xlogy); with
  // log_target: exp(target) * (target - input).
  if (reduction != "none" && reduction != "mean" && reduction != "sum" && reduction != "batchmean")
    reduce_loss(*this, reduction, "kl_div", true); // raises the error naming the choices
  Tensor l = log_target ? target.exp().mul(target.sub(*this))
                        : target.xlogy(target).sub(target.mul(*this));
  return reduce_loss(l, reduction, "kl_div", true);
}

Tensor Tensor::huber_loss(const Tensor& target, const std::string& reduction, double delta) const {
  if (!(delta > 0)) throw Error("huber_loss: delta must be positive, got " + std::to_string(delta));
  check_same_shape(*this, target, "huber_loss");
  Tensor d = sub(target);
  Tensor ad = d.abs();
  Tensor l = ad.lt(delta).where(d.mul(d).mul(0.5), ad.sub(0.5 * delta).mul(delta));
  return reduce_loss(l, reduction, "huber_loss");
}

} // namespace tg
