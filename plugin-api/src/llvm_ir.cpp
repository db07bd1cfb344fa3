// Linearized UOps -> LLVM IR text, the target-independent part (tg/plugin/llvm_ir.hpp). One
// pass in program order; each op has one rendering function, picked from a table, and ALU ops
// read their instruction from a spelling table.
#include "tg/plugin/llvm_ir.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <functional>

#include "tg/ir/float_formats.hpp"
#include "tg/knobs.hpp"

namespace tg {
namespace {

enum class Kind { Bool, SInt, UInt, Float, BF16, Other };

Kind kind(DType d) {
  switch (d.scalar_type) {
  case ScalarType::Bool:
    return Kind::Bool;
  case ScalarType::Int8:
  case ScalarType::Int16:
  case ScalarType::Int32:
  case ScalarType::Int64:
  case ScalarType::Index:
    return Kind::SInt;
  case ScalarType::UInt8:
  case ScalarType::UInt16:
  case ScalarType::UInt32:
  case ScalarType::UInt64:
    return Kind::UInt;
  case ScalarType::Float16:
  case ScalarType::Float32:
  case ScalarType::Float64:
    return Kind::Float;
  case ScalarType::BFloat16:
    return Kind::BF16;
  default:
    return Kind::Other;
  }
}

// The LLVM type of one element; bool is i1 in registers and i8 in memory.
std::string elem_ty(ScalarType s, bool in_memory) {
  switch (s) {
  case ScalarType::Bool:
    return in_memory ? "i8" : "i1";
  case ScalarType::Int8:
  case ScalarType::UInt8:
    return "i8";
  case ScalarType::Int16:
  case ScalarType::UInt16:
  case ScalarType::BFloat16:
    return "i16";
  case ScalarType::Int32:
  case ScalarType::UInt32:
    return "i32";
  case ScalarType::Int64:
  case ScalarType::UInt64:
  case ScalarType::Index:
    return "i64";
  case ScalarType::Float16:
    return "half";
  case ScalarType::Float32:
    return "float";
  case ScalarType::Float64:
    return "double";
  default:
    throw Error("LLVM IR renderer: no LLVM type for " + DType(s).name());
  }
}

std::string ty(DType d, bool in_memory = false) { return LLVMIRRenderer::type(d, in_memory); }

// Intrinsic suffix: f32, v4f32.
std::string suffix(DType d) {
  const std::string e = d.scalar_type == ScalarType::Float16   ? "f16"
                        : d.scalar_type == ScalarType::Float32 ? "f32"
                                                               : "f64";
  return d.count > 1 ? "v" + std::to_string(d.count) + e : e;
}

int bits(DType d) { return LLVMIRRenderer::bits(d); }

std::string scalar_literal(const ConstValue& v, DType d) {
  char buf[64];
  switch (kind(d)) {
  case Kind::Bool:
    return as_bool(v) ? "true" : "false";
  case Kind::BF16:
    return std::to_string(static_cast<int16_t>(float_to_bf16(as_double(v))));
  case Kind::Float: {
    const double x = as_double(v);
    if (d.scalar_type == ScalarType::Float16) {
      std::snprintf(buf, sizeof buf, "0xH%04X", static_cast<unsigned>(float_to_half(x)));
      return buf;
    }
    // LLVM writes float and double constants as the double's bits (exact for floats, since
    // cast_const already rounded the value to the dtype).
    uint64_t b;
    std::memcpy(&b, &x, sizeof b);
    std::snprintf(buf, sizeof buf, "0x%016" PRIX64, b);
    return buf;
  }
  default: {
    // The value as a signed integer of the type's width.
    const int w = bits(d);
    uint64_t u = static_cast<uint64_t>(as_int(v));
    if (w < 64) {
      const uint64_t mask = (uint64_t{1} << w) - 1;
      u &= mask;
      if ((u >> (w - 1)) & 1) u |= ~mask;
    }
    return std::to_string(static_cast<int64_t>(u));
  }
  }
}

std::string literal(const ConstValue& v, DType d) {
  if (d.count == 1) return scalar_literal(v, d);
  const std::string e = elem_ty(d.scalar_type, false) + " " + scalar_literal(v, d.scalar());
  std::string r = "<";
  for (int i = 0; i < d.count; ++i) r += (i ? ", " : "") + e;
  return r + ">";
}

// bfloat16 bits <-> float32, round to nearest even with quiet NaNs (as float_formats.cpp).
std::string bf16_to_f32(LLVMIRContext& c, const std::string& x) {
  const std::string w = c.op("zext i16 " + x + " to i32");
  const std::string s = c.op("shl i32 " + w + ", 16");
  return c.op("bitcast i32 " + s + " to float");
}

std::string f32_to_bf16(LLVMIRContext& c, const std::string& f) {
  const std::string u = c.op("bitcast float " + f + " to i32");
  const std::string hi = c.op("lshr i32 " + u + ", 16");
  const std::string lsb = c.op("and i32 " + hi + ", 1");
  const std::string bias = c.op("add i32 " + lsb + ", 32767");
  const std::string r = c.op("add i32 " + u + ", " + bias);
  const std::string rh = c.op("lshr i32 " + r + ", 16");
  const std::string qnan = c.op("or i32 " + hi + ", 64");
  const std::string isnan = c.op("fcmp uno float " + f + ", " + f);
  const std::string sel = c.op("select i1 " + isnan + ", i32 " + qnan + ", i32 " + rh);
  return c.op("trunc i32 " + sel + " to i16");
}

// float64 -> float32 rounded to odd: truncate toward zero, then set the last bit if inexact.
std::string f64_to_f32_odd(LLVMIRContext& c, const std::string& d) {
  c.declares.insert("declare double @llvm.fabs.f64(double)");
  const std::string f = c.op("fptrunc double " + d + " to float");
  const std::string u = c.op("bitcast float " + f + " to i32");
  const std::string back = c.op("fpext float " + f + " to double");
  const std::string ab = c.op("call double @llvm.fabs.f64(double " + back + ")");
  const std::string ad = c.op("call double @llvm.fabs.f64(double " + d + ")");
  const std::string away = c.op("fcmp ogt double " + ab + ", " + ad);
  const std::string step = c.op("zext i1 " + away + " to i32");
  const std::string t = c.op("sub i32 " + u + ", " + step);
  const std::string inexact = c.op("fcmp une double " + back + ", " + d);
  const std::string sticky = c.op("zext i1 " + inexact + " to i32");
  const std::string odd = c.op("or i32 " + t + ", " + sticky);
  return c.op("bitcast i32 " + odd + " to float");
}

std::string zero(DType d) {
  if (d.count > 1) return "zeroinitializer";
  return kind(d) == Kind::Float ? "0.0" : "0";
}

std::string cast_value(const LLVMIRRenderer& r, LLVMIRContext& c, const UOp& u, DType from,
                       DType to, const std::string& x) {
  const Kind kf = kind(from), kt = kind(to);
  if (kf == Kind::Other || kt == Kind::Other) r.unsupported(u, "no LLVM form for this dtype");
  if (from == to) return x;
  if (kf == Kind::BF16 || kt == Kind::BF16) {
    if (from.count > 1 || to.count > 1) r.unsupported(u, "bfloat16 vector casts");
    if (kf == kt) return x;
    if (kf == Kind::BF16) return cast_value(r, c, u, dtypes::float32, to, bf16_to_f32(c, x));
    if (from == dtypes::float32 || from == dtypes::float16)
      return f32_to_bf16(c, cast_value(r, c, u, from, dtypes::float32, x));
    // Wider sources go through float64 and a round-to-odd float32, so that rounding twice
    // gives the once-rounded bfloat16.
    return f32_to_bf16(c, f64_to_f32_odd(c, cast_value(r, c, u, from, dtypes::float64, x)));
  }
  const std::string tf = ty(from), tt = ty(to);
  auto conv = [&](const char* instr) {
    return c.op(std::string(instr) + " " + tf + " " + x + " to " + tt);
  };
  if (kt == Kind::Bool)
    return c.op((kf == Kind::Float ? "fcmp une " : "icmp ne ") + tf + " " + x + ", " + zero(from));
  if (kf == Kind::Bool) return conv(kt == Kind::Float ? "uitofp" : "zext");
  if (kf == Kind::Float && kt == Kind::Float)
    return conv(from.scalar_itemsize() < to.scalar_itemsize() ? "fpext" : "fptrunc");
  if (kf == Kind::Float) return conv(kt == Kind::SInt ? "fptosi" : "fptoui");
  if (kt == Kind::Float) return conv(kf == Kind::SInt ? "sitofp" : "uitofp");
  if (bits(from) == bits(to)) return x;
  if (bits(from) > bits(to)) return conv("trunc");
  return conv(kf == Kind::SInt ? "sext" : "zext");
}

// Instruction per kind of operand: signed, unsigned, float, bool; nullptr: no such op.
struct Spelling {
  Ops op;
  const char *sint, *uint, *flt, *boolean;
};
constexpr Spelling kBinary[] = {
    {Ops::ADD, "add", "add", "fadd", "or"},
    {Ops::SUB, "sub", "sub", "fsub", "xor"},
    {Ops::MUL, "mul", "mul", "fmul", "and"},
    {Ops::IDIV, "sdiv", "udiv", nullptr, nullptr},
    {Ops::MOD, "srem", "urem", "frem", nullptr},
    {Ops::FDIV, nullptr, nullptr, "fdiv", nullptr},
    {Ops::AND, "and", "and", nullptr, "and"},
    {Ops::OR, "or", "or", nullptr, "or"},
    {Ops::XOR, "xor", "xor", nullptr, "xor"},
    {Ops::SHL, "shl", "shl", nullptr, nullptr},
    {Ops::SHR, "ashr", "lshr", nullptr, nullptr},
    {Ops::MAX, nullptr, nullptr, nullptr, "or"},
    {Ops::CMPLT, "icmp slt", "icmp ult", "fcmp olt", "icmp ult"},
    {Ops::CMPNE, "icmp ne", "icmp ne", "fcmp une", "icmp ne"},
    {Ops::CMPEQ, "icmp eq", "icmp eq", "fcmp oeq", "icmp eq"},
};
// Float ops that are LLVM intrinsics (libm underneath where the CPU has no instruction).
constexpr std::pair<Ops, const char*> kIntrinsics[] = {
    {Ops::EXP2, "exp2"},   {Ops::LOG2, "log2"}, {Ops::SIN, "sin"},    {Ops::SQRT, "sqrt"},
    {Ops::TRUNC, "trunc"}, {Ops::POW, "pow"},   {Ops::MAX, "maximum"}};

const char* ipow_helpers =
    R"(define internal i64 @tg_ipow_u(i64 %a, i64 %b) {
entry:
  br label %head
head:
  %r = phi i64 [1, %entry], [%r2, %body]
  %x = phi i64 [%a, %entry], [%x2, %body]
  %e = phi i64 [%b, %entry], [%e2, %body]
  %done = icmp eq i64 %e, 0
  br i1 %done, label %exit, label %body
body:
  %bit = and i64 %e, 1
  %odd = icmp ne i64 %bit, 0
  %rm = mul i64 %r, %x
  %r2 = select i1 %odd, i64 %rm, i64 %r
  %x2 = mul i64 %x, %x
  %e2 = lshr i64 %e, 1
  br label %head
exit:
  ret i64 %r
}
define internal i64 @tg_ipow_s(i64 %a, i64 %b) {
entry:
  %neg = icmp slt i64 %b, 0
  br i1 %neg, label %negexp, label %pos
pos:
  %p = call i64 @tg_ipow_u(i64 %a, i64 %b)
  ret i64 %p
negexp:
  %is1 = icmp eq i64 %a, 1
  %ism1 = icmp eq i64 %a, -1
  %odd = and i64 %b, 1
  %oddb = icmp ne i64 %odd, 0
  %m1 = select i1 %oddb, i64 -1, i64 1
  %t = select i1 %ism1, i64 %m1, i64 0
  %r = select i1 %is1, i64 1, i64 %t
  ret i64 %r
})";

