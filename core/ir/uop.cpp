// UOp interning and lifetime.
//
// The node table is sharded by hash, each shard an open-addressing table from hash to node
// under its own spin lock, so that parallel compile threads rarely contend. A node whose count
// drops to zero is removed from the table by the thread that dropped it; a concurrent lookup that
// finds it first sees a zero count (try_retain fails), replaces the table entry with a fresh node,
// and the dying node then finds no entry of its own to remove. Destruction is iterative: freeing a
// node queues its sources instead of recursing, so dropping a chain of millions of nodes uses
// constant stack.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <thread>
#include <utility>

#include <boost/container/small_vector.hpp>

#include "minmax.hpp"
#include "node_memory.hpp"
#include "tg/error.hpp"
#include "tg/ir/node_set.hpp"
#include "tg/ir/shape.hpp"
#include "tg/ir/spec.hpp"
#include "tg/ir/uop.hpp"

namespace tg {

namespace {

std::atomic<size_t> g_live_nodes{0};

inline size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

// arg_hash, with the args of most nodes (none, an integer) inline.
size_t node_arg_hash(const Arg& arg) {
  if (std::holds_alternative<std::monostate>(arg)) return arg.index();
  if (const auto* i = std::get_if<int64_t>(&arg)) return mix(arg.index(), static_cast<size_t>(*i));
  return arg_hash(arg);
}

// arg_equal, with the args of most nodes inline.
bool node_arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (std::holds_alternative<std::monostate>(a)) return true;
  if (const auto* i = std::get_if<int64_t>(&a)) return *i == *std::get_if<int64_t>(&b);
  return arg_equal(a, b);
}

// A source as a node address, from a reference or a borrowed pointer.
inline const UOp* raw(const UOpPtr& u) { return u.get(); }
inline const UOp* raw(const UOp* u) { return u; }

template <class Src> size_t node_hash(Ops op, DType dtype, std::span<Src> src, const Arg& arg) {
  // The dtype's fields packed as DType::hash packs them, without the call.
  const uint64_t packed = uint64_t(dtype.scalar_type) | (uint64_t(dtype.count) << 8) |
                          (uint64_t(dtype.is_ptr) << 24) | (uint64_t(dtype.addrspace) << 25);
  size_t h = mix(mix(static_cast<size_t>(op), packed), static_cast<size_t>(dtype.size));
  for (const auto& s : src) h = mix(h, std::hash<const void*>()(raw(s)));
  h = mix(h, node_arg_hash(arg));
  // The table picks a shard from the low bits and a bucket from the next ones; hash_combine
  // alone leaves them correlated (source addresses are 16-byte aligned). MurmurHash3's
  // finalizer spreads every input bit over the word (tg_bench_rewrite: 1.2-1.6x).
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdULL;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ULL;
  return h ^ (h >> 33);
}

template <class Src>
bool same_content(const UOp& u, Ops op, DType dtype, std::span<Src> src, const Arg& arg) {
  return u.op == op && u.dtype == dtype &&
         std::equal(u.src.begin(), u.src.end(), src.begin(), src.end(),
                    [](const UOpPtr& a, const auto& b) { return a.get() == raw(b); }) &&
         node_arg_equal(u.arg, arg);
}

// Values bound to variables never enter the graph (tg/ir/sint.hpp): a node is the same for
// every value, so schedules and kernels are too.
void strip_bindings(Arg& arg) {
  if (auto* shape = std::get_if<Shape>(&arg)) {
    for (sint& d : *shape)
      if (!d.bindings().empty()) d = d.unbound();
  } else if (auto* pairs = std::get_if<PadArg>(&arg)) {
    for (auto& [a, b] : *pairs) {
      if (!a.bindings().empty()) a = a.unbound();
      if (!b.bindings().empty()) b = b.unbound();
    }
  }
}

// A shard's lock. It is held for a few probes at a time, so a waiting thread spins briefly,
// then yields (BEAM compiles candidates on several threads); uncontended it is one atomic
// exchange and one store, cheaper than a mutex.
class SpinLock {
public:
  void lock() noexcept {
    for (int spins = 0; flag_.exchange(true, std::memory_order_acquire);)
      while (flag_.load(std::memory_order_relaxed))
        if (++spins > 64) std::this_thread::yield();
  }
  void unlock() noexcept { flag_.store(false, std::memory_order_release); }

private:
  std::atomic<bool> flag_{false};
};

// The nodes waiting to be freed by the outermost UOpTable::destroy running on this thread (it
// lives on that call's stack), or null when none runs. Trivially destructible, so it is
// readable at any point of thread or process exit.
using Pending = boost::container::small_vector<const UOp*, 32>;
thread_local Pending* t_pending = nullptr;

// An ALU node none of whose sources has a shape: kernel level, so it has no shape either
// (compute_shape's elementwise case), decided without the call. Most nodes built are these.
template <class Src> bool kernel_alu(Ops op, std::span<Src> src) {
  return GroupOp::ALU.contains(op) && std::none_of(src.begin(), src.end(), [](const auto& s) {
           return raw(s)->shape_ptr() != nullptr;
         });
}

} // namespace

