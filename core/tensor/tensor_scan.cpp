// Variance, scans and reductions with indices, built from reduce, movement and
// elementwise ops so they stay lazy and fuse.
//
// Scans follow tinygrad's _split_cumalu: along an axis of n <= 512 each output is a reduce over
// a triangular mask of the inputs (an (n, n) view, never stored); a longer axis is cut into
// blocks of 256 scanned that way, the blocks' totals are scanned the same way (recursively) and
// added (multiplied, maxed) back, so an axis of n costs O(n * 256) work and a few kernels.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using detail::eq_nan;

constexpr int64_t kSplit = 256;

// `dim` in [0, ndim), where a 0-d tensor takes 0 and -1 as PyTorch (normalize_axis refuses -1
// there).
int64_t axis_of(int64_t dim, int64_t ndim, const char* name) {
  if (ndim == 0 && dim == -1) return 0;
  return detail::normalize_axis(dim, ndim, name);
}

Scalar scalar_of(const ConstValue& v) {
  return std::visit([](auto x) { return Scalar(x); }, v);
}

// The value that leaves `op` unchanged in dtype `d`.
Scalar identity(Ops op, DType d) {
  if (op == Ops::ADD) return d.is_float() ? Scalar(0.0) : Scalar(int64_t{0});
  if (op == Ops::MUL) return d.is_float() ? Scalar(1.0) : Scalar(int64_t{1});
  return scalar_of(dtype_min(d)); // MAX: -inf for floats
}

// Shape `s` with its last axis replaced by the sizes in `last`.
Shape with_last(const Shape& s, std::initializer_list<int64_t> last) {
  Shape r(s.begin(), s.end() - 1);
  for (int64_t v : last) r.push_back(v);
  return r;
}

// Pads the last axis by `before` elements of `value` in front.
Tensor pad_front(const Tensor& x, int64_t before, Scalar value) {
  std::vector<std::pair<int64_t, int64_t>> p(static_cast<size_t>(x.ndim()), {0, 0});
  p.back() = {before, 0};
  return x.pad(p, value);
}

// The range [b, e) of the last axis.
Tensor shrink_last(const Tensor& x, int64_t b, int64_t e) {
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t i = 0; i < x.ndim() - 1; ++i) r.emplace_back(0, x.size(i));
  r.emplace_back(b, e);
  return x.shrink(r);
}

// [i, j] = j <= i, an (n, n) bool computed from two aranges (no memory).
Tensor lower_triangle(int64_t n, const std::string& device) {
  Tensor a = Tensor::arange(n, dtypes::int32, device);
  return a.reshape({n, 1}).ge(a.reshape({1, n}));
}

Tensor combine(Ops op, const Tensor& a, const Tensor& b) {
  if (op == Ops::ADD) return a.add(b);
  if (op == Ops::MUL) return a.mul(b);
  return a.maximum(b);
}

Tensor reduce_last(Ops op, const Tensor& x) {
  if (op == Ops::ADD) return x.sum({-1});
  if (op == Ops::MUL) return x.prod({-1});
  return x.max({-1});
}

// Inclusive scan of the last axis by a triangular reduce (tinygrad's _cumalu).
Tensor scan_triangle(const Tensor& x, Ops op) {
  const int64_t n = x.size(-1);
  Tensor rows = x.unsqueeze(-2); // (..., 1, n): row i reads x[j] where j <= i
  return reduce_last(op, lower_triangle(n, x.device()).where(rows, identity(op, x.dtype())));
}

// Inclusive scan of the last axis, in blocks when it is long (tinygrad's _split_cumalu).
Tensor scan_last(const Tensor& x, Ops op) {
  const int64_t n = x.size(-1);
  if (n <= 2 * kSplit) return scan_triangle(x, op);
  const int64_t nb = (n + kSplit - 1) / kSplit, front = nb * kSplit - n;
  const Scalar id = identity(op, x.dtype());
  Tensor blocks = pad_front(x, front, id).reshape(with_last(x.shape(), {nb, kSplit}));
  Tensor in_block = scan_triangle(blocks, op);                           // (..., nb, 256)
  Tensor totals = shrink_last(in_block, kSplit - 1, kSplit).squeeze(-1); // (..., nb)
  // What every block starts from: the scan of the totals before it.
  Tensor before = shrink_last(pad_front(scan_last(totals, op), 1, id), 0, nb).unsqueeze(-1);
  Tensor r = combine(op, in_block, before).reshape(with_last(x.shape(), {nb * kSplit}));
  return shrink_last(r, front, nb * kSplit);
}

