#pragma once
// tinygrad's beautiful_mnist model (examples/beautiful_mnist.py), layer for layer:
//   Conv2d(1,32,5) relu  Conv2d(32,32,5) relu  BatchNorm(32) max_pool2d
//   Conv2d(32,64,3) relu Conv2d(64,64,3) relu  BatchNorm(64) max_pool2d  flatten(1) Linear(576,10)
// Input (N, 1, 28, 28) float pixels 0..255 (tinygrad feeds the raw uint8 images); output (N, 10)
// logits. The state dict keys are tinygrad's for its `layers` list ("layers.0.weight",
// "layers.4.running_mean", ..., "layers.13.bias"), so a state saved by either loads in the other.
#include "tg/nn.hpp"

namespace tinyrun {

class MnistModel : public tg::nn::Module {
public:
  MnistModel();
  tg::Tensor operator()(const tg::Tensor& x) const;
  // The state that is not trained (BatchNorm running statistics and batch counts): a training
  // step realizes these with the loss so that their assigns run in the step.
  std::vector<tg::Tensor> buffers() const;

  tg::nn::Conv2d& conv1;
  tg::nn::Conv2d& conv2;
  tg::nn::BatchNorm& bn1;
  tg::nn::Conv2d& conv3;
  tg::nn::Conv2d& conv4;
  tg::nn::BatchNorm& bn2;
  tg::nn::Linear& fc;
};

} // namespace tinyrun
