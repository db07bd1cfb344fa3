#pragma once
// Codegen, back half: from a kernel AST (a SINK of STOREs over RANGE loops, with REDUCEs) to the
// flat list renderers take (docs/KERNEL_IR.md, "The kernel AST"). Each step is a named pass in a
// table (codegen_passes()) that lower_kernel() runs through the pass driver (tg/ir/pass.hpp).
#include <array>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tg/ir/pass.hpp"
#include "tg/ir/uop.hpp"
#include "tg/plugin/device.hpp"

namespace tg {

// One buffer parameter of a lowered kernel: LaunchArgs::buffers[slot] holds `dtype` elements.
struct KernelParam {
  int64_t slot = 0;
  DType dtype; // the PARAM's pointer dtype
};

struct LoweredKernel {
  std::string name;                       // tinygrad style: E_4_8, r_4_8 (loop sizes, reduce last)
  std::vector<UOpPtr> uops;               // the flat list, in program order
  std::array<int64_t, 3> global{1, 1, 1}; // sizes of gidx0..gidx2 (1 where absent): work groups
  std::array<int64_t, 3> local{1, 1, 1};  // sizes of lidx0..lidx2: work items of a group
  int64_t local_bytes = 0;                // work-group memory its DEFINE_LOCALs take
  std::vector<KernelParam> params;        // by slot
  std::vector<VarArg> vars;               // in LaunchArgs::vars order (first appearance in uops)
};

// Raises tg::Error naming the offending node when `ast` is not a kernel AST: a SINK of
// STORE(INDEX(PARAM, idx), value), REDUCEs with a combining op and at least one RANGE.
void verify_kernel_ast(const UOpPtr& ast);

// Pass 1: symbolic simplification of index (and constant) arithmetic.
UOpPtr simplify_kernel(const UOpPtr& ast);
// After simplify: a one-hot sum, sum over r of where(idx == r, x(r), 0) (indexing a tensor by
// another), becomes where(0 <= idx < N, x(idx), 0), x's loads at idx gated by that bound
// (tinygrad's load collapse; load_collapse.cpp).
UOpPtr collapse_one_hot_reduces(const UOpPtr& ast);
// After the optimizer: a sum whose terms are zero outside an interval of a Reduce range (a
// convolution's taps over a padded view) loops over that interval only (reduce_bounds.cpp).
UOpPtr bound_reduce_ranges(const UOpPtr& ast);
// Pass 2: every REDUCE becomes an accumulator register: identity stored before its loops,
// acc = acc op value inside them (closed by END), and a load through AFTER(acc, END) after.
UOpPtr lower_reduces(const UOpPtr& ast);
// Pass: grouped reduces (tinygrad's fix_group_for_reduce). A REDUCE over GroupReduce ranges
// becomes a partial REDUCE over its other ranges, stored to a DEFINE_LOCAL, a BARRIER, and a
// REDUCE of the group's partial results over new Reduce ranges (group_reduce.cpp).
UOpPtr group_reduces(const UOpPtr& ast);
// Pass 3: work-item indices. Without work groups (!caps.has_local) the outermost Global ranges
// with a constant size (up to the renderer's number of global dimensions, each within
// global_max) become SPECIAL gidx0..gidx2. With work groups every constant Global range becomes
// a gidx and every Local and GroupReduce range a lidx, merged or split to fit the device's
// dimensions (tinygrad's get_grouped_dims), and global stores that do not depend on a local
// index are gated to its work item 0. `global` receives the number of work groups (work items
// without work groups) per dimension, `local` the work-group size (1 where unused).
UOpPtr add_gpudims(const UOpPtr& ast, const RendererCaps& caps, std::array<int64_t, 3>& global,
                   std::array<int64_t, 3>& local);
// Pass 4: closes every loop still open at the SINK with END nodes, outermost range (lowest id)
// outermost.
UOpPtr add_ends(const UOpPtr& ast);
// Pass 5: the flat list: defines and constants first, then SPECIALs, then every node in the
// innermost loop its ranges require (hoisted out of loops it does not depend on), each RANGE
// before its body and its END after it. SINK is not listed.
std::vector<UOpPtr> linearize(const UOpPtr& sink);

// tinygrad's kernel name for an AST: "E" (elementwise) or "r" (has a REDUCE), a count of
// outputs when there are several ("E2"), then the loop sizes, non-reduce loops first, each in
// range id order; a DEFINE_VAR size prints as its name.
std::string kernel_name(const UOpPtr& ast);

struct Opt;

// What codegen's passes work on: the kernel being lowered, the renderer's caps, the Opts to
// apply (null: the heuristic, or none under NOOPT=1) and what the passes found out (name,
// global size, the linearized list).
struct KernelLowering {
  UOpPtr sink;
  const RendererCaps* caps = nullptr;
  const std::vector<Opt>* opts = nullptr;
  LoweredKernel kernel;
  std::string describe() const; // PRINT_AFTER: the graph, or the list once linearized
};

// The back half as a table, in order: simplify, optimize, expand, promote_half_float,
// transcendentals, fast_idiv, renderer_decompositions (RendererCaps::decompositions),
// group_reduces, lower_reduces, devectorize, renderer_rules (RendererCaps::extra_matcher),
// gpudims, add_ends, linearize. A kernel whose DEFINE_LOCALs need more than
// RendererCaps::shared_max bytes is refused with tg::Error naming it.
std::span<const Pass<KernelLowering>> codegen_passes();

// Called after every kernel lowered successfully in this process, with its AST, the Opts it was
// given (null: the heuristic's) and the caps it was lowered for: tests collect the kernels of
// whole suites to lower them again for another renderer (tests/cuda). An empty function stops
// it. Process-wide; the observer must be thread-safe.
using LoweringObserver =
    std::function<void(const UOpPtr& ast, const std::vector<Opt>* opts, const RendererCaps& caps)>;
void set_lowering_observer(LoweringObserver observer);

// The whole back half. DEBUG>=3 prints the AST, DEBUG>=5 the linearized uops.
LoweredKernel lower_kernel(const UOpPtr& ast, const RendererCaps& caps);
// The same through another table of passes (a test replacing one).
LoweredKernel lower_kernel_with_passes(const UOpPtr& ast, const RendererCaps& caps,
                                       std::span<const Pass<KernelLowering>> passes,
                                       const std::vector<Opt>* opts = nullptr);

} // namespace tg
