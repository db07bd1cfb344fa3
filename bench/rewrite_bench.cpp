// graph_rewrite throughput: node visits per second
//  1. symbolic() over a large graph of random index expressions (many rules fire),
//  2. symbolic() over a chain of 1M nodes ((x+1)+1)+... that folds to x+1000000,
//  3. symbolic() over 20k small expressions, one graph_rewrite each (the per-call cost),
//  4. an empty matcher over a 1M-node chain (the traversal alone).
//  5. codegen's host time a kernel: every kernel of a convolution's forward and backward pass
//     (beautiful_mnist's 32->32 5x5 at batch 512) and of a 1024 matmul, lowered by
//     lower_kernel for the default device's renderer (optimized, expanded, linearized) and
//     rendered, not compiled: what BEAM pays for each candidate before its compile. With
//     DUMP_SRC=1 each kernel's source goes to stderr, to check that a change to codegen's
//     speed leaves its output alone (diff two runs).
// A node visit is one node of the input graph processed by graph_rewrite. Each case is run
// `reps` times on a freshly built graph and the best time is reported.
//
//   tg_bench_rewrite                      the four cases above
//   tg_bench_rewrite CASE [SIZE [REPS]]   one case (symbolic, chain, small, empty or codegen) at
//   another
//                                         size (chain length, or number of expressions),
//                                         e.g. `chain 20000 1` under callgrind with
//                                         --toggle-collect='tg::graph_rewrite_raw*'
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>

#include "tg/codegen.hpp"
#include "tg/device_registry.hpp"
#include "tg/ir/print.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"
#include "tg/schedule.hpp"
#include "tg/tensor.hpp"

using namespace tg;

