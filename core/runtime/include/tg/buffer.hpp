#pragma once
// A Buffer is device memory behind a BUFFER node of the tensor graph: the node names it in the
// IR (BUFFER(UNIQUE id, DEVICE spec), arg = element count), the Buffer owns the allocation.
// Memory is allocated on first use, so scheduling can plan buffers without touching devices.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "tg/ir/uop.hpp"
#include "tg/plugin/device.hpp"

namespace tg {

class Buffer {
public:
  // `device` is a device spec ("CPU", "CPU:C", "NULL"); it is opened on first allocation.
  Buffer(std::string device, DType dtype, int64_t size);
  // A buffer over memory the caller owns (zero-copy). Only host-visible devices can borrow
  // (Device::host_visible: their addresses are host pointers); `keepalive` is released with
  // the buffer.
  static std::shared_ptr<Buffer> borrow_host(std::string device, DType dtype, int64_t size,
                                             void* host, std::shared_ptr<const void> keepalive);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  const UOpPtr& uop() const { return uop_; } // BUFFER(UNIQUE, DEVICE)
  const std::string& device_spec() const { return device_spec_; }
  DType dtype() const { return dtype_; }
  int64_t size() const { return size_; } // elements
  size_t nbytes() const { return static_cast<size_t>(size_) * dtype_.itemsize(); }
  bool allocated() const { return ptr_ != 0 || size_ == 0; }

  Device& device(); // opens the device through the registry
  DevicePtr ptr();  // allocates on first call
  // Gives the memory back (once queued work is done); the next ptr() allocates again, so the
  // contents are lost. Borrowed memory is kept.
  void release_memory();
  void copy_in(const void* src, size_t bytes); // host -> device, waits
  void copy_out(void* dst, size_t bytes);      // device -> host, waits for queued work

  // True when `device` (opened through the registry) reports host-visible buffers, so host
  // memory can be borrowed instead of copied.
  static bool host_visible(const std::string& device);

private:
  std::string device_spec_;
  DType dtype_;
  int64_t size_;
  UOpPtr uop_;
  std::shared_ptr<Device> device_;
  DevicePtr ptr_ = 0;
  bool owned_ = true;
  std::shared_ptr<const void> keepalive_;
};

// The device spec tensors use when none is given: DEV when set (normalized, "cpu:c" ->
// "CPU:C"), else the registry's default device.
std::string default_device_spec();
// "cpu" -> "CPU", "cpu:c" -> "CPU:C"; an empty string is the default device.
std::string canonical_device(const std::string& spec);

} // namespace tg
