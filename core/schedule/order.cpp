// The order kernels run in. Topological order is enough for data, not for memory an ASSIGN
// overwrites: a kernel that reads the target's old contents (the buffer itself, not the
// ASSIGN) must run before the ASSIGN's kernel. The kernels of one node (a SCATTER_ADD's base,
// then its additions) stay in their order.
#include <algorithm>

#include "schedule_build.hpp"
#include "tg/error.hpp"

namespace tg::sched {

// Reorders the items (stably: Kahn's algorithm taking the earliest ready item) under both kinds
// of edge; a cycle (a kernel that needs the old contents and the new) cannot be ordered and
// raises tg::Error.
void order_for_assigns(ScheduleBuild& b) {
  std::vector<TemplateItem>& items = b.tmpl.items;
  const size_t n = items.size();
  std::unordered_map<const UOp*, size_t> writer;
  std::unordered_map<const UOp*, std::vector<size_t>> assigns_to; // base BUFFER -> ASSIGN items
  for (size_t i = 0; i < n; ++i) {
    writer[b.writes[i]] = i;
    if (b.writes[i]->op == Ops::ASSIGN)
      assigns_to[base_buffer(b.writes[i]->src[0]).get()].push_back(i);
  }
  if (assigns_to.empty()) return;
  std::vector<std::vector<size_t>> after(n);
  std::vector<size_t> indegree(n, 0);
  auto edge = [&](size_t from, size_t to) {
    if (from == to) return;
    after[from].push_back(to);
    ++indegree[to];
  };
  for (size_t i = 1; i < n; ++i) // a node's kernels (a SCATTER_ADD's two) keep their order
    if (b.writes[i] == b.writes[i - 1]) edge(i - 1, i);
  for (size_t j = 0; j < n; ++j)
    for (const UOp* r : b.reads[j]) {
      if (auto w = writer.find(r); w != writer.end()) edge(w->second, j); // data
      if (auto a = assigns_to.find(r); a != assigns_to.end())
        for (size_t w : a->second) edge(j, w); // read the old contents before they are overwritten
    }
  std::vector<size_t> ready, order;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0) ready.push_back(i);
  while (!ready.empty()) {
    auto it = std::min_element(ready.begin(), ready.end());
    const size_t i = *it;
    ready.erase(it);
    order.push_back(i);
    for (size_t k : after[i])
      if (--indegree[k] == 0) ready.push_back(k);
  }
  if (order.size() != n)
    throw Error("scheduler: a kernel needs both the old and the new contents of a buffer that an "
                "assign overwrites; realize the reader of the old values before the assign");
  std::vector<TemplateItem> sorted;
  sorted.reserve(n);
  for (size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
}

} // namespace tg::sched
