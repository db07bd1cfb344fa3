#pragma once
// graph_rewrite: apply a PatternMatcher to every node of a graph until nothing changes.
// Iterative (a chain of a million nodes does not touch the stack), memoized per node, and
// bounded: a rewrite that keeps producing new nodes, or cycles, raises RewriteError naming
// the node.
#include <string_view>
#include <type_traits>
#include <typeinfo>
#include <unordered_map>

#include "tg/ir/pattern_matcher.hpp"

namespace tg {

struct RewriteOptions {
  // false (tinygrad's default): sources are rewritten first, then the node rebuilt from them
  // is matched. true: a node is matched (to its fixed point) before its sources are visited.
  bool bottom_up = false;
  // How many successive rewrites of one node are allowed before the rewrite is declared
  // non-terminating. 0: REWRITE_LIMIT from the environment, default 1000000.
  size_t max_rewrites_per_node = 0;
  // A rule may not change the dtype of the node it rewrites (a SpecError names both) unless
  // the pass exists to change dtypes (lowering index to int32, emulating bfloat16...).
  bool allow_dtype_change = false;
  // What the rewrite is called in errors and in TRACK_MATCH_STATS' times (tinygrad's name=).
  std::string_view name;
};

UOpPtr graph_rewrite_raw(const UOpPtr& sink, const PatternMatcher& pm, void* ctx,
                         const std::type_info* ctx_type, RewriteOptions opts);

inline UOpPtr graph_rewrite(const UOpPtr& sink, const PatternMatcher& pm,
                            RewriteOptions opts = {}) {
  return graph_rewrite_raw(sink, pm, nullptr, nullptr, opts);
}
template <class Ctx>
requires(!std::is_convertible_v<Ctx&, std::string_view>) UOpPtr
    graph_rewrite(const UOpPtr& sink, const PatternMatcher& pm, Ctx& ctx,
                  RewriteOptions opts = {}) {
  return graph_rewrite_raw(sink, pm, &ctx, &typeid(Ctx), opts);
}
// The same, named: graph_rewrite(sink, pm, "devectorize"), graph_rewrite(sink, pm, ctx, "x").
inline UOpPtr graph_rewrite(const UOpPtr& sink, const PatternMatcher& pm, std::string_view name,
                            RewriteOptions opts = {}) {
  opts.name = name;
  return graph_rewrite_raw(sink, pm, nullptr, nullptr, opts);
}
template <class Ctx>
requires(!std::is_convertible_v<Ctx&, std::string_view>) UOpPtr
    graph_rewrite(const UOpPtr& sink, const PatternMatcher& pm, Ctx& ctx, std::string_view name,
                  RewriteOptions opts = {}) {
  opts.name = name;
  return graph_rewrite_raw(sink, pm, &ctx, &typeid(Ctx), opts);
}

// Whether a graph_rewrite that is still running holds u's memo entry (UOp::memo_slot): for
// tests, which check that none does once every rewrite has returned or thrown.
bool memo_held_by_running_rewrite(const UOp& u);

// `root`'s graph with every node found in `map` replaced by its value and the users above it
// rebuilt (tinygrad's UOp.substitute). Iterative; the replacements are not visited.
UOpPtr substitute(const UOpPtr& root, const std::unordered_map<const UOp*, UOpPtr>& map);

} // namespace tg
