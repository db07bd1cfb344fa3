// End-to-end Tensor benchmarks on the default device, each next to an anchor measured in the
// same run on the same machine:
//   add   c = a + b over 16M float32: GB/s (12 bytes per element), vs a plain C loop on every
//         thread and OpenBLAS saxpy (y += x, also 12 bytes per element)
//   sum   s = a.sum() over 16M float32: GB/s (4 bytes per element), vs a plain C loop (which
//         cannot vectorize a float sum without reassociating it) and OpenBLAS sasum
//   gemm  1024x1024 float32 matmul: GFLOP/s, vs OpenBLAS cblas_sgemm
//   conv  conv2d, batch 64, 32->32 channels, 28x28, 3x3, padding 1, float32: GFLOP/s (no anchor)
//   decode  attention of one query over a KV cache of length 1..128 (d=64), as an LLM decodes:
//         the length as a bound variable (one graph, kernels compiled once) vs a concrete
//         length per step (new kernels each step); total time and kernels compiled
//   jit   host time per launch of a step of 100 trivial kernels: eager vs TinyJit replay
// Times are the best of several runs of a whole realize (scheduling from the cache, launch,
// wait), after a warm-up that compiles the kernel.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <utility>
#include <vector>

#include "tg/jit.hpp"
#include "tg/realize.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"
#ifdef TG_HAVE_OPENBLAS
#include "openblas_anchor.hpp"
#endif

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

// The C anchors use every hardware thread, as the CPU device does.
void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& body) {
  const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(body, n * t / threads, n * (t + 1) / threads);
  for (auto& th : pool) th.join();
}

} // namespace

int main(int argc, char** argv) {
#ifdef TG_HAVE_OPENBLAS
  tg_bench::pin_openblas_kernels(argv);
#endif
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (int64_t{1} << 24);
  const int64_t mm = argc > 2 ? std::atoll(argv[2]) : 1024;
  const int runs = 5;
  std::printf("tensor bench on %s, %u hardware threads\n", Tensor::zeros({1}).device().c_str(),
              std::thread::hardware_concurrency());

  // ---- elementwise add -----------------------------------------------------------------
  Tensor::manual_seed(0);
  Tensor a = Tensor::rand({n}).contiguous().realize();
  Tensor b = Tensor::rand({n}).contiguous().realize();
  Tensor c;
  const double t_add = best_of(runs, [&] { c = (a + b).realize(); });
  std::vector<float> ha = a.to_vector<float>(), hb = b.to_vector<float>(),
                     hc(static_cast<size_t>(n));
  const double t_add_c = best_of(runs, [&] {
    parallel_for(n, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) hc[i] = ha[i] + hb[i];
    });
  });
  const double add_bytes = 12.0 * static_cast<double>(n);
  std::vector<float> tc = c.to_vector<float>();
  int64_t add_wrong = 0;
  for (int64_t i = 0; i < n; ++i) add_wrong += tc[i] != hc[i];
  if (add_wrong)
    std::printf("add: %lld results differ from the C loop\n", static_cast<long long>(add_wrong));
  std::printf(
      "add   %lld float32: tg %8.2f ms %7.2f GB/s | C loop %8.2f ms %7.2f GB/s | ratio %.2f\n",
      static_cast<long long>(n), t_add * 1e3, add_bytes / t_add * 1e-9, t_add_c * 1e3,
      add_bytes / t_add_c * 1e-9, t_add_c / t_add);

#ifdef TG_HAVE_OPENBLAS
  {
    std::vector<float> hy = hb;
    const double t_axpy = best_of(runs, [&] {
      cblas_saxpy(static_cast<int>(n), 1.0f, ha.data(), 1, hy.data(), 1); // y += a: 12 B/elt
    });
    std::printf("      OpenBLAS saxpy %8.2f ms %7.2f GB/s | ratio tg/saxpy %.2f\n", t_axpy * 1e3,
                add_bytes / t_axpy * 1e-9, t_axpy / t_add);
    tg_bench::let_openblas_threads_sleep();
  }
