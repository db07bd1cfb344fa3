// Movement ops: views that become index arithmetic in the scheduler, never copies.
#include <numeric>

#include "tensor_internal.hpp"
#include "tg/error.hpp"
#include "tg/schedule.hpp"

namespace tg {

namespace {

using detail::make;
using detail::normalize_axis;

// The bindings of symbolic sizes in `arg` go to the tensor, not into the graph.
Tensor movement(const Tensor& t, Ops op, const Arg& arg) {
  return detail::with_bindings(make(UOp::make(op, t.dtype(), {t.uop()}, arg), {&t}), arg);
}

} // namespace

Tensor Tensor::reshape(Shape shape) const {
  const Shape& in = this->shape();
  const sint n = sint_prod(in); // symbolic sizes must agree as expressions
  int64_t infer = -1;
  sint known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) throw Error("reshape: only one dimension can be -1, got " + shape_str(shape));
      infer = static_cast<int64_t>(i);
    } else if (shape[i].vmin() < 0) {
      throw Error("reshape: invalid dimension " + shape[i].str() + " in " + shape_str(shape));
    } else {
      known = sint::mul(known, shape[i]);
    }
  }
  if (infer >= 0) {
    if (known == 0 || (known.is_int() && n.is_int() && int64_t{n} % int64_t{known} != 0))
      throw Error("reshape: cannot reshape " + shape_str(in) + " (" + n.str() + " elements) to " +
                  shape_str(shape));
    shape[static_cast<size_t>(infer)] = sint::idiv(n, known);
  }
  if (const sint m = sint_prod(shape); !(m == n))
    throw Error("reshape: cannot reshape " + shape_str(in) + " (" + n.str() + " elements) to " +
                shape_str(shape) + " (" + m.str() + " elements)");
  if (shape == in) return *this;
  return movement(*this, Ops::RESHAPE, shape);
}

Tensor Tensor::permute(Shape order) const {
  if (static_cast<int64_t>(order.size()) != ndim())
    throw Error("permute: " + shape_str(order) + " has " + std::to_string(order.size()) +
                " axes but the tensor has shape " + shape_str(shape()));
  for (sint& a : order) a = normalize_axis(a, ndim(), "permute");
  Shape sorted = order;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      throw Error("permute: " + shape_str(order) + " is not a permutation of the axes of " +
                  shape_str(shape()));
  bool identity = true;
  for (size_t i = 0; i < order.size(); ++i) identity &= order[i] == static_cast<int64_t>(i);
  if (identity) return *this;
  return movement(*this, Ops::PERMUTE, order);
}

Tensor Tensor::transpose(int64_t a, int64_t b) const {
  a = normalize_axis(a, ndim(), "transpose");
  b = normalize_axis(b, ndim(), "transpose");
  Shape order(static_cast<size_t>(ndim()));
  std::iota(order.begin(), order.end(), 0);
  std::swap(order[static_cast<size_t>(a)], order[static_cast<size_t>(b)]);
  return permute(order);
}

Tensor Tensor::expand(Shape shape) const {
  const Shape& in = this->shape();
  if (shape.size() < in.size())
    throw Error("expand: cannot expand " + shape_str(in) + " to " + shape_str(shape) +
                " (fewer dimensions)");
  const size_t lead = shape.size() - in.size();
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (i < lead)
        throw Error("expand: -1 is not allowed for a new dimension in " + shape_str(shape));
      shape[i] = in[i - lead];
    }
    if (i >= lead && in[i - lead] != shape[i] && in[i - lead] != 1)
      throw Error("expand: cannot expand " + shape_str(in) + " to " + shape_str(shape) + ": size " +
                  in[i - lead].str() + " at axis " + std::to_string(i - lead) + " is not 1");
    if (shape[i].vmin() < 0) throw Error("expand: negative dimension in " + shape_str(shape));
  }
  Tensor t = *this;
  if (lead) {
    Shape padded(lead, 1);
    padded.insert(padded.end(), in.begin(), in.end());
    t = t.reshape(padded);
  }
  if (t.shape() == shape) return t;
  return movement(t, Ops::EXPAND, shape);
}

