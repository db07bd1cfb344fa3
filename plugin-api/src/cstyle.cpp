// CStyleRenderer: one pass over the linearized kernel, a rule per op (see cstyle.hpp).
#include "tg/plugin/cstyle.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

namespace tg {

const std::string& CStyleContext::operator[](const UOpPtr& u) const {
  auto it = names.find(u.get());
  if (it == names.end())
    throw Error("renderer: " + u->str() +
                " is used before it is rendered; the kernel list must put every node after its "
                "sources (docs/KERNEL_IR.md)");
  return it->second;
}

void CStyleContext::need(const std::string& helper) {
  for (const auto& h : preamble)
    if (h == helper) return;
  preamble.push_back(helper);
}

namespace {

using Args = std::vector<std::string>;
using Fmt = CStyleRenderer::OpFormat;

Fmt infix(const char* op) {
  return [op](const Args& a, DType) -> std::optional<std::string> {
    // `x - -2.0f`: without the space, `x--2.0f` would read as a decrement.
    const bool space = op[0] == '-' && op[1] == 0 && !a[1].empty() && a[1][0] == '-';
    return "(" + a[0] + op + (space ? " " : "") + a[1] + ")";
  };
}

// Integer-only ops: a float operand has no C spelling for them.
Fmt int_infix(const char* op) {
  return [op](const Args& a, DType dt) -> std::optional<std::string> {
    if (dt.is_float()) return std::nullopt;
    return "(" + a[0] + op + a[1] + ")";
  };
}

// The C spellings shared by every C-like dialect; a dialect edits its copy.
std::array<Fmt, kNumOps> default_op_table() {
  using enum Ops;
  std::array<Fmt, kNumOps> t{};
  auto set = [&t](Ops op, Fmt f) { t[static_cast<size_t>(op)] = std::move(f); };
  set(ADD, infix("+"));
  set(SUB, infix("-"));
  set(MUL, infix("*"));
  set(FDIV, infix("/"));
  set(IDIV, int_infix("/"));
  set(MOD, int_infix("%"));
  set(SHL, int_infix("<<"));
  set(SHR, int_infix(">>"));
  set(AND, int_infix("&"));
  set(OR, int_infix("|"));
  set(XOR, int_infix("^"));
  set(CMPLT, infix("<"));
  set(CMPNE, infix("!="));
  set(CMPEQ, infix("=="));
  set(MAX, [](const Args& a, DType dt) -> std::optional<std::string> {
    if (!dt.is_float()) return "((" + a[0] + "<" + a[1] + ")?" + a[1] + ":" + a[0] + ")";
    // IEEE maximum, as exec_alu and LLVM's llvm.maximum: NaN if either is NaN, +0 over -0.
    // When neither is less, a+b gives the NaN, or +0 for zeros of either sign (-0 only for
    // two -0s); equal non-zero values return a.
    const std::string& x = a[0];
    const std::string& y = a[1];
    return "((" + x + "<" + y + ")?" + y + ":((" + y + "<" + x + ")?" + x + ":(((" + x + "!=" + x +
           ")||(" + y + "!=" + y + ")||(" + x + "==0))?(" + x + "+" + y + "):" + x + ")))";
  });
  set(NEG, [](const Args& a, DType dt) -> std::optional<std::string> {
    if (dt.is_bool()) return "(!" + a[0] + ")";
    return "(-" + std::string(!a[0].empty() && a[0][0] == '-' ? " " : "") + a[0] + ")";
  });
  set(RECIPROCAL, [](const Args& a, DType dt) -> std::optional<std::string> {
    if (!dt.is_float()) return std::nullopt;
    return "(1/" + a[0] + ")";
  });
  set(TRUNC, [](const Args& a, DType dt) -> std::optional<std::string> {
    if (dt.is_float()) return std::nullopt; // needs the dialect's trunc function
    return a[0];
  });
  set(WHERE, [](const Args& a, DType) -> std::optional<std::string> {
    return "(" + a[0] + "?" + a[1] + ":" + a[2] + ")";
  });
  set(MULACC, [](const Args& a, DType) -> std::optional<std::string> {
    return "((" + a[0] + "*" + a[1] + ")+" + a[2] + ")";
  });
  return t;
}

std::string short_scalar_name(ScalarType s) {
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
  case ScalarType::BFloat16:
    return "bfloat";
  case ScalarType::Float32:
    return "float";
  case ScalarType::Float64:
    return "double";
  default:
    return "";
  }
}

// The rule for each op; ops without one are unsupported by every dialect until it adds one.
std::array<CStyleRenderer::Rule, kNumOps> default_rules() {
  using enum Ops;
  using R = const CStyleRenderer&;
  using C = CStyleContext&;
  std::array<CStyleRenderer::Rule, kNumOps> t{};
  auto set = [&t](Ops op, CStyleRenderer::Rule f) { t[static_cast<size_t>(op)] = std::move(f); };

  set(PARAM, [](R r, C ctx, const UOp& u) {
    const auto slot = std::get<int64_t>(u.arg);
    if (slot < 0 || slot > 4096) r.unsupported(u, "slot out of range");
    if (ctx.buffers.size() <= static_cast<size_t>(slot)) ctx.buffers.resize(slot + 1, nullptr);
    ctx.buffers[slot] = &u;
    return "data" + std::to_string(slot);
  });
  set(DEFINE_VAR, [](R, C ctx, const UOp& u) {
    ctx.vars.push_back(&u);
    return std::get<VarArg>(u.arg).name;
  });
  set(SPECIAL, [](R r, C ctx, const UOp& u) { return r.render_special(ctx, u); });
  set(CONST, [](R r, C, const UOp& u) { return r.render_const(u.const_value(), u.dtype); });
  set(RANGE, [](R r, C ctx, const UOp& u) {
    const std::string name = "ridx" + std::to_string(std::get<RangeArg>(u.arg).id);
    const std::string type = r.type_name(u.dtype);
    ctx.emit("for (" + type + " " + name + " = 0; " + name + " < " + ctx[u.src[0]] + "; " + name +
             "++) {");
    ctx.depth++;
    return name;
  });
  set(END, [](R, C ctx, const UOp&) {
    ctx.depth--;
    ctx.emit("}");
    return std::string();
  });
  set(IF, [](R, C ctx, const UOp& u) {
    ctx.emit("if (" + ctx[u.src[0]] + ") {");
    ctx.depth++;
    return std::string();
  });
  set(ENDIF, [](R, C ctx, const UOp&) {
    ctx.depth--;
    ctx.emit("}");
    return std::string();
  });
  set(BARRIER, [](R r, C ctx, const UOp& u) {
    if (r.barrier().empty()) r.unsupported(u, "the dialect spells no barrier (set barrier())");
    ctx.emit(r.barrier());
    return std::string();
  });
  set(DEFINE_REG, [](R r, C ctx, const UOp& u) {
    const std::string name = ctx.fresh("acc");
    ctx.emit(r.type_name(u.dtype.base()) + " " + name + "[" + std::to_string(u.dtype.size) + "];");
    return name;
  });
  set(DEFINE_LOCAL, [](R r, C ctx, const UOp& u) {
    const std::string name = ctx.fresh("temp");
    const std::string decl = r.local_decl(u.dtype.base(), name, u.dtype.size);
    if (decl.empty())
      r.unsupported(u, "the dialect declares no work-group memory (set local_decl())");
    ctx.emit(decl);
    return name;
  });
  set(INDEX, [](R, C ctx, const UOp& u) {
    if (u.src.size() > 2) ctx.gates[&u] = ctx[u.src[2]];
    return "(" + ctx[u.src[0]] + "+" + ctx[u.src[1]] + ")";
  });
  set(LOAD, [](R r, C ctx, const UOp& u) {
    const std::string load = r.render_load(u.dtype, ctx[u.src[0]]);
    auto gate = ctx.gates.find(u.src[0].get());
    if (gate == ctx.gates.end()) return r.bind(ctx, u, load, "val");
    if (u.src.size() < 2) r.unsupported(u, "a gated load needs an alternative value (src[1])");
    return r.bind(ctx, u, "(" + gate->second + "?" + load + ":" + ctx[u.src[1]] + ")", "val");
  });
  set(STORE, [](R r, C ctx, const UOp& u) {
    const std::string store = r.render_store(u.src[1]->dtype, ctx[u.src[0]], ctx[u.src[1]]);
    auto gate = ctx.gates.find(u.src[0].get());
    ctx.emit(gate == ctx.gates.end() ? store : "if (" + gate->second + ") { " + store + " }");
    return std::string();
  });
  set(CAST, [](R r, C ctx, const UOp& u) {
    return r.bind(ctx, u, r.render_cast(u.dtype, u.src[0]->dtype, ctx[u.src[0]]), "cast");
  });
  set(BITCAST, [](R r, C ctx, const UOp& u) {
    if (u.dtype.itemsize() != u.src[0]->dtype.itemsize())
      r.unsupported(u, "bitcast between types of different sizes");
    const std::string cast = r.render_bitcast(u.dtype, u.src[0]->dtype, ctx[u.src[0]]);
    if (cast.empty()) r.unsupported(u, "the dialect spells no bitcast (set render_bitcast())");
    return r.bind(ctx, u, cast, "cast");
  });
  set(VECTORIZE, [](R r, C ctx, const UOp& u) {
    Args lanes;
    for (const auto& s : u.src) lanes.push_back(ctx[s]);
    return r.bind(ctx, u, r.vector_ctor(u.dtype, lanes), "vec");
  });
  set(GEP, [](R r, C ctx, const UOp& u) {
    const auto& lanes = std::get<Shape>(u.arg);
    const std::string& v = ctx[u.src[0]];
    if (lanes.size() == 1) return r.gep(v, lanes[0]);
    Args parts;
    for (int64_t l : lanes) parts.push_back(r.gep(v, l));
    return r.bind(ctx, u, r.vector_ctor(u.dtype, parts), "gep");
  });
  set(SINK, [](R, C, const UOp&) { return std::string(); });
  // AFTER(x, deps...): x, ordered after deps (a register read after its loop's END).
  set(AFTER, [](R, C ctx, const UOp& u) { return ctx[u.src[0]]; });
  for (Ops op :
       {EXP2, LOG2,  SIN,   SQRT,  RECIPROCAL, NEG, TRUNC, ADD, MUL,  SHL, SHR,   IDIV,  MAX,
        MOD,  CMPLT, CMPNE, CMPEQ, XOR,        OR,  AND,   SUB, FDIV, POW, WHERE, MULACC}) {
    set(op, [](R r, C ctx, const UOp& u) {
      Args operands;
      for (const auto& s : u.src) operands.push_back(ctx[s]);
      // Comparisons are typed by their operands, WHERE by its branches.
      const DType dt = u.op == Ops::WHERE                   ? u.src[1]->dtype
                       : GroupOp::Comparison.contains(u.op) ? u.src[0]->dtype
                                                            : u.dtype;
      auto code = r.code_for_op(ctx, u.op, dt, operands);
      if (!code)
        r.unsupported(u, "no spelling for " + std::string(op_name(u.op)) + " on " + dt.name());
      return r.bind(ctx, u, *code, "alu");
    });
  }
  return t;
}

} // namespace

