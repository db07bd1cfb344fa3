// The CUDA C dialect: what CUDA spells differently from the C-style base.
#include "cuda_renderer.hpp"

#include <functional>
#include <unordered_map>

#include "tg/ir/pattern_matcher.hpp"
#include "tg/knobs.hpp"
#include "tg/plugin/split_vectors.hpp"

namespace tg::cuda {

namespace {

// Integer POW by squaring, with exec_alu's meaning for negative signed exponents.
const char* kIpowHelpers =
    "__device__ long long tg_ipow_s(long long a, long long b) {\n"
    "  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "  unsigned long long r = 1, x = (unsigned long long)a;\n"
    "  for (unsigned long long e = (unsigned long long)b; e; e >>= 1, x *= x) if (e & 1) r *= x;\n"
    "  return (long long)r;\n"
    "}\n"
    "__device__ unsigned long long tg_ipow_u(unsigned long long a, unsigned long long b) {\n"
    "  unsigned long long r = 1;\n"
    "  for (; b; b >>= 1, a *= a) if (b & 1) r *= a;\n"
    "  return r;\n"
    "}";

// float32 to float16/bfloat16 rounding to nearest even; a NaN keeps its sign (cvt makes every
// NaN the positive canonical one; the CPU and copysign's sign bits keep it).
const char* kFloatToHalf =
    "__device__ __forceinline__ half tg_f2h(float x) {\n"
    "  return x != x ? __ushort_as_half((unsigned short)(0x7e00u | ((__float_as_uint(x) >> 16) & "
    "0x8000u))) : __float2half_rn(x);\n}";
const char* kFloatToBfloat =
    "__device__ __forceinline__ __nv_bfloat16 tg_f2bf(float x) {\n"
    "  return x != x ? __ushort_as_bfloat16((unsigned short)((__float_as_uint(x) >> 16) | 0x40u)) "
    ": __float2bfloat16_rn(x);\n}";

// Bit casts through memcpy (no aliasing questions; NVRTC folds it to a register move).
const char* kBitcastHelper = "template <class T, class F> __device__ __forceinline__ T "
                             "tg_bitcast(F f) { T t; memcpy(&t, &f, sizeof(T)); return t; }";

std::string scalar_name(ScalarType s) {
  switch (s) {
  case ScalarType::Bool:
    return "bool";
  case ScalarType::Int8:
    return "signed char";
  case ScalarType::UInt8:
    return "unsigned char";
  case ScalarType::Int16:
    return "short";
  case ScalarType::UInt16:
    return "unsigned short";
  case ScalarType::Int32:
    return "int";
  case ScalarType::UInt32:
    return "unsigned int";
  case ScalarType::Index:
  case ScalarType::Int64:
    return "long long";
  case ScalarType::UInt64:
    return "unsigned long long";
  case ScalarType::Float16:
    return "half";
  case ScalarType::BFloat16:
    return "__nv_bfloat16";
  case ScalarType::Float32:
    return "float";
  case ScalarType::Float64:
    return "double";
  case ScalarType::Void:
    return "void";
  default:
    return "";
  }
}

// The identifier part of a vector struct's name: "float", "uchar", "half", "bf16".
std::string short_name(ScalarType s) {
  switch (s) {
  case ScalarType::Int8:
    return "char";
  case ScalarType::UInt8:
    return "uchar";
  case ScalarType::UInt16:
    return "ushort";
  case ScalarType::UInt32:
    return "uint";
  case ScalarType::Index:
  case ScalarType::Int64:
    return "long";
  case ScalarType::UInt64:
    return "ulong";
  case ScalarType::BFloat16:
    return "bfloat";
  default:
    return scalar_name(s);
  }
}

bool is_half(DType d) { return d.scalar_type == ScalarType::Float16; }
bool is_bf16(DType d) { return d.scalar_type == ScalarType::BFloat16; }
bool is_narrow_float(DType d) { return is_half(d) || is_bf16(d); }

// The libdevice function for a float op: "exp2f" for float32, "exp2" for float64.
std::optional<std::string> math_function(Ops op, DType dt) {
  const char* base = nullptr;
  switch (op) {
  case Ops::EXP2:
    base = "exp2";
    break;
  case Ops::LOG2:
    base = "log2";
    break;
  case Ops::SIN:
    base = "sin";
    break;
  case Ops::SQRT:
    base = "sqrt";
    break;
  case Ops::TRUNC:
    base = "trunc";
    break;
  case Ops::POW:
    base = "pow";
    break;
  case Ops::MOD:
    base = "fmod";
    break;
  default:
    return std::nullopt;
  }
  return std::string(base) + (dt.scalar_type == ScalarType::Float64 ? "" : "f");
}

// mma.sync m16n8k16 with float32 accumulation, one warp: A as 8 halves (4 registers of two),
// B as 4 (2 registers), C and D as 4 floats, in the fragment layout of the TensorCore
// description (cuda_arch.cpp).
std::string mma_helper(const std::string& fn, const std::string& in, const std::string& ptx_in) {
  return "__device__ __forceinline__ tg_float4 " + fn + "(tg_" + in + "8 a, tg_" + in +
         "4 b, tg_float4 c) {\n"
         "  const int* ap = (const int*)&a;\n"
         "  const int* bp = (const int*)&b;\n"
         "  asm(\"mma.sync.aligned.m16n8k16.row.col.f32." +
         ptx_in + "." + ptx_in +
         ".f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\"\n"
         "      : \"+f\"(c.v[0]), \"+f\"(c.v[1]), \"+f\"(c.v[2]), \"+f\"(c.v[3])\n"
         "      : \"r\"(ap[0]), \"r\"(ap[1]), \"r\"(ap[2]), \"r\"(ap[3]), \"r\"(bp[0]), "
         "\"r\"(bp[1]));\n"
         "  return c;\n"
         "}";
}

// WMMA(a, b, c) (arg: the TensorCore's name) as a call of the mma.sync helper.
std::string render_wmma(const CStyleRenderer& r, CStyleContext& ctx, const UOp& u) {
  if (u.src.size() != 3) r.unsupported(u, "WMMA takes A, B and C");
  const DType a = u.src[0]->dtype, b = u.src[1]->dtype, c = u.src[2]->dtype;
  const bool f16 = is_half(a) && is_half(b), bf16 = is_bf16(a) && is_bf16(b);
  if ((!f16 && !bf16) || a.count != 8 || b.count != 4 || c != dtypes::float32.vec(4) ||
      u.dtype != dtypes::float32.vec(4))
    r.unsupported(u, "the tensor cores take 8 and 4 float16 or bfloat16 lanes and accumulate 4 "
                     "float32 lanes (mma.sync m16n8k16)");
  const std::string fn = f16 ? "tg_mma_m16n8k16_f16" : "tg_mma_m16n8k16_bf16";
  ctx.need(f16 ? mma_helper(fn, "half", "f16") : mma_helper(fn, "bfloat", "bf16"));
  return r.bind(
      ctx, u, fn + "(" + ctx[u.src[0]] + ", " + ctx[u.src[1]] + ", " + ctx[u.src[2]] + ")", "wmma");
}

// `text` under an include guard, so kernels can share one translation unit (NVRTC compiles
// many at once in the tests).
std::string guarded(const std::string& macro, const std::string& text) {
  return "#ifndef " + macro + "\n#define " + macro + "\n" + text + "\n#endif\n";
}

// The kernel with its index arithmetic in 32 bits where every index value fits (tinygrad's
// lowering of the index dtype): a GPU adds and multiplies 64-bit integers in two or more
// instructions, and addresses take most of a matmul's integer work. Each node's bounds (its
// interval analysis) must lie in int32, so no intermediate can overflow; a kernel with any
// index outside (a huge buffer, an index read from memory) keeps 64 bits throughout.
std::vector<UOpPtr> narrow_index_math(std::span<const UOpPtr> uops) {
  const auto is_index = [](const UOp& u) {
    return !u.dtype.is_ptr && u.dtype.scalar_type == ScalarType::Index;
  };
  for (const UOpPtr& u : uops)
    if (is_index(*u) && (u->ivmin() < INT32_MIN || u->ivmax() > INT32_MAX))
      return {uops.begin(), uops.end()};
  std::unordered_map<const UOp*, UOpPtr> narrowed;
  std::function<UOpPtr(const UOpPtr&)> narrow = [&](const UOpPtr& u) -> UOpPtr {
    if (auto it = narrowed.find(u.get()); it != narrowed.end()) return it->second;
    std::vector<UOpPtr> src;
    src.reserve(u->src.size());
    for (const UOpPtr& s : u->src) src.push_back(narrow(s));
    UOpPtr out = is_index(*u)
                     ? UOp::make(u->op, dtypes::int32.vec(u->dtype.count), std::move(src), u->arg)
                     : u->replace_src(std::move(src));
    narrowed.emplace(u.get(), out);
    return out;
  };
  std::vector<UOpPtr> out;
  out.reserve(uops.size());
  for (const UOpPtr& u : uops) out.push_back(narrow(u));
  return out;
}

} // namespace

CudaRenderer::CudaRenderer(RendererCaps caps) : caps_(std::move(caps)) {
  static const PatternMatcher gpu_rules = sign_flip_negation() + split_vector_alu();
  caps_.extra_matcher = &gpu_rules;
  rules()[static_cast<size_t>(Ops::WMMA)] = render_wmma;
}

std::string CudaRenderer::render(const std::string& kernel_name, std::span<const UOpPtr> uops) {
  std::lock_guard lock(render_mu_);
  threads_per_block_ = 1;
  for (const UOpPtr& u : uops)
    if (u->op == Ops::SPECIAL && std::get<std::string>(u->arg).rfind("lidx", 0) == 0 &&
        u->src.size() == 1 && u->src[0]->is_const())
      threads_per_block_ *= as_int(u->src[0]->const_value());
  if (!knobs::CUDA_INDEX64.get()) {
    const std::vector<UOpPtr> narrowed = narrow_index_math(uops);
    return CStyleRenderer::render(kernel_name, narrowed);
  }
  return CStyleRenderer::render(kernel_name, uops);
}

std::string CudaRenderer::type_name(DType dt) const {
  if (dt.is_ptr) return type_name(dt.base()) + "*";
  const std::string name = scalar_name(dt.scalar_type);
  if (name.empty())
    throw Error("CUDA renderer: no CUDA type for " + dt.name() +
                "; codegen must emulate it before rendering");
  if (dt.count == 1) return name;
  return "tg_" + short_name(dt.scalar_type) + std::to_string(dt.count);
}

std::string CudaRenderer::buffer_param(const UOp& param, const std::string& name) const {
  return type_name(param.dtype.base()) + "* " + name;
}

std::string CudaRenderer::var_param(const UOp& var) const {
  return "const long long " + std::get<VarArg>(var.arg).name + "_arg";
}

std::string CudaRenderer::special_index(const UOp& special) const {
  const std::string& n = std::get<std::string>(special.arg);
  const std::string dim(1, static_cast<char>('x' + (n.back() - '0')));
  if (n.rfind("lidx", 0) == 0) return "(int)threadIdx." + dim;
  return "(int)blockIdx." + dim;
}

std::string CudaRenderer::local_decl(DType elem, const std::string& name, int64_t size) const {
  return "__shared__ __align__(16) " + type_name(elem) + " " + name + "[" + std::to_string(size) +
         "];";
}

std::string CudaRenderer::gep(const std::string& vec, int64_t lane) const {
  return vec + ".v[" + std::to_string(lane) + "]";
}

std::string CudaRenderer::vector_ctor(DType dt, const std::vector<std::string>& lanes) const {
  std::string r = type_name(dt) + "{{";
  for (size_t i = 0; i < lanes.size(); ++i) r += (i ? ", " : "") + lanes[i];
  return r + "}}";
}

std::string CudaRenderer::render_kernel(const std::string& name, const CStyleContext& ctx) const {
  std::string body;
  for (const auto& l : ctx.lines) body += l + "\n";
  auto uses = [&](const std::string& what) {
    if (body.find(what) != std::string::npos) return true;
    for (const auto& h : ctx.preamble)
      if (h.find(what) != std::string::npos) return true;
    return false;
  };
  bool half = false, bf16 = false;
  for (const UOp* b : ctx.buffers)
    if (b != nullptr) {
      half |= is_half(b->dtype.base());
      bf16 |= is_bf16(b->dtype.base());
    }
  half |= uses("half") || uses("tg_f2h(") || uses("__double2half");
  bf16 |= uses("__nv_bfloat16") || uses("bfloat16") || uses("tg_f2bf(");
  std::string out;
  if (half) out += "#include <cuda_fp16.h>\n";
  if (bf16) out += "#include <cuda_bf16.h>\n";
  // Vector structs, aligned to their size where it is a power of two (one wide access).
  std::vector<DType> vectors = ctx.vector_types;
  for (const DType& v : vectors) {
    const int64_t bytes = v.scalar().itemsize() * v.count;
    const bool pow2 = (bytes & (bytes - 1)) == 0;
    const int64_t align = pow2 ? std::min<int64_t>(bytes, 16) : v.scalar().itemsize();
    out += guarded("TG_VEC_" + type_name(v), "struct __align__(" + std::to_string(align) + ") " +
                                                 type_name(v) + " { " + scalar_name(v.scalar_type) +
                                                 " v[" + std::to_string(v.count) + "]; };");
  }
  if (uses("tg_bitcast<")) out += guarded("TG_BITCAST", kBitcastHelper);
  if (uses("tg_f2h(")) out += guarded("TG_F2H", kFloatToHalf);
  if (uses("tg_f2bf(")) out += guarded("TG_F2BF", kFloatToBfloat);
  for (const auto& h : ctx.preamble)
    out += guarded("TG_HELPER_" + std::to_string(std::hash<std::string>{}(h)), h);
  std::string params;
  for (size_t slot = 0; slot < ctx.buffers.size(); ++slot) {
    if (ctx.buffers[slot] == nullptr)
      throw Error("CUDA renderer: kernel " + name + " has no PARAM for slot " +
                  std::to_string(slot) + "; buffer slots must be 0..n-1");
    params += (params.empty() ? "" : ", ") +
              buffer_param(*ctx.buffers[slot], "data" + std::to_string(slot));
  }
  for (const UOp* v : ctx.vars) params += (params.empty() ? "" : ", ") + var_param(*v);
  out += "extern \"C\" __global__ void __launch_bounds__(" + std::to_string(threads_per_block_) +
         ") " + name + "(" + params + ") {\n";
  for (const UOp* v : ctx.vars) {
    const std::string& n = std::get<VarArg>(v->arg).name;
    out += "  const " + type_name(v->dtype) + " " + n + " = (" + type_name(v->dtype) + ")" + n +
           "_arg;\n";
  }
  return out + body + "}\n";
}

std::string CudaRenderer::render_cast(DType to, DType from, const std::string& x) const {
  if (to.count > 1 || from.count > 1)
    throw Error("CUDA renderer: vector cast to " + to.name() + " must be split into lanes");
  if (to == from) return x;
  // float16 and bfloat16 convert through float32 (exact for either) or, from wider types,
  // through float64 with one rounding.
  const bool exact_in_float =
      from == dtypes::float32 || is_narrow_float(from) || from.itemsize() <= 2 || from.is_bool();
  auto as_float = [&](const std::string& v) -> std::string {
    if (is_half(from)) return "__half2float(" + v + ")";
    if (is_bf16(from)) return "__bfloat162float(" + v + ")";
    return "(float)(" + v + ")";
  };
  // tg_f2h/tg_f2bf keep a NaN's sign, which the conversion instructions drop.
  if (is_half(to)) {
    if (exact_in_float) return "tg_f2h(" + as_float(x) + ")";
    return "__double2half((double)(" + x + "))";
  }
  if (is_bf16(to)) {
    if (exact_in_float) return "tg_f2bf(" + as_float(x) + ")";
    return "__double2bfloat16((double)(" + x + "))";
  }
  if (is_narrow_float(from)) return "((" + type_name(to) + ")" + as_float(x) + ")";
  return "((" + type_name(to) + ")(" + x + "))";
}

std::string CudaRenderer::render_bitcast(DType to, DType from, const std::string& x) const {
  if (to.count > 1 || from.count > 1)
    throw Error("CUDA renderer: vector bitcast to " + to.name() + " must be split into lanes");
  return "tg_bitcast<" + type_name(to) + ">(" + x + ")";
}

std::optional<std::string> CudaRenderer::code_for_op(CStyleContext& ctx, Ops op, DType dt,
                                                     const std::vector<std::string>& a) const {
  if (dt.count > 1) return std::nullopt; // split into lanes by extra_matcher
  // float16 and bfloat16 are computed in float32 (codegen promotes them); selecting and
  // comparing float16 are exact.
  if (is_bf16(dt) && op != Ops::WHERE) return std::nullopt;
  if (is_half(dt) && op != Ops::WHERE && !GroupOp::Comparison.contains(op)) return std::nullopt;
  if (op == Ops::POW && dt.is_int()) {
    ctx.need(kIpowHelpers);
    if (dt.is_unsigned()) return "((" + type_name(dt) + ")tg_ipow_u(" + a[0] + ", " + a[1] + "))";
    return "((" + type_name(dt) + ")tg_ipow_s(" + a[0] + ", " + a[1] + "))";
  }
  if (dt.is_float()) {
    const bool dbl = dt.scalar_type == ScalarType::Float64;
    if (op == Ops::IDIV) return std::string(dbl ? "trunc(" : "truncf(") + a[0] + "/" + a[1] + ")";
    if (auto f = math_function(op, dt)) {
      std::string call = *f + "(" + a[0];
      if (a.size() > 1) call += ", " + a[1];
      return call + ")";
    }
  }
  return CStyleRenderer::code_for_op(ctx, op, dt, a);
}

} // namespace tg::cuda
