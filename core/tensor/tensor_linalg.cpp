// Linear algebra PyTorch has beyond matmul: trace, outer, kron, cross, tensordot, bmm, cdist.
// Each is movement ops around a multiply-and-reduce (or matmul), so it fuses and autograd
// covers it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using detail::normalize_axis;

void require_ndim(const Tensor& t, int64_t n, const std::string& op, const std::string& what) {
  if (t.ndim() != n)
    throw Error(op + ": " + what + " must be " + std::to_string(n) + "-D, got shape " +
                shape_str(t.shape()));
}

} // namespace

Tensor Tensor::trace() const {
  require_ndim(*this, 2, "trace", "the input");
  const int64_t n = std::min(size(0), size(1));
  if (n == 0) return sum();
  // The diagonal of the leading n x n block (diag() takes any 2-D shape).
  return diag().sum();
}

Tensor Tensor::outer(const Tensor& vec2) const {
  require_ndim(*this, 1, "outer", "the first vector");
  require_ndim(vec2, 1, "outer", "vec2");
  return reshape({size(0), 1}).mul(vec2.reshape({1, vec2.size(0)}));
}

Tensor Tensor::kron(const Tensor& other) const {
  // a (a0, a1, ..) and b (b0, b1, ..), ranks padded with leading 1s: a reshaped (a0, 1, a1, 1,
  // ..) times b reshaped (1, b0, 1, b1, ..), then each (ai, bi) pair merged.
  const int64_t nd = std::max(ndim(), other.ndim());
  Shape sa(static_cast<size_t>(nd - ndim()), 1), sb(static_cast<size_t>(nd - other.ndim()), 1);
  for (int64_t i = 0; i < ndim(); ++i) sa.push_back(size(i));
  for (int64_t i = 0; i < other.ndim(); ++i) sb.push_back(other.size(i));
  Shape ea, eb, out;
  for (size_t i = 0; i < static_cast<size_t>(nd); ++i) {
    ea.push_back(sa[i]);
    ea.push_back(1);
    eb.push_back(1);
    eb.push_back(sb[i]);
    out.push_back(sa[i] * sb[i]);
  }
  return reshape(ea).mul(other.reshape(eb)).reshape(out);
}

Tensor Tensor::cross(const Tensor& other, int64_t dim) const {
  const int64_t nd = std::max(ndim(), other.ndim());
  const int64_t ax = normalize_axis(dim, nd, "cross");
  const int64_t off_a = ax - (nd - ndim()), off_b = ax - (nd - other.ndim());
  if (off_a < 0 || off_b < 0 || size(off_a) != 3 || other.size(off_b) != 3)
    throw Error("cross: dimension " + std::to_string(dim) +
                " must have size 3 in both inputs, got " + shape_str(shape()) + " and " +
                shape_str(other.shape()));
  const DType dt = least_upper_dtype({dtype(), other.dtype()});
  Tensor a = cast(dt), b = other.cast(dt);
  auto c = [&](const Tensor& t, int64_t i, int64_t off) { return t.narrow(off, i, 1); };
  Tensor x = c(a, 1, off_a).mul(c(b, 2, off_b)).sub(c(a, 2, off_a).mul(c(b, 1, off_b)));
  Tensor y = c(a, 2, off_a).mul(c(b, 0, off_b)).sub(c(a, 0, off_a).mul(c(b, 2, off_b)));
  Tensor z = c(a, 0, off_a).mul(c(b, 1, off_b)).sub(c(a, 1, off_a).mul(c(b, 0, off_b)));
  return Tensor::cat({x, y, z}, ax);
}

Tensor Tensor::tensordot(const Tensor& other, int64_t dims) const {
  if (dims < 0 || dims > ndim() || dims > other.ndim())
    throw Error("tensordot: dims (" + std::to_string(dims) + ") must be in [0, min(" +
                std::to_string(ndim()) + ", " + std::to_string(other.ndim()) + ")]");
  std::vector<int64_t> da, db;
  for (int64_t i = 0; i < dims; ++i) {
    da.push_back(ndim() - dims + i);
    db.push_back(i);
  }
  return tensordot(other, da, db);
}

