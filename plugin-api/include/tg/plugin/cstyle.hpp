#pragma once
// CStyleRenderer: the shared base of every C-like renderer (C, CUDA, HIP, Metal, OpenCL, WGSL),
// tinygrad's CStyleLanguage. It walks a linearized kernel (docs/KERNEL_IR.md) once, in order,
// and renders each node with the rule its op has in a table (`rules()`): a rule either emits
// statement lines (loops, stores) or returns the expression that names the node's value.
// ALU ops go through a second table, op -> format (`op_table()`), that a dialect edits for the
// spellings it differs in and extends through `code_for_op` for the ops it lacks.
//
// What differs between dialects is a hook: type names, the kernel's signature and prefix,
// how buffers and scalar variables arrive, the expression for a work-item index, the barrier,
// vector constructors, casts and bitcasts, infinity and NaN literals. The base spells only what
// every C-like language spells alike; hooks whose spelling is a vendor's (the barrier, shared
// memory, float16 and bfloat16 names, bitcasts, infinity and NaN, work-item indices) are empty
// here, and a kernel that needs one the dialect did not set raises tg::Error naming the hook.
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "tg/error.hpp"
#include "tg/plugin/device.hpp"

namespace tg {

// The state of one render: value names, emitted lines and the kernel's parameters.
struct CStyleContext {
  std::unordered_map<const UOp*, std::string> names; // node -> its expression or variable
  std::vector<std::string> lines;                    // the kernel body, indented
  int depth = 1;                                     // current indentation level
  std::vector<const UOp*> buffers;                   // PARAMs, by slot
  std::vector<const UOp*> vars;                      // DEFINE_VARs, in the order first shown
  std::vector<std::string> preamble;                 // helpers a rule needed, emitted once
  std::map<std::string, int> counters;               // per prefix, for fresh names
  std::vector<DType> vector_types;                   // vector dtypes the kernel uses
  std::unordered_map<const UOp*, std::string> gates; // INDEX -> its gate's expression
  int open_blocks = 0; // blocks a dialect opened (CPU SPECIAL loops) that the kernel closes

  // The name a source node was rendered as; a node used before it was rendered is a broken
  // linearization and raises tg::Error.
  const std::string& operator[](const UOpPtr& u) const;
  std::string fresh(const std::string& prefix) {
    return prefix + std::to_string(counters[prefix]++);
  }
  void emit(const std::string& line) { lines.push_back(std::string(2 * depth, ' ') + line); }
  void need(const std::string& helper); // adds a preamble helper once
};

class CStyleRenderer : public Renderer {
public:
  // A node's rule: emits what it must into the context and returns the node's expression
  // ("" for statements).
  using Rule = std::function<std::string(const CStyleRenderer&, CStyleContext&, const UOp&)>;
  // An ALU op's format: the expression from the operands' expressions and the operands'
  // dtype (for WHERE, the branches' dtype), or nullopt where the dialect has no spelling.
  using OpFormat =
      std::function<std::optional<std::string>(const std::vector<std::string>&, DType)>;

  CStyleRenderer();
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override;

  // ---- hooks a dialect overrides ----
  // The scalar or vector type's name ("float", "float4"). The scalar float16 and bfloat16
  // names ("half", "__bf16", "_Float16") are the dialect's: the base has none.
  virtual std::string type_name(DType dt) const;
  // The whole kernel from its rendered body.
  virtual std::string render_kernel(const std::string& name, const CStyleContext& ctx) const;
  // Parameter declarations for one buffer (a PARAM) and one scalar variable (a DEFINE_VAR).
  virtual std::string buffer_param(const UOp& param, const std::string& name) const;
  virtual std::string var_param(const UOp& var) const;
  // The expression for a SPECIAL ("gidx0", "lidx1"), e.g. CUDA's blockIdx.x.
  virtual std::string special_index(const UOp& special) const;
  // Renders a SPECIAL: by default binds special_index to a variable named like the arg.
  virtual std::string render_special(CStyleContext& ctx, const UOp& special) const;
  // Work-group memory (DEFINE_LOCAL) declaration ("__shared__ float temp0[256];" in CUDA).
  // Dialect-set: empty by default.
  virtual std::string local_decl(DType /*elem*/, const std::string& /*name*/,
                                 int64_t /*size*/) const {
    return "";
  }
  virtual std::string kernel_prefix() const { return ""; }
  // One lane of a vector expression.
  virtual std::string gep(const std::string& vec, int64_t lane) const;
  // The work-group barrier statement ("__syncthreads();" in CUDA). Dialect-set.
  virtual std::string barrier() const { return ""; }
  virtual std::string vector_ctor(DType dt, const std::vector<std::string>& lanes) const;
  virtual std::string render_cast(DType to, DType from, const std::string& x) const;
  // Dialect-set (as_type<>, __builtin_bit_cast, a union ...): empty by default.
  virtual std::string render_bitcast(DType /*to*/, DType /*from*/, const std::string& /*x*/) const {
    return "";
  }
  virtual std::string render_const(const ConstValue& v, DType dt) const;
  // Float infinity and NaN literals ("INFINITY", "__builtin_inff()"). Dialect-set.
  virtual std::string infinity() const { return ""; }
  virtual std::string nan() const { return ""; }
  // An ALU op's expression; by default the op table's entry. Dialects override it for ops
  // their language lacks (and may add preamble helpers through ctx). nullopt: unsupported.
  virtual std::optional<std::string> code_for_op(CStyleContext& ctx, Ops op, DType dt,
                                                 const std::vector<std::string>& operands) const;
  // A gated load's expression: `gate ? *ptr : alt`.
  virtual std::string render_load(DType dt, const std::string& ptr) const;
  virtual std::string render_store(DType dt, const std::string& ptr, const std::string& v) const;

  // Binds `expr` to a fresh variable of the node's type and returns the variable's name.
  std::string bind(CStyleContext& ctx, const UOp& u, const std::string& expr,
                   const std::string& prefix) const;
  // tg::Error naming the node and this renderer.
  [[noreturn]] void unsupported(const UOp& u, const std::string& why = "") const;

protected:
  std::array<Rule, kNumOps>& rules() { return rules_; }
  std::array<OpFormat, kNumOps>& op_table() { return op_table_; }
  const std::array<OpFormat, kNumOps>& op_table() const { return op_table_; }

private:
  std::array<Rule, kNumOps> rules_;
  std::array<OpFormat, kNumOps> op_table_;
};

} // namespace tg
