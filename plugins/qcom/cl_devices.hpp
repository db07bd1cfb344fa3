#pragma once
// The OpenCL devices the ICD loader offers: every platform in the loader's order, each
// platform's devices in its order (DEV=CL is the first, CL:1 the second), with the facts the
// plugin needs about each.
#include <array>
#include <string>
#include <vector>

#include "cl_api.hpp"

namespace tg::cl {

struct DeviceInfo {
  cl_platform_id platform = nullptr;
  cl_device_id id = nullptr;
  std::string platform_name, platform_version;
  std::string name, version, driver_version, c_version;
  std::vector<std::string> extensions;
  size_t max_work_group_size = 1;
  std::array<size_t, 3> max_work_item_sizes{1, 1, 1};
  cl_ulong local_mem_size = 0;
  cl_ulong max_mem_alloc_size = 0;
  cl_uint base_address_align = 8; // bytes: a sub-buffer's origin must be a multiple of it

  bool has_extension(const std::string& ext) const;
  // What the same source compiles differently under: platform, device, driver and C version.
  std::string identity() const;
  // "pthread-skylake-avx512-AMD EPYC (Portable Computing Language, OpenCL 3.0 PoCL 3.1)".
  std::string describe() const;
};

// Every device, or an empty list with `why`: no loader (install ocl-icd-libopencl1), no
// platform (no driver registered in /etc/OpenCL/vendors: install pocl-opencl-icd for the CPU,
// or a GPU vendor's ICD) or no device.
std::vector<DeviceInfo> list_devices(std::string& why);

} // namespace tg::cl
