#pragma once
// The threads a split CPU launch runs on: the caller plus threads - 1 workers that spin between
// launches, as llama.cpp's thread pool does. A decode step is hundreds of kernels a few
// microseconds to a few tens long, launched back to back; a worker that has gone to sleep
// between them (oneTBB's do after a short spin) takes microseconds to wake for the next, which
// is as long as a small matvec's half of the work. Here a worker that finds no chunk spins for
// kSpinNs before it sleeps, so a launch reaches it through one cache line.
//
// A launch is cut into chunks that the participants take from a shared ticket (an atomic
// counter of the next chunk), so a slow core takes fewer; the caller takes chunks too and
// returns when every chunk is done. Launches from several host threads are serialized.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace tg::cpu {

using ChunkFn = void (*)(void** buffers, const int64_t* vars, int64_t gidx0_begin,
                         int64_t gidx0_end);

class SpinPool {
public:
  explicit SpinPool(int threads); // participants, the caller included (>= 1)
  ~SpinPool();
  SpinPool(const SpinPool&) = delete;
  SpinPool& operator=(const SpinPool&) = delete;

  int threads() const { return threads_; }
  // Runs fn over [0, n) in `chunks` pieces of about equal size; `ran_on` (may be null) gets a
  // bit per participant that ran a chunk (0: the caller).
  void run(ChunkFn fn, void** buffers, const int64_t* vars, int64_t n, int64_t chunks,
           std::atomic<uint64_t>* ran_on);

private:
  // The ticket: the launch's epoch (32 bits), its chunk count (16) and the next chunk (16).
  static uint64_t ticket(uint64_t epoch, uint64_t chunks, uint64_t next) {
    return epoch << 32 | chunks << 16 | next;
  }
  // Takes and runs chunks of the current launch until none is left; false if there was none.
  bool work(int participant);
  void worker(int participant);

  struct Launch {
    ChunkFn fn = nullptr;
    void** buffers = nullptr;
    const int64_t* vars = nullptr;
    int64_t n = 0, chunks = 0;
    std::atomic<uint64_t>* ran_on = nullptr;
  };

  int threads_;
  Launch launch_; // written by the launching thread before it publishes the ticket
  alignas(64) std::atomic<uint64_t> ticket_{0};
  alignas(64) std::atomic<int64_t> pending_{0}; // chunks of the launch not finished
  alignas(64) std::atomic<uint32_t> wake_{0};   // bumped per launch; sleeping workers wait on it
  std::atomic<int> sleepers_{0};
  std::atomic<bool> stop_{false};
  uint64_t epoch_ = 0;
  std::mutex launching_;
  std::vector<std::thread> workers_;
};

} // namespace tg::cpu
