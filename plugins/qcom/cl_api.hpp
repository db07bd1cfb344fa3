#pragma once
// The OpenCL API, loaded at run time: libOpenCL.so.1 (the ICD loader, Debian's
// ocl-icd-libopencl1) is dlopen'ed on first use and never linked, so the plugin loads on a
// machine without OpenCL and says why instead. Function types come from the Khronos headers
// (opencl-c-headers), the functions from the loader; extension functions (cl_khr_command_buffer)
// through clGetExtensionFunctionAddressForPlatform.
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <string>

namespace tg::cl {

// clGetPlatformIDs ... : the core API the plugin uses (OpenCL 1.2).
#define TG_CL_FUNCTIONS(X)                                                                         \
  X(clGetPlatformIDs)                                                                              \
  X(clGetPlatformInfo)                                                                             \
  X(clGetDeviceIDs)                                                                                \
  X(clGetDeviceInfo)                                                                               \
  X(clCreateContext)                                                                               \
  X(clReleaseContext)                                                                              \
  X(clCreateCommandQueue)                                                                          \
  X(clReleaseCommandQueue)                                                                         \
  X(clCreateBuffer)                                                                                \
  X(clCreateSubBuffer)                                                                             \
  X(clRetainMemObject)                                                                             \
  X(clReleaseMemObject)                                                                            \
  X(clEnqueueWriteBuffer)                                                                          \
  X(clEnqueueReadBuffer)                                                                           \
  X(clCreateProgramWithSource)                                                                     \
  X(clCreateProgramWithBinary)                                                                     \
  X(clBuildProgram)                                                                                \
  X(clGetProgramBuildInfo)                                                                         \
  X(clGetProgramInfo)                                                                              \
  X(clReleaseProgram)                                                                              \
  X(clCreateKernel)                                                                                \
  X(clReleaseKernel)                                                                               \
  X(clSetKernelArg)                                                                                \
  X(clGetKernelInfo)                                                                               \
  X(clGetKernelWorkGroupInfo)                                                                      \
  X(clEnqueueNDRangeKernel)                                                                        \
  X(clEnqueueMarkerWithWaitList)                                                                   \
  X(clWaitForEvents)                                                                               \
  X(clGetEventInfo)                                                                                \
  X(clGetEventProfilingInfo)                                                                       \
  X(clRetainEvent)                                                                                 \
  X(clReleaseEvent)                                                                                \
  X(clFlush)                                                                                       \
  X(clFinish)                                                                                      \
  X(clGetExtensionFunctionAddressForPlatform)

struct Api {
#define TG_CL_MEMBER(fn) decltype(&::fn) fn = nullptr;
  TG_CL_FUNCTIONS(TG_CL_MEMBER)
#undef TG_CL_MEMBER
};

// The loaded API, or nullptr with `why` set: no loader ("libOpenCL.so.1 not found ...: install
// ocl-icd-libopencl1") or a loader without a function the plugin needs. Loaded once.
const Api* load_api(std::string& why);
// The API for code that runs after a device was created (it was loaded then).
const Api& api();

// "CL_INVALID_WORK_GROUP_SIZE (-54)".
std::string error_name(cl_int code);
// Raises tg::Error "OpenCL: <what> failed: <error_name>" unless code is CL_SUCCESS.
void check(cl_int code, const std::string& what);

// The cl_khr_command_buffer entry points of a platform (all null when it has none).
struct CommandBufferApi {
  clCreateCommandBufferKHR_fn create = nullptr;
  clFinalizeCommandBufferKHR_fn finalize = nullptr;
  clReleaseCommandBufferKHR_fn release = nullptr;
  clEnqueueCommandBufferKHR_fn enqueue = nullptr;
  clCommandNDRangeKernelKHR_fn ndrange = nullptr;
  bool available() const { return create && finalize && release && enqueue && ndrange; }
};
CommandBufferApi command_buffer_api(cl_platform_id platform);

} // namespace tg::cl
