// The NVPTX side of the LLVM IR renderer (ptx_renderer.hpp).
#include "ptx_renderer.hpp"

#include <algorithm>

#include "cuda_renderer.hpp"
#include "tg/error.hpp"

namespace tg::cuda {

RendererCaps ptx_caps_for(const Arch& arch) {
  RendererCaps caps = caps_for(arch);
  caps.has_transcendentals = false;
  caps.tensor_cores.clear(); // mma.sync is the CUDA renderer's
  caps.extra_matcher = nullptr;
  return caps;
}

PtxRenderer::PtxRenderer(RendererCaps caps) : caps_(std::move(caps)) {}

std::string PtxRenderer::render(const std::string& kernel_name, std::span<const UOpPtr> uops) {
  std::lock_guard lock(render_mu_);
  buffers_ = vars_ = locals_ = 0;
  block_ = {1, 1, 1};
  for (const UOpPtr& u : uops) {
    if (u->op == Ops::PARAM) buffers_ = std::max(buffers_, std::get<int64_t>(u->arg) + 1);
    // NVPTX selects no llvm.pow (nor exp2/log2, which codegen decomposes): refused here rather
    // than aborting in LLVM's instruction selection.
    if (u->op == Ops::POW && u->dtype.is_float())
      throw Error("PTX renderer: kernel " + kernel_name +
                  " raises floats to a power (POW), which LLVM's NVPTX target cannot select; "
                  "use the CUDA renderer (DEV=CUDA) for it");
    const auto* n = std::get_if<std::string>(&u->arg);
    if (u->op == Ops::SPECIAL && n != nullptr && n->rfind("lidx", 0) == 0 && u->src[0]->is_const())
      block_[static_cast<size_t>(n->back() - '0')] = as_int(u->src[0]->const_value());
  }
  return LLVMIRRenderer::render(kernel_name, uops);
}

std::string PtxRenderer::render_param(LLVMIRContext&, const UOp& u) const {
  return "%data" + std::to_string(std::get<int64_t>(u.arg));
}

std::string PtxRenderer::render_define_var(LLVMIRContext& c, const UOp& u) const {
  const std::string v = "%var" + std::to_string(vars_++);
  if (bits(u.dtype) == 64) return v;
  c.entry.push_back("  " + v + ".n = trunc i64 " + v + " to " + type(u.dtype));
  return v + ".n";
}

std::string PtxRenderer::render_special(LLVMIRContext& c, const UOp& u) const {
  const std::string& name = std::get<std::string>(u.arg);
  const std::string reg = name.rfind("lidx", 0) == 0 ? "tid" : "ctaid";
  const std::string dim(1, static_cast<char>('x' + (name.back() - '0')));
  const std::string fn = "@llvm.nvvm.read.ptx.sreg." + reg + "." + dim;
  c.declares.insert("declare i32 " + fn + "()");
  const std::string id = "%" + name + ".i32";
  c.entry.push_back("  " + id + " = call i32 " + fn + "()");
  if (bits(u.dtype) == 32) return id;
  c.entry.push_back("  %" + name + " = zext i32 " + id + " to " + type(u.dtype));
  return "%" + name;
}

void PtxRenderer::render_barrier(LLVMIRContext& c, const UOp&) const {
  c.declares.insert("declare void @llvm.nvvm.barrier0()");
  c.emit("call void @llvm.nvvm.barrier0()");
}

std::string PtxRenderer::render_local(LLVMIRContext& c, const UOp& u) const {
  if (u.dtype.size <= 0) unsupported(u, "work-group memory needs a positive size");
  const std::string g = "@tg_local" + std::to_string(locals_++);
  const std::string elem = type(u.dtype.base(), true);
  c.declares.insert(g + " = internal addrspace(3) global [" + std::to_string(u.dtype.size) + " x " +
                    elem + "] undef, align 16");
  const std::string p = "%" + g.substr(1) + ".p";
  c.entry.push_back("  " + p + " = addrspacecast ptr addrspace(3) " + g + " to ptr");
  return p;
}

std::string PtxRenderer::render_kernel(const std::string& name, LLVMIRContext& c) const {
  std::string params;
  for (int64_t i = 0; i < buffers_; ++i)
    params += (i ? ", " : "") + std::string("ptr %data") + std::to_string(i);
  for (int64_t i = 0; i < vars_; ++i)
    params += (params.empty() ? "" : ", ") + std::string("i64 %var") + std::to_string(i);
  std::string out = "target triple = \"nvptx64-nvidia-cuda\"\n";
  out += "define ptx_kernel void @" + name + "(" + params + ") #0 {\nentry:\n";
  for (const auto& l : c.entry) out += l + "\n";
  for (const auto& l : c.body) out += l + "\n";
  out += "  ret void\n}\n";
  out += module_tail(c);
  out += "attributes #0 = { nounwind }\n";
  // The launch bounds: the block is at most this large in each dimension.
  out += "!nvvm.annotations = !{!0, !1, !2}\n";
  for (int d = 0; d < 3; ++d)
    out += "!" + std::to_string(d) + " = !{ptr @" + name + ", !\"maxntid" +
           std::string(1, static_cast<char>('x' + d)) + "\", i32 " +
           std::to_string(block_[static_cast<size_t>(d)]) + "}\n";
  return out;
}

} // namespace tg::cuda
