// Debug printing: node lines, graph dumps and the expression form of symbolic arithmetic.
#include "tg/ir/print.hpp"

#include <unordered_map>

#include "tg/ir/shape.hpp"

namespace tg {

std::string arg_to_string(const Arg& a) {
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>)
          return "None";
        else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> ||
                           std::is_same_v<T, double>)
          return to_string(ConstValue(x));
        else if constexpr (std::is_same_v<T, std::string>)
          return "'" + x + "'";
        else if constexpr (std::is_same_v<T, Ops>)
          return "Ops." + std::string(op_name(x));
        else if constexpr (std::is_same_v<T, RangeArg>)
          return "(" + std::to_string(x.id) + ", " + std::string(axis_type_name(x.type)) + ")";
        else if constexpr (std::is_same_v<T, VarArg>)
          return "('" + x.name + "', " + std::to_string(x.min) + ", " + std::to_string(x.max) + ")";
        else if constexpr (std::is_same_v<T, ReduceArg>)
          return "(Ops." + std::string(op_name(x.op)) + ", " +
                 shape_str(Shape(x.axes.begin(), x.axes.end())) + ")";
        else if constexpr (std::is_same_v<T, Shape>)
          return shape_str(x);
        else {
          std::string r = "(";
          for (size_t i = 0; i < x.size(); ++i)
            r += (i ? ", (" : "(") + x[i].first.str() + ", " + x[i].second.str() + ")";
          return r + ")";
        }
      },
      a);
}

std::string UOp::str() const {
  std::string r = "UOp(Ops." + std::string(op_name(op)) + ", " + dtype.name();
  if (!std::holds_alternative<std::monostate>(arg)) r += ", arg=" + arg_to_string(arg);
  if (!src.empty()) {
    r += ", src=(";
    for (size_t i = 0; i < src.size(); ++i) r += (i ? ", " : "") + std::string(op_name(src[i]->op));
    r += ")";
  }
  return r + ")";
}

std::string print_graph(const UOpPtr& root) {
  std::unordered_map<const UOp*, size_t> ids;
  std::string out;
  for (const UOp* u : root->toposort()) {
    size_t id = ids.size();
    ids[u] = id;
    char head[64];
    std::snprintf(head, sizeof head, "%4zu %-12s ", id, std::string(op_name(u->op)).c_str());
    std::string line = head + u->dtype.name();
    line.resize(std::max<size_t>(line.size() + 1, 36), ' ');
    line += "(";
    for (size_t i = 0; i < u->src.size(); ++i)
      line += (i ? ", " : "") + std::to_string(ids.at(u->src[i].get()));
    line += ")";
    if (!std::holds_alternative<std::monostate>(u->arg)) line += "  " + arg_to_string(u->arg);
    out += line + "\n";
  }
  return out;
}

namespace {

const char* infix(Ops op) {
  switch (op) {
  case Ops::ADD:
    return "+";
  case Ops::SUB:
    return "-";
  case Ops::MUL:
    return "*";
  case Ops::IDIV:
    return "//";
  case Ops::FDIV:
    return "/";
  case Ops::MOD:
    return "%";
  case Ops::CMPLT:
    return "<";
  case Ops::CMPNE:
    return "!=";
  case Ops::CMPEQ:
    return "==";
  case Ops::AND:
    return "&";
  case Ops::OR:
    return "|";
  case Ops::XOR:
    return "^";
  case Ops::SHL:
    return "<<";
  case Ops::SHR:
    return ">>";
  default:
    return nullptr;
  }
}

} // namespace

std::string render_expr(const UOpPtr& root) {
  // Iterative over the toposort so that deep expressions cannot overflow the stack.
  std::unordered_map<const UOp*, std::string> s;
  for (const UOp* u : root->toposort()) {
    auto at = [&](size_t i) -> const std::string& { return s.at(u->src[i].get()); };
    std::string r;
    if (u->op == Ops::CONST)
      r = arg_to_string(u->arg);
    else if (u->op == Ops::DEFINE_VAR)
      r = std::get<VarArg>(u->arg).name;
    else if (u->op == Ops::RANGE)
      r = "r" + std::to_string(std::get<RangeArg>(u->arg).id);
    else if (u->op == Ops::SPECIAL && std::holds_alternative<std::string>(u->arg))
      r = std::get<std::string>(u->arg);
    else if (const char* sym = infix(u->op); sym && u->src.size() == 2)
      r = "(" + at(0) + sym + at(1) + ")";
    else if (u->op == Ops::NEG)
      r = "(-" + at(0) + ")";
    else if (u->op == Ops::MAX)
      r = "max(" + at(0) + ", " + at(1) + ")";
    else if (u->op == Ops::WHERE)
      r = "(" + at(0) + "?" + at(1) + ":" + at(2) + ")";
    else if (u->op == Ops::CAST)
      r = "(" + u->dtype.name() + ")" + at(0);
    else if (u->op == Ops::BIND)
      r = at(0);
    else {
      r = std::string(op_name(u->op)) + "(";
      for (size_t i = 0; i < u->src.size(); ++i) r += (i ? ", " : "") + at(i);
      r += ")";
    }
    s[u] = std::move(r);
  }
  return s.at(root.get());
}

} // namespace tg
