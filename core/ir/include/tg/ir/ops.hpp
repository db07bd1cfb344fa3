#pragma once
// The one enum of IR operations, grouped as in tinygrad, and constexpr op sets for matching.
#include <cstdint>
#include <initializer_list>
#include <string_view>

namespace tg {

// clang-format off
enum class Ops : uint8_t {
  // defines: values that come from outside the kernel or name storage
  PARAM, DEFINE_VAR, DEFINE_LOCAL, DEFINE_REG, SPECIAL, BIND, UNIQUE, DEVICE,
  // structural: graph roots, ordering and control flow
  SINK, AFTER, GROUP, RANGE, END, BARRIER, IF, ENDIF, KERNEL, CALL,
  // memory
  INDEX, LOAD, STORE, BUFFER, COPY, ASSIGN, CONTIGUOUS, DETACH,
  // constants and vectors; IOTA (tensor level) is 0, 1, ..., n-1 along its one axis
  CONST, IOTA, VECTORIZE, GEP,
  // casts
  CAST, BITCAST,
  // unary ALU
  EXP2, LOG2, SIN, SQRT, RECIPROCAL, NEG, TRUNC,
  // binary ALU
  ADD, MUL, SHL, SHR, IDIV, MAX, MOD, CMPLT, CMPNE, CMPEQ, XOR, OR, AND, THREEFRY, SUB, FDIV, POW,
  // ternary ALU
  WHERE, MULACC,
  // movement (tensor level)
  RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP,
  // reduce
  REDUCE,
  // special
  WMMA, CUSTOM,
  // tensor level, appended so that the numbers of the ops above (which plugins see) stay:
  // the identity whose gradient is made contiguous (autograd)
  CONTIGUOUS_BACKWARD,
  // the value of src[0], whose gradients to src[1:] come from a registered rule instead of
  // src[0]'s graph (a convolution's backward as convolutions; autograd, gradient.cpp)
  CUSTOM_VJP,
  // src[0] (V, H) with src[2][t, h] added at row src[1][t, h] of column h, in the order of t
  // (src[1], src[2]: (T, H); a negative row counts from the end, a row outside -V..V-1 adds
  // nothing): the scatter-add behind index_add, scatter_reduce(sum) and a gather's gradient
  SCATTER_ADD,
  // ternary ALU, appended for the same reason: src[0] + the dot product of src[1]'s four bytes
  // read unsigned with src[2]'s four bytes read signed, all int32 and wrapping (x86's vpdpbusd):
  // the int8 dot product of quantized matmuls. Only a renderer with RendererCaps::has_dot4 sees
  // it; codegen decomposes it into shifts, masks, multiplies and adds for every other one.
  DOT4,
};
// clang-format on
inline constexpr int kNumOps = static_cast<int>(Ops::DOT4) + 1;
static_assert(kNumOps <= 128, "OpSet holds at most 128 ops");

std::string_view op_name(Ops op);

// A set of ops as a 128-bit mask: constexpr, cheap to test.
class OpSet {
public:
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Ops> ops) {
    for (Ops o : ops) bits_[idx(o) / 64] |= uint64_t{1} << (idx(o) % 64);
  }
  constexpr bool contains(Ops o) const { return (bits_[idx(o) / 64] >> (idx(o) % 64)) & 1; }
  constexpr OpSet operator|(const OpSet& o) const {
    OpSet r;
    r.bits_[0] = bits_[0] | o.bits_[0];
    r.bits_[1] = bits_[1] | o.bits_[1];
    return r;
  }
  constexpr OpSet operator-(const OpSet& o) const {
    OpSet r;
    r.bits_[0] = bits_[0] & ~o.bits_[0];
    r.bits_[1] = bits_[1] & ~o.bits_[1];
    return r;
  }
  constexpr bool empty() const { return bits_[0] == 0 && bits_[1] == 0; }
  constexpr bool operator==(const OpSet&) const = default;

private:
  static constexpr int idx(Ops o) { return static_cast<int>(o); }
  uint64_t bits_[2]{0, 0};
};

namespace GroupOp {
using enum Ops;
inline constexpr OpSet Unary{EXP2, LOG2, SIN, SQRT, RECIPROCAL, NEG, TRUNC};
inline constexpr OpSet Binary{ADD,   MUL, SHL, SHR, IDIV,     MAX, MOD,  CMPLT, CMPNE,
                              CMPEQ, XOR, OR,  AND, THREEFRY, SUB, FDIV, POW};
inline constexpr OpSet Ternary{WHERE, MULACC, DOT4};
inline constexpr OpSet ALU = Unary | Binary | Ternary;
inline constexpr OpSet Comparison{CMPLT, CMPNE, CMPEQ};
// a op b == b op a: the matcher tries both source orders for these.
inline constexpr OpSet Commutative{ADD, MUL, MAX, CMPNE, CMPEQ, XOR, AND, OR};
// (a op b) op c == a op (b op c) for integers.
inline constexpr OpSet Associative{ADD, MUL, AND, OR, MAX};
// a op a == a
inline constexpr OpSet Idempotent{OR, AND, MAX};
inline constexpr OpSet Movement{RESHAPE, PERMUTE, EXPAND, PAD, SHRINK, FLIP};
inline constexpr OpSet Defines{PARAM, DEFINE_VAR, DEFINE_LOCAL, DEFINE_REG};
inline constexpr OpSet Buffer{LOAD, STORE, CONST, DEFINE_VAR};
// f(a) or f(a, b) with f(0) == 0 and f(0, 0) == 0: safe to pad with zeros.
inline constexpr OpSet UnsafePad{RECIPROCAL, LOG2, EXP2, IDIV, POW};
} // namespace GroupOp

} // namespace tg
