// Indexing: getitem and setitem as tinygrad's __getitem__/__setitem__, gather,
// scatter, scatter_reduce, index_select, take_along_dim, masked_fill, masked_select, one_hot.
//
// Basic indices (ints, slices, None, Ellipsis) become movement ops (shrink, flip, pad/reshape
// for steps, reshape): views, no kernel. Tensor indices become tinygrad's one-hot form: the
// index compared with an arange along the indexed axis, a where, and a sum over that axis, so
// they fuse with their producers and consumers and autograd needs no rule of its own.
#include <algorithm>
#include <numeric>

#include "tensor_internal.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"

namespace tg {

namespace {

using detail::normalize_axis;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

Shape dims_of(const Tensor& t) {
  Shape s;
  for (int64_t i = 0; i < t.ndim(); ++i) s.push_back(t.size(i));
  return s;
}

// numpy broadcasting of several shapes; raises naming them all.
Shape broadcast_shapes(const std::vector<Shape>& shapes, const std::string& what) {
  size_t n = 0;
  for (const Shape& s : shapes) n = std::max(n, s.size());
  Shape out(n, 1);
  for (const Shape& s : shapes)
    for (size_t k = 0; k < s.size(); ++k) {
      const int64_t d = s[k];
      const size_t o = n - s.size() + k;
      const int64_t cur = out[o];
      if (cur == 1) {
        out[o] = d;
      } else if (d != 1 && d != cur) {
        std::string msg = what + ": shapes";
        for (const Shape& x : shapes) msg += " " + shape_str(x);
        throw Error(msg + " cannot be broadcast together");
      }
    }
  return out;
}

Tensor broadcast_to(const Tensor& t, const Shape& s) {
  if (t.shape() == s) return t;
  return t.expand(s);
}

Tensor zero_of(const Tensor& like) {
  return like.scalar_like(like.dtype().is_bool() ? Scalar(false) : Scalar(0));
}

// A 0-d constant of dtype d.
Tensor const_of(const ConstValue& v, DType d, const std::string& device) {
  return detail::make(detail::const_node(v, d, device, {}), {});
}

// Sum over `axes` of x where mask holds (one true element per output in the one-hot forms, so
// the sum is exact), in x's dtype; bool is an any().
Tensor select_sum(const Tensor& mask, const Tensor& x, const std::vector<int64_t>& axes,
                  bool keepdim = false) {
  if (x.dtype().is_bool()) return mask.bitwise_and(x).any(axes, keepdim);
  return mask.where(x, zero_of(x)).sum(axes, keepdim).cast(x.dtype());
}

// tinygrad's _one_hot_along_dim: index == arange(n) along axis `dim` (negative) of the result.
Tensor one_hot_along(const Tensor& index, int64_t n, int64_t dim) {
  const int64_t offset = -dim - 1;
  Shape s{n};
  for (int64_t i = 0; i < offset; ++i) s.push_back(1);
  return index.eq(Tensor::arange(n, dtypes::int32, index.device()).reshape(s));
}

void check_int_index(const Tensor& index, const std::string& what) {
  if (!index.dtype().is_int())
    throw Error(what + ": index tensor has dtype " + index.dtype().name() +
                "; indices must be an integer dtype");
}

// Host-side: the coordinates of the true elements of a bool tensor (realized), one list per
// axis, in row-major order (numpy's nonzero).
std::vector<std::vector<int64_t>> host_nonzero(const Tensor& mask) {
  const std::vector<uint8_t> v = mask.cast(dtypes::bool_).to_vector<uint8_t>();
  const Shape s = mask.shape();
  std::vector<std::vector<int64_t>> out(s.size());
  std::vector<int64_t> coord(s.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i]) continue;
    auto r = static_cast<int64_t>(i);
    for (size_t k = s.size(); k-- > 0;) {
      const int64_t d = s[k];
      coord[k] = r % d;
      r /= d;
    }
    for (size_t k = 0; k < s.size(); ++k) out[k].push_back(coord[k]);
  }
  return out;
}

Tensor int_tensor(const std::vector<int64_t>& v, const std::string& device) {
  std::vector<int32_t> w(v.begin(), v.end());
  return Tensor::from_vector(w, Shape{static_cast<int64_t>(w.size())}, device);
}

// ---- getitem ------------------------------------------------------------------------------

// What a basic index does to one source axis: keep every |step|-th of [first, first + len)
// (len = (count - 1) * |step| + 1), reversed when step < 0; an Int keeps one and drops the axis.
struct AxisSel {
  bool is_int = false;
  int64_t first = 0, count = 0, step = 1;
};

struct Parsed {
  Tensor view;                // after the basic indices: None axes in, int axes out
  std::vector<AxisSel> axes;  // per source axis
  std::vector<int64_t> tdims; // axes of `view` indexed by tensors
  std::vector<Tensor> tindex; // their index tensors (int, negatives wrapped, on the device)
};