Tensor Tensor::pad(std::vector<std::pair<int64_t, int64_t>> padding, Scalar value) const {
  if (static_cast<int64_t>(padding.size()) != ndim())
    throw Error("pad: " + std::to_string(padding.size()) + " (before, after) pairs for shape " +
                shape_str(shape()) + "; give one pair per axis");
  // Negative padding removes elements (tinygrad): shrink first.
  std::vector<std::pair<int64_t, int64_t>> keep, add;
  bool any_shrink = false, any_pad = false;
  for (size_t i = 0; i < padding.size(); ++i) {
    auto [b, a] = padding[i];
    const int64_t n = shape()[i];
    const int64_t lo = b < 0 ? -b : 0, hi = a < 0 ? n + a : n;
    if (lo > hi)
      throw Error("pad: padding " + std::to_string(b) + ", " + std::to_string(a) +
                  " removes more than the " + std::to_string(n) + " elements of axis " +
                  std::to_string(i));
    keep.emplace_back(lo, hi);
    add.emplace_back(std::max<int64_t>(b, 0), std::max<int64_t>(a, 0));
    any_shrink |= b < 0 || a < 0;
    any_pad |= b > 0 || a > 0;
  }
  Tensor t = any_shrink ? shrink(keep) : *this;
  if (!any_pad) return t;
  Tensor padded = movement(t, Ops::PAD, PadArg(add));
  if (as_double(value.value) == 0 && !std::holds_alternative<bool>(value.value)) return padded;
  if (std::holds_alternative<bool>(value.value) && !as_bool(value.value)) return padded;
  // Another fill value: where the padding is, the value.
  Tensor mask = Tensor::full(t.shape(), true, dtypes::bool_, t.device());
  mask = movement(mask, Ops::PAD, PadArg(add));
  return mask.where(padded, padded.scalar_like(value).cast(dtype()));
}

Tensor Tensor::shrink(PadArg ranges) const {
  if (static_cast<int64_t>(ranges.size()) != ndim())
    throw Error("shrink: " + std::to_string(ranges.size()) + " ranges for shape " +
                shape_str(shape()) + "; give one (begin, end) per axis");
  bool identity = true;
  for (size_t i = 0; i < ranges.size(); ++i) {
    const auto& [b, e] = ranges[i];
    // A symbolic range must fit for every value of its variables.
    if (b.vmin() < 0 || sint::sub(e, b).vmin() < 0 || sint::sub(e, shape()[i]).vmax() > 0)
      throw Error("shrink: range [" + b.str() + ", " + e.str() + ") of axis " + std::to_string(i) +
                  " is out of range for shape " + shape_str(shape()));
    identity &= b == 0 && e == shape()[i];
  }
  if (identity) return *this;
  return movement(*this, Ops::SHRINK, ranges);
}

Tensor Tensor::flip(std::vector<int64_t> axes) const {
  Shape flags(static_cast<size_t>(ndim()), 0);
  for (int64_t a : axes) {
    const int64_t ax = normalize_axis(a, ndim(), "flip");
    if (flags[static_cast<size_t>(ax)])
      throw Error("flip: axis " + std::to_string(a) + " given twice");
    flags[static_cast<size_t>(ax)] = 1;
  }
  for (size_t i = 0; i < flags.size(); ++i)
    if (shape()[i] <= 1) flags[i] = 0; // flipping one element changes nothing
  if (std::all_of(flags.begin(), flags.end(), [](int64_t f) { return f == 0; })) return *this;
  return movement(*this, Ops::FLIP, flags);
}

Tensor Tensor::flatten(int64_t start, int64_t end) const {
  if (ndim() == 0) return reshape({1});
  start = normalize_axis(start, ndim(), "flatten");
  end = normalize_axis(end, ndim(), "flatten");
  if (start > end) throw Error("flatten: start dimension after end dimension");
  Shape s(shape().begin(), shape().begin() + start);
  int64_t n = 1;
  for (int64_t i = start; i <= end; ++i) n *= shape()[static_cast<size_t>(i)];
  s.push_back(n);
  s.insert(s.end(), shape().begin() + end + 1, shape().end());
  return reshape(s);
}

