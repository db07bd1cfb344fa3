// More movement ops, built from the primitive views (reshape, expand, pad,
// shrink, flip, permute) as tinygrad builds them: pad modes, repeat, tile, repeat_interleave,
// roll, split, chunk, unflatten, movedim, tril, triu, diag, meshgrid. All are views except
// pad's reflect/replicate (a cat: one fused kernel), tril/triu (a where) and the host-repeats
// form of repeat_interleave (a gather).
#include <algorithm>
#include <numeric>

#include "tensor_internal.hpp"
#include "tg/error.hpp"

namespace tg {

namespace {

using detail::normalize_axis;
using Pairs = std::vector<std::pair<int64_t, int64_t>>;

std::string join(const std::vector<int64_t>& v) {
  std::string r = "[";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r + "]";
}

Pairs full_ranges(const Tensor& t) {
  Pairs r;
  for (int64_t i = 0; i < t.ndim(); ++i) r.emplace_back(0, t.size(i));
  return r;
}

// t restricted to [b, e) along axis d.
Tensor axis_range(const Tensor& t, int64_t d, int64_t b, int64_t e) {
  Pairs r = full_ranges(t);
  r[static_cast<size_t>(d)] = {b, e};
  return t.shrink(r);
}

Tensor zero_like_dtype(const Tensor& t) {
  return t.scalar_like(t.dtype().is_bool() ? Scalar(false) : Scalar(0));
}

} // namespace

// ---- pad modes ------------------------------------------------------------------------------

Tensor Tensor::pad(std::initializer_list<int64_t> flat, const PadMode& mode, Scalar value) const {
  const std::vector<int64_t> padding(flat);
  if (padding.size() % 2 != 0 || static_cast<int64_t>(padding.size()) > 2 * ndim())
    throw Error("pad: padding " + join(padding) + " must have an even length of at most " +
                std::to_string(2 * ndim()) + " (two per axis, last axis first) for shape " +
                shape_str(shape()));
  Pairs pairs(static_cast<size_t>(ndim()), {0, 0});
  for (size_t i = 0; i < padding.size() / 2; ++i)
    pairs[static_cast<size_t>(ndim()) - 1 - i] = {padding[2 * i], padding[2 * i + 1]};
  return pad(pairs, mode, value);
}

Tensor Tensor::pad(std::vector<std::pair<int64_t, int64_t>> padding, const PadMode& pad_mode,
                   Scalar value) const {
  const std::string& mode = pad_mode.name;
  if (static_cast<int64_t>(padding.size()) != ndim())
    throw Error("pad: " + std::to_string(padding.size()) + " (before, after) pairs for shape " +
                shape_str(shape()) + "; give one pair per axis");
  if (mode == "constant") return pad(padding, value);
  if (mode != "reflect" && mode != "replicate" && mode != "circular")
    throw NotImplementedError("pad: mode must be constant, reflect, replicate or circular; got \"" +
                              mode + "\"");
  if (mode == "circular") {
    // Negative padding crops first (PyTorch), then the wrap comes from the cropped tensor.
    Pairs crop, add;
    for (size_t i = 0; i < padding.size(); ++i) {
      auto [b, a] = padding[i];
      const int64_t n = size(static_cast<int64_t>(i));
      const int64_t lo = std::max<int64_t>(-b, 0), hi = n - std::max<int64_t>(-a, 0);
      if (lo > hi)
        throw Error("pad: padding (" + std::to_string(b) + ", " + std::to_string(a) +
                    ") crops more than the " + std::to_string(n) + " elements of axis " +
                    std::to_string(i));
      crop.emplace_back(lo, hi);
      const int64_t m = hi - lo;
      const int64_t pb = std::max<int64_t>(b, 0), pa = std::max<int64_t>(a, 0);
      if (pb > m || pa > m)
        throw Error("pad: circular padding (" + std::to_string(b) + ", " + std::to_string(a) +
                    ") of axis " + std::to_string(i) + " wraps around more than once (size " +
                    std::to_string(m) + ")");
      add.emplace_back(pb, pa);
    }
    Tensor x = shrink(crop);
    const Shape orig = x.shape();
    std::vector<int64_t> reps;
    for (const auto& [b, a] : add) reps.push_back(1 + (b > 0) + (a > 0));
    x = x.repeat(reps);
    Pairs keep;
    for (size_t i = 0; i < add.size(); ++i) {
      const int64_t o = orig[i], xs = x.size(static_cast<int64_t>(i));
      const auto [b, a] = add[i];
      keep.emplace_back(b == 0 ? 0 : o - b, a == 0 ? xs : xs - o + a);
    }
    return x.shrink(keep);
  }
  // reflect / replicate: pad the positive parts from the whole axis, then crop (PyTorch).
  Tensor x = *this;
  for (size_t i = 0; i < padding.size(); ++i) {
    const auto d = static_cast<int64_t>(i);
    const int64_t n = size(d);
    const int64_t pb = std::max<int64_t>(padding[i].first, 0);
    const int64_t pa = std::max<int64_t>(padding[i].second, 0);
    if (pb == 0 && pa == 0) continue;
    std::optional<Tensor> before, after;
    if (mode == "reflect") {
      if (pb >= n || pa >= n)
        throw Error("pad: reflect padding (" + std::to_string(padding[i].first) + ", " +
                    std::to_string(padding[i].second) + ") of axis " + std::to_string(i) +
                    " must be less than its size " + std::to_string(n) + " (shape " +
                    shape_str(shape()) + ")");
      if (pb > 0) before = axis_range(x, d, 1, pb + 1).flip({d});        // x[pb], ..., x[1]
      if (pa > 0) after = axis_range(x, d, n - 1 - pa, n - 1).flip({d}); // x[n-2], ..., x[n-1-pa]
    } else {
      if (n == 0)
        throw Error("pad: replicate cannot pad axis " + std::to_string(i) + " of size 0 (shape " +
                    shape_str(shape()) + ")");
      auto edge = [&](int64_t at, int64_t p) {
        Shape s = x.shape();
        s[i] = p;
        return axis_range(x, d, at, at + 1).expand(s);
      };
      if (pb > 0) before = edge(0, pb);
      if (pa > 0) after = edge(n - 1, pa);
    }
    std::vector<Tensor> parts;
    if (before) parts.push_back(*before);
    parts.push_back(x);
    if (after) parts.push_back(*after);
    x = Tensor::cat(parts, d);
  }
  Pairs crop;
  for (size_t i = 0; i < padding.size(); ++i) {
    const int64_t s = x.size(static_cast<int64_t>(i));
    const int64_t lo = std::max<int64_t>(-padding[i].first, 0);
    const int64_t hi = s - std::max<int64_t>(-padding[i].second, 0);
    if (lo > hi)
      throw Error("pad: padding (" + std::to_string(padding[i].first) + ", " +
                  std::to_string(padding[i].second) + ") crops more than the " + std::to_string(s) +
                  " elements of axis " + std::to_string(i));
    crop.emplace_back(lo, hi);
  }
  return x.shrink(crop);
}

// ---- repeat, tile, repeat_interleave, roll -------------------------------------------------

Tensor Tensor::repeat(std::vector<int64_t> repeats) const {
  if (static_cast<int64_t>(repeats.size()) < ndim())
    throw Error("repeat: " + std::to_string(repeats.size()) + " repeats " + join(repeats) +
                " for a tensor of shape " + shape_str(shape()) +
                "; give at least one per dimension");
  for (int64_t r : repeats)
    if (r < 0) throw Error("repeat: repeats " + join(repeats) + " must be non-negative");
  const size_t lead = repeats.size() - static_cast<size_t>(ndim());
  Shape unsq, expd, fin;
  for (size_t i = 0; i < repeats.size(); ++i) {
    const int64_t s = i < lead ? 1 : size(static_cast<int64_t>(i - lead));
    const int64_t r = repeats[i];
    if (r != 1) {
      unsq.push_back(1);
      expd.push_back(r);
    }
    unsq.push_back(s);
    expd.push_back(s);
    fin.push_back(r * s);
  }
  return reshape(unsq).expand(expd).reshape(fin);
}

Tensor Tensor::tile(std::vector<int64_t> dims) const {
  if (static_cast<int64_t>(dims.size()) < ndim())
    dims.insert(dims.begin(), static_cast<size_t>(ndim()) - dims.size(), 1);
  return repeat(dims);
}

Tensor Tensor::repeat_interleave(int64_t repeats, std::optional<int64_t> dim) const {
  if (repeats < 0)
    throw Error("repeat_interleave: repeats must be non-negative, got " + std::to_string(repeats));
  const Tensor x = dim ? *this : flatten();
  if (x.ndim() == 0) return x.reshape({1}).repeat_interleave(repeats, 0);
  const int64_t d = dim ? normalize_axis(*dim, ndim(), "repeat_interleave") : 0;
  Shape s = x.shape(), unsq = s, expd = s, fin = s;
  unsq.insert(unsq.begin() + d + 1, 1);
  expd.insert(expd.begin() + d + 1, repeats);
  fin[static_cast<size_t>(d)] = x.size(d) * repeats;
  return x.reshape(unsq).expand(expd).reshape(fin);
}

Tensor Tensor::repeat_interleave(const std::vector<int64_t>& repeats,
                                 std::optional<int64_t> dim) const {
  const Tensor x = dim ? *this : flatten();
  if (x.ndim() == 0) return x.reshape({1}).repeat_interleave(repeats, 0);
  const int64_t d = dim ? normalize_axis(*dim, ndim(), "repeat_interleave") : 0;
  const int64_t n = x.size(d);
  if (repeats.size() == 1) return x.repeat_interleave(repeats[0], d);
  if (static_cast<int64_t>(repeats.size()) != n)
    throw Error("repeat_interleave: " + std::to_string(repeats.size()) + " repeats " +
                join(repeats) + " for dimension " + std::to_string(d) + " of size " +
                std::to_string(n) + "; give one per element (or one for all)");
  std::vector<int32_t> idx;
  for (size_t i = 0; i < repeats.size(); ++i) {
    if (repeats[i] < 0)
      throw Error("repeat_interleave: repeats " + join(repeats) + " must be non-negative");
    idx.insert(idx.end(), static_cast<size_t>(repeats[i]), static_cast<int32_t>(i));
  }
  return x.index_select(
      d, Tensor::from_vector(idx, Shape{static_cast<int64_t>(idx.size())}, device()));
}

Tensor Tensor::roll(std::vector<int64_t> shifts, std::vector<int64_t> dims) const {
  if (dims.empty()) {
    if (shifts.size() != 1)
      throw Error("roll: without dims give exactly one shift, got " + join(shifts));
    return flatten().roll(shifts, {0}).reshape(shape());
  }
  if (shifts.size() != dims.size())
    throw Error("roll: shifts " + join(shifts) + " and dims " + join(dims) +
                " must have the same length");
  std::vector<int64_t> total(static_cast<size_t>(ndim()), 0);
  for (size_t i = 0; i < dims.size(); ++i)
    total[static_cast<size_t>(normalize_axis(dims[i], ndim(), "roll"))] += shifts[i];
  std::vector<int64_t> reps(static_cast<size_t>(ndim()), 1);
  Pairs keep = full_ranges(*this);
  bool any = false;
  for (int64_t d = 0; d < ndim(); ++d) {
    const int64_t n = size(d);
    if (n == 0) continue;
    const int64_t s = ((total[static_cast<size_t>(d)] % n) + n) % n;
    if (s == 0) continue;
    reps[static_cast<size_t>(d)] = 2;
    keep[static_cast<size_t>(d)] = {n - s, 2 * n - s};
    any = true;
  }
  if (!any) return *this;
  return repeat(reps).shrink(keep); // a view: out[i] = x[(i - s) mod n]
}

// ---- split, chunk, unflatten, movedim ------------------------------------------------------

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t dim) const {
  const int64_t d = normalize_axis(dim, ndim(), "split");
  const int64_t n = size(d);
  if (split_size < 0 || (split_size == 0 && n != 0))
    throw Error("split: split_size must be positive, got " + std::to_string(split_size) +
                " for dimension " + std::to_string(d) + " of size " + std::to_string(n));
  if (n == 0) return {*this};
  std::vector<int64_t> sizes;
  for (int64_t b = 0; b < n; b += split_size) sizes.push_back(std::min(split_size, n - b));
  return split(sizes, d);
}