std::string call_intrinsic(LLVMIRContext& c, const char* name, DType dt,
                           const std::vector<std::string>& a) {
  const std::string t = ty(dt), fn = std::string("@llvm.") + name + "." + suffix(dt);
  std::string params, args;
  for (size_t i = 0; i < a.size(); ++i) {
    params += (i ? ", " : "") + t;
    args += (i ? ", " : "") + t + " " + a[i];
  }
  c.declares.insert("declare " + t + " " + fn + "(" + params + ")");
  return c.op("call " + t + " " + fn + "(" + args + ")");
}

std::string render_alu(const LLVMIRRenderer& r, LLVMIRContext& c, const UOp& u) {
  std::vector<std::string> a;
  for (const auto& s : u.src) a.push_back(c[s]);
  // Operands' dtype: comparisons by their operands, WHERE by its branches.
  const DType dt = u.op == Ops::WHERE ? u.src[1]->dtype : u.src[0]->dtype;
  const Kind k = kind(dt);
  const std::string t = ty(dt);
  if (k == Kind::BF16 && u.op != Ops::WHERE)
    r.unsupported(u, "bfloat16 arithmetic (codegen promotes it to float32)");
  if (k == Kind::Other) r.unsupported(u, "no LLVM form for this dtype");
  switch (u.op) {
  case Ops::WHERE:
    return c.op("select " + ty(u.src[0]->dtype) + " " + a[0] + ", " + t + " " + a[1] + ", " + t +
                " " + a[2]);
  case Ops::MULACC: {
    const std::string f = k == Kind::Float ? c.float_flags + " " : " ";
    const std::string m =
        c.op(std::string(k == Kind::Float ? "fmul" : "mul") + f + t + " " + a[0] + ", " + a[1]);
    return c.op(std::string(k == Kind::Float ? "fadd" : "add") + f + t + " " + m + ", " + a[2]);
  }
  case Ops::NEG:
    if (k == Kind::Float) return c.op("fneg " + t + " " + a[0]);
    if (k == Kind::Bool) return c.op("xor " + t + " " + a[0] + ", " + literal(true, dt));
    return c.op("sub " + t + " " + zero(dt) + ", " + a[0]);
  case Ops::RECIPROCAL:
    if (k != Kind::Float) break;
    return c.op("fdiv " + t + " " + literal(1.0, dt) + ", " + a[0]);
  case Ops::TRUNC:
    if (k != Kind::Float) return a[0];
    break;
  case Ops::IDIV:
    if (k == Kind::Float)
      return call_intrinsic(c, "trunc", dt, {c.op("fdiv " + t + " " + a[0] + ", " + a[1])});
    if (k == Kind::Bool) return a[0];
    break;
  case Ops::MOD:
    if (k == Kind::Bool) return "false";
    break;
  case Ops::MAX:
    if (k == Kind::SInt || k == Kind::UInt) {
      const std::string lt = c.op(std::string(k == Kind::SInt ? "icmp slt " : "icmp ult ") + t +
                                  " " + a[0] + ", " + a[1]);
      return c.op("select " +
                  ty(dt.scalar_type == ScalarType::Bool ? dt : DType(ScalarType::Bool, dt.count)) +
                  " " + lt + ", " + t + " " + a[1] + ", " + t + " " + a[0]);
    }
    break;
  case Ops::POW:
    if ((k == Kind::SInt || k == Kind::UInt) && dt.count == 1) {
      if (c.helpers.empty()) c.helpers.push_back(ipow_helpers);
      const char* ext = k == Kind::SInt ? "sext" : "zext";
      auto wide = [&](const std::string& x) {
        return bits(dt) == 64 ? x : c.op(std::string(ext) + " " + t + " " + x + " to i64");
      };
      const std::string x = wide(a[0]), y = wide(a[1]);
      const std::string p = c.op(std::string("call i64 @tg_ipow_") + (k == Kind::SInt ? "s" : "u") +
                                 "(i64 " + x + ", i64 " + y + ")");
      return bits(dt) == 64 ? p : c.op("trunc i64 " + p + " to " + t);
    }
    break;
  default:
    break;
  }
  if (k == Kind::Float)
    for (const auto& [op, name] : kIntrinsics)
      if (op == u.op) return call_intrinsic(c, name, dt, a);
  for (const Spelling& s : kBinary) {
    if (s.op != u.op) continue;
    const char* instr = k == Kind::SInt    ? s.sint
                        : k == Kind::UInt  ? s.uint
                        : k == Kind::Float ? s.flt
                                           : s.boolean;
    if (instr == nullptr) break;
    const bool arith =
        k == Kind::Float && (u.op == Ops::ADD || u.op == Ops::SUB || u.op == Ops::MUL);
    return c.op(std::string(instr) + (arith ? c.float_flags : "") + " " + t + " " + a[0] + ", " +
                a[1]);
  }
  r.unsupported(u, "no LLVM spelling for " + std::string(op_name(u.op)) + " on " + dt.name());
}

