// Enumerating OpenCL platforms and devices, with a reason for each way there are none.
#include "cl_devices.hpp"

#include <algorithm>
#include <sstream>

namespace tg::cl {

namespace {

std::string platform_string(const Api& a, cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (a.clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  a.clGetPlatformInfo(p, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(const Api& a, cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (a.clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return "";
  std::string s(n, '\0');
  a.clGetDeviceInfo(d, what, n, s.data(), nullptr);
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

template <class T> T device_value(const Api& a, cl_device_id d, cl_device_info what, T fallback) {
  T v{};
  return a.clGetDeviceInfo(d, what, sizeof v, &v, nullptr) == CL_SUCCESS ? v : fallback;
}

DeviceInfo describe_device(const Api& a, cl_platform_id p, cl_device_id d) {
  DeviceInfo info;
  info.platform = p;
  info.id = d;
  info.platform_name = platform_string(a, p, CL_PLATFORM_NAME);
  info.platform_version = platform_string(a, p, CL_PLATFORM_VERSION);
  info.name = device_string(a, d, CL_DEVICE_NAME);
  info.version = device_string(a, d, CL_DEVICE_VERSION);
  info.driver_version = device_string(a, d, CL_DRIVER_VERSION);
  info.c_version = device_string(a, d, CL_DEVICE_OPENCL_C_VERSION);
  std::istringstream exts(device_string(a, d, CL_DEVICE_EXTENSIONS));
  for (std::string e; exts >> e;) info.extensions.push_back(e);
  info.max_work_group_size = device_value<size_t>(a, d, CL_DEVICE_MAX_WORK_GROUP_SIZE, 1);
  const auto dims = device_value<cl_uint>(a, d, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, 1);
  std::vector<size_t> sizes(std::max<cl_uint>(dims, 3), 1);
  if (a.clGetDeviceInfo(d, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof(size_t) * dims, sizes.data(),
                        nullptr) == CL_SUCCESS)
    for (size_t i = 0; i < 3; ++i) info.max_work_item_sizes[i] = i < dims ? sizes[i] : 1;
  info.local_mem_size = device_value<cl_ulong>(a, d, CL_DEVICE_LOCAL_MEM_SIZE, 0);
  info.max_mem_alloc_size = device_value<cl_ulong>(a, d, CL_DEVICE_MAX_MEM_ALLOC_SIZE, 0);
  info.base_address_align =
      std::max<cl_uint>(device_value<cl_uint>(a, d, CL_DEVICE_MEM_BASE_ADDR_ALIGN, 64) / 8, 1);
  return info;
}

} // namespace

bool DeviceInfo::has_extension(const std::string& ext) const {
  return std::find(extensions.begin(), extensions.end(), ext) != extensions.end();
}

std::string DeviceInfo::identity() const {
  return platform_name + "|" + platform_version + "|" + name + "|" + version + "|" +
         driver_version + "|" + c_version;
}

std::string DeviceInfo::describe() const {
  return name + " (" + platform_name + ", " + version + ", driver " + driver_version + ")";
}

std::vector<DeviceInfo> list_devices(std::string& why) {
  const Api* a = load_api(why);
  if (a == nullptr) return {};
  cl_uint n_platforms = 0;
  const cl_int err = a->clGetPlatformIDs(0, nullptr, &n_platforms);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && n_platforms == 0)) {
    why = "no OpenCL platform: the ICD loader (libOpenCL.so.1) found no driver registered in "
          "/etc/OpenCL/vendors; install one, e.g. apt-get install pocl-opencl-icd (OpenCL on the "
          "CPU cores), or a GPU vendor's OpenCL driver";
    return {};
  }
  if (err != CL_SUCCESS) {
    why = "clGetPlatformIDs failed: " + error_name(err);
    return {};
  }
  std::vector<cl_platform_id> platforms(n_platforms);
  a->clGetPlatformIDs(n_platforms, platforms.data(), nullptr);
  std::vector<DeviceInfo> out;
  std::vector<std::string> empty;
  for (cl_platform_id p : platforms) {
    cl_uint n = 0;
    if (a->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &n) != CL_SUCCESS || n == 0) {
      empty.push_back(platform_string(*a, p, CL_PLATFORM_NAME));
      continue;
    }
    std::vector<cl_device_id> ids(n);
    a->clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr);
    for (cl_device_id d : ids) out.push_back(describe_device(*a, p, d));
  }
  if (out.empty()) {
    std::string names;
    for (const auto& e : empty) names += (names.empty() ? "" : ", ") + e;
    why = "no OpenCL device: platform(s) " + names +
          " report none; check the driver (clinfo lists what it sees), or install "
          "pocl-opencl-icd for OpenCL on the CPU cores";
  }
  return out;
}

} // namespace tg::cl
