// OpenCL benchmark (DEV=CL, POCL here): what the GPU path's kernels are worth. Kernel ASTs as
// the scheduler hands them to codegen, lowered without optimizations (NOOPT=1: one work item
// per output, no work groups) and with the hand-coded heuristic (work groups, grouped reduces,
// upcasts), each timed with the queue's profiling timestamps (best of 5 after a warm-up), next
// to OpenBLAS on the host in the same run:
//   gemm  1024x1024 float32 matmul: GFLOP/s, vs cblas_sgemm
//   sum   16M float32, split in two kernels as the scheduler splits it (256 partial sums of
//         65,536, then their sum): GB/s over the 64 MiB read, vs cblas_sasum
//   copy  64 MiB between the CPU and the device both ways (copy_buffer, and through a host
//         buffer as when neither side is host-visible), vs a host memcpy
// POCL runs OpenCL on these same CPU cores, so the ratio to OpenBLAS measures the kernels.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "tg/buffer.hpp"
#include "tg/codegen.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/device_registry.hpp"
#include "tg/realize.hpp"
#ifdef TG_HAVE_OPENBLAS
#include "openblas_anchor.hpp"
#endif

using namespace tg;
using Clock = std::chrono::steady_clock;

namespace {

UOpPtr ic(int64_t v) { return UOp::const_(dtypes::index, v); }
UOpPtr param(int64_t slot, int64_t n) {
  return UOp::make(Ops::PARAM, dtypes::float32.ptr(n), {}, slot);
}
UOpPtr idx(const UOpPtr& b, const UOpPtr& i) { return UOp::make(Ops::INDEX, b->dtype, {b, i}); }
UOpPtr ld(const UOpPtr& i) { return UOp::make(Ops::LOAD, i->dtype.base(), {i}); }
UOpPtr st(const UOpPtr& i, const UOpPtr& v) { return UOp::make(Ops::STORE, dtypes::void_, {i, v}); }
UOpPtr sum(const UOpPtr& v, const UOpPtr& r) {
  return UOp::make(Ops::REDUCE, dtypes::float32, {v, r}, ReduceArg{Ops::ADD, {}});
}

// out[i, j] = sum_k a[i, k] * b[k, j]
UOpPtr matmul_ast(int64_t n) {
  auto o = param(0, n * n), a = param(1, n * n), b = param(2, n * n);
  auto i = UOp::range(ic(n), 0, AxisType::Global), j = UOp::range(ic(n), 1, AxisType::Global);
  auto k = UOp::range(ic(n), 2, AxisType::Reduce);
  return UOp::sink(
      {st(idx(o, i * ic(n) + j), sum(ld(idx(a, i * ic(n) + k)) * ld(idx(b, k * ic(n) + j)), k))});
}

// out[i] = sum_j a[i * m + j], i < rows
UOpPtr row_sum_ast(int64_t rows, int64_t m) {
  auto o = param(0, rows), a = param(1, rows * m);
  auto i = UOp::range(ic(rows), 0, AxisType::Global), j = UOp::range(ic(m), 1, AxisType::Reduce);
  if (rows == 1) return UOp::sink({st(idx(o, ic(0)), sum(ld(idx(a, j)), j))});
  return UOp::sink({st(idx(o, i), sum(ld(idx(a, i * ic(m) + j)), j))});
}

struct Timed {
  std::string name, dims;
  double seconds;
};

std::string dims_of(const LoweredKernel& k) {
  auto join = [](const std::array<int64_t, 3>& d) {
    std::string s = std::to_string(d[0]);
    for (int i = 1; i < 3; ++i)
      if (d[i] != 1) s += "," + std::to_string(d[i]);
    return s;
  };
  return join(k.global) + ":" + join(k.local);
}

// Compiles `k` and times it on `bufs` (profiling timestamps, best of `reps` after a warm-up).
Timed time_kernel(Device& dev, const std::string& renderer, const LoweredKernel& k,
                  const std::vector<DevicePtr>& bufs, int reps) {
  auto prg = dev.load(
      k.name, dev.compiler(renderer).compile(dev.renderer(renderer).render(k.name, k.uops)));
  LaunchArgs args;
  args.buffers = bufs;
  args.global = k.global;
  args.local = k.local;
  prg->run(args, false);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, prg->run(args, true));
  return {k.name, dims_of(k), best};
}