// The i64 offset of an INDEX (LLVM GEPs index in i64 here).
std::string index_i64(const LLVMIRRenderer& r, LLVMIRContext& c, const UOp& u) {
  const UOpPtr& idx = u.src[1];
  if (idx->dtype.count > 1) r.unsupported(u, "vector indices (gathers)");
  if (bits(idx->dtype) == 64) return c[idx];
  return c.op(std::string(kind(idx->dtype) == Kind::UInt ? "zext " : "sext ") + ty(idx->dtype) +
              " " + c[idx] + " to i64");
}

std::string render_load(const LLVMIRRenderer& r, LLVMIRContext& c, const UOp& u) {
  const std::string ptr = c[u.src[0]];
  const DType dt = u.dtype;
  auto load = [&] {
    const std::string v = c.op("load " + ty(dt, true) + ", ptr " + ptr + ", align " +
                               std::to_string(dt.scalar_itemsize()));
    return dt.scalar_type == ScalarType::Bool
               ? c.op("icmp ne " + ty(dt, true) + " " + v + ", " + zero(dt))
               : v;
  };
  auto gate = c.gates.find(u.src[0].get());
  if (gate == c.gates.end()) return load();
  if (u.src.size() < 2) r.unsupported(u, "a gated load needs an alternative value (src[1])");
  const std::string k = std::to_string(c.next()), pred = c.block;
  c.emit("br i1 " + gate->second + ", label %ld" + k + ", label %ldx" + k);
  c.place("ld" + k);
  const std::string v = load();
  const std::string from = c.block;
  c.emit("br label %ldx" + k);
  c.place("ldx" + k);
  return c.op("phi " + ty(dt) + " [" + v + ", %" + from + "], [" + c[u.src[1]] + ", %" + pred +
              "]");
}