Tensor Tensor::squeeze(std::optional<int64_t> dim) const {
  Shape s;
  if (!dim) {
    for (int64_t d : shape())
      if (d != 1) s.push_back(d);
    return reshape(s);
  }
  // A 0-d tensor takes dimensions -1 and 0, as PyTorch (and nothing else).
  const int64_t ax = normalize_axis(*dim, ndim(), "squeeze");
  if (ndim() == 0) return *this;
  if (shape()[static_cast<size_t>(ax)] != 1) return *this;
  s = shape();
  s.erase(s.begin() + ax);
  return reshape(s);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  const int64_t ax = normalize_axis(dim, ndim() + 1, "unsqueeze");
  Shape s = shape();
  s.insert(s.begin() + ax, 1);
  return reshape(s);
}

Tensor Tensor::slice(std::vector<Slice> slices) const {
  if (static_cast<int64_t>(slices.size()) > ndim())
    throw Error("slice: " + std::to_string(slices.size()) + " slices for a tensor of shape " +
                shape_str(shape()));
  Tensor t = *this;
  for (size_t ax = 0; ax < slices.size(); ++ax) {
    const Slice& sl = slices[ax];
    const int64_t n = t.shape()[ax];
    if (sl.step == 0) throw Error("slice: step of axis " + std::to_string(ax) + " is zero");
    // Python's slice.indices().
    auto norm = [&](std::optional<int64_t> v, int64_t dflt, int64_t lo, int64_t hi) {
      if (!v) return dflt;
      int64_t x = *v < 0 ? *v + n : *v;
      return std::clamp(x, lo, hi);
    };
    int64_t start, stop, count;
    if (sl.step > 0) {
      start = norm(sl.start, 0, 0, n);
      stop = norm(sl.stop, n, 0, n);
      count = stop > start ? (stop - start + sl.step - 1) / sl.step : 0;
    } else {
      start = norm(sl.start, n - 1, -1, n - 1);
      stop = norm(sl.stop, -1, -1, n - 1);
      count = start > stop ? (start - stop - sl.step - 1) / -sl.step : 0;
    }
    const int64_t step = sl.step > 0 ? sl.step : -sl.step;
    std::vector<std::pair<int64_t, int64_t>> r;
    for (size_t i = 0; i < t.shape().size(); ++i) r.emplace_back(0, t.shape()[i]);
    if (count == 0) {
      r[ax] = {0, 0};
      t = t.shrink(r);
      continue;
    }
    const int64_t first = sl.step > 0 ? start : start + (count - 1) * sl.step; // lowest index
    r[ax] = {first, first + (count - 1) * step + 1};
    t = t.shrink(r);
    if (sl.step < 0) t = t.flip({static_cast<int64_t>(ax)});
    if (step > 1) { // every step-th element: pad to count*step, split, keep the first column
      std::vector<std::pair<int64_t, int64_t>> p(t.shape().size(), {0, 0});
      p[ax] = {0, count * step - t.shape()[ax]};
      t = t.pad(p);
      Shape s = t.shape();
      s[ax] = count;
      s.insert(s.begin() + static_cast<int64_t>(ax) + 1, step);
      t = t.reshape(s);
      std::vector<std::pair<int64_t, int64_t>> k;
      for (size_t i = 0; i < s.size(); ++i) k.emplace_back(0, s[i]);
      k[ax + 1] = {0, 1};
      t = t.shrink(k);
      s.erase(s.begin() + static_cast<int64_t>(ax) + 1);
      t = t.reshape(s);
    }
  }
  return t;
}

Tensor Tensor::index(int64_t i, int64_t axis) const {
  const int64_t ax = normalize_axis(axis, ndim(), "index");
  const int64_t n = shape()[static_cast<size_t>(ax)];
  if (i < -n || i >= n)
    throw Error("index " + std::to_string(i) + " is out of bounds for dimension " +
                std::to_string(ax) + " with size " + std::to_string(n) + " (shape " +
                shape_str(shape()) + ")");
  const int64_t k = i < 0 ? i + n : i;
  std::vector<std::pair<int64_t, int64_t>> r;
  for (int64_t d : shape()) r.emplace_back(0, d);
  r[static_cast<size_t>(ax)] = {k, k + 1};
  Shape s = shape();
  s.erase(s.begin() + ax);
  return shrink(r).reshape(s);
}

