// The machine's read-only memory bandwidth: every core sums its share of a buffer much larger
// than the caches, best of several passes. The denominator of `bench/llm_vs_llamacpp.sh`'s
// "fraction of read bandwidth" (a decode step reads every weight once).
//   tg_bench_read_bw [MiB]   -> "read bandwidth: N GB/s (T threads, M MiB)"
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <thread>
#include <vector>

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const size_t n = mib * 1024 * 1024 / sizeof(uint64_t);
  std::unique_ptr<uint64_t[]> buf(new uint64_t[n]);
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  // Touch every page from the thread that will read it, so each reads its own memory.
  auto each = [&](auto&& body) {
    std::vector<std::thread> ts;
    for (unsigned t = 0; t < threads; ++t)
      ts.emplace_back([&, t] { body(n * t / threads, n * (t + 1) / threads); });
    for (auto& th : ts) th.join();
  };
  each([&](size_t a, size_t b) {
    for (size_t i = a; i < b; ++i) buf[i] = i;
  });
  std::vector<uint64_t> sums(threads);
  double best = 0;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    each([&](size_t a, size_t b) {
      uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      for (size_t i = a; i + 4 <= b; i += 4) {
        s0 += buf[i];
        s1 += buf[i + 1];
        s2 += buf[i + 2];
        s3 += buf[i + 3];
      }
      sums[a * threads / n] = s0 + s1 + s2 + s3;
    });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    best = std::max(best, static_cast<double>(n * sizeof(uint64_t)) / s / 1e9);
  }
  uint64_t all = 0;
  for (uint64_t s : sums) all += s;
  std::printf("read bandwidth: %.2f GB/s (%u threads, %zu MiB; checksum %llu)\n", best, threads,
              mib, static_cast<unsigned long long>(all % 1000));
  return 0;
}