CStyleRenderer::CStyleRenderer() : rules_(default_rules()), op_table_(default_op_table()) {}

std::string CStyleRenderer::render(const std::string& kernel_name, std::span<const UOpPtr> uops) {
  CStyleContext ctx;
  for (const UOpPtr& u : uops) {
    const DType base = u->dtype.is_ptr ? u->dtype.base() : u->dtype;
    if (base.count > 1 &&
        std::find(ctx.vector_types.begin(), ctx.vector_types.end(), base) == ctx.vector_types.end())
      ctx.vector_types.push_back(base);
    const Rule& rule = rules_[static_cast<size_t>(u->op)];
    if (!rule) unsupported(*u);
    ctx.names[u.get()] = rule(*this, ctx, *u);
  }
  return render_kernel(kernel_name, ctx);
}

std::string CStyleRenderer::type_name(DType dt) const {
  if (dt.is_ptr) return type_name(dt.base()) + "*";
  if (dt.count > 1) return short_scalar_name(dt.scalar_type) + std::to_string(dt.count);
  switch (dt.scalar_type) {
  case ScalarType::Void:
    return "void";
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
  case ScalarType::Float32:
    return "float";
  case ScalarType::Float64:
    return "double";
  case ScalarType::Float16:
  case ScalarType::BFloat16:
    throw Error(name() + " renderer: the dialect names no scalar " + dt.name() +
                " type (set type_name())");
  default:
    throw Error(name() + " renderer: no type for " + dt.name() +
                "; codegen must emulate it before rendering");
  }
}

