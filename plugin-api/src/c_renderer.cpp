// The C dialect: what the CPU's clang-compiled kernels differ in from the C-style base.
#include "tg/plugin/c_renderer.hpp"

#include "tg/knobs.hpp"

namespace tg {
namespace {

// bfloat16 lives as its upper 16 bits of a float32; conversions round to nearest even and
// keep NaNs quiet, as core/ir/float_formats.cpp does.
const char* kBf16Helpers =
    "static inline float tg_bf16_to_f32(unsigned short x) {\n"
    "  return ((union { unsigned int u; float f; }){.u = (unsigned int)x << 16}).f;\n"
    "}\n"
    "static inline unsigned short tg_f32_to_bf16(float f) {\n"
    "  unsigned int u = ((union { float f; unsigned int u; }){.f = f}).u;\n"
    "  if (f != f) return (unsigned short)((u >> 16) | 0x40);\n"
    "  return (unsigned short)((u + 0x7fff + ((u >> 16) & 1)) >> 16);\n"
    "}\n"
    "static inline float tg_f64_to_f32_odd(double d) {\n"
    "  float f = (float)d;\n"
    "  unsigned int u = ((union { float f; unsigned int u; }){.f = f}).u;\n"
    "  if (__builtin_fabs((double)f) > __builtin_fabs(d)) u -= 1;\n"
    "  if ((double)f != d) u |= 1;\n"
    "  return ((union { unsigned int u; float f; }){.u = u}).f;\n"
    "}";

// Integer POW by squaring, with exec_alu's meaning for negative signed exponents.
const char* kIpowHelpers =
    "static inline long long tg_ipow_s(long long a, long long b) {\n"
    "  if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
    "  unsigned long long r = 1, x = (unsigned long long)a;\n"
    "  for (unsigned long long e = (unsigned long long)b; e; e >>= 1, x *= x) if (e & 1) r *= x;\n"
    "  return (long long)r;\n"
    "}\n"
    "static inline unsigned long long tg_ipow_u(unsigned long long a, unsigned long long b) {\n"
    "  unsigned long long r = 1;\n"
    "  for (; b; b >>= 1, a *= a) if (b & 1) r *= a;\n"
    "  return r;\n"
    "}";

// libm's name for a float op, or nullptr.
const char* libm_name(Ops op) {
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

} // namespace

CRenderer::CRenderer(int64_t vector_lanes) {
  caps_.vector_lanes = vector_lanes;
  caps_.has_local = false;
  caps_.has_shared = false;
  caps_.supports_float4 = true;
  caps_.supports_half = true;
  caps_.global_max = {0x7fffffff, 0x7fffffff, 0x7fffffff};
}

std::string CRenderer::type_name(DType dt) const {
  if (!dt.is_ptr && dt.count == 1) {
    switch (dt.scalar_type) {
    case ScalarType::Bool:
      return "_Bool";
    case ScalarType::Float16:
      return "_Float16";
    case ScalarType::BFloat16:
      return "unsigned short";
    default:
      break;
    }
  }
  return CStyleRenderer::type_name(dt);
}

std::string CRenderer::render_kernel(const std::string& name, const CStyleContext& ctx) const {
  // Every op is its own statement, so fusing a multiply into the add that uses it needs
  // contraction across statements (clang's -ffp-contract=off is the default otherwise). Not in
  // a kernel with float16 arithmetic (see rounds_to_half).
  bool half = false;
  for (const auto& [u, expr] : ctx.names) half |= rounds_to_half(*u);
  std::string out = knobs::FP_CONTRACT && !half ? "#pragma clang fp contract(fast)\n" : "";
  for (DType v : ctx.vector_types) {
    // aligned(element): vector loads and stores may sit at any element offset.
    const DType s = v.scalar();
    if (s.scalar_type == ScalarType::BFloat16)
      throw Error("C renderer: bfloat16 vectors are not supported; devectorize them first");
    // bool vectors hold 0/1 bytes, as bool does in memory (clang has no _Bool vectors in C).
    const std::string elem = s.scalar_type == ScalarType::Bool ? "unsigned char" : type_name(s);
    out += "typedef " + elem + " " + type_name(v) + " __attribute__((ext_vector_type(" +
           std::to_string(v.count) + "), aligned(" + std::to_string(s.itemsize()) + ")));\n";
  }
  for (const auto& h : ctx.preamble) out += h + "\n";
  // Casts are rendered without the context, so their helpers are added by use.
  for (const auto& l : ctx.lines)
    if (l.find("bf16") != std::string::npos) {
      out += std::string(kBf16Helpers) + "\n";
      break;
    }
  out += "void " + name +
         "(void** restrict bufs, const long long* restrict vars, long long gidx0_begin, "
         "long long gidx0_end) {\n";
  out += "  (void)bufs; (void)vars; (void)gidx0_begin; (void)gidx0_end;\n";
  for (size_t slot = 0; slot < ctx.buffers.size(); ++slot) {
    if (ctx.buffers[slot] == nullptr)
      throw Error("C renderer: kernel " + name + " has no PARAM for slot " + std::to_string(slot) +
                  "; buffer slots must be 0..n-1");
    const std::string t = type_name(ctx.buffers[slot]->dtype.base());
    out += "  " + t + "* restrict data" + std::to_string(slot) + " = (" + t + "*)bufs[" +
           std::to_string(slot) + "];\n";
  }
  for (size_t i = 0; i < ctx.vars.size(); ++i) {
    const std::string t = type_name(ctx.vars[i]->dtype);
    out += "  const " + t + " " + std::get<VarArg>(ctx.vars[i]->arg).name + " = (" + t + ")vars[" +
           std::to_string(i) + "];\n";
  }
  for (const auto& l : ctx.lines) out += l + "\n";
  for (int i = ctx.open_blocks; i > 0; --i) out += std::string(2 * i, ' ') + "}\n";
  return out + "}\n";
}

// On the CPU a work-item index is a loop: the runtime hands each call a range of gidx0, and
// gidx1/gidx2 run whole inside the call. The loops close at the end of the kernel.
std::string CRenderer::render_special(CStyleContext& ctx, const UOp& special) const {
  const std::string name = std::get<std::string>(special.arg);
  const std::string t = type_name(special.dtype);
  if (name == "gidx0")
    ctx.emit("for (" + t + " gidx0 = gidx0_begin; gidx0 < gidx0_end; gidx0++) {");
  else if (name == "gidx1" || name == "gidx2")
    ctx.emit("for (" + t + " " + name + " = 0; " + name + " < " + ctx[special.src[0]] + "; " +
             name + "++) {");
  else
    unsupported(special, "the CPU has global indices gidx0..gidx2 only (no local work groups)");
  ctx.depth++;
  ctx.open_blocks++;
  return name;
}

std::string CRenderer::render_cast(DType to, DType from, const std::string& x) const {
  const bool to_bf = to.scalar_type == ScalarType::BFloat16;
  const bool from_bf = from.scalar_type == ScalarType::BFloat16;
  if ((to_bf || from_bf) && (to.count > 1 || from.count > 1))
    throw Error("C renderer: casts of bfloat16 vectors are not supported; devectorize them first");
  if (to_bf && from_bf) return x;
  // Wider sources go through float64 and a round-to-odd float32, so that rounding twice gives
  // the once-rounded bfloat16.
  if (to_bf && (from == dtypes::float32 || from == dtypes::float16))
    return "tg_f32_to_bf16((float)(" + x + "))";
  if (to_bf) return "tg_f32_to_bf16(tg_f64_to_f32_odd((double)(" + x + ")))";
  if (from_bf) return "((" + type_name(to) + ")tg_bf16_to_f32(" + x + "))";
  if (to.count > 1) {
    // A C cast between vector types reinterprets bits; convert lane values instead. To bool,
    // lane != 0 (conversion would truncate 0.5 to 0).
    if (to.scalar_type != ScalarType::Bool)
      return "__builtin_convertvector(" + x + ", " + type_name(to) + ")";
    std::vector<std::string> lanes;
    for (int i = 0; i < to.count; ++i) lanes.push_back("(" + x + "[" + std::to_string(i) + "]!=0)");
    return vector_ctor(to, lanes);
  }
  return CStyleRenderer::render_cast(to, from, x);
}

std::string CRenderer::render_bitcast(DType to, DType from, const std::string& x) const {
  // A union compound literal: C has no bit_cast, and memcpy would need an lvalue.
  return "((union { " + type_name(from) + " f; " + type_name(to) + " t; }){.f = " + x + "}).t";
}

namespace {
// Vector ops clang's ext_vector_type spells as on scalars; the rest (comparisons and WHERE,
// which would need int masks, MAX, libm calls, bool vectors) are rendered lane by lane.
bool vector_native(Ops op, DType dt) {
  if (dt.is_bool() || dt.scalar_type == ScalarType::BFloat16) return false;
  switch (op) {
  case Ops::ADD:
  case Ops::SUB:
  case Ops::MUL:
  case Ops::MULACC:
  case Ops::NEG:
    return true;
  case Ops::FDIV:
    return dt.is_float();
  case Ops::IDIV:
  case Ops::MOD:
  case Ops::SHL:
  case Ops::SHR:
  case Ops::AND:
  case Ops::OR:
  case Ops::XOR:
    return dt.is_int();
  default:
    return false;
  }
}
} // namespace

std::optional<std::string> CRenderer::code_for_op(CStyleContext& ctx, Ops op, DType dt,
                                                  const std::vector<std::string>& a) const {
  if (dt.count > 1 && !vector_native(op, dt)) {
    std::vector<std::string> lanes;
    for (int i = 0; i < dt.count; ++i) {
      std::vector<std::string> la;
      for (const auto& x : a) la.push_back(x + "[" + std::to_string(i) + "]");
      auto lane = code_for_op(ctx, op, dt.scalar(), la);
      if (!lane) return std::nullopt;
      lanes.push_back(*lane);
    }
    const DType out = GroupOp::Comparison.contains(op) ? dtypes::bool_.vec(dt.count) : dt;
    return vector_ctor(out, lanes);
  }
  if (dt.scalar_type == ScalarType::BFloat16 && op != Ops::WHERE) return std::nullopt;
  if (op == Ops::POW && dt.is_int() && dt.count == 1) {
    ctx.need(kIpowHelpers);
    if (dt.is_unsigned()) return "tg_ipow_u(" + a[0] + ", " + a[1] + ")";
    return "tg_ipow_s(" + a[0] + ", " + a[1] + ")";
  }
  if (dt.is_float() && (libm_name(op) != nullptr || op == Ops::IDIV)) {
    const bool dbl = dt.scalar_type == ScalarType::Float64;
    const std::string sfx = dbl ? "" : "f";
    auto arg = [&](size_t i) { return dbl ? a[i] : "(float)" + a[i]; };
    std::string call;
    if (op == Ops::IDIV)
      call = "__builtin_trunc" + sfx + "(" + arg(0) + "/" + arg(1) + ")";
    else {
      call = std::string("__builtin_") + libm_name(op) + sfx + "(" + arg(0);
      if (a.size() > 1) call += ", " + arg(1);
      call += ")";
    }
    if (dt.scalar_type == ScalarType::Float16) return "((_Float16)" + call + ")";
    return call;
  }
  return CStyleRenderer::code_for_op(ctx, op, dt, a);
}

} // namespace tg