struct UOpTable {
  // Each shard is an open-addressing table of (tag, node) slots with linear probing. A probe
  // compares the stored tag before it reads a node, so looking up a node that is not there
  // touches only the slot array, and unlinking a dying node (found by its address) touches no
  // other node: on a graph larger than the cache each node read is a miss.
  static constexpr size_t kShards = 64;
  // A node's address and 20 bits of its hash (the tag) in one word, so that the table is half
  // the size of (hash, pointer) pairs and more of it stays in cache. User-space addresses have
  // at most 48 bits and node blocks are 16-byte aligned: the tag's low 4 bits fill the
  // alignment bits and its high 16 the top of the word. The tag holds the hash bits that pick
  // the home slot (bits 6..25), so a slot's home is known without reading its node while the
  // shard has at most 2^20 slots.
  struct Slot {
    static constexpr uint64_t kAddrMask = ((uint64_t{1} << 48) - 1) & ~uint64_t{15};
    uint64_t bits = 0; // 0: empty

    static uint64_t tag_of(size_t hash) { return (hash >> 6) & ((uint64_t{1} << 20) - 1); }
    static Slot make(size_t hash, UOp* node) {
      const auto addr = reinterpret_cast<uint64_t>(node);
      if ((addr & ~kAddrMask) != 0) {
        std::fprintf(stderr,
                     "tinygrad-cpp: a node at %p lies beyond the 48-bit address space "
                     "the node table packs; this platform is not supported\n",
                     static_cast<void*>(node));
        std::abort();
      }
      const uint64_t tag = tag_of(hash);
      return Slot{addr | (tag & 15) | ((tag >> 4) << 48)};
    }
    UOp* node() const { return reinterpret_cast<UOp*>(bits & kAddrMask); }
    uint64_t tag() const { return (bits & 15) | ((bits >> 48) << 4); }
    explicit operator bool() const { return bits != 0; }
  };
  // An open-addressing array of slots with linear probing, at most half full: a probe for an
  // absent node then ends within a slot or two.
  struct Slots {
    std::vector<Slot> slots;
    size_t count = 0;

    explicit Slots(size_t n) : slots(n) {}
    size_t mask() const { return slots.size() - 1; }
    // The shard is picked by the hash's low bits; the home slot comes from the next ones.
    static size_t home_in(size_t hash, size_t mask) { return (hash >> 6) & mask; }
    size_t home(size_t hash) const { return home_in(hash, mask()); }
    size_t home(const Slot& s) const {
      return slots.size() <= (size_t{1} << 20) ? s.tag() & mask() : home(s.node()->hash_);
    }
    // Room for `more` nodes beyond count, the array staying at most half full; true when it
    // was rebuilt larger.
    bool reserve(size_t more) {
      if (2 * (count + more) <= slots.size()) return false;
      size_t n = slots.size();
      while (2 * (count + more) > n) n *= 2;
      std::vector<Slot> before(n);
      before.swap(slots);
      for (const Slot& s : before)
        if (s) place_at_home(s);
      return true;
    }
    void place(const Slot& s) {
      place_at_home(s);
      ++count;
    }
    // Empties slot i and moves later slots of the same probe run back, so that every node
    // stays reachable from its home slot without tombstones.
    void erase_at(size_t i) {
      for (size_t j = (i + 1) & mask(); slots[j]; j = (j + 1) & mask()) {
        const size_t h = home(slots[j]);
        // slots[j] may move to i when its home does not lie cyclically in (i, j].
        if (((j - h) & mask()) >= ((j - i) & mask())) {
          slots[i] = slots[j];
          i = j;
        }
      }
      slots[i] = Slot{};
      --count;
    }
    // Erases `u` if it is here (a racing lookup may have erased it, or it is in the other array).
    bool erase(const UOp* u) {
      for (size_t i = home(u->hash_); slots[i]; i = (i + 1) & mask())
        if (slots[i].node() == u) {
          erase_at(i);
          return true;
        }
      return false;
    }

  private:
    void place_at_home(const Slot& s) {
      size_t i = home(s);
      while (slots[i]) i = (i + 1) & mask();
      slots[i] = s;
    }
  };

