// BEAM on the NxN float32 matmul kernel (default 1024), on the default device:
//   heuristic  the kernel with the hand-coded Opts: GFLOP/s
//   cold       BEAM=W (default 2) with an empty cache folder: the first realize's wall time
//              (search, compiles, the run) and the candidates timed
//   warm       the same search again through the disk cache, as a second run of the program
//              does, per kernel (on a CPU two: b packed into column panels, then the product):
//              seconds, candidates (0: nothing searched) and the Opts found
//   matmul     the whole matmul with the searched Opts: GFLOP/s
//   OpenBLAS   cblas_sgemm in the same run, when found at build time
// Usage: tg_bench_beam [N] [W] [CACHE_DIR]. With CACHE_DIR the cache folder is that one and kept
// (run twice: the second run's "cold" line finds every result on disk and times nothing); by
// default a fresh folder, removed at the end. Times are the best of 3 realizes after a warm-up.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <thread>
#include <unistd.h>
#include <vector>

#include "tg/beam.hpp"
#include "tg/device_registry.hpp"
#include "tg/knobs.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"
#ifdef TG_HAVE_OPENBLAS
#include "openblas_anchor.hpp"
#endif

using namespace tg;
namespace fs = std::filesystem;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double best_of(int runs, const std::function<void()>& f) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    const double t0 = now_s();
    f();
    best = std::min(best, now_s() - t0);
  }
  return best;
}

std::string opts_str(const std::vector<Opt>& opts) {
  std::string s;
  for (const Opt& o : opts) s += (s.empty() ? "" : " ") + o.str();
  return s.empty() ? "(none)" : s;
}

} // namespace

int main(int argc, char** argv) {
#ifdef TG_HAVE_OPENBLAS
  tg_bench::pin_openblas_kernels(argv);
#endif
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : 1024;
  const int64_t width = argc > 2 ? std::atoll(argv[2]) : 2;
  const double flops =
      2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n);
  const bool keep = argc > 3;
  const fs::path dir =
      keep ? fs::path(argv[3])
           : fs::temp_directory_path() / ("tg_bench_beam_" + std::to_string(::getpid()));
  if (!keep) fs::remove_all(dir);
  Context cache{{"TG_CACHE_DIR", dir.string()}, {"IGNORE_BEAM_CACHE", 0}};

  Tensor::manual_seed(0);
  Tensor x = Tensor::rand({n, n}).contiguous().realize();
  Tensor y = Tensor::rand({n, n}).contiguous().realize();
  std::printf("beam bench on %s, %u hardware threads, matmul %lldx%lld float32, BEAM=%lld\n",
              x.device().c_str(), std::thread::hardware_concurrency(), static_cast<long long>(n),
              static_cast<long long>(n), static_cast<long long>(width));

  Tensor z;
  z = x.matmul(y).realize(); // compiles the heuristic's kernel
  const double t_heur = best_of(3, [&] { z = x.matmul(y).realize(); });
  const std::vector<float> z_heur = z.to_vector<float>();
  std::printf("heuristic          %8.2f ms %8.2f GFLOP/s\n", t_heur * 1e3, flops / t_heur * 1e-9);

  double t_beam = 0;
  std::vector<float> z_beam;
  {
    Context beam{{"BEAM", width}};
    const BeamStats s0 = beam_stats();
    const double t0 = now_s();
    z = x.matmul(y).realize();
    const double cold = now_s() - t0;
    const BeamStats s1 = beam_stats();
    std::printf("BEAM=%lld cold       %8.2f s search+compile+run, %lld candidates timed, "
                "%lld searches\n",
                static_cast<long long>(width), cold,
                static_cast<long long>(s1.candidates - s0.candidates),
                static_cast<long long>(s1.searches - s0.searches));
    t_beam = best_of(3, [&] { z = x.matmul(y).realize(); });
    z_beam = z.to_vector<float>();
  }

  // The warm search: what a second run does with each kernel (the disk cache, no timing). On a
  // CPU the matmul is two kernels: b packed into column panels, then the product.
  std::vector<ScheduleItem> items = x.matmul(y).schedule();
  int64_t kernels = 0, kernel = 0;
  for (const ScheduleItem& it : items) kernels += it.kind == ScheduleItem::Kind::Kernel;
  for (const ScheduleItem& it : items) {
    if (it.kind != ScheduleItem::Kind::Kernel) continue;
    ++kernel;
    const DeviceSpec spec = DeviceSpec::parse(it.device);
    std::shared_ptr<Device> dev = DeviceRegistry::global().open(spec);
    BeamTarget target{dev.get(), resolve_renderer(*dev, spec), {}, {}};
    for (const auto& b : it.bufs) target.buffers.push_back({b->ptr(), b->nbytes()});
    const BeamStats s0 = beam_stats();
    const double t0 = now_s();
    BeamResult r = beam_optimize(it.ast, target, width);
    const double warm = now_s() - t0;
    std::printf("BEAM=%lld warm       %8.4f s, %lld candidates timed, from the cache: %s, "
                "kernel %lld of %lld, opts %s\n",
                static_cast<long long>(width), warm,
                static_cast<long long>(beam_stats().candidates - s0.candidates),
                r.from_cache ? "yes" : "no", static_cast<long long>(kernel),
                static_cast<long long>(kernels), opts_str(r.opts).c_str());
  }
  std::printf("BEAM=%lld matmul     %8.2f ms %8.2f GFLOP/s, %.2fx the heuristic\n",
              static_cast<long long>(width), t_beam * 1e3, flops / t_beam * 1e-9, t_heur / t_beam);
  double max_diff = 0;
  for (size_t i = 0; i < z_beam.size(); ++i)
    max_diff = std::max(max_diff, double(std::abs(z_beam[i] - z_heur[i])));
  std::printf("max |BEAM - heuristic| %.3g\n", max_diff);

#ifdef TG_HAVE_OPENBLAS
  std::vector<float> hx = x.to_vector<float>(), hy = y.to_vector<float>(),
                     hz(static_cast<size_t>(n * n));
  const auto m = static_cast<int>(n);
  const double t_blas = best_of(3, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, hx.data(), m, hy.data(),
                m, 0.0f, hz.data(), m);
  });
  std::printf("OpenBLAS sgemm     %8.2f ms %8.2f GFLOP/s | heuristic %.3fx, BEAM %.3fx OpenBLAS\n",
              t_blas * 1e3, flops / t_blas * 1e-9, t_blas / t_heur, t_blas / t_beam);
#else
  std::printf("OpenBLAS not found at build time (install libopenblas-dev)\n");
#endif
  if (!keep) fs::remove_all(dir);
  return 0;
}
