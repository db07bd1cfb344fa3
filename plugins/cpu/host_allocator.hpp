#pragma once
// Host memory for the CPU device: 64-byte aligned (a cache line, and enough for any vector
// load the renderers emit), copies are memcpy.
#include "tg/plugin/device.hpp"

namespace tg::cpu {

inline constexpr size_t kHostAlignment = 64;

class HostAllocator : public Allocator {
public:
  DevicePtr alloc(size_t bytes) override;
  void free(DevicePtr p, size_t bytes) override;
  void copy_in(DevicePtr dst, const void* src, size_t bytes) override;
  void copy_out(void* dst, DevicePtr src, size_t bytes) override;
};

} // namespace tg::cpu
