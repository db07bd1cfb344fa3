#include <doctest/doctest.h>
#include <set>

#include "tg/error.hpp"
#include "tg/lru_allocator.hpp"

using namespace tg;

namespace {

// Hands out fake addresses and counts; fails once `limit` bytes are live.
class CountingAllocator : public Allocator {
public:
  DevicePtr alloc(size_t bytes) override {
    if (live_bytes + bytes > limit) throw Error("out of memory");
    ++allocs;
    live_bytes += bytes;
    live.insert(next);
    return std::exchange(next, next + bytes + 64);
  }
  void free(DevicePtr p, size_t bytes) override {
    ++frees;
    live_bytes -= bytes;
    live.erase(p);
  }
  void copy_in(DevicePtr, const void*, size_t) override {}
  void copy_out(void*, DevicePtr, size_t) override {}
  int allocs = 0, frees = 0;
  size_t live_bytes = 0, limit = SIZE_MAX;
  std::set<DevicePtr> live;
  DevicePtr next = 0x1000;
};

} // namespace

TEST_SUITE("plugins.lru_allocator") {
  TEST_CASE("freed buffers of the same size are reused, most recent first") {
    CountingAllocator base;
    LRUAllocator lru(base);
    DevicePtr a = lru.alloc(100), b = lru.alloc(100);
    lru.free(a, 100);
    lru.free(b, 100);
    CHECK(base.frees == 0);
    CHECK(lru.cached_bytes() == 200);
    CHECK(lru.alloc(100) == b);
    CHECK(lru.alloc(100) == a);
    CHECK(base.allocs == 2);
    CHECK(lru.alloc(50) != a); // another size: a new buffer
    CHECK(base.allocs == 3);
    CHECK(lru.cached_buffers() == 0);
  }

  TEST_CASE("free_cache returns everything; the destructor too") {
    CountingAllocator base;
    {
      LRUAllocator lru(base);
      DevicePtr a = lru.alloc(10), b = lru.alloc(20);
      lru.free(a, 10);
      lru.free(b, 20);
      lru.free_cache();
      CHECK(base.frees == 2);
      CHECK(lru.cached_bytes() == 0);
      lru.free(lru.alloc(30), 30);
      CHECK(base.live.size() == 1);
    }
    CHECK(base.live.empty());
  }

  TEST_CASE("over the limit, the least recently freed go first") {
    CountingAllocator base;
    LRUAllocator lru(base, 250);
    DevicePtr a = lru.alloc(100), b = lru.alloc(100), c = lru.alloc(100);
    lru.free(a, 100);
    lru.free(b, 100);
    lru.free(c, 100); // 300 > 250: a is released
    CHECK(base.live.count(a) == 0);
    CHECK(base.live.count(b) == 1);
    CHECK(lru.cached_bytes() == 200);
    DevicePtr big = lru.alloc(1000);
    lru.free(big, 1000); // larger than the limit: released at once
    CHECK(base.live.count(big) == 0);
  }

  TEST_CASE("out of memory releases the cache and retries") {
    CountingAllocator base;
    base.limit = 300;
    LRUAllocator lru(base);
    DevicePtr a = lru.alloc(100), b = lru.alloc(100);
    lru.free(a, 100);
    lru.free(b, 100);
    DevicePtr c = lru.alloc(250); // fails with 200 cached, succeeds after releasing them
    CHECK(c != 0);
    CHECK(lru.cached_bytes() == 0);
    CHECK_THROWS_AS(lru.alloc(100), Error); // really out of memory: the error comes through
  }
}
