// The IR spec as a table: for each op, the number of sources it takes and a check of dtypes
// and arg. Each check returns the reason a node breaks the rule, or "" when it keeps it.
#include "tg/ir/spec.hpp"

#include <array>
#include <atomic>
#include <functional>

#include "tg/error.hpp"
#include "tg/knobs.hpp"

namespace tg {

namespace {

using Check = std::function<std::string(const UOp&)>;

struct OpSpec {
  int min_src = 0, max_src = -1; // -1: no upper bound
  Check check;
};

std::string ok() { return {}; }

bool is_int_or_bool(DType d) { return d.is_int() || d.scalar_type == ScalarType::Bool; }

std::string same_dtype_as_srcs(const UOp& u) {
  for (const UOpPtr& s : u.src)
    if (s->dtype != u.dtype)
      return "source " + s->str() + " has dtype " + s->dtype.name() + " but the result is " +
             u.dtype.name() + "; an ALU op's sources and result share one dtype (cast first)";
  return ok();
}

Check alu_check(bool float_only, bool int_only) {
  return [=](const UOp& u) -> std::string {
    if (u.dtype.is_ptr || u.dtype.is_void()) return "an ALU op cannot produce " + u.dtype.name();
    if (float_only && !u.dtype.is_float())
      return std::string(op_name(u.op)) + " needs a float dtype, got " + u.dtype.name();
    if (int_only && !is_int_or_bool(u.dtype))
      return std::string(op_name(u.op)) + " needs an integer dtype, got " + u.dtype.name();
    return same_dtype_as_srcs(u);
  };
}

std::string comparison_check(const UOp& u) {
  if (u.dtype.scalar_type != ScalarType::Bool || u.dtype.is_ptr)
    return "a comparison produces bool, not " + u.dtype.name();
  if (u.src[0]->dtype != u.src[1]->dtype)
    return "compared sources have dtypes " + u.src[0]->dtype.name() + " and " +
           u.src[1]->dtype.name() + "; cast one first";
  if (u.src[0]->dtype.count != u.dtype.count) return "result width differs from the sources'";
  return ok();
}

std::string shift_check(const UOp& u) {
  if (!u.dtype.is_int()) return "a shift needs an integer dtype, got " + u.dtype.name();
  if (u.src[0]->dtype != u.dtype) return same_dtype_as_srcs(u);
  if (!u.src[1]->dtype.is_int()) return "shift amount must be an integer";
  return ok();
}

template <class T> Check arg_is(const char* what) {
  return [what](const UOp& u) -> std::string {
    return std::holds_alternative<T>(u.arg) ? ok() : std::string("arg must be ") + what;
  };
}

Check all_of(std::vector<Check> checks) {
  return [checks = std::move(checks)](const UOp& u) -> std::string {
    for (const Check& c : checks)
      if (std::string why = c(u); !why.empty()) return why;
    return ok();
  };
}

std::string const_check(const UOp& u) {
  if (u.dtype.is_ptr || u.dtype.is_void()) return "a CONST cannot have dtype " + u.dtype.name();
  if (!u.src.empty() && u.src[0]->op != Ops::DEVICE)
    return "a CONST's only source may be its DEVICE";
  const bool b = std::holds_alternative<bool>(u.arg), i = std::holds_alternative<int64_t>(u.arg),
             f = std::holds_alternative<double>(u.arg);
  if (u.dtype.is_bool() ? !b : u.dtype.is_float() ? !f : !i)
    return "arg " + arg_to_string(u.arg) + " is not a value of dtype " + u.dtype.name();
  return ok();
}

std::string define_var_check(const UOp& u) {
  const auto* v = std::get_if<VarArg>(&u.arg);
  if (v == nullptr) return "arg must be (name, min, max)";
  if (!u.dtype.is_int() || u.dtype.is_ptr) return "a variable is an integer, not " + u.dtype.name();
  if (v->min > v->max) return "min > max";
  return ok();
}

std::string index_like_check(const UOp& u) {
  if (!u.dtype.is_int() || u.dtype.is_ptr) return "needs an integer dtype, got " + u.dtype.name();
  if (u.src[0]->dtype != u.dtype)
    return "its bound " + u.src[0]->str() + " has dtype " + u.src[0]->dtype.name() + ", not " +
           u.dtype.name();
  return ok();
}

std::string where_check(const UOp& u) {
  if (u.src[0]->dtype.scalar_type != ScalarType::Bool || u.src[0]->dtype.is_ptr)
    return "the condition must be bool, got " + u.src[0]->dtype.name();
  if (u.src[1]->dtype != u.dtype || u.src[2]->dtype != u.dtype)
    return "branches have dtypes " + u.src[1]->dtype.name() + " and " + u.src[2]->dtype.name() +
           " but the result is " + u.dtype.name();
  return ok();
}

std::string bitcast_check(const UOp& u) {
  if (u.src[0]->dtype.itemsize() != u.dtype.itemsize())
    return "cannot bitcast " + u.src[0]->dtype.name() + " to " + u.dtype.name() +
           " (different sizes)";
  return ok();
}

std::string vectorize_check(const UOp& u) {
  if (u.dtype.count != u.src.size())
    return "dtype " + u.dtype.name() + " has width " + std::to_string(u.dtype.count) + " but " +
           std::to_string(u.src.size()) + " sources";
  for (const UOpPtr& s : u.src)
    if (s->dtype != u.dtype.scalar())
      return "source of dtype " + s->dtype.name() + " in " + u.dtype.name();
  return ok();
}

std::string gep_check(const UOp& u) {
  const auto* idx = std::get_if<Shape>(&u.arg);
  if (idx == nullptr) return "arg must be the lane indices";
  if (idx->size() != u.dtype.count) return "result width differs from the number of lanes taken";
  for (int64_t i : *idx)
    if (i < 0 || i >= u.src[0]->dtype.count)
      return "lane " + std::to_string(i) + " outside " + u.src[0]->dtype.name();
  return ok();
}

std::string void_dtype(const UOp& u) {
  return u.dtype.is_void() ? ok() : "dtype must be void, got " + u.dtype.name();
}

std::string ptr_dtype(const UOp& u) {
  return u.dtype.is_ptr ? ok() : "dtype must be a pointer, got " + u.dtype.name();
}

std::string addrspace_is(const UOp& u, AddrSpace as) {
  if (std::string why = ptr_dtype(u); !why.empty()) return why;
  return u.dtype.addrspace == as ? ok() : "wrong address space in " + u.dtype.name();
}

std::string reduce_check(const UOp& u) {
  const auto* r = std::get_if<ReduceArg>(&u.arg);
  if (r == nullptr) return "arg must be (op, axes)";
  if (r->op != Ops::ADD && r->op != Ops::MUL && r->op != Ops::MAX)
    return "reduce op must be ADD, MUL or MAX, got " + std::string(op_name(r->op));
  return ok();
}

std::string load_check(const UOp& u) {
  return u.src[0]->dtype.is_ptr ? ok() : "loads from a pointer, got " + u.src[0]->dtype.name();
}

std::string bind_check(const UOp& u) {
  if (u.src[0]->op != Ops::DEFINE_VAR || u.src[1]->op != Ops::CONST)
    return "BIND takes a DEFINE_VAR and a CONST";
  const auto& v = std::get<VarArg>(u.src[0]->arg);
  int64_t x = u.src[1]->ivmin();
  if (x < v.min || x > v.max)
    return "value " + std::to_string(x) + " outside [" + std::to_string(v.min) + ", " +
           std::to_string(v.max) + "] of variable '" + v.name + "'";
  return u.dtype == u.src[0]->dtype ? ok() : "dtype differs from the variable's";
}

const std::array<OpSpec, kNumOps>& spec_table() {
  static const std::array<OpSpec, kNumOps> table = [] {
    std::array<OpSpec, kNumOps> t{};
    auto set = [&](Ops op, int lo, int hi, Check c = nullptr) {
      t[static_cast<size_t>(op)] = OpSpec{lo, hi, std::move(c)};
    };
    using enum Ops;
    set(CONST, 0, 1, const_check);
    set(DEFINE_VAR, 0, 0, define_var_check);
    set(BIND, 2, 2, bind_check);
    set(RANGE, 1, 1, all_of({arg_is<RangeArg>("(axis id, axis type)"), index_like_check}));
    set(SPECIAL, 1, 1, all_of({arg_is<std::string>("the dimension's name"), index_like_check}));
    set(PARAM, 0, -1, all_of({arg_is<int64_t>("the parameter's slot"), ptr_dtype}));
    set(DEFINE_LOCAL, 0, 0, [](const UOp& u) { return addrspace_is(u, AddrSpace::Local); });
    set(DEFINE_REG, 0, 0, [](const UOp& u) { return addrspace_is(u, AddrSpace::Reg); });
    set(SINK, 0, -1, void_dtype);
    set(BARRIER, 0, -1, void_dtype);
    set(STORE, 2, -1, void_dtype);
    set(LOAD, 1, -1, load_check);
    set(INDEX, 2, -1, [](const UOp& u) {
      return u.src[0]->dtype.is_ptr ? ok() : "indexes a pointer, got " + u.src[0]->dtype.name();
    });
    for (Ops op : {EXP2, LOG2, SIN, SQRT, RECIPROCAL, TRUNC}) set(op, 1, 1, alu_check(true, false));
    set(NEG, 1, 1, alu_check(false, false));
    for (Ops op : {ADD, MUL, MAX, SUB}) set(op, 2, 2, alu_check(false, false));
    for (Ops op : {IDIV, MOD, AND, OR, XOR}) set(op, 2, 2, alu_check(false, true));
    for (Ops op : {FDIV, POW}) set(op, 2, 2, alu_check(true, false));
    for (Ops op : {SHL, SHR}) set(op, 2, 2, shift_check);
    for (Ops op : {CMPLT, CMPNE, CMPEQ}) set(op, 2, 2, comparison_check);
    set(THREEFRY, 2, 2, [](const UOp& u) {
      return u.dtype.scalar_type == ScalarType::UInt64 ? same_dtype_as_srcs(u)
                                                       : std::string("THREEFRY works on uint64");
    });
    set(WHERE, 3, 3, where_check);
    set(MULACC, 3, 3, alu_check(false, false));
    set(DOT4, 3, 3, [](const UOp& u) {
      if (u.dtype.scalar_type != ScalarType::Int32) return std::string("DOT4 works on int32");
      return same_dtype_as_srcs(u);
    });
    set(CAST, 1, 1);
    set(BITCAST, 1, 1, bitcast_check);
    set(VECTORIZE, 1, -1, vectorize_check);
    set(GEP, 1, 1, gep_check);
    for (Ops op : {RESHAPE, EXPAND, PERMUTE, FLIP}) set(op, 1, 1, arg_is<Shape>("a shape"));
    for (Ops op : {PAD, SHRINK}) set(op, 1, 1, arg_is<PadArg>("one (begin, end) pair per axis"));
    set(REDUCE, 1, -1, reduce_check);
    set(IOTA, 1, 1, all_of({arg_is<int64_t>("the length"), [](const UOp& u) {
                              return u.src[0]->op == Ops::DEVICE ? ok()
                                                                 : "an IOTA's source is its DEVICE";
                            }}));
    set(BUFFER, 2, 2, arg_is<int64_t>("the number of elements"));
    set(UNIQUE, 0, 0, arg_is<int64_t>("a unique id"));
    set(DEVICE, 0, 0, arg_is<std::string>("the device spec"));
    set(CONTIGUOUS, 1, -1);
    set(DETACH, 1, 1);
    set(CONTIGUOUS_BACKWARD, 1, 1);
    set(CUSTOM_VJP, 1, -1, arg_is<std::string>("the name of its gradient rule"));
    set(SCATTER_ADD, 3, 3, [](const UOp& u) {
      if (!u.src[1]->dtype.is_int()) return "its rows are integers, got " + u.src[1]->dtype.name();
      return u.dtype == u.src[0]->dtype && u.dtype == u.src[2]->dtype
                 ? ok()
                 : "base, values and result share one dtype, got " + u.src[0]->dtype.name() + ", " +
                       u.src[2]->dtype.name() + " and " + u.dtype.name();
    });
    set(COPY, 1, -1);
    set(ASSIGN, 2, -1);
    set(IF, 1, -1);
    set(END, 1, -1);
    return t;
  }();
  return table;
}

std::atomic<int> g_spec_override{-1}; // -1: follow SPEC from the environment

} // namespace

void verify_node(const UOp& u) {
  const OpSpec& s = spec_table()[static_cast<size_t>(u.op)];
  const int n = static_cast<int>(u.src.size());
  std::string why;
  if (n < s.min_src || (s.max_src >= 0 && n > s.max_src)) {
    why = "takes " +
          (s.min_src == s.max_src ? std::to_string(s.min_src)
           : s.max_src < 0        ? "at least " + std::to_string(s.min_src)
                           : std::to_string(s.min_src) + " to " + std::to_string(s.max_src)) +
          " sources, got " + std::to_string(n);
  } else if (s.check) {
    why = s.check(u);
  }
  if (!why.empty()) throw SpecError("spec: " + u.str() + " is malformed: " + why);
}

void verify_graph(const UOpPtr& root) {
  for (const UOp* u : root->toposort()) verify_node(*u);
}

bool spec_checking() {
  int o = g_spec_override.load(std::memory_order_relaxed);
  if (o >= 0) return o != 0;
  return knobs::SPEC != 0;
}

void set_spec_checking(bool on) { g_spec_override.store(on ? 1 : 0); }

} // namespace tg
