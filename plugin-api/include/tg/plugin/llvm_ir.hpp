#pragma once
// LLVMIRRenderer: the shared base of renderers that emit textual LLVM IR (the CPU's, and the
// NVPTX and AMDGPU targets to come), as CStyleRenderer is for C-like languages. It walks a
// linearized kernel (docs/KERNEL_IR.md) once, in order, and renders each node with the rule
// its op has in a table: loops as header-phi/latch blocks, gated loads and stores as branches
// (a phi gives the alternative), registers as entry-block allocas, bool as i1 in registers and
// i8 in memory, bfloat16 as its i16 bits (loads, stores, casts, bitcasts and WHERE only; codegen
// promotes its math), float MAX as llvm.maximum (NaN-propagating, as exec_alu).
//
// What a target decides is a hook, empty in the base (a kernel that needs one the target did not
// set raises tg::Error naming it): how buffers (PARAM) and variables (DEFINE_VAR) arrive, what a
// work-item index (SPECIAL) is, the barrier, work-group memory (DEFINE_LOCAL), and the function
// around the body (signature, calling convention, attributes).
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tg/error.hpp"
#include "tg/plugin/device.hpp"

namespace tg {

struct LLVMLoop {
  int id;
  std::string var, type; // the induction variable and its LLVM type
};

// The state of one render.
struct LLVMIRContext {
  std::vector<std::string> entry;   // entry-block instructions (parameters, allocas)
  std::string body;                 // the body, in blocks: one line per instruction or label,
                                    // each ending in '\n' (one buffer, not a string per line)
  std::vector<std::string> helpers; // internal functions the kernel calls, emitted once
  std::set<std::string> declares;   // intrinsic declarations
  std::unordered_map<const UOp*, std::string> names, gates;
  std::unordered_map<const UOp*, LLVMLoop> loops;
  std::unordered_map<const UOp*, int> ifs;
  std::vector<LLVMLoop> open_specials; // work-item loops a target opened (closed at the end)
  std::string block = "entry";
  int counter = 0, nvars = 0;
  // Fast-math flags of float fadd/fsub/fmul (" contract" under FP_CONTRACT=1: LLVM may fuse a
  // multiply and an add into one FMA).
  std::string float_flags;
  // Stores into global buffers of at least this many bytes bypass the caches (!nontemporal);
  // 0: none. Set per kernel by render() from the target's threshold.
  int64_t nontemporal_bytes = 0;

  std::string tmp() { return "%t" + std::to_string(counter++); }
  int next() { return counter++; }
  // Appends the line "  " + parts... to the body.
  template <class... Parts> void emit(const Parts&... parts) {
    body.append("  ");
    (body.append(std::string_view(parts)), ...);
    body.push_back('\n');
  }
  void place(const std::string& label) {
    body.append(label).append(":\n");
    block = label;
  }
  // An instruction with a result: emits `%tN = text` and returns %tN.
  std::string op(std::string_view text) {
    std::string t = tmp();
    emit(t, " = ", text);
    return t;
  }
  // The name a source node was rendered as; a node used before it was rendered is a broken
  // linearization and raises tg::Error.
  const std::string& operator[](const UOpPtr& u) const;
};

class LLVMIRRenderer : public Renderer {
public:
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override;

  // ---- hooks a target sets (the base raises naming the hook) ----
  virtual std::string render_param(LLVMIRContext& ctx, const UOp& param) const;
  virtual std::string render_define_var(LLVMIRContext& ctx, const UOp& var) const;
  virtual std::string render_special(LLVMIRContext& ctx, const UOp& special) const;
  virtual void render_barrier(LLVMIRContext& ctx, const UOp& barrier) const;
  virtual std::string render_local(LLVMIRContext& ctx, const UOp& local) const;
  // A tensor core's WMMA (docs/KERNEL_IR.md), for a target with RendererCaps::tensor_cores.
  virtual std::string render_wmma(LLVMIRContext& ctx, const UOp& wmma) const;
  // Ops::DOT4, for a target with RendererCaps::has_dot4 (codegen decomposes it for the others).
  virtual std::string render_dot4(LLVMIRContext& ctx, const UOp& dot4) const;
  // The whole module: the function around the rendered entry block and body (closing the
  // work-item loops the target opened), then module_tail(ctx) and the target's attributes.
  virtual std::string render_kernel(const std::string& name, LLVMIRContext& ctx) const;
  // Elementwise kernels (no accumulator) store vectors into buffers of at least this many bytes
  // with non-temporal stores, which skip each line's read-for-ownership and leave the caches to
  // the inputs: a stream too large for the cache is written at close to the read bandwidth
  // instead of two thirds of it. 0 (the base's): never.
  virtual int64_t nontemporal_store_bytes() const { return 0; }

  // ---- for targets ----
  // The LLVM type of a dtype ("float", "<4 x i32>", "ptr"); bool is i8 `in_memory`.
  static std::string type(DType d, bool in_memory = false);
  static int bits(DType d); // 1 for bool
  // A loop from `start` (inclusive) to `end` (exclusive) in the body; returns its variable.
  LLVMLoop open_loop(LLVMIRContext& ctx, DType dt, const std::string& start,
                     const std::string& end) const;
  void close_loop(LLVMIRContext& ctx, const LLVMLoop& loop) const;
  // The helper functions and intrinsic declarations the body needs.
  static std::string module_tail(const LLVMIRContext& ctx);
  // An entry-block array of `count` elements of `elem` (registers, a work group's memory).
  std::string alloca_array(LLVMIRContext& ctx, DType elem, int64_t count) const;
  // tg::Error naming the node and this renderer.
  [[noreturn]] void unsupported(const UOp& u, const std::string& why = "") const;
};

} // namespace tg