#endif

  // ---- sum -------------------------------------------------------------------------------
  Tensor s;
  const double t_sum = best_of(runs, [&] { s = a.sum().realize(); });
  std::vector<double> partial(64);
  double host_sum = 0;
  const double t_sum_c = best_of(runs, [&] {
    std::fill(partial.begin(), partial.end(), 0.0);
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    parallel_for(threads, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        float acc = 0;
        for (int64_t i = n * t / threads; i < n * (t + 1) / threads; ++i) acc += ha[i];
        partial[static_cast<size_t>(t)] = acc;
      }
    });
    host_sum = 0;
    for (double p : partial) host_sum += p;
  });
  const double sum_bytes = 4.0 * static_cast<double>(n);
  std::printf("sum   %lld float32: tg %8.2f ms %7.2f GB/s | C loop %8.2f ms %7.2f GB/s | ratio %.2f"
              " (tg %.6g, C %.6g)\n",
              static_cast<long long>(n), t_sum * 1e3, sum_bytes / t_sum * 1e-9, t_sum_c * 1e3,
              sum_bytes / t_sum_c * 1e-9, t_sum_c / t_sum, s.item<float>(), host_sum);

#ifdef TG_HAVE_OPENBLAS
  {
    float blas_sum = 0; // rand() is in [0, 1): the sum of absolute values is the sum
    const double t_asum =
        best_of(runs, [&] { blas_sum = cblas_sasum(static_cast<int>(n), ha.data(), 1); });
    std::printf("      OpenBLAS sasum %8.2f ms %7.2f GB/s | ratio tg/sasum %.2f (sasum %.6g)\n",
                t_asum * 1e3, sum_bytes / t_asum * 1e-9, t_asum / t_sum, blas_sum);
    tg_bench::let_openblas_threads_sleep();
  }
#endif

  // ---- matmul ----------------------------------------------------------------------------
  Tensor x = Tensor::rand({mm, mm}).contiguous().realize();
  Tensor y = Tensor::rand({mm, mm}).contiguous().realize();
  Tensor z;
  const double t_mm = best_of(3, [&] { z = x.matmul(y).realize(); });
  const double flops =
      2.0 * static_cast<double>(mm) * static_cast<double>(mm) * static_cast<double>(mm);
  std::printf("gemm  %lldx%lld float32: tg %8.2f ms %7.2f GFLOP/s", static_cast<long long>(mm),
              static_cast<long long>(mm), t_mm * 1e3, flops / t_mm * 1e-9);
#ifdef TG_HAVE_OPENBLAS
  std::vector<float> hx = x.to_vector<float>(), hy = y.to_vector<float>(),
                     hz(static_cast<size_t>(mm * mm));
  const auto m = static_cast<int>(mm);
  const double t_blas = best_of(3, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, hx.data(), m, hy.data(),
                m, 0.0f, hz.data(), m);
  });
  std::vector<float> tz = z.to_vector<float>();
  double max_err = 0;
  for (size_t i = 0; i < tz.size(); ++i)
    max_err = std::max(max_err, double(std::abs(tz[i] - hz[i])));
  std::printf(" | OpenBLAS sgemm %8.2f ms %7.2f GFLOP/s | ratio %.3f (max |diff| %.2g)\n",
              t_blas * 1e3, flops / t_blas * 1e-9, t_blas / t_mm, max_err);
  tg_bench::let_openblas_threads_sleep();
#else
  std::printf(" | OpenBLAS not found at build time (install libopenblas-dev)\n");
