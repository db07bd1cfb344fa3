#pragma once
// A tensor core's tile as axes of size 2 named the way tinygrad's TensorCore names them:
// "l<i>" (bit i of the lane), "u<i>" (an upcast lane bit), "r<i>" (bit i of K). The TC opt and
// the fragment layout both read a TensorCore through these.
#include <array>
#include <map>
#include <string>
#include <vector>

#include "tg/plugin/tensor_core.hpp"

namespace tg::opt_detail {

struct TcNames {
  // tinygrad's base_shape_str: the opts in order, each named by its kind and how many of that
  // kind came before ("u0", "l0", "l1", ...), then "r0".. for K's bits (lowest first).
  std::vector<std::string> base;
  // For each base name: the tile dimension it is a bit of (0 N, 1 M, 2 K) and which bit (the
  // first split of a dimension is its lowest bit).
  std::vector<int> dim, bit;
  // For A and B: the axis that carries each tile bit in that operand (the swizzle read as
  // tinygrad's remap: tile bit s lives on the axis whose place in "l0.. u0.. r0.." holds s in
  // the flattened swizzle). C's bits stay on their own axes.
  std::array<std::map<std::string, std::string>, 2> carrier;
  // For A, B and C: the axes a thread's elements run over, slowest first (tinygrad's
  // tc_upcast_axes: u's from the last, then r's from the last, as many as the element count's
  // bits).
  std::array<std::vector<std::string>, 3> fragment;

  int index(const std::string& name) const; // position in `base`
};

TcNames tc_names(const TensorCore& tc);

} // namespace tg::opt_detail
