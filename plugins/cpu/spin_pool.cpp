// The spinning worker pool of CPU launches; see spin_pool.hpp.
#include "spin_pool.hpp"

#include <algorithm>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tg::cpu {

namespace {

// How long an idle worker spins before it sleeps: longer than the host's work between two
// launches of a jitted step (a decode step's sampling included), short enough that an idle
// process gives its cores back at once.
constexpr auto kSpin = std::chrono::microseconds(1000);

void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

constexpr uint64_t kField = 0xffff; // the ticket's chunk count and next chunk

} // namespace

SpinPool::SpinPool(int threads) : threads_(std::max(threads, 1)) {
  for (int p = 1; p < threads_; ++p) workers_.emplace_back([this, p] { worker(p); });
}

SpinPool::~SpinPool() {
  stop_.store(true);
  wake_.fetch_add(1);
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

bool SpinPool::work(int participant) {
  bool ran = false;
  while (true) {
    uint64_t t = ticket_.load(std::memory_order_acquire);
    const uint64_t next = t & kField, chunks = t >> 16 & kField;
    if (next >= chunks) return ran;
    if (!ticket_.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel,
                                       std::memory_order_relaxed))
      continue;
    // The chunk is ours: the launch cannot finish (nor launch_ change) before it is done.
    const Launch& l = launch_;
    const auto i = static_cast<int64_t>(next);
    const int64_t base = l.n / l.chunks, extra = l.n % l.chunks;
    const int64_t begin = i * base + std::min(i, extra);
    const int64_t end = begin + base + (i < extra ? 1 : 0);
    if (begin < end) l.fn(l.buffers, l.vars, begin, end);
    if (l.ran_on)
      l.ran_on->fetch_or(uint64_t{1} << std::min(participant, 63), std::memory_order_relaxed);
    pending_.fetch_sub(1, std::memory_order_release);
    ran = true;
  }
}

void SpinPool::worker(int participant) {
  auto has_work = [&] {
    const uint64_t t = ticket_.load(std::memory_order_acquire);
    return (t & kField) < (t >> 16 & kField);
  };
  while (!stop_.load(std::memory_order_relaxed)) {
    if (work(participant)) continue;
    const uint32_t seen = wake_.load();
    const auto since = std::chrono::steady_clock::now();
    bool found = false;
    for (uint32_t i = 1; !found; ++i) {
      found = has_work() || stop_.load(std::memory_order_relaxed);
      cpu_relax();
      if (i % 256 == 0 && std::chrono::steady_clock::now() - since > kSpin) break;
    }
    if (found) continue;
    // A launch published after the check below bumps wake_ after it, and then sees this
    // worker among the sleepers and wakes it: no launch is missed.
    sleepers_.fetch_add(1);
    if (!has_work() && !stop_.load()) wake_.wait(seen);
    sleepers_.fetch_sub(1);
  }
}

void SpinPool::run(ChunkFn fn, void** buffers, const int64_t* vars, int64_t n, int64_t chunks,
                   std::atomic<uint64_t>* ran_on) {
  chunks = std::clamp<int64_t>(std::min(chunks, n), 1, static_cast<int64_t>(kField));
  std::lock_guard<std::mutex> lock(launching_);
  if (threads_ == 1 || chunks == 1) {
    fn(buffers, vars, 0, n);
    if (ran_on) ran_on->fetch_or(1, std::memory_order_relaxed);
    return;
  }
  launch_ = Launch{fn, buffers, vars, n, chunks, ran_on};
  pending_.store(chunks, std::memory_order_relaxed);
  ++epoch_;
  ticket_.store(ticket(epoch_ & 0xffffffff, static_cast<uint64_t>(chunks), 0),
                std::memory_order_release);
  wake_.fetch_add(1);
  if (sleepers_.load() > 0) wake_.notify_all();
  work(0);
  while (pending_.load(std::memory_order_acquire) != 0) cpu_relax();
}

} // namespace tg::cpu