#endif

  // ---- conv2d ----------------------------------------------------------------------------
  const int64_t cb = 64, cc = 32, hw = 28, kk = 3;
  Tensor cx = Tensor::rand({cb, cc, hw, hw}).contiguous().realize();
  Tensor cw = Tensor::rand({cc, cc, kk, kk}).contiguous().realize();
  Tensor co;
  const double t_conv = best_of(3, [&] { co = cx.conv2d(cw, {}, 1, 1).realize(); });
  const double conv_flops =
      2.0 * static_cast<double>(cb * cc * hw * hw) * static_cast<double>(cc * kk * kk);
  std::printf("conv  conv2d %lldx%lldx%lldx%lld * %lldx%lldx%lldx%lld pad 1 float32: tg %8.2f ms "
              "%7.2f GFLOP/s\n",
              static_cast<long long>(cb), static_cast<long long>(cc), static_cast<long long>(hw),
              static_cast<long long>(hw), static_cast<long long>(cc), static_cast<long long>(cc),
              static_cast<long long>(kk), static_cast<long long>(kk), t_conv * 1e3,
              conv_flops / t_conv * 1e-9);

  // ---- decode attention: symbolic length vs concrete -------------------------------------
  const int64_t max_len = 128, dh = 64;
  Tensor kc = Tensor::rand({max_len, dh}).contiguous().realize();
  Tensor vc = Tensor::rand({max_len, dh}).contiguous().realize();
  Tensor q = Tensor::rand({1, dh}).contiguous().realize();
  auto decode = [&](const sint& len) {
    Tensor k = kc.shrink({{0, len}, {0, dh}}), v = vc.shrink({{0, len}, {0, dh}});
    return q.matmul(k.transpose()).mul(0.125).softmax(-1).matmul(v).realize();
  };
  const sint pos = Variable("pos", 1, max_len);
  auto run_all = [&](bool symbolic) {
    const int64_t compiled0 = compiled_kernel_count();
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t len = 1; len <= max_len; ++len) decode(symbolic ? pos.bind(len) : sint(len));
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return std::make_pair(secs, compiled_kernel_count() - compiled0);
  };
  const auto [t_sym, k_sym] = run_all(true);
  const auto [t_con, k_con] = run_all(false);
  std::printf("decode %lld steps (KV length 1..%lld, d=%lld): symbolic %8.1f ms, %lld kernels "
              "compiled | concrete %8.1f ms, %lld kernels compiled | ratio %.1fx\n",
              static_cast<long long>(max_len), static_cast<long long>(max_len),
              static_cast<long long>(dh), t_sym * 1e3, static_cast<long long>(k_sym), t_con * 1e3,
              static_cast<long long>(k_con), t_con / t_sym);

  // ---- TinyJit replay overhead: a step of `chain` trivial kernels -------------------------
  // Each kernel adds one to 16 floats, so the time is host work per launch: building the
  // graph, the schedule cache lookup and the launches (eager) against swapping pointers and
  // one Graph submission (jit) or one queue submission per launch (jit, no graph).
  const int chain = 100, steps = 50;
  auto trivial = [&](const Tensor& in) {
    Tensor t = in;
    for (int i = 0; i < chain; ++i) t = (t + 1).contiguous();
    return t;
  };
  Tensor x0 = Tensor::zeros({16}).contiguous().realize();
  auto per_launch = [&](const std::function<void()>& step) {
    return best_of(3,
                   [&] {
                     for (int i = 0; i < steps; ++i) step();
                   }) /
           (steps * chain);
  };
  const double t_eager = per_launch([&] { trivial(x0).realize(); });
  TinyJit jit_graph(trivial), jit_plain(trivial, JitOptions{.use_graph = false});
  const double t_graph = per_launch([&] { jit_graph(x0); });
  const double t_plain = per_launch([&] { jit_plain(x0); });
  std::printf("jit   step of %d trivial kernels, per launch: eager %7.2f us | replay %7.2f us "
              "(graph) %7.2f us (no graph) | eager/replay %.1fx\n",
              chain, t_eager * 1e6, t_graph * 1e6, t_plain * 1e6, t_eager / t_graph);
  return 0;
}