std::vector<Tensor> Tensor::split(std::vector<int64_t> split_sizes, int64_t dim) const {
  const int64_t d = normalize_axis(dim, ndim(), "split");
  const int64_t n = size(d);
  int64_t sum = 0;
  for (int64_t s : split_sizes) {
    if (s < 0) throw Error("split: split sizes " + join(split_sizes) + " must be non-negative");
    sum += s;
  }
  if (sum != n)
    throw Error("split: split sizes " + join(split_sizes) + " sum to " + std::to_string(sum) +
                " but dimension " + std::to_string(d) + " has size " + std::to_string(n) +
                " (shape " + shape_str(shape()) + ")");
  std::vector<Tensor> out;
  int64_t b = 0;
  for (int64_t s : split_sizes) {
    out.push_back(axis_range(*this, d, b, b + s));
    b += s;
  }
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t dim) const {
  if (chunks <= 0) throw Error("chunk: chunks must be positive, got " + std::to_string(chunks));
  const int64_t d = normalize_axis(dim, ndim(), "chunk");
  const int64_t n = size(d);
  if (n == 0) return split(std::vector<int64_t>(static_cast<size_t>(chunks), 0), d);
  return split((n + chunks - 1) / chunks, d);
}

Tensor Tensor::unflatten(int64_t dim, std::vector<int64_t> sizes) const {
  const int64_t d = normalize_axis(dim, ndim(), "unflatten");
  if (sizes.empty()) throw Error("unflatten: sizes must be non-empty");
  const int64_t n = size(d);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (infer >= 0) throw Error("unflatten: only one size may be -1, got " + join(sizes));
      infer = static_cast<int64_t>(i);
    } else if (sizes[i] < 0) {
      throw Error("unflatten: invalid size " + std::to_string(sizes[i]) + " in " + join(sizes));
    } else {
      known *= sizes[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      throw Error("unflatten: sizes " + join(sizes) + " do not fit dimension " + std::to_string(d) +
                  " of size " + std::to_string(n));
    sizes[static_cast<size_t>(infer)] = n / known;
    known *= sizes[static_cast<size_t>(infer)];
  }
  if (known != n)
    throw Error("unflatten: sizes " + join(sizes) + " multiply to " + std::to_string(known) +
                " but dimension " + std::to_string(d) + " has size " + std::to_string(n) +
                " (shape " + shape_str(shape()) + ")");
  Shape s;
  for (int64_t i = 0; i < ndim(); ++i) {
    if (i == d) {
      for (int64_t x : sizes) s.push_back(x);
    } else {
      s.push_back(size(i));
    }
  }
  return reshape(s);
}

