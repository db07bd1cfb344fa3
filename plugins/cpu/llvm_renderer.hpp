#pragma once
// Renderer "LLVM": the LLVM IR base (tg/plugin/llvm_ir.hpp) with the CPU calling convention of
// docs/KERNEL_IR.md: define void @name(ptr %bufs, ptr %vars, i64 %gidx0_begin, i64 %gidx0_end).
// Buffers and variables are loaded from the two arrays, SPECIALs become loops (gidx0 over the
// range the runtime hands this thread), and a work group is one thread: the barrier is nothing
// and work-group memory an entry-block array.
#include "tg/plugin/llvm_ir.hpp"

namespace tg::cpu {

class LlvmRenderer : public LLVMIRRenderer {
public:
  // `vector_lanes`: the float32 lanes of the host's vector registers (RendererCaps).
  // `vpdpbusd`: the host has AVX512-VNNI's vpdpbusd on every vector width, which then spells
  // Ops::DOT4 (RendererCaps::has_dot4).
  explicit LlvmRenderer(int64_t vector_lanes = 4, bool vpdpbusd = false);
  std::string name() const override { return "LLVM"; }
  const RendererCaps& caps() const override { return caps_; }

  std::string render_param(LLVMIRContext& ctx, const UOp& param) const override;
  std::string render_define_var(LLVMIRContext& ctx, const UOp& var) const override;
  std::string render_special(LLVMIRContext& ctx, const UOp& special) const override;
  void render_barrier(LLVMIRContext& ctx, const UOp& barrier) const override;
  std::string render_local(LLVMIRContext& ctx, const UOp& local) const override;
  std::string render_kernel(const std::string& name, LLVMIRContext& ctx) const override;
  int64_t nontemporal_store_bytes() const override;
  std::string render_dot4(LLVMIRContext& ctx, const UOp& dot4) const override;

private:
  RendererCaps caps_;
};

} // namespace tg::cpu
