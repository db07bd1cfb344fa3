#include "tg/ir/ops.hpp"

#include <array>

namespace tg {

std::string_view op_name(Ops op) {
  // clang-format off
  static constexpr std::array<std::string_view, kNumOps> names{
    "PARAM", "DEFINE_VAR", "DEFINE_LOCAL", "DEFINE_REG", "SPECIAL", "BIND", "UNIQUE", "DEVICE",
    "SINK", "AFTER", "GROUP", "RANGE", "END", "BARRIER", "IF", "ENDIF", "KERNEL", "CALL",
    "INDEX", "LOAD", "STORE", "BUFFER", "COPY", "ASSIGN", "CONTIGUOUS", "DETACH",
    "CONST", "IOTA", "VECTORIZE", "GEP",
    "CAST", "BITCAST",
    "EXP2", "LOG2", "SIN", "SQRT", "RECIPROCAL", "NEG", "TRUNC",
    "ADD", "MUL", "SHL", "SHR", "IDIV", "MAX", "MOD", "CMPLT", "CMPNE", "CMPEQ", "XOR", "OR",
    "AND", "THREEFRY", "SUB", "FDIV", "POW",
    "WHERE", "MULACC",
    "RESHAPE", "PERMUTE", "EXPAND", "PAD", "SHRINK", "FLIP",
    "REDUCE",
    "WMMA", "CUSTOM",
    "CONTIGUOUS_BACKWARD", "CUSTOM_VJP", "SCATTER_ADD",
    "DOT4",
  };
  // clang-format on
  auto i = static_cast<size_t>(op);
  return i < names.size() ? names[i] : std::string_view("?");
}

} // namespace tg
