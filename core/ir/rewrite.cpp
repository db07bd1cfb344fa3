// graph_rewrite, iteratively.
//
// Every node goes through up to three stages on an explicit stack:
//   0  (bottom-up only: rewrite the node to its fixed point first) then queue its sources;
//   1  once the sources are done, rebuild the node from their replacements; if nothing
//      changed, try the matcher (top-down mode); a rebuilt or rewritten node is processed
//      as a new node whose result becomes this node's result (stage 2). Under a pure
//      matcher (top-down) a rebuilt node is matched here, before it is interned
//      (rebuild_detached);
//   2  link: this node's replacement is the replacement of what it turned into.
// The memo (`nodes_`) holds finished nodes, so a DAG is visited once per node. Each frame carries
// how many rewrites led to it; past the limit the rewrite is declared non-terminating. A
// node that turns into a graph containing itself (a cycle through the rules) is reported too.
#include <algorithm>
#include <array>
#include <chrono>
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

// Frames and the memo refer to nodes through stable UOpPtrs that outlive the rewrite (the
// root, a source slot of a live node, or an entry of `made_`), so walking the graph touches no
// reference count. Every node the rewrite builds is kept in `made_` until it ends: no node the
// rewrite has seen is freed meanwhile, so an address cannot be reused under the memo. The one
// exception (drop_rebuilt) gives up its memo entry before it goes.
struct Frame {
  const UOpPtr* n;     // the node this frame computes the replacement of
  const UOpPtr* new_n; // what n is (being) turned into
  int stage;
  bool kept = false; // n is an entry of the rewrite's NodeList (a node it built)
  size_t depth;      // rewrites that led here
};

// The nodes a rewrite built, at stable addresses: chunks that double in size up to 64 KiB, the
// first allocated by the first node (a rewrite that changes nothing allocates nothing;
// graph_rewrite runs on small graphs all through codegen, where its setup cost counted). The
// cap keeps chunks below malloc's mmap threshold, so a large rewrite reuses heap memory
// instead of faulting fresh pages in each time.
class NodeList {
public:
  static constexpr uint32_t kNoClaim = UINT32_MAX;
  static constexpr size_t kMaxChunk = 4096; // entries
  // `node` first: a pointer to it is a pointer to its entry (a standard-layout struct).
  struct Entry {
    UOpPtr node;
    uint32_t claim = kNoClaim; // the node's index among the memo's claimed slots
    bool rebuilt = false;      // built from its sources' replacements (stage 1)
  };
  static_assert(std::is_standard_layout_v<Entry>);

  Entry& push(UOpPtr u, bool rebuilt) {
    if (used_ == capacity_) {
      capacity_ = capacity_ == 0 ? 16 : std::min<size_t>(2 * capacity_, kMaxChunk);
      chunks_.push_back(std::make_unique<Entry[]>(capacity_));
      used_ = 0;
    }
    Entry& e = chunks_.back()[used_++];
    e.node = std::move(u);
    e.rebuilt = rebuilt;
    return e;
  }
  // The entry whose node `p` points to; `p` must come from push.
  static Entry& entry_of(const UOpPtr* p) {
    return *reinterpret_cast<Entry*>(const_cast<UOpPtr*>(p));
  }

private:
  boost::container::small_vector<std::unique_ptr<Entry[]>, 8> chunks_;
  size_t capacity_ = 0, used_ = 0; // of the last chunk
};

// The nodes whose memo slot a rewrite claimed, by claim index: 32 inline (most rewrites are
// small), then 8 KiB chunks, left uninitialized. A growing vector would copy the list at each
// doubling and, past malloc's mmap threshold, fault fresh pages in on every large rewrite.
class ClaimList {
public:
  size_t size() const { return size_; }
  const UOp*& operator[](size_t i) {
    return i < kInline ? inline_[i] : chunks_[(i - kInline) / kChunk][(i - kInline) % kChunk];
  }
  void push_back(const UOp* n) {
    if (size_ >= kInline && (size_ - kInline) % kChunk == 0 &&
        chunks_.size() == (size_ - kInline) / kChunk)
      chunks_.push_back(std::make_unique_for_overwrite<const UOp*[]>(kChunk));
    (*this)[size_++] = n;
  }
  void clear() { size_ = 0; }

private:
  static constexpr size_t kInline = 32, kChunk = 1024;
  std::array<const UOp*, kInline> inline_;
  std::vector<std::unique_ptr<const UOp*[]>> chunks_;
  size_t size_ = 0;
};

