#pragma once
// The process-wide cache of compiled kernels: one CompiledRunner per (device, kernel AST), so
// identical kernels (the same interned AST) are compiled once however often they are scheduled.
#include <cstdint>
#include <memory>
#include <string>

#include "tg/runner.hpp"

namespace tg::sched {

std::shared_ptr<CompiledRunner> runner_for(const std::string& device, const UOpPtr& ast);
int64_t compiled_kernel_count();

} // namespace tg::sched