// The metadata node a store's !nontemporal attachment names (LLVM wants !{i32 1}); the only
// metadata these modules define.
constexpr const char* kNontemporalNode = "!0";

void render_store(LLVMIRContext& c, const UOp& u) {
  const DType dt = u.src[1]->dtype;
  auto gate = c.gates.find(u.src[0].get());
  std::string k;
  if (gate != c.gates.end()) {
    k = std::to_string(c.next());
    c.emit("br i1 " + gate->second + ", label %st" + k + ", label %stx" + k);
    c.place("st" + k);
  }
  std::string v = c[u.src[1]];
  if (dt.scalar_type == ScalarType::Bool)
    v = c.op("zext " + ty(dt) + " " + v + " to " + ty(dt, true));
  // The buffer the store's INDEX addresses, whose size decides the non-temporal hint.
  const UOp* buf = u.src[0]->op == Ops::INDEX ? u.src[0]->src[0].get() : nullptr;
  const bool nontemporal =
      c.nontemporal_bytes > 0 && dt.count >= 4 && buf && buf->op == Ops::PARAM &&
      buf->dtype.size * static_cast<int64_t>(dt.scalar_itemsize()) >= c.nontemporal_bytes;
  if (nontemporal) c.declares.insert(std::string(kNontemporalNode) + " = !{i32 1}");
  c.emit("store " + ty(dt, true) + " " + v + ", ptr " + c[u.src[0]] + ", align " +
         std::to_string(dt.scalar_itemsize()) +
         (nontemporal ? ", !nontemporal " + std::string(kNontemporalNode) : ""));
  if (!k.empty()) {
    c.emit("br label %stx" + k);
    c.place("stx" + k);
  }
}

