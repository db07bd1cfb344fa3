// The back half of codegen as a table of named passes run by the pass driver, the kernel's
// name, and what a launcher needs to know about the lowered kernel (sizes, parameters,
// variables).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>
#include <mutex>
#include <unordered_map>

#include "tg/codegen.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/decompositions.hpp"
#include "tg/error.hpp"
#include "tg/ir/pass.hpp"
#include "tg/ir/print.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/ir/symbolic.hpp"
#include "tg/knobs.hpp"

namespace tg {

namespace {
// One line per uop: position, op, dtype, sources by position, arg (tinygrad's DEBUG=5 form).
std::string print_uops(const std::vector<UOpPtr>& uops) {
  std::unordered_map<const UOp*, size_t> pos;
  std::string out;
  for (size_t i = 0; i < uops.size(); ++i) {
    const UOp& u = *uops[i];
    pos[&u] = i;
    char head[64];
    std::snprintf(head, sizeof head, "%4zu %-12s ", i, std::string(op_name(u.op)).c_str());
    std::string line = head + u.dtype.name();
    line.resize(std::max<size_t>(line.size() + 1, 40), ' ');
    line += "(";
    for (size_t j = 0; j < u.src.size(); ++j) {
      auto it = pos.find(u.src[j].get());
      line += (j ? ", " : "") + (it == pos.end() ? std::string("?") : std::to_string(it->second));
    }
    line += ")";
    if (!std::holds_alternative<std::monostate>(u.arg)) line += "  " + arg_to_string(u.arg);
    out += line + "\n";
  }
  return out;
}
} // namespace

UOpPtr simplify_kernel(const UOpPtr& ast) { return graph_rewrite(ast, symbolic(), "simplify"); }

std::string kernel_name(const UOpPtr& ast) {
  bool has_reduce = false;
  std::vector<const UOp*> ranges;
  for (const UOp* u : ast->toposort()) {
    has_reduce |= u->op == Ops::REDUCE;
    if (u->op == Ops::RANGE) ranges.push_back(u);
  }
  // tinygrad's axis order: outputs, sequential loops, locals, upcasts, reduces, unrolls; each
  // by id.
  auto key = [](const UOp* r) {
    const auto& a = std::get<RangeArg>(r->arg);
    int pos = 0;
    switch (a.type) {
    case AxisType::Sequential:
      pos = 1;
      break;
    case AxisType::Local:
    case AxisType::GroupReduce:
      pos = 2;
      break;
    case AxisType::Upcast:
      pos = 3;
      break;
    case AxisType::Reduce:
      pos = 4;
      break;
    case AxisType::Unroll:
      pos = 5;
      break;
    default:
      break;
    }
    return std::pair{pos, a.id};
  };
  std::sort(ranges.begin(), ranges.end(),
            [&](const UOp* a, const UOp* b) { return key(a) < key(b); });
  std::string name = has_reduce ? "r" : "E";
  if (ast->src.size() > 1) name += std::to_string(ast->src.size());
  for (const UOp* r : ranges) {
    const UOpPtr& end = r->src[0];
    name += "_";
    if (end->is_const())
      name += std::to_string(end->ivmin());
    else if (end->op == Ops::DEFINE_VAR)
      name += std::get<VarArg>(end->arg).name;
    else
      name += "s"; // a symbolic size that is not one variable
  }
  return name;
}

namespace {

// The back half in order. After the optimizer and expansion, the decompositions: those read
// IDIV in index arithmetic, which fast_idiv turns into multiply and shift; before reduce
// lowering, which must see float32 accumulators.
const Pass<KernelLowering> kCodegenPasses[] = {
    {"simplify", [](KernelLowering& c) { c.sink = simplify_kernel(c.sink); }},
    // Before the optimizer, which would otherwise tile a vocabulary-long reduce.
    {"load_collapse",
     [](KernelLowering& c) {
       UOpPtr collapsed = collapse_one_hot_reduces(c.sink);
       if (collapsed != c.sink) c.sink = simplify_kernel(collapsed);
     }},
    {"optimize",
     [](KernelLowering& c) {
       const std::vector<Opt> chosen = c.opts         ? *c.opts
                                       : knobs::NOOPT ? std::vector<Opt>{}
                                                      : hand_coded_optimizations(c.sink, *c.caps);
       c.sink = optimize_kernel(c.sink, chosen, *c.caps);
       c.kernel.name = kernel_name(c.sink);
       if (knobs::DEBUG >= 4 && !chosen.empty()) {
         std::cout << "kernel " << c.kernel.name << " opts:";
         for (const Opt& o : chosen) std::cout << " " << o.str();
         std::cout << "\n";
       }
     }},
    // Before expansion, while a tile's lanes are still one upcast range apart.
    {"reduce_bounds", [](KernelLowering& c) { c.sink = bound_reduce_ranges(c.sink); }},
    {"expand", [](KernelLowering& c) { c.sink = expand_kernel(c.sink, c.caps->vector_lanes); }},
    {"promote_half_float", [](KernelLowering& c) { c.sink = promote_half_float(c.sink, *c.caps); }},
    {"transcendentals",
     [](KernelLowering& c) { c.sink = decompose_transcendentals(c.sink, *c.caps); }},
    {"fast_idiv", [](KernelLowering& c) { c.sink = decompose_int_division(c.sink, *c.caps); }},
    {"dot4", [](KernelLowering& c) { c.sink = decompose_dot4(c.sink, *c.caps); }},
    // The renderer's own decompositions (ops it lacks), with the built-in ones.
    {"renderer_decompositions",
     [](KernelLowering& c) {
       if (c.caps->decompositions)
         c.sink = graph_rewrite(c.sink, *c.caps->decompositions, "renderer_decompositions");
     }},
    {"group_reduces", [](KernelLowering& c) { c.sink = group_reduces(c.sink); }},
    {"lower_reduces", [](KernelLowering& c) { c.sink = lower_reduces(c.sink); }},
    // After lower_reduces folded the accumulator into the WMMAs' C operands.
    {"single_thread_wmma",
     [](KernelLowering& c) { c.sink = lower_single_thread_wmma(c.sink, *c.caps); }},
    {"devectorize", [](KernelLowering& c) { c.sink = devectorize(c.sink, *c.caps); }},
    // The renderer's extra rules (tinygrad's extra_matcher) on the final, scalar-or-aligned
    // graph: its spellings of what it does better than the generic form.
    {"renderer_rules",
     [](KernelLowering& c) {
       if (c.caps->extra_matcher)
         c.sink = graph_rewrite(c.sink, *c.caps->extra_matcher, "renderer_rules");
     }},
    {"gpudims",
     [](KernelLowering& c) {
       c.sink = add_gpudims(c.sink, *c.caps, c.kernel.global, c.kernel.local);
     }},
    {"add_ends", [](KernelLowering& c) { c.sink = add_ends(c.sink); }},
    {"linearize", [](KernelLowering& c) { c.kernel.uops = linearize(c.sink); }},
};

} // namespace

std::string KernelLowering::describe() const {
  return kernel.uops.empty() ? print_graph(sink) : print_uops(kernel.uops);
}

std::span<const Pass<KernelLowering>> codegen_passes() { return kCodegenPasses; }

namespace {
std::mutex g_observer_mu;
LoweringObserver g_observer;
std::atomic<bool> g_observed{false};
} // namespace

void set_lowering_observer(LoweringObserver observer) {
  std::lock_guard lock(g_observer_mu);
  g_observed = static_cast<bool>(observer);
  g_observer = std::move(observer);
}

LoweredKernel lower_kernel_with_passes(const UOpPtr& ast, const RendererCaps& caps,
                                       std::span<const Pass<KernelLowering>> passes,
                                       const std::vector<Opt>* opts) {
  verify_kernel_ast(ast);
  if (knobs::DEBUG >= 3)
    std::cout << "kernel " << kernel_name(ast) << " AST:\n" << print_graph(ast);
  KernelLowering c{ast, &caps, opts, {}};
  run_passes("codegen", passes, c);
  LoweredKernel& k = c.kernel;
  if (k.name.empty()) k.name = kernel_name(c.sink);
  for (const UOpPtr& u : k.uops) {
    if (u->op == Ops::PARAM) k.params.push_back({std::get<int64_t>(u->arg), u->dtype});
    if (u->op == Ops::DEFINE_VAR) k.vars.push_back(std::get<VarArg>(u->arg));
    if (u->op == Ops::DEFINE_LOCAL)
      k.local_bytes += u->dtype.size * static_cast<int64_t>(u->dtype.base().itemsize());
  }
  if (k.local_bytes > 0 && k.local_bytes > caps.shared_max)
    throw Error("codegen: kernel " + k.name + " needs " + std::to_string(k.local_bytes) +
                " bytes of work-group memory (DEFINE_LOCAL), the device has " +
                std::to_string(caps.shared_max) + " (RendererCaps::shared_max)");
  if (knobs::DEBUG >= 5) std::cout << "kernel " << k.name << " uops:\n" << print_uops(k.uops);
  if (g_observed) {
    std::lock_guard lock(g_observer_mu);
    if (g_observer) g_observer(ast, opts, caps);
  }
  return std::move(k);
}

LoweredKernel lower_kernel(const UOpPtr& ast, const RendererCaps& caps) {
  return lower_kernel_with_passes(ast, caps, codegen_passes(), nullptr);
}

LoweredKernel lower_kernel_with_opts(const UOpPtr& ast, const RendererCaps& caps,
                                     const std::vector<Opt>& opts) {
  return lower_kernel_with_passes(ast, caps, codegen_passes(), &opts);
}

} // namespace tg