Parsed parse_index(const Tensor& self, std::vector<Index> indices, const std::string& op) {
  using K = Index::Kind;
  // Host lists become int tensors; count the axes the index consumes.
  int64_t consumed = 0, ellipses = 0;
  for (Index& ix : indices) {
    if (ix.kind == K::List) ix = Index(int_tensor(ix.list, self.device()));
    if (ix.kind == K::Tensor && !ix.tensor.defined())
      throw Error(op + ": an index tensor is undefined");
    if (ix.kind == K::EllipsisIndex)
      ++ellipses;
    else if (ix.kind == K::Tensor && ix.tensor.dtype().is_bool())
      consumed += std::max<int64_t>(ix.tensor.ndim(), 1);
    else if (ix.kind != K::NewAxis)
      ++consumed;
  }
  if (ellipses > 1) throw Error(op + ": an index can only have a single ellipsis (...)");
  if (consumed > self.ndim())
    throw Error(op + ": too many indices for a tensor of shape " + shape_str(self.shape()) + ": " +
                std::to_string(consumed) + " axes indexed but it has " +
                std::to_string(self.ndim()));
  {
    auto it = std::find_if(indices.begin(), indices.end(),
                           [](const Index& i) { return i.kind == K::EllipsisIndex; });
    const auto at = it - indices.begin();
    if (it != indices.end()) indices.erase(it);
    indices.insert(indices.begin() + at, static_cast<size_t>(self.ndim() - consumed),
                   Index(Slice{}));
  }
  // Boolean masks: numpy's mask.nonzero() (realized here: the count depends on the values).
  {
    std::vector<Index> expanded;
    int64_t dim = 0;
    for (Index& ix : indices) {
      if (ix.kind == K::Tensor && ix.tensor.dtype().is_bool()) {
        const int64_t k = ix.tensor.ndim();
        if (k == 0)
          throw Error(op + ": a 0-d boolean index is not supported; use a 1-d mask or None");
        Shape want;
        for (int64_t i = dim; i < dim + k; ++i) want.push_back(self.size(i));
        if (ix.tensor.shape() != want)
          throw Error(op + ": boolean mask of shape " + shape_str(ix.tensor.shape()) +
                      " does not match the shape " + shape_str(want) + " of axes " +
                      std::to_string(dim) + ".." + std::to_string(dim + k - 1) +
                      " of the indexed tensor of shape " + shape_str(self.shape()));
        for (const auto& coords : host_nonzero(ix.tensor))
          expanded.emplace_back(int_tensor(coords, self.device()));
        dim += k;
        continue;
      }
      if (ix.kind != K::NewAxis) ++dim;
      expanded.push_back(std::move(ix));
    }
    indices = std::move(expanded);
  }

  Parsed p;
  Pairs shrinks;
  std::vector<int64_t> flips;
  Shape final_shape;              // of the view: None axes 1, int axes gone
  std::vector<const Index*> kept; // the entries that keep an axis of the view, in order
  int64_t dim = 0;
  for (const Index& ix : indices) {
    if (ix.kind == K::NewAxis) {
      final_shape.push_back(1);
      kept.push_back(&ix);
      continue;
    }
    const int64_t n = self.size(dim);
    AxisSel a;
    if (ix.kind == K::Int) {
      if (ix.i < -n || ix.i >= n)
        throw Error(op + ": index " + std::to_string(ix.i) + " is out of bounds for axis " +
                    std::to_string(dim) + " with size " + std::to_string(n) + " (shape " +
                    shape_str(self.shape()) + ")");
      a.is_int = true;
      a.first = ix.i < 0 ? ix.i + n : ix.i;
      a.count = 1;
      shrinks.emplace_back(a.first, a.first + 1);
    } else if (ix.kind == K::Slice) {
      const Slice& sl = ix.slice;
      if (sl.step == 0)
        throw Error(op + ": slice step of axis " + std::to_string(dim) + " cannot be zero");
      auto norm = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
        if (!v) return dflt;
        return std::clamp(*v < 0 ? *v + n : *v, lo, hi);
      };
      int64_t start = 0, stop = 0;
      if (sl.step > 0) { // Python's slice.indices()
        start = norm(sl.start, 0, 0, n);
        stop = norm(sl.stop, n, 0, n);
        a.count = stop > start ? (stop - start + sl.step - 1) / sl.step : 0;
      } else {
        start = norm(sl.start, n - 1, -1, n - 1);
        stop = norm(sl.stop, -1, -1, n - 1);
        a.count = start > stop ? (start - stop - sl.step - 1) / -sl.step : 0;
      }
      a.step = sl.step;
      a.first = a.count ? (sl.step > 0 ? start : start + (a.count - 1) * sl.step) : 0;
      const int64_t len = a.count ? (a.count - 1) * std::abs(sl.step) + 1 : 0;
      shrinks.emplace_back(a.first, a.first + len);
      if (sl.step < 0 && a.count > 1) flips.push_back(dim);
      final_shape.push_back(a.count);
      kept.push_back(&ix);
    } else { // an integer tensor: the whole axis, gathered below
      a.count = n;
      shrinks.emplace_back(0, n);
      final_shape.push_back(n);
      kept.push_back(&ix);
    }
    p.axes.push_back(a);
    ++dim;
  }

  // Movement ops: shrink, flip, then every step-th element (pad to a multiple, split, keep 1).
  Tensor x = self.shrink(shrinks);
  if (!flips.empty()) x = x.flip(flips);
  bool strided = false;
  for (const AxisSel& a : p.axes) strided |= !a.is_int && std::abs(a.step) > 1 && a.count > 1;
  if (strided) {
    Pairs pad, keep;
    Shape split, keep_shape;
    for (size_t k = 0; k < p.axes.size(); ++k) {
      const AxisSel& a = p.axes[k];
      const int64_t st = a.is_int || a.count <= 1 ? 1 : std::abs(a.step);
      const int64_t len = x.size(static_cast<int64_t>(k));
      const int64_t cnt = (len + st - 1) / st;
      pad.emplace_back(0, cnt * st - len);
      split.push_back(cnt);
      split.push_back(st);
      keep.emplace_back(0, cnt);
      keep.emplace_back(0, 1);
      keep_shape.push_back(cnt);
    }
    x = x.pad(pad).reshape(split).shrink(keep).reshape(keep_shape);
  }
  x = x.reshape(final_shape);

  for (size_t k = 0; k < kept.size(); ++k) {
    if (kept[k]->kind != K::Tensor) continue;
    const Tensor& t = kept[k]->tensor;
    check_int_index(t, op);
    const int64_t n = x.size(static_cast<int64_t>(k));
    Tensor idx = t.to(self.device());
    idx = idx.lt(0).where(idx.add(n), idx); // negative positions count from the end
    p.tdims.push_back(static_cast<int64_t>(k));
    p.tindex.push_back(idx);
  }
  p.view = x;
  return p;
}

