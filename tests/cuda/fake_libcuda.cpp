// A stand-in for libcuda.so.1 that exports the driver's entry points and fails in one way,
// chosen at build time, so the cuda plugin's probe refusals can be tested without a GPU:
//   TG_FAKE_CUDA_INIT_FAILS   cuInit returns CUDA_ERROR_NO_DEVICE (100)
//   TG_FAKE_CUDA_OLD_DRIVER   cuDriverGetVersion says CUDA 11.4
//   TG_FAKE_CUDA_NO_DEVICE    cuInit succeeds, cuDeviceGetCount says 0
//   TG_FAKE_CUDA_MISSING      cuGraphExecKernelNodeSetParams is not exported
// Every other entry point returns CUDA_ERROR_UNKNOWN (999).
#include <cstddef>

#define TG_FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {
constexpr int kUnknown = 999;
}

TG_FAKE_EXPORT int cuDriverGetVersion(int* v) {
#ifdef TG_FAKE_CUDA_OLD_DRIVER
  *v = 11040;
#else
  *v = 12080;
#endif
  return 0;
}

TG_FAKE_EXPORT int cuInit(unsigned) {
#ifdef TG_FAKE_CUDA_INIT_FAILS
  return 100;
#else
  return 0;
#endif
}

TG_FAKE_EXPORT int cuGetErrorName(int code, const char** s) {
  *s = code == 100 ? "CUDA_ERROR_NO_DEVICE" : "CUDA_ERROR_UNKNOWN";
  return 0;
}

TG_FAKE_EXPORT int cuGetErrorString(int code, const char** s) {
  *s = code == 100 ? "no CUDA-capable device is detected" : "unknown error";
  return 0;
}

TG_FAKE_EXPORT int cuDeviceGetCount(int* n) {
  *n = 0;
  return 0;
}

#define TG_FAKE_FAIL(name)                                                                         \
  TG_FAKE_EXPORT int name() { return kUnknown; }
TG_FAKE_FAIL(cuDeviceGet)
TG_FAKE_FAIL(cuDeviceGetName)
TG_FAKE_FAIL(cuDeviceGetAttribute)
TG_FAKE_FAIL(cuDeviceTotalMem_v2)
TG_FAKE_FAIL(cuDevicePrimaryCtxRetain)
TG_FAKE_FAIL(cuDevicePrimaryCtxRelease_v2)
TG_FAKE_FAIL(cuCtxSetCurrent)
TG_FAKE_FAIL(cuCtxSynchronize)
TG_FAKE_FAIL(cuCtxEnablePeerAccess)
TG_FAKE_FAIL(cuDeviceCanAccessPeer)
TG_FAKE_FAIL(cuMemAlloc_v2)
TG_FAKE_FAIL(cuMemFree_v2)
TG_FAKE_FAIL(cuMemHostAlloc)
TG_FAKE_FAIL(cuMemFreeHost)
TG_FAKE_FAIL(cuMemcpyHtoDAsync_v2)
TG_FAKE_FAIL(cuMemcpyDtoHAsync_v2)
TG_FAKE_FAIL(cuMemcpyDtoDAsync_v2)
TG_FAKE_FAIL(cuMemcpyPeerAsync)
TG_FAKE_FAIL(cuStreamCreate)
TG_FAKE_FAIL(cuStreamDestroy_v2)
TG_FAKE_FAIL(cuStreamSynchronize)
TG_FAKE_FAIL(cuStreamWaitEvent)
TG_FAKE_FAIL(cuEventCreate)
TG_FAKE_FAIL(cuEventDestroy_v2)
TG_FAKE_FAIL(cuEventRecord)
TG_FAKE_FAIL(cuEventSynchronize)
TG_FAKE_FAIL(cuEventQuery)
TG_FAKE_FAIL(cuEventElapsedTime)
TG_FAKE_FAIL(cuModuleLoadData)
TG_FAKE_FAIL(cuModuleUnload)
TG_FAKE_FAIL(cuModuleGetFunction)
TG_FAKE_FAIL(cuLaunchKernel)
TG_FAKE_FAIL(cuGraphCreate)
TG_FAKE_FAIL(cuGraphAddKernelNode)
TG_FAKE_FAIL(cuGraphInstantiateWithFlags)
#ifndef TG_FAKE_CUDA_MISSING
TG_FAKE_FAIL(cuGraphExecKernelNodeSetParams)
#endif
TG_FAKE_FAIL(cuGraphLaunch)
TG_FAKE_FAIL(cuGraphExecDestroy)
TG_FAKE_FAIL(cuGraphDestroy)
