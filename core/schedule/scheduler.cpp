// The scheduler's driver: its stages as pass tables (schedule_build.hpp lists them), the
// schedule cache keyed by the normalized graph, and instantiation of a cached template with
// the caller's buffers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "rangeify.hpp"
#include "schedule_build.hpp"
#include "tg/error.hpp"
#include "tg/ir/pass.hpp"
#include "tg/ir/print.hpp"
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

namespace sched {

void root_results(ScheduleBuild& b) {
  for (const UOpPtr& r : b.sink->src) {
    if (r->op == Ops::ASSIGN)
      b.tmpl.roots.push_back({b.memory.at(r.get()), r->src[0]});
    else if (!b.stored.count(r.get()))
      b.tmpl.roots.push_back({b.memory.at(base_buffer(r).get()), r});
    else
      b.tmpl.roots.push_back({b.memory.at(r.get()), nullptr});
  }
}

std::vector<UOpPtr> ScheduleBuild::graphs() const {
  std::vector<UOpPtr> out{sink};
  for (const TemplateItem& item : tmpl.items)
    if (item.ast) out.push_back(item.ast);
  return out;
}

std::string ScheduleBuild::describe() const {
  std::string out = print_graph(sink);
  if (!stored.empty()) out += std::to_string(stored.size()) + " stored nodes\n";
  for (size_t i = 0; i < tmpl.items.size(); ++i) {
    const TemplateItem& item = tmpl.items[i];
    out += "item " + std::to_string(i) + (item.ast ? " kernel" : " copy") + " on " + item.device +
           ", buffers";
    for (const BufRef& r : item.bufs)
      out += std::string(r.kind == BufRef::Kind::Input  ? " in"
                         : r.kind == BufRef::Kind::Temp ? " tmp"
                                                        : " out") +
             std::to_string(r.index);
    out += "\n";
    if (item.ast) out += print_graph(item.ast);
  }
  if (!tmpl.temps.empty())
    out += std::to_string(tmpl.temporaries) + " temporaries in " +
           std::to_string(tmpl.temps.size()) + " buffers\n";
  return out;
}

} // namespace sched

namespace {

using namespace sched;

// The stages behind a cache miss, in order (schedule_build.hpp); normalize runs first, on
// every call, since its result is the cache's key.
const Pass<ScheduleBuild> kNormalize[] = {
    {"normalize", [](ScheduleBuild& b) { b.sink = normalize(b.sink, b.buffers_in_order); }},
};
const Pass<ScheduleBuild> kBuildTemplate[] = {
    {"stored_nodes", choose_stored_nodes}, {"kernels", build_kernels}, {"order", order_for_assigns},
    {"memory_plan", plan_memory},          {"results", root_results},
};

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
  ScheduleBuild build;
  build.sink = UOp::sink(roots);
  run_passes("schedule", kNormalize, build);
  const UOpPtr normalized = build.sink;
  const std::vector<const UOp*>& order = build.buffers_in_order;

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
    run_passes("schedule", kBuildTemplate, build);
    tmpl = std::make_shared<ScheduleTemplate>(std::move(build.tmpl));
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