// Node -> replacement for one rewrite. The entry lives in the node itself (UOp::memo_slot) when
// the rewrite can claim the node's slot, which it holds until it ends; a node whose slot another
// running rewrite holds (a rule's nested rewrite, or another thread's) goes to `overflow_`.
class Memo {
public:
  Memo() : id_(next_id_.fetch_add(1, std::memory_order_relaxed)) {}
  ~Memo() { release(); }
  Memo(const Memo&) = delete;
  Memo& operator=(const Memo&) = delete;

  // The entry of `n`, or null when the rewrite has not seen it. A null value: in progress.
  [[gnu::always_inline]] const UOpPtr** find(const UOp* n) {
    UOp::MemoSlot& slot = n->memo_slot();
    if (slot.owner.load(std::memory_order_relaxed) == id_) return &slot.value;
    if (overflow_empty_) return nullptr;
    return overflow_.find(n);
  }
  // The entry of `n`, created (in progress) when absent. `claim`, when given, receives the
  // index of the slot this call claimed in the node, or NodeList::kNoClaim.
  [[gnu::always_inline]] const UOpPtr*& insert(const UOp* n, uint32_t* claim = nullptr) {
    if (const UOpPtr** v = find(n)) return *v;
    return claim_or_overflow(n, claim);
  }

  // Forgets `n`, whose slot this rewrite claimed as claimed_[claim], before the node goes.
  void unclaim(const UOp* n, uint32_t claim) {
    n->memo_slot().value = nullptr;
    n->memo_slot().owner.store(0, std::memory_order_release);
    claimed_[claim] = nullptr;
  }
  // Frees every claimed slot. Runs before the nodes the rewrite built are dropped.
  void release() {
    for (size_t i = 0; i < claimed_.size(); ++i) {
      const UOp* n = claimed_[i];
      if (n == nullptr) continue; // unclaimed and dropped early
      n->memo_slot().value = nullptr;
      n->memo_slot().owner.store(0, std::memory_order_release);
    }
    claimed_.clear();
  }

private:
  // insert's slow half: claim n's slot for this rewrite, or use the overflow map when another
  // rewrite holds it.
  const UOpPtr*& claim_or_overflow(const UOp* n, uint32_t* claim) {
    UOp::MemoSlot& slot = n->memo_slot();
    uint64_t free_slot = 0;
    if (slot.owner.compare_exchange_strong(free_slot, id_, std::memory_order_acquire,
                                           std::memory_order_relaxed)) {
      if (claim != nullptr && claimed_.size() < NodeList::kNoClaim)
        *claim = static_cast<uint32_t>(claimed_.size());
      claimed_.push_back(n);
      return slot.value;
    }
    overflow_empty_ = false;
    return overflow_[n];
  }

  static inline std::atomic<uint64_t> next_id_{1}; // 0 marks a free slot
  const uint64_t id_;
  ClaimList claimed_;
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
    stack_.push_back({&root, &root, 0, false, 0});
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
  bool done(const UOpPtr& n) {
    const UOpPtr** v = nodes_.find(n.get());
    return v != nullptr && *v != nullptr;
  }

  const UOpPtr& lookup(const UOpPtr& n) {
    const UOpPtr** v = nodes_.find(n.get());
    if (v == nullptr || *v == nullptr) [[unlikely]]
      no_replacement(n);
    return **v;
  }
  [[noreturn, gnu::cold, gnu::noinline]] static void no_replacement(const UOpPtr& n) {
    throw RewriteError("graph_rewrite: internal error, " + n->str() + " has no replacement");
  }

  // `result` must outlive the rewrite (see Frame).
  void link(const UOpPtr& n, const UOpPtr& result) { nodes_.insert(n.get()) = &result; }