Tensor Tensor::cat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("cat: no tensors given");
  const Tensor& first = tensors[0];
  if (first.ndim() == 0)
    throw Error("cat: zero-dimensional tensors cannot be concatenated: unsqueeze them first or use "
                "stack");
  const int64_t ax = normalize_axis(dim, first.ndim(), "cat");
  std::vector<DType> dts;
  int64_t total = 0;
  for (const Tensor& t : tensors) {
    bool ok = t.ndim() == first.ndim();
    for (int64_t i = 0; ok && i < t.ndim(); ++i)
      ok = i == ax || t.shape()[static_cast<size_t>(i)] == first.shape()[static_cast<size_t>(i)];
    if (!ok)
      throw Error("cat: shapes " + shape_str(first.shape()) + " and " + shape_str(t.shape()) +
                  " differ outside dimension " + std::to_string(ax));
    if (t.device() != first.device())
      throw Error("cat: tensors are on different devices (" + first.device() + " and " +
                  t.device() + ")");
    dts.push_back(t.dtype());
    total += t.shape()[static_cast<size_t>(ax)];
  }
  const DType dt = least_upper_dtype(dts);
  // Each piece padded with zeros to the whole length, then summed: one fused kernel.
  std::optional<Tensor> out;
  int64_t offset = 0;
  for (const Tensor& t : tensors) {
    const int64_t n = t.shape()[static_cast<size_t>(ax)];
    std::vector<std::pair<int64_t, int64_t>> p(static_cast<size_t>(t.ndim()), {0, 0});
    p[static_cast<size_t>(ax)] = {offset, total - offset - n};
    Tensor piece = t.cast(dt).pad(p);
    out = out ? (dt.is_bool() ? out->bitwise_or(piece) : out->add(piece)) : piece;
    offset += n;
  }
  return *out;
}

Tensor Tensor::stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw Error("stack: no tensors given");
  const int64_t ax = normalize_axis(dim, tensors[0].ndim() + 1, "stack");
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) {
    if (t.shape() != tensors[0].shape())
      throw Error("stack: shapes " + shape_str(tensors[0].shape()) + " and " +
                  shape_str(t.shape()) + " differ; stack needs equal shapes");
    parts.push_back(t.unsqueeze(ax));
  }
  return cat(parts, ax);
}

Tensor Tensor::contiguous() const {
  return make(UOp::make(Ops::CONTIGUOUS, dtype(), {uop()}), {this});
}

Tensor Tensor::clone() const {
  // Memory is copied (a COPY to the same device); anything else is computed into a new buffer.
  if (is_contiguous_buffer_view(uop()))
    return make(UOp::make(Ops::COPY, dtype(), {uop(), detail::device_node(device())}), {this});
  return contiguous();
}

Tensor Tensor::detach() const { return make(UOp::make(Ops::DETACH, dtype(), {uop()}), {this}); }

Tensor Tensor::to(const std::string& device) const {
  const std::string dev = canonical_device(device);
  if (dev == this->device()) return *this;
  return make(UOp::make(Ops::COPY, dtype(), {uop(), detail::device_node(dev)}), {this});
}

Tensor& Tensor::assign(const Tensor& value) {
  if (value.device() != device())
    throw Error("assign: value is on " + value.device() + " but the tensor is on " + device());
  // The target must be memory: realize a lazy target first.
  if (!is_buffer_view(uop())) realize();
  for (const UOp* n = uop().get(); n->op != Ops::BUFFER; n = n->src[0].get())
    if (n->op == Ops::EXPAND || n->op == Ops::PAD)
      throw Error("assign: cannot write through an " + std::string(op_name(n->op)) +
                  " view (several elements would share one address); call contiguous() first");
  Shape s = shape();
  Tensor v = value.cast(dtype());
  if (v.shape() != s) {
    // Broadcast the value to this tensor's shape (numpy rules).
    if (v.ndim() > ndim())
      throw Error("assign: value of shape " + shape_str(v.shape()) +
                  " does not fit a tensor of shape " + shape_str(s));
    v = v.expand(s);
  }
  UOpPtr a = UOp::make(Ops::ASSIGN, dtype(), {uop(), v.uop()});
  Tensor t = detail::make(a, {this, &v});
  state_->uop = t.uop();
  state_->buffers = t.state()->buffers;
  // Overwritten: the graph it was computed by no longer describes its memory.
  state_->forward = nullptr;
  state_->forward_buffers.clear();
  return *this;
}

Tensor& Tensor::assign(Scalar value) { return assign(scalar_like(value)); }

} // namespace tg
