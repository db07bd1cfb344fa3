#pragma once
// Launching a CPU kernel: global dimension 0 is split into chunks that oneTBB runs on up to
// CPU_THREADS threads (all cores by default); each chunk is one call of the kernel with its
// [gidx0_begin, gidx0_end). A kernel with one work item runs on the caller's thread.
#include <atomic>
#include <memory>

#include <tbb/task_arena.h>

#include "tg/plugin/device.hpp"

namespace tg::cpu {

// The CPU calling convention (docs/KERNEL_IR.md).
using KernelFn = void (*)(void** buffers, const int64_t* vars, int64_t gidx0_begin,
                          int64_t gidx0_end);

// CPU_THREADS from the environment: >= 1 caps the threads, unset or 0 means all cores.
int cpu_threads_from_env();

class CpuRuntime {
public:
  explicit CpuRuntime(int threads); // 0: every core TBB sees
  int threads() const { return threads_; }
  // Runs fn over args.global[0] work items; returns seconds when timed. `thread_mask` (may be
  // null) receives a bit per TBB thread slot that ran a chunk (slots >= 64 share bit 63).
  double launch(KernelFn fn, const LaunchArgs& args, bool timed,
                std::atomic<uint64_t>* thread_mask);

private:
  int threads_;
  tbb::task_arena arena_;
};

// A loaded kernel: the function plus whatever keeps its code alive (JIT dylib, dlopen handle).
class CpuProgram : public Program {
public:
  CpuProgram(std::shared_ptr<CpuRuntime> rt, KernelFn fn, std::shared_ptr<void> code)
      : rt_(std::move(rt)), fn_(fn), code_(std::move(code)) {}
  double run(const LaunchArgs& args, bool timed) override {
    return rt_->launch(fn_, args, timed, &thread_mask_);
  }
  // The TBB thread slots that have run this program's chunks, one bit each (for tests).
  uint64_t thread_mask() const { return thread_mask_.load(); }

private:
  std::shared_ptr<CpuRuntime> rt_;
  KernelFn fn_;
  std::shared_ptr<void> code_;
  std::atomic<uint64_t> thread_mask_{0};
};

} // namespace tg::cpu
