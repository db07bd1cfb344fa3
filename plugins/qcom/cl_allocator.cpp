#include "cl_allocator.hpp"

#include "tg/error.hpp"

namespace tg::cl {

DevicePtr ClAllocator::alloc(size_t bytes) {
  const Api& a = api();
  if (bytes > ctx_->info.max_mem_alloc_size)
    throw Error("OpenCL: " + std::to_string(bytes) + " bytes exceed the largest buffer " +
                ctx_->info.name + " allocates (" + std::to_string(ctx_->info.max_mem_alloc_size) +
                " bytes, CL_DEVICE_MAX_MEM_ALLOC_SIZE)");
  cl_int err = CL_SUCCESS;
  // A zero-byte buffer is invalid in OpenCL: one byte stands in.
  cl_mem mem =
      a.clCreateBuffer(ctx_->context, CL_MEM_READ_WRITE, bytes == 0 ? 1 : bytes, nullptr, &err);
  check(err, "clCreateBuffer of " + std::to_string(bytes) + " bytes on " + ctx_->info.name);
  auto* b = new ClBuffer{mem, mem, 0, bytes, {}};
  return reinterpret_cast<DevicePtr>(b);
}

void ClAllocator::free(DevicePtr p, size_t) {
  ClBuffer* b = as_buffer(p);
  if (b == nullptr) return;
  const Api& a = api();
  std::lock_guard lock(mu_);
  for (ClBuffer* v : b->views) {
    if (v->mem) a.clReleaseMemObject(v->mem);
    delete v;
  }
  if (b->mem) a.clReleaseMemObject(b->mem);
  delete b;
}

void ClAllocator::copy_in(DevicePtr dst, const void* src, size_t bytes) {
  if (bytes == 0) return;
  ClBuffer* b = as_buffer(dst);
  std::lock_guard lock(ctx_->mu);
  check(api().clEnqueueWriteBuffer(ctx_->queue, b->base, CL_TRUE, b->offset, bytes, src, 0, nullptr,
                                   nullptr),
        "clEnqueueWriteBuffer of " + std::to_string(bytes) + " bytes");
}

void ClAllocator::copy_out(void* dst, DevicePtr src, size_t bytes) {
  if (bytes == 0) return;
  ClBuffer* b = as_buffer(src);
  std::lock_guard lock(ctx_->mu);
  check(api().clEnqueueReadBuffer(ctx_->queue, b->base, CL_TRUE, b->offset, bytes, dst, 0, nullptr,
                                  nullptr),
        "clEnqueueReadBuffer of " + std::to_string(bytes) + " bytes");
}

DevicePtr ClAllocator::offset(DevicePtr base, size_t offset) {
  ClBuffer* b = as_buffer(base);
  if (offset == 0) return base;
  const size_t total = b->offset + offset;
  if (offset > b->size)
    throw Error("OpenCL: a view at byte " + std::to_string(offset) + " lies beyond its buffer of " +
                std::to_string(b->size) + " bytes");
  ClBuffer* root = b->base == b->mem ? b : nullptr;
  std::lock_guard lock(mu_);
  if (root == nullptr) // a view of a view: find the allocation that owns it
    throw Error("OpenCL: a view of a view is not supported; take the offset from the buffer");
  auto* v = new ClBuffer{nullptr, b->base, total, b->size - offset, {}};
  if (total % ctx_->info.base_address_align == 0) {
    cl_buffer_region region{total, v->size == 0 ? 1 : v->size};
    cl_int err = CL_SUCCESS;
    v->mem = api().clCreateSubBuffer(b->base, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION,
                                     &region, &err);
    if (err != CL_SUCCESS) v->mem = nullptr; // copies still work; kernels refuse it
  }
  root->views.push_back(v);
  return reinterpret_cast<DevicePtr>(v);
}

} // namespace tg::cl
