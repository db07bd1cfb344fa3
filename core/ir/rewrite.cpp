// graph_rewrite, iteratively.
//
// Every node goes through up to three stages on an explicit stack:
//   0  (bottom-up only: rewrite the node to its fixed point first) then queue its sources;
//   1  once the sources are done, rebuild the node from their replacements; if nothing
//      changed, try the matcher (top-down mode); a rebuilt or rewritten node is processed
//      as a new node whose result becomes this node's result (stage 2). Under a pure
//      matcher (top-down) a rebuilt node is matched here, before it is interned
//      (rebuild_detached). Then the replacements of sources no other node holds are let go
//      (release_sources);
//   2  link: this node's replacement is the replacement of what it turned into, which goes
//      at once if a rule rewrote it further and nothing else holds it (drop_superseded).
// The memo (`nodes_`) holds finished nodes, so a DAG is visited once per node. Each frame carries
// how many rewrites led to it; past the limit the rewrite is declared non-terminating. A
// node that turns into a graph containing itself (a cycle through the rules) is reported too.
#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <unordered_set>

#include <boost/container/small_vector.hpp>

#include "tg/error.hpp"
#include "tg/ir/node_set.hpp"
#include "tg/ir/pass.hpp"
#include "tg/ir/rewrite.hpp"
#include "tg/knobs.hpp"

namespace tg {

namespace {

// Frames refer to nodes through UOpPtrs that stay put while the frame is on the stack (the
// root, a source slot of a live node, or an entry of `made_`), so walking the graph touches no
// reference count. The memo's values are entries of `made_` (or "the node itself"), which the
// rewrite keeps until it ends, except the results a rule superseded (drop_superseded) and the
// replacements of nodes that will not be looked up again (release_sources).
struct Frame {
  const UOpPtr* n;     // the node this frame computes the replacement of
  const UOpPtr* new_n; // what n is (being) turned into
  int stage;
  size_t depth; // rewrites that led here
};

// The nodes a rewrite built, at stable addresses: chunks that double in size up to 64 KiB, the
// first allocated by the first node (a rewrite that changes nothing allocates nothing;
// graph_rewrite runs on small graphs all through codegen, where its setup cost counted). The
// cap keeps chunks below malloc's mmap threshold, so a large rewrite reuses heap memory
// instead of faulting fresh pages in each time.
class NodeList {
public:
  static constexpr size_t kMaxChunk = 4096; // entries (64 KiB)

  // A built node, and how many memo values point to it (0, 1, or 2 for "more than one").
  struct Entry {
    UOpPtr node;
    uint8_t links = 0;
  };

  UOpPtr& push(UOpPtr u) {
    if (used_ == capacity_) {
      capacity_ = capacity_ == 0 ? 16 : std::min<size_t>(2 * capacity_, kMaxChunk);
      chunks_.push_back(std::make_unique<Entry[]>(capacity_));
      used_ = 0;
    }
    Entry& e = chunks_.back()[used_++];
    e.node = std::move(u);
    return e.node;
  }

  // The entry whose node `u` is (a reference push returned).
  static Entry& entry_of(const UOpPtr* u) {
    static_assert(std::is_standard_layout_v<Entry> && offsetof(Entry, node) == 0);
    return *reinterpret_cast<Entry*>(const_cast<UOpPtr*>(u));
  }

private:
  boost::container::small_vector<std::unique_ptr<Entry[]>, 8> chunks_;
  size_t capacity_ = 0, used_ = 0; // of the last chunk
};

// Node -> replacement for one rewrite. The entry lives in the node itself (UOp::memo_slot) when
// the rewrite can claim the node's slot; a node whose slot another running rewrite holds (a
// rule's nested rewrite, or another thread's) goes to `overflow_`.
//
// A slot is claimed by writing the rewrite's id into it and is never handed back: a rewrite's id
// is unique for the life of the process, and once the rewrite has ended (its id is gone from
// the registry of live ids) its slots count as free. So ending a rewrite touches none of the
// nodes it saw, and a node it saw may be freed before it ends: a node built later at the same
// address starts with a free slot.
class Memo {
public:
  // A replacement that is the node itself: the caller's reference to the node stands for it.
  static const UOpPtr* self() { return &self_marker_; }

