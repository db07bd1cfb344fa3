// Sorting: tinygrad's bitonic network built from reshape, shrink, flip, pad
// and where, so it stays lazy and runs as a fixed sequence of elementwise kernels.
//
// Unlike tinygrad, which sorts the values and then recovers indices with an O(n^2) matching
// of equal values, the network here carries (value, index) pairs and orders them by value,
// then by index. Every key is then distinct, so the result is the stable sort (equal values
// keep their input order, as torch.sort(stable=True), in both directions) and the indices
// cost nothing extra. Floats compare in the order PyTorch sorts them: nan after +inf (and
// equal to another nan), -0.0 equal to 0.0.
//
// The axis is padded to a power of two m = 2^k; stage s (1..k) merges sorted runs of 2^(s-1)
// into runs of 2^s: first each element of a run of 2^s against its mirror image, then
// half-cleaners at distances 2^(s-2), ..., 1. All comparators point the same way (the mirror
// step is the "flip" form of the bitonic merge), so no direction masks are needed. Each of
// the k(k+1)/2 steps is stored (contiguous), two kernels per step (values and indices); the values'
// gradient is stored per step too (contiguous_backward), or the backward fuses the network into
// exponentially large kernels.
#include <limits>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

// `dim` in [0, ndim), where a 0-d tensor takes 0 and -1 as PyTorch.
int64_t axis_of(int64_t dim, int64_t ndim, const char* name) {
  if (ndim == 0 && dim == -1) return 0;
  return detail::normalize_axis(dim, ndim, name);
}

struct Lanes {
  Tensor v, i;
};

// a < b with nan largest.
Tensor lt_total(const Tensor& a, const Tensor& b) {
  if (!a.dtype().is_float()) return a.lt(b);
  return a.lt(b).bitwise_or(b.isnan().bitwise_and(a.isnan().logical_not()));
}
Tensor eq_total(const Tensor& a, const Tensor& b) {
  if (!a.dtype().is_float()) return a.eq(b);
  return a.eq(b).bitwise_or(a.isnan().bitwise_and(b.isnan()));
}

// a and b (each (B, g, 1, h)) side by side along axis 2. Not Tensor::cat: that adds zero
// padding, which turns -0.0 into 0.0.
Tensor join(const Tensor& a, const Tensor& b) {
  const std::vector<std::pair<int64_t, int64_t>> after{{0, 0}, {0, 0}, {0, 1}, {0, 0}},
      before{{0, 0}, {0, 0}, {1, 0}, {0, 0}};
  Tensor first = Tensor::arange(2, dtypes::int32, a.device()).reshape({1, 1, 2, 1}).eq(0);
  return first.where(a.pad(after), b.pad(before));
}

// Whether `a` goes before `b`.
Tensor goes_before(const Lanes& a, const Lanes& b, bool descending) {
  Tensor lt = descending ? lt_total(b.v, a.v) : lt_total(a.v, b.v);
  return lt.bitwise_or(eq_total(a.v, b.v).bitwise_and(a.i.lt(b.i)));
}

// The lanes' halves along axis 2 of a (B, groups, 2, h) view.
Lanes half(const Lanes& x, int64_t which, int64_t groups, int64_t h) {
  const int64_t b = x.v.size(0);
  const std::vector<std::pair<int64_t, int64_t>> r{{0, b}, {0, groups}, {which, which + 1}, {0, h}};
  return {x.v.shrink(r), x.i.shrink(r)};
}

// One column of comparators: x (B, m) viewed as (B, m/(2h), 2, h); the upper half of every
// group against the lower half (mirrored when `mirror`), the earlier of each pair kept on top.
Lanes exchange(const Lanes& x, int64_t h, bool mirror, bool descending) {
  const int64_t b = x.v.size(0), m = x.v.size(1), groups = m / (2 * h);
  const Shape view{b, groups, 2, h};
  Lanes xs{x.v.reshape(view), x.i.reshape(view)};
  Lanes top = half(xs, 0, groups, h), bottom = half(xs, 1, groups, h);
  if (mirror) bottom = {bottom.v.flip({-1}), bottom.i.flip({-1})};
  Tensor swap = goes_before(bottom, top, descending);
  Lanes first{swap.where(bottom.v, top.v), swap.where(bottom.i, top.i)};
  Lanes second{swap.where(top.v, bottom.v), swap.where(top.i, bottom.i)};
  if (mirror) second = {second.v.flip({-1}), second.i.flip({-1})};
  const Shape flat{b, m};
  return {join(first.v, second.v).reshape(flat).contiguous().contiguous_backward(),
          join(first.i, second.i).reshape(flat).contiguous()};
}