struct Advanced {
  Tensor mask; // shape view[:d0] + big + view[d0:]: which source element each output takes
  Shape big;   // the broadcast shape of the index tensors
  std::vector<int64_t> sum_axes;
  bool to_front = false; // separated tensor indices: the big axes go first (numpy)
};

Advanced advanced_mask(const Parsed& p, const std::string& op) {
  Advanced a;
  const Tensor& x = p.view;
  std::vector<Shape> shapes;
  for (const Tensor& t : p.tindex) shapes.push_back(t.shape());
  a.big = broadcast_shapes(shapes, op + ": index tensors");
  const int64_t d0 = p.tdims[0];
  Shape pre;
  for (int64_t i = 0; i < d0; ++i) pre.push_back(x.size(i));
  for (int64_t d : a.big) pre.push_back(d);
  for (int64_t i = d0; i < x.ndim(); ++i) pre.push_back(x.size(i));
  std::optional<Tensor> mask;
  for (size_t k = 0; k < p.tindex.size(); ++k) {
    const Tensor& t = p.tindex[k];
    Shape s = t.shape();
    for (int64_t i = 0; i < x.ndim() - d0; ++i) s.push_back(1);
    Tensor m = one_hot_along(t.reshape(s).expand(pre), x.size(p.tdims[k]), p.tdims[k] - x.ndim());
    mask = mask ? mask->bitwise_and(m) : m;
  }
  a.mask = *mask;
  for (int64_t d : p.tdims) a.sum_axes.push_back(d + static_cast<int64_t>(a.big.size()));
  bool consecutive = true;
  for (size_t k = 1; k < p.tdims.size(); ++k) consecutive &= p.tdims[k] == p.tdims[k - 1] + 1;
  a.to_front = d0 != 0 && !consecutive;
  return a;
}

Tensor apply_advanced(const Parsed& p, const std::string& op) {
  const Tensor& x = p.view;
  Advanced a = advanced_mask(p, op);
  const int64_t d0 = p.tdims[0];
  const auto nb = static_cast<int64_t>(a.big.size());
  Shape rs;
  for (int64_t i = 0; i < d0; ++i) rs.push_back(x.size(i));
  for (int64_t i = 0; i < nb; ++i) rs.push_back(1);
  for (int64_t i = d0; i < x.ndim(); ++i) rs.push_back(x.size(i));
  Tensor r = select_sum(a.mask, x.reshape(rs), a.sum_axes);
  if (p.tindex.size() == 1) r = detail::gather_with_scatter_gradient(r, x, d0, p.tindex[0]);
  if (a.to_front) {
    Shape order;
    for (int64_t i = d0; i < d0 + nb; ++i) order.push_back(i);
    for (int64_t i = 0; i < d0; ++i) order.push_back(i);
    for (int64_t i = d0 + nb; i < r.ndim(); ++i) order.push_back(i);
    r = r.permute(order);
  }
  return r;
}

