#pragma once
// Launching a CPU kernel: global dimension 0 is split into chunks that run on up to
// CPU_THREADS threads (all cores by default; the caller and spinning workers, SpinPool); each
// chunk is one call of the kernel with its [gidx0_begin, gidx0_end). A kernel with one work item
// runs on the caller's thread, and so does one whose whole run is shorter than splitting it
// costs (LaunchStats).
#include <atomic>
#include <memory>

#include "spin_pool.hpp"
#include "tg/plugin/device.hpp"

namespace tg::cpu {

// The CPU calling convention (docs/KERNEL_IR.md).
using KernelFn = void (*)(void** buffers, const int64_t* vars, int64_t gidx0_begin,
                          int64_t gidx0_end);

// CPU_THREADS from the environment: >= 1 caps the threads, unset or 0 means all cores.
int cpu_threads_from_env();

// What a program's earlier launches measured, to decide whether the next one is split over the
// threads. Splitting costs a few microseconds (handing the chunks over, joining the workers,
// each chunk's cold start), which is most of the time of
// the small kernels a decode step is made of (an LLM's norms, quantized activations, rope: a
// third of the kernels of a 110M llama's step). Launches are split and timed until one is short
// (a first launch is often slow: cold caches, page faults); the next runs on the caller's
// thread and measures the time per work item; from then on a launch whose items would take
// less than the split's cost runs unsplit. A program whose split launches are short is split
// into one chunk per thread instead of four.
struct LaunchStats {
  std::atomic<float> item_ns{-1.f};  // one work item on one thread; < 0: not measured yet
  std::atomic<float> split_ns{-1.f}; // the shortest split launch; < 0: none yet
};

class CpuRuntime {
public:
  explicit CpuRuntime(int threads); // 0: every core this process may use
  int threads() const { return threads_; }
  // Runs fn over args.global[0] work items; returns seconds when timed. `thread_mask` (may be
  // null) receives a bit per thread that ran a chunk (0: the caller; >= 64 share bit 63);
  // `stats` (may be null: always split) the program's measurements (LaunchStats).
  double launch(KernelFn fn, const LaunchArgs& args, bool timed, std::atomic<uint64_t>* thread_mask,
                LaunchStats* stats = nullptr);

private:
  int threads_;
  SpinPool pool_;
};

// A loaded kernel: the function plus whatever keeps its code alive (JIT dylib, dlopen handle).
class CpuProgram : public Program {
public:
  CpuProgram(std::shared_ptr<CpuRuntime> rt, KernelFn fn, std::shared_ptr<void> code)
      : rt_(std::move(rt)), fn_(fn), code_(std::move(code)) {}
  double run(const LaunchArgs& args, bool timed) override {
    return rt_->launch(fn_, args, timed, &thread_mask_, &stats_);
  }
  // The threads that have run this program's chunks, one bit each (for tests).
  uint64_t thread_mask() const { return thread_mask_.load(); }
  // What its launches measured (for tests).
  const LaunchStats& launch_stats() const { return stats_; }

private:
  std::shared_ptr<CpuRuntime> rt_;
  KernelFn fn_;
  std::shared_ptr<void> code_;
  std::atomic<uint64_t> thread_mask_{0};
  LaunchStats stats_;
};

} // namespace tg::cpu
