// tg::nn normalisation and regularisation layers: GroupNorm, InstanceNorm1d/2d, RMSNorm and
// Dropout (see tg/nn.hpp), each over the Tensor functions (group_norm, rms_norm, dropout) or,
// for InstanceNorm's running statistics, the elementwise and reduce ops they are built from.
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/shape.hpp"
#include "tg/nn.hpp"

namespace tg::nn {

GroupNorm::GroupNorm(int64_t num_groups_, int64_t num_channels_, double eps_, bool affine)
    : num_groups(num_groups_), num_channels(num_channels_), eps(eps_) {
  if (num_groups <= 0 || num_channels <= 0 || num_channels % num_groups != 0)
    throw Error("GroupNorm: num_channels (" + std::to_string(num_channels) +
                ") must be divisible by num_groups (" + std::to_string(num_groups) +
                "), both positive");
  if (affine) {
    weight = param("weight", Tensor::ones({num_channels}));
    bias = param("bias", Tensor::zeros({num_channels}));
  }
}

Tensor GroupNorm::operator()(const Tensor& x) const {
  if (x.ndim() < 2 || x.shape()[1] != num_channels)
    throw Error("GroupNorm: input must be (N, " + std::to_string(num_channels) +
                ", *), got shape " + shape_str(x.shape()));
  return x.group_norm(num_groups, weight, bias, eps);
}

InstanceNorm::InstanceNorm(int64_t spatial_dims_, int64_t num_features_, double eps_,
                           double momentum_, bool affine, bool track_running_stats)
    : spatial_dims(spatial_dims_), num_features(num_features_), eps(eps_), momentum(momentum_) {
  const std::string op = "InstanceNorm" + std::to_string(spatial_dims) + "d";
  if (num_features <= 0)
    throw Error(op + ": num_features must be positive, got " + std::to_string(num_features));
  norm_state(num_features, affine, track_running_stats, weight, bias, running_mean, running_var);
  // Registered as PyTorch's _NormBase does (a state-dict key); InstanceNorm never counts it.
  if (track_running_stats)
    num_batches_tracked = buffer("num_batches_tracked", Tensor::zeros({}, dtypes::int64));
}

Tensor InstanceNorm::operator()(const Tensor& input) const {
  const std::string op = "InstanceNorm" + std::to_string(spatial_dims) + "d";
  const int64_t want = spatial_dims + 2;
  if (input.ndim() != want && input.ndim() != want - 1)
    throw Error(op + ": expected " + std::to_string(want - 1) + "-D (unbatched) or " +
                std::to_string(want) + "-D input, got shape " + shape_str(input.shape()));
  const bool unbatched = input.ndim() == want - 1;
  const Tensor x = (unbatched ? input.unsqueeze(0) : input).cast(least_upper_float(input.dtype()));
  const int64_t n = x.shape()[0], c = x.shape()[1];
  // PyTorch only warns for a channel count differing from num_features when nothing is sized
  // by it; with weights or running statistics it cannot proceed.
  if (c != num_features && (weight || running_mean))
    throw Error(op + ": input " + shape_str(input.shape()) + " has " + std::to_string(c) +
                " channels, the layer was made for num_features=" + std::to_string(num_features));
  std::vector<int64_t> axes;
  int64_t spatial = 1;
  for (int64_t i = 2; i < x.ndim(); ++i) {
    axes.push_back(i);
    spatial *= int64_t{x.shape()[static_cast<size_t>(i)]};
  }
  Shape cview{1, c};
  for (int64_t i = 0; i < spatial_dims; ++i) cview.push_back(1);
  Tensor mean, invstd;
  if (Tensor::training || !running_mean) {
    if (spatial <= 1)
      throw Error(op + ": expected more than 1 spatial element when training, got input " +
                  shape_str(input.shape()));
    mean = x.mean(axes, true);
    Tensor var = x.sub(mean).square().mean(axes, true); // biased, for normalising
    invstd = var.add(eps).rsqrt();
    if (Tensor::training && running_mean) {
      // PyTorch runs batch_norm over (1, N*C, *) and averages the N copies of each channel's
      // running statistics: the batch mean of the instance means and unbiased variances.
      const double unbias = static_cast<double>(spatial) / static_cast<double>(spatial - 1);
      Tensor bm = mean.reshape({n, c}).mean({0});
      Tensor bv = var.reshape({n, c}).mul(unbias).mean({0});
      Tensor rm = *running_mean, rv = *running_var;
      rm.assign(rm.mul(1 - momentum).add(bm.mul(momentum)).cast(rm.dtype()));
      rv.assign(rv.mul(1 - momentum).add(bv.mul(momentum)).cast(rv.dtype()));
    }
  } else {
    mean = running_mean->reshape(cview);
    invstd = running_var->reshape(cview).add(eps).rsqrt();
  }
  Tensor r = x.sub(mean).mul(invstd);
  if (weight) r = r.mul(weight->reshape(cview));
  if (bias) r = r.add(bias->reshape(cview));
  r = r.cast(x.dtype());
  return unbatched ? r.squeeze(0) : r;
}

RMSNorm::RMSNorm(Shape shape, std::optional<double> eps_, bool elementwise_affine)
    : normalized_shape(std::move(shape)), eps(eps_) {
  for (const sint& d : normalized_shape)
    if (int64_t{d} <= 0)
      throw Error("RMSNorm: normalized_shape must hold positive sizes, got " +
                  shape_str(normalized_shape));
  if (elementwise_affine) weight = param("weight", Tensor::ones(normalized_shape));
}

Tensor RMSNorm::operator()(const Tensor& x) const {
  return x.rms_norm(normalized_shape, weight, eps);
}

Dropout::Dropout(double p_) : p(p_) {
  if (!(p >= 0 && p <= 1))
    throw Error("Dropout: dropout probability has to be between 0 and 1, got " + std::to_string(p));
}

Tensor Dropout::operator()(const Tensor& x) const { return x.dropout(p, Tensor::training); }

} // namespace tg::nn
