#pragma once
// A tensor-core instruction as data (tinygrad's TensorCore), for RendererCaps::tensor_cores: a
// warp of `threads` computes D (M x N, dtype_out) = A (M x K, dtype_in) * B (K x N) + C. Each
// thread holds elements_per_thread[0..2] elements of A, B and C. Which element of the tile a
// (thread, element) pair holds is given the way tinygrad builds it, from axes of size 2:
//   opts     the order the tile's output axes are split off: "l0"/"l1" make a local (thread)
//            axis of size 2 from output dim 0/1, "u0"/"u1" an upcast (per-thread element) axis
//   swizzle  for A and B, where each of the tile's axes goes, as three lists (local, upcast,
//            reduce) of axis names "l<i>", "u<i>", "r<i>": together a permutation of them all
// e.g. CUDA's mma.m16n8k16 with half inputs: dims {8, 16, 16}, threads 32, elements {8, 4, 4},
// opts {"u0","l0","l0","l1","l1","l1","u1"}.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tg/ir/dtype.hpp"

namespace tg {

struct TensorCore {
  std::array<int64_t, 3> dims{0, 0, 0}; // N, M, K
  int64_t threads = 0;
  std::array<int64_t, 3> elements_per_thread{0, 0, 0}; // A, B, C
  DType dtype_in = dtypes::float16;
  DType dtype_out = dtypes::float32;
  std::vector<std::string> opts;
  struct Operand {
    std::vector<std::string> local, upcast, reduce;
  };
  std::array<Operand, 2> swizzle; // A, B

  int64_t local_axes() const { return count_opts('l'); }
  int64_t upcast_axes() const { return count_opts('u'); }
  int64_t reduce_axes() const { // K as axes of size 2
    int64_t n = 0;
    for (int64_t k = dims[2]; k > 1; k /= 2) ++n;
    return n;
  }

  // tinygrad's name: "WMMA_8_16_16_float16_float32" (N, M, K, input and output dtypes).
  std::string name() const {
    return "WMMA_" + std::to_string(dims[0]) + "_" + std::to_string(dims[1]) + "_" +
           std::to_string(dims[2]) + "_" + dtype_in.name() + "_" + dtype_out.name();
  }

  // "" when the description is consistent, else what is wrong (tinygrad's checks).
  std::string check() const {
    const int64_t l = local_axes(), u = upcast_axes(), r = reduce_axes();
    if (dims[2] != (int64_t{1} << r)) return name() + ": K must be a power of two";
    if (dims[0] * dims[1] != (int64_t{1} << (l + u)))
      return name() + ": N*M must be 2^(local + upcast opts)";
    if (threads != (int64_t{1} << l)) return name() + ": threads must be 2^(local opts)";
    if (elements_per_thread[2] != (int64_t{1} << u))
      return name() + ": elements of C per thread must be 2^(upcast opts)";
    std::vector<std::string> all;
    for (int64_t i = 0; i < l; ++i) all.push_back("l" + std::to_string(i));
    for (int64_t i = 0; i < u; ++i) all.push_back("u" + std::to_string(i));
    for (int64_t i = 0; i < r; ++i) all.push_back("r" + std::to_string(i));
    std::sort(all.begin(), all.end());
    for (size_t op = 0; op < 2; ++op) {
      const Operand& s = swizzle[op];
      const std::string which = op == 0 ? "A" : "B";
      if (static_cast<int64_t>(s.local.size()) != l || static_cast<int64_t>(s.upcast.size()) != u ||
          static_cast<int64_t>(s.reduce.size()) != r)
        return name() + ": the swizzle of " + which + " must list " + std::to_string(l) +
               " local, " + std::to_string(u) + " upcast and " + std::to_string(r) + " reduce axes";
      std::vector<std::string> got = s.local;
      got.insert(got.end(), s.upcast.begin(), s.upcast.end());
      got.insert(got.end(), s.reduce.begin(), s.reduce.end());
      std::sort(got.begin(), got.end());
      if (got != all)
        return name() + ": the swizzle of " + which + " is not a permutation of the axes";
    }
    return "";
  }

private:
  int64_t count_opts(char kind) const {
    return std::count_if(opts.begin(), opts.end(),
                         [&](const std::string& o) { return !o.empty() && o[0] == kind; });
  }
};

} // namespace tg
