#pragma once
// tinygrad's hlb_cifar10 network (examples/hlb_cifar10.py, after tysam-code's hlb-CIFAR10):
//   whitening conv 3->12 (2x2, fixed, from the training images' patches), pad to 32x32,
//   Conv2d(12, 32, 1) quick_gelu, ConvGroup(32, 64), ConvGroup(64, 256), ConvGroup(256, 512),
//   max over H and W, Linear(512, 10, no bias), / 9
// ConvGroup(ci, co): conv 3x3 -> max_pool 2 -> BatchNorm -> quick_gelu, kept as the residual,
//   then conv 3x3 -> BatchNorm -> quick_gelu, plus the residual.
// The BatchNorms normalise with the batch's statistics in training and evaluation alike
// (tinygrad's recipe tracks no running statistics), eps 1e-12, their scale fixed at 1 and
// their bias trained. Input: (N, 3, 32, 32) images normalised by CIFAR-10's channel mean and
// std. State dict keys follow tinygrad's attribute names (`net.2.conv1.weight`, `whitening`).
#include <vector>

#include "tg/cifar.hpp"
#include "tg/nn.hpp"

namespace tinyrun {

// x * sigmoid(1.702 x), tinygrad's Tensor.quick_gelu.
tg::Tensor quick_gelu(const tg::Tensor& x);

class HlbBatchNorm : public tg::nn::Module {
public:
  explicit HlbBatchNorm(int64_t channels);
  tg::Tensor operator()(const tg::Tensor& x) const;
  tg::Tensor weight, bias; // weight: a buffer of ones (not trained); bias: trained
};

class ConvGroup : public tg::nn::Module {
public:
  ConvGroup(int64_t channels_in, int64_t channels_out);
  tg::Tensor operator()(const tg::Tensor& x) const;
  tg::nn::Conv2d& conv1;
  tg::nn::Conv2d& conv2;
  HlbBatchNorm& norm1;
  HlbBatchNorm& norm2;
};

class SpeedyResNet : public tg::nn::Module {
public:
  // `whitening`: the (12, 3, 2, 2) filter of whitening_filter().
  explicit SpeedyResNet(const tg::Tensor& whitening);
  // Logits (N, 10). Evaluation (`tta`) averages the logits of the images and their mirrors.
  tg::Tensor operator()(const tg::Tensor& x, bool tta = false) const;
  // The trained tensors, split as the recipe's two optimizers take them.
  std::vector<tg::Tensor> bias_params() const;
  std::vector<tg::Tensor> non_bias_params() const;

private:
  tg::Tensor forward(const tg::Tensor& x) const;
  tg::Tensor whitening_;
  tg::nn::Conv2d& conv0;
  ConvGroup& group1;
  ConvGroup& group2;
  ConvGroup& group3;
  tg::nn::Linear& fc;
};

// The whitening filter of the recipe: the 12x12 covariance of every 2x2 patch of the
// (normalised, CHW) training images, its eigenvectors scaled by 1 / sqrt(eigenvalue + 0.01),
// largest eigenvalue first, as a (12, 3, 2, 2) filter. Computed on the host in double
// precision (a 12x12 symmetric eigenproblem, by Jacobi rotations).
tg::Tensor whitening_filter(const std::vector<float>& images, int64_t n);

} // namespace tinyrun
