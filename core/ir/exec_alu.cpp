// exec_alu: the reference semantics of every scalar ALU op.
//
// Integers are computed on their two's-complement bit pattern in uint64 (where overflow is
// defined) and then wrapped to the dtype's width: sign-extended for signed types, zero-extended
// for unsigned ones (uint64 keeps its bit pattern in the int64 a ConstValue holds). Floats are
// computed in double and rounded once to the dtype. bool follows tinygrad's python semantics:
// the integer result converted to bool, so ADD/MAX are OR, MUL is AND, SUB is XOR, NEG is NOT.
#include "tg/ir/exec_alu.hpp"

#include <cfloat>
#include <cmath>
#include <limits>
#include <string>

#include "tg/error.hpp"

namespace tg {
namespace {

int int_bits(ScalarType s) {
  switch (s) {
  case ScalarType::Int8:
  case ScalarType::UInt8:
    return 8;
  case ScalarType::Int16:
  case ScalarType::UInt16:
    return 16;
  case ScalarType::Int32:
  case ScalarType::UInt32:
    return 32;
  case ScalarType::Int64:
  case ScalarType::UInt64:
  case ScalarType::Index:
    return 64;
  default:
    return 0;
  }
}

bool is_signed_int(ScalarType s) { return DType(s).is_int() && !DType(s).is_unsigned(); }

// The low `bits` bits of `u` as the value a `bits`-wide integer of the given signedness holds.
int64_t wrap_bits(uint64_t u, int bits, bool is_signed) {
  if (bits < 64) {
    const uint64_t mask = (uint64_t{1} << bits) - 1;
    u &= mask;
    if (is_signed && ((u >> (bits - 1)) & 1)) u |= ~mask;
  }
  return static_cast<int64_t>(u); // modular since C++20
}

// An operand as an integer: bools are 0/1, floats truncate (saturating, NaN is 0) so that a
// stray float operand cannot hit undefined behaviour.
int64_t int_operand(const ConstValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1 : 0;
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  const double d = std::trunc(std::get<double>(v));
  if (std::isnan(d)) return 0;
  if (d >= 9223372036854775808.0) return std::numeric_limits<int64_t>::max();
  if (d < -9223372036854775808.0) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}

bool truthy(const ConstValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b;
  if (const auto* i = std::get_if<int64_t>(&v)) return *i != 0;
  return std::get<double>(v) != 0.0; // NaN is true, as in C
}

double float_operand(const ConstValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return *b ? 1.0 : 0.0;
  if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

// Rounds a double to float32 (nearest even) without the undefined behaviour of converting an
// out-of-range double to float: above FLT_MAX by half an ulp (2^103) or more is infinity.
double round_f32(double x) {
  if (std::isfinite(x) && std::fabs(x) > static_cast<double>(FLT_MAX)) {
    const double half_ulp_past_max = static_cast<double>(FLT_MAX) + 0x1p103;
    const double inf = std::numeric_limits<double>::infinity();
    if (std::fabs(x) >= half_ulp_past_max) return x < 0 ? -inf : inf;
    return x < 0 ? -static_cast<double>(FLT_MAX) : static_cast<double>(FLT_MAX);
  }
  return static_cast<double>(static_cast<float>(x));
}

double round_to(double x, ScalarType s) {
  switch (s) {
  case ScalarType::Float64:
    return x;
  case ScalarType::Float32:
    return round_f32(x);
  default:
    return as_double(cast_const(ConstValue(x), DType(s)));
  }
}

size_t arity(Ops op) {
  if (GroupOp::Unary.contains(op)) return 1;
  if (GroupOp::Binary.contains(op)) return 2;
  return 3;
}

std::optional<ConstValue> exec_bool(Ops op, bool a, bool b) {
  using enum Ops;
  switch (op) {
  case ADD:
  case OR:
  case MAX:
    return a || b;
  case MUL:
  case AND:
    return a && b;
  case SUB:
  case XOR:
  case CMPNE:
    return a != b;
  case CMPEQ:
    return a == b;
  case CMPLT:
    return !a && b;
  case NEG:
    return !a; // tinygrad: -x on a bool is `not x`
  case TRUNC:
    return a;
  case IDIV:
    if (!b) return std::nullopt;
    return a;
  case MOD:
    if (!b) return std::nullopt;
    return false;
  // A bool is one bit wide: only a shift by 0 (false) is defined.
  case SHL:
  case SHR:
    if (b) return std::nullopt;
    return a;
  case POW:
    return b ? a : true; // 0**0 == 1
  default:
    return std::nullopt; // transcendentals and FDIV have no bool form
  }
}

std::optional<ConstValue> exec_int(Ops op, ScalarType s, int64_t a_in, int64_t b_in) {
  using enum Ops;
  const int bits = int_bits(s);
  const bool sgn = is_signed_int(s);
  const int64_t a = wrap_bits(static_cast<uint64_t>(a_in), bits, sgn);
  const int64_t b = wrap_bits(static_cast<uint64_t>(b_in), bits, sgn);
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  auto wrap = [&](uint64_t u) -> ConstValue { return wrap_bits(u, bits, sgn); };
  // Unsigned values are zero-extended (uint64: the bit pattern), so compare them as uint64.
  auto less = [&](int64_t x, int64_t y) {
    return sgn ? x < y : static_cast<uint64_t>(x) < static_cast<uint64_t>(y);
  };
  // A shift amount must lie in [0, bits): as a signed value for signed types.
  auto shift_ok = [&] { return sgn ? (b >= 0 && b < bits) : ub < static_cast<uint64_t>(bits); };
  switch (op) {
  case ADD:
    return wrap(ua + ub);
  case SUB:
    return wrap(ua - ub);
  case MUL:
    return wrap(ua * ub);
  case NEG:
    return wrap(uint64_t{0} - ua);
  case TRUNC:
    return a;
  case IDIV:
    if (b == 0) return std::nullopt;
    if (!sgn) return wrap(ua / ub);
    if (b == -1) return wrap(uint64_t{0} - ua); // INT_MIN / -1 wraps to INT_MIN, never traps
    return a / b;                               // C++ truncates toward zero
  case MOD:
    if (b == 0) return std::nullopt;
    if (!sgn) return wrap(ua % ub);
    if (b == -1) return int64_t{0}; // INT_MIN % -1 would trap in hardware
    return a % b;                   // sign of the dividend, as C
  case SHL:
    if (!shift_ok()) return std::nullopt;
    return wrap(ua << ub);
  case SHR:
    if (!shift_ok()) return std::nullopt;
    if (sgn) return a >> b; // arithmetic (C++20 defines >> of negatives as floor)
    return wrap(ua >> ub);
  case MAX:
    return less(a, b) ? b : a;
  case CMPLT:
    return less(a, b);
  case CMPNE:
    return a != b;
  case CMPEQ:
    return a == b;
  case AND:
    return wrap(ua & ub);
  case OR:
    return wrap(ua | ub);
  case XOR:
    return wrap(ua ^ ub);
  case POW: {
    if (sgn && b < 0) { // a ** -n == 1 / a**n truncated toward zero
      if (a == 0) return std::nullopt;
      if (a == 1) return int64_t{1};
      if (a == -1) return int64_t{(b & 1) ? -1 : 1};
      return int64_t{0};
    }
    uint64_t r = 1, base = ua, e = ub;
    for (; e != 0; e >>= 1) {
      if (e & 1) r *= base;
      base *= base;
    }
    return wrap(r);
  }
  default:
    return std::nullopt; // FDIV and transcendentals are float ops
  }
}

std::optional<ConstValue> exec_float(Ops op, ScalarType s, double a_in, double b_in) {
  using enum Ops;
  const double a = round_to(a_in, s), b = round_to(b_in, s);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  double r;
  switch (op) {
  case CMPLT:
    return a < b;
  case CMPNE:
    return a != b; // NaN != NaN
  case CMPEQ:
    return a == b;
  case EXP2:
    r = std::exp2(a);
    break;
  case LOG2:
    r = std::log2(a);
    break; // log2(0) = -inf, log2(<0) = nan
  case SIN:
    r = std::sin(a);
    break; // sin(+-inf) = nan
  case SQRT:
    r = std::sqrt(a);
    break;
  case RECIPROCAL:
    r = 1.0 / a;
    break; // 1/+-0 = +-inf
  case NEG:
    r = -a;
    break;
  case TRUNC:
    r = std::trunc(a);
    break;
  case ADD:
    r = a + b;
    break;
  case SUB:
    r = a - b;
    break;
  case MUL:
    r = a * b;
    break;
  case FDIV:
    r = a / b;
    break;
  case POW:
    r = std::pow(a, b);
    break;
  case MAX:
    // NaN propagates (as torch.maximum); of two equal zeros +0 wins.
    if (std::isnan(a) || std::isnan(b))
      r = nan;
    else if (a < b)
      r = b;
    else if (b < a)
      r = a;
    else
      r = std::signbit(a) ? b : a;
    break;
  case IDIV:
    if (b == 0) return std::nullopt;
    r = std::trunc(a / b);
    break;
  case MOD:
    if (b == 0) return std::nullopt;
    r = std::fmod(a, b); // C remainder: sign of the dividend
    break;
  default:
    return std::nullopt; // bitwise ops and shifts have no float form
  }
  return round_to(r, s);
}

} // namespace

std::optional<ConstValue> exec_alu(Ops op, DType dtype, std::span<const ConstValue> operands) {
  if (!GroupOp::ALU.contains(op) || op == Ops::THREEFRY) return std::nullopt;
  if (operands.size() != arity(op))
    throw Error("exec_alu(" + std::string(op_name(op)) + "): takes " + std::to_string(arity(op)) +
                " operands, got " + std::to_string(operands.size()));
  if (dtype.is_ptr) return std::nullopt;
  const ScalarType s = dtype.scalar_type;
  if (op == Ops::WHERE) {
    const ConstValue& v = truthy(operands[0]) ? operands[1] : operands[2];
    if (s == ScalarType::Void) return std::nullopt;
    return cast_const(v, dtype.scalar());
  }
  if (op == Ops::MULACC) { // rounded after the multiply and after the add, as two ops
    const ConstValue ab[2] = {operands[0], operands[1]};
    auto prod = exec_alu(Ops::MUL, dtype, ab);
    if (!prod) return std::nullopt;
    const ConstValue pc[2] = {*prod, operands[2]};
    return exec_alu(Ops::ADD, dtype, pc);
  }
  if (op == Ops::DOT4) {
    if (s != ScalarType::Int32) return std::nullopt;
    const auto word = [](const ConstValue& v) {
      return static_cast<uint32_t>(static_cast<int32_t>(int_operand(v)));
    };
    const uint32_t a = word(operands[1]), b = word(operands[2]);
    uint32_t acc = word(operands[0]); // unsigned: the sum wraps, as vpdpbusd's does
    for (int k = 0; k < 4; ++k) {
      const int32_t ua = static_cast<int32_t>((a >> (8 * k)) & 0xff);
      const int32_t sb = static_cast<int8_t>(static_cast<uint8_t>(b >> (8 * k)));
      acc += static_cast<uint32_t>(ua * sb);
    }
    return ConstValue(static_cast<int64_t>(static_cast<int32_t>(acc)));
  }
  const ConstValue& x = operands[0];
  const ConstValue& y = operands.size() > 1 ? operands[1] : operands[0];
  if (s == ScalarType::Bool) return exec_bool(op, truthy(x), truthy(y));
  if (int_bits(s) > 0) return exec_int(op, s, int_operand(x), int_operand(y));
  if (DType(s).is_float()) return exec_float(op, s, float_operand(x), float_operand(y));
  return std::nullopt; // void
}

} // namespace tg
