#pragma once
// Autograd's core (tinygrad's gradient.py): derivative rules over tensor-level UOps, and the
// reverse walk that applies them from a root to a set of targets.
#include <functional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "tg/ir/pattern_matcher.hpp"
#include "tg/ir/uop.hpp"

namespace tg::detail {

// The derivative rules, one per tensor-level primitive (tinygrad's pm_gradient). A rule runs
// with a GradCtx (gradient.cpp) as its rewrite context: it reads the gradient flowing into the
// matched node and writes one gradient per source (nullptr: none flows there).
const PatternMatcher& pm_gradient();

// A gradient rule for CUSTOM_VJP nodes: from the gradient flowing into the node and its
// sources 1.. (the inputs it differentiates), one gradient per input (nullptr: none).
using VjpRule =
    std::function<std::vector<UOpPtr>(const UOpPtr& grad, std::span<const UOpPtr> inputs)>;
// Registers `rule` under `name` (the CUSTOM_VJP node's arg); a name registers once, later
// calls keep the first rule. Names must say everything the rule depends on (a convolution's
// stride, padding, dilation and groups), so equal names mean equal rules.
void register_vjp(const std::string& name, VjpRule rule);
// `value` (which computes the result) with its gradients to `inputs` given by rule `name`.
UOpPtr custom_vjp(const UOpPtr& value, const std::vector<UOpPtr>& inputs, const std::string& name);

// d(root)/d(node) for every node on a path from `root` to one of `targets` (targets included
// when reached), given d(root) = `root_grad` (root's shape and dtype). Walks those nodes in
// reverse topological order, summing the contributions of every use with ADD; nothing flows
// through DETACH or ASSIGN. The result is lazy tensor-level UOps. Raises tg::Error when a node
// on the path has no derivative rule.
std::unordered_map<UOpPtr, UOpPtr> compute_gradient(const UOpPtr& root, const UOpPtr& root_grad,
                                                    const std::vector<UOpPtr>& targets);

} // namespace tg::detail