  // A shard keeps its nodes in `old`, an array that grows with them. Once `old` is larger than
  // the cache can be expected to keep (kNurseryFrom), a new node goes first into `young`, a
  // small array that stays in cache; when that is half full its nodes move to `old` together,
  // their slots fetched first, so that their cache misses overlap. A lookup then probes `young`,
  // and `old` only where `filter` says it may hold the node. Most nodes a rewrite builds are
  // dropped again soon after (a rebuilt sum that a rule rewrites further): they come and go in
  // `young` without touching `old`, and a lookup of a node that is in neither, the most common
  // kind, reads a slot of `old` only when the filter errs (1 in 8 at most).
  // (tg_bench_rewrite's symbolic line, whose table is 8 MiB: 3-6% faster.)
  struct Shard {
    static constexpr size_t kYoungSlots = 256;
    // 64 shards of this many slots are 2 MiB.
    static constexpr size_t kNurseryFrom = 4096;
    // Filter bits per slot of `old`: at most 1 in 8 bits is set, so a lookup of an absent node
    // probes `old` in at most 1 case in 8.
    static constexpr size_t kFilterBitsPerSlot = 4;

    SpinLock mu;
    Slots old{1024};
    Slots young{kYoungSlots}; // empty while old is smaller than kNurseryFrom
    // With the nursery: one bit per value of hash bits 6.. (as many bits as the filter has), set
    // for each node of `old`. Erasing a node leaves its bit set; the bits are rebuilt from `old`
    // once as many nodes were erased since the last rebuild as `old` holds.
    std::vector<uint64_t> filter;
    size_t erased_from_old = 0;
    // `old` and the filter as last published, read without the lock only to prefetch what a
    // lookup reads (prefetch_probe); a stale pair names a harmless address.
    std::atomic<const Slot*> published_old{old.slots.data()};
    std::atomic<size_t> published_old_mask{old.mask()};
    std::atomic<const uint64_t*> published_filter{nullptr};
    std::atomic<size_t> published_filter_mask{0};

    bool nursery() const { return old.slots.size() >= kNurseryFrom; }
    size_t filter_mask() const { return filter.size() * 64 - 1; }
    static size_t filter_bit(size_t hash, size_t fmask) { return (hash >> 6) & fmask; }
    // Whether `old` may hold a node of this hash (with the nursery).
    bool old_may_hold(size_t hash) const {
      const size_t b = filter_bit(hash, filter_mask());
      return (filter[b / 64] >> (b % 64) & 1) != 0;
    }
    // The filter bit of a slot of `old`, from its tag while the filter has at most 2^20 bits.
    size_t filter_bit(const Slot& s) const {
      return filter.size() * 64 <= (size_t{1} << 20) ? s.tag() & filter_mask()
                                                     : filter_bit(s.node()->hash_, filter_mask());
    }
    void mark(const Slot& s) {
      const size_t b = filter_bit(s);
      filter[b / 64] |= uint64_t{1} << (b % 64);
    }
    void rebuild_filter() {
      filter.assign(old.slots.size() * kFilterBitsPerSlot / 64, 0);
      for (const Slot& s : old.slots)
        if (s) mark(s);
      erased_from_old = 0;
      published_filter.store(filter.data(), std::memory_order_relaxed);
      published_filter_mask.store(filter_mask(), std::memory_order_relaxed);
    }
    // Room in `old` for `more` nodes.
    void reserve_old(size_t more) {
      if (!old.reserve(more)) return;
      published_old.store(old.slots.data(), std::memory_order_relaxed);
      published_old_mask.store(old.mask(), std::memory_order_relaxed);
      if (nursery()) rebuild_filter();
    }

    [[gnu::always_inline]] void insert(const Slot& s) {
      if (!nursery()) {
        reserve_old(1);
        old.place(s);
        if (nursery()) mark(s); // the growth turned the nursery on and built the filter
        return;
      }
      young.place(s);
      if (2 * young.count >= young.slots.size()) promote();
    }
    // Moves every node of `young` to `old`.
    void promote() {
      reserve_old(young.count);
      // The nodes in order, each one's slot in `old` fetched kAhead nodes before it is placed.
      constexpr size_t kAhead = 8;
      std::array<Slot, kYoungSlots> moving;
      size_t n = 0;
      for (Slot& s : young.slots)
        if (s) moving[n++] = std::exchange(s, Slot{});
      young.count = 0;
      for (size_t i = 0; i < n; ++i) {
        if (i + kAhead < n) __builtin_prefetch(&old.slots[old.home(moving[i + kAhead])], 1);
        old.place(moving[i]);
        mark(moving[i]);
      }
    }
    // Unlinks `u` if it is still in the table (a racing lookup may have unlinked it).
    void unlink(const UOp* u) {
      if ((young.count != 0 && young.erase(u)) || !old.erase(u) || !nursery()) return;
      if (++erased_from_old > old.count) rebuild_filter();
    }
  };
  std::array<Shard, kShards> shards;

  Shard& shard(size_t hash) { return shards[hash % kShards]; }

