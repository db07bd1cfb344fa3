#pragma once
// The CUDA C dialect of the C-style renderer (tinygrad's CUDARenderer), compiled by NVRTC:
// `extern "C" __global__` kernels with `__launch_bounds__` from the work-group size, work-item
// indices from blockIdx / threadIdx, work-group memory as `__shared__` arrays, __syncthreads(),
// half and __nv_bfloat16 from the headers NVRTC ships (cuda_fp16.h, cuda_bf16.h, included only
// by kernels that use them), CUDA's math functions (exp2f, log2f, ...).
//
// Types: float16 and bfloat16 are loaded, stored, converted and selected in their own types
// and computed in float32 (RendererCaps::supports_half is false, so codegen promotes their
// arithmetic: the results equal the CPU's). Vectors are aligned structs `tg_float4 {float
// v[4];}` (one wide load or store where aligned), with ALU ops split into lanes by
// RendererCaps::extra_matcher. Scalar variables arrive as `long long` (8 bytes per launch
// argument) and are narrowed in the kernel. Floating-point contraction is off (the compiler is
// given --fmad=false) so a*b+c rounds twice, as on the CPU.
#include <mutex>
#include <string>

#include "cuda_arch.hpp"
#include "tg/plugin/cstyle.hpp"

namespace tg::cuda {

class CudaRenderer : public CStyleRenderer {
public:
  // `caps`: caps_for(arch), with a device's own limits where it has one.
  explicit CudaRenderer(RendererCaps caps);
  std::string name() const override { return "CUDA"; }
  const RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override;

  std::string type_name(DType dt) const override;
  std::string render_kernel(const std::string& name, const CStyleContext& ctx) const override;
  std::string buffer_param(const UOp& param, const std::string& name) const override;
  std::string var_param(const UOp& var) const override;
  std::string special_index(const UOp& special) const override;
  std::string local_decl(DType elem, const std::string& name, int64_t size) const override;
  std::string gep(const std::string& vec, int64_t lane) const override;
  std::string barrier() const override { return "__syncthreads();"; }
  std::string vector_ctor(DType dt, const std::vector<std::string>& lanes) const override;
  std::string render_cast(DType to, DType from, const std::string& x) const override;
  std::string render_bitcast(DType to, DType from, const std::string& x) const override;
  std::string infinity() const override { return "__int_as_float(0x7f800000)"; }
  std::string nan() const override { return "__int_as_float(0x7fffffff)"; }
  std::optional<std::string> code_for_op(CStyleContext& ctx, Ops op, DType dt,
                                         const std::vector<std::string>& operands) const override;

private:
  RendererCaps caps_;
  // What the kernel being rendered uses (render() holds the lock while the rules run).
  std::mutex render_mu_;
  int64_t threads_per_block_ = 1;
};


} // namespace tg::cuda
