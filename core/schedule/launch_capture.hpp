#pragma once
// What run_schedule launched, as TinyJit records it (core/engine/jit.cpp): while a capture is
// set on a thread, run_schedule appends every kernel launch and copy it makes there.
#include <memory>
#include <string>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/runner.hpp"

namespace tg::sched {

struct CapturedLaunch {
  std::shared_ptr<CompiledRunner> runner;    // null for a copy
  std::vector<std::shared_ptr<Buffer>> bufs; // kernel: PARAM slot order; copy: {dst, src}
};

// Sets (or with nullptr clears) this thread's capture; returns the previous one.
std::vector<CapturedLaunch>* set_launch_capture(std::vector<CapturedLaunch>* into);

} // namespace tg::sched
