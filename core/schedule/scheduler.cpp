// The scheduler: placeholders for buffers, the choice of stored nodes, one kernel per stored
// node (rangeify.cpp), a memory plan for intermediates, and the schedule cache.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "rangeify.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/schedule.hpp"

namespace tg {

bool is_buffer_view(const UOpPtr& u) {
  const UOp* n = u.get();
  while (GroupOp::Movement.contains(n->op)) n = n->src[0].get();
  return n->op == Ops::BUFFER;
}

bool is_contiguous_buffer_view(const UOpPtr& u) {
  const UOp* n = u.get();
  while (n->op == Ops::RESHAPE) n = n->src[0].get();
  return n->op == Ops::BUFFER;
}

UOpPtr base_buffer(const UOpPtr& u) {
  const UOp* n = u.get();
  while (GroupOp::Movement.contains(n->op)) n = n->src[0].get();
  return n->op == Ops::BUFFER ? n->ptr() : nullptr;
}

std::string node_device(const UOp* u) {
  for (;;) {
    switch (u->op) {
    case Ops::BUFFER:
    case Ops::COPY:
      return std::get<std::string>(u->src[1]->arg);
    case Ops::CONST:
    case Ops::IOTA:
      return std::get<std::string>(u->src[0]->arg);
    default:
      if (u->src.empty()) throw Error("no device under " + u->str());
      u = u->src[0].get();
    }
  }
}

namespace {

using namespace sched;

// Where a kernel's PARAM slot points: an input buffer (by placeholder number), an
// intermediate (by planned slot) or an output (by number).
struct BufRef {
  enum class Kind : uint8_t { Input, Temp, Output } kind;
  int64_t index;
};

struct TemplateItem {
  ScheduleItem::Kind kind = ScheduleItem::Kind::Kernel;
  UOpPtr ast;
  std::vector<BufRef> bufs;
  std::string device;
};

struct BufferSpec {
  std::string device;
  DType dtype;
  int64_t size;
};

// What root i becomes: a view over input/output buffer `ref`, built by replacing the stored
// node in `view` (a movement chain in the normalized graph) with the real buffer.
struct RootResult {
  BufRef ref;
  UOpPtr view; // movement ops over a placeholder BUFFER (normalized), or null: reshape to shape
};

struct ScheduleTemplate {
  std::vector<TemplateItem> items;
  std::vector<BufferSpec> temps; // after planning: one per distinct piece of memory
  std::vector<BufferSpec> outputs;
  std::vector<RootResult> roots;
  int64_t temporaries = 0, reused = 0;
};

int64_t placeholder_number(const UOp* buffer) {
  return -1 - std::get<int64_t>(buffer->src[0]->arg);
}

// tinygrad's split_reduceop: a reduce of many elements into few outputs would run on one
// thread, so its largest reduced axis of size d is split as (k, d/k): a first kernel reduces
// d/k elements into k partials in parallel (stored), a second reduces the k partials. Returns
// null when the reduce is small or no axis splits evenly.
UOpPtr split_reduce(const UOp& u, const UOpPtr& src) {
  const auto& ra = std::get<ReduceArg>(u.arg);
  const Shape& in = *src->shape();
  if (any_symbolic(in)) return nullptr; // a split needs known sizes
  const int64_t out_n = shape_numel(*u.shape());
  if (out_n == 0 || shape_numel(in) / out_n < (int64_t{1} << 15) || out_n > 64) return nullptr;
  int64_t axis = -1, k = 0;
  for (int64_t a : ra.axes) {
    const int64_t d = in[static_cast<size_t>(a)];
    for (int64_t f = 256; f >= 8; f /= 2)
      if (d % f == 0 && d / f >= 256 && (axis < 0 || f > k)) {
        axis = a, k = f;
        break;
      }
  }
  if (axis < 0) return nullptr;
  const auto ax = static_cast<size_t>(axis);
  Shape split = in;
  split[ax] = in[ax] / k;
  split.insert(split.begin() + axis, k);
  std::vector<int64_t> inner_axes; // every reduced axis but the k partials (axis stays)
  for (int64_t a : ra.axes) inner_axes.push_back(a < axis ? a : a + 1);
  UOpPtr x = UOp::make(Ops::RESHAPE, src->dtype, {src}, split);
  UOpPtr partial = UOp::make(Ops::REDUCE, u.dtype, {x}, ReduceArg{ra.op, inner_axes});
  partial = UOp::make(Ops::CONTIGUOUS, u.dtype, {partial});
  UOpPtr total = UOp::make(Ops::REDUCE, u.dtype, {partial}, ReduceArg{ra.op, {axis}});
  return UOp::make(Ops::RESHAPE, u.dtype, {total}, *u.shape());
}

// Replaces every BUFFER by BUFFER(UNIQUE(-1-k)) numbered in order of first appearance, drops
// CONTIGUOUS of something already contiguous in memory, and splits large reduces.
UOpPtr normalize(const UOpPtr& sink, std::vector<const UOp*>& buffers_in_order) {
  std::unordered_map<const UOp*, UOpPtr> done;
  for (const UOp* u : sink->toposort()) {
    std::vector<UOpPtr> src;
    src.reserve(u->src.size());
    bool changed = false;
    for (const UOpPtr& s : u->src) {
      auto it = done.find(s.get());
      src.push_back(it == done.end() ? s : it->second);
      changed |= src.back() != s;
    }
    UOpPtr r;
    if (u->op == Ops::BUFFER) {
      const int64_t k = static_cast<int64_t>(buffers_in_order.size());
      buffers_in_order.push_back(u);
      r = UOp::make(Ops::BUFFER, u->dtype,
                    {UOp::make(Ops::UNIQUE, dtypes::void_, {}, -1 - k), u->src[1]}, u->arg);
    } else if (u->op == Ops::DETACH || u->op == Ops::CONTIGUOUS_BACKWARD ||
               u->op == Ops::CUSTOM_VJP) { // only autograd sees them
      r = src[0];
    } else if (u->op == Ops::REDUCE && (r = split_reduce(*u, src[0]))) {
      // split in two kernels
    } else if (u->op == Ops::CONTIGUOUS && is_contiguous_buffer_view(src[0])) {
      r = src[0];
    } else if (changed) {
      r = u->replace_src(std::move(src));
    } else {
      continue;
    }
    done.emplace(u, std::move(r));
  }
  auto it = done.find(sink.get());
  return it == done.end() ? sink : it->second;
}

// True when `value` reads the buffer under `target` other than element for element through
// `target` itself (x.assign(x.flip(0)) must not read what it already overwrote).
bool assign_hazard(const UOpPtr& target, const UOpPtr& value) {
  UOpPtr base = base_buffer(target);
  std::vector<const UOp*> stack{value.get()};
  std::unordered_set<const UOp*> seen;
  while (!stack.empty()) {
    const UOp* n = stack.back();
    stack.pop_back();
    if (n == target.get() || !seen.insert(n).second) continue;
    if (n == base.get()) return true;
    if (GroupOp::ALU.contains(n->op) || n->op == Ops::CAST || n->op == Ops::BITCAST) {
      for (const UOpPtr& s : n->src) stack.push_back(s.get());
    } else if (n->backward_slice().count(base.get())) {
      return true;
    }
  }
  return false;
}

// Topological order is enough for data, not for memory an ASSIGN overwrites: a kernel that
// reads the target's old contents (the buffer itself, not the ASSIGN) must run before the
// ASSIGN's kernel. Reorders `items` (stably: Kahn's algorithm taking the earliest ready item)
// under both kinds of edge; a cycle (a kernel that needs the old contents and the new) cannot
// be ordered and raises tg::Error.
void order_for_assigns(std::vector<TemplateItem>& items, const std::vector<const UOp*>& writes,
                       const std::vector<std::vector<const UOp*>>& reads) {
  const size_t n = items.size();
  std::unordered_map<const UOp*, size_t> writer;
  std::unordered_map<const UOp*, std::vector<size_t>> assigns_to; // base BUFFER -> ASSIGN items
  for (size_t i = 0; i < n; ++i) {
    writer[writes[i]] = i;
    if (writes[i]->op == Ops::ASSIGN) assigns_to[base_buffer(writes[i]->src[0]).get()].push_back(i);
  }
  if (assigns_to.empty()) return;
  std::vector<std::vector<size_t>> after(n);
  std::vector<size_t> indegree(n, 0);
  auto edge = [&](size_t from, size_t to) {
    if (from == to) return;
    after[from].push_back(to);
    ++indegree[to];
  };
  for (size_t j = 0; j < n; ++j)
    for (const UOp* r : reads[j]) {
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

ScheduleTemplate build_template(const UOpPtr& sink) {
  const std::vector<const UOp*>& topo = sink->toposort();
  std::unordered_map<const UOp*, std::vector<const UOp*>> users;
  for (const UOp* u : topo)
    for (const UOpPtr& s : u->src) users[s.get()].push_back(u);

  std::unordered_set<const UOp*> stored;
  std::unordered_set<const UOp*> roots;
  for (const UOpPtr& r : sink->src) {
    roots.insert(r.get());
    if (!is_buffer_view(r)) stored.insert(r.get());
  }
  for (const UOp* u : topo) {
    if (u->op == Ops::COPY) {
      stored.insert(u);
      if (!is_contiguous_buffer_view(u->src[0])) stored.insert(u->src[0].get());
    } else if (u->op == Ops::CONTIGUOUS || u->op == Ops::ASSIGN) {
      stored.insert(u);
      if (u->op == Ops::ASSIGN && assign_hazard(u->src[0], u->src[1]))
        stored.insert(u->src[1].get());
    }
  }
  // A REDUCE that is not stored is recomputed wherever it is read. Store it when that would
  // repeat its work: read through an EXPAND (recomputed for every element it is expanded to),
  // inside another REDUCE (recomputed for every step of that reduce: a batch norm's mean of a
  // convolution), or by two or more kernels (each recomputes it).
  // Walking down from the roots, per node: `expanded`/`reduced` say some path up to the kernel
  // that reads it crosses an EXPAND/REDUCE; `readers` lists the kernels (stored nodes) that
  // read it, up to two.
  struct Reach {
    bool expanded = false, reduced = false;
    std::vector<const UOp*> readers;
  };
  std::unordered_map<const UOp*, Reach> reach;
  auto add_reader = [](Reach& r, const UOp* k) {
    if (r.readers.size() < 2 && std::find(r.readers.begin(), r.readers.end(), k) == r.readers.end())
      r.readers.push_back(k);
  };
  for (auto it = topo.rbegin(); it != topo.rend(); ++it) {
    const UOp* u = *it;
    Reach r;
    if (auto us = users.find(u); us != users.end())
      for (const UOp* user : us->second) {
        if (stored.count(user)) { // a kernel reads u (a stored REDUCE reduces it there)
          add_reader(r, user);
          r.reduced |= user->op == Ops::REDUCE;
          continue;
        }
        const Reach& above = reach[user];
        r.expanded |= above.expanded || user->op == Ops::EXPAND;
        r.reduced |= above.reduced || user->op == Ops::REDUCE;
        for (const UOp* k : above.readers) add_reader(r, k);
      }
    if (u->op == Ops::REDUCE && (r.expanded || r.reduced || r.readers.size() > 1)) {
      stored.insert(u);
      r = Reach{};
    }
    reach[u] = std::move(r);
  }

  ScheduleTemplate t;
  // Every stored node gets memory: an output (a root), an input (ASSIGN writes its target's
  // buffer) or a temporary.
  std::unordered_map<const UOp*, BufRef> memory;
  std::unordered_map<const UOp*, int64_t> temp_of; // stored node -> unplanned temp number
  std::vector<BufferSpec> unplanned;
  for (const UOp* u : topo) {
    if (u->op == Ops::BUFFER) {
      memory[u] = {BufRef::Kind::Input, placeholder_number(u)};
      continue;
    }
    if (!stored.count(u)) continue;
    if (u->op == Ops::ASSIGN) {
      memory[u] = memory.at(base_buffer(u->src[0]).get());
    } else if (roots.count(u)) {
      memory[u] = {BufRef::Kind::Output, static_cast<int64_t>(t.outputs.size())};
      t.outputs.push_back({node_device(u), u->dtype, shape_numel_max(*u->shape())});
    } else {
      temp_of[u] = static_cast<int64_t>(unplanned.size());
      memory[u] = {BufRef::Kind::Temp, static_cast<int64_t>(unplanned.size())};
      unplanned.push_back({node_device(u), u->dtype, shape_numel_max(*u->shape())});
    }
  }

  auto is_stored = [&](const UOp* u) { return stored.count(u) > 0; };
  std::vector<const UOp*> writes;             // per item: the stored node it computes
  std::vector<std::vector<const UOp*>> reads; // per item: the nodes it loads
  for (const UOp* u : topo) {
    if (!stored.count(u) || u->op == Ops::BUFFER) continue;
    if (shape_numel_max(*u->shape()) == 0) continue; // nothing to compute
    TemplateItem item;
    item.device = node_device(u);
    std::vector<const UOp*> loads;
    if (u->op == Ops::COPY) {
      item.kind = ScheduleItem::Kind::Copy;
      const UOpPtr& src = u->src[0];
      const UOp* from = stored.count(src.get()) ? src.get() : base_buffer(src).get();
      item.bufs = {memory.at(u), memory.at(from)};
      loads = {from};
    } else {
      KernelSlots slots;
      item.ast = build_kernel(u->ptr(), is_stored, slots);
      for (const UOp* n : slots.nodes) item.bufs.push_back(memory.at(n));
      loads.assign(slots.nodes.begin() + 1, slots.nodes.end());
    }
    t.items.push_back(std::move(item));
    writes.push_back(u);
    reads.push_back(std::move(loads));
  }
  order_for_assigns(t.items, writes, reads);

  // Memory plan: an intermediate whose last reader has run frees its memory for a later
  // intermediate of the same device and size (the queue runs items in order).
  std::vector<int64_t> last_use(unplanned.size(), -1), first_def(unplanned.size(), -1);
  for (size_t i = 0; i < t.items.size(); ++i)
    for (size_t s = 0; s < t.items[i].bufs.size(); ++s) {
      const BufRef& b = t.items[i].bufs[s];
      if (b.kind != BufRef::Kind::Temp) continue;
      last_use[static_cast<size_t>(b.index)] = static_cast<int64_t>(i);
      if (s == 0 && first_def[static_cast<size_t>(b.index)] < 0)
        first_def[static_cast<size_t>(b.index)] = static_cast<int64_t>(i);
    }
  std::vector<int64_t> planned(unplanned.size(), -1);
  std::vector<int64_t> free_slots;
  for (size_t i = 0; i < t.items.size(); ++i) {
    for (size_t k = 0; k < unplanned.size(); ++k) {
      if (first_def[k] != static_cast<int64_t>(i)) continue;
      const BufferSpec& want = unplanned[k];
      auto fit = std::find_if(free_slots.begin(), free_slots.end(), [&](int64_t s) {
        const BufferSpec& have = t.temps[static_cast<size_t>(s)];
        return have.device == want.device &&
               have.size * have.dtype.itemsize() == want.size * want.dtype.itemsize();
      });
      if (fit != free_slots.end()) {
        planned[k] = *fit;
        free_slots.erase(fit);
        ++t.reused;
      } else {
        planned[k] = static_cast<int64_t>(t.temps.size());
        t.temps.push_back(want);
      }
    }
    for (size_t k = 0; k < unplanned.size(); ++k)
      if (last_use[k] == static_cast<int64_t>(i)) free_slots.push_back(planned[k]);
  }
  t.temporaries = static_cast<int64_t>(unplanned.size());
  for (TemplateItem& item : t.items)
    for (BufRef& b : item.bufs)
      if (b.kind == BufRef::Kind::Temp) b.index = planned[static_cast<size_t>(b.index)];

  for (const UOpPtr& r : sink->src) {
    if (r->op == Ops::ASSIGN)
      t.roots.push_back({memory.at(r.get()), r->src[0]});
    else if (!stored.count(r.get()))
      t.roots.push_back({memory.at(base_buffer(r).get()), r});
    else
      t.roots.push_back({memory.at(r.get()), nullptr});
  }
  return t;
}

struct CacheEntry {
  UOpPtr key; // keeps the normalized graph (and so the key's address) alive
  std::shared_ptr<const ScheduleTemplate> tmpl;
};

std::mutex g_cache_mu;
// Never destroyed: its UOps must not be released during static destruction, after the
// thread-local worklist UOp::release uses is gone (that corrupted the heap at exit).
std::unordered_map<const UOp*, CacheEntry>& g_cache =
    *new std::unordered_map<const UOp*, CacheEntry>;
ScheduleCacheStats g_stats;

// Replaces the placeholder BUFFER in a normalized view chain by the real buffer's node.
UOpPtr rebuild_view(const UOpPtr& view, const UOpPtr& buffer) {
  if (view->op == Ops::BUFFER) return buffer;
  return view->replace_src({rebuild_view(view->src[0], buffer)});
}

} // namespace

ScheduleCacheStats schedule_cache_stats() {
  std::lock_guard lock(g_cache_mu);
  ScheduleCacheStats s = g_stats;
  s.entries = static_cast<int64_t>(g_cache.size());
  return s;
}

void clear_schedule_cache() {
  std::lock_guard lock(g_cache_mu);
  g_cache.clear();
}

Schedule create_schedule(const std::vector<UOpPtr>& roots,
                         const std::vector<std::shared_ptr<Buffer>>& buffers) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<const UOp*> order;
  UOpPtr normalized = normalize(UOp::sink(roots), order);

  std::shared_ptr<const ScheduleTemplate> tmpl;
  bool hit = false;
  {
    std::lock_guard lock(g_cache_mu);
    ++g_stats.lookups;
    if (auto it = g_cache.find(normalized.get()); it != g_cache.end()) {
      tmpl = it->second.tmpl;
      hit = true;
      ++g_stats.hits;
    }
  }
  if (!tmpl) {
    tmpl = std::make_shared<ScheduleTemplate>(build_template(normalized));
    std::lock_guard lock(g_cache_mu);
    g_cache.emplace(normalized.get(), CacheEntry{normalized, tmpl});
  }

  // Instantiate: placeholders -> the caller's buffers, temporaries and outputs -> new buffers.
  std::unordered_map<const UOp*, std::shared_ptr<Buffer>> by_node;
  for (const auto& b : buffers) by_node.emplace(b->uop().get(), b);
  std::vector<std::shared_ptr<Buffer>> inputs;
  for (const UOp* u : order) {
    auto it = by_node.find(u);
    if (it == by_node.end())
      throw Error("scheduler: no Buffer for " + u->str() +
                  " (a tensor graph refers to memory that was freed)");
    inputs.push_back(it->second);
  }
  std::vector<std::shared_ptr<Buffer>> temps, outputs;
  for (const BufferSpec& s : tmpl->temps)
    temps.push_back(std::make_shared<Buffer>(s.device, s.dtype, s.size));
  for (const BufferSpec& s : tmpl->outputs)
    outputs.push_back(std::make_shared<Buffer>(s.device, s.dtype, s.size));
  auto resolve = [&](const BufRef& r) -> const std::shared_ptr<Buffer>& {
    switch (r.kind) {
    case BufRef::Kind::Input:
      return inputs.at(static_cast<size_t>(r.index));
    case BufRef::Kind::Temp:
      return temps.at(static_cast<size_t>(r.index));
    default:
      return outputs.at(static_cast<size_t>(r.index));
    }
  };

  Schedule out;
  out.cache_hit = hit;
  out.temporaries = tmpl->temporaries;
  out.reused_temps = tmpl->reused;
  for (const TemplateItem& ti : tmpl->items) {
    ScheduleItem item{ti.kind, ti.ast, {}, ti.device};
    for (const BufRef& r : ti.bufs) item.bufs.push_back(resolve(r));
    out.items.push_back(std::move(item));
  }
  for (size_t i = 0; i < roots.size(); ++i) {
    const RootResult& rr = tmpl->roots[i];
    const std::shared_ptr<Buffer>& buf = resolve(rr.ref);
    UOpPtr view;
    if (rr.view) {
      view = rebuild_view(rr.view, buf->uop());
    } else {
      view = buf->uop();
      const Shape& shape = *roots[i]->shape();
      // A symbolic shape fills a prefix of memory sized for the variables' maxima.
      if (const sint n = sint_prod(shape); !(n == buf->size()))
        view = UOp::make(Ops::SHRINK, view->dtype, {view}, PadArg{{0, n}});
      if (shape != *view->shape()) view = UOp::make(Ops::RESHAPE, view->dtype, {view}, shape);
    }
    out.results.push_back(view);
    out.result_buffers.push_back(buf);
  }

  if (knobs::DEBUG >= 1) {
    int64_t kernels = 0, copies = 0;
    for (const ScheduleItem& it : out.items)
      (it.kind == ScheduleItem::Kind::Kernel ? kernels : copies) += 1;
    const double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("scheduled %lld kernel%s, %lld cop%s, %lld temporar%s (%lld reused) in %.2f ms%s\n",
                static_cast<long long>(kernels), kernels == 1 ? "" : "s",
                static_cast<long long>(copies), copies == 1 ? "y" : "ies",
                static_cast<long long>(out.temporaries), out.temporaries == 1 ? "y" : "ies",
                static_cast<long long>(out.reused_temps), ms, hit ? " (cache hit)" : "");
    std::fflush(stdout);
  }
  return out;
}

} // namespace tg
