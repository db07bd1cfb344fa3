// Loading libOpenCL.so.1 and naming OpenCL's error codes.
#include "cl_api.hpp"

#include <dlfcn.h>

#include <mutex>

#include "tg/error.hpp"

namespace tg::cl {

namespace {

struct Loaded {
  Api api;
  std::string why; // empty when loaded
};

Loaded load() {
  Loaded out;
  // Never unloaded: cl objects outlive any scope the plugin could close it in.
  void* lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* err = dlerror();
    out.why = std::string("libOpenCL.so.1 (the OpenCL ICD loader) not found (") +
              (err ? err : "dlopen failed") +
              "); install it: apt-get install ocl-icd-libopencl1 (and a driver, e.g. "
              "pocl-opencl-icd for the CPU)";
    return out;
  }
#define TG_CL_LOAD(fn)                                                                             \
  out.api.fn = reinterpret_cast<decltype(&::fn)>(dlsym(lib, #fn));                                 \
  if (out.api.fn == nullptr && out.why.empty())                                                    \
    out.why = "libOpenCL.so.1 lacks " #fn " (OpenCL 1.2 is needed); install a newer "              \
              "ocl-icd-libopencl1";
  TG_CL_FUNCTIONS(TG_CL_LOAD)
#undef TG_CL_LOAD
  return out;
}

const Loaded& loaded() {
  static const Loaded l = load();
  return l;
}

} // namespace

const Api* load_api(std::string& why) {
  const Loaded& l = loaded();
  if (!l.why.empty()) {
    why = l.why;
    return nullptr;
  }
  return &l.api;
}

const Api& api() {
  std::string why;
  const Api* a = load_api(why);
  if (a == nullptr) throw Error("OpenCL: " + why);
  return *a;
}

std::string error_name(cl_int code) {
  const char* name = nullptr;
  switch (code) {
#define TG_CL_ERR(e)                                                                               \
  case e:                                                                                          \
    name = #e;                                                                                     \
    break;
    TG_CL_ERR(CL_SUCCESS)
    TG_CL_ERR(CL_DEVICE_NOT_FOUND)
    TG_CL_ERR(CL_DEVICE_NOT_AVAILABLE)
    TG_CL_ERR(CL_COMPILER_NOT_AVAILABLE)
    TG_CL_ERR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    TG_CL_ERR(CL_OUT_OF_RESOURCES)
    TG_CL_ERR(CL_OUT_OF_HOST_MEMORY)
    TG_CL_ERR(CL_PROFILING_INFO_NOT_AVAILABLE)
    TG_CL_ERR(CL_MEM_COPY_OVERLAP)
    TG_CL_ERR(CL_BUILD_PROGRAM_FAILURE)
    TG_CL_ERR(CL_MISALIGNED_SUB_BUFFER_OFFSET)
    TG_CL_ERR(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST)
    TG_CL_ERR(CL_COMPILE_PROGRAM_FAILURE)
    TG_CL_ERR(CL_LINK_PROGRAM_FAILURE)
    TG_CL_ERR(CL_INVALID_VALUE)
    TG_CL_ERR(CL_INVALID_DEVICE_TYPE)
    TG_CL_ERR(CL_INVALID_PLATFORM)
    TG_CL_ERR(CL_INVALID_DEVICE)
    TG_CL_ERR(CL_INVALID_CONTEXT)
    TG_CL_ERR(CL_INVALID_QUEUE_PROPERTIES)
    TG_CL_ERR(CL_INVALID_COMMAND_QUEUE)
    TG_CL_ERR(CL_INVALID_HOST_PTR)
    TG_CL_ERR(CL_INVALID_MEM_OBJECT)
    TG_CL_ERR(CL_INVALID_BINARY)
    TG_CL_ERR(CL_INVALID_BUILD_OPTIONS)
    TG_CL_ERR(CL_INVALID_PROGRAM)
    TG_CL_ERR(CL_INVALID_PROGRAM_EXECUTABLE)
    TG_CL_ERR(CL_INVALID_KERNEL_NAME)
    TG_CL_ERR(CL_INVALID_KERNEL_DEFINITION)
    TG_CL_ERR(CL_INVALID_KERNEL)
    TG_CL_ERR(CL_INVALID_ARG_INDEX)
    TG_CL_ERR(CL_INVALID_ARG_VALUE)
    TG_CL_ERR(CL_INVALID_ARG_SIZE)
    TG_CL_ERR(CL_INVALID_KERNEL_ARGS)
    TG_CL_ERR(CL_INVALID_WORK_DIMENSION)
    TG_CL_ERR(CL_INVALID_WORK_GROUP_SIZE)
    TG_CL_ERR(CL_INVALID_WORK_ITEM_SIZE)
    TG_CL_ERR(CL_INVALID_GLOBAL_OFFSET)
    TG_CL_ERR(CL_INVALID_EVENT_WAIT_LIST)
    TG_CL_ERR(CL_INVALID_EVENT)
    TG_CL_ERR(CL_INVALID_OPERATION)
    TG_CL_ERR(CL_INVALID_BUFFER_SIZE)
    TG_CL_ERR(CL_INVALID_GLOBAL_WORK_SIZE)
    TG_CL_ERR(CL_INVALID_PROPERTY)
    TG_CL_ERR(CL_PLATFORM_NOT_FOUND_KHR)
#undef TG_CL_ERR
  default:
    break;
  }
  return std::string(name ? name : "unknown OpenCL error") + " (" + std::to_string(code) + ")";
}

void check(cl_int code, const std::string& what) {
  if (code != CL_SUCCESS) throw Error("OpenCL: " + what + " failed: " + error_name(code));
}

CommandBufferApi command_buffer_api(cl_platform_id platform) {
  CommandBufferApi cb;
  auto get = [&](const char* name) {
    return api().clGetExtensionFunctionAddressForPlatform(platform, name);
  };
  cb.create = reinterpret_cast<clCreateCommandBufferKHR_fn>(get("clCreateCommandBufferKHR"));
  cb.finalize = reinterpret_cast<clFinalizeCommandBufferKHR_fn>(get("clFinalizeCommandBufferKHR"));
  cb.release = reinterpret_cast<clReleaseCommandBufferKHR_fn>(get("clReleaseCommandBufferKHR"));
  cb.enqueue = reinterpret_cast<clEnqueueCommandBufferKHR_fn>(get("clEnqueueCommandBufferKHR"));
  cb.ndrange = reinterpret_cast<clCommandNDRangeKernelKHR_fn>(get("clCommandNDRangeKernelKHR"));
  return cb;
}

} // namespace tg::cl
