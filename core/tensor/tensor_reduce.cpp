// Reductions (REDUCE nodes with keepdim shapes, squeezed after when asked), matmul, softmax.
#include <algorithm>
#include <numeric>

#include "gradient.hpp"
#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using detail::make;
using detail::normalize_axis;
using detail::with_gradient;

std::vector<int64_t> reduce_axes(const Tensor& t, std::vector<int64_t> axes, const char* op) {
  if (axes.empty()) {
    axes.resize(static_cast<size_t>(t.ndim()));
    std::iota(axes.begin(), axes.end(), 0);
    return axes;
  }
  for (int64_t& a : axes) a = detail::normalize_axis(a, t.ndim(), op);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw Error(std::string(op) + ": an axis is given twice");
  return axes;
}

Tensor reduce(const Tensor& t, Ops op, std::vector<int64_t> axes, bool keepdim, const char* name) {
  axes = reduce_axes(t, std::move(axes), name);
  Tensor r = t;
  if (t.ndim() > 0)
    r = make(UOp::make(Ops::REDUCE, t.dtype(), {t.uop()}, ReduceArg{op, axes}), {&t});
  if (keepdim) return r;
  Shape s;
  for (int64_t i = 0; i < t.ndim(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i))
      s.push_back(t.shape()[static_cast<size_t>(i)]);
  return r.reshape(s);
}

using detail::order_reversed;

} // namespace

Tensor Tensor::sum(std::vector<int64_t> axes, bool keepdim) const {
  const DType acc = detail::sum_acc_dtype(dtype());
  Tensor r = reduce(cast(acc), Ops::ADD, std::move(axes), keepdim, "sum");
  return dtype().is_float() ? r.cast(dtype()) : r;
}
Tensor Tensor::prod(std::vector<int64_t> axes, bool keepdim) const {
  const DType acc = detail::sum_acc_dtype(dtype());
  Tensor r = reduce(cast(acc), Ops::MUL, std::move(axes), keepdim, "prod");
  return dtype().is_float() ? r.cast(dtype()) : r;
}
Tensor Tensor::max(std::vector<int64_t> axes, bool keepdim) const {
  return reduce(*this, Ops::MAX, std::move(axes), keepdim, "max");
}
Tensor Tensor::min(std::vector<int64_t> axes, bool keepdim) const {
  return order_reversed(order_reversed(*this).max(std::move(axes), keepdim));
}
Tensor Tensor::mean(std::vector<int64_t> axes, bool keepdim) const {
  const std::vector<int64_t> ax = reduce_axes(*this, axes, "mean");
  int64_t n = 1;
  for (int64_t a : ax) n *= shape()[static_cast<size_t>(a)];
  const DType out = least_upper_float(dtype());
  Tensor s = cast(out).sum(ax, keepdim);
  return s.div(static_cast<double>(n)).cast(out);
}
Tensor Tensor::any(std::vector<int64_t> axes, bool keepdim) const {
  return reduce(cast(dtypes::bool_), Ops::MAX, std::move(axes), keepdim, "any");
}
Tensor Tensor::all(std::vector<int64_t> axes, bool keepdim) const {
  return logical_not().any(std::move(axes), keepdim).logical_not();
}

Tensor Tensor::argmax(std::optional<int64_t> axis, bool keepdim) const {
  if (!axis) {
    Tensor r = flatten().argmax(0, false);
    return keepdim ? r.reshape(Shape(static_cast<size_t>(ndim()), 1)) : r;
  }
  const int64_t ax = detail::normalize_axis(*axis, ndim(), "argmax");
  const int64_t n = ndim() == 0 ? int64_t{1} : int64_t{shape()[static_cast<size_t>(ax)]};
  if (n == 0) throw Error("argmax: cannot take the argmax of an empty axis " + std::to_string(ax));
  if (ndim() == 0) return Tensor::full({}, 0, dtypes::int32, device());
  // The first maximum has the largest n - i among the maxima.
  Tensor is_max = eq(max({ax}, true));
  if (dtype().is_float()) { // NaN counts as the largest (PyTorch): the first NaN wins
    Tensor nan = ne(*this);
    is_max = nan.any({ax}, true).where(nan, is_max);
  }
  Shape s(static_cast<size_t>(ndim()), 1);
  s[static_cast<size_t>(ax)] = n;
  Tensor countdown = Tensor::arange(n, dtypes::int32, device()).mul(-1).add(n).reshape(s);
  Tensor best = is_max.where(countdown, 0).max({ax}, keepdim);
  return best.mul(-1).add(n);
}
Tensor Tensor::argmin(std::optional<int64_t> axis, bool keepdim) const {
  return order_reversed(*this).argmax(axis, keepdim);
}