// The whole of p.view after an advanced setitem of `value`: where several index positions
// name one element the last wins (tinygrad's _masked_setitem), found as the largest hitting
// position along the flattened index axes.
Tensor advanced_update(const Parsed& p, const Tensor& value, const std::string& op) {
  const Tensor& x = p.view;
  Advanced a = advanced_mask(p, op);
  const int64_t d0 = p.tdims[0];
  const auto nb = static_cast<int64_t>(a.big.size());
  // The shape getitem would return; the value broadcast to it.
  Shape head, rest;
  for (int64_t i = 0; i < d0; ++i) head.push_back(x.size(i));
  for (int64_t i = d0; i < x.ndim(); ++i)
    if (std::find(p.tdims.begin(), p.tdims.end(), i) == p.tdims.end()) rest.push_back(x.size(i));
  Shape got;
  if (a.to_front) {
    got = a.big;
    got.insert(got.end(), head.begin(), head.end());
  } else {
    got = head;
    got.insert(got.end(), a.big.begin(), a.big.end());
  }
  got.insert(got.end(), rest.begin(), rest.end());
  if (value.ndim() > static_cast<int64_t>(got.size()) ||
      broadcast_shapes({got, value.shape()}, op + ": value and indexed result") != got)
    throw Error(op + ": value of shape " + shape_str(value.shape()) +
                " cannot be broadcast to the indexed shape " + shape_str(got));
  Tensor v = broadcast_to(value.cast(x.dtype()), got);
  if (a.to_front) { // back to head + big + rest
    Shape order;
    for (int64_t i = nb; i < nb + d0; ++i) order.push_back(i);
    for (int64_t i = 0; i < nb; ++i) order.push_back(i);
    for (int64_t i = nb + d0; i < v.ndim(); ++i) order.push_back(i);
    v = v.permute(order);
  }
  for (int64_t ax : a.sum_axes) v = v.unsqueeze(ax); // the indexed axes back, size 1
  int64_t B = 1;
  for (int64_t d : a.big) B *= d;
  if (B == 0) return x;
  // The big axes flattened into one of size B.
  Shape flat = head, vflat = head;
  flat.push_back(B);
  vflat.push_back(B);
  for (int64_t i = d0; i < x.ndim(); ++i) flat.push_back(x.size(i));
  for (int64_t i = d0 + nb; i < v.ndim(); ++i) vflat.push_back(v.size(i));
  Tensor mask = a.mask.reshape(flat);
  v = v.reshape(vflat);
  Shape ps(flat.size(), 1);
  ps[static_cast<size_t>(d0)] = B;
  Tensor pos = Tensor::arange(B, dtypes::int32, x.device()).add(1).reshape(ps);
  Tensor last = mask.where(pos, 0).max({d0}, true);
  Tensor val = select_sum(pos.eq(last), v, {d0});
  return last.gt(0).squeeze(d0).where(val, x);
}

Tensor getitem_impl(const Tensor& self, std::vector<Index> indices) {
  Parsed p = parse_index(self, std::move(indices), "getitem");
  if (p.tdims.empty()) return p.view;
  return apply_advanced(p, "getitem");
}

// The movement chain from `u` down to its BUFFER has no EXPAND or PAD: it can be written to.
bool writable_view(const UOpPtr& u) {
  for (const UOp* n = u.get(); n->op != Ops::BUFFER; n = n->src[0].get())
    if (!GroupOp::Movement.contains(n->op) || n->op == Ops::EXPAND || n->op == Ops::PAD)
      return false;
  return true;
}

