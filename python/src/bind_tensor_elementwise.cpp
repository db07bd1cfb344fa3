// Elementwise ops with tinygrad's names and keyword arguments, casts, and the operators
// (reflected and in-place forms included: `x += y` is tinygrad's self.assign(self + y)).
#include "bindings.hpp"
#include "tg/error.hpp"

namespace tgpy {

namespace {

using UnaryMethod = Tensor (Tensor::*)() const;

// `x <op>= y`: assigns into x's buffer and returns x, as tinygrad's __iadd__ and friends.
template <class F> auto in_place(F f) {
  return [f](py::object obj, py::handle x) {
    auto& self = obj.cast<Tensor&>();
    const Tensor value = (self.*f)(operand(self, x));
    self.assign(value);
    return obj;
  };
}
template <class F> auto reflected(F f) {
  return [f](const Tensor& self, py::handle x) { return (operand(self, x).*f)(self); };
}
template <class F> auto forward(F f) {
  return [f](const Tensor& self, py::handle x) { return (self.*f)(operand(self, x)); };
}

Tensor where_of(const Tensor& cond, py::handle x, py::handle y) {
  const bool xs = is_scalar(x) && !py::isinstance<Tensor>(x);
  const bool ys = is_scalar(y) && !py::isinstance<Tensor>(y);
  if (xs && ys) return cond.where(to_scalar(x), to_scalar(y));
  if (xs) return cond.where(to_scalar(x), operand(cond, y));
  if (ys) return cond.where(operand(cond, x), to_scalar(y));
  return cond.where(operand(cond, x), operand(cond, y));
}

std::optional<tg::Scalar> opt_scalar(py::handle h) {
  if (h.is_none()) return std::nullopt;
  return to_scalar(h);
}

} // namespace

void bind_tensor_elementwise(TensorClass& t) {
  // ---- unary ----------------------------------------------------------------------------
  const std::pair<const char*, UnaryMethod> unary[] = {
      {"neg", &Tensor::neg},
      {"abs", &Tensor::abs},
      {"exp", &Tensor::exp},
      {"exp2", &Tensor::exp2},
      {"log", &Tensor::log},
      {"log2", &Tensor::log2},
      {"sqrt", &Tensor::sqrt},
      {"rsqrt", &Tensor::rsqrt},
      {"sin", &Tensor::sin},
      {"cos", &Tensor::cos},
      {"tan", &Tensor::tan},
      {"asin", &Tensor::asin},
      {"acos", &Tensor::acos},
      {"atan", &Tensor::atan},
      {"sinh", &Tensor::sinh},
      {"cosh", &Tensor::cosh},
      {"tanh", &Tensor::tanh},
      {"relu", &Tensor::relu},
      {"sigmoid", &Tensor::sigmoid},
      {"reciprocal", &Tensor::reciprocal},
      {"square", &Tensor::square},
      {"trunc", &Tensor::trunc},
      {"floor", &Tensor::floor},
      {"ceil", &Tensor::ceil},
      {"round", &Tensor::round},
      {"logical_not", &Tensor::logical_not},
      {"bitwise_not", &Tensor::bitwise_not},
      {"silu", &Tensor::silu},
      {"swish", &Tensor::swish},
      {"mish", &Tensor::mish},
      {"selu", &Tensor::selu},
      {"hardswish", &Tensor::hardswish},
      {"hardsigmoid", &Tensor::hardsigmoid},
      {"relu6", &Tensor::relu6},
      {"softsign", &Tensor::softsign},
      {"logsigmoid", &Tensor::logsigmoid},
      {"erf", &Tensor::erf},
      {"sign", &Tensor::sign},
      {"isnan", &Tensor::isnan},
      {"isfinite", &Tensor::isfinite},
      {"contiguous", &Tensor::contiguous},
      {"clone", &Tensor::clone},
  };
  for (const auto& [name, f] : unary) t.def(name, f);

  // ---- unary with parameters --------------------------------------------------------------
  // tinygrad's gelu is the tanh approximation.
  t.def("gelu", &Tensor::gelu, py::arg("approximate") = "tanh");
  t.def("softplus", &Tensor::softplus, py::arg("beta") = 1.0, py::arg("threshold") = 20.0);
  t.def("elu", &Tensor::elu, py::arg("alpha") = 1.0);
  t.def("celu", &Tensor::celu, py::arg("alpha") = 1.0);
  t.def("leaky_relu", &Tensor::leaky_relu, py::arg("neg_slope") = 0.01);
  t.def("hardtanh", &Tensor::hardtanh, py::arg("min_val") = -1.0, py::arg("max_val") = 1.0);
  t.def("isinf", &Tensor::isinf, py::arg("detect_positive") = true,
        py::arg("detect_negative") = true);
  t.def("nan_to_num", &Tensor::nan_to_num, py::arg("nan") = 0.0, py::arg("posinf") = py::none(),
        py::arg("neginf") = py::none());
  // Scalar bounds, or tensor bounds (broadcast) when either is a Tensor.
  auto clamp = [](const Tensor& self, py::handle min_, py::handle max_) {
    if (py::isinstance<Tensor>(min_) || py::isinstance<Tensor>(max_)) {
      auto bound = [&](py::handle b) -> Tensor::OptTensor {
        if (b.is_none()) return {};
        return operand(self, b);
      };
      return self.clamp(bound(min_), bound(max_));
    }
    return self.clamp(opt_scalar(min_), opt_scalar(max_));
  };
  t.def("clamp", clamp, py::arg("min_") = py::none(), py::arg("max_") = py::none());
  t.def("clip", clamp, py::arg("min_") = py::none(), py::arg("max_") = py::none());

  // ---- binary (x: a Tensor, a scalar or data; reverse: x op self) ----------------------
  const std::pair<const char*, BinaryMethod> binaries[] = {
      {"add", &Tensor::add},
      {"sub", &Tensor::sub},
      {"mul", &Tensor::mul},
      {"idiv", &Tensor::idiv},
      {"mod", &Tensor::mod},
      {"maximum", &Tensor::maximum},
      {"minimum", &Tensor::minimum},
      {"bitwise_and", &Tensor::bitwise_and},
      {"bitwise_or", &Tensor::bitwise_or},
      {"bitwise_xor", &Tensor::bitwise_xor},
      {"xor", &Tensor::bitwise_xor},
      {"lshift", &Tensor::lshift},
      {"rshift", &Tensor::rshift},
      {"lt", &Tensor::lt},
      {"le", &Tensor::le},
      {"gt", &Tensor::gt},
      {"ge", &Tensor::ge},
      {"eq", &Tensor::eq},
      {"ne", &Tensor::ne},
      {"logical_and", &Tensor::logical_and},
      {"logical_or", &Tensor::logical_or},
      {"logical_xor", &Tensor::logical_xor},
      {"copysign", &Tensor::copysign},
      {"matmul", &Tensor::matmul},
      {"dot", &Tensor::matmul},
  };
  for (const auto& [name, f] : binaries)
    t.def(name, binary(f), py::arg("x"), py::arg("reverse") = false);
  t.def(
      "div",
      [](const Tensor& self, py::handle x, bool reverse, py::handle rounding_mode) {
        const Tensor o = operand(self, x);
        const Tensor& a = reverse ? o : self;
        const Tensor& b = reverse ? self : o;
        if (rounding_mode.is_none()) return a.div(b);
        const std::string mode = py::str(rounding_mode);
        if (mode == "trunc") return a.div_trunc(b);
        if (mode == "floor") return a.idiv(b);
        throw tg::Error("div: rounding_mode must be None, 'trunc' or 'floor', not '" + mode + "'");
      },
      py::arg("x"), py::arg("reverse") = false, py::arg("rounding_mode") = py::none());
  t.def(
      "pow",
      [](const Tensor& self, py::handle x, bool reverse) {
        if (!reverse && is_scalar(x) && !py::isinstance<Tensor>(x)) return self.pow(to_scalar(x));
        const Tensor o = operand(self, x);
        return reverse ? o.pow(self) : self.pow(o);
      },
      py::arg("x"), py::arg("reverse") = false);
  t.def("where", &where_of, py::arg("x"), py::arg("y"));
  t.def(
      "lerp",
      [](const Tensor& self, py::handle end, py::handle weight) {
        if (is_scalar(weight) && !py::isinstance<Tensor>(weight))
          return self.lerp(operand(self, end), to_scalar(weight));
        return self.lerp(operand(self, end), operand(self, weight));
      },
      py::arg("end"), py::arg("weight"));

  // ---- casts --------------------------------------------------------------------------
  t.def(
      "cast", [](const Tensor& self, py::handle dtype) { return self.cast(to_dtype(dtype)); },
      py::arg("dtype"));
  t.def(
      "bitcast", [](const Tensor& self, py::handle dtype) { return self.bitcast(to_dtype(dtype)); },
      py::arg("dtype"));
  const std::pair<const char*, tg::DType> casts[] = {
      {"float", tg::dtypes::float32},  {"half", tg::dtypes::float16},
      {"double", tg::dtypes::float64}, {"bfloat16", tg::dtypes::bfloat16},
      {"int", tg::dtypes::int32},      {"long", tg::dtypes::int64},
      {"short", tg::dtypes::int16},    {"char", tg::dtypes::int8},
      {"bool", tg::dtypes::bool_},
  };
  for (const auto& [name, d] : casts) {
    const tg::DType dt = d;
    t.def(name, [dt](const Tensor& self) { return self.cast(dt); });
  }

  // ---- operators ------------------------------------------------------------------------
  const std::tuple<const char*, const char*, const char*, BinaryMethod> operators[] = {
      {"__add__", "__radd__", "__iadd__", &Tensor::add},
      {"__sub__", "__rsub__", "__isub__", &Tensor::sub},
      {"__mul__", "__rmul__", "__imul__", &Tensor::mul},
      {"__truediv__", "__rtruediv__", "__itruediv__", &Tensor::div},
      {"__floordiv__", "__rfloordiv__", "__ifloordiv__", &Tensor::idiv},
      {"__mod__", "__rmod__", "__imod__", &Tensor::mod},
      {"__matmul__", "__rmatmul__", "__imatmul__", &Tensor::matmul},
      {"__and__", "__rand__", "__iand__", &Tensor::bitwise_and},
      {"__or__", "__ror__", "__ior__", &Tensor::bitwise_or},
      {"__xor__", "__rxor__", "__ixor__", &Tensor::bitwise_xor},
      {"__lshift__", "__rlshift__", "__ilshift__", &Tensor::lshift},
      {"__rshift__", "__rrshift__", "__irshift__", &Tensor::rshift},
  };
  for (const auto& [op, rop, iop, f] : operators) {
    t.def(op, forward(f), py::is_operator());
    t.def(rop, reflected(f), py::is_operator());
    t.def(iop, in_place(f), py::is_operator());
  }
  // A scalar exponent takes pow(Scalar), which keeps integer powers of negative bases exact.
  t.def(
      "__pow__",
      [](const Tensor& self, py::handle x) {
        if (is_scalar(x) && !py::isinstance<Tensor>(x)) return self.pow(to_scalar(x));
        return self.pow(operand(self, x));
      },
      py::is_operator());
  t.def("__rpow__", reflected(static_cast<BinaryMethod>(&Tensor::pow)), py::is_operator());
  t.def("__ipow__", in_place(static_cast<BinaryMethod>(&Tensor::pow)), py::is_operator());
  const std::pair<const char*, BinaryMethod> comparisons[] = {
      {"__lt__", &Tensor::lt}, {"__le__", &Tensor::le}, {"__gt__", &Tensor::gt},
      {"__ge__", &Tensor::ge}, {"__eq__", &Tensor::eq}, {"__ne__", &Tensor::ne},
  };
  for (const auto& [op, f] : comparisons) t.def(op, forward(f), py::is_operator());
  t.def("__neg__", &Tensor::neg);
  t.def("__abs__", &Tensor::abs);
  t.def("__invert__", &Tensor::bitwise_not);
}

} // namespace tgpy