// a >= b where nan is the largest value (and nan >= nan).
Tensor ge_nan(const Tensor& a, const Tensor& b) {
  if (!a.dtype().is_float()) return a.ge(b);
  return a.isnan().bitwise_or(b.isnan().logical_not().bitwise_and(a.ge(b)));
}

// Running max of the last axis of `x` with the largest `g` (global index, ascending along the
// axis) among the elements equal to it: the last occurrence.
ValuesIndices scan_max_index(const Tensor& x, const Tensor& g) {
  const int64_t n = x.size(-1);
  if (n <= 2 * kSplit) {
    Tensor v = scan_triangle(x, Ops::MAX);
    Tensor hit =
        lower_triangle(n, x.device()).bitwise_and(eq_nan(x.unsqueeze(-2), v.unsqueeze(-1)));
    return {v, hit.where(g.unsqueeze(-2), int64_t{-1}).max({-1})};
  }
  const int64_t nb = (n + kSplit - 1) / kSplit, front = nb * kSplit - n;
  const Scalar lowest = identity(Ops::MAX, x.dtype());
  Tensor xb = pad_front(x, front, lowest).reshape(with_last(x.shape(), {nb, kSplit}));
  Tensor gb = pad_front(g, front, int64_t{-1}).reshape(with_last(g.shape(), {nb, kSplit}));
  auto [v1, i1] = scan_max_index(xb, gb); // within each block
  // The running max over whole blocks, shifted by one block: what precedes each block.
  auto [cv, ci] = scan_max_index(shrink_last(v1, kSplit - 1, kSplit).squeeze(-1),
                                 shrink_last(i1, kSplit - 1, kSplit).squeeze(-1));
  Tensor v0 = shrink_last(pad_front(cv, 1, lowest), 0, nb).unsqueeze(-1);
  Tensor i0 = shrink_last(pad_front(ci, 1, int64_t{-1}), 0, nb).unsqueeze(-1);
  Tensor take_block = ge_nan(v1, v0); // ties go to the later element
  Tensor v = take_block.where(v1, v0).reshape(with_last(x.shape(), {nb * kSplit}));
  Tensor i = take_block.where(i1, i0).reshape(with_last(x.shape(), {nb * kSplit}));
  return {shrink_last(v, front, nb * kSplit), shrink_last(i, front, nb * kSplit)};
}

// An order-reversing map (min(x) = rev(max(rev(x)))) that keeps nan and equality.
Tensor reverse_order(const Tensor& t) {
  if (t.dtype().is_float()) return t.neg();
  if (t.dtype().is_bool()) return t.logical_not();
  return t.bitwise_not();
}

ValuesIndices cummax_impl(const Tensor& t, int64_t dim, const char* name) {
  const int64_t ax = axis_of(dim, t.ndim(), name);
  if (t.ndim() == 0 || t.numel() == 0)
    return {t, Tensor::zeros(t.shape(), dtypes::int32, t.device())};
  // bool compares as int32 (MAX and >= on bool are fine, but the pads need a lowest value).
  Tensor x = (t.dtype().is_bool() ? t.cast(dtypes::int32) : t).transpose(ax, -1);
  const int64_t n = x.size(-1);
  Shape ones(static_cast<size_t>(x.ndim()), 1);
  ones.back() = n;
  Tensor g = Tensor::arange(n, dtypes::int32, t.device()).reshape(ones).expand(x.shape());
  auto [v, i] = scan_max_index(x, g);
  return {v.transpose(ax, -1).cast(t.dtype()), i.transpose(ax, -1)};
}

// Values and the index of the first element equal to them (nan equal to nan) along `dim`.
ValuesIndices extreme_dim(const Tensor& t, int64_t dim, bool keepdim, bool is_max,
                          const char* name) {
  const int64_t ax = axis_of(dim, t.ndim(), name);
  if (t.ndim() == 0) return {t, Tensor::zeros({}, dtypes::int32, t.device())};
  const int64_t n = t.size(ax);
  if (n == 0)
    throw Error(std::string(name) + ": cannot reduce dimension " + std::to_string(dim) +
                " of size 0 (shape " + shape_str(t.shape()) + "); there is no extreme to return");
  // The values' gradient goes to the returned index only (PyTorch's max(dim)).
  Tensor v = is_max ? detail::max_to_first(t, {ax})
                    : detail::order_reversed(detail::max_to_first(detail::order_reversed(t), {ax}));
  Shape s(static_cast<size_t>(t.ndim()), 1);
  s[static_cast<size_t>(ax)] = n;
  // The first hit has the largest n - j among the hits.
  Tensor countdown = Tensor::arange(n, dtypes::int32, t.device()).mul(-1).add(n).reshape(s);
  Tensor idx = eq_nan(t, v).where(countdown, int64_t{0}).max({ax}, keepdim).mul(-1).add(n);
  if (!keepdim) v = v.squeeze(ax);
  return {v, idx};
}