Tensor Tensor::movedim(int64_t source, int64_t destination) const {
  return movedim(std::vector<int64_t>{source}, std::vector<int64_t>{destination});
}

Tensor Tensor::movedim(std::vector<int64_t> source, std::vector<int64_t> destination) const {
  if (source.size() != destination.size())
    throw Error("movedim: source " + join(source) + " and destination " + join(destination) +
                " must have the same number of dimensions");
  const auto n = static_cast<size_t>(ndim());
  std::vector<int64_t> order(n, -1);
  std::vector<bool> used_src(n, false);
  for (size_t i = 0; i < source.size(); ++i) {
    const auto s = static_cast<size_t>(normalize_axis(source[i], ndim(), "movedim"));
    const auto t = static_cast<size_t>(normalize_axis(destination[i], ndim(), "movedim"));
    if (used_src[s]) throw Error("movedim: repeated dim in source " + join(source));
    if (order[t] != -1) throw Error("movedim: repeated dim in destination " + join(destination));
    used_src[s] = true;
    order[t] = static_cast<int64_t>(s);
  }
  size_t next = 0;
  for (size_t t = 0; t < n; ++t) {
    if (order[t] != -1) continue;
    while (used_src[next]) ++next;
    order[t] = static_cast<int64_t>(next++);
  }
  Shape perm;
  for (int64_t o : order) perm.push_back(o);
  return permute(perm);
}

