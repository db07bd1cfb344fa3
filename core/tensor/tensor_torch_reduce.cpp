// Reductions PyTorch has and tinygrad does not: norms, median, quantile, nan-aware sums,
// count_nonzero, logcumsumexp, diff. Each is composed of sort/reduce/movement ops.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

using detail::normalize_axis;

std::string num_str(double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

void require_float(const Tensor& t, const std::string& op) {
  if (!t.dtype().is_float())
    throw Error(op + ": expected a float tensor, got " + t.dtype().name() + "; cast it first");
}

// The dims as non-negative axes, each once (empty: all axes).
std::vector<int64_t> axes_of(const Tensor& t, const std::vector<int64_t>& dims,
                             const std::string& op) {
  std::vector<int64_t> r;
  for (int64_t d : dims) {
    const int64_t a = normalize_axis(d, t.ndim(), op);
    if (std::find(r.begin(), r.end(), a) != r.end())
      throw Error(op + ": dimension " + std::to_string(d) + " appears more than once");
    r.push_back(a);
  }
  return r;
}

// The k-th element along axis ax (keeping the axis, size 1).
Tensor take_at(const Tensor& t, int64_t ax, int64_t k) {
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t i = 0; i < t.ndim(); ++i) r.emplace_back(0, i == ax ? k + 1 : t.size(i));
  r[static_cast<size_t>(ax)].first = k;
  return t.shrink(r);
}

// s^(1/p) of a sum of |x|^p, with gradient 0 where the sum is 0 (PyTorch's norm backward
// masks a zero norm; the plain root's derivative is inf there, and inf * 0 is nan).
Tensor root_of_sum(const Tensor& s, double p) {
  Tensor zero = s.eq(0.0);
  Tensor safe = zero.where(s.scalar_like(1.0), s);
  Tensor r = p == 2 ? safe.sqrt() : safe.pow(1.0 / p);
  return zero.where(s.scalar_like(0.0), r);
}

} // namespace

// ---- norms ----------------------------------------------------------------------------------

Tensor Tensor::vector_norm(double ord, std::vector<int64_t> dim, bool keepdim) const {
  require_float(*this, "vector_norm");
  if (std::isnan(ord)) throw Error("vector_norm: ord must be a number, got nan");
  const std::vector<int64_t> axes = axes_of(*this, dim, "vector_norm");
  Tensor a = abs();
  if (ord == kInf) return a.max(axes, keepdim);
  if (ord == -kInf) return a.min(axes, keepdim);
  if (ord == 0) return ne(0.0).cast(dtype()).sum(axes, keepdim);
  if (ord == 1) return a.sum(axes, keepdim);
  if (ord == 2) return root_of_sum(mul(*this).sum(axes, keepdim), 2);
  return root_of_sum(a.pow(ord).sum(axes, keepdim), ord);
}

Tensor Tensor::matrix_norm(const std::string& ord, std::vector<int64_t> dim, bool keepdim) const {
  require_float(*this, "matrix_norm");
  if (dim.size() != 2)
    throw Error("matrix_norm: dim must name two axes, got " + std::to_string(dim.size()));
  const std::vector<int64_t> axes = axes_of(*this, dim, "matrix_norm");
  if (ndim() < 2)
    throw Error("matrix_norm: the input must have at least 2 dimensions, got shape " +
                shape_str(shape()));
  if (ord == "fro") return root_of_sum(mul(*this).sum(axes, keepdim), 2);
  if (ord == "nuc")
    throw Error("matrix_norm: ord \"nuc\" (the sum of singular values) needs an SVD, which "
                "tinygrad-cpp does not have; use \"fro\", 1, -1, inf or -inf");
  throw Error("matrix_norm: ord must be \"fro\" or \"nuc\" (or a number), got \"" + ord + "\"");
}

