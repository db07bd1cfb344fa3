#pragma once
// The OpenCL C dialect of the C-style renderer (tinygrad's OpenCLRenderer): `__kernel void`,
// buffers as `__global T*`, work-group memory as `__local`, work-item indices from
// get_group_id / get_local_id (get_global_id in a kernel without local indices, which then
// launches with the driver's choice of work-group size), barrier(CLK_LOCAL_MEM_FENCE), vector
// accesses through vloadN / vstoreN (element alignment is enough), swizzles for lanes.
//
// Types: OpenCL's short names (char, uchar, long, ...); bool in memory as uchar; bfloat16 as
// its ushort bits; float16 as `half` when the device has cl_khr_fp16, else held as float in
// registers and read and written through vload_half / vstore_half (codegen computes in
// float32 then, RendererCaps::supports_half false); float64 only with cl_khr_fp64. Vector ALU
// ops are split into lanes (rules in RendererCaps::extra_matcher), so vectors reach the kernel
// only as loads, stores and their lanes, 2, 4, 8 or 16 wide as OpenCL has them. Scalar
// variables arrive as `long` and are narrowed in the kernel, so every launch passes 8 bytes.
#include <mutex>
#include <string>

#include "tg/plugin/cstyle.hpp"

namespace tg::cl {

struct OpenCLFeatures {
  bool fp16 = false; // cl_khr_fp16: half arithmetic
  bool fp64 = false; // cl_khr_fp64: double
};

class OpenCLRenderer : public CStyleRenderer {
public:
  // `name` is the renderer's name ("OpenCL", "QCOM"); `caps` the device's limits.
  OpenCLRenderer(std::string name, RendererCaps caps, OpenCLFeatures features);
  std::string name() const override { return name_; }
  const RendererCaps& caps() const override { return caps_; }
  std::string render(const std::string& kernel_name, std::span<const UOpPtr> uops) override;

  std::string type_name(DType dt) const override;
  std::string render_kernel(const std::string& name, const CStyleContext& ctx) const override;
  std::string buffer_param(const UOp& param, const std::string& name) const override;
  std::string var_param(const UOp& var) const override;
  std::string special_index(const UOp& special) const override;
  std::string local_decl(DType elem, const std::string& name, int64_t size) const override;
  std::string kernel_prefix() const override { return "__kernel "; }
  std::string gep(const std::string& vec, int64_t lane) const override;
  std::string barrier() const override { return "barrier(CLK_LOCAL_MEM_FENCE);"; }
  std::string vector_ctor(DType dt, const std::vector<std::string>& lanes) const override;
  std::string render_cast(DType to, DType from, const std::string& x) const override;
  std::string render_bitcast(DType to, DType from, const std::string& x) const override;
  std::string render_const(const ConstValue& v, DType dt) const override;
  std::string infinity() const override { return "INFINITY"; }
  std::string nan() const override { return "NAN"; }
  std::optional<std::string> code_for_op(CStyleContext& ctx, Ops op, DType dt,
                                         const std::vector<std::string>& operands) const override;
  std::string render_load(DType dt, const std::string& ptr) const override;
  std::string render_store(DType dt, const std::string& ptr, const std::string& v) const override;

private:
  bool emulated_half(DType dt) const {
    return !features_.fp16 && dt.scalar_type == ScalarType::Float16;
  }

  std::string name_;
  RendererCaps caps_;
  OpenCLFeatures features_;
  // What the kernel being rendered uses (render() holds the lock while the rules run).
  std::mutex render_mu_;
  bool uses_local_ids_ = false, uses_half_ = false, uses_double_ = false;
};


} // namespace tg::cl
