#pragma once
// An Allocator that keeps freed buffers for reuse, as tinygrad's LRUAllocator: a step that
// frees and reallocates the same sizes every iteration stops calling the device allocator.
// Reuse is exact-size; the most recently freed buffer of a size is reused first, the least
// recently freed overall is released first when the cache is over its limit or the device
// runs out of memory.
#include <cstddef>
#include <list>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tg/plugin/device.hpp"

namespace tg {

class LRUAllocator : public Allocator {
public:
  // `base` must outlive this allocator. `max_cached_bytes` bounds what freed buffers may hold.
  explicit LRUAllocator(Allocator& base, size_t max_cached_bytes = SIZE_MAX);
  ~LRUAllocator() override;
  LRUAllocator(const LRUAllocator&) = delete;
  LRUAllocator& operator=(const LRUAllocator&) = delete;

  // A cached buffer of exactly `bytes`, else a new one; on the base's tg::Error the cache is
  // released and the allocation tried once more.
  DevicePtr alloc(size_t bytes) override;
  void free(DevicePtr p, size_t bytes) override; // cached, not released
  void copy_in(DevicePtr dst, const void* src, size_t bytes) override;
  void copy_out(void* dst, DevicePtr src, size_t bytes) override;
  DevicePtr offset(DevicePtr base, size_t offset) override;

  void free_cache(); // releases every cached buffer to the base allocator
  size_t cached_bytes() const;
  size_t cached_buffers() const;

private:
  struct Cached {
    DevicePtr ptr;
    size_t bytes;
  };
  void evict_oldest(); // caller holds mu_
  Allocator& base_;
  size_t max_cached_;
  size_t cached_bytes_ = 0;
  std::list<Cached> lru_; // front: least recently freed
  std::unordered_map<size_t, std::vector<std::list<Cached>::iterator>> by_size_;
  mutable std::mutex mu_;
};

} // namespace tg