Tensor Tensor::tensordot(const Tensor& other, const std::vector<int64_t>& dims_a,
                         const std::vector<int64_t>& dims_b) const {
  if (dims_a.size() != dims_b.size())
    throw Error("tensordot: both dim lists must have the same length, got " +
                std::to_string(dims_a.size()) + " and " + std::to_string(dims_b.size()));
  std::vector<int64_t> ca, cb;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t a = normalize_axis(dims_a[i], ndim(), "tensordot");
    const int64_t b = normalize_axis(dims_b[i], other.ndim(), "tensordot");
    if (std::find(ca.begin(), ca.end(), a) != ca.end() ||
        std::find(cb.begin(), cb.end(), b) != cb.end())
      throw Error("tensordot: a dimension is contracted twice");
    if (size(a) != other.size(b))
      throw Error("tensordot: contracted dimensions differ in size: " + std::to_string(size(a)) +
                  " (dim " + std::to_string(a) + " of " + shape_str(shape()) + ") and " +
                  std::to_string(other.size(b)) + " (dim " + std::to_string(b) + " of " +
                  shape_str(other.shape()) + ")");
    ca.push_back(a);
    cb.push_back(b);
  }
  // a -> (free_a, contracted), b -> (contracted, free_b), one matmul, then the free axes.
  Shape pa, pb, out;
  int64_t fa = 1, fb = 1, k = 1;
  for (int64_t i = 0; i < ndim(); ++i)
    if (std::find(ca.begin(), ca.end(), i) == ca.end()) {
      pa.push_back(i);
      out.push_back(size(i));
      fa *= size(i);
    }
  for (int64_t a : ca) {
    pa.push_back(a);
    k *= size(a);
  }
  for (int64_t b : cb) pb.push_back(b);
  for (int64_t i = 0; i < other.ndim(); ++i)
    if (std::find(cb.begin(), cb.end(), i) == cb.end()) {
      pb.push_back(i);
      out.push_back(other.size(i));
      fb *= other.size(i);
    }
  Tensor a = permute(pa).reshape({fa, k}), b = other.permute(pb).reshape({k, fb});
  return a.matmul(b).reshape(out);
}

Tensor Tensor::bmm(const Tensor& mat2) const {
  require_ndim(*this, 3, "bmm", "the input");
  require_ndim(mat2, 3, "bmm", "mat2");
  if (size(0) != mat2.size(0) || size(2) != mat2.size(1))
    throw Error("bmm: shapes " + shape_str(shape()) + " and " + shape_str(mat2.shape()) +
                " do not fit (b, n, m) @ (b, m, p)");
  return matmul(mat2);
}

Tensor Tensor::cdist(const Tensor& x2, double p) const {
  if (ndim() < 2 || x2.ndim() < 2)
    throw Error("cdist: both inputs need at least 2 dimensions (..., rows, features), got " +
                shape_str(shape()) + " and " + shape_str(x2.shape()));
  if (size(-1) != x2.size(-1))
    throw Error("cdist: the inputs have different feature sizes: " + shape_str(shape()) + " and " +
                shape_str(x2.shape()));
  if (!(p >= 0)) throw Error("cdist: p must be non-negative, got " + std::to_string(p));
  if (!dtype().is_float() || !x2.dtype().is_float())
    throw Error("cdist: expected float inputs, got " + dtype().name() + " and " +
                x2.dtype().name());
  // (..., P, 1, M) - (..., 1, R, M), then the p-norm over M.
  Tensor d = unsqueeze(-2).sub(x2.unsqueeze(-3));
  return d.vector_norm(p, {-1});
}

} // namespace tg