// ---- tril, triu, diag, meshgrid -------------------------------------------------------------

namespace {
Tensor tri(const Tensor& t, int64_t diagonal, bool upper, const char* op) {
  if (t.ndim() < 2)
    throw Error(std::string(op) + ": the input must have at least 2 dimensions, got shape " +
                shape_str(t.shape()));
  const int64_t r = t.size(-2), c = t.size(-1);
  Tensor row = Tensor::arange(r, dtypes::int32, t.device()).unsqueeze(-1).add(diagonal);
  Tensor col = Tensor::arange(c, dtypes::int32, t.device());
  Tensor keep = upper ? row.le(col) : row.ge(col); // triu: j - i >= k; tril: j - i <= k
  return keep.where(t, zero_like_dtype(t));
}
} // namespace

Tensor Tensor::tril(int64_t diagonal) const { return tri(*this, diagonal, false, "tril"); }
Tensor Tensor::triu(int64_t diagonal) const { return tri(*this, diagonal, true, "triu"); }

Tensor Tensor::diag(int64_t diagonal) const {
  if (ndim() == 1) {
    // v on the main diagonal of an n x n matrix as views: (n, 1) padded to (n, n + 1),
    // flattened and cut to n * n, then the offset as padding.
    const int64_t n = size(0);
    Tensor m = unsqueeze(-1).pad({{0, 0}, {0, n}}).flatten().shrink({{0, n * n}}).reshape({n, n});
    const int64_t k = std::abs(diagonal);
    if (diagonal > 0) return m.pad({{0, k}, {k, 0}});
    if (diagonal < 0) return m.pad({{k, 0}, {0, k}});
    return m;
  }
  if (ndim() == 2) {
    const int64_t r = size(0), c = size(1);
    // The diagonal of the part that starts at (max(-k, 0), max(k, 0)).
    const int64_t r0 = std::min(std::max<int64_t>(-diagonal, 0), r);
    const int64_t c0 = std::min(std::max<int64_t>(diagonal, 0), c);
    const int64_t m = std::min(r - r0, c - c0);
    Tensor sq = shrink({{r0, r0 + m}, {c0, c0 + m}});
    // (m, m) flattened, padded by m to m * (m + 1): element i * (m + 1) is sq[i, i].
    return sq.flatten().pad({{0, m}}).reshape({m, m + 1}).shrink({{0, m}, {0, 1}}).reshape({m});
  }
  throw Error("diag: the input must be 1-D or 2-D, got shape " + shape_str(shape()));
}

Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  const int64_t n = ndim();
  auto axis = [&](int64_t d, const char* what) {
    if (d < -n || d >= n)
      throw Error(std::string("diagonal: ") + what + " " + std::to_string(d) +
                  " is out of range for a " + std::to_string(n) + "-D tensor");
    return d < 0 ? d + n : d;
  };
  const int64_t a = axis(dim1, "dim1"), b = axis(dim2, "dim2");
  if (a == b) throw Error("diagonal: dim1 and dim2 are the same axis (" + std::to_string(a) + ")");
  // The plane's axes last, then diag()'s slicing of each plane: the part that starts at
  // (max(-offset, 0), max(offset, 0)), flattened, padded to m * (m + 1), every (m + 1)-th.
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i)
    if (i != a && i != b) order.push_back(i);
  order.push_back(a);
  order.push_back(b);
  Tensor p = permute(order);
  const int64_t r = size(a), c = size(b);
  const int64_t r0 = std::min(std::max<int64_t>(-offset, 0), r);
  const int64_t c0 = std::min(std::max<int64_t>(offset, 0), c);
  const int64_t m = std::min(r - r0, c - c0);
  std::vector<std::pair<int64_t, int64_t>> cut, keep;
  Shape lead, flat, wide;
  for (int64_t i = 0; i + 2 < n; ++i) {
    const int64_t s = p.size(i);
    cut.emplace_back(0, s);
    keep.emplace_back(0, s);
    lead.push_back(s);
  }
  cut.emplace_back(r0, r0 + m);
  cut.emplace_back(c0, c0 + m);
  flat = lead;
  flat.push_back(m * m);
  std::vector<std::pair<int64_t, int64_t>> pad(lead.size(), {0, 0});
  pad.emplace_back(0, m);
  wide = lead;
  wide.push_back(m);
  wide.push_back(m + 1);
  keep.emplace_back(0, m);
  keep.emplace_back(0, 1);
  Shape out = lead;
  out.push_back(m);
  return p.shrink(PadArg(cut))
      .reshape(flat)
      .pad(pad)
      .reshape(wide)
      .shrink(PadArg(keep))
      .reshape(out);
}

std::vector<Tensor> Tensor::meshgrid(const std::vector<Tensor>& tensors,
                                     const std::string& indexing) {
  if (indexing != "ij" && indexing != "xy")
    throw Error("meshgrid: indexing must be \"ij\" or \"xy\", got \"" + indexing + "\"");
  if (tensors.empty()) throw Error("meshgrid: give at least one tensor");
  Shape s;
  for (const Tensor& t : tensors) {
    if (t.ndim() > 1)
      throw Error("meshgrid: expects 0-d or 1-d tensors, got shape " + shape_str(t.shape()));
    if (t.dtype() != tensors[0].dtype() || t.device() != tensors[0].device())
      throw Error("meshgrid: tensors must have one dtype and device, got " +
                  tensors[0].dtype().name() + " on " + tensors[0].device() + " and " +
                  t.dtype().name() + " on " + t.device());
    s.push_back(t.numel());
  }
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(s[0], s[1]);
  std::vector<Tensor> out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    size_t axis = i;
    if (swap && i < 2) axis = 1 - i;
    Shape r(s.size(), 1);
    r[axis] = tensors[i].numel();
    out.push_back(tensors[i].reshape(r).expand(s));
  }
  return out;
}

} // namespace tg