// `v` (the shape of p.view) placed where p's basic indices took p.view from, and a mask of
// where it lands: the inverse of the basic indexing, as movement ops on v.
std::pair<Tensor, Tensor> inverse_basic(const Tensor& self, const Parsed& p, const Tensor& v) {
  Shape per_axis;
  for (const AxisSel& a : p.axes) per_axis.push_back(a.is_int ? 1 : a.count);
  Tensor val = v.reshape(per_axis);
  Tensor mask = Tensor::full(per_axis, true, dtypes::bool_, self.device());
  Pairs place;
  for (size_t k = 0; k < p.axes.size(); ++k) {
    const AxisSel& a = p.axes[k];
    const auto ax = static_cast<int64_t>(k);
    const int64_t st = a.is_int || a.count <= 1 ? 1 : std::abs(a.step);
    const int64_t len = a.count ? (a.count - 1) * st + 1 : 0;
    if (st > 1) { // (c) -> (c, 1) -> padded to (c, st) -> (c * st) -> the first len
      for (Tensor* t : {&val, &mask}) {
        Tensor u = t->unsqueeze(ax + 1);
        Pairs pd(static_cast<size_t>(u.ndim()), {0, 0});
        pd[k + 1] = {0, st - 1};
        Shape s = dims_of(*t);
        s[k] = a.count * st;
        u = u.pad(pd).reshape(s);
        Pairs kp;
        for (int64_t i = 0; i < u.ndim(); ++i) kp.emplace_back(0, u.size(i));
        kp[k] = {0, len};
        *t = u.shrink(kp);
      }
    }
    if (a.step < 0 && a.count > 1) {
      val = val.flip({ax});
      mask = mask.flip({ax});
    }
    place.emplace_back(a.first, self.size(ax) - a.first - len);
  }
  return {val.pad(place), mask.pad(place)};
}

} // namespace

Tensor Tensor::operator[](const Index& i) const { return getitem_impl(*this, {i}); }
Tensor Tensor::operator[](std::initializer_list<Index> indices) const {
  return getitem_impl(*this, std::vector<Index>(indices));
}
Tensor Tensor::getitem(std::vector<Index> indices) const {
  return getitem_impl(*this, std::move(indices));
}

Tensor& Tensor::setitem(std::vector<Index> indices, const Tensor& value) {
  if (value.device() != device())
    throw Error("setitem: value is on " + value.device() + " but the tensor is on " + device());
  // With autograd the update is out of place (below); a leaf the user marked cannot change
  // under its own gradient (PyTorch's rule).
  const bool differentiable = requires_grad() || value.requires_grad();
  if (differentiable && state_->grad_leaf)
    throw Error("setitem: a leaf tensor that requires grad cannot be written in place; write "
                "into a copy (x = x * 1) or detach() it first");
  if (!differentiable && !is_buffer_view(uop())) realize();
  Parsed p = parse_index(*this, std::move(indices), "setitem");
  Tensor v;
  if (p.tdims.empty()) {
    const Shape& want = p.view.shape();
    if (value.ndim() > p.view.ndim() ||
        broadcast_shapes({want, value.shape()}, "setitem: value and indexed result") != want)
      throw Error("setitem: value of shape " + shape_str(value.shape()) +
                  " cannot be broadcast to the indexed shape " + shape_str(want));
    v = broadcast_to(value.cast(dtype()), want);
  } else {
    v = advanced_update(p, value, "setitem");
  }
  if (differentiable) {
    // The new value as a graph over the old one, so gradients reach both (the old value where
    // nothing was written, the value where it was): every copy of this handle sees it.
    auto [placed, lands] = inverse_basic(*this, p, v);
    Tensor updated = lands.where(placed, *this);
    state_->uop = updated.uop();
    state_->buffers = updated.state()->buffers;
    state_->var_vals = updated.state()->var_vals;
    state_->requires_grad = true;
    state_->forward = nullptr;
    state_->forward_buffers.clear();
  } else if (writable_view(p.view.uop())) {
    // A view of the buffer: write the indexed elements only.
    Tensor target = p.view;
    target.assign(v).realize();
  } else {
    // Steps > 1 read through a PAD: write the whole tensor, the value where the view lands.
    auto [placed, lands] = inverse_basic(*this, p, v);
    assign(lands.where(placed, *this)).realize();
  }
  return *this;
}

Tensor& Tensor::setitem(std::vector<Index> indices, Scalar value) {
  return setitem(std::move(indices), scalar_like(value).cast(dtype()));
}

// ---- gather / scatter ----------------------------------------------------------------------

Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  check_int_index(index, "gather");
  if (index.ndim() != ndim())
    throw Error("gather: index of shape " + shape_str(index.shape()) + " has " +
                std::to_string(index.ndim()) + " dimensions but the input of shape " +
                shape_str(shape()) + " has " + std::to_string(ndim()));
  const int64_t d = normalize_axis(dim, std::max<int64_t>(ndim(), 1), "gather");
  if (ndim() == 0) return index.to(device()).eq(0).where(*this, zero_of(*this)); // 0-d
  Pairs keep;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (i != d && index.size(i) > size(i))
      throw Error("gather: index of shape " + shape_str(index.shape()) +
                  " is larger than the input of shape " + shape_str(shape()) + " at dimension " +
                  std::to_string(i) + " (only dimension " + std::to_string(d) + " may differ)");
    keep.emplace_back(0, i == d ? size(i) : index.size(i));
  }
  const Tensor xs = shrink(keep), idx = index.to(device());
  const Tensor x = xs.unsqueeze(-1).transpose(-1, d);
  return detail::gather_elements_with_scatter_gradient(
      select_sum(one_hot_along(idx.unsqueeze(-1), size(d), -1), x, {-1}), xs, d, idx);
}