  // Never destroyed: nodes held by static objects may be released after main returns.
  [[gnu::always_inline]] static UOpTable& get() {
    static UOpTable* table = new UOpTable;
    return *table;
  }

  // Looks `src` up as a span, so a hit allocates nothing; a miss takes the sources from
  // `owned` when given (moved) or copies them.
  template <class Src>
  static UOpPtr intern(Ops op, DType dtype, std::span<Src> src, std::vector<UOpPtr>* owned,
                       Arg&& arg) {
    size_t h = node_hash(op, dtype, src, arg);
    Shard& sh = get().shard(h);
    if (owned == nullptr && kernel_alu(op, src)) {
      // Building such a node interns nothing (it has no shape to compute), and a constructor
      // that throws only drops the references it took on sources the caller holds: it is built
      // under the lock of the lookup that missed, with no second lookup.
      std::lock_guard lock(sh.mu);
      if (UOp* n = find_live(sh, h, op, dtype, src, arg)) return UOpPtr(n, UOpPtr::Adopt{});
      UOp* node = build_node(op, dtype, src, nullptr, std::move(arg), h);
      node->refs_.store(1, std::memory_order_relaxed);
      sh.insert(Slot::make(h, node));
      return UOpPtr(node, UOpPtr::Adopt{});
    }
    if (UOp* n = find_locked(sh, h, op, dtype, src, arg)) return UOpPtr(n, UOpPtr::Adopt{});

    // Built outside the lock: computing a shape may build nodes (symbolic sizes), which could
    // need this shard. A constructor that throws (a shape error) leaves the table untouched.
    UOp* node = build_node(op, dtype, src, owned, std::move(arg), h);
    node->refs_.store(1, std::memory_order_relaxed);
    UOp* twin = nullptr;
    {
      std::lock_guard lock(sh.mu);
      // Another thread may have interned a twin meanwhile: then it wins and ours goes.
      twin = find_live(sh, h, node->op, node->dtype, std::span<const UOpPtr>(node->src), node->arg);
      if (!twin) {
        sh.insert(Slot::make(h, node));
        return UOpPtr(node, UOpPtr::Adopt{});
      }
    }
    free_node(node); // never in the table; releasing its sources may free nodes
    return UOpPtr(twin, UOpPtr::Adopt{});
  }