using RenderFn = std::function<std::string(const LLVMIRRenderer&, LLVMIRContext&, const UOp&)>;
using R = const LLVMIRRenderer&;
using C = LLVMIRContext&;

// One rendering function per op; an op without one is unsupported. The target's hooks render
// what differs between targets.
std::array<RenderFn, kNumOps> make_rules() {
  using enum Ops;
  std::array<RenderFn, kNumOps> t{};
  auto set = [&t](Ops op, RenderFn f) { t[static_cast<size_t>(op)] = std::move(f); };
  set(PARAM, [](R r, C c, const UOp& u) { return r.render_param(c, u); });
  set(DEFINE_VAR, [](R r, C c, const UOp& u) { return r.render_define_var(c, u); });
  set(SPECIAL, [](R r, C c, const UOp& u) { return r.render_special(c, u); });
  set(BARRIER, [](R r, C c, const UOp& u) {
    r.render_barrier(c, u);
    return std::string();
  });
  set(DEFINE_LOCAL, [](R r, C c, const UOp& u) { return r.render_local(c, u); });
  set(WMMA, [](R r, C c, const UOp& u) { return r.render_wmma(c, u); });
  set(DOT4, [](R r, C c, const UOp& u) {
    if (u.dtype.scalar_type != ScalarType::Int32) r.unsupported(u, "DOT4 works on int32");
    return r.render_dot4(c, u);
  });
  set(CONST, [](R, C, const UOp& u) { return literal(u.const_value(), u.dtype); });
  set(RANGE, [](R r, C c, const UOp& u) {
    LLVMLoop l = r.open_loop(c, u.dtype, "0", c[u.src[0]]);
    c.loops[&u] = l;
    return l.var;
  });
  set(END, [](R r, C c, const UOp& u) {
    auto it = c.loops.find(u.src[0].get());
    if (it == c.loops.end()) r.unsupported(u, "END of a node that is not an open RANGE");
    r.close_loop(c, it->second);
    return std::string();
  });
  set(IF, [](R, C c, const UOp& u) {
    const int k = c.next();
    c.ifs[&u] = k;
    c.emit("br i1 " + c[u.src[0]] + ", label %if" + std::to_string(k) + ", label %endif" +
           std::to_string(k));
    c.place("if" + std::to_string(k));
    return std::string();
  });
  set(ENDIF, [](R r, C c, const UOp& u) {
    auto it = c.ifs.find(u.src[0].get());
    if (it == c.ifs.end()) r.unsupported(u, "ENDIF of a node that is not an open IF");
    c.emit("br label %endif" + std::to_string(it->second));
    c.place("endif" + std::to_string(it->second));
    return std::string();
  });
  set(DEFINE_REG, [](R r, C c, const UOp& u) {
    if (u.dtype.size <= 0) r.unsupported(u, "a register array needs a positive size");
    return r.alloca_array(c, u.dtype.base(), u.dtype.size);
  });
  set(INDEX, [](R r, C c, const UOp& u) {
    const std::string off = index_i64(r, c, u);
    if (u.src.size() > 2) c.gates[&u] = c[u.src[2]];
    return c.op("getelementptr inbounds " + ty(u.src[0]->dtype.base().scalar(), true) + ", ptr " +
                c[u.src[0]] + ", i64 " + off);
  });
  set(LOAD, render_load);
  set(STORE, [](R, C c, const UOp& u) {
    render_store(c, u);
    return std::string();
  });
  set(CAST, [](R r, C c, const UOp& u) {
    return cast_value(r, c, u, u.src[0]->dtype, u.dtype, c[u.src[0]]);
  });
  set(BITCAST, [](R r, C c, const UOp& u) {
    const DType from = u.src[0]->dtype;
    if (from.itemsize() != u.dtype.itemsize())
      r.unsupported(u, "bitcast between types of different sizes");
    if (from.scalar_type == ScalarType::Bool || u.dtype.scalar_type == ScalarType::Bool)
      r.unsupported(u, "bitcast of bool");
    if (ty(from) == ty(u.dtype)) return c[u.src[0]];
    return c.op("bitcast " + ty(from) + " " + c[u.src[0]] + " to " + ty(u.dtype));
  });
  set(VECTORIZE, [](R, C c, const UOp& u) {
    // One insertelement per lane: the types are spelled once, and each line is built in one
    // buffer (a 64-lane vector is 64 instructions).
    std::string v = "poison";
    const std::string head = "insertelement " + ty(u.dtype) + " ";
    const std::string elem = ", " + ty(u.dtype.scalar()) + " ";
    std::string text;
    for (size_t i = 0; i < u.src.size(); ++i) {
      text.assign(head).append(v).append(elem).append(c[u.src[i]]).append(", i32 ");
      text.append(std::to_string(i));
      v = c.op(text);
    }
    return v;
  });
  set(GEP, [](R, C c, const UOp& u) {
    const auto& lanes = std::get<Shape>(u.arg);
    const std::string vt = ty(u.src[0]->dtype), v = c[u.src[0]];
    if (lanes.size() == 1)
      return c.op("extractelement " + vt + " " + v + ", i32 " + std::to_string(lanes[0]));
    std::string mask = "<";
    for (size_t i = 0; i < lanes.size(); ++i)
      mask += (i ? ", i32 " : "i32 ") + std::to_string(lanes[i]);
    return c.op("shufflevector " + vt + " " + v + ", " + vt + " poison, <" +
                std::to_string(lanes.size()) + " x i32> " + mask + ">");
  });
  set(SINK, [](R, C, const UOp&) { return std::string(); });
  // AFTER(x, deps...): x, ordered after deps (a register read after its loop's END).
  set(AFTER, [](R, C c, const UOp& u) { return c[u.src[0]]; });
  for (Ops op :
       {EXP2, LOG2,  SIN,   SQRT,  RECIPROCAL, NEG, TRUNC, ADD, MUL,  SHL, SHR,   IDIV,  MAX,
        MOD,  CMPLT, CMPNE, CMPEQ, XOR,        OR,  AND,   SUB, FDIV, POW, WHERE, MULACC})
    set(op, render_alu);
  return t;
}

} // namespace

