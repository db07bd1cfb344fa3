#pragma once
// Device memory as cl_mem. A DevicePtr is the address of a ClBuffer record: the memory object,
// the byte offset of a view into it and, for a view whose offset the device's base-address
// alignment allows, a sub-buffer kernels take as their argument. Copies work at any offset; a
// kernel argument at an offset the alignment does not allow is refused naming the kernel.
#include <memory>
#include <mutex>
#include <vector>

#include "cl_context.hpp"
#include "tg/plugin/device.hpp"

namespace tg::cl {

struct ClBuffer {
  cl_mem mem = nullptr;  // the allocation, or for a view the sub-buffer (null: unaligned view)
  cl_mem base = nullptr; // the allocation a view lies in (== mem for an allocation)
  size_t offset = 0;     // bytes into `base`
  size_t size = 0;       // bytes from offset to the end of base
  std::vector<ClBuffer*> views; // views of an allocation, freed with it
};

inline ClBuffer* as_buffer(DevicePtr p) { return reinterpret_cast<ClBuffer*>(p); }

class ClAllocator : public Allocator {
public:
  explicit ClAllocator(std::shared_ptr<ClContext> ctx) : ctx_(std::move(ctx)) {}
  DevicePtr alloc(size_t bytes) override;
  void free(DevicePtr p, size_t bytes) override;
  // Blocking copies on the device's in-order queue: after what is queued before them.
  void copy_in(DevicePtr dst, const void* src, size_t bytes) override;
  void copy_out(void* dst, DevicePtr src, size_t bytes) override;
  DevicePtr offset(DevicePtr base, size_t offset) override;

private:
  std::shared_ptr<ClContext> ctx_;
  std::mutex mu_;
};

} // namespace tg::cl