  // Starts fetching what a lookup of hash h reads, without the lock: the home slot in `old`,
  // and with the nursery the filter's word. The addresses are computed as integers: with a
  // stale array and mask they may lie outside the array, which a prefetch tolerates and
  // pointer arithmetic does not.
  static void prefetch_probe(size_t h) {
    const Shard& sh = get().shard(h);
    const auto slots =
        reinterpret_cast<uintptr_t>(sh.published_old.load(std::memory_order_relaxed));
    const size_t i = Slots::home_in(h, sh.published_old_mask.load(std::memory_order_relaxed));
    __builtin_prefetch(reinterpret_cast<const void*>(slots + i * sizeof(Slot)));
    if (const uint64_t* words = sh.published_filter.load(std::memory_order_relaxed)) {
      const size_t b =
          Shard::filter_bit(h, sh.published_filter_mask.load(std::memory_order_relaxed));
      __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(words) +
                                                       b / 64 * sizeof(uint64_t)));
    }
  }

  // A node built outside the table (UOp::make_detached). A node built detached is matched, and
  // entered if no rule replaces it (UOp::enlist): its home slot is fetched meanwhile.
  template <class Src>
  static UOpPtr build_detached(Ops op, DType dtype, std::span<Src> src, Arg&& arg) {
    const size_t h = node_hash(op, dtype, src, arg);
    prefetch_probe(h);
    UOp* node = build_node(op, dtype, src, nullptr, std::move(arg), h);
    node->listed_ = false;
    node->refs_.store(1, std::memory_order_relaxed);
    return UOpPtr(node, UOpPtr::Adopt{});
  }

  // Enters the detached node `u` (UOp::enlist), or returns its twin.
  static UOpPtr enlist(UOpPtr u) {
    UOp* node = const_cast<UOp*>(u.get());
    Shard& sh = get().shard(node->hash_);
    std::lock_guard lock(sh.mu);
    if (UOp* twin = find_live(sh, node->hash_, node->op, node->dtype,
                              std::span<const UOpPtr>(node->src), node->arg))
      return UOpPtr(twin, UOpPtr::Adopt{});
    node->listed_ = true;
    sh.insert(Slot::make(node->hash_, node));
    return u;
  }

  // The bytes of a node's block: the node, then its sources.
  static size_t block_bytes(size_t nsrc) { return sizeof(UOp) + nsrc * sizeof(UOpPtr); }

  // A new node in one block with its sources after it; a constructor that throws (a shape
  // error) frees the block and drops the sources.
  template <class Src>
  static UOp* build_node(Ops op, DType dtype, std::span<Src> src, std::vector<UOpPtr>* owned,
                         Arg&& arg, size_t h) {
    static_assert(sizeof(UOp) % alignof(UOpPtr) == 0);
    const size_t n = src.size();
    const size_t bytes = block_bytes(n);
    void* mem = node_memory::allocate(bytes);
    auto* slots = reinterpret_cast<UOpPtr*>(static_cast<char*>(mem) + sizeof(UOp));
    for (size_t i = 0; i < n; ++i) {
      if (owned)
        new (slots + i) UOpPtr(std::move((*owned)[i]));
      else
        new (slots + i) UOpPtr(raw(src[i]));
    }
    try {
      return new (mem) UOp(op, dtype, n, std::move(arg), h);
    } catch (...) {
      for (size_t i = n; i-- > 0;) slots[i].~UOpPtr();
      node_memory::deallocate(mem, bytes);
      throw;
    }
  }

  static void free_node(const UOp* u) {
    const size_t bytes = block_bytes(u->src.size());
    u->~UOp();
    node_memory::deallocate(const_cast<UOp*>(u), bytes);
  }

  // A live node equal to (op, dtype, src, arg), retained, or null; the caller holds the lock.
  // A dying match is unlinked (its owner will find no entry and just free it).
  template <class Src>
  static UOp* find_live(Shard& sh, size_t h, Ops op, DType dtype, std::span<Src> src,
                        const Arg& arg) {
    if (sh.young.count != 0) {
      const auto [young, found] = find_in(sh.young, h, op, dtype, src, arg);
      if (found) return young;
    }
    if (sh.nursery() && !sh.old_may_hold(h)) return nullptr;
    return find_in(sh.old, h, op, dtype, src, arg).first;
  }
  // find_live in one array: the node, and whether a match was found (live or dying).
  template <class Src>
  static std::pair<UOp*, bool> find_in(Slots& t, size_t h, Ops op, DType dtype, std::span<Src> src,
                                       const Arg& arg) {
    const uint64_t tag = Slot::tag_of(h);
    for (size_t i = t.home(h); t.slots[i]; i = (i + 1) & t.mask()) {
      if (t.slots[i].tag() != tag) continue;
      UOp* n = t.slots[i].node();
      if (n->hash_ != h || !same_content(*n, op, dtype, src, arg)) continue;
      if (n->try_retain()) return {n, true};
      t.erase_at(i);
      return {nullptr, true};
    }
    return {nullptr, false};
  }
  template <class Src>
  static UOp* find_locked(Shard& sh, size_t h, Ops op, DType dtype, std::span<Src> src,
                          const Arg& arg) {
    std::lock_guard lock(sh.mu);
    return find_live(sh, h, op, dtype, src, arg);
  }

  static void unlink(const UOp* u) {
    Shard& sh = get().shard(u->hash());
    std::lock_guard lock(sh.mu);
    sh.unlink(u);
  }

  // Frees `u` and, through a worklist, every source whose last reference it held: a free
  // inside this loop (a source released by `delete`) only queues its node.
  static void destroy(const UOp* u) {
    if (Pending* outer = t_pending) {
      outer->push_back(u);
      return;
    }
    Pending pending{u};
    t_pending = &pending;
    while (!pending.empty()) {
      const UOp* n = pending.back();
      pending.pop_back();
      if (n->listed_) unlink(n);
      free_node(n); // releasing its sources may push them onto `pending`
    }
    t_pending = nullptr;
  }
};

struct UOp::Derived {
  std::once_flag topo_once, slice_once;
  std::vector<const UOp*> topo;
  std::unordered_set<const UOp*> slice;
};

UOp::UOp(Ops op_, DType dtype_, size_t nsrc, Arg arg_, size_t hash)
    : op(op_), dtype(dtype_), src(source_slots(), nsrc), arg(std::move(arg_)), hash_(hash),
      shape_(kernel_alu(op, std::span<const UOpPtr>(src)) ? nullptr : compute_shape(op, src, arg)) {
  std::tie(vmin_, vmax_) = compute_vmin_vmax(op, dtype, src, arg);
  g_live_nodes.fetch_add(1, std::memory_order_relaxed);
}

UOp::~UOp() {
  delete derived_.load(std::memory_order_acquire);
  // First source first: they go onto destroy()'s worklist in that order and come off it last
  // first, so a graph is freed in the exact reverse of the order graphs are built in (sources
  // before users, left to right), and node_memory hands freed blocks back last first. A graph
  // built again after the last one went (the next step, the next kernel) so gets its nodes
  // where the first one had them, in build order. Released last to first, sibling subtrees
  // swapped places at each rebuild: after three rebuilds an empty-matcher walk over a
  // 284k-node graph took 1.8 times as long.
  for (size_t i = 0; i < src.size(); ++i) source_slots()[i].~UOpPtr();
  g_live_nodes.fetch_sub(1, std::memory_order_relaxed);
}