const std::string& LLVMIRContext::operator[](const UOpPtr& u) const {
  auto it = names.find(u.get());
  if (it == names.end())
    throw Error("LLVM IR renderer: " + u->str() +
                " is used before it is rendered; the kernel list must put every node after its "
                "sources (docs/KERNEL_IR.md)");
  return it->second;
}

std::string LLVMIRRenderer::type(DType d, bool in_memory) {
  if (d.is_ptr) return "ptr";
  const std::string e = elem_ty(d.scalar_type, in_memory);
  return d.count > 1 ? "<" + std::to_string(d.count) + " x " + e + ">" : e;
}

int LLVMIRRenderer::bits(DType d) {
  return d.scalar_type == ScalarType::Bool ? 1 : 8 * d.scalar_itemsize();
}

LLVMLoop LLVMIRRenderer::open_loop(LLVMIRContext& c, DType dt, const std::string& start,
                                   const std::string& end) const {
  LLVMLoop l{c.next(), "", ty(dt)};
  l.var = "%i" + std::to_string(l.id);
  const std::string k = std::to_string(l.id), pred = c.block;
  c.emit("br label %loop_h" + k);
  c.place("loop_h" + k);
  c.emit(l.var + " = phi " + l.type + " [" + start + ", %" + pred + "], [" + l.var +
         ".next, %loop_l" + k + "]");
  c.emit(l.var + ".c = icmp slt " + l.type + " " + l.var + ", " + end);
  c.emit("br i1 " + l.var + ".c, label %loop_b" + k + ", label %loop_x" + k);
  c.place("loop_b" + k);
  return l;
}