Tensor Tensor::matrix_norm(double ord, std::vector<int64_t> dim, bool keepdim) const {
  require_float(*this, "matrix_norm");
  if (dim.size() != 2)
    throw Error("matrix_norm: dim must name two axes, got " + std::to_string(dim.size()));
  if (ndim() < 2)
    throw Error("matrix_norm: the input must have at least 2 dimensions, got shape " +
                shape_str(shape()));
  const std::vector<int64_t> axes = axes_of(*this, dim, "matrix_norm");
  if (ord == 2 || ord == -2)
    throw Error("matrix_norm: ord " + num_str(ord) +
                " (the largest/smallest singular value) needs an SVD, which tinygrad-cpp does "
                "not have; use \"fro\", 1, -1, inf or -inf");
  if (ord != 1 && ord != -1 && ord != kInf && ord != -kInf)
    throw Error("matrix_norm: ord must be \"fro\", \"nuc\", 1, -1, 2, -2, inf or -inf, got " +
                num_str(ord));
  // ord +-1: max/min over columns of the absolute column sums (sum over rows, axes[0]);
  // ord +-inf: over rows of the row sums (sum over axes[1]).
  const bool cols = ord == 1 || ord == -1;
  const int64_t sum_ax = cols ? axes[0] : axes[1], other = cols ? axes[1] : axes[0];
  Tensor s = abs().sum({sum_ax}, true);
  Tensor r = ord > 0 ? s.max({other}, true) : s.min({other}, true);
  if (keepdim) return r;
  return r.squeeze(std::max(axes[0], axes[1])).squeeze(std::min(axes[0], axes[1]));
}

Tensor Tensor::norm(double p, std::vector<int64_t> dim, bool keepdim) const {
  return vector_norm(p, std::move(dim), keepdim);
}

Tensor Tensor::norm(const std::string& p, std::vector<int64_t> dim, bool keepdim) const {
  if (p == "fro") {
    require_float(*this, "norm");
    return root_of_sum(mul(*this).sum(axes_of(*this, dim, "norm"), keepdim), 2);
  }
  if (p == "nuc")
    return matrix_norm("nuc", dim.empty() ? std::vector<int64_t>{-2, -1} : dim, keepdim);
  throw Error("norm: p must be a number, \"fro\" or \"nuc\", got \"" + p + "\"");
}

// ---- order statistics -------------------------------------------------------------------------

ValuesIndices Tensor::median(int64_t dim, bool keepdim) const {
  const int64_t ax = normalize_axis(dim, ndim(), "median");
  if (ndim() == 0) return {*this, Tensor::zeros({}, dtypes::int32, device())};
  const int64_t n = size(ax);
  if (n == 0)
    throw Error("median: dimension " + std::to_string(dim) + " of shape " + shape_str(shape()) +
                " is empty; there is no median");
  // Sorted, NaN sorts last: the answer sits at (n - 1) / 2, or at the first NaN if any.
  ValuesIndices s = sort(ax);
  Tensor pos = Tensor::full({}, (n - 1) / 2, dtypes::int32, device());
  if (dtype().is_float()) {
    Tensor nans = isnan().sum({ax}, true).cast(dtypes::int32);
    pos = nans.gt(0).where(nans.mul(-1).add(n), pos);
  } else {
    Shape one = shape();
    one[static_cast<size_t>(ax)] = 1;
    pos = pos.reshape(Shape(static_cast<size_t>(ndim()), 1)).expand(one);
  }
  Tensor v = s.values.gather(ax, pos), i = s.indices.gather(ax, pos);
  if (!keepdim) v = v.squeeze(ax), i = i.squeeze(ax);
  return {v, i};
}

Tensor Tensor::median() const {
  if (numel() == 0)
    return Tensor::full({}, std::numeric_limits<double>::quiet_NaN(), least_upper_float(dtype()),
                        device());
  return flatten().median(0).values;
}

Tensor Tensor::quantile(const std::vector<double>& q, std::optional<int64_t> dim, bool keepdim,
                        const std::string& interpolation) const {
  require_float(*this, "quantile");
  static const std::vector<std::string> modes{"linear", "lower", "higher", "nearest", "midpoint"};
  if (std::find(modes.begin(), modes.end(), interpolation) == modes.end())
    throw Error("quantile: interpolation must be linear, lower, higher, nearest or midpoint, "
                "got \"" +
                interpolation + "\"");
  for (double v : q)
    if (!(v >= 0 && v <= 1)) throw Error("quantile: q must be in [0, 1], got " + num_str(v));
  if (q.empty()) throw Error("quantile: q is empty");
  Tensor x = dim ? *this : flatten();
  if (x.ndim() == 0) x = x.reshape({1});
  const int64_t ax = dim ? normalize_axis(*dim, ndim(), "quantile") : 0;
  const int64_t n = x.size(ax);
  if (n == 0) throw Error("quantile: the input " + shape_str(shape()) + " is empty along the dim");
  // Sorted with NaN last: a NaN anywhere in the slice makes every quantile of it NaN.
  Tensor sorted = x.sort(ax).values;
  Tensor any_nan = x.isnan().any({ax}, true);
  std::vector<Tensor> outs;
  for (double v : q) {
    const double rank = v * static_cast<double>(n - 1);
    const auto lo = static_cast<int64_t>(std::floor(rank)),
               hi = static_cast<int64_t>(std::ceil(rank));
    const double w = rank - static_cast<double>(lo);
    Tensor a = take_at(sorted, ax, lo), b = take_at(sorted, ax, hi);
    Tensor r;
    if (interpolation == "lower")
      r = a;
    else if (interpolation == "higher")
      r = b;
    else if (interpolation == "nearest")
      r = std::nearbyint(rank) == static_cast<double>(lo) ? a : b;
    else if (interpolation == "midpoint")
      r = lo == hi ? a : a.add(b).mul(0.5);
    else
      r = w == 0 ? a : a.lerp(b, w);
    r = any_nan.where(r.scalar_like(std::numeric_limits<double>::quiet_NaN()), r);
    if (!dim && keepdim)
      r = r.reshape(Shape(static_cast<size_t>(ndim()), 1));
    else if (!keepdim)
      r = dim ? r.squeeze(ax) : r.reshape({});
    outs.push_back(r);
  }
  return Tensor::stack(outs, 0);
}

