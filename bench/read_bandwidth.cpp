// The machine's read-only memory bandwidth: every core sums its share of a buffer much larger
// than the caches, best of several passes. The denominator of `bench/llm_vs_llamacpp.sh`'s
// "fraction of read bandwidth" (a decode step reads every weight once).
//   tg_bench_read_bw [MiB]   -> "read bandwidth: N GB/s (T threads, M MiB)"
//
// The threads are started once and meet at a barrier before and after each pass; each times
// its own reading, and a pass lasts from the first start to the last end (the main thread may
// not run at all while the readers do). Each thread reads its share as 1, 4 or 8 interleaved
// streams (a matrix-vector product reads many rows at once, and the hardware prefetchers track
// several streams per core), in whole 64-byte lines summed into independent 64-bit accumulators
// that the compiler vectorizes; the best layout is the figure.
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

namespace {

constexpr size_t kLine = 8; // uint64 per 64-byte line

// Sums `streams` interleaved pieces of [a, b) (whole lines), a line of each in turn.
uint64_t read_streams(const uint64_t* buf, size_t a, size_t b, size_t streams) {
  const size_t lines = (b - a) / kLine / streams;
  uint64_t acc[kLine] = {};
  for (size_t l = 0; l < lines; ++l)
    for (size_t s = 0; s < streams; ++s) {
      const uint64_t* p = buf + a + (s * lines + l) * kLine;
      for (size_t i = 0; i < kLine; ++i) acc[i] += p[i];
    }
  uint64_t sum = 0;
  for (uint64_t v : acc) sum += v;
  return sum;
}

} // namespace

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const size_t n = mib * 1024 * 1024 / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[n]);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  const size_t layouts[] = {1, 4, 8};
  constexpr int kPasses = 5;

  using Clock = std::chrono::steady_clock;
  std::vector<uint64_t> sums(threads);
  std::vector<Clock::time_point> starts(threads), ends(threads);
  std::barrier sync(static_cast<std::ptrdiff_t>(threads) + 1);
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      const size_t a = n * t / threads, b = n * (t + 1) / threads;
      // Touch every page from the thread that will read it, so each reads its own memory.
      for (size_t i = a; i < b; ++i) buf[i] = i;
      sync.arrive_and_wait();
      for (size_t streams : layouts)
        for (int pass = 0; pass < kPasses; ++pass) {
          sync.arrive_and_wait();
          starts[t] = Clock::now();
          sums[t] += read_streams(buf.get(), a, b, streams);
          ends[t] = Clock::now();
          sync.arrive_and_wait();
        }
    });

  sync.arrive_and_wait(); // pages touched
  double best = 0;
  size_t best_streams = 1;
  for (size_t streams : layouts)
    for (int pass = 0; pass < kPasses; ++pass) {
      sync.arrive_and_wait();
      sync.arrive_and_wait();
      const auto first = *std::min_element(starts.begin(), starts.end());
      const auto last = *std::max_element(ends.begin(), ends.end());
      const double s = std::chrono::duration<double>(last - first).count();
      const double gbs = static_cast<double>(n * sizeof(uint64_t)) / s / 1e9;
      if (gbs > best) {
        best = gbs;
        best_streams = streams;
      }
    }
  for (auto& th : pool) th.join();
  uint64_t all = 0;
  for (uint64_t s : sums) all += s;
  std::printf("read bandwidth: %.2f GB/s (%u threads, %zu MiB, %zu streams a thread; checksum "
              "%llu)\n",
              best, threads, mib, best_streams, static_cast<unsigned long long>(all % 1000));
  return 0;
}
