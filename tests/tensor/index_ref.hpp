#pragma once
// A plain C++ reference for PyTorch-style indexing of a host array (tests/tensor/ref.hpp's Arr):
// ints, slices (Python's rules), None, Ellipsis and integer arrays broadcast together. Integer
// arrays separated by a slice or None put their broadcast axes first (numpy); ints are applied
// before that decision, as PyTorch and tinygrad do.
#include <optional>
#include <vector>

#include "tensor/ref.hpp"

namespace tgt {

struct RIdx {
  enum Kind { Int, Sl, NoneI, Ell, Arr } kind = Sl;
  int64_t i = 0;
  std::optional<int64_t> start, stop;
  int64_t step = 1;
  std::vector<int64_t> vals; // Arr: values (row-major) of shape `shape`
  Shape shape;
  static RIdx integer(int64_t v) { return {Int, v, {}, {}, 1, {}, {}}; }
  static RIdx slice(std::optional<int64_t> b = {}, std::optional<int64_t> e = {}, int64_t st = 1) {
    return {Sl, 0, b, e, st, {}, {}};
  }
  static RIdx none() { return {NoneI, 0, {}, {}, 1, {}, {}}; }
  static RIdx ellipsis() { return {Ell, 0, {}, {}, 1, {}, {}}; }
  static RIdx array(std::vector<int64_t> v, Shape s) { return {Arr, 0, {}, {}, 1, v, s}; }
  static RIdx array(std::vector<int64_t> v) {
    const auto n = static_cast<int64_t>(v.size());
    return {Arr, 0, {}, {}, 1, std::move(v), Shape{n}};
  }
};

inline tg::Index to_index(const RIdx& r) {
  switch (r.kind) {
  case RIdx::Int:
    return r.i;
  case RIdx::Sl:
    return tg::Slice{r.start, r.stop, r.step};
  case RIdx::NoneI:
    return tg::None;
  case RIdx::Ell:
    return tg::Ellipsis;
  default: {
    std::vector<int32_t> v(r.vals.begin(), r.vals.end());
    return Tensor::from_vector(v, r.shape);
  }
  }
}

inline std::vector<tg::Index> to_indices(const std::vector<RIdx>& rs) {
  std::vector<tg::Index> out;
  for (const RIdx& r : rs) out.push_back(to_index(r));
  return out;
}

// Where each element of a[idx...] comes from: the result's shape and, per result element, the
// flat source position in a.
struct RefSel {
  Shape shape;
  std::vector<int64_t> src;
};

inline RefSel ref_select(const Shape& in, std::vector<RIdx> idx) {
  int64_t consumed = 0;
  for (const RIdx& r : idx) consumed += r.kind != RIdx::NoneI && r.kind != RIdx::Ell;
  auto ell =
      std::find_if(idx.begin(), idx.end(), [](const RIdx& r) { return r.kind == RIdx::Ell; });
  const auto at = ell - idx.begin();
  if (ell != idx.end()) idx.erase(ell);
  idx.insert(idx.begin() + at, static_cast<size_t>(static_cast<int64_t>(in.size()) - consumed),
             RIdx::slice());
  // Kept entries (not ints), the axis each reads, and the arrays' broadcast shape.
  std::vector<std::vector<int64_t>> pos(idx.size());
  std::vector<int64_t> axis_of(idx.size(), -1);
  Shape big;
  std::vector<size_t> kept, arrays;
  int64_t ax = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    const RIdx& r = idx[k];
    if (r.kind == RIdx::NoneI) {
      kept.push_back(k);
      continue;
    }
    axis_of[k] = ax;
    const int64_t n = in[static_cast<size_t>(ax)];
    if (r.kind == RIdx::Sl) pos[k] = py_slice_positions(n, r.start, r.stop, r.step);
    if (r.kind == RIdx::Arr) {
      big = broadcast(big, r.shape);
      arrays.push_back(k);
    }
    if (r.kind != RIdx::Int) kept.push_back(k);
    ++ax;
  }
  // The arrays' place among the kept entries; separated ones go to the front.
  std::vector<size_t> kpos;
  for (size_t j = 0; j < kept.size(); ++j)
    if (idx[kept[j]].kind == RIdx::Arr) kpos.push_back(j);
  bool front = false;
  for (size_t j = 1; j < kpos.size(); ++j) front |= kpos[j] != kpos[j - 1] + 1;
  front &= !kpos.empty() && kpos[0] != 0;
  // Result axes: a list of (entry, or -1 for the big block).
  std::vector<int64_t> layout;
  Shape out;
  auto put_big = [&] {
    layout.push_back(-1);
    out.insert(out.end(), big.begin(), big.end());
  };
  if (front) put_big();
  for (size_t j = 0; j < kept.size(); ++j) {
    const RIdx& r = idx[kept[j]];
    if (r.kind == RIdx::Arr) {
      if (!front && j == kpos[0]) put_big();
      continue;
    }
    layout.push_back(static_cast<int64_t>(kept[j]));
    out.push_back(r.kind == RIdx::NoneI ? 1 : static_cast<int64_t>(pos[kept[j]].size()));
  }
  RefSel sel{out, {}};
  for (int64_t e = 0; e < numel(out); ++e) {
    const std::vector<int64_t> o = unravel(e, out);
    std::vector<int64_t> src(in.size(), 0);
    size_t p = 0;
    std::vector<int64_t> b;
    for (int64_t l : layout) {
      if (l == -1) {
        b.assign(o.begin() + static_cast<int64_t>(p),
                 o.begin() + static_cast<int64_t>(p + big.size()));
        p += big.size();
        continue;
      }
      const RIdx& r = idx[static_cast<size_t>(l)];
      if (r.kind == RIdx::Sl)
        src[static_cast<size_t>(axis_of[static_cast<size_t>(l)])] =
            pos[static_cast<size_t>(l)][static_cast<size_t>(o[p])];
      ++p;
    }
    for (size_t k = 0; k < idx.size(); ++k) {
      const RIdx& r = idx[k];
      if (r.kind == RIdx::Int) {
        const int64_t n = in[static_cast<size_t>(axis_of[k])];
        src[static_cast<size_t>(axis_of[k])] = r.i < 0 ? r.i + n : r.i;
      } else if (r.kind == RIdx::Arr) {
        std::vector<int64_t> bi(r.shape.size());
        for (size_t q = 0; q < r.shape.size(); ++q)
          bi[q] = r.shape[q] == 1 ? 0 : b[q + big.size() - r.shape.size()];
        const int64_t n = in[static_cast<size_t>(axis_of[k])];
        const int64_t v = r.vals[static_cast<size_t>(ravel(bi, r.shape))];
        src[static_cast<size_t>(axis_of[k])] = v < 0 ? v + n : v;
      }
    }
    sel.src.push_back(ravel(src, in));
  }
  return sel;
}

inline Arr ref_getitem(const Arr& a, const std::vector<RIdx>& idx) {
  RefSel s = ref_select(a.shape, idx);
  Arr r{s.shape, {}};
  for (int64_t p : s.src) r.v.push_back(a.v[static_cast<size_t>(p)]);
  return r;
}

// a[idx] = value (broadcast to the selection's shape); later duplicates win.
inline Arr ref_setitem(Arr a, const std::vector<RIdx>& idx, const Arr& value) {
  RefSel s = ref_select(a.shape, idx);
  for (int64_t e = 0; e < numel(s.shape); ++e)
    a.v[static_cast<size_t>(s.src[static_cast<size_t>(e)])] =
        at_broadcast(value, unravel(e, s.shape));
  return a;
}

} // namespace tgt
