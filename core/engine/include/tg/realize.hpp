#pragma once
// Realize (tinygrad's engine/realize.py): running a schedule. Each distinct (device, kernel
// AST) is lowered, compiled and loaded once into a CompiledRunner and launched on the device's
// queue; copies take the shortest route the two devices allow (copy_buffer).
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <vector>

#include "tg/schedule.hpp"

namespace tg {

// Runs the items in order (compiling each distinct kernel once per device) and waits for them.
// DEBUG>=2 prints a line per launch and the total.
// `var_vals` gives the variables of symbolic shapes their values for this run.
void run_schedule(const std::vector<ScheduleItem>& items, const VarVals& var_vals = {});

// How copy_buffer moved the bytes.
enum class CopyRoute {
  Device,         // the destination device copied them itself (Device::copy_from)
  FromHostMemory, // the source is host-visible: copied into the destination from its memory
  IntoHostMemory, // the destination is host-visible: copied out of the source into its memory
  ThroughHost,    // out of the source into a host buffer, then into the destination
  Nothing,        // an empty buffer
};
std::string_view copy_route_name(CopyRoute r); // "device", "through host", ...

// Copies `src` into `dst` (at most dst's size) once the work queued on both devices is done, by
// the shortest route the devices allow (see copy.cpp). DEBUG>=2 prints a line per copy with
// its route and time to `debug_out`.
CopyRoute copy_buffer(Buffer& dst, Buffer& src, std::FILE* debug_out = stdout);

// Distinct (device, kernel) pairs compiled by run_schedule so far.
int64_t compiled_kernel_count();

} // namespace tg
