#pragma once
// Fitting a kernel's work-item axes into a device's launch dimensions (tinygrad's
// get_grouped_dims): too many axes, or an axis beyond its dimension's maximum, are merged with
// a neighbour; an axis still too large is split over the next dimension. gpudims uses it to
// build gidx/lidx SPECIALs; the LOCAL and GROUP Opts use it to refuse local sizes that cannot be
// launched.
#include <array>
#include <optional>
#include <string>
#include <vector>

#include "tg/ir/uop.hpp"

namespace tg::codegen_detail {

// The launch sizes for `dims` (outermost first) within `max` (per dimension; 0: the dimension
// does not exist), or nullopt when they cannot be fitted.
std::optional<std::vector<int64_t>> limit_dims(const std::vector<int64_t>& dims,
                                               const std::array<int64_t, 3>& max);

struct GroupedDims {
  std::vector<UOpPtr> index;   // per axis of `dims`, its value from the SPECIALs
  std::vector<int64_t> launch; // the sizes of SPECIAL prefix0, prefix1, ...
};

// The index of each of `dims` (outermost first) from SPECIALs `prefix`0.. fitted within `max`,
// or nullopt when they do not fit. `reverse` fits them innermost first, as tinygrad does for
// global indices, so that gidx0 is the fastest-moving axis.
std::optional<GroupedDims> grouped_dims(const std::string& prefix, const std::vector<int64_t>& dims,
                                        const std::array<int64_t, 3>& max, bool reverse);

} // namespace tg::codegen_detail
