// Shape and search ops PyTorch has beyond tinygrad's: rot90, narrow, unbind, unfold
// (sliding windows as a view), searchsorted, bucketize, index_add and nonzero (the one with a
// data-dependent shape, read on the host).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using detail::normalize_axis;

} // namespace

Tensor Tensor::rot90(int64_t k, std::vector<int64_t> dims) const {
  if (dims.size() != 2)
    throw Error("rot90: dims must name two axes, got " + std::to_string(dims.size()));
  if (ndim() < 2)
    throw Error("rot90: the input must have at least 2 dimensions, got shape " +
                shape_str(shape()));
  const int64_t a = normalize_axis(dims[0], ndim(), "rot90");
  const int64_t b = normalize_axis(dims[1], ndim(), "rot90");
  if (a == b)
    throw Error("rot90: the two dims must differ, got " + std::to_string(dims[0]) + " and " +
                std::to_string(dims[1]));
  // PyTorch's: k = 1 flips b then swaps, k = 2 flips both, k = 3 flips a then swaps.
  switch (((k % 4) + 4) % 4) {
  case 1:
    return flip({b}).transpose(a, b);
  case 2:
    return flip({a, b});
  case 3:
    return flip({a}).transpose(a, b);
  default:
    return *this;
  }
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  if (ndim() == 0) throw Error("narrow: cannot narrow a 0-d tensor");
  const int64_t ax = normalize_axis(dim, ndim(), "narrow");
  const int64_t n = size(ax);
  if (start < -n || start > n)
    throw Error("narrow: start " + std::to_string(start) + " is out of range for dimension " +
                std::to_string(dim) + " of size " + std::to_string(n));
  const int64_t s = start < 0 ? start + n : start;
  if (length < 0 || s + length > n)
    throw Error("narrow: start (" + std::to_string(start) + ") + length (" +
                std::to_string(length) + ") exceeds dimension " + std::to_string(dim) +
                " of size " + std::to_string(n));
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t i = 0; i < ndim(); ++i) r.emplace_back(0, size(i));
  r[static_cast<size_t>(ax)] = {s, s + length};
  return shrink(r);
}

std::vector<Tensor> Tensor::unbind(int64_t dim) const {
  if (ndim() == 0) throw Error("unbind: cannot unbind a 0-d tensor");
  const int64_t ax = normalize_axis(dim, ndim(), "unbind");
  std::vector<Tensor> r;
  for (int64_t i = 0; i < size(ax); ++i) r.push_back(index(i, ax));
  return r;
}

Tensor Tensor::unfold(int64_t dimension, int64_t size_, int64_t step) const {
  // tinygrad's: the axis moved last, windowed by the pool view, moved back.
  const int64_t ax = normalize_axis(dimension, ndim(), "unfold");
  const int64_t n = ndim() == 0 ? 1 : size(ax);
  if (step <= 0) throw Error("unfold: step must be positive, got " + std::to_string(step));
  if (size_ < 0 || size_ > n)
    throw Error("unfold: size " + std::to_string(size_) + " must be in [0, " + std::to_string(n) +
                "], the size of dimension " + std::to_string(dimension));
  if (ndim() == 0) return reshape({1});
  if (size_ == 0) {
    // Empty windows, still computed from this tensor (so its gradient is zeros, not missing):
    // a new last axis cropped to nothing, then dimension `ax` cropped or padded to the count.
    Tensor e = unsqueeze(-1);
    std::vector<std::pair<int64_t, int64_t>> crop(static_cast<size_t>(e.ndim()), {0, 0});
    for (int64_t d = 0; d < e.ndim(); ++d) crop[static_cast<size_t>(d)] = {0, e.size(d)};
    crop.back() = {0, 0};
    const int64_t windows = n / step + 1;
    crop[static_cast<size_t>(ax)] = {0, std::min(n, windows)};
    e = e.shrink(crop);
    if (windows > n) {
      std::vector<std::pair<int64_t, int64_t>> grow(static_cast<size_t>(e.ndim()), {0, 0});
      grow[static_cast<size_t>(ax)] = {0, windows - n};
      e = e.pad(grow);
    }
    return e;
  }
  Tensor x = transpose(ax, -1);
  Tensor w = detail::sliding_windows(x, {size_}, {step}, {1}, "unfold"); // (..., o, size)
  return w.transpose(ax, -2);
}