std::string CStyleRenderer::render_kernel(const std::string& name, const CStyleContext& ctx) const {
  std::string params;
  for (size_t slot = 0; slot < ctx.buffers.size(); ++slot) {
    if (ctx.buffers[slot] == nullptr)
      throw Error(this->name() + " renderer: kernel " + name + " has no PARAM for slot " +
                  std::to_string(slot) + "; buffer slots must be 0..n-1");
    params += (params.empty() ? "" : ", ") +
              buffer_param(*ctx.buffers[slot], "data" + std::to_string(slot));
  }
  for (const UOp* v : ctx.vars) params += (params.empty() ? "" : ", ") + var_param(*v);
  std::string out;
  for (const auto& h : ctx.preamble) out += h + "\n";
  out += kernel_prefix() + "void " + name + "(" + params + ") {\n";
  for (const auto& l : ctx.lines) out += l + "\n";
  for (int i = ctx.open_blocks; i > 0; --i) out += std::string(2 * i, ' ') + "}\n";
  return out + "}\n";
}

std::string CStyleRenderer::buffer_param(const UOp& param, const std::string& name) const {
  return type_name(param.dtype.base()) + "* " + name;
}

std::string CStyleRenderer::var_param(const UOp& var) const {
  return "const " + type_name(var.dtype) + " " + std::get<VarArg>(var.arg).name;
}

