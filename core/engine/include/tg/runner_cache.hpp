#pragma once
// The process-wide cache of compiled kernels: one CompiledRunner per (device, kernel AST), so
// identical kernels (the same interned AST) are compiled once however often they are scheduled.
#include <memory>
#include <string>

#include "tg/runner.hpp"

namespace tg {

// The runner of `ast` on `device` (a device spec), lowered with the device's renderer caps and
// compiled on first use.
std::shared_ptr<CompiledRunner> runner_for(const std::string& device, const UOpPtr& ast);

} // namespace tg