DevicePtr upload(Allocator& al, const std::vector<float>& host) {
  DevicePtr p = al.alloc(host.size() * sizeof(float));
  al.copy_in(p, host.data(), host.size() * sizeof(float));
  return p;
}

std::vector<float> download(Allocator& al, DevicePtr p, size_t n) {
  std::vector<float> out(n);
  al.copy_out(out.data(), p, n * sizeof(float));
  return out;
}

template <class F> double best_host(int reps, F&& f) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

void gemm_bench(Device& dev, const std::string& renderer, const RendererCaps& caps) {
  const int64_t n = 1024;
  const double flops = 2.0 * double(n) * double(n) * double(n);
  Allocator& al = dev.allocator();
  std::vector<float> ha(static_cast<size_t>(n * n)), hb(ha.size());
  for (size_t t = 0; t < ha.size(); ++t) {
    ha[t] = static_cast<float>(t % 7) - 3.0f;
    hb[t] = static_cast<float>(t % 5) - 2.0f;
  }
  std::vector<DevicePtr> bufs{upload(al, std::vector<float>(ha.size())), upload(al, ha),
                              upload(al, hb)};
  const UOpPtr ast = matmul_ast(n);
  std::printf("gemm  %lldx%lld float32\n", static_cast<long long>(n), static_cast<long long>(n));
  for (const bool opt : {false, true}) {
    const auto opts =
        opt ? hand_coded_optimizations(simplify_kernel(ast), caps) : std::vector<Opt>{};
    const LoweredKernel k = lower_kernel_with_opts(ast, caps, opts);
    const Timed t = time_kernel(dev, renderer, k, bufs, 5);
    std::printf("  %-9s %-24s dims %-14s %9.2f ms %8.2f GFLOP/s\n", opt ? "heuristic" : "NOOPT=1",
                t.name.c_str(), t.dims.c_str(), t.seconds * 1e3, flops / t.seconds * 1e-9);
  }
#ifdef TG_HAVE_OPENBLAS
  std::vector<float> hc(ha.size());
  const auto m = static_cast<int>(n);
  const double tb = best_host(3, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f, ha.data(), m, hb.data(),
                m, 0.0f, hc.data(), m);
  });
  const std::vector<float> out = download(al, bufs[0], hc.size());
  double max_err = 0;
  for (size_t t = 0; t < hc.size(); ++t)
    max_err = std::max(max_err, double(std::abs(out[t] - hc[t])));
  std::printf("  OpenBLAS  %-24s %-19s %9.2f ms %8.2f GFLOP/s (max |diff| of the last %.2g)\n",
              "cblas_sgemm", "", tb * 1e3, flops / tb * 1e-9, max_err);
  tg_bench::let_openblas_threads_sleep();
#endif
  for (DevicePtr b : bufs) al.free(b, static_cast<size_t>(n * n) * sizeof(float));
}

void sum_bench(Device& dev, const std::string& renderer, const RendererCaps& caps) {
  const int64_t n = int64_t{1} << 24, parts = 256;
  const double bytes = 4.0 * double(n);
  Allocator& al = dev.allocator();
  std::vector<float> ha(static_cast<size_t>(n));
  for (size_t t = 0; t < ha.size(); ++t) ha[t] = static_cast<float>(t % 17) * 0.125f;
  std::vector<DevicePtr> bufs{upload(al, std::vector<float>(parts)), upload(al, ha),
                              upload(al, std::vector<float>(1))};
  const UOpPtr first = row_sum_ast(parts, n / parts), second = row_sum_ast(1, parts);
  std::printf("sum   %lld float32 (two kernels: %lld partial sums, then their sum)\n",
              static_cast<long long>(n), static_cast<long long>(parts));
  // The last: tinygrad's GROUPTOP instead of the heuristic's GROUP (each work item reads a
  // contiguous share, not every 16th element).
  enum class Variant { noopt, heuristic, grouptop };
  for (const Variant v : {Variant::noopt, Variant::heuristic, Variant::grouptop}) {
    auto lower = [&](const UOpPtr& ast, bool first_kernel) {
      std::vector<Opt> opts;
      if (v == Variant::heuristic || (v == Variant::grouptop && !first_kernel))
        opts = hand_coded_optimizations(simplify_kernel(ast), caps);
      if (v == Variant::grouptop && first_kernel) opts = {{OptOp::GROUPTOP, 0, 16}};
      return lower_kernel_with_opts(ast, caps, opts);
    };
    const Timed a = time_kernel(dev, renderer, lower(first, true), {bufs[0], bufs[1]}, 5);
    const Timed b = time_kernel(dev, renderer, lower(second, false), {bufs[2], bufs[0]}, 5);
    const double s = a.seconds + b.seconds;
    const float got = download(al, bufs[2], 1)[0];
    const char* what = v == Variant::noopt       ? "NOOPT=1"
                       : v == Variant::heuristic ? "heuristic"
                                                 : "GROUPTOP";
    std::printf("  %-9s %-13s dims %-10s + %-10s dims %-8s %9.2f ms %8.2f GB/s (sum %.8g)\n", what,
                a.name.c_str(), a.dims.c_str(), b.name.c_str(), b.dims.c_str(), s * 1e3,
                bytes / s * 1e-9, double(got));
  }
#ifdef TG_HAVE_OPENBLAS
  float blas = 0;
  const double tb = best_host(5, [&] { blas = cblas_sasum(static_cast<int>(n), ha.data(), 1); });
  std::printf("  OpenBLAS  %-49s %9.2f ms %8.2f GB/s (sum %.8g)\n", "cblas_sasum", tb * 1e3,
              bytes / tb * 1e-9, double(blas));
#endif
  al.free(bufs[0], parts * sizeof(float));
  al.free(bufs[1], static_cast<size_t>(n) * sizeof(float));
  al.free(bufs[2], sizeof(float));
}