  Memo() : id_(register_id()) {}
  ~Memo() { live_[id_ & kLiveMask].store(0, std::memory_order_release); }
  Memo(const Memo&) = delete;
  Memo& operator=(const Memo&) = delete;

  // The entry of `n`, or null when the rewrite has not seen it. A null value: in progress.
  [[gnu::always_inline]] const UOpPtr** find(const UOp* n) {
    UOp::MemoSlot& slot = n->memo_slot();
    if (slot.owner.load(std::memory_order_relaxed) == id_) return &slot.value;
    if (overflow_empty_) return nullptr;
    return overflow_.find(n);
  }
  // The entry of `n`, created (in progress) when absent.
  [[gnu::always_inline]] const UOpPtr*& insert(const UOp* n) {
    if (const UOpPtr** v = find(n)) return *v;
    return claim_or_overflow(n);
  }
  // Whether a running rewrite holds u's slot.
  static bool held(const UOp& u) {
    const uint64_t owner = u.memo_slot().owner.load(std::memory_order_acquire);
    return owner != 0 && is_live(owner);
  }
  // Whether every entry lives in its node, none in `overflow_`: then a node the rewrite saw may
  // be freed, since its entry goes with it (an overflow entry is keyed by the address).
  bool in_nodes_only() const { return overflow_empty_; }

private:
  // insert's slow half: claim n's slot for this rewrite, or use the overflow map when a live
  // rewrite holds it.
  const UOpPtr*& claim_or_overflow(const UOp* n) {
    UOp::MemoSlot& slot = n->memo_slot();
    uint64_t owner = slot.owner.load(std::memory_order_acquire);
    while (owner == 0 || !is_live(owner))
      if (slot.owner.compare_exchange_weak(owner, id_, std::memory_order_acq_rel,
                                           std::memory_order_acquire)) {
        slot.value = nullptr; // a stale value of an ended rewrite
        return slot.value;
      }
    overflow_empty_ = false;
    return overflow_[n];
  }

  // The ids of the running rewrites, each at its low bits; 0 marks a free entry.
  static constexpr size_t kLiveIds = 4096, kLiveMask = kLiveIds - 1;
  static bool is_live(uint64_t id) {
    return live_[id & kLiveMask].load(std::memory_order_acquire) == id;
  }
  // A fresh id with a free registry entry (one held by a long-running rewrite is skipped).
  static uint64_t register_id() {
    for (size_t tries = 0; tries <= kLiveIds; ++tries) {
      const uint64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
      uint64_t free_entry = 0;
      if (id != 0 &&
          live_[id & kLiveMask].compare_exchange_strong(free_entry, id, std::memory_order_acq_rel))
        return id;
    }
    throw RewriteError("graph_rewrite: more than " + std::to_string(kLiveIds) +
                       " rewrites are running at once (nested or on other threads)");
  }

  static inline std::atomic<uint64_t> next_id_{1};
  static inline std::array<std::atomic<uint64_t>, kLiveIds> live_{};
  static inline const UOpPtr self_marker_;
  const uint64_t id_;
  // Node -> replacement for the nodes whose memo slot another rewrite holds. A null value: in
  // progress (the node's sources are being rewritten).
  NodeMap<const UOpPtr*> overflow_;
  bool overflow_empty_ = true;
};

class Rewriter {
public:
  Rewriter(const PatternMatcher& pm, void* ctx, const std::type_info* ctx_type, RewriteOptions o)
      : pm_(pm), ctx_(ctx), ctx_type_(ctx_type), opts_(o),
        pure_(ctx == nullptr ? pm.pure_id() : 0) {
    if (opts_.max_rewrites_per_node == 0)
      opts_.max_rewrites_per_node = static_cast<size_t>(knobs::REWRITE_LIMIT);
    // A claim of a final result is about a node whose sources are final: top-down, where a
    // node is matched once its sources are done. Bottom-up matches a node before them.
    if (pure_ != 0 && pm.trusts_final_results() && !opts_.bottom_up)
      final_ = knobs::REWRITE_CHECK_FINAL != 0 ? FinalClaims::Checked : FinalClaims::Trusted;
  }