// Sorted, checked axes (empty = all) and the number of elements they hold.
std::vector<int64_t> var_axes(const Tensor& t, std::vector<int64_t> axes, int64_t& count,
                              const char* name) {
  if (!t.dtype().is_float())
    throw Error(std::string(name) + ": only floating point tensors have a variance, got " +
                t.dtype().name() + "; cast first");
  if (axes.empty())
    for (int64_t i = 0; i < t.ndim(); ++i) axes.push_back(i);
  for (int64_t& a : axes) a = axis_of(a, t.ndim(), name);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw Error(std::string(name) + ": axis " +
                std::to_string(*std::adjacent_find(axes.begin(), axes.end())) + " is given twice");
  count = 1;
  for (int64_t a : axes) count *= t.ndim() == 0 ? 1 : t.size(a);
  return axes;
}

} // namespace

// ---- variance -----------------------------------------------------------------------------

std::pair<Tensor, Tensor> Tensor::var_mean(std::vector<int64_t> axes, bool keepdim,
                                           double correction) const {
  int64_t n = 0;
  axes = var_axes(*this, std::move(axes), n, "var");
  // Half floats accumulate in float32, as their sums do.
  Tensor x = cast(detail::sum_acc_dtype(dtype()));
  Tensor m = x.mean(axes, true);
  Tensor ss = x.sub(m).square().sum(axes, keepdim);
  // Divided by max(0, N - correction): 0 gives inf (or nan for 0/0), as PyTorch.
  Tensor v = ss.div(std::max(0.0, static_cast<double>(n) - correction));
  if (!keepdim) m = x.mean(axes, false);
  return {v.cast(dtype()), m.cast(dtype())};
}
Tensor Tensor::var(std::vector<int64_t> axes, bool keepdim, double correction) const {
  return var_mean(std::move(axes), keepdim, correction).first;
}
std::pair<Tensor, Tensor> Tensor::std_mean(std::vector<int64_t> axes, bool keepdim,
                                           double correction) const {
  int64_t n = 0;
  axes = var_axes(*this, std::move(axes), n, "std");
  Tensor x = cast(detail::sum_acc_dtype(dtype()));
  Tensor m = x.mean(axes, true);
  Tensor v =
      x.sub(m).square().sum(axes, keepdim).div(std::max(0.0, static_cast<double>(n) - correction));
  if (!keepdim) m = x.mean(axes, false);
  return {v.sqrt().cast(dtype()), m.cast(dtype())};
}
Tensor Tensor::std(std::vector<int64_t> axes, bool keepdim, double correction) const {
  return std_mean(std::move(axes), keepdim, correction).first;
}

// ---- scans --------------------------------------------------------------------------------

Tensor Tensor::cumsum(int64_t dim) const {
  const int64_t ax = axis_of(dim, ndim(), "cumsum");
  const DType acc = detail::sum_acc_dtype(dtype());
  const DType out = dtype().is_float() ? dtype() : acc;
  if (ndim() == 0 || numel() == 0) return cast(out);
  Tensor r = scan_last(cast(acc).transpose(ax, -1), Ops::ADD).transpose(ax, -1);
  return r.cast(out);
}
Tensor Tensor::cumprod(int64_t dim) const {
  const int64_t ax = axis_of(dim, ndim(), "cumprod");
  const DType acc = detail::sum_acc_dtype(dtype());
  const DType out = dtype().is_float() ? dtype() : acc;
  if (ndim() == 0 || numel() == 0) return cast(out);
  Tensor r = scan_last(cast(acc).transpose(ax, -1), Ops::MUL).transpose(ax, -1);
  return r.cast(out);
}
ValuesIndices Tensor::cummax(int64_t dim) const { return cummax_impl(*this, dim, "cummax"); }
ValuesIndices Tensor::cummin(int64_t dim) const {
  auto [v, i] = cummax_impl(reverse_order(*this), dim, "cummin");
  return {reverse_order(v), i};
}

// ---- max and min with indices ---------------------------------------------------------------

ValuesIndices Tensor::max_dim(int64_t dim, bool keepdim) const {
  return extreme_dim(*this, dim, keepdim, true, "max_dim");
}
ValuesIndices Tensor::min_dim(int64_t dim, bool keepdim) const {
  return extreme_dim(*this, dim, keepdim, false, "min_dim");
}

} // namespace tg