// 64 MiB between the host's CPU device and `spec` both ways by copy_buffer (straight from or
// into the CPU buffer's memory), beside the same copy through a host buffer (copy_out, then
// copy_in: the route when neither side is host-visible) and a host memcpy of 64 MiB.
void copy_bench(const std::string& spec) {
  constexpr int64_t n = int64_t{16} << 20; // float32: 64 MiB
  constexpr size_t bytes = size_t{64} << 20;
  Buffer cpu("CPU", dtypes::float32, n), dev(spec, dtypes::float32, n);
  std::vector<float> host(static_cast<size_t>(n), 1.0f), scratch(static_cast<size_t>(n));
  cpu.copy_in(host.data(), bytes);
  dev.ptr();
  const auto best = [](auto&& fn) {
    double t = 1e30;
    for (int r = 0; r < 5; ++r) {
      const auto t0 = Clock::now();
      fn();
      t = std::min(t, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    return t;
  };
  const auto line = [&](const char* what, double t) {
    std::printf("  %-44s %9.2f ms %8.2f GB/s\n", what, t * 1e3, bytes / t * 1e-9);
  };
  std::printf("copy 64 MiB, best of 5:\n");
  line("CPU -> device, copy_buffer (from host memory)", best([&] { copy_buffer(dev, cpu); }));
  line("CPU -> device, through a host buffer", best([&] {
         std::vector<uint8_t> staged(bytes);
         cpu.copy_out(staged.data(), bytes);
         dev.copy_in(staged.data(), bytes);
       }));
  line("device -> CPU, copy_buffer (into host memory)", best([&] { copy_buffer(cpu, dev); }));
  line("device -> CPU, through a host buffer", best([&] {
         std::vector<uint8_t> staged(bytes);
         dev.copy_out(staged.data(), bytes);
         cpu.copy_in(staged.data(), bytes);
       }));
  line("host memcpy (anchor)", best([&] { std::memcpy(scratch.data(), host.data(), bytes); }));
}

} // namespace

int main(int argc, char** argv) {
#ifdef TG_HAVE_OPENBLAS
  tg_bench::pin_openblas_kernels(argv);
#endif
  const std::string spec = argc > 1 ? argv[1] : "CL";
  try {
    std::shared_ptr<Device> dev = DeviceRegistry::global().open(spec);
    const std::string renderer = resolve_renderer(*dev, DeviceSpec::parse(spec));
    const RendererCaps& caps = dev->renderer(renderer).caps();
    std::printf("OpenCL benchmark on %s (renderer %s; times from profiling timestamps, best of "
                "5)\n",
                spec.c_str(), renderer.c_str());
    gemm_bench(*dev, renderer, caps);
    sum_bench(*dev, renderer, caps);
    copy_bench(spec);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tg_bench_cl: %s\n", e.what());
    return 1;
  }
  return 0;
}
