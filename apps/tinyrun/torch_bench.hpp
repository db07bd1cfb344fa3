#pragma once
// Running the PyTorch twin of a `tinyrun ... bench` (bench/<script>, which prints
// "ms/step: X") in the same run, and the ratio of the two.
#include <string>

namespace tinyrun {

// Runs `python bench/<script> <args>` from the source tree, echoes its output and prints
// "ratio: tinygrad-cpp A ms/step / PyTorch B ms/step = R x". When the interpreter or PyTorch
// is missing it says so and how to install it (scripts/install-deps.sh --bench) instead; the
// benchmark's own figures stand either way. Returns PyTorch's ms/step, or a negative number.
double run_torch_beside(const std::string& python, const std::string& script,
                        const std::string& args, double ours_ms);

} // namespace tinyrun