void LLVMIRRenderer::close_loop(LLVMIRContext& c, const LLVMLoop& l) const {
  const std::string k = std::to_string(l.id);
  c.emit("br label %loop_l" + k);
  c.place("loop_l" + k);
  c.emit(l.var + ".next = add " + l.type + " " + l.var + ", 1");
  c.emit("br label %loop_h" + k);
  c.place("loop_x" + k);
}

std::string LLVMIRRenderer::alloca_array(LLVMIRContext& c, DType elem, int64_t count) const {
  const std::string n = "%acc" + std::to_string(c.next());
  c.entry.push_back("  " + n + " = alloca " + ty(elem, true) + ", i64 " + std::to_string(count) +
                    ", align 16");
  return n;
}

void LLVMIRRenderer::unsupported(const UOp& u, const std::string& why) const {
  throw Error(name() + " renderer cannot render " + u.str() + (why.empty() ? "" : ": " + why) +
              "; codegen must lower or decompose it first (docs/KERNEL_IR.md lists what "
              "renderers take)");
}

std::string LLVMIRRenderer::render_param(LLVMIRContext&, const UOp& u) const {
  unsupported(u, "the target passes no buffers (set render_param())");
}
std::string LLVMIRRenderer::render_define_var(LLVMIRContext&, const UOp& u) const {
  unsupported(u, "the target passes no variables (set render_define_var())");
}
std::string LLVMIRRenderer::render_special(LLVMIRContext&, const UOp& u) const {
  unsupported(u, "the target has no work-item indices (set render_special())");
}
void LLVMIRRenderer::render_barrier(LLVMIRContext&, const UOp& u) const {
  unsupported(u, "the target spells no barrier (set render_barrier())");
}
std::string LLVMIRRenderer::render_local(LLVMIRContext&, const UOp& u) const {
  unsupported(u, "the target has no work-group memory (set render_local())");
}
std::string LLVMIRRenderer::render_wmma(LLVMIRContext&, const UOp& u) const {
  unsupported(u, "the target has no tensor cores (set render_wmma())");
}
std::string LLVMIRRenderer::render_dot4(LLVMIRContext&, const UOp& u) const {
  unsupported(u, "the target spells no DOT4 (set RendererCaps::has_dot4 and render_dot4())");
}
std::string LLVMIRRenderer::render_kernel(const std::string& name, LLVMIRContext&) const {
  throw Error(this->name() + " renderer: the target defines no kernel function for " + name +
              " (set render_kernel())");
}

