// CPU plugin benchmark: compile time per kernel (LLVM in process vs clang, no compile cache)
// and launch overhead per kernel (an empty kernel over 10,000 launches, directly through
// Program::run and through the queue), and a Graph of 100 empty kernels replayed against
// 100 queue launches. Last, a 1024x1024 float32 matmul kernel AST lowered by codegen without
// optimizations (NOOPT=1) and with the hand-coded heuristic, timed on both renderers (GFLOP/s).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "cpu_device.hpp"
#include "tg/codegen_opt.hpp"

using namespace tg;
using Clock = std::chrono::steady_clock;

namespace {

// The kernel list in program order, sources first (as tests/cpu/cpu_test_util.hpp).
struct Linear {
  std::vector<UOpPtr> list;
  std::unordered_set<const UOp*> seen;
  UOpPtr add(const UOpPtr& u) {
    if (!seen.count(u.get())) {
      for (const auto& s : u->src) add(s);
      seen.insert(u.get());
      list.push_back(u);
    }
    return u;
  }
};

UOpPtr ci(int64_t v) { return UOp::const_(dtypes::int32, v); }
UOpPtr param(int64_t slot, DType d, int64_t n) { return UOp::make(Ops::PARAM, d.ptr(n), {}, slot); }
UOpPtr idx(const UOpPtr& b, const UOpPtr& i) { return UOp::make(Ops::INDEX, b->dtype, {b, i}); }
UOpPtr ld(const UOpPtr& i) { return UOp::make(Ops::LOAD, i->dtype.base(), {i}); }
UOpPtr st(const UOpPtr& i, const UOpPtr& v) { return UOp::make(Ops::STORE, dtypes::void_, {i, v}); }
UOpPtr gidx(const char* name, int64_t n) {
  return UOp::make(Ops::SPECIAL, dtypes::int32, {ci(n)}, std::string(name));
}

std::vector<UOpPtr> empty_kernel() { return {}; }

std::vector<UOpPtr> add_kernel() {
  Linear k;
  auto o = k.add(param(0, dtypes::float32, 1 << 20)), a = k.add(param(1, dtypes::float32, 1 << 20)),
       b = k.add(param(2, dtypes::float32, 1 << 20));
  auto g = k.add(gidx("gidx0", 1 << 20));
  k.add(st(idx(o, g), ld(idx(a, g)) + ld(idx(b, g))));
  return k.list;
}

std::vector<UOpPtr> matmul_kernel() {
  const int64_t n = 256;
  Linear k;
  auto o = k.add(param(0, dtypes::float32, n * n)), a = k.add(param(1, dtypes::float32, n * n)),
       b = k.add(param(2, dtypes::float32, n * n));
  auto i = k.add(gidx("gidx0", n)), j = k.add(gidx("gidx1", n));
  k.add(i * n); // used inside and after the loop: listed before it
  auto acc =
      k.add(UOp::make(Ops::DEFINE_REG, dtypes::float32.ptr(1, AddrSpace::Reg), {}, int64_t{0}));
  k.add(st(idx(acc, ci(0)), UOp::const_(dtypes::float32, 0.0)));
  auto r = k.add(UOp::range(ci(n), 2, AxisType::Reduce));
  auto s =
      k.add(st(idx(acc, ci(0)),
               UOp::make(Ops::MULACC, dtypes::float32,
                         {ld(idx(a, i * n + r)), ld(idx(b, r * n + j)), ld(idx(acc, ci(0)))})));
  auto e = k.add(UOp::make(Ops::END, dtypes::void_, {r, s}));
  auto after = UOp::make(Ops::AFTER, acc->dtype, {acc, e});
  k.add(st(idx(o, i * n + j), ld(idx(after, ci(0)))));
  return k.list;
}

// A longer elementwise chain: the kind of fused kernel a model produces.
std::vector<UOpPtr> fused_kernel() {
  Linear k;
  auto o = k.add(param(0, dtypes::float32, 1 << 16)), a = k.add(param(1, dtypes::float32, 1 << 16));
  auto g = k.add(gidx("gidx0", 1 << 16));
  UOpPtr x = ld(idx(a, g));
  for (int t = 0; t < 16; ++t) {
    x = x * UOp::const_(dtypes::float32, 1.0001) + UOp::const_(dtypes::float32, 0.5);
    x = UOp::make(Ops::EXP2, dtypes::float32,
                  {x.get()->maximum(UOp::const_(dtypes::float32, -1.0))});
    x = UOp::make(Ops::SQRT, dtypes::float32, {x});
  }
  k.add(st(idx(o, g), x));
  return k.list;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// out[i, j] = sum_k a[i, k] * b[k, j]: the kernel AST the scheduler would hand codegen.
UOpPtr matmul_ast(int64_t n) {
  auto ic = [](int64_t v) { return UOp::const_(dtypes::index, v); };
  auto o = param(0, dtypes::float32, n * n), a = param(1, dtypes::float32, n * n),
       b = param(2, dtypes::float32, n * n);
  auto i = UOp::range(ic(n), 0, AxisType::Global), j = UOp::range(ic(n), 1, AxisType::Global);
  auto k = UOp::range(ic(n), 2, AxisType::Reduce);
  auto prod = ld(idx(a, i * ic(n) + k)) * ld(idx(b, k * ic(n) + j));
  auto red = UOp::make(Ops::REDUCE, dtypes::float32, {prod, k}, ReduceArg{Ops::ADD, {}});
  return UOp::sink({st(idx(o, i * ic(n) + j), red)});
}

// Seconds per run of a lowered kernel (best of `reps` after a warm-up).
double time_kernel(cpu::CpuDevice& dev, const char* renderer, const LoweredKernel& k,
                   std::vector<DevicePtr> bufs, int reps) {
  auto prg = dev.load(
      k.name, dev.compiler(renderer).compile(dev.renderer(renderer).render(k.name, k.uops)));
  LaunchArgs args;
  args.buffers = std::move(bufs);
  args.global = k.global;
  prg->run(args, false);
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    prg->run(args, false);
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

void matmul_bench(cpu::CpuDevice& dev) {
  const int64_t n = 1024;
  std::printf("\n%lldx%lld float32 matmul, codegen from a kernel AST (best of 5)\n",
              static_cast<long long>(n), static_cast<long long>(n));
  std::printf("  %-10s %-12s %-26s %10s %10s\n", "renderer", "opts", "kernel", "ms", "GFLOP/s");
  const UOpPtr ast = matmul_ast(n);
  Allocator& al = dev.allocator();
  const size_t bytes = static_cast<size_t>(n * n) * sizeof(float);
  std::vector<float> host(static_cast<size_t>(n * n));
  for (size_t t = 0; t < host.size(); ++t) host[t] = static_cast<float>(t % 7) - 3.0f;
  std::vector<DevicePtr> bufs;
  for (int b = 0; b < 3; ++b) {
    bufs.push_back(al.alloc(bytes));
    al.copy_in(bufs.back(), host.data(), bytes);
  }
  for (const char* r : {"LLVM", "C"}) {
    const RendererCaps& caps = dev.renderer(r).caps();
    const auto heuristic = hand_coded_optimizations(simplify_kernel(ast), caps);
    // The last: what the heuristic does not find yet (B's rows read a cache line at a time,
    // no unroll of k).
    const std::vector<Opt> wide{{OptOp::UPCAST, 1, 16}, {OptOp::UPCAST, 0, 4}};
    const std::pair<const char*, std::vector<Opt>> variants[] = {
        {"NOOPT=1", {}}, {"heuristic", heuristic}, {"explicit", wide}};
    for (const auto& [what, opts] : variants) {
      const LoweredKernel k = lower_kernel_with_opts(ast, caps, opts);
      const double s = time_kernel(dev, r, k, bufs, 5);
      std::printf("  %-10s %-12s %-26s %10.2f %10.2f\n", r, what, k.name.c_str(), s * 1e3,
                  2.0 * double(n) * double(n) * double(n) / s * 1e-9);
    }
  }
  for (auto& b : bufs) al.free(b, bytes);
}

} // namespace

int main() {
  cpu::CpuDevice dev;
  std::printf("CPU plugin benchmark (%d threads)\n\n", dev.threads());

  std::printf("compile time per kernel (render + compile + load, no compile cache)\n");
  std::printf("  %-10s %14s %14s\n", "kernel", "LLVM (ms)", "clang C (ms)");
  const std::pair<const char*, std::function<std::vector<UOpPtr>()>> kernels[] = {
      {"empty", empty_kernel},
      {"add", add_kernel},
      {"matmul", matmul_kernel},
      {"fused", fused_kernel}};
  for (const auto& [name, make] : kernels) {
    const auto uops = make();
    double ms[2];
    int which = 0;
    for (const char* r : {"LLVM", "C"}) {
      // Warm up once (JIT and clang start-up), then average.
      dev.load(name, dev.compiler(r).compile(dev.renderer(r).render(name, uops)));
      const int reps = 5;
      const auto t0 = Clock::now();
      for (int i = 0; i < reps; ++i)
        dev.load(name, dev.compiler(r).compile(dev.renderer(r).render(name, uops)));
      ms[which++] = seconds_since(t0) / reps * 1e3;
    }
    std::printf("  %-10s %14.2f %14.2f\n", name, ms[0], ms[1]);
  }

  std::printf("\nlaunch overhead per kernel (empty kernel, 10,000 launches)\n");
  std::printf("  %-10s %-30s %12s\n", "renderer", "path", "us/launch");
  const int launches = 10000;
  for (const char* r : {"LLVM", "C"}) {
    auto prg = dev.load("empty", dev.compiler(r).compile(dev.renderer(r).render("empty", {})));
    for (int64_t global : {int64_t{1}, int64_t{1024}}) {
      LaunchArgs args;
      args.global = {global, 1, 1};
      auto t0 = Clock::now();
      for (int i = 0; i < launches; ++i) prg->run(args, false);
      const double direct = seconds_since(t0) / launches * 1e6;
      Queue& q = dev.queue();
      q.synchronize();
      t0 = Clock::now();
      for (int i = 0; i < launches; ++i) q.exec(prg, args);
      q.synchronize();
      const double queued = seconds_since(t0) / launches * 1e6;
      const std::string what = global == 1 ? "1 work item" : "1024 items (split)";
      std::printf("  %-10s %-30s %12.3f\n", r, ("direct, " + what).c_str(), direct);
      std::printf("  %-10s %-30s %12.3f\n", r, ("queue, " + what).c_str(), queued);
    }
  }

  // A graph of 100 empty kernels against 100 queue launches: "submit" is the caller's time to
  // hand them over, "total" adds running them and waiting, both per launch.
  std::printf("\ngraph replay vs queue launches (100 empty kernels, 1 work item, x%d)\n", 200);
  std::printf("  %-10s %-30s %12s %12s\n", "renderer", "path", "submit us", "total us");
  const int per_graph = 100, rounds = 200;
  for (const char* r : {"LLVM", "C"}) {
    auto prg = dev.load("empty", dev.compiler(r).compile(dev.renderer(r).render("empty", {})));
    Queue& q = dev.queue();
    const std::vector<LaunchArgs> args(per_graph, LaunchArgs{});
    std::vector<GraphLaunch> recorded;
    for (const LaunchArgs& a : args) recorded.push_back({prg, a});
    auto g = dev.graph(recorded);
    for (int warm = 0; warm < 10; ++warm) g->replay(args);
    q.synchronize();
    double submit = 0;
    auto t0 = Clock::now();
    for (int i = 0; i < rounds; ++i) {
      const auto s0 = Clock::now();
      for (int k = 0; k < per_graph; ++k) q.exec(prg, args[k]);
      submit += seconds_since(s0);
    }
    q.synchronize();
    const double n = double(rounds) * per_graph;
    std::printf("  %-10s %-30s %12.3f %12.3f\n", r, "queue, 100 exec()", submit / n * 1e6,
                seconds_since(t0) / n * 1e6);
    submit = 0;
    t0 = Clock::now();
    for (int i = 0; i < rounds; ++i) {
      const auto s0 = Clock::now();
      g->replay(args);
      submit += seconds_since(s0);
    }
    q.synchronize();
    std::printf("  %-10s %-30s %12.3f %12.3f\n", r, "graph, 1 replay() of 100", submit / n * 1e6,
                seconds_since(t0) / n * 1e6);
  }
  matmul_bench(dev);
  return 0;
}