namespace {

// The checks of PyTorch's scatter family; normalizes dim.
void check_scatter(const Tensor& self, int64_t& dim, const Tensor& index, const Tensor& src,
                   const std::string& op) {
  check_int_index(index, op);
  if (self.ndim() == 0) throw Error(op + ": the input must have at least one dimension");
  dim = normalize_axis(dim, self.ndim(), op);
  if (index.ndim() != self.ndim() || src.ndim() != self.ndim())
    throw Error(op + ": input " + shape_str(self.shape()) + ", index " + shape_str(index.shape()) +
                " and src " + shape_str(src.shape()) + " must have the same number of dimensions");
  for (int64_t i = 0; i < self.ndim(); ++i)
    if ((i != dim && index.size(i) > self.size(i)) || index.size(i) > src.size(i))
      throw Error(op + ": index of shape " + shape_str(index.shape()) +
                  " must be no larger than src " + shape_str(src.shape()) +
                  " in every dimension and than the input " + shape_str(self.shape()) +
                  " outside dimension " + std::to_string(dim) + " (dimension " + std::to_string(i) +
                  ")");
}

// tinygrad's _pre_scatter: src and the one-hot mask, both of shape self.shape + (index[dim],).
std::pair<Tensor, Tensor> pre_scatter(const Tensor& self, int64_t& dim, const Tensor& index,
                                      const Tensor& src, const std::string& op) {
  check_scatter(self, dim, index, src, op);
  Pairs keep;
  for (int64_t i = 0; i < index.ndim(); ++i) keep.emplace_back(0, index.size(i));
  Tensor s = src.to(self.device()).shrink(keep);
  Shape es = dims_of(s);
  es.push_back(self.size(dim));
  s = s.unsqueeze(-1).expand(es).transpose(-1, dim);
  Tensor m =
      one_hot_along(index.to(self.device()).unsqueeze(-1), self.size(dim), -1).transpose(-1, dim);
  Pairs pad;
  for (int64_t i = 0; i < self.ndim(); ++i)
    pad.emplace_back(0, i == dim ? 0 : self.size(i) - s.size(i));
  pad.emplace_back(0, 0);
  return {s.pad(pad), m.pad(pad)};
}

// scatter_reduce's sum and mean as scatter-adds: src cut to the index's shape, both padded to
// self's shape off dim (the padding's index is self.size(dim): out of range, it adds nothing).
Tensor scatter_sum(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   bool mean, bool include_self) {
  check_scatter(self, dim, index, src, "scatter_reduce");
  Pairs keep, pad;
  for (int64_t i = 0; i < index.ndim(); ++i) {
    keep.emplace_back(0, index.size(i));
    pad.emplace_back(0, i == dim ? 0 : self.size(i) - index.size(i));
  }
  const Tensor s = src.to(self.device()).shrink(keep).pad(pad);
  const Tensor idx = index.to(self.device()).pad(pad, Scalar(self.size(dim)));
  if (!mean && include_self) return detail::scatter_add_along(self, dim, idx, s);
  // How many indices name each position.
  const Tensor ones = Tensor::full(idx.shape(), 1, dtypes::int32, self.device());
  const Tensor counts = detail::scatter_add_along(
      Tensor::zeros(self.shape(), dtypes::int32, self.device()), dim, idx, ones);
  const Tensor none = counts.eq(0);
  const Tensor base = include_self ? self : none.where(self, zero_of(self));
  const Tensor total = detail::scatter_add_along(base, dim, idx, s);
  if (!mean) return total;
  // The count includes self once when it takes part; an integer mean rounds down.
  const Tensor count = include_self ? counts.add(1) : counts.add(none.where(1, 0));
  const DType dt = self.dtype();
  if (dt.is_float()) return total.div(count.cast(dt)).cast(dt);
  return total.idiv(count.cast(dt)).cast(dt);
}

} // namespace

Tensor Tensor::scatter(int64_t dim, const Tensor& index, const Tensor& src) const {
  if (src.dtype() != dtype())
    throw Error("scatter: src has dtype " + src.dtype().name() + " but the input has " +
                dtype().name() + "; they must be equal");
  auto [s, m] = pre_scatter(*this, dim, index, src, "scatter");
  // The last of duplicate indices wins: the largest position along the last axis that hits.
  const int64_t k = m.size(-1);
  if (k == 0) return *this;
  Shape ps(static_cast<size_t>(m.ndim()), 1);
  ps.back() = k;
  Tensor pos = Tensor::arange(k, dtypes::int32, device()).add(1).reshape(ps);
  Tensor last = m.where(pos, 0).max({-1}, true);
  Tensor val = select_sum(pos.eq(last), s, {-1});
  return last.squeeze(-1).gt(0).where(val, *this);
}

