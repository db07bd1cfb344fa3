#include "tg/lru_allocator.hpp"

#include "tg/error.hpp"

namespace tg {

LRUAllocator::LRUAllocator(Allocator& base, size_t max_cached_bytes)
    : base_(base), max_cached_(max_cached_bytes) {}

LRUAllocator::~LRUAllocator() { free_cache(); }

DevicePtr LRUAllocator::alloc(size_t bytes) {
  {
    std::lock_guard lock(mu_);
    if (auto it = by_size_.find(bytes); it != by_size_.end() && !it->second.empty()) {
      auto node = it->second.back();
      it->second.pop_back();
      DevicePtr p = node->ptr;
      cached_bytes_ -= node->bytes;
      lru_.erase(node);
      return p;
    }
  }
  try {
    return base_.alloc(bytes);
  } catch (const Error&) {
    // Out of device memory, perhaps only because of what we hold: release it and retry once.
    free_cache();
    return base_.alloc(bytes);
  }
}

void LRUAllocator::free(DevicePtr p, size_t bytes) {
  std::lock_guard lock(mu_);
  if (bytes > max_cached_) {
    base_.free(p, bytes);
    return;
  }
  while (cached_bytes_ + bytes > max_cached_ && !lru_.empty()) evict_oldest();
  lru_.push_back({p, bytes});
  by_size_[bytes].push_back(std::prev(lru_.end()));
  cached_bytes_ += bytes;
}

void LRUAllocator::evict_oldest() {
  auto node = lru_.begin();
  auto& same = by_size_[node->bytes];
  // The oldest of a size is the first of its list: lists are in free order.
  same.erase(same.begin());
  base_.free(node->ptr, node->bytes);
  cached_bytes_ -= node->bytes;
  lru_.erase(node);
}

void LRUAllocator::free_cache() {
  std::lock_guard lock(mu_);
  while (!lru_.empty()) evict_oldest();
  by_size_.clear();
}

void LRUAllocator::copy_in(DevicePtr dst, const void* src, size_t bytes) {
  base_.copy_in(dst, src, bytes);
}
void LRUAllocator::copy_out(void* dst, DevicePtr src, size_t bytes) {
  base_.copy_out(dst, src, bytes);
}
DevicePtr LRUAllocator::offset(DevicePtr base, size_t offset) { return base_.offset(base, offset); }

size_t LRUAllocator::cached_bytes() const {
  std::lock_guard lock(mu_);
  return cached_bytes_;
}
size_t LRUAllocator::cached_buffers() const {
  std::lock_guard lock(mu_);
  return lru_.size();
}

} // namespace tg
