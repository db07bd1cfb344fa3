#pragma once
// One OpenCL device's context and in-order command queue (with profiling), shared by the
// device's allocator, compiler, programs, queue and graphs.
#include <memory>
#include <mutex>

#include "cl_devices.hpp"

namespace tg::cl {

struct ClContext {
  explicit ClContext(DeviceInfo info); // throws tg::Error
  ~ClContext();
  ClContext(const ClContext&) = delete;
  ClContext& operator=(const ClContext&) = delete;

  DeviceInfo info;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  // Serializes what touches shared OpenCL state: setting a kernel's arguments and enqueueing it.
  std::mutex mu;
  std::string device_name; // "CL", "CL:1": in messages
};

} // namespace tg::cl