Tensor Tensor::searchsorted(const Tensor& values, bool out_int32, bool right,
                            const std::string& side, const OptTensor& sorter) const {
  if (!side.empty() && side != "left" && side != "right")
    throw Error("searchsorted: side must be \"left\" or \"right\", got \"" + side + "\"");
  if (side == "left" && right)
    throw Error("searchsorted: side \"left\" contradicts right=true; give one of them");
  const bool r = right || side == "right";
  if (ndim() == 0) throw Error("searchsorted: the sorted sequence must have at least 1 dimension");
  Tensor seq = *this;
  if (sorter) {
    if (sorter->shape() != shape())
      throw Error("searchsorted: sorter " + shape_str(sorter->shape()) +
                  " must have the sorted sequence's shape " + shape_str(shape()));
    seq = seq.gather(-1, *sorter);
  }
  // The insertion index is the count of elements below (left) or not above (right) the value.
  Tensor v, s;
  if (ndim() == 1) {
    v = values.unsqueeze(-1);
    s = seq;
  } else {
    const bool fits = values.ndim() == ndim() &&
                      std::equal(shape().begin(), shape().end() - 1, values.shape().begin());
    if (!fits)
      throw Error("searchsorted: the sorted sequence " + shape_str(shape()) + " and the values " +
                  shape_str(values.shape()) +
                  " must have the same leading dimensions (all but the last)");
    v = values.unsqueeze(-1);
    s = seq.unsqueeze(-2);
  }
  Tensor count = (r ? s.le(v) : s.lt(v)).sum({-1});
  return count.cast(out_int32 ? dtypes::int32 : dtypes::int64);
}

Tensor Tensor::bucketize(const Tensor& boundaries, bool out_int32, bool right) const {
  if (boundaries.ndim() != 1)
    throw Error("bucketize: boundaries must be 1-D, got shape " + shape_str(boundaries.shape()));
  return boundaries.searchsorted(*this, out_int32, right);
}

Tensor Tensor::index_add(int64_t dim, const Tensor& index, const Tensor& source,
                         Scalar alpha) const {
  const int64_t ax = normalize_axis(dim, ndim(), "index_add");
  if (index.ndim() > 1 || (index.dtype().is_float() || index.dtype().is_bool()))
    throw Error("index_add: index must be a 1-D integer tensor, got " + index.dtype().name() +
                " of shape " + shape_str(index.shape()));
  if (ndim() == 0) {
    if (index.numel() != 1 || source.numel() != 1)
      throw Error("index_add: a 0-d self takes one index and one source element, got " +
                  shape_str(index.shape()) + " and " + shape_str(source.shape()));
    return add(source.reshape({}).mul(alpha).cast(dtype()));
  }
  Tensor src = source.ndim() == 0 ? source.reshape({1}) : source;
  Tensor idx = index.ndim() == 0 ? index.reshape({1}) : index;
  const int64_t n = idx.size(0);
  bool fits = src.ndim() == ndim() && src.size(ax) == n;
  for (int64_t i = 0; fits && i < ndim(); ++i)
    if (i != ax && src.size(i) != size(i)) fits = false;
  if (!fits)
    throw Error("index_add: source " + shape_str(source.shape()) + " must have self's shape " +
                shape_str(shape()) + " except in dimension " + std::to_string(dim) +
                ", which must be the index's length " + std::to_string(n));
  Shape along(static_cast<size_t>(ndim()), 1);
  along[static_cast<size_t>(ax)] = n;
  Tensor full_idx = idx.reshape(along).expand(src.shape());
  return scatter_reduce(ax, full_idx, src.mul(alpha).cast(dtype()), "sum", true);
}

Tensor Tensor::nonzero() const {
  // The number of rows depends on the values: realize and read them (PyTorch syncs too).
  const int64_t nd = ndim();
  const std::vector<bool> nz = ne(scalar_like(int64_t{0})).to_vector<bool>();
  std::vector<int32_t> rows;
  std::vector<int32_t> idx(static_cast<size_t>(nd), 0);
  for (size_t flat = 0; flat < nz.size(); ++flat) {
    if (nz[flat]) rows.insert(rows.end(), idx.begin(), idx.end());
    for (int64_t d = nd - 1; d >= 0; --d) { // the next row-major multi-index
      if (++idx[static_cast<size_t>(d)] < size(d)) break;
      idx[static_cast<size_t>(d)] = 0;
    }
  }
  const int64_t count = nd == 0 ? static_cast<int64_t>(rows.size() == 0 && !nz.empty() && nz[0])
                                : static_cast<int64_t>(rows.size()) / nd;
  if (count == 0 || nd == 0) return Tensor::zeros({count, nd}, dtypes::int32, device());
  return Tensor::from_vector(rows, {count, nd}, device());
}

} // namespace tg