std::string CStyleRenderer::special_index(const UOp& special) const {
  unsupported(special, "this dialect has no work-item indices");
}

std::string CStyleRenderer::render_special(CStyleContext& ctx, const UOp& special) const {
  const std::string name = std::get<std::string>(special.arg);
  ctx.emit(type_name(special.dtype) + " " + name + " = " + special_index(special) + ";");
  return name;
}

std::string CStyleRenderer::gep(const std::string& vec, int64_t lane) const {
  return vec + "[" + std::to_string(lane) + "]";
}

std::string CStyleRenderer::vector_ctor(DType dt, const std::vector<std::string>& lanes) const {
  std::string r = "((" + type_name(dt) + "){";
  for (size_t i = 0; i < lanes.size(); ++i) r += (i ? "," : "") + lanes[i];
  return r + "})";
}

std::string CStyleRenderer::render_cast(DType to, DType, const std::string& x) const {
  return "((" + type_name(to) + ")(" + x + "))";
}

std::string CStyleRenderer::render_const(const ConstValue& v, DType dt) const {
  if (dt.count > 1) {
    const std::string lane = render_const(v, dt.scalar());
    return vector_ctor(dt, std::vector<std::string>(dt.count, lane));
  }
  if (dt.is_bool()) return as_bool(v) ? "1" : "0";
  if (dt.is_float()) {
    const double d = as_double(v);
    std::string lit;
    if (std::isnan(d) || std::isinf(d)) {
      const std::string special = std::isnan(d) ? nan() : infinity();
      if (special.empty())
        throw Error(name() + " renderer: the dialect spells no " +
                    (std::isnan(d) ? "NaN (set nan())" : "infinity (set infinity())"));
      lit = std::isnan(d) ? special : d < 0 ? "(-" + special + ")" : special;
    } else {
      char buf[64];
      // %a is exact and round-trips for every float width.
      std::snprintf(buf, sizeof buf, "%a", d);
      lit = buf;
      if (dt.scalar_type != ScalarType::Float64) lit += "f";
    }
    if (dt.scalar_type == ScalarType::Float32 || dt.scalar_type == ScalarType::Float64) return lit;
    return render_cast(dt, dtypes::float32, lit);
  }
  const int64_t i = as_int(v);
  switch (dt.scalar_type) {
  case ScalarType::UInt64:
    return std::to_string(static_cast<uint64_t>(i)) + "ull";
  case ScalarType::UInt32:
    return std::to_string(static_cast<uint32_t>(i)) + "u";
  case ScalarType::Int64:
  case ScalarType::Index:
    if (i == INT64_MIN) return "(-9223372036854775807ll-1)";
    return std::to_string(i) + "ll";
  default:
    if (i == INT32_MIN) return "(-2147483647-1)";
    return std::to_string(i);
  }
}

std::optional<std::string> CStyleRenderer::code_for_op(CStyleContext&, Ops op, DType dt,
                                                       const std::vector<std::string>& a) const {
  const OpFormat& f = op_table_[static_cast<size_t>(op)];
  if (!f) return std::nullopt;
  return f(a, dt);
}

std::string CStyleRenderer::render_load(DType dt, const std::string& ptr) const {
  if (dt.count > 1) return "(*((" + type_name(dt) + "*)" + ptr + "))";
  return "(*" + ptr + ")";
}

std::string CStyleRenderer::render_store(DType dt, const std::string& ptr,
                                         const std::string& v) const {
  if (dt.count > 1) return "*((" + type_name(dt) + "*)" + ptr + ") = " + v + ";";
  return "*" + ptr + " = " + v + ";";
}

std::string CStyleRenderer::bind(CStyleContext& ctx, const UOp& u, const std::string& expr,
                                 const std::string& prefix) const {
  const std::string name = ctx.fresh(prefix);
  ctx.emit(type_name(u.dtype) + " " + name + " = " + expr + ";");
  return name;
}

void CStyleRenderer::unsupported(const UOp& u, const std::string& why) const {
  throw Error(name() + " renderer cannot render " + u.str() + (why.empty() ? "" : ": " + why) +
              "; codegen must lower or decompose it first (docs/KERNEL_IR.md lists what "
              "renderers take)");
}

} // namespace tg
