// The OpenCL C dialect: what OpenCL spells differently from the C-style base.
#include "opencl_renderer.hpp"

#include "tg/ir/pattern_matcher.hpp"
#include "tg/plugin/split_vectors.hpp"

namespace tg::cl {

namespace {

// bfloat16 lives as the upper 16 bits of a float32; conversions round to nearest even and keep
// NaNs quiet, as core/ir/float_formats.cpp does.
const char* kBf16Helpers = "float tg_bf16_to_f32(ushort x) { return as_float((uint)x << 16); }\n"
                           "ushort tg_f32_to_bf16(float f) {\n"
                           "  uint u = as_uint(f);\n"
                           "  if (f != f) return (ushort)((u >> 16) | 0x40);\n"
                           "  return (ushort)((u + 0x7fff + ((u >> 16) & 1)) >> 16);\n"
                           "}";

// Without cl_khr_fp16 a float16 value is held as the float it rounds to: vstore_half rounds to
// nearest even, vload_half reads it back exactly.
const char* kHalfHelpers =
    "float tg_half_round(float x) {\n"
    "  ushort h; vstore_half(x, 0, (__private half*)&h);\n"
    "  return vload_half(0, (__private half*)&h);\n"
    "}\n"
    "ushort tg_half_bits(float x) {\n"
    "  ushort h; vstore_half(x, 0, (__private half*)&h); return h;\n"
    "}\n"
    "float tg_half_from_bits(ushort h) { return vload_half(0, (__private half*)&h); }";
// Rounding a double to float32 toward odd: a second rounding (to bfloat16) then gives what one
// rounding would.
const char* kOddHelper = "float tg_f64_to_f32_odd(double d) {\n"
                         "  float f = (float)d;\n"
                         "  uint u = as_uint(f);\n"
                         "  if (fabs((double)f) > fabs(d)) u -= 1;\n"
                         "  if ((double)f != d) u |= 1;\n"
                         "  return as_float(u);\n"
                         "}";
const char* kHalfDoubleHelper = "float tg_half_round_d(double x) {\n"
                                "  ushort h; vstore_half(x, 0, (__private half*)&h);\n"
                                "  return vload_half(0, (__private half*)&h);\n"
                                "}";

// Integer POW by squaring, with exec_alu's meaning for negative signed exponents.
const char* kIpowHelpers = "long tg_ipow_s(long a, long b) {\n"
                           "  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
                           "  ulong r = 1, x = (ulong)a;\n"
                           "  for (ulong e = (ulong)b; e; e >>= 1, x *= x) if (e & 1) r *= x;\n"
                           "  return (long)r;\n"
                           "}\n"
                           "ulong tg_ipow_u(ulong a, ulong b) {\n"
                           "  ulong r = 1;\n"
                           "  for (; b; b >>= 1, a *= a) if (b & 1) r *= a;\n"
                           "  return r;\n"
                           "}";

const char* builtin_name(Ops op) {
  switch (op) {
  case Ops::EXP2:
    return "exp2";
  case Ops::LOG2:
    return "log2";
  case Ops::SIN:
    return "sin";
  case Ops::SQRT:
    return "sqrt";
  case Ops::TRUNC:
    return "trunc";
  case Ops::POW:
    return "pow";
  case Ops::MOD:
    return "fmod";
  default:
    return nullptr;
  }
}

bool opencl_width(int w) { return w == 2 || w == 3 || w == 4 || w == 8 || w == 16; }

std::string scalar_name(ScalarType s) {
  switch (s) {
  case ScalarType::Bool:
    return "bool";
  case ScalarType::Int8:
    return "char";
  case ScalarType::UInt8:
    return "uchar";
  case ScalarType::Int16:
    return "short";
  case ScalarType::UInt16:
  case ScalarType::BFloat16:
    return "ushort";
  case ScalarType::Int32:
    return "int";
  case ScalarType::UInt32:
    return "uint";
  case ScalarType::Index:
  case ScalarType::Int64:
    return "long";
  case ScalarType::UInt64:
    return "ulong";
  case ScalarType::Float16:
    return "half";
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

} // namespace

OpenCLRenderer::OpenCLRenderer(std::string name, RendererCaps caps, OpenCLFeatures features)
    : name_(std::move(name)), caps_(std::move(caps)), features_(features) {
  caps_.supports_half = features_.fp16;
  caps_.extra_matcher = &split_vector_alu();
}

std::string OpenCLRenderer::render(const std::string& kernel_name, std::span<const UOpPtr> uops) {
  std::lock_guard lock(render_mu_);
  uses_local_ids_ = uses_half_ = uses_double_ = false;
  for (const UOpPtr& u : uops) {
    if (u->op == Ops::SPECIAL && std::get<std::string>(u->arg).rfind("lidx", 0) == 0)
      uses_local_ids_ = true;
    const DType d = u->dtype.is_ptr ? u->dtype.base() : u->dtype;
    uses_half_ |= d.scalar_type == ScalarType::Float16;
    uses_double_ |= d.scalar_type == ScalarType::Float64;
  }
  if (uses_double_ && !features_.fp64)
    throw Error(name_ + " renderer: kernel " + kernel_name +
                " uses float64, which this OpenCL device lacks (no cl_khr_fp64)");
  return CStyleRenderer::render(kernel_name, uops);
}

std::string OpenCLRenderer::type_name(DType dt) const {
  if (dt.is_ptr) return type_name(dt.base()) + "*";
  DType s = dt.scalar();
  std::string name = scalar_name(s.scalar_type);
  if (emulated_half(s)) name = "float";
  if (name.empty())
    throw Error(name_ + " renderer: no OpenCL type for " + dt.name() +
                "; codegen must emulate it before rendering");
  if (dt.count == 1) return name;
  if (!opencl_width(dt.count))
    throw Error(name_ + " renderer: OpenCL has no " + std::to_string(dt.count) + "-lane vectors (" +
                dt.name() + "); only 2, 3, 4, 8 and 16");
  // bool vectors hold 0/1 bytes, as bool does in memory (OpenCL has no bool vectors).
  if (s.scalar_type == ScalarType::Bool) name = "uchar";
  return name + std::to_string(dt.count);
}

std::string OpenCLRenderer::buffer_param(const UOp& param, const std::string& name) const {
  const DType elem = param.dtype.base();
  std::string t = scalar_name(elem.scalar_type);
  if (elem.scalar_type == ScalarType::Bool) t = "uchar"; // bool's size is not fixed in OpenCL
  if (t.empty()) t = type_name(elem);                    // raises for types OpenCL lacks
  return "__global " + t + "* " + name;
}

std::string OpenCLRenderer::var_param(const UOp& var) const {
  return "const long " + std::get<VarArg>(var.arg).name + "_arg";
}

std::string OpenCLRenderer::special_index(const UOp& special) const {
  const std::string& n = std::get<std::string>(special.arg);
  const std::string dim(1, n.back());
  if (n.rfind("lidx", 0) == 0) return "get_local_id(" + dim + ")";
  return (uses_local_ids_ ? "get_group_id(" : "get_global_id(") + dim + ")";
}

std::string OpenCLRenderer::local_decl(DType elem, const std::string& name, int64_t size) const {
  return "__local " + type_name(elem) + " " + name + "[" + std::to_string(size) + "];";
}

std::string OpenCLRenderer::gep(const std::string& vec, int64_t lane) const {
  static const char* digits = "0123456789abcdef";
  return vec + ".s" + digits[lane & 15];
}

std::string OpenCLRenderer::vector_ctor(DType dt, const std::vector<std::string>& lanes) const {
  std::string r = "((" + type_name(dt) + ")(";
  for (size_t i = 0; i < lanes.size(); ++i) r += (i ? "," : "") + lanes[i];
  return r + "))";
}

std::string OpenCLRenderer::render_kernel(const std::string& name, const CStyleContext& ctx) const {
  // Casts are rendered without the context, so their helpers are added by use.
  bool bf16 = false, half = false, half_d = false, odd = false;
  for (const auto& l : ctx.lines) {
    bf16 |= l.find("tg_bf16") != std::string::npos || l.find("tg_f32_to_bf16") != std::string::npos;
    half |= l.find("tg_half") != std::string::npos;
    half_d |= l.find("tg_half_round_d") != std::string::npos;
    odd |= l.find("tg_f64_to_f32_odd") != std::string::npos;
  }
  // Exact IEEE results, as on the CPU: no contraction of a*b+c into a fused multiply-add.
  std::string out = "#pragma OPENCL FP_CONTRACT OFF\n";
  if (uses_half_ && features_.fp16) out += "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n";
  if (uses_double_ || half_d || odd) out += "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n";
  for (const auto& h : ctx.preamble) out += h + "\n";
  if (odd) out += std::string(kOddHelper) + "\n";
  if (bf16) out += std::string(kBf16Helpers) + "\n";
  if (half) out += std::string(kHalfHelpers) + "\n";
  if (half_d) out += std::string(kHalfDoubleHelper) + "\n";
  std::string params;
  for (size_t slot = 0; slot < ctx.buffers.size(); ++slot) {
    if (ctx.buffers[slot] == nullptr)
      throw Error(name_ + " renderer: kernel " + name + " has no PARAM for slot " +
                  std::to_string(slot) + "; buffer slots must be 0..n-1");
    params += (params.empty() ? "" : ", ") +
              buffer_param(*ctx.buffers[slot], "data" + std::to_string(slot));
  }
  for (const UOp* v : ctx.vars) params += (params.empty() ? "" : ", ") + var_param(*v);
  out += "__kernel void " + name + "(" + params + ") {\n";
  for (const UOp* v : ctx.vars) {
    const std::string& n = std::get<VarArg>(v->arg).name;
    out += "  const " + type_name(v->dtype) + " " + n + " = (" + type_name(v->dtype) + ")" + n +
           "_arg;\n";
  }
  for (const auto& l : ctx.lines) out += l + "\n";
  return out + "}\n";
}

std::string OpenCLRenderer::render_cast(DType to, DType from, const std::string& x) const {
  if (to.count > 1 || from.count > 1) {
    // Vector casts are split into lanes before rendering; a whole-vector convert remains
    // correct for the widths OpenCL has.
    if (to.scalar_type == ScalarType::Bool || emulated_half(to) ||
        to.scalar_type == ScalarType::BFloat16 || from.scalar_type == ScalarType::BFloat16)
      throw Error(name_ + " renderer: vector cast to " + to.name() + " must be split into lanes");
    return "convert_" + type_name(to) + "(" + x + ")";
  }
  const bool to_bf = to.scalar_type == ScalarType::BFloat16;
  const bool from_bf = from.scalar_type == ScalarType::BFloat16;
  if (to_bf && from_bf) return x;
  // Wider sources (double, and integers that float32 would round) round once through
  // float64 and a round-to-odd float32 where the device has doubles.
  const bool exact_in_float = from == dtypes::float32 || from.scalar_type == ScalarType::Float16 ||
                              from.itemsize() <= 2 || from.is_bool();
  if (to_bf && (exact_in_float || !features_.fp64)) return "tg_f32_to_bf16((float)(" + x + "))";
  if (to_bf) return "tg_f32_to_bf16(tg_f64_to_f32_odd((double)(" + x + ")))";
  if (from_bf) return "((" + type_name(to) + ")tg_bf16_to_f32(" + x + "))";
  if (emulated_half(to) && emulated_half(from)) return x;
  if (emulated_half(to)) {
    if (exact_in_float || !features_.fp64) return "tg_half_round((float)(" + x + "))";
    return "tg_half_round_d((double)(" + x + "))";
  }
  if (emulated_half(from)) return "((" + type_name(to) + ")(" + x + "))";
  return "((" + type_name(to) + ")(" + x + "))";
}

std::string OpenCLRenderer::render_bitcast(DType to, DType from, const std::string& x) const {
  if (emulated_half(from)) return "as_" + type_name(to) + "(tg_half_bits(" + x + "))";
  if (emulated_half(to)) return "tg_half_from_bits(as_ushort(" + x + "))";
  if (to.scalar_type == ScalarType::Bool || from.scalar_type == ScalarType::Bool)
    return "((" + type_name(to) + ")(" + x + "))";
  return "as_" + type_name(to) + "(" + x + ")";
}

std::string OpenCLRenderer::render_const(const ConstValue& v, DType dt) const {
  if (dt.count > 1) return CStyleRenderer::render_const(v, dt);
  if (emulated_half(dt)) return CStyleRenderer::render_const(v, dtypes::float32);
  const int64_t i = dt.is_float() || dt.is_bool() ? 0 : as_int(v);
  switch (dt.scalar_type) {
  case ScalarType::Int64:
  case ScalarType::Index:
    if (i == INT64_MIN) return "(-9223372036854775807L-1)";
    return std::to_string(i) + "L";
  case ScalarType::UInt64:
    return std::to_string(static_cast<uint64_t>(i)) + "UL";
  default:
    return CStyleRenderer::render_const(v, dt);
  }
}

std::optional<std::string> OpenCLRenderer::code_for_op(CStyleContext& ctx, Ops op, DType dt,
                                                       const std::vector<std::string>& a) const {
  if (dt.count > 1) {
    std::vector<std::string> lanes;
    for (int i = 0; i < dt.count; ++i) {
      std::vector<std::string> la;
      for (const auto& x : a) la.push_back(gep(x, i));
      auto l = code_for_op(ctx, op, dt.scalar(), la);
      if (!l) return std::nullopt;
      lanes.push_back(*l);
    }
    const DType out = GroupOp::Comparison.contains(op) ? dtypes::bool_.vec(dt.count) : dt;
    return vector_ctor(out, lanes);
  }
  if (dt.scalar_type == ScalarType::BFloat16 && op != Ops::WHERE) return std::nullopt;
  // A float16 held as float would compute without rounding to float16: codegen promotes it
  // (RendererCaps::supports_half is false); selecting and comparing are exact.
  if (emulated_half(dt) && op != Ops::WHERE && !GroupOp::Comparison.contains(op))
    return std::nullopt;
  if (op == Ops::POW && dt.is_int()) {
    ctx.need(kIpowHelpers);
    if (dt.is_unsigned()) return "((" + type_name(dt) + ")tg_ipow_u(" + a[0] + ", " + a[1] + "))";
    return "((" + type_name(dt) + ")tg_ipow_s(" + a[0] + ", " + a[1] + "))";
  }
  if (dt.is_float() && op == Ops::IDIV) return "trunc(" + a[0] + "/" + a[1] + ")";
  if (dt.is_float() && builtin_name(op) != nullptr) {
    std::string call = std::string(builtin_name(op)) + "(" + a[0];
    if (a.size() > 1) call += ", " + a[1];
    return call + ")";
  }
  return CStyleRenderer::code_for_op(ctx, op, dt, a);
}

std::string OpenCLRenderer::render_load(DType dt, const std::string& ptr) const {
  if (emulated_half(dt))
    return dt.count > 1 ? "vload_half" + std::to_string(dt.count) + "(0, " + ptr + ")"
                        : "vload_half(0, " + ptr + ")";
  if (dt.count > 1) return "vload" + std::to_string(dt.count) + "(0, " + ptr + ")";
  if (dt.scalar_type == ScalarType::Bool) return "((bool)(*" + ptr + "))";
  return "(*" + ptr + ")";
}

std::string OpenCLRenderer::render_store(DType dt, const std::string& ptr,
                                         const std::string& v) const {
  if (emulated_half(dt))
    return dt.count > 1 ? "vstore_half" + std::to_string(dt.count) + "(" + v + ", 0, " + ptr + ");"
                        : "vstore_half(" + v + ", 0, " + ptr + ");";
  if (dt.count > 1) return "vstore" + std::to_string(dt.count) + "(" + v + ", 0, " + ptr + ");";
  return "*" + ptr + " = " + v + ";";
}

} // namespace tg::cl
