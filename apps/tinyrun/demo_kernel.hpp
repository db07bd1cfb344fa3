#pragma once
// The small computation `tinyrun` runs on the selected device until the Tensor front end
// lands: a hand-built linearized kernel (out = a*2.5 + b over 4096 floats), rendered,
// compiled (through the compile cache), launched on the device's queue and checked against
// the same arithmetic on the host.
#include <string>

#include "tg/plugin/device.hpp"

namespace tinyrun {

// Prints what it ran and returns 0 when the device's result matches the host's exactly.
int run_demo_kernel(tg::Device& device, const std::string& renderer);

} // namespace tinyrun
