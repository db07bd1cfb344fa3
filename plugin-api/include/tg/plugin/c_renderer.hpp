#pragma once
// The C dialect of the C-style renderer, as the CPU plugin compiles it with clang: the CPU
// calling convention of docs/KERNEL_IR.md (SPECIALs become loops, gidx0 over
// [gidx0_begin, gidx0_end)), clang vector extensions for small vectors, _Float16 for float16,
// bfloat16 kept as its uint16 bits (loads, stores, casts, bitcasts and WHERE only; codegen
// must promote its arithmetic), libm builtins for transcendentals.
#include "tg/plugin/cstyle.hpp"

namespace tg {

class CRenderer : public CStyleRenderer {
public:
  // `vector_lanes`: the float32 lanes of the target's vector registers (RendererCaps).
  explicit CRenderer(int64_t vector_lanes = 4);
  std::string name() const override { return "C"; }
  const RendererCaps& caps() const override { return caps_; }

  std::string type_name(DType dt) const override;
  std::string render_kernel(const std::string& name, const CStyleContext& ctx) const override;
  std::string render_special(CStyleContext& ctx, const UOp& special) const override;
  std::string barrier() const override { return "/* barrier: no-op on CPU */"; }
  std::string infinity() const override { return "__builtin_inff()"; }
  std::string nan() const override { return "__builtin_nanf(\"\")"; }
  // A work group is one thread: its shared memory is a private array.
  std::string local_decl(DType elem, const std::string& name, int64_t size) const override {
    return type_name(elem) + " " + name + "[" + std::to_string(size) + "];";
  }
  std::string render_cast(DType to, DType from, const std::string& x) const override;
  std::string render_bitcast(DType to, DType from, const std::string& x) const override;
  std::optional<std::string> code_for_op(CStyleContext& ctx, Ops op, DType dt,
                                         const std::vector<std::string>& operands) const override;

private:
  RendererCaps caps_;
};

} // namespace tg