Tensor Tensor::softmax(int64_t axis) const {
  Tensor x = cast(least_upper_float(dtype()));
  const int64_t ax = normalize_axis(axis, ndim(), "softmax");
  Tensor m = x.sub(x.max({ax}, true));
  Tensor e = m.exp();
  const Tensor y = e.div(e.sum({ax}, true));
  // PyTorch's closed-form gradient y * (g - sum(g * y)): the graph's own (through the max
  // shift, exp and division) rounds to errors larger than the tiny gradients of a sum.
  return with_gradient(
      y, {x, y}, "softmax:" + std::to_string(ax),
      [ax](const Tensor& g, const std::vector<Tensor>& in) {
        const Tensor& s = in[1];
        return std::vector<Tensor>{s.mul(g.sub(g.mul(s).sum({ax}, true))), Tensor()};
      });
}

Tensor Tensor::matmul(const Tensor& o) const {
  if (ndim() == 0 || o.ndim() == 0)
    throw Error("matmul: both operands need at least 1 dimension, got shapes " +
                shape_str(shape()) + " and " + shape_str(o.shape()));
  Tensor a = ndim() == 1 ? reshape({1, shape()[0]}) : *this;
  Tensor b = o.ndim() == 1 ? o.reshape({o.shape()[0], 1}) : o;
  const sint k = a.shape().back(), kb = b.shape()[b.shape().size() - 2];
  if (!(k == kb))
    throw Error("matmul: inner dimensions differ: " + shape_str(shape()) + " @ " +
                shape_str(o.shape()) + " (" + k.str() + " != " + kb.str() + ")");
  // (..., n, k) -> (..., n, 1, k) and (..., k, m) -> (..., 1, m, k): multiply, sum over k.
  Shape as = a.shape();
  as.insert(as.end() - 1, 1);
  Tensor x = a.reshape(as);
  Tensor w = b.transpose(-1, -2);
  Shape ws = w.shape();
  ws.insert(ws.end() - 2, 1);
  w = w.reshape(ws);
  // Summed in the accumulator dtype, then back in the operands' dtype (tinygrad's dot).
  Tensor r = x.mul(w).sum({-1}).cast(least_upper_dtype({dtype(), o.dtype()}));
  if (ndim() == 1) r = r.squeeze(-2);
  if (o.ndim() == 1) r = r.squeeze(-1);
  return r;
}

namespace detail {

DType sum_acc_dtype(DType d) {
  if (d.is_bool() || d.is_int()) return dtypes::int64;
  switch (d.scalar_type) {
  case ScalarType::Float16:
  case ScalarType::BFloat16:
  case ScalarType::FP8E4M3:
  case ScalarType::FP8E5M2:
    return dtypes::float32;
  default:
    return d;
  }
}

Tensor order_reversed(const Tensor& t) {
  if (t.dtype().is_float()) return t.neg();
  if (t.dtype().is_bool()) return t.logical_not();
  return t.bitwise_not();
}

Tensor eq_nan(const Tensor& a, const Tensor& b) {
  if (!a.dtype().is_float()) return a.eq(b);
  return a.eq(b).bitwise_or(a.isnan().bitwise_and(b.isnan()));
}

Tensor max_to_first(const Tensor& t, const std::vector<int64_t>& axes) {
  const Tensor m = t.max(axes, true);
  if (!t.dtype().is_float() || t.ndim() == 0) return m;
  std::vector<int64_t> ax = reduce_axes(t, axes, "max");
  std::string name = "max_to_first";
  for (int64_t a : ax) name += ":" + std::to_string(a);
  register_vjp(name, [ax](const UOpPtr& grad, std::span<const UOpPtr> in) {
    const Tensor g = make(grad, {}), x = make(in[0], {}), mx = make(in[1], {});
    // Over the reduced axes the countdown n, n-1, ..., 1 in row-major order: the first
    // maximum holds the largest countdown among the maxima.
    Shape s(static_cast<size_t>(x.ndim()), 1);
    int64_t n = 1;
    for (int64_t a : ax) {
      s[static_cast<size_t>(a)] = x.shape()[static_cast<size_t>(a)];
      n *= x.size(a);
    }
    const Tensor countdown =
        Tensor::arange(static_cast<double>(n), 0, -1, dtypes::int32, x.device()).reshape(s);
    const Tensor best = eq_nan(x, mx).where(countdown, 0).max(ax, true);
    return std::vector<UOpPtr>{countdown.eq(best).where(g, 0).uop(), nullptr};
  });
  return make(custom_vjp(m.uop(), {t.uop(), m.uop()}, name), {&m, &t});
}

} // namespace detail

} // namespace tg
