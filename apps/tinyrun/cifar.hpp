#pragma once
// `tinyrun cifar`: CIFAR-10 image classification.
//   train  tinygrad's hlb_cifar10 (cifar_model.hpp, cifar_train.hpp) on the binary batches of a
//          folder; progress and the test accuracy
//   eval   a model on a test batch: a layer graph + weights (the MLPerf Tiny ResNet-8,
//          graph_model.hpp), or a state saved by `cifar train --save`
//   bench  the hlb_cifar10 training step, beside the same step in PyTorch when it is installed
#include <string>
#include <vector>

namespace tinyrun {
// `args` are the words after `cifar`. Returns the process exit code; bad input raises tg::Error.
int cifar_command(const std::vector<std::string>& args);
} // namespace tinyrun
