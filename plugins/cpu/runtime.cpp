#include "runtime.hpp"

#include <algorithm>
#include <chrono>

#include <tbb/blocked_range.h>
#include <tbb/info.h>
#include <tbb/parallel_for.h>

#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg::cpu {

// The knob registry refuses values outside 0..4096 with the knob's name.
int cpu_threads_from_env() { return static_cast<int>(knobs::CPU_THREADS.get()); }

CpuRuntime::CpuRuntime(int threads)
    : threads_(threads > 0 ? threads : tbb::info::default_concurrency()), arena_(threads_) {}

double CpuRuntime::launch(KernelFn fn, const LaunchArgs& args, bool timed,
                          std::atomic<uint64_t>* thread_mask) {
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

  const auto t0 =
      timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  if (n <= 1 || threads_ == 1) {
    fn(bufs, vars, 0, n);
    if (thread_mask) thread_mask->fetch_or(1);
  } else {
    // About four chunks per thread: enough to balance uneven chunks, few enough that the
    // per-call overhead stays small.
    const int64_t grain = std::max<int64_t>(1, n / (4 * int64_t{threads_}));
    arena_.execute([&] {
      tbb::parallel_for(
          tbb::blocked_range<int64_t>(0, n, grain), [&](const tbb::blocked_range<int64_t>& r) {
            fn(bufs, vars, r.begin(), r.end());
            if (thread_mask) {
              const int slot = std::clamp(tbb::this_task_arena::current_thread_index(), 0, 63);
              thread_mask->fetch_or(uint64_t{1} << slot, std::memory_order_relaxed);
            }
          });
    });
  }
  if (!timed) return 0.0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace tg::cpu