void UOp::release() const noexcept {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) UOpTable::destroy(this);
}

bool UOp::try_retain() const noexcept {
  int64_t r = refs_.load(std::memory_order_relaxed);
  while (r > 0)
    if (refs_.compare_exchange_weak(r, r + 1, std::memory_order_acq_rel)) return true;
  return false;
}

size_t UOp::live_count() { return g_live_nodes.load(std::memory_order_relaxed); }

namespace {

// Small integer constants of index and int32, the ones index arithmetic builds over and over
// (strides, bounds, the coefficients of a canonical sum), built once and kept: making one
// returns a reference without a table probe.
class SmallConsts {
public:
  static constexpr int64_t kLo = -64, kHi = 512; // [kLo, kHi)

  static const UOpPtr* find(Ops op, DType dtype, const Arg& arg) {
    if (op != Ops::CONST) return nullptr;
    const auto* v = std::get_if<int64_t>(&arg);
    return v == nullptr ? nullptr : find(dtype, *v);
  }
  static const UOpPtr* find(DType dtype, int64_t v) {
    if (v < kLo || v >= kHi) return nullptr;
    const size_t at = static_cast<size_t>(v - kLo);
    if (dtype == dtypes::index) return &get().index_[at];
    if (dtype == dtypes::int32) return &get().int32_[at];
    return nullptr;
  }

private:
  SmallConsts() {
    for (int64_t v = kLo; v < kHi; ++v) {
      const auto at = static_cast<size_t>(v - kLo);
      index_[at] = intern_const(dtypes::index, v);
      int32_[at] = intern_const(dtypes::int32, v);
    }
  }
  static UOpPtr intern_const(DType d, int64_t v) {
    return UOpTable::intern(Ops::CONST, d, std::span<const UOpPtr>(), nullptr, Arg(v));
  }

public:
  // Never destroyed: nodes may be released after main returns.
  static SmallConsts& get() {
    static SmallConsts* c = new SmallConsts;
    return *c;
  }

private:
  std::array<UOpPtr, kHi - kLo> index_, int32_;
};

// Built before main, so that no caller sees the node count jump at its first constant.
[[maybe_unused]] const SmallConsts& g_small_consts = SmallConsts::get();

[[noreturn, gnu::cold, gnu::noinline]] void null_source(Ops op, size_t i) {
  throw SpecError(std::string("building ") + std::string(op_name(op)) + ": source " +
                  std::to_string(i) + " is null");
}
template <class Src> void require_sources(Ops op, std::span<Src> src) {
  for (size_t i = 0; i < src.size(); ++i)
    if (!raw(src[i])) [[unlikely]]
      null_source(op, i);
}

} // namespace

template <class Src>
UOpPtr UOp::make_impl(Ops op, DType dtype, std::span<Src> src, std::vector<UOpPtr>* owned,
                      Arg&& arg) {
  if (const UOpPtr* c = SmallConsts::find(op, dtype, arg); c != nullptr && src.empty()) return *c;
  require_sources(op, src);
  strip_bindings(arg);
  UOpPtr u = UOpTable::intern(op, dtype, src, owned, std::move(arg));
  if (spec_checking()) verify_node(*u);
  return u;
}

UOpPtr UOp::make(Ops op, DType dtype, std::vector<UOpPtr> src, Arg arg) {
  return make_impl(op, dtype, std::span<const UOpPtr>(src), &src, std::move(arg));
}

UOpPtr UOp::make(Ops op, DType dtype, std::initializer_list<UOpPtr> src, Arg arg) {
  return make_impl(op, dtype, std::span<const UOpPtr>(src.begin(), src.size()), nullptr,
                   std::move(arg));
}

UOpPtr UOp::make_borrowed(Ops op, DType dtype, std::span<const UOp* const> src, Arg arg) {
  return make_impl(op, dtype, src, nullptr, std::move(arg));
}

UOpPtr UOp::make_detached(Ops op, DType dtype, std::span<const UOp* const> src, Arg arg) {
  require_sources(op, src);
  strip_bindings(arg);
  UOpPtr u = UOpTable::build_detached(op, dtype, src, std::move(arg));
  if (spec_checking()) verify_node(*u);
  return u;
}

UOpPtr UOp::enlist(UOpPtr u) {
  if (!u || u->listed_) throw Error("UOp::enlist takes a detached node (UOp::make_detached)");
  return UOpTable::enlist(std::move(u));
}

UOpPtr UOp::const_(DType dtype, ConstValue v) {
  return make(Ops::CONST, dtype, {},
              std::visit([](auto x) { return Arg(x); }, cast_const(v, dtype.base().scalar())));
}