  // Keeps a node built by the rewrite alive until it ends (or drop_rebuilt lets it go);
  // returns its stable reference.
  const UOpPtr* keep(UOpPtr u, bool rebuilt = false) {
    return &made_.push(std::move(u), rebuilt).node;
  }

  // Stage 2: f.n's replacement is the replacement of what it turned into (a node in made_).
  void finish(const Frame& f) {
    link(*f.n, lookup(*f.new_n));
    drop_rebuilt(NodeList::entry_of(f.new_n));
  }

  // A node rebuilt from its sources' replacements that a rule then rewrote is garbage: nothing
  // the rewrite keeps refers to it (its sources were all done, so no memo entry points into
  // it, and its replacement is another node). When no one else holds it either, it goes now
  // instead of at the end, so the node table and the cache hold only what is still used. A
  // node built again later is rewritten again, with the same result.
  void drop_rebuilt(NodeList::Entry& e) {
    if (!e.rebuilt || e.claim == NodeList::kNoClaim || &lookup(e.node) == &e.node ||
        e.node->use_count() != 1)
      return;
    nodes_.unclaim(e.node.get(), e.claim);
    e.node = nullptr;
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
    if (seen_before != nullptr && *seen_before != nullptr) return; // done through another parent
    if (seen_before != nullptr)
      throw RewriteError("graph_rewrite did not reach a fixed point: " + (*f.n)->str() +
                         " was rewritten into a graph that contains itself (the rules cycle)");
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
    // In progress; a node the rewrite built records which slot it claimed (drop_rebuilt).
    nodes_.insert(f.n->get(), f.kept ? &NodeList::entry_of(f.n).claim : nullptr);
    const UOp& node = **cur;
    stack_.push_back({f.n, cur, 1, f.kept, depth});
    for (size_t i = node.src.size(); i-- > 0;)
      if (!done(node.src[i])) stack_.push_back({&node.src[i], &node.src[i], 0, false, depth});
  }

  void stage1(const Frame& f) {
    const UOp& node = **f.new_n;
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
    const UOpPtr* kept = keep(std::move(next), changed);
    stack_.push_back({f.n, kept, 2, f.kept, f.depth + 1});
    stack_.push_back({kept, kept, 0, true, f.depth + 1});
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
      stack_.push_back({f.n, kept, 2, f.kept, f.depth + 2});
      stack_.push_back({kept, kept, 0, true, f.depth + 2});
      return;
    }
    UOpPtr n = UOp::enlist(std::move(candidate));
    if (r) {
      // The result contains the candidate (or its rule kept it): the interned node takes the
      // usual path, so the graph never holds a node outside the table.
      r = nullptr;
      const UOpPtr* kept = keep(std::move(n), true);
      stack_.push_back({f.n, kept, 2, f.kept, f.depth + 1});
      stack_.push_back({kept, kept, 0, true, f.depth + 1});
      return;
    }
    // No rule applies and its sources are final: the node is final (as stage 1 would find it).
    if (const UOpPtr** seen = nodes_.find(n.get())) {
      if (*seen == nullptr)
        throw RewriteError("graph_rewrite did not reach a fixed point: " + n->str() +
                           " was rewritten into a graph that contains itself (the rules cycle)");
      return link(*f.n, **seen);
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

UOpPtr substitute(const UOpPtr& root, const std::unordered_map<const UOp*, UOpPtr>& map) {
  if (map.empty()) return root;
  std::unordered_map<const UOp*, UOpPtr> done;
  for (const UOp* u : root->toposort()) {
    if (auto it = map.find(u); it != map.end()) {
      done.emplace(u, it->second);
      continue;
    }
    std::vector<UOpPtr> src;
    src.reserve(u->src.size());
    bool changed = false;
    for (const UOpPtr& s : u->src) {
      auto d = done.find(s.get());
      src.push_back(d == done.end() ? s : d->second);
      changed |= src.back() != s;
    }
    if (changed) done.emplace(u, u->replace_src(std::move(src)));
  }
  auto it = done.find(root.get());
  return it == done.end() ? root : it->second;
}

} // namespace tg
