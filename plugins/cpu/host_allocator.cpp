#include "host_allocator.hpp"

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "tg/error.hpp"

namespace tg::cpu {

DevicePtr HostAllocator::alloc(size_t bytes) {
  if (bytes > SIZE_MAX - kHostAlignment) // rounding up below would wrap to a tiny block
    throw Error("CPU allocator: " + std::to_string(bytes) + " bytes cannot be allocated");
  // aligned_alloc wants a multiple of the alignment; a zero-byte buffer still gets an address.
  const size_t rounded = (bytes + kHostAlignment - 1) / kHostAlignment * kHostAlignment;
  void* p = std::aligned_alloc(kHostAlignment, rounded == 0 ? kHostAlignment : rounded);
  if (p == nullptr)
    throw Error("CPU allocator: out of host memory allocating " + std::to_string(bytes) +
                " bytes; free tensors or use smaller batches");
  return reinterpret_cast<DevicePtr>(p);
}

void HostAllocator::free(DevicePtr p, size_t) { std::free(reinterpret_cast<void*>(p)); }

void HostAllocator::copy_in(DevicePtr dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(reinterpret_cast<void*>(dst), src, bytes);
}

void HostAllocator::copy_out(void* dst, DevicePtr src, size_t bytes) {
  if (bytes) std::memcpy(dst, reinterpret_cast<const void*>(src), bytes);
}

} // namespace tg::cpu