// Sorts the rows of x (B, n).
Lanes sort_rows(const Tensor& x, bool descending) {
  const int64_t b = x.size(0), n = x.size(1);
  int64_t k = 0;
  while ((int64_t{1} << k) < n) ++k;
  const int64_t m = int64_t{1} << k;
  // Padding sorts after every real element: nan (ascending) or the lowest value (descending)
  // ties with real ones at most, and then loses on its larger index.
  const DType d = x.dtype();
  Scalar fill = 0;
  if (d.is_float())
    fill = descending ? -std::numeric_limits<double>::infinity()
                      : std::numeric_limits<double>::quiet_NaN();
  else
    fill = Scalar(as_int(descending ? dtype_min(d) : dtype_max(d)));
  // The input is stored before it is padded: besides being read by the first comparator
  // kernel anyway, a padded view of some fused inputs (Tensor::rand's) trips the kernel
  // optimizer today ("devectorize: address of the wrong width"; NOOPT=1 compiles it).
  Lanes lanes{x.contiguous().pad({{0, 0}, {0, m - n}}, fill),
              Tensor::arange(m, dtypes::int32, x.device()).reshape({1, m}).expand({b, m})};
  for (int64_t s = 1; s <= k; ++s) {
    lanes = exchange(lanes, int64_t{1} << (s - 1), true, descending);
    for (int64_t t = s - 2; t >= 0; --t)
      lanes = exchange(lanes, int64_t{1} << t, false, descending);
  }
  const std::vector<std::pair<int64_t, int64_t>> keep{{0, b}, {0, n}};
  return {lanes.v.shrink(keep), lanes.i.shrink(keep)};
}

} // namespace

ValuesIndices Tensor::sort(int64_t dim, bool descending) const {
  const int64_t ax = axis_of(dim, ndim(), "sort");
  if (ndim() == 0) return {*this, Tensor::zeros({}, dtypes::int32, device())};
  const int64_t n = size(ax);
  if (n <= 1 || numel() == 0) return {*this, Tensor::zeros(shape(), dtypes::int32, device())};
  // bool sorts as int32 (the padding needs a value past true).
  Tensor x = (dtype().is_bool() ? cast(dtypes::int32) : *this).transpose(ax, -1);
  const Shape moved = x.shape();
  Lanes r = sort_rows(x.reshape({numel() / n, n}), descending);
  return {r.v.reshape(moved).transpose(ax, -1).cast(dtype()), r.i.reshape(moved).transpose(ax, -1)};
}

Tensor Tensor::argsort(int64_t dim, bool descending) const { return sort(dim, descending).indices; }

ValuesIndices Tensor::topk(int64_t k, int64_t dim, bool largest, bool /*sorted*/) const {
  const int64_t ax = axis_of(dim, ndim(), "topk");
  const int64_t n = ndim() == 0 ? 1 : size(ax);
  if (k < 0 || k > n || (ndim() == 0 && k != 1))
    throw Error("topk: k (" + std::to_string(k) + ") is out of range for dimension " +
                std::to_string(dim) + " of size " + std::to_string(n) + " (shape " +
                shape_str(shape()) + "); need 0 <= k <= " + std::to_string(n));
  ValuesIndices s = sort(ax, largest);
  if (ndim() == 0 || k == n) return s;
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t i = 0; i < ndim(); ++i) r.emplace_back(0, i == ax ? k : size(i));
  return {s.values.shrink(r), s.indices.shrink(r)};
}

} // namespace tg