std::string LLVMIRRenderer::render(const std::string& kernel_name, std::span<const UOpPtr> uops) {
  static const std::array<RenderFn, kNumOps> rules = make_rules();
  LLVMIRContext c;
  // No contraction in a kernel with float16 arithmetic (see rounds_to_half).
  const bool half =
      std::any_of(uops.begin(), uops.end(), [](const UOpPtr& u) { return rounds_to_half(*u); });
  if (knobs::FP_CONTRACT && !half) c.float_flags = " contract";
  // Only elementwise kernels, which write their outputs as whole contiguous runs: a kernel with
  // an accumulator (a register tile, a reduce) writes scattered pieces of lines, for which
  // write-combining gives nothing.
  const bool elementwise = std::none_of(uops.begin(), uops.end(),
                                        [](const UOpPtr& u) { return u->op == Ops::DEFINE_REG; });
  c.nontemporal_bytes = elementwise ? nontemporal_store_bytes() : 0;
  for (const UOpPtr& u : uops) {
    const RenderFn& rule = rules[static_cast<size_t>(u->op)];
    if (!rule) unsupported(*u);
    c.names[u.get()] = rule(*this, c, *u);
  }
  return render_kernel(kernel_name, c);
}

std::string LLVMIRRenderer::module_tail(const LLVMIRContext& c) {
  std::string out;
  for (const auto& h : c.helpers) out += h + "\n";
  for (const auto& d : c.declares) out += d + "\n";
  return out;
}

} // namespace tg
