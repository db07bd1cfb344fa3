#pragma once
// Memory for UOp nodes (a node and its sources are one block). A rewrite builds and drops nodes
// by the hundred thousand, and malloc keeps only a handful of blocks of a size per thread before
// it takes its slow paths (binning, consolidation). Blocks of up to kMaxPooled bytes come from
// slabs instead, and a freed block goes to its thread's free list for its size, to be that
// thread's next node of that size while it is still in the cache. Slabs are carved from 2 MiB
// regions that the kernel may back with huge pages (fewer TLB misses on a large graph).
//
// Slabs are never returned: the pool keeps the peak number of nodes, as the node table does. A
// thread that exits hands its lists to a shared one, which refills other threads. Under
// AddressSanitizer blocks come from operator new, so a use after free is still reported.
#include <cstddef>

namespace tg::node_memory {

inline constexpr size_t kMaxPooled = 512;

void* allocate(size_t bytes);
void deallocate(void* p, size_t bytes) noexcept; // `bytes` as given to allocate

} // namespace tg::node_memory
