#pragma once
// The arg of a WMMA in a kernel before expansion (the TC opt's): the tile (N, M, K), the warp's
// threads, and for A, B and C the ids of the Upcast/Unroll ranges a thread's fragment runs
// over, slowest first, as one Shape:
//
//   {N, M, K, threads, |A|, A's ids..., |B|, B's ids..., |C|, C's ids...}
//
// Expansion replaces it by the tensor core's name (TensorCore::name), which renderers read.
#include <array>
#include <string>
#include <vector>

#include "tg/error.hpp"
#include "tg/ir/uop.hpp"

namespace tg::codegen_detail {

struct WmmaAxes {
  std::array<int64_t, 3> dims{0, 0, 0};
  int64_t threads = 1;
  std::array<std::vector<int64_t>, 3> fragment;
};

inline Shape wmma_arg(const WmmaAxes& w) {
  std::vector<int64_t> v{w.dims[0], w.dims[1], w.dims[2], w.threads};
  for (const auto& f : w.fragment) {
    v.push_back(static_cast<int64_t>(f.size()));
    v.insert(v.end(), f.begin(), f.end());
  }
  return Shape(v);
}

inline WmmaAxes wmma_axes(const UOp& wmma) {
  const auto* s = std::get_if<Shape>(&wmma.arg);
  if (s == nullptr) throw Error("codegen: a WMMA before expansion needs its axes: " + wmma.str());
  const std::vector<int64_t> v = *s;
  WmmaAxes w;
  size_t i = 0;
  auto next = [&] {
    if (i >= v.size()) throw Error("codegen: a WMMA's axes are cut short: " + wmma.str());
    return v[i++];
  };
  for (auto& d : w.dims) d = next();
  w.threads = next();
  for (auto& f : w.fragment) {
    const int64_t n = next();
    for (int64_t j = 0; j < n; ++j) f.push_back(next());
  }
  return w;
}

// The tensor core's name as TensorCore::name spells it.
inline std::string wmma_name(const WmmaAxes& w, DType in, DType out) {
  return "WMMA_" + std::to_string(w.dims[0]) + "_" + std::to_string(w.dims[1]) + "_" +
         std::to_string(w.dims[2]) + "_" + in.scalar().name() + "_" + out.scalar().name();
}

} // namespace tg::codegen_detail