UOpPtr UOp::int_const(DType dtype, int64_t v) {
  if (const UOpPtr* c = SmallConsts::find(dtype, v)) return *c;
  // uint64 values above INT64_MAX are held as their two's-complement int64 bits.
  const bool holds = !dtype.is_ptr && dtype.count == 1 && dtype.is_int() &&
                     (dtype.scalar_type == ScalarType::UInt64 ||
                      (v >= int_dtype_min(dtype) && v <= int_dtype_max(dtype)));
  if (!holds) return const_(dtype, v); // converted, as const_ does
  return make(Ops::CONST, dtype, {}, Arg(v));
}

UOpPtr UOp::variable(const std::string& name, int64_t min, int64_t max, DType dtype) {
  if (min > max)
    throw Error("variable '" + name + "': min " + std::to_string(min) + " > max " +
                std::to_string(max));
  return make(Ops::DEFINE_VAR, dtype, {}, VarArg{name, min, max});
}

UOpPtr UOp::range(const UOpPtr& end, int64_t id, AxisType type) {
  return make(Ops::RANGE, end->dtype, {end}, RangeArg{id, type});
}

UOpPtr UOp::sink(std::vector<UOpPtr> srcs) {
  return make(Ops::SINK, dtypes::void_, std::move(srcs));
}

UOpPtr UOp::replace_src(std::vector<UOpPtr> new_src) const {
  if (new_src == src) return ptr();
  return make(op, dtype, std::move(new_src), arg);
}

UOpPtr UOp::with_dtype(DType d) const {
  if (d == dtype) return ptr();
  return make_impl(op, d, std::span<const UOpPtr>(src), nullptr, Arg(arg));
}

UOpPtr UOp::alu(Ops alu_op, std::initializer_list<UOpPtr> others) const {
  DType out = dtype;
  if (GroupOp::Comparison.contains(alu_op))
    out = dtypes::bool_.vec(dtype.count);
  else if (alu_op == Ops::WHERE) {
    if (others.size() != 2) throw SpecError("WHERE needs a condition and two branches");
    if (!others.begin()[0]) throw SpecError("building WHERE: source 1 is null");
    out = others.begin()[0]->dtype;
  }
  // Borrowed: this node and `others` outlive the call, so no reference is copied.
  std::array<const UOp*, 4> srcs{this};
  if (others.size() >= srcs.size()) {
    std::vector<UOpPtr> all{ptr()};
    all.insert(all.end(), others.begin(), others.end());
    return make(alu_op, out, std::move(all));
  }
  size_t n = 1;
  for (const UOpPtr& o : others) srcs[n++] = o.get();
  return make_borrowed(alu_op, out, std::span<const UOp* const>(srcs.data(), n));
}

UOpPtr UOp::const_like(ConstValue v) const { return const_(dtype, v); }

UOpPtr UOp::cast(DType d) const {
  if (d == dtype) return ptr();
  return make(Ops::CAST, d, {ptr()});
}

UOpPtr UOp::bitcast(DType d) const {
  if (d == dtype) return ptr();
  return make(Ops::BITCAST, d, {ptr()});
}

UOpPtr UOp::logical_not() const { return ne(const_like(true)); }

ConstValue UOp::const_value() const {
  if (op != Ops::CONST) throw Error("const_value() on a " + std::string(op_name(op)) + " node");
  return std::visit(
      [](const auto& x) -> ConstValue {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, double>)
          return x;
        else
          throw Error("CONST node without a numeric arg");
      },
      arg);
}

bool UOp::is_const_value(double v) const {
  if (op != Ops::CONST) return false;
  if (const auto* i = std::get_if<int64_t>(&arg)) return static_cast<double>(*i) == v;
  if (const auto* d = std::get_if<double>(&arg)) return *d == v;
  if (const auto* b = std::get_if<bool>(&arg)) return (*b ? 1.0 : 0.0) == v;
  return false;
}

UOp::Derived& UOp::derived() const {
  Derived* d = derived_.load(std::memory_order_acquire);
  if (d != nullptr) return *d;
  auto fresh = std::make_unique<Derived>();
  if (derived_.compare_exchange_strong(d, fresh.get(), std::memory_order_acq_rel))
    return *fresh.release();
  return *d; // another thread installed its own first
}

const std::vector<const UOp*>& UOp::toposort() const {
  Derived& d = derived();
  std::call_once(d.topo_once, [this, &d] {
    std::vector<const UOp*> order;
    NodeSet seen;
    // Iterative post-order DFS: (node, index of the next source to visit).
    std::vector<std::pair<const UOp*, size_t>> stack{{this, 0}};
    seen.insert(this);
    while (!stack.empty()) {
      auto& [n, i] = stack.back();
      if (i < n->src.size()) {
        const UOp* s = n->src[i++].get();
        if (seen.insert(s)) stack.emplace_back(s, 0);
      } else {
        order.push_back(n);
        stack.pop_back();
      }
    }
    d.topo = std::move(order);
  });
  return d.topo;
}

