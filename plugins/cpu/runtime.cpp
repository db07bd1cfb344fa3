#include "runtime.hpp"

#include <algorithm>
#include <chrono>

#include <tbb/info.h>

#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg::cpu {

// The knob registry refuses values outside 0..4096 with the knob's name.
int cpu_threads_from_env() { return static_cast<int>(knobs::CPU_THREADS.get()); }

CpuRuntime::CpuRuntime(int threads)
    : threads_(threads > 0 ? threads : tbb::info::default_concurrency()), pool_(threads_) {}

namespace {
// What splitting a launch costs, in ns of one thread's work: a split run takes about
// kSplitNs + t / threads for t ns of work, so it pays from t = kSplitNs * threads / (threads - 1).
constexpr double kSplitNs = 3000;
// A split launch shorter than this makes the next one an unsplit run, to measure.
constexpr double kProbeNs = 50000;
// A program whose split launches took less than this is split into one chunk per thread: the
// scheduling of more chunks costs more than their balancing gains (a 110M llama's decode: 5-10%
// more tokens/s), while longer kernels keep four chunks a thread to even out slow cores (a 1024
// matmul: 3-9% faster than one chunk a thread on the noisy 2-core VMs here).
constexpr double kOneChunkNs = 200000;

// Whether this launch of n items runs on the caller's thread.
bool run_unsplit(LaunchStats& s, int64_t n, int threads) {
  const float item = s.item_ns.load(std::memory_order_relaxed);
  if (item >= 0)
    return static_cast<double>(item) * static_cast<double>(n) < kSplitNs * threads / (threads - 1);
  const float split = s.split_ns.load(std::memory_order_relaxed);
  return split >= 0 && split < kProbeNs;
}
} // namespace

double CpuRuntime::launch(KernelFn fn, const LaunchArgs& args, bool timed,
                          std::atomic<uint64_t>* thread_mask, LaunchStats* stats) {
  // Buffers as the kernel's void* array; small kernels stay on the stack.
  void* small[16];
  std::vector<void*> large;
  void** bufs = small;
  if (args.buffers.size() > 16) {
    large.resize(args.buffers.size());
    bufs = large.data();
  }
  for (size_t i = 0; i < args.buffers.size(); ++i)
    bufs[i] = reinterpret_cast<void*>(args.buffers[i]);
  const int64_t* vars = args.vars.data();
  const int64_t n = args.global[0];
  if (n < 0) throw Error("CPU launch: global size " + std::to_string(n) + " is negative");

  const bool measure = timed || stats;
  const auto t0 =
      measure ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  auto elapsed_ns = [&] {
    return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
  };
  const bool single = n <= 1 || threads_ == 1;
  if (single || (stats && run_unsplit(*stats, n, threads_))) {
    fn(bufs, vars, 0, n);
    if (thread_mask) thread_mask->fetch_or(1);
    if (stats && !single) {
      // The time per item, smoothed: the items' work may change with the kernel's variables.
      const double per = elapsed_ns() / static_cast<double>(n);
      const float old = stats->item_ns.load(std::memory_order_relaxed);
      stats->item_ns.store(static_cast<float>(old < 0 ? per : 0.75 * old + 0.25 * per),
                           std::memory_order_relaxed);
    }
  } else {
    // About four chunks per thread: enough to balance uneven chunks, few enough that the
    // per-call overhead stays small; one for a short kernel (kOneChunkNs).
    const float split = stats ? stats->split_ns.load(std::memory_order_relaxed) : -1.f;
    const int64_t per_thread = split >= 0 && split < kOneChunkNs ? 1 : 4;
    pool_.run(fn, bufs, vars, n, per_thread * int64_t{threads_}, thread_mask);
    if (stats) {
      const float t = static_cast<float>(elapsed_ns());
      const float best = stats->split_ns.load(std::memory_order_relaxed);
      if (best < 0 || t < best) stats->split_ns.store(t, std::memory_order_relaxed);
    }
  }
  if (!timed) return 0.0;
  return elapsed_ns() * 1e-9;
}

} // namespace tg::cpu
