#pragma once
// Tensor-level shape of one node from its sources' shapes, checked: a movement op that does
// not fit its source, or elementwise sources of different shapes, raise tg::Error.
#include <memory>
#include <optional>
#include <vector>

#include "tg/ir/uop.hpp"

namespace tg {

std::shared_ptr<const std::optional<Shape>> compute_shape(Ops op, std::span<const UOpPtr> src,
                                                          const Arg& arg);
std::string shape_str(const Shape& s); // "(2, 3)"

} // namespace tg
