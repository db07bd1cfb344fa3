#pragma once
// The small computation `tinyrun` runs on the selected device until the Tensor front end
// lands: a hand-built kernel AST (out = a*2.5 + b over 4096 floats), lowered by codegen,
// compiled (through the compile cache) and launched by a CompiledRunner on the device's queue
// (DEBUG=2 prints its launch line), and checked against the same arithmetic on the host.
#include <memory>
#include <string>

#include "tg/plugin/device.hpp"

namespace tinyrun {

// Prints what it ran and returns 0 when the device's result matches the host's exactly.
int run_demo_kernel(const std::shared_ptr<tg::Device>& device, const std::string& renderer);

} // namespace tinyrun
