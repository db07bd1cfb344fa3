// CPU plugin benchmark: compile time per kernel (LLVM in process vs clang, no compile cache)
// and launch overhead per kernel (an empty kernel over 10,000 launches, directly through
// Program::run and through the queue), and a Graph of 100 empty kernels replayed against
// 100 queue launches.
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <unordered_set>
#include <vector>

#include "cpu_device.hpp"

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
      const std::string what = global == 1 ? "1 work item" : "1024 items (TBB split)";
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
  return 0;
}
