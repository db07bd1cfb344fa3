#pragma once
// Renderer "PTX": the LLVM IR base (tg/plugin/llvm_ir.hpp) for LLVM's NVPTX target, compiled to
// PTX by LLVM in process (no NVRTC): a `ptx_kernel` function taking the buffers as pointers
// (PARAM slot order) and the variables as i64, work-item indices from the nvvm special
// registers (ctaid, tid), __syncthreads as llvm.nvvm.barrier0, work-group memory as
// addrspace(3) globals, a WMMA as inline-asm mma.sync m16n8k16. As in the CUDA renderer, float16
// and bfloat16 are computed in float32; exp2, log2 and sin are decomposed by codegen (NVPTX has no
// exact instructions for them); a float POW is refused naming the CUDA renderer.
#include <array>
#include <mutex>
#include <vector>

#include "cuda_arch.hpp"
#include "tg/plugin/llvm_ir.hpp"

namespace tg::cuda {

class PtxRenderer : public LLVMIRRenderer {
public:
  explicit PtxRenderer(RendererCaps caps);
  std::string name() const override { return "PTX"; }
  const RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override;

  std::string render_param(LLVMIRContext& ctx, const UOp& param) const override;
  std::string render_define_var(LLVMIRContext& ctx, const UOp& var) const override;
  std::string render_special(LLVMIRContext& ctx, const UOp& special) const override;
  void render_barrier(LLVMIRContext& ctx, const UOp& barrier) const override;
  std::string render_local(LLVMIRContext& ctx, const UOp& local) const override;
  std::string render_wmma(LLVMIRContext& ctx, const UOp& wmma) const override;
  std::string render_kernel(const std::string& name, LLVMIRContext& ctx) const override;

private:
  RendererCaps caps_;
  // The kernel being rendered (render() holds the lock while the rules run).
  std::mutex render_mu_;
  mutable int64_t buffers_ = 0, vars_ = 0, locals_ = 0;
  std::array<int64_t, 3> block_{1, 1, 1}; // the work-group size: the kernel's launch bounds
};

// The caps of the PTX renderer for `arch`: the CUDA renderer's, without transcendentals.
RendererCaps ptx_caps_for(const Arch& arch);

} // namespace tg::cuda