Tensor Tensor::scatter(int64_t dim, const Tensor& index, Scalar value,
                       const std::string& reduce) const {
  Tensor src = Tensor::full(index.shape(), value, dtype(), device());
  if (reduce.empty()) return scatter(dim, index, src);
  if (reduce == "add") return scatter_reduce(dim, index, src, "sum", true);
  if (reduce == "multiply") return scatter_reduce(dim, index, src, "prod", true);
  throw Error("scatter: reduce must be \"add\" or \"multiply\", got \"" + reduce + "\"");
}

Tensor Tensor::scatter_reduce(int64_t dim, const Tensor& index, const Tensor& src,
                              const std::string& reduce, bool include_self) const {
  static const std::vector<std::string> modes{"sum", "prod", "mean", "amax", "amin"};
  if (std::find(modes.begin(), modes.end(), reduce) == modes.end())
    throw Error("scatter_reduce: reduce must be one of sum, prod, mean, amax, amin; got \"" +
                reduce + "\"");
  if (src.dtype() != dtype())
    throw Error("scatter_reduce: src has dtype " + src.dtype().name() + " but the input has " +
                dtype().name() + "; they must be equal");
  if ((reduce == "sum" || reduce == "mean") && !dtype().is_bool())
    return scatter_sum(*this, dim, index, src, reduce == "mean", include_self);
  auto [s, m] = pre_scatter(*this, dim, index, src, "scatter_reduce");
  const DType dt = dtype();
  const Tensor none = m.any({-1}).logical_not(); // positions no index names
  // This tensor where it takes part, else the reduction's identity.
  auto self_or = [&](const Tensor& identity) {
    return include_self ? *this : none.where(*this, identity);
  };
  if (reduce == "sum" || reduce == "mean") {
    Tensor total = m.where(s, zero_of(s)).sum({-1}).cast(dt).add(self_or(zero_of(*this))).cast(dt);
    if (reduce == "sum") return total;
    // The count includes this tensor once when it takes part; an integer mean rounds down.
    Tensor count = m.where(1, 0).sum({-1}).add(
        include_self ? Tensor::full({}, 1, dtypes::int32, device()) : none.where(1, 0));
    if (dt.is_float()) return total.div(count.cast(dt)).cast(dt);
    return total.idiv(count.cast(dt)).cast(dt);
  }
  if (reduce == "prod") {
    const Tensor one = const_of(ConstValue(int64_t{1}), dt, device());
    return m.where(s, one).prod({-1}).cast(dt).mul(self_or(one)).cast(dt);
  }
  if (reduce == "amax") {
    const Tensor lo = const_of(dtype_min(dt), dt, device());
    return m.where(s, lo).max({-1}).maximum(self_or(lo));
  }
  const Tensor hi = const_of(dtype_max(dt), dt, device());
  return m.where(s, hi).min({-1}).minimum(self_or(hi));
}

Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return scatter_reduce(dim, index, src, "sum", true);
}

Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  check_int_index(index, "index_select");
  if (index.ndim() > 1)
    throw Error("index_select: index must be 1-D or 0-d, got shape " + shape_str(index.shape()));
  const int64_t d = normalize_axis(dim, std::max<int64_t>(ndim(), 1), "index_select");
  if (ndim() == 0) return gather(0, index.reshape({})); // PyTorch: a 0-d input stays 0-d
  std::vector<Index> ix(static_cast<size_t>(d), Index(Slice{}));
  ix.emplace_back(index.reshape({-1}));
  return getitem(ix);
}

Tensor Tensor::take_along_dim(const Tensor& indices, std::optional<int64_t> dim) const {
  check_int_index(indices, "take_along_dim");
  if (!dim) return flatten().gather(0, indices.flatten());
  if (indices.ndim() != ndim())
    throw Error("take_along_dim: indices of shape " + shape_str(indices.shape()) +
                " and input of shape " + shape_str(shape()) +
                " must have the same number of dimensions");
  const int64_t d = normalize_axis(*dim, ndim(), "take_along_dim");
  Shape a = shape(), b = indices.shape();
  a[static_cast<size_t>(d)] = 1;
  b[static_cast<size_t>(d)] = 1;
  Shape s = broadcast_shapes({a, b}, "take_along_dim");
  Shape sa = s, sb = s;
  sa[static_cast<size_t>(d)] = size(d);
  sb[static_cast<size_t>(d)] = indices.size(d);
  return broadcast_to(*this, sa).gather(d, broadcast_to(indices, sb));
}

Tensor Tensor::masked_fill(const Tensor& mask, Scalar value) const {
  return masked_fill(mask, scalar_like(value).cast(dtype()));
}