  UOpPtr run(const UOpPtr& root) {
    stack_.push_back({&root, &root, 0, 0});
    while (!stack_.empty()) {
      Frame f = stack_.back();
      stack_.pop_back();
      if (f.stage == 0)
        stage0(f);
      else if (f.stage == 1)
        stage1(f);
      else
        finish(f);
    }
    return lookup(root);
  }

private:
  // Whether a memo value is a replacement the rewrite let go (release_sources): the node it
  // was found for counts as not seen, and is rewritten again if it is met again.
  static bool forgotten(const UOpPtr* v) {
    return v != nullptr && v != Memo::self() && *v == nullptr;
  }

  bool done(const UOpPtr& n) {
    const UOpPtr** v = nodes_.find(n.get());
    return v != nullptr && *v != nullptr && !forgotten(*v);
  }

  // n's replacement: n itself (the caller's reference) or an entry of made_.
  const UOpPtr& lookup(const UOpPtr& n) {
    const UOpPtr** v = nodes_.find(n.get());
    if (v == nullptr || *v == nullptr || forgotten(*v)) [[unlikely]]
      no_replacement(n);
    return *v == Memo::self() ? n : **v;
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void no_replacement(const UOpPtr& n) {
    throw RewriteError("graph_rewrite: internal error, " + n->str() + " has no replacement");
  }

  // n's replacement is `result`: n itself, or a node in made_ (which the memo points to, so
  // that no memo value points into another node, which might go first: drop_superseded).
  void link(const UOpPtr& n, const UOpPtr& result) {
    if (result.get() == n.get()) {
      nodes_.insert(n.get()) = Memo::self();
      return;
    }
    nodes_.insert(n.get()) = &result;
    uint8_t& links = NodeList::entry_of(&result).links;
    links = std::min<uint8_t>(links + 1, 2);
  }

  // Keeps a node built by the rewrite alive (until it ends, or until drop_superseded lets it
  // go); returns its stable reference.
  const UOpPtr* keep(UOpPtr u) { return &made_.push(std::move(u)); }

  // Stage 2: f.n's replacement is the replacement of what it turned into (a node in made_).
  void finish(const Frame& f) {
    link(*f.n, lookup(*f.new_n));
    drop_superseded(*const_cast<UOpPtr*>(f.new_n));
  }

  // A node a rule built (or a rebuild) that was rewritten further is garbage once its
  // replacement is linked: no frame refers to it any more, and no memo value points to it or
  // into it (values are entries of made_ or "itself"). When nothing else holds it either, it
  // goes now instead of when the rewrite ends, with the nodes only it held: the node table and
  // the cache then hold only what is still used. Its memo entry goes with it (a node built
  // later at its address starts with a free slot), which needs every entry in its node. A
  // node built again later is rewritten again, with the same result.
  void drop_superseded(UOpPtr& kept) {
    if (!nodes_.in_nodes_only() || kept->use_count() != 1 || &lookup(kept) == &kept) return;
    kept = nullptr;
  }

  // One application of the matcher, checked.
  UOpPtr apply(const UOpPtr& n, size_t depth) {
    const Rule* rule = nullptr;
    UOpPtr r = pm_.rewrite(n, caps_.get(), ctx_, ctx_type_, &rule);
    if (!r || r == n) return nullptr;
    if (!opts_.allow_dtype_change && r->dtype != n->dtype)
      throw SpecError("rewrite rule " + rule->name + " turned " + n->str() + " (dtype " +
                      n->dtype.name() + ") into " + r->str() + " (dtype " + r->dtype.name() +
                      "); a rewrite must keep the node's dtype");
    if (depth >= opts_.max_rewrites_per_node)
      throw RewriteError("graph_rewrite did not reach a fixed point: " + n->str() +
                         " was rewritten more than " + std::to_string(opts_.max_rewrites_per_node) +
                         " times in a row (last rule " + rule->name + " gave " + r->str() +
                         "); a rule keeps producing new nodes (REWRITE_LIMIT raises the bound)");
    if (rule->final_result && final_ != FinalClaims::Ignored) claim_final(*rule, n, r);
    return r;
  }

  // `rule` turned n, whose sources are final, into r and claims r is final (Rule::final_result).
  // Trusted, r is marked done under this matcher: stage 0 links it without matching the nodes
  // below it. Checked, a rewrite of r of its own must leave it as it is.
  void claim_final(const Rule& rule, const UOpPtr& n, const UOpPtr& r) {
    if (final_ == FinalClaims::Trusted) {
      r->fixed_under().store(pure_, std::memory_order_relaxed);
      return;
    }
    const UOpPtr again = graph_rewrite_raw(r, pm_, nullptr, nullptr, opts_);
    if (again != r)
      throw RewriteError("rewrite rule " + rule.name + " claims its result final, but " + r->str() +
                         " (from " + n->str() + ") rewrites further, to " + again->str() +
                         "; drop the rule's Rule::Final tag or fix the rule");
  }

  void stage0(const Frame& f) {
    const UOpPtr** seen_before = nodes_.find(f.n->get());
    if (seen_before != nullptr && forgotten(*seen_before)) {
      *seen_before = nullptr; // let go of before: rewritten again (in progress)
    } else if (seen_before != nullptr && *seen_before != nullptr) {
      return; // done through another parent
    } else if (seen_before != nullptr) {
      throw RewriteError("graph_rewrite did not reach a fixed point: " + (*f.n)->str() +
                         " was rewritten into a graph that contains itself (the rules cycle)");
    }
    if (pure_ != 0 && (*f.new_n)->fixed_under().load(std::memory_order_relaxed) == pure_)
      return link(*f.n, *f.new_n); // nothing below it changes
    const UOpPtr* cur = f.new_n;
    size_t depth = f.depth;
    if (opts_.bottom_up) {
      std::unordered_set<const UOp*> seen; // the nodes stay alive in made_
      while (UOpPtr r = apply(*cur, depth)) {
        if (seen.empty()) seen.insert(cur->get());
        if (!seen.insert(r.get()).second)
          throw RewriteError("graph_rewrite did not reach a fixed point: rules cycle between " +
                             (*cur)->str() + " and " + r->str());
        cur = keep(std::move(r));
        ++depth;
      }
    }
    nodes_.insert(f.n->get()); // in progress
    const UOp& node = **cur;
    stack_.push_back({f.n, cur, 1, depth});
    for (size_t i = node.src.size(); i-- > 0;)
      if (!done(node.src[i])) {
        stack_.push_back({&node.src[i], &node.src[i], 0, depth});
        prefetch_node(*node.src[i]);
      }
  }

  // Starts fetching the lines of `u` that its stage 0 reads after its memo slot (which done()
  // has just read): its fields and, after the node in its block, its sources. A large input
  // graph was built long before the rewrite and is no longer in the cache, and a walk down it
  // otherwise waits on each of these lines in turn. The lines are fetched as non-temporal: a
  // graph larger than the cache streams through it once, and fetched normally it would push
  // out of the last-level cache what stays hot, the node table's slots, which every node built
  // probes (the likely reason, not one this machine's counters can show: tg_bench_rewrite's
  // symbolic and chain lines gain 1.5-5%, codegen is unchanged).
  static void prefetch_node(const UOp& u) {
    __builtin_prefetch(&u, 0, 0); // op, dtype, where the sources are
    __builtin_prefetch(&u.fixed_under(), 0, 0);
    __builtin_prefetch(u.src.data(), 0, 0);
  }

  void stage1(const Frame& f) {
    const UOp& node = **f.new_n;
    rebuild_or_match(f, node);
    if (!opts_.bottom_up && nodes_.in_nodes_only()) release_sources(node);
  }

  // Once `node` is rebuilt, a source that only it holds is not looked up again (unless a rule
  // builds it anew): made_ lets go of its replacement now, while it is in cache, instead of
  // when the rewrite ends, and frees it if nothing else holds it (a final node whose parent a
  // rule rewrote into something else). Only a replacement that one memo value points to goes;
  // its node then counts as not seen (forgotten), and is rewritten again if it is met again.
  // Needs every memo entry in its node, as drop_superseded does.
  void release_sources(const UOp& node) {
    for (const UOpPtr& s : node.src) {
      if (s->use_count() != 1) continue;
      const UOpPtr** v = nodes_.find(s.get());
      if (v == nullptr || *v == nullptr || *v == Memo::self()) continue;
      NodeList::Entry& e = NodeList::entry_of(*v);
      if (e.links == 1) e.node = nullptr;
    }
  }

  // Stage 1 proper: rebuild `node` (f.new_n) from its sources' replacements, or match it.
  void rebuild_or_match(const Frame& f, const UOp& node) {
    // The replacements stay alive in the memo, so a rebuild borrows them (no reference count
    // is touched and nothing is allocated for the source list).
    boost::container::small_vector<const UOp*, 4> new_src;
    bool changed = false;
    for (const UOpPtr& s : node.src) {
      const UOp* r = lookup(s).get();
      changed |= r != s.get();
      new_src.push_back(r);
    }
    if (changed && pure_ != 0 && !opts_.bottom_up) return rebuild_detached(f, new_src);
    UOpPtr next;
    if (changed) {
      next = UOp::make_borrowed(node.op, node.dtype, new_src, node.arg);
    } else if (!opts_.bottom_up) {
      next = apply(*f.new_n, f.depth);
    }
    if (!next) {
      // No source changed and no rule applies (bottom-up: stage 0 ran the rules to a fixed
      // point): under a pure matcher this graph is final.
      if (pure_ != 0 && !changed) (*f.new_n)->fixed_under().store(pure_, std::memory_order_relaxed);
      return link(*f.n, *f.new_n);
    }
    const UOpPtr* kept = keep(std::move(next));
    stack_.push_back({f.n, kept, 2, f.depth + 1});
    stack_.push_back({kept, kept, 0, f.depth + 1});
  }

  // Stage 1 of a node whose sources changed, under a pure matcher in top-down mode: the
  // rebuilt node is matched before it is interned. Most rebuilt nodes are rewritten by a rule
  // (under symbolic(), three in five), and one that nothing keeps need not be entered in the
  // node table, then unlinked from it when it goes. Equivalent to interning it first: a pure
  // matcher's answer depends on the node's content alone.
  void rebuild_detached(const Frame& f, std::span<const UOp* const> new_src) {
    const UOp& node = **f.new_n;
    UOpPtr candidate = UOp::make_detached(node.op, node.dtype, new_src, node.arg);
    UOpPtr r = apply(candidate, f.depth + 1);
    if (r && candidate->use_count() == 1) {
      // Rewritten, and the result does not contain the candidate: it goes now, unlisted.
      candidate = nullptr;
      const UOpPtr* kept = keep(std::move(r));
      stack_.push_back({f.n, kept, 2, f.depth + 2});
      stack_.push_back({kept, kept, 0, f.depth + 2});
      return;
    }
    UOpPtr n = UOp::enlist(std::move(candidate));
    if (r) {
      // The result contains the candidate (or its rule kept it): the interned node takes the
      // usual path, so the graph never holds a node outside the table.
      r = nullptr;
      const UOpPtr* kept = keep(std::move(n));
      stack_.push_back({f.n, kept, 2, f.depth + 1});
      stack_.push_back({kept, kept, 0, f.depth + 1});
      return;
    }
    // No rule applies and its sources are final: the node is final (as stage 1 would find it).
    if (const UOpPtr** seen = nodes_.find(n.get()); seen != nullptr && !forgotten(*seen)) {
      if (*seen == nullptr)
        throw RewriteError("graph_rewrite did not reach a fixed point: " + n->str() +
                           " was rewritten into a graph that contains itself (the rules cycle)");
      // Its twin was seen: the replacement is the twin's, or the twin itself, then kept here
      // (the memo points only into made_).
      if (*seen != Memo::self()) return link(*f.n, **seen);
      return link(*f.n, *keep(std::move(n)));
    }
    const UOpPtr* kept = keep(std::move(n));
    link(*kept, *kept);
    (*kept)->fixed_under().store(pure_, std::memory_order_relaxed);
    link(*f.n, *kept);
  }

  const PatternMatcher& pm_;
  void* ctx_;
  const std::type_info* ctx_type_;
  RewriteOptions opts_;
  const uint64_t pure_; // the matcher's pure id, 0 when it is not pure or has a context
  // What becomes of a rule's claim that its result is final (claim_final).
  enum class FinalClaims : uint8_t { Ignored, Trusted, Checked };
  FinalClaims final_ = FinalClaims::Ignored;
  CapturesLease caps_; // the matcher's scratch, reused by every apply of this rewrite
  boost::container::small_vector<Frame, 32> stack_;
  NodeList made_; // the nodes the rewrite built, alive until it ends (see Frame)
  Memo nodes_;    // declared after made_: it frees the nodes' slots before they go
};

} // namespace

UOpPtr graph_rewrite_raw(const UOpPtr& sink, const PatternMatcher& pm, void* ctx,
                         const std::type_info* ctx_type, RewriteOptions opts) {
  if (!sink) throw Error("graph_rewrite of a null node");
  if (opts.name.empty()) return Rewriter(pm, ctx, ctx_type, opts).run(sink);
  const std::string where = " (in graph_rewrite " + std::string(opts.name) + ")";
  const auto t0 = std::chrono::steady_clock::now();
  UOpPtr out;
  try {
    out = Rewriter(pm, ctx, ctx_type, opts).run(sink);
  } catch (const SpecError& e) {
    throw SpecError(e.what() + where);
  } catch (const RewriteError& e) {
    throw RewriteError(e.what() + where);
  }
  if (track_match_stats() > 0)
    record_pass_time(
        "graph_rewrite " + std::string(opts.name),
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return out;
}

bool memo_held_by_running_rewrite(const UOp& u) { return Memo::held(u); }

UOpPtr substitute(const UOpPtr& root, const std::unordered_map<const UOp*, UOpPtr>& map) {
  if (map.empty()) return root;
  const std::vector<const UOp*>& topo = root->toposort();
  // Each changed node's replacement: the map's, or the node rebuilt over its sources'
  // replacements. A flat table sized for the graph and borrowed source lists: codegen
  // substitutes over whole kernels, and a list node plus a vector per node made this walk
  // malloc-bound.
  NodeMap<UOpPtr> done(topo.size());
  for (const UOp* u : topo) {
    if (auto it = map.find(u); it != map.end()) {
      done[u] = it->second;
      continue;
    }
    boost::container::small_vector<const UOp*, 4> src;
    bool changed = false;
    for (const UOpPtr& s : u->src) {
      const UOpPtr* d = done.find(s.get());
      src.push_back(d == nullptr ? s.get() : d->get());
      changed |= src.back() != s.get();
    }
    if (changed) done[u] = UOp::make_borrowed(u->op, u->dtype, src, u->arg);
  }
  const UOpPtr* r = done.find(root.get());
  return r == nullptr ? root : *r;
}

} // namespace tg
