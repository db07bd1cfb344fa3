// Per-thread free lists of node blocks, by size in steps of kGrain bytes (see node_memory.hpp).
#include "node_memory.hpp"

#include <array>
#include <cstdlib>
#include <mutex>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tg::node_memory {

#if defined(__SANITIZE_ADDRESS__)

void* allocate(size_t bytes) { return ::operator new(bytes); }
void deallocate(void* p, size_t /*bytes*/) noexcept { ::operator delete(p); }

#else

namespace {

constexpr size_t kGrain = 16;
constexpr size_t kClasses = kMaxPooled / kGrain + 1;
constexpr size_t kSlabBytes = size_t{64} << 10;

struct Block {
  Block* next;
};

size_t class_of(size_t bytes) { return (bytes + kGrain - 1) / kGrain; }

// Lists handed over by exited threads. Never destroyed: nodes held by static objects may be
// freed after main returns.
struct Shared {
  std::mutex mu;
  std::array<Block*, kClasses> free{};
  char* region = nullptr; // the rest of the region new slabs are carved from (carve_slab)
  size_t region_left = 0;
};
Shared& shared() {
  static Shared* s = new Shared;
  return *s;
}

// Trivially destructible, so a node freed while its thread exits still finds it. `closed`
// marks a thread whose lists went to the shared ones: its later blocks go there directly.
struct Local {
  std::array<Block*, kClasses> free;
  bool armed, closed;
};
thread_local Local t_local;

void give_to_shared(size_t cls, Block* first) {
  if (first == nullptr) return;
  Block* last = first;
  while (last->next) last = last->next;
  Shared& s = shared();
  std::lock_guard lock(s.mu);
  last->next = s.free[cls];
  s.free[cls] = first;
}

// Constructed on a thread's first slow path; its destructor runs when the thread exits.
struct HandOverAtExit {
  bool armed = false;
  ~HandOverAtExit() {
    for (size_t c = 0; c < kClasses; ++c) give_to_shared(c, t_local.free[c]);
    t_local.free = {};
    t_local.closed = true;
  }
};
thread_local HandOverAtExit t_hand_over;

void arm(Local& l) {
  l.armed = true;
  t_hand_over.armed = true; // the first use constructs it and registers its destructor
}

// Slabs are carved from 2 MiB regions, aligned so that the kernel may back each with one huge
// page: a large graph's nodes then cost a TLB entry per 2 MiB instead of per 4 KiB, and a
// rewrite that walks a few hundred thousand of them misses the TLB far less.
constexpr size_t kRegionBytes = size_t{2} << 20;
static_assert(kRegionBytes % kSlabBytes == 0);

// A new slab; the caller holds s.mu.
char* carve_slab(Shared& s) {
  if (s.region_left == 0) {
    void* r = std::aligned_alloc(kRegionBytes, kRegionBytes);
    if (r == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    madvise(r, kRegionBytes, MADV_HUGEPAGE); // advice only: without huge pages nothing changes
#endif
    s.region = static_cast<char*>(r);
    s.region_left = kRegionBytes;
  }
  char* slab = s.region;
  s.region += kSlabBytes;
  s.region_left -= kSlabBytes;
  return slab;
}

// A list for class `cls`: the shared one if an exited thread left blocks, else a new slab.
Block* refill(size_t cls) {
  Shared& s = shared();
  char* slab = nullptr;
  {
    std::lock_guard lock(s.mu);
    if (Block* b = s.free[cls]) {
      s.free[cls] = nullptr;
      return b;
    }
    slab = carve_slab(s);
  }
  const size_t block = cls * kGrain, count = kSlabBytes / block;
  Block* head = nullptr;
  for (size_t i = count; i-- > 0;) {
    auto* b = reinterpret_cast<Block*>(slab + i * block);
    b->next = head;
    head = b;
  }
  return head;
}

[[gnu::noinline]] void* allocate_slow(Local& l, size_t cls) {
  if (l.closed) { // the thread is exiting: take one block, under the shared lock
    Block* list = refill(cls);
    give_to_shared(cls, list->next);
    return list;
  }
  if (!l.armed) arm(l);
  l.free[cls] = refill(cls);
  Block* b = l.free[cls];
  l.free[cls] = b->next;
  return b;
}

[[gnu::noinline]] void deallocate_slow(Local& l, size_t cls, Block* b) {
  b->next = nullptr;
  if (l.closed) return give_to_shared(cls, b);
  arm(l); // a thread may free nodes it never built
  l.free[cls] = b;
}

} // namespace

void* allocate(size_t bytes) {
  if (bytes > kMaxPooled) return ::operator new(bytes);
  const size_t cls = class_of(bytes);
  Local& l = t_local;
  Block* b = l.free[cls];
  if (b == nullptr) return allocate_slow(l, cls);
  l.free[cls] = b->next;
  // Reading a block's link is a cache miss when the block went cold on the list (a large
  // graph's nodes were freed long before), and the next allocation waits on it: fetch the next
  // block's line now, for writing, while this node is built.
  __builtin_prefetch(b->next, 1);
  return b;
}

void deallocate(void* p, size_t bytes) noexcept {
  if (bytes > kMaxPooled) return ::operator delete(p);
  const size_t cls = class_of(bytes);
  Local& l = t_local;
  auto* b = static_cast<Block*>(p);
  if (!l.armed || l.closed) return deallocate_slow(l, cls, b);
  b->next = l.free[cls];
  l.free[cls] = b;
}

#endif

} // namespace tg::node_memory
