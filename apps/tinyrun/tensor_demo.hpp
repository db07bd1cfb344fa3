#pragma once
#include <string>

namespace tinyrun {
// The main job of `make run` for now: a few Tensor computations on the default device (DEV),
// each checked against the host. Returns the process exit code.
int run_tensor_demo();
} // namespace tinyrun
