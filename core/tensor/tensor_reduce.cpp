// Reductions (REDUCE nodes with keepdim shapes, squeezed after when asked), matmul, softmax.
#include <algorithm>
#include <numeric>

#include "gradient.hpp"
#include "tensor_internal.hpp"
#include "tg/codegen_opt.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/runner_cache.hpp"

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

namespace {

// The width of the column panels b of a @ b is first copied into ([..., n / w, k, w]), or 0 to
// read b in place. A CPU's matmul tile reads two vector registers of a row of b per k; in place,
// the rows of one tile's panel are n floats apart, and at a power of two they map to a few
// cache sets and evict each other, so every tile of a streams b from memory again (a 1024
// float32 matmul at 0.44x OpenBLAS). Packed, a panel's k rows are one contiguous run that stays
// in L2 while the tiles of a pass over it. The copy reads and writes b once, so it pays from a
// few dozen rows of a on: 64 here. Only float32 (the tile's lanes), concrete sizes, and n of at
// least four panels (one or two panels are read whole from cache anyway); a last partial panel
// is padded with zero columns (BERT's 30522-word logits: 62 -> 92 GFLOP/s).
// `t` summed over the leading axes `shape` lacks and the axes where `shape` is 1: a product's
// gradient back to an operand that was broadcast over batch axes.
Tensor sum_to_shape(Tensor t, const Shape& shape) {
  while (t.ndim() > static_cast<int64_t>(shape.size())) t = t.sum({0});
  std::vector<int64_t> axes;
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] == 1 && t.shape()[i] != 1) axes.push_back(static_cast<int64_t>(i));
  return axes.empty() ? t : t.sum(axes, true);
}

int64_t matmul_panel(const Tensor& a, const Tensor& b) {
  if (!knobs::CPU_MATMUL_PACK || a.dtype() != dtypes::float32 || b.dtype() != dtypes::float32 ||
      a.ndim() < 2 || b.ndim() < 2)
    return 0;
  for (const Tensor* t : {&a, &b})
    for (const sint& d : t->shape())
      if (!d.is_int()) return 0;
  // Rows of a each panel meets: a's leading dimensions too when b is one matrix for all.
  int64_t rows = a.shape()[a.ndim() - 2];
  if (b.ndim() == 2)
    for (size_t i = 0; i + 2 < a.shape().size(); ++i) rows *= int64_t{a.shape()[i]};
  const int64_t k = b.shape()[b.ndim() - 2], n = b.shape()[b.ndim() - 1];
  if (rows < 64 || k < 16) return 0;
  int64_t w = 0;
  try {
    w = matmul_panel_width(renderer_caps(a.device()));
  } catch (const Error&) {
    return 0; // a device that cannot open here says why when the product is realized
  }
  return w > 0 && n >= 4 * w ? w : 0;
}

} // namespace

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
  if (const int64_t w = matmul_panel(a, b)) {
    // b (..., k, n) -> panels (..., n / w, k, w), stored; a (..., m, k) -> (..., m, 1, k, 1)
    // times panels (..., 1, n / w, k, w), summed over k: (..., m, n / w, w) is (..., m, n).
    // Both operands are at least 2-D with n >= 4w here, so nothing is squeezed after. An n
    // that w does not divide (BERT's 30522 words) is padded with zero columns, cut off after.
    const int64_t n = b.shape().back(), padded = (n + w - 1) / w * w;
    Tensor bp = b;
    if (padded != n) {
      std::vector<std::pair<int64_t, int64_t>> pads(b.shape().size(), {0, 0});
      pads.back() = {0, padded - n};
      bp = b.pad(pads);
    }
    Shape split = bp.shape();
    split.back() = padded / w;
    split.push_back(w);
    const auto nd = static_cast<int64_t>(split.size());
    Shape order;
    for (int64_t i = 0; i + 3 < nd; ++i) order.push_back(i);
    order.insert(order.end(), {nd - 2, nd - 3, nd - 1});
    const Tensor panel_view = bp.reshape(split).permute(order);
    Shape ps = panel_view.shape();
    ps.insert(ps.end() - 3, 1);
    const Tensor panels = panel_view.contiguous().reshape(ps);
    Shape xs = a.shape();
    xs.insert(xs.end() - 1, 1);
    xs.push_back(1);
    Tensor r = a.reshape(xs).mul(panels).sum({-2});
    Shape rs = r.shape();
    rs.pop_back();
    rs.back() = padded;
    r = r.reshape(rs);
    if (padded != n) {
      PadArg keep;
      for (const sint& d : rs) keep.push_back({sint(0), d});
      keep.back().second = sint(n);
      r = r.shrink(keep);
    }
    // The gradients are the plain products g @ b.T and a.T @ g (summed over broadcast batch
    // axes), not the graph's own: that reads g through the panels' layout, a reduce over two
    // axes that no tile fits (a BERT step's input gradients ran at 19 GFLOP/s).
    return with_gradient(r, {a, b}, "matmul_panels",
                         [](const Tensor& g, const std::vector<Tensor>& in) {
                           return std::vector<Tensor>{
                               sum_to_shape(g.matmul(in[1].transpose(-1, -2)), in[0].shape()),
                               sum_to_shape(in[0].transpose(-1, -2).matmul(g), in[1].shape())};
                         });
  }
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
