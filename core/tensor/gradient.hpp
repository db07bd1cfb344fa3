#pragma once
// Autograd's core (tinygrad's gradient.py): derivative rules over tensor-level UOps, and the
// reverse walk that applies them from a root to a set of targets.
#include <unordered_map>
#include <vector>

#include "tg/ir/pattern_matcher.hpp"
#include "tg/ir/uop.hpp"

namespace tg::detail {

// The derivative rules, one per tensor-level primitive (tinygrad's pm_gradient). A rule runs
// with a GradCtx (gradient.cpp) as its rewrite context: it reads the gradient flowing into the
// matched node and writes one gradient per source (nullptr: none flows there).
const PatternMatcher& pm_gradient();

// d(root)/d(node) for every node on a path from `root` to one of `targets` (targets included
// when reached), given d(root) = `root_grad` (root's shape and dtype). Walks those nodes in
// reverse topological order, summing the contributions of every use with ADD; nothing flows
// through DETACH or ASSIGN. The result is lazy tensor-level UOps. Raises tg::Error when a node
// on the path has no derivative rule.
std::unordered_map<UOpPtr, UOpPtr> compute_gradient(const UOpPtr& root, const UOpPtr& root_grad,
                                                    const std::vector<UOpPtr>& targets);

} // namespace tg::detail
