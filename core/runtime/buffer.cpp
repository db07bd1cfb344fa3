// Buffers: lazily allocated device memory named by a BUFFER node.
#include "tg/buffer.hpp"

#include <atomic>
#include <cctype>
#include <map>
#include <mutex>
#include <new>

#include "tg/checked.hpp"
#include "tg/device_registry.hpp"
#include "tg/error.hpp"
#include "tg/knobs.hpp"
#include "tg/lru_allocator.hpp"

namespace tg {

namespace {

std::atomic<int64_t> g_next_unique{1};

// One caching allocator per device (tinygrad's LRUAllocator): a step that frees and allocates
// the same sizes again stops paying for fresh pages. Never destroyed, like the devices.
Allocator& cached_allocator(Device& device) {
  static std::mutex mu;
  static auto& by_device = *new std::map<Device*, std::unique_ptr<LRUAllocator>>();
  std::lock_guard lock(mu);
  auto& a = by_device[&device];
  if (!a) a = std::make_unique<LRUAllocator>(device.allocator());
  return *a;
}

UOpPtr buffer_node(const std::string& device, DType dtype, int64_t size) {
  UOpPtr unique = UOp::make(Ops::UNIQUE, dtypes::void_, {}, g_next_unique.fetch_add(1));
  UOpPtr dev = UOp::make(Ops::DEVICE, dtypes::void_, {}, device);
  return UOp::make(Ops::BUFFER, dtype, {unique, dev}, size);
}

} // namespace

std::string canonical_device(const std::string& spec) {
  if (spec.empty()) return default_device_spec();
  DeviceSpec d = DeviceSpec::parse(spec);
  for (char& c : d.renderer) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return d.str();
}

std::string default_device_spec() {
  const std::string dev = knobs::DEV.get();
  if (!dev.empty()) return canonical_device(dev);
  return DeviceRegistry::global().default_device()->name();
}

bool Buffer::host_visible(const std::string& device) {
  return DeviceRegistry::global().open(device)->host_visible();
}

Buffer::Buffer(std::string device, DType dtype, int64_t size)
    : device_spec_(std::move(device)), dtype_(dtype), size_(size) {
  if (size_ < 0) throw Error("Buffer: negative size " + std::to_string(size_));
  if (dtype_.is_ptr || dtype_.is_void() || dtype_.count != 1)
    throw Error("Buffer: cannot hold elements of dtype " + dtype_.name());
  if (!checked_mul(static_cast<uint64_t>(size_), static_cast<uint64_t>(dtype_.itemsize())))
    throw Error("Buffer: " + std::to_string(size_) + " elements of " + dtype_.name() +
                " need more than 2^64 bytes");
  uop_ = buffer_node(device_spec_, dtype_, size_);
}

std::shared_ptr<Buffer> Buffer::borrow_host(std::string device, DType dtype, int64_t size,
                                            void* host, std::shared_ptr<const void> keepalive) {
  if (!host_visible(device))
    throw Error("Buffer: device " + device +
                " cannot borrow host memory (its buffers are not "
                "host-visible); copy the data instead");
  auto b = std::make_shared<Buffer>(std::move(device), dtype, size);
  b->ptr_ = reinterpret_cast<DevicePtr>(host);
  b->owned_ = false;
  b->keepalive_ = std::move(keepalive);
  return b;
}

Buffer::~Buffer() {
  if (ptr_ != 0 && owned_ && device_) {
    try {
      // Kernels still queued may use this memory: reuse it only once the queue is past them.
      device_->queue().synchronize();
      cached_allocator(*device_).free(ptr_, nbytes());
    } catch (...) { // a failed queue already reported its error to whoever waited on it
    }
  }
}

void Buffer::release_memory() {
  if (ptr_ == 0 || !owned_ || !device_) return;
  device_->queue().synchronize();
  cached_allocator(*device_).free(ptr_, nbytes());
  ptr_ = 0;
}

Device& Buffer::device() {
  if (!device_) device_ = DeviceRegistry::global().open(device_spec_);
  return *device_;
}

DevicePtr Buffer::ptr() {
  if (ptr_ == 0 && size_ > 0) {
    try {
      ptr_ = cached_allocator(device()).alloc(nbytes());
    } catch (const std::bad_alloc&) {
      // An allocator that reports failure the C++ way: say what was being allocated.
      throw Error("out of memory allocating " + std::to_string(nbytes()) +
                  " bytes for a buffer of " + std::to_string(size_) + " " + dtype_.name() + " on " +
                  device_spec_);
    }
  }
  return ptr_;
}

void Buffer::copy_in(const void* src, size_t bytes) {
  if (bytes > nbytes())
    throw Error("Buffer::copy_in: " + std::to_string(bytes) + " bytes into a buffer of " +
                std::to_string(nbytes()));
  if (bytes == 0) return;
  DevicePtr p = ptr();
  Queue& q = device().queue();
  q.synchronize(); // earlier kernels may still read the old contents
  device().allocator().copy_in(p, src, bytes);
}

void Buffer::copy_out(void* dst, size_t bytes) {
  if (bytes > nbytes())
    throw Error("Buffer::copy_out: " + std::to_string(bytes) + " bytes from a buffer of " +
                std::to_string(nbytes()));
  if (bytes == 0) return;
  DevicePtr p = ptr();
  device().queue().synchronize();
  device().allocator().copy_out(dst, p, bytes);
}

} // namespace tg