const std::unordered_set<const UOp*>& UOp::backward_slice() const {
  Derived& d = derived();
  std::call_once(d.slice_once, [this, &d] {
    const auto& topo = toposort();
    d.slice = std::unordered_set<const UOp*>(topo.begin(), topo.end() - 1);
  });
  return d.slice;
}

// ---- args ----

bool arg_equal(const Arg& a, const Arg& b) {
  if (a.index() != b.index()) return false;
  if (const auto* x = std::get_if<double>(&a)) {
    double y = std::get<double>(b);
    return std::memcmp(x, &y, sizeof y) == 0;
  }
  return a == b;
}

size_t arg_hash(const Arg& a) {
  size_t h = a.index();
  std::visit(
      [&](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
        } else if constexpr (std::is_same_v<T, double>) {
          uint64_t bits;
          std::memcpy(&bits, &x, sizeof bits);
          h = mix(h, bits);
        } else if constexpr (std::is_same_v<T, bool> || std::is_same_v<T, int64_t>) {
          h = mix(h, static_cast<size_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = mix(h, std::hash<std::string>()(x));
        } else if constexpr (std::is_same_v<T, Ops>) {
          h = mix(h, static_cast<size_t>(x));
        } else if constexpr (std::is_same_v<T, RangeArg>) {
          h = mix(mix(h, static_cast<size_t>(x.id)), static_cast<size_t>(x.type));
        } else if constexpr (std::is_same_v<T, VarArg>) {
          h = mix(mix(mix(h, std::hash<std::string>()(x.name)), static_cast<size_t>(x.min)),
                  static_cast<size_t>(x.max));
        } else if constexpr (std::is_same_v<T, ReduceArg>) {
          h = mix(h, static_cast<size_t>(x.op));
          for (int64_t v : x.axes) h = mix(h, static_cast<size_t>(v));
        } else if constexpr (std::is_same_v<T, Shape>) {
          for (const sint& v : x) h = mix(h, v.hash());
        } else if constexpr (std::is_same_v<T, PadArg>) {
          for (const auto& [p, q] : x) h = mix(mix(h, p.hash()), q.hash());
        }
      },
      a);
  return h;
}

std::string_view axis_type_name(AxisType t) {
  switch (t) {
  case AxisType::Global:
    return "global";
  case AxisType::Local:
    return "local";
  case AxisType::Loop:
    return "loop";
  case AxisType::Reduce:
    return "reduce";
  case AxisType::Upcast:
    return "upcast";
  case AxisType::Unroll:
    return "unroll";
  case AxisType::GroupReduce:
    return "group_reduce";
  case AxisType::Thread:
    return "thread";
  case AxisType::Sequential:
    return "sequential";
  }
  return "?";
}

// ---- arithmetic builders ----

namespace {
Ops div_op(const UOpPtr& a) { return a->dtype.is_float() ? Ops::FDIV : Ops::IDIV; }
} // namespace

UOpPtr operator+(const UOpPtr& a, const UOpPtr& b) { return a->alu(Ops::ADD, {b}); }
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b) { return a->alu(Ops::SUB, {b}); }
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b) { return a->alu(Ops::MUL, {b}); }
UOpPtr operator/(const UOpPtr& a, const UOpPtr& b) { return a->alu(div_op(a), {b}); }
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b) { return a->alu(Ops::MOD, {b}); }
UOpPtr operator-(const UOpPtr& a) { return a->alu(Ops::NEG); }
UOpPtr operator+(const UOpPtr& a, int64_t b) { return a + a->const_like(b); }
UOpPtr operator-(const UOpPtr& a, int64_t b) { return a - a->const_like(b); }
UOpPtr operator*(const UOpPtr& a, int64_t b) { return a * a->const_like(b); }
UOpPtr operator/(const UOpPtr& a, int64_t b) { return a / a->const_like(b); }
UOpPtr operator%(const UOpPtr& a, int64_t b) { return a % a->const_like(b); }
UOpPtr operator+(int64_t a, const UOpPtr& b) { return b->const_like(a) + b; }
UOpPtr operator*(int64_t a, const UOpPtr& b) { return b->const_like(a) * b; }
#define TG_SINT_OPERATOR(OP)                                                                       \
  UOpPtr operator OP(const UOpPtr& a, const sint& b) {                                             \
    return b.is_int() ? a OP int64_t{b} : a OP b.node();                                           \
  }
TG_SINT_OPERATOR(+)
TG_SINT_OPERATOR(-)
TG_SINT_OPERATOR(*)
TG_SINT_OPERATOR(/)
TG_SINT_OPERATOR(%)
#undef TG_SINT_OPERATOR

} // namespace tg