namespace {

UOpPtr random_expr(std::mt19937& rng, const std::vector<UOpPtr>& vars, int depth) {
  std::uniform_int_distribution<int> pick(0, 9), small(1, 9);
  if (depth == 0) return vars[static_cast<size_t>(pick(rng)) % vars.size()];
  UOpPtr a = random_expr(rng, vars, depth - 1);
  switch (pick(rng)) {
  case 0:
    return a + random_expr(rng, vars, depth - 1);
  case 1:
    return a * small(rng);
  case 2:
    return a / small(rng);
  case 3:
    return a % small(rng);
  case 4:
    return a + small(rng);
  case 5:
    return a->maximum(random_expr(rng, vars, depth - 1));
  case 6:
    return a - random_expr(rng, vars, depth - 1);
  case 7:
    return (a * small(rng) + random_expr(rng, vars, depth - 1)) / small(rng);
  case 8:
    return a->lt(a->const_like(int64_t{small(rng)}))->where(a, a + 1);
  default:
    return a * 4 + small(rng);
  }
}

// `exprs` random expressions of the given depth over six index variables (the same seed each
// time, so every run rewrites the same graphs).
std::vector<UOpPtr> random_exprs(size_t exprs, int depth) {
  std::mt19937 rng(1234);
  std::vector<UOpPtr> vars, roots;
  for (int i = 0; i < 6; ++i)
    vars.push_back(UOp::variable(std::string(1, static_cast<char>('a' + i)), 0, 10 + 7 * i));
  for (size_t i = 0; i < exprs; ++i) roots.push_back(random_expr(rng, vars, depth));
  return roots;
}

UOpPtr symbolic_graph(size_t exprs) { return UOp::sink(random_exprs(exprs, 6)); }

UOpPtr chain(size_t n) {
  UOpPtr x = UOp::variable("x", 0, 100);
  for (size_t i = 0; i < n; ++i) x = x + 1;
  return x;
}

void measure(const char* what, const std::function<UOpPtr()>& build, const PatternMatcher& pm,
             int reps) {
  double best = 1e30;
  size_t nodes = 0, out_nodes = 0;
  for (int r = 0; r < reps; ++r) {
    UOpPtr g = build();
    nodes = g->toposort().size();
    auto t0 = std::chrono::steady_clock::now();
    UOpPtr out = graph_rewrite(g, pm);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out_nodes = out->toposort().size();
    best = std::min(best, s);
  }
  std::printf("%-44s %9zu nodes -> %7zu  %8.1f ms  %6.2f M node visits/s\n", what, nodes, out_nodes,
              best * 1e3, nodes / best / 1e6);
}

// Codegen runs graph_rewrite on many small graphs (an index, a condition): the same random
// expressions of depth 3, each rewritten by its own call, so the per-call setup counts. Each
// repetition builds them anew: a graph rewritten before is skipped (UOp::fixed_under).
void measure_small(size_t exprs, int reps) {
  size_t nodes = 0;
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const std::vector<UOpPtr> roots = random_exprs(exprs, 3);
    nodes = 0;
    for (const UOpPtr& root : roots) nodes += root->toposort().size();
    auto t0 = std::chrono::steady_clock::now();
    for (const UOpPtr& root : roots) graph_rewrite(root, symbolic());
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::printf("%-44s %9zu nodes, %5.2f us a call  %6.2f M node visits/s\n",
              "symbolic, small expressions, a call each", nodes, best / exprs * 1e6,
              nodes / best / 1e6);
}

// The kernels of a conv2d's forward pass and both gradients, and of a matmul, lowered again
// and again: the best time of each kernel, summed, over the kernel count.
void measure_codegen(int reps) {
  // Inputs realized first, so that only the convolution's and the matmul's kernels are lowered.
  Tensor x = Tensor::rand({512, 32, 28, 28}).realize(), w = Tensor::rand({32, 32, 5, 5}).realize();
  x.requires_grad_();
  w.requires_grad_();
  Tensor a = Tensor::rand({1024, 1024}).realize(), b = Tensor::rand({1024, 1024}).realize();
  x.conv2d(w).sum().backward();
  std::vector<ScheduleItem> items = Tensor::schedule_all({x.grad(), w.grad(), a.matmul(b)});
  std::vector<UOpPtr> asts;
  std::string device;
  for (const ScheduleItem& it : items)
    if (it.kind == ScheduleItem::Kind::Kernel) asts.push_back(it.ast), device = it.device;
  const DeviceSpec spec = DeviceSpec::parse(device);
  std::shared_ptr<Device> dev = DeviceRegistry::global().open(spec);
  Renderer& renderer = dev->renderer(resolve_renderer(*dev, spec));
  const RendererCaps& caps = renderer.caps();
  const bool dump = std::getenv("DUMP_SRC") != nullptr;
  double total = 0, worst = 0;
  size_t uops = 0;
  for (const UOpPtr& ast : asts) {
    double best = 1e30;
    for (int r = 0; r < reps; ++r) {
      auto t0 = std::chrono::steady_clock::now();
      const LoweredKernel k = lower_kernel(ast, caps);
      const std::string source = renderer.render(k.name, k.uops);
      best = std::min(best,
                      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (r == 0) {
        uops += k.uops.size();
        if (dump) std::fprintf(stderr, "%s\n", source.c_str());
      }
    }
    total += best;
    worst = std::max(worst, best);
  }
  std::printf("%-44s %9zu kernels, %5zu uops  %8.3f ms a kernel (%.3f at most)\n",
              ("codegen on " + device + ", conv fwd+bwd and matmul").c_str(), asts.size(), uops,
              total / static_cast<double>(asts.size()) * 1e3, worst * 1e3);
}

} // namespace

int main(int argc, char** argv) {
  static const PatternMatcher empty({});
  if (argc > 1) {
    const std::string what = argv[1];
    const size_t n = argc > 2 ? std::stoul(argv[2]) : 1000000;
    const int reps = argc > 3 ? std::stoi(argv[3]) : 3;
    if (what == "symbolic")
      measure(
          "symbolic, random index expressions", [n] { return symbolic_graph(n); }, symbolic(),
          reps);
    else if (what == "chain")
      measure(
          "symbolic, chain (x+1)+1+...", [n] { return chain(n); }, symbolic(), reps);
    else if (what == "small")
      measure_small(n, reps);
    else if (what == "empty")
      measure(
          "empty matcher, chain", [n] { return chain(n); }, empty, reps);
    else if (what == "codegen")
      measure_codegen(reps);
    else {
      std::fprintf(stderr, "usage: %s [symbolic|chain|small|empty|codegen [SIZE [REPS]]]\n",
                   argv[0]);
      return 2;
    }
    return 0;
  }
  std::printf("graph_rewrite throughput (best of 3)\n");
  measure(
      "symbolic, 20k random index expressions", [] { return symbolic_graph(20000); }, symbolic(),
      3);
  measure(
      "symbolic, 1M-node chain (x+1)+1+...", [] { return chain(1000000); }, symbolic(), 3);
  measure_small(20000, 3);
  measure(
      "empty matcher, 1M-node chain", [] { return chain(1000000); }, empty, 3);
  measure_codegen(5);
  return 0;
}
