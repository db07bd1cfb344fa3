// tinygrad's _group_dims, _split_dims and get_grouped_dims (codegen/gpudims.py).
#include "grouped_dims.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "tg/ir/symbolic.hpp"

namespace tg::codegen_detail {

namespace {

int64_t product(const std::vector<int64_t>& v, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < v.size(); ++i) p *= v[i];
  return p;
}

bool fits(const std::vector<int64_t>& dims, const std::vector<int64_t>& max) {
  if (dims.size() > max.size()) return false;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] > max[i]) return false;
  return true;
}

// Merges neighbours (the first pair that fits, from the outside in) until the axes fit.
std::optional<std::vector<int64_t>> group_dims(std::vector<int64_t> dims,
                                               const std::vector<int64_t>& max) {
  while (!fits(dims, max)) {
    bool merged = false;
    for (size_t i = 0; i < max.size() && i + 1 < dims.size(); ++i)
      if (dims[i] * dims[i + 1] <= max[i]) {
        dims[i] *= dims[i + 1];
        dims.erase(dims.begin() + static_cast<std::ptrdiff_t>(i) + 1);
        merged = true;
        break;
      }
    if (!merged) return std::nullopt;
  }
  return dims;
}

// Moves factors of a dimension beyond its maximum into the next one.
std::optional<std::vector<int64_t>> split_dims(const std::vector<int64_t>& dims,
                                               const std::vector<int64_t>& max) {
  if (fits(dims, max)) return dims;
  std::vector<int64_t> d = dims;
  d.resize(max.size(), 1);
  for (size_t i = 0; i < d.size(); ++i) {
    while (d[i] > max[i]) {
      int64_t div = 1;
      const auto limit = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(d[i]))));
      for (int64_t c = 2; c <= limit; ++c)
        if (d[i] % c == 0) {
          div = c;
          break;
        }
      if (div == 1) return std::nullopt;
      d[i] /= div;
      d[(i + 1) % d.size()] *= div;
    }
  }
  while (d.size() > dims.size() && d.size() > 1 && d.back() == 1) d.pop_back();
  if (!fits(d, max)) return std::nullopt;
  return d;
}

} // namespace

std::optional<std::vector<int64_t>> limit_dims(const std::vector<int64_t>& dims,
                                               const std::array<int64_t, 3>& max_sizes) {
  std::vector<int64_t> max;
  for (int64_t m : max_sizes) {
    if (m <= 0) break;
    max.push_back(m);
  }
  if (dims.empty()) return dims;
  if (max.empty()) return std::nullopt;
  // Merging first; when that changes nothing (or cannot fit them), splitting.
  auto grouped = group_dims(dims, max);
  if (grouped && *grouped != dims) return grouped;
  if (dims.size() > max.size()) return std::nullopt;
  return split_dims(dims, max);
}

std::optional<GroupedDims> grouped_dims(const std::string& prefix, const std::vector<int64_t>& dims,
                                        const std::array<int64_t, 3>& max, bool reverse) {
  std::vector<int64_t> d = dims;
  if (reverse) std::reverse(d.begin(), d.end());
  auto limited = limit_dims(d, max);
  if (!limited) return std::nullopt;
  const std::vector<int64_t>& l = *limited;
  GroupedDims out{{}, l};
  std::vector<UOpPtr> raw;
  for (size_t i = 0; i < l.size(); ++i)
    raw.push_back(UOp::make(Ops::SPECIAL, dtypes::index, {UOp::const_(dtypes::index, l[i])},
                            prefix + std::to_string(i)));
  // The flat work-item number over the launch dimensions, taken apart over the axes.
  UOpPtr flat = UOp::const_(dtypes::index, int64_t{0});
  for (size_t i = 0; i < l.size(); ++i) flat = flat + raw[i] * product(l, i + 1);
  for (size_t i = 0; i < d.size(); ++i) {
    UOpPtr e = flat / product(d, i + 1);
    if (i > 0) e = e % d[i];
    out.index.push_back(simplify(e));
  }
  if (reverse) std::reverse(out.index.begin(), out.index.end());
  return out;
}

} // namespace tg::codegen_detail
