// tg::nn convolution layers: Conv1d, Conv2d (ConvNd) and ConvTranspose2d (see tg/nn.hpp), thin
// calls of Tensor::conv1d / conv2d / conv_transpose2d with PyTorch's parameters and
// initialisation.
#include <cmath>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/nn.hpp"

namespace tg::nn {

namespace {

// kernel_size as `n` integers (one given is repeated), each positive.
std::vector<int64_t> kernel_dims(const Tensor::IntOrTuple& k, size_t n, const std::string& op) {
  std::vector<int64_t> v = k.v;
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n)
    throw Error(op + ": kernel_size must be one or " + std::to_string(n) + " integers, got " +
                std::to_string(k.v.size()));
  for (int64_t x : v)
    if (x <= 0) throw Error(op + ": kernel_size must be positive, got " + std::to_string(x));
  return v;
}

void check_channels(int64_t in, int64_t out, int64_t groups, const std::string& op) {
  if (in <= 0 || out <= 0)
    throw Error(op + ": in_channels and out_channels must be positive, got " + std::to_string(in) +
                " and " + std::to_string(out));
  if (groups <= 0 || in % groups != 0 || out % groups != 0)
    throw Error(op + ": groups " + std::to_string(groups) + " must divide in_channels " +
                std::to_string(in) + " and out_channels " + std::to_string(out));
}

double bound_of(int64_t fan_in) { return 1 / std::sqrt(static_cast<double>(fan_in)); }

} // namespace

ConvNd::ConvNd(size_t spatial_dims_, int64_t in_channels, int64_t out_channels,
               const Tensor::IntOrTuple& kernel_size, Tensor::IntOrTuple stride_,
               Tensor::ConvPadding padding_, Tensor::IntOrTuple dilation_, int64_t groups_,
               bool has_bias)
    : stride(std::move(stride_)), dilation(std::move(dilation_)), padding(std::move(padding_)),
      groups(groups_), spatial_dims(spatial_dims_) {
  const std::string op = "Conv" + std::to_string(spatial_dims) + "d";
  check_channels(in_channels, out_channels, groups, op);
  const std::vector<int64_t> k = kernel_dims(kernel_size, spatial_dims, op);
  Shape shape{out_channels, in_channels / groups};
  int64_t fan_in = in_channels / groups;
  for (int64_t v : k) {
    shape.push_back(v);
    fan_in *= v;
  }
  const double bound = bound_of(fan_in);
  weight = param("weight", Tensor::uniform(shape, -bound, bound));
  if (has_bias) bias = param("bias", Tensor::uniform({out_channels}, -bound, bound));
}

Tensor ConvNd::operator()(const Tensor& x) const {
  return spatial_dims == 1 ? x.conv1d(weight, bias, stride, padding, dilation, groups)
                           : x.conv2d(weight, bias, stride, padding, dilation, groups);
}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels,
                                 Tensor::IntOrTuple kernel_size, Tensor::IntOrTuple stride_,
                                 Tensor::IntOrTuple padding_, Tensor::IntOrTuple output_padding_,
                                 int64_t groups_, bool has_bias, Tensor::IntOrTuple dilation_)
    : stride(std::move(stride_)), padding(std::move(padding_)),
      output_padding(std::move(output_padding_)), dilation(std::move(dilation_)), groups(groups_) {
  const std::string op = "ConvTranspose2d";
  check_channels(in_channels, out_channels, groups, op);
  const std::vector<int64_t> k = kernel_dims(kernel_size, 2, op);
  // PyTorch checks output_padding against stride and dilation when the layer is called; here
  // it is refused at once (the same rule, the values are known).
  auto two = [&](const Tensor::IntOrTuple& a, const char* name) {
    std::vector<int64_t> v = a.v;
    if (v.size() == 1) v.assign(2, v[0]);
    if (v.size() != 2)
      throw Error(op + ": " + name + " must be one or two integers, got " +
                  std::to_string(a.v.size()));
    return v;
  };
  const auto s = two(stride, "stride"), d = two(dilation, "dilation"),
             op_ = two(output_padding, "output_padding");
  (void)two(padding, "padding");
  for (size_t j = 0; j < 2; ++j)
    if (op_[j] < 0 || (op_[j] >= s[j] && op_[j] >= d[j]))
      throw Error(op + ": output_padding (" + std::to_string(op_[0]) + ", " +
                  std::to_string(op_[1]) + ") must be non-negative and smaller than either " +
                  "stride or dilation");
  // torch.nn.init's fan_in is the weight's dim 1 times the kernel: out/groups * kh * kw.
  const double bound = bound_of(out_channels / groups * k[0] * k[1]);
  weight = param("weight",
                 Tensor::uniform({in_channels, out_channels / groups, k[0], k[1]}, -bound, bound));
  if (has_bias) bias = param("bias", Tensor::uniform({out_channels}, -bound, bound));
}

Tensor ConvTranspose2d::operator()(const Tensor& x) const {
  return x.conv_transpose2d(weight, bias, stride, padding, output_padding, groups, dilation);
}

} // namespace tg::nn