Tensor Tensor::masked_fill(const Tensor& mask, const Tensor& value) const {
  if (!mask.dtype().is_bool())
    throw Error("masked_fill: mask must be bool, got " + mask.dtype().name());
  if (value.ndim() != 0)
    throw Error("masked_fill: value must be a 0-d tensor, got shape " + shape_str(value.shape()));
  broadcast_shapes({shape(), mask.shape()}, "masked_fill: input and mask");
  return mask.where(value.cast(dtype()), *this);
}

Tensor Tensor::masked_select(const Tensor& mask) const {
  if (!mask.dtype().is_bool())
    throw Error("masked_select: mask must be bool, got " + mask.dtype().name());
  const Shape s = broadcast_shapes({shape(), mask.shape()}, "masked_select: input and mask");
  // The output's length is the mask's count of true values: read on the host.
  const std::vector<int64_t> flat = host_nonzero(broadcast_to(mask, s).flatten())[0];
  return broadcast_to(*this, s).flatten().getitem({Index(int_tensor(flat, device()))});
}

namespace {

// For a flat bool mask of n > 0 elements and a length size > 0: the position of the j-th true
// element for j < size (clamped to n - 1 past the last one), and whether there is a j-th one
// (both (size,)). The j-th true element is where the running count of true values first
// exceeds j, so its position is the number of elements whose running count is at most j.
// Lazy (an (n, size) comparison, no host read).
std::pair<Tensor, Tensor> selected_positions(const Tensor& flat_mask, int64_t size) {
  const int64_t n = flat_mask.numel();
  const std::string dev = flat_mask.device();
  const Tensor running = flat_mask.cast(dtypes::int32).cumsum(0).cast(dtypes::int32);
  const Tensor j = Tensor::arange(size, dtypes::int32, dev);
  const Tensor pos = running.reshape({1, n}).le(j.reshape({size, 1})).cast(dtypes::int32).sum({1});
  const Tensor valid = j.lt(running.reshape({n}).max());
  return {pos.cast(dtypes::int32).minimum(n - 1), valid};
}

} // namespace

Tensor Tensor::masked_select(const Tensor& mask, int64_t size, Scalar fill_value) const {
  if (!mask.dtype().is_bool())
    throw Error("masked_select: mask must be bool, got " + mask.dtype().name());
  if (size < 0)
    throw Error("masked_select: size must be non-negative, got " + std::to_string(size));
  const Shape s = broadcast_shapes({shape(), mask.shape()}, "masked_select: input and mask");
  const Tensor x = broadcast_to(*this, s).flatten();
  const Tensor fill = Tensor::full({}, fill_value, dtype(), device());
  if (size == 0 || x.numel() == 0) return Tensor::full({size}, fill_value, dtype(), device());
  const auto [pos, valid] = selected_positions(broadcast_to(mask, s).flatten(), size);
  return valid.where(x.gather(0, pos), fill);
}

Tensor Tensor::nonzero_static(int64_t size, int64_t fill_value) const {
  if (size < 0)
    throw Error("nonzero_static: size must be non-negative, got " + std::to_string(size));
  const int64_t nd = ndim();
  const Tensor fill = Tensor::full({}, fill_value, dtypes::int32, device());
  if (size == 0 || nd == 0 || numel() == 0)
    return Tensor::full({size, nd}, fill_value, dtypes::int32, device());
  const auto [pos, valid] = selected_positions(ne(scalar_like(int64_t{0})).flatten(), size);
  // The row-major multi-index of each position, one column per axis.
  std::vector<Tensor> cols;
  int64_t stride = numel();
  for (int64_t d = 0; d < nd; ++d) {
    stride /= this->size(d);
    cols.push_back(pos.idiv(stride).mod(this->size(d)).reshape({size, 1}));
  }
  return valid.reshape({size, 1}).where(Tensor::cat(cols, 1), fill);
}

Tensor Tensor::one_hot(int64_t num_classes) const {
  if (!dtype().is_int())
    throw Error("one_hot: classes must be an integer tensor, got " + dtype().name());
  if (num_classes < -1)
    throw Error("one_hot: num_classes must be -1 or non-negative, got " +
                std::to_string(num_classes));
  if (num_classes == -1) {
    if (numel() == 0) throw Error("one_hot: cannot infer num_classes of an empty tensor");
    // The number of classes is read from the values (realizes this tensor).
    const std::vector<int64_t> v = to_vector<int64_t>();
    const int64_t lo = *std::min_element(v.begin(), v.end());
    if (lo < 0)
      throw Error("one_hot: class values must be non-negative, got " + std::to_string(lo));
    num_classes = *std::max_element(v.begin(), v.end()) + 1;
  }
  return one_hot_along(unsqueeze(-1), num_classes, -1).cast(dtypes::int64);
}

} // namespace tg
