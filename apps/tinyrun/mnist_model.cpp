#include "mnist_model.hpp"

#include <memory>

#include "tg/error.hpp"

namespace tinyrun {

using tg::Tensor;
namespace nn = tg::nn;

// Children are named by their index in tinygrad's `layers` list (the activations, pools and
// flatten take the indices in between).
MnistModel::MnistModel()
    : conv1(child("layers.0", std::make_unique<nn::Conv2d>(1, 32, 5))),
      conv2(child("layers.2", std::make_unique<nn::Conv2d>(32, 32, 5))),
      bn1(child("layers.4", std::make_unique<nn::BatchNorm>(32))),
      conv3(child("layers.6", std::make_unique<nn::Conv2d>(32, 64, 3))),
      conv4(child("layers.8", std::make_unique<nn::Conv2d>(64, 64, 3))),
      bn2(child("layers.10", std::make_unique<nn::BatchNorm>(64))),
      fc(child("layers.13", std::make_unique<nn::Linear>(576, 10))) {}

Tensor MnistModel::operator()(const Tensor& x) const {
  if (x.ndim() != 4 || x.size(1) != 1 || x.size(2) != 28 || x.size(3) != 28)
    throw tg::Error("MnistModel: the input must be (N, 1, 28, 28) images, got " + x.str());
  Tensor h = conv1(x).relu();
  h = conv2(h).relu();
  h = bn1(h).max_pool2d(2);
  h = conv3(h).relu();
  h = conv4(h).relu();
  h = bn2(h).max_pool2d(2);
  return fc(h.flatten(1));
}

std::vector<Tensor> MnistModel::buffers() const {
  std::vector<Tensor> out;
  for (const auto& [name, t] : named_state())
    if (!t.requires_grad()) out.push_back(t);
  return out;
}

} // namespace tinyrun
