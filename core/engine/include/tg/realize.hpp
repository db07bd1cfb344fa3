#pragma once
// Realize (tinygrad's engine/realize.py): running a schedule. Each distinct (device, kernel
// AST) is lowered, compiled and loaded once into a CompiledRunner and launched on the device's
// queue; copies go through the host.
#include <cstdint>
#include <vector>

#include "tg/schedule.hpp"

namespace tg {

// Runs the items in order (compiling each distinct kernel once per device) and waits for them.
// DEBUG>=2 prints a line per launch and the total.
// `var_vals` gives the variables of symbolic shapes their values for this run.
void run_schedule(const std::vector<ScheduleItem>& items, const VarVals& var_vals = {});

// Copies `src` into `dst` (at most dst's size) through host memory, waiting for both queues.
void copy_through_host(Buffer& dst, Buffer& src);

// Distinct (device, kernel) pairs compiled by run_schedule so far.
int64_t compiled_kernel_count();

} // namespace tg
