// Elementwise transcendental kernels through the Tensor front end: exp, sigmoid and GELU (erf
// and tanh forms) over n float32 (4M by default), each one fused kernel that reads and writes
// n floats. Prints the kernel's time (best of several realizes after a compiling warm-up), its
// GB/s (8 bytes per element) and its elements per ns; next to exp, a plain C loop of std::exp on
// every hardware thread as the anchor.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tg/realize.hpp"
#include "tg/tensor.hpp"

using namespace tg;

namespace {

double best_of(int runs, const std::function<void()>& f) {
  f(); // warm-up: compiles, faults pages in
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

} // namespace

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t{1} << 22);
  const int runs = 10;
  Tensor::manual_seed(0);
  Tensor a = (Tensor::rand({n}) * 8.0f - 4.0f).contiguous().realize();
  const double bytes = 8.0 * static_cast<double>(n);
  const std::vector<std::pair<std::string, std::function<Tensor(const Tensor&)>>> ops{
      {"exp", [](const Tensor& x) { return x.exp(); }},
      {"sigmoid", [](const Tensor& x) { return x.sigmoid(); }},
      {"gelu", [](const Tensor& x) { return x.gelu(); }},
      {"gelu_tanh", [](const Tensor& x) { return x.gelu("tanh"); }},
  };
  for (const auto& [name, f] : ops) {
    Tensor r;
    const double t = best_of(runs, [&] { r = f(a).realize(); });
    std::printf("%-10s %lld float32: %8.3f ms %7.2f GB/s %6.2f elem/ns\n", name.c_str(),
                static_cast<long long>(n), t * 1e3, bytes / t * 1e-9,
                static_cast<double>(n) / t * 1e-9);
  }
  std::vector<float> h = a.to_vector<float>(), o(h.size());
  const double t_c = best_of(runs, [&] {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        for (int64_t i = n * t / threads; i < n * (t + 1) / threads; ++i) o[i] = std::exp(h[i]);
      });
    for (auto& th : pool) th.join();
  });
  std::printf("C std::exp %lld float32: %8.3f ms %7.2f GB/s %6.2f elem/ns\n",
              static_cast<long long>(n), t_c * 1e3, bytes / t_c * 1e-9,
              static_cast<double>(n) / t_c * 1e-9);
  return 0;
}
