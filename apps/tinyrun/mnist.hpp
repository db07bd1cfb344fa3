#pragma once
// `tinyrun mnist`: tinygrad's beautiful_mnist (mnist_model.hpp) trained and evaluated on the
// MNIST IDX files of the data folder.
//   train  trains with Adam (batch 512, 70 steps by default), shows the progress and the test
//          accuracy, and saves the state as safetensors (--save)
//   eval   loads such a state (strict) and prints the accuracy on an IDX image/label pair
//   bench  times training steps on random digits (ms/step, images/s)
#include <string>
#include <vector>

namespace tinyrun {
// `args` are the words after `mnist`. Returns the process exit code; bad input raises tg::Error.
int mnist_command(const std::vector<std::string>& args);
} // namespace tinyrun