Tensor Tensor::quantile(double q, std::optional<int64_t> dim, bool keepdim,
                        const std::string& interpolation) const {
  return quantile(std::vector<double>{q}, dim, keepdim, interpolation).index(0);
}

// ---- sums and counts ----------------------------------------------------------------------------

Tensor Tensor::nansum(std::vector<int64_t> dim, bool keepdim) const {
  const std::vector<int64_t> axes = axes_of(*this, dim, "nansum");
  if (!dtype().is_float()) return sum(axes, keepdim);
  return isnan().where(scalar_like(0.0), *this).sum(axes, keepdim);
}

Tensor Tensor::nanmean(std::vector<int64_t> dim, bool keepdim) const {
  require_float(*this, "nanmean");
  const std::vector<int64_t> axes = axes_of(*this, dim, "nanmean");
  Tensor count = isnan().logical_not().sum(axes, keepdim).cast(dtype());
  return nansum(dim, keepdim).div(count);
}

Tensor Tensor::count_nonzero(std::vector<int64_t> dim) const {
  return ne(scalar_like(int64_t{0})).sum(axes_of(*this, dim, "count_nonzero"));
}

// ---- scans
// ---------------------------------------------------------------------------------------

Tensor Tensor::logcumsumexp(int64_t dim) const {
  // tinygrad's: out[i] = c[i] + log(sum_{j <= i} exp(x[j] - c[i])) with c the running maximum
  // (detached: the shift cancels in value and gradient), every term <= 1 and the largest 1. The
  // j > i terms are masked before exp, so neither value nor gradient sees exp of a large x.
  const int64_t ax = normalize_axis(dim, ndim(), "logcumsumexp");
  Tensor xf = cast(least_upper_float(dtype()));
  if (ndim() == 0 || numel() == 0) return xf;
  const int64_t n = size(ax);
  Tensor x = xf.transpose(ax, -1);                   // (..., n)
  Tensor c = x.detach().cummax(-1).values;           // (..., n)
  c = c.abs().eq(kInf).where(c.scalar_like(0.0), c); // all -inf (or an inf) so far: no shift
  Tensor rows = x.unsqueeze(-2);                     // (..., 1, n): j
  Tensor shift = c.unsqueeze(-1);                    // (..., n, 1): i
  Tensor ji = Tensor::arange(n, dtypes::int32, device());
  Tensor mask = ji.reshape({1, n}).le(ji.reshape({n, 1})); // j <= i
  Tensor e = mask.where(rows.sub(shift), rows.scalar_like(-kInf)).exp();
  Tensor r = e.sum({-1}).log().add(c);
  return r.transpose(ax, -1);
}

Tensor Tensor::diff(int64_t n, int64_t dim, const OptTensor& prepend,
                    const OptTensor& append) const {
  if (n < 0) throw Error("diff: order n must be non-negative, got " + std::to_string(n));
  if (ndim() == 0) throw Error("diff: expects a tensor with at least one dimension");
  const int64_t ax = normalize_axis(dim, ndim(), "diff");
  std::vector<Tensor> parts;
  if (prepend) parts.push_back(*prepend);
  parts.push_back(*this);
  if (append) parts.push_back(*append);
  Tensor x = parts.size() == 1 ? *this : Tensor::cat(parts, ax);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t len = x.size(ax);
    if (len == 0) break;
    Tensor hi = x.narrow(ax, 1, len - 1), lo = x.narrow(ax, 0, len - 1);
    x = x.dtype().is_bool() ? hi.ne(lo) : hi.sub(lo);
  }
  return x;
}

} // namespace tg
