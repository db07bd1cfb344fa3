#pragma once
// Interval analysis (vmin/vmax) of one node from its sources' ranges, as tinygrad's
// UOp._min_max. Called once per node by UOp::make.
#include <utility>
#include <vector>

#include "tg/ir/uop.hpp"

namespace tg {

std::pair<ConstValue, ConstValue> compute_vmin_vmax(Ops op, DType dtype,
                                                    const std::vector<UOpPtr>& src, const Arg& arg);

} // namespace tg
