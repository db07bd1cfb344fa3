// The NVPTX side of the LLVM IR renderer (ptx_renderer.hpp).
#include "ptx_renderer.hpp"

#include <algorithm>

#include "cuda_renderer.hpp"
#include "tg/error.hpp"

namespace tg::cuda {

RendererCaps ptx_caps_for(const Arch& arch) {
  RendererCaps caps = caps_for(arch);
  caps.has_transcendentals = false;
  caps.extra_matcher = &sign_flip_negation();
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

// mma.sync m16n8k16 as inline PTX: A's 8 and B's 4 float16 or bfloat16 lanes in 32-bit
// registers of two, C and D as 4 floats, in the fragment layout of the TensorCore description
// (cuda_arch.cpp), as the CUDA renderer's helper.
std::string PtxRenderer::render_wmma(LLVMIRContext& c, const UOp& u) const {
  const DType a = u.src[0]->dtype, b = u.src[1]->dtype;
  const bool f16 = a.scalar() == dtypes::float16 && b.scalar() == dtypes::float16;
  const bool bf16 = a.scalar() == dtypes::bfloat16 && b.scalar() == dtypes::bfloat16;
  const DType f4 = dtypes::float32.vec(4);
  if ((!f16 && !bf16) || a.count != 8 || b.count != 4 || u.src[2]->dtype != f4 || u.dtype != f4)
    unsupported(u, "the tensor cores take 8 and 4 float16 or bfloat16 lanes and accumulate 4 "
                   "float32 lanes (mma.sync m16n8k16)");
  const std::string in = f16 ? "f16" : "bf16";
  const std::string av = c.op("bitcast " + type(a) + " " + c[u.src[0]] + " to <4 x i32>");
  const std::string bv = c.op("bitcast " + type(b) + " " + c[u.src[1]] + " to <2 x i32>");
  std::string args;
  auto arg = [&](const std::string& ty, const std::string& vec_ty, const std::string& v, int i) {
    const std::string x = c.op("extractelement " + vec_ty + " " + v + ", i32 " + std::to_string(i));
    args += (args.empty() ? "" : ", ") + ty + " " + x;
  };
  for (int i = 0; i < 4; ++i) arg("i32", "<4 x i32>", av, i);
  for (int i = 0; i < 2; ++i) arg("i32", "<2 x i32>", bv, i);
  for (int i = 0; i < 4; ++i) arg("float", "<4 x float>", c[u.src[2]], i);
  const std::string d =
      c.op("call { float, float, float, float } asm \"mma.sync.aligned.m16n8k16.row.col.f32." + in +
           "." + in +
           ".f32 {$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};\", "
           "\"=f,=f,=f,=f,r,r,r,r,r,r,f,f,f,f\"(" +
           args + ")");
  std::string v = "poison";
  for (int i = 0; i < 4; ++i) {
    const std::string x =
        c.op("extractvalue { float, float, float, float } " + d + ", " + std::to_string(i));
    v = c.op("insertelement <4 x float> " + v + ", float " + x + ", i32 " + std::to_string(i));
  }
  return v;
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
  out += c.body;
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
